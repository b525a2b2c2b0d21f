"""Reading a URDF robot description into plain records, every check done here.

URDF (ROS's Unified Robot Description Format) is XML: ``<link>`` elements (a rigid body's
``<inertial>``, ``<collision>`` and ``<visual>`` parts, each with an ``<origin xyz rpy>`` in
the link's frame) and ``<joint>`` elements joining a parent link to a child link, the child's
frame at ``<origin>`` in the parent's. Lengths in m, angles in rad, masses in kg, inertias in
kg m^2 about the ``<inertial>`` origin, in the inertial frame's axes.

``parse_urdf(text)`` returns a ``Robot`` (links, joints in parents-first order, the root)
or raises ValueError naming the element and attribute ("joint 'elbow': axis (0, 0, 0) has
zero length"). Nothing here knows the World; ``physics.urdf`` builds from these records.
Only the standard library's XML parser is used (no new dependency).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
# collision geometry the engine has a shape for; <mesh> is read and reported as unsupported
SHAPED_GEOMETRY = ("box", "sphere", "cylinder", "capsule")


def rpy_matrix(rpy) -> np.ndarray:
    """URDF's roll-pitch-yaw (rad) as a rotation matrix: turns about the fixed x, then y,
    then z axes, R = Rz(yaw) Ry(pitch) Rx(roll)."""
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


@dataclass
class Origin:
    """A frame in its parent's: ``xyz`` (3,) m and ``rotation`` (3, 3) from rpy."""
    xyz: np.ndarray
    rotation: np.ndarray


@dataclass
class Inertial:
    mass: float             # kg, > 0
    origin: Origin          # the centre of mass and the inertia's axes, in the link's frame
    inertia: np.ndarray     # (3, 3) kg m^2 about the centre of mass, in origin's axes


@dataclass
class Collision:
    kind: str               # "box", "sphere", "cylinder", "capsule" or "mesh"
    size: tuple             # box (x, y, z) full sizes; sphere (r,); cylinder, capsule (r, length)
    origin: Origin          # in the link's frame; cylinders and capsules along its local z
    label: str              # e.g. "mesh 'meshes/arm.stl'", for reports


@dataclass
class LinkSpec:
    name: str
    inertial: Inertial | None
    collisions: list
    visuals: int = 0        # how many <visual> (not loaded: the viewer draws the shapes)


@dataclass
class JointSpec:
    name: str
    type: str
    parent: str
    child: str
    origin: Origin                  # the child's link frame in the parent's
    axis: np.ndarray                # (3,) unit, in the child's link frame
    lower: float = -np.inf          # limits: rad or m (continuous: none)
    upper: float = np.inf
    effort: float = np.inf          # N m or N
    velocity: float = np.inf        # rad/s or m/s
    damping: float = 0.0            # N m s/rad or N s/m
    friction: float = 0.0           # N m or N
    mimic: tuple | None = None      # (joint name, multiplier, offset)
    ignored: list = field(default_factory=list)


@dataclass
class Robot:
    name: str
    links: dict                     # name -> LinkSpec
    joints: list                    # JointSpec, parents before children (breadth first)
    root: str
    parent_joint: dict              # child link name -> JointSpec


def parse_urdf(text: str) -> Robot:
    """A URDF document (XML text) as a checked ``Robot``."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ValueError(f"URDF is not well-formed XML: {exc}") from None
    if root.tag != "robot":
        raise ValueError(f"URDF's root element must be <robot>, got <{root.tag}>")
    links = {}
    for element in root.findall("link"):
        link = _link(element)
        if link.name in links:
            raise ValueError(f"link {link.name!r}: defined twice (link names must be unique)")
        links[link.name] = link
    if not links:
        raise ValueError("URDF <robot> has no <link>")
    joints = [_joint(element, links) for element in root.findall("joint")]
    names = [j.name for j in joints]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"joint {twice[0]!r}: defined twice (joint names must be unique)")
    by_name = dict(zip(names, joints))
    for joint in joints:
        if joint.mimic is not None and joint.mimic[0] not in by_name:
            raise ValueError(f"joint {joint.name!r}: <mimic joint> {joint.mimic[0]!r} is no "
                             "joint of this robot")
    parent_joint = {}
    for joint in joints:
        if joint.child in parent_joint:
            raise ValueError(f"joint {joint.name!r}: child link {joint.child!r} already has "
                             f"parent joint {parent_joint[joint.child].name!r} (a URDF is a "
                             "tree: each link has at most one parent)")
        parent_joint[joint.child] = joint
    roots = [name for name in links if name not in parent_joint]
    if len(roots) > 1:
        raise ValueError(f"URDF has {len(roots)} root links {roots} (links that are no joint's "
                         "child): a URDF is one tree; join them with a joint")
    ordered = _breadth_first(roots[0] if roots else None, joints)
    if len(ordered) != len(joints):
        looped = sorted(j.name for j in joints if j not in ordered)
        raise ValueError(f"joint {looped[0]!r}: joints {looped} form a cycle (links that are "
                         "their own ancestors): a URDF is a tree")
    robot_name = root.get("name", "")
    return Robot(robot_name, links, ordered, roots[0], parent_joint)


def _breadth_first(root, joints) -> list:
    children = {}
    for joint in joints:
        children.setdefault(joint.parent, []).append(joint)
    ordered, frontier = [], [root]
    while frontier:
        below = [j for name in frontier for j in children.get(name, [])]
        ordered += below
        frontier = [j.child for j in below]
    return ordered


def _numbers(owner: str, element, attribute: str, count: int, default=None) -> np.ndarray:
    """``count`` finite numbers from a space-separated attribute (``default`` when absent)."""
    text = None if element is None else element.get(attribute)
    if text is None:
        if default is None:
            tag = "?" if element is None else element.tag
            raise ValueError(f"{owner}: <{tag}> has no {attribute}=")
        return np.array(default, dtype=float)
    try:
        values = np.array([float(x) for x in text.split()])
    except ValueError:
        values = None
    if values is None or values.shape != (count,) or not np.all(np.isfinite(values)):
        raise ValueError(f"{owner}: <{element.tag} {attribute}={text!r}> must be {count} finite "
                         "number" + ("s" if count > 1 else ""))
    return values


def _number(owner, element, attribute, default=None) -> float:
    return float(_numbers(owner, element, attribute, 1,
                          None if default is None else [default])[0])


def _non_negative(owner, element, attributes, default):
    """The numbers ``attributes`` of ``element`` (``default`` where absent), each refused with
    a ValueError naming it when negative."""
    values = [_number(owner, element, a, default) for a in attributes]
    for attribute, value in zip(attributes, values):
        if value < 0:
            raise ValueError(f"{owner}: <{element.tag} {attribute}> must not be negative, got "
                             f"{value:g}")
    return values

def _origin(owner: str, element) -> Origin:
    origin = None if element is None else element.find("origin")
    xyz = _numbers(owner, origin, "xyz", 3, (0, 0, 0))
    rpy = _numbers(owner, origin, "rpy", 3, (0, 0, 0))
    return Origin(xyz, rpy_matrix(rpy))


def _link(element) -> LinkSpec:
    name = element.get("name")
    if not name:
        raise ValueError("<link> has no name=")
    owner = f"link {name!r}"
    link = LinkSpec(name, _inertial(owner, element.find("inertial")), [])
    for k, collision in enumerate(element.findall("collision")):
        link.collisions.append(_collision(f"{owner} <collision> {k}", collision))
    link.visuals = len(element.findall("visual"))
    return link


def _inertial(owner: str, element) -> Inertial | None:
    if element is None:
        return None
    owner += " <inertial>"
    mass_element = element.find("mass")
    if mass_element is None:
        raise ValueError(f"{owner}: has no <mass value=>")
    mass = _number(owner, mass_element, "value")
    if mass < 0:
        raise ValueError(f"{owner}: <mass value> {mass:g} is negative (kg)")
    inertia_element = element.find("inertia")
    if inertia_element is None:
        raise ValueError(f"{owner}: has no <inertia ixx= ixy= ixz= iyy= iyz= izz=>")
    ixx, ixy, ixz, iyy, iyz, izz = (_number(owner, inertia_element, a, 0.0) for a in
                                    ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return Inertial(mass, _origin(owner, element), inertia)


def _collision(owner: str, element) -> Collision:
    geometry = element.find("geometry")
    shapes = [] if geometry is None else list(geometry)
    if len(shapes) != 1:
        raise ValueError(f"{owner}: <geometry> must hold one shape, got "
                         f"{[s.tag for s in shapes]}")
    shape = shapes[0]
    origin = _origin(owner, element)
    if shape.tag == "box":
        size = tuple(_numbers(owner, shape, "size", 3))
    elif shape.tag == "sphere":
        size = (_number(owner, shape, "radius"),)
    elif shape.tag in ("cylinder", "capsule"):
        size = (_number(owner, shape, "radius"), _number(owner, shape, "length"))
    elif shape.tag == "mesh":
        return Collision("mesh", (), origin, f"mesh {shape.get('filename', '')!r}")
    else:
        raise ValueError(f"{owner}: unknown geometry <{shape.tag}> (URDF has box, sphere, "
                         "cylinder and mesh; capsule is read too)")
    if min(size) <= 0 and not (shape.tag == "capsule" and size[0] > 0 and size[1] == 0):
        raise ValueError(f"{owner}: <{shape.tag}> sizes {size} must be positive (m)")
    return Collision(shape.tag, size, origin, f"<{shape.tag}>")


def _joint(element, links) -> JointSpec:
    name = element.get("name")
    if not name:
        raise ValueError("<joint> has no name=")
    owner = f"joint {name!r}"
    kind = element.get("type")
    if kind not in JOINT_TYPES:
        raise ValueError(f"{owner}: type {kind!r} is not a URDF joint type {JOINT_TYPES}")
    ends = {}
    for end in ("parent", "child"):
        link_element = element.find(end)
        link = None if link_element is None else link_element.get("link")
        if link is None:
            raise ValueError(f"{owner}: has no <{end} link=>")
        if link not in links:
            raise ValueError(f"{owner}: <{end} link={link!r}> is no link of this robot")
        ends[end] = link
    if ends["parent"] == ends["child"]:
        raise ValueError(f"{owner}: parent and child are the same link {ends['parent']!r}")
    axis = _numbers(owner, element.find("axis"), "xyz", 3, (1, 0, 0))
    length = float(np.linalg.norm(axis))
    if kind in ("revolute", "continuous", "prismatic", "planar") and length == 0:
        raise ValueError(f"{owner}: axis {tuple(float(a) for a in axis)} has zero length")
    joint = JointSpec(name, kind, ends["parent"], ends["child"], _origin(owner, element),
                  axis / length if length > 0 else axis)
    limit = element.find("limit")
    if kind in ("revolute", "prismatic"):
        if limit is None:
            raise ValueError(f"{owner}: a {kind} joint needs <limit lower= upper= effort= "
                             "velocity=> (use type continuous for a hinge without limits)")
        joint.lower, joint.upper = (_number(owner, limit, a, 0.0) for a in ("lower", "upper"))
        if joint.lower > joint.upper:
            raise ValueError(f"{owner}: <limit lower> {joint.lower:g} is above upper "
                             f"{joint.upper:g}")
    if limit is not None and kind in ("revolute", "continuous", "prismatic"):
        joint.effort, joint.velocity = _non_negative(owner, limit, ("effort", "velocity"),
                                                     np.inf)
    dynamics = element.find("dynamics")
    if dynamics is not None:
        joint.damping, joint.friction = _non_negative(owner, dynamics, ("damping", "friction"),
                                                      0.0)
    mimic = element.find("mimic")
    if mimic is not None:
        if not mimic.get("joint"):
            raise ValueError(f"{owner}: <mimic> has no joint=")
        joint.mimic = (mimic.get("joint"), _number(owner, mimic, "multiplier", 1.0),
                       _number(owner, mimic, "offset", 0.0))
    for tag in ("calibration", "safety_controller"):
        if element.find(tag) is not None:
            joint.ignored.append(f"{owner}: <{tag}> (not modelled)")
    return joint
