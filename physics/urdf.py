"""Loading a URDF robot into a World: ``load_urdf(world, path_or_string, ...)``.

Each URDF link becomes one body, each joint one engine joint, at the URDF's zero
configuration, so every joint coordinate (a Hinge's ``angle``, a Slider's ``position``) is the
URDF joint value and its limits are the URDF ``<limit lower upper>``. The rules, where a URDF
says more than the engine holds (each case also goes into ``UrdfRobot.ignored`` and one
UserWarning):

- A body sits at its link's centre of mass (``<inertial><origin xyz>``) with the full inertia
  tensor, off-diagonal terms included, turned into the body's axes (the engine takes any
  symmetric 3x3 body-frame inertia, so no principal axes are needed).
- A body has one shape, centred on its centre of mass. The link's first ``<collision>`` of
  box, sphere, cylinder or capsule whose origin lies within ``CENTRED`` of the centre of
  mass is that shape, the body's axes its collision frame's (a URDF cylinder lies along its
  local z, as ours); the other collisions are listed as ignored, as are meshes (the engine
  has no mesh shape). A link left without a shape does not collide.
- A link without ``<inertial>`` (or of mass 0) on a fixed joint is merged into its parent's
  body: no body and no joint for it (a tool flange, a sensor frame);
  ``bodies[link]`` is the parent's body and ``link_pose`` still gives its frame. Such a link
  on a moving joint, or as a floating base, is refused unless ``missing_mass`` (kg) is given:
  it then gets that mass, centred on its first shape with that shape's inertia (a 1 cm
  sphere's at the link's origin with no shape).
- With ``fixed_base`` the root link is static (a static body with its shape, or the world
  frame itself where it has none); otherwise it is a free body (a massless root welded to
  its one child, a ``base_footprint``, is merged into that child).
- Joints: revolute -> Hinge with limits, continuous -> Hinge, prismatic -> Slider with limits,
  fixed -> Fixed, floating -> none (the child is free), planar -> none (not supported: the
  child is left free). ``<dynamics damping>`` -> a damper (``set_servo(0, stiffness=0,
  damping)``), ``friction`` -> the joint's dry friction; ``<limit effort>`` -> the motor's
  max force with ``motors=True`` (a velocity motor at 0 on each actuated joint but a
  mimicking one, to be driven by ``set_motor``); ``<limit velocity>`` is kept in
  ``velocity_limits``, not enforced; ``<mimic>`` -> a ``Gear`` (q = multiplier
  q_mimicked), refused mimics listed.
- Jointed bodies do not collide (the engine's own rule); ``self_collision=False`` (the
  default, as PyBullet's) also keeps every other pair of the robot's bodies apart.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .couplings import Gear
from .joints import Fixed, Hinge, Slider
from .math3d import matrix_to_quat, quat_to_matrix
from .shapes import Box, Capsule, Cylinder, Sphere
from .urdf_parse import parse_urdf
from .validation import (check_flag, check_inertia, check_inertia_holds_contacts,
                         check_positive, check_quaternion, check_vector, warn_user)

# A collision origin this close to the centre of mass (m) counts as centred on it: URDFs
# write the two origins from the same decimals, and a micrometre is 300 times below the
# contacts' slop (3e-4 m).
CENTRED = 1e-6
# The shape a body given ``missing_mass`` takes its inertia from when its link has none.
MISSING_SHAPE_RADIUS = 0.01


@dataclass
class UrdfRobot:
    """What ``load_urdf`` made. ``bodies``: link name -> Body (a merged link's entry is the
    body it was merged into; a fixed-base root without a shape is the world and has none);
    ``joints``: joint name -> Hinge, Slider or Fixed (none for floating, planar and merged
    joints); ``couplings``: mimicking joint name -> Gear; ``effort_limits`` and
    ``velocity_limits``: joint name -> the URDF's ``<limit>`` (N m or N, rad/s or m/s; inf
    where absent); ``ignored``: what the engine did not take, one line each."""
    name: str
    bodies: dict = field(default_factory=dict)
    joints: dict = field(default_factory=dict)
    couplings: dict = field(default_factory=dict)
    effort_limits: dict = field(default_factory=dict)
    velocity_limits: dict = field(default_factory=dict)
    ignored: list = field(default_factory=list)
    # link name -> (Body or None for the world, (3,) link origin and (3, 3) link axes in it)
    frames: dict = field(default_factory=dict, repr=False)

    def link_pose(self, link: str) -> tuple[np.ndarray, np.ndarray]:
        """The URDF link frame now: its origin (3,) m and axes (3, 3) (columns), world
        frame."""
        if link not in self.frames:
            raise ValueError(f"link {link!r} is no link of robot {self.name!r}")
        body, offset, turn = self.frames[link]
        if body is None:
            return offset.copy(), turn.copy()
        return body.position + body.rotation @ offset, body.rotation @ turn


def load_urdf(world, path_or_string, *, position=(0, 0, 0), orientation=(1, 0, 0, 0),
              fixed_base: bool = True, motors: bool = False, self_collision: bool = False,
              missing_mass: float | None = None, friction: float = 0.5) -> UrdfRobot:
    """Add the robot of a URDF file (a path) or document (a string starting with '<') to
    ``world`` with its root link's frame at ``position`` (m) and ``orientation`` (unit
    quaternion w, x, y, z), world frame; returns a ``UrdfRobot``. See the module docstring
    for how links and joints map. ``friction`` is every body's contact friction. Bad input
    is a ValueError naming the element and attribute; then nothing is added."""
    text = _read(path_or_string)
    base_position = check_vector("position", position, 3)
    base_rotation = quat_to_matrix(check_quaternion("orientation", orientation)[None])[0]
    fixed_base, motors, self_collision = (check_flag(label, value) for label, value in (
        ("fixed_base", fixed_base), ("motors", motors), ("self_collision", self_collision)))
    if missing_mass is not None:
        missing_mass = check_positive("missing_mass", missing_mass)
    friction = check_positive("friction", friction, allow_zero=True)
    robot = parse_urdf(text)
    frames = {robot.root: (base_position, base_rotation)}
    for joint in robot.joints:
        p, R = frames[joint.parent]
        frames[joint.child] = (p + R @ joint.origin.xyz, R @ joint.origin.rotation)
    result = UrdfRobot(robot.name)
    visual = [name for name, link in robot.links.items() if link.visuals]
    if visual:
        result.ignored.append(f"<visual> of {len(visual)} links ({', '.join(visual[:3])}"
                              f"{', ...' if len(visual) > 3 else ''}): the viewer draws the "
                              "collision shapes")
    plans = _body_plans(robot, frames, fixed_base, missing_mass, result.ignored)
    _check_actuation(robot, motors)
    made = []                         # (refused part-way: the bodies made so far go again)
    try:
        for link_name, plan in plans.items():
            if plan is None or isinstance(plan, str):
                continue
            try:
                body = world.add_body(plan["shape"], name=link_name, friction=friction,
                                      **plan["values"])
            except ValueError as exc:
                raise ValueError(f"link {link_name!r}: {exc}") from None
            made.append(body)
            result.bodies[link_name] = body
        _place_frames(robot, frames, plans, result)
        _add_joints(world, robot, frames, result, motors)
    except ValueError:
        for joint in list(result.couplings.values()) + list(result.joints.values())[::-1]:
            world.remove_joint(joint)
        world.remove_bodies(made)
        raise
    robot_bodies = list(dict.fromkeys(result.bodies.values()))
    if not self_collision:
        for k, body in enumerate(robot_bodies):
            for other in robot_bodies[k + 1:]:
                world.ignore_collision(body, other)
    if result.ignored:
        warn_user(f"load_urdf({robot.name!r}) left out what the engine does not take:\n  "
                  + "\n  ".join(result.ignored))
    return result


def _read(path_or_string) -> str:
    if isinstance(path_or_string, str) and path_or_string.lstrip().startswith("<"):
        return path_or_string
    if not isinstance(path_or_string, (str, os.PathLike)):
        raise ValueError(f"path_or_string must be a URDF file's path or a URDF document "
                         f"(a string starting with '<'), got {path_or_string!r}")
    try:
        with open(path_or_string, encoding="utf-8") as file:
            return file.read()
    except OSError as exc:
        raise ValueError(f"path_or_string: cannot read URDF file {str(path_or_string)!r}: "
                         f"{exc.strerror}") from None


def _body_plans(robot, frames, fixed_base, missing_mass, ignored) -> dict:
    """link name -> add_body's arguments ({"shape", "values"}), None for the world (a
    fixed-base root without a shape), or the name of the link it is merged into."""
    plans = {}
    for name in [robot.root] + [j.child for j in robot.joints]:
        link, joint = robot.links[name], robot.parent_joint.get(name)
        p_link, R_link = frames[name]
        massless = link.inertial is None or link.inertial.mass == 0
        if name == robot.root and fixed_base:
            plans[name] = _static_plan(link, p_link, R_link, ignored)
        elif name == robot.root and massless and _welded_child(robot) is not None:
            # (a free robot's massless root frame welded to its one child, base_footprint
            # on base_link: the child is the base that carries it)
            plans[name] = _welded_child(robot)
            ignored.append(f"link {name!r}: no mass (no <inertial>, or mass 0), merged into "
                           f"link {plans[name]!r} across fixed joint "
                           f"{robot.parent_joint[plans[name]].name!r}"
                           + _dropped_collisions(link))
        elif massless and joint is not None and joint.type == "fixed":
            carrier = plans[joint.parent]
            plans[name] = carrier if isinstance(carrier, str) else joint.parent
            ignored.append(f"link {name!r}: no mass (no <inertial>, or mass 0), merged into "
                           f"link {plans[name]!r} across fixed joint {joint.name!r}"
                           + _dropped_collisions(link))
        else:
            plans[name] = _dynamic_plan(link, joint, p_link, R_link, massless, missing_mass,
                                        ignored)
    return plans


def _welded_child(robot) -> str | None:
    """The root link's one child where a fixed joint welds it on and it has a mass, else
    None."""
    below = [j for j in robot.joints if j.parent == robot.root]
    if len(below) != 1 or below[0].type != "fixed":
        return None
    inertial = robot.links[below[0].child].inertial
    return below[0].child if inertial is not None and inertial.mass > 0 else None


def _dropped_collisions(link) -> str:
    return f" (its {len(link.collisions)} <collision> dropped)" if link.collisions else ""


def _shape_of(collision):
    if collision.kind == "box":
        return Box(tuple(0.5 * s for s in collision.size))
    if collision.kind == "sphere":
        return Sphere(collision.size[0])
    if collision.kind == "cylinder":
        return Cylinder(collision.size[0], 0.5 * collision.size[1])
    return Capsule(collision.size[0], 0.5 * collision.size[1])


def _chosen_collision(link, ignored, centre=None):
    """The link's first box, sphere, cylinder or capsule <collision> (centred within CENTRED
    of ``centre`` (3,) m, link frame, where given), or None; the others go into ``ignored``
    with why."""
    owner = f"link {link.name!r}"
    chosen = None
    for c in link.collisions:
        if c.kind == "mesh":
            ignored.append(f"{owner}: <collision> {c.label} (no mesh shapes)")
        elif chosen is not None:
            ignored.append(f"{owner}: <collision> {c.label} beyond the first (a body has one "
                           "shape)")
        elif centre is not None and np.linalg.norm(c.origin.xyz - centre) > CENTRED:
            ignored.append(f"{owner}: <collision> {c.label} centred "
                           f"{np.linalg.norm(c.origin.xyz - centre):.3g} m from the centre of "
                           "mass (a body's shape is centred on its centre of mass)")
        else:
            chosen = c
    return chosen


def _static_plan(link, p_link, R_link, ignored):
    c = _chosen_collision(link, ignored)
    if c is None:
        return None
    return {"shape": _shape_of(c), "values": {
        "static": True, "position": p_link + R_link @ c.origin.xyz,
        "orientation": matrix_to_quat(R_link @ c.origin.rotation)}}


def _dynamic_plan(link, joint, p_link, R_link, massless, missing_mass, ignored):
    owner = f"link {link.name!r}"
    if massless and missing_mass is None:
        where = "a floating base" if joint is None else f"moved by joint {joint.name!r}"
        raise ValueError(f"{owner}: has no mass (no <inertial>, or mass 0) and is {where}; "
                         "give it an <inertial>, or load with missing_mass= (kg)")
    if massless:
        com, inertia_link, mass = np.zeros(3), None, missing_mass
        ignored.append(f"{owner}: no mass (no <inertial>, or mass 0): given missing_mass "
                       f"{mass:g} kg")
    else:
        origin = link.inertial.origin
        com, mass = origin.xyz, link.inertial.mass
        inertia_link = origin.rotation @ link.inertial.inertia @ origin.rotation.T
        check_inertia(f"{owner} <inertial><inertia>", inertia_link)
    shape, turn = None, np.eye(3)
    c = _chosen_collision(link, ignored, None if massless else com)
    if c is not None:
        shape, turn = _shape_of(c), c.origin.rotation
        com = c.origin.xyz if massless else com
    if inertia_link is None:
        inertia = mass * (shape or Sphere(MISSING_SHAPE_RADIUS)).unit_inertia()
    else:
        inertia = turn.T @ inertia_link @ turn
    if shape is not None and not massless:
        try:
            check_inertia_holds_contacts(shape, mass, inertia)
        except ValueError as exc:
            ignored.append(f"{owner}: <collision> {shape!r} left out: {exc}")
            shape, turn, inertia = None, np.eye(3), inertia_link
    return {"shape": shape, "values": {
        "mass": mass, "inertia": inertia, "position": p_link + R_link @ com,
        "orientation": matrix_to_quat(R_link @ turn)}}


def _place_frames(robot, frames, plans, result):
    """Each link's frame in the body that carries it (UrdfRobot.frames), and a merged
    link's body in ``bodies``."""
    for name, (p_link, R_link) in frames.items():
        carrier = plans[name]
        body = result.bodies.get(carrier if isinstance(carrier, str) else name)
        if isinstance(carrier, str) and body is not None:
            result.bodies[name] = body
        if body is None:
            result.frames[name] = (None, p_link, R_link)
            continue
        R_body = body.rotation
        result.frames[name] = (body, R_body.T @ (p_link - body.position), R_body.T @ R_link)


def _check_actuation(robot, motors):
    if not motors:
        return
    for joint in robot.joints:
        if joint.type in ("revolute", "continuous", "prismatic") and not (
                0 < joint.effort < np.inf):
            raise ValueError(f"joint {joint.name!r}: motors=True needs a positive, finite "
                             f"<limit effort> (its motor's max force), got {joint.effort:g}")


def _add_joints(world, robot, frames, result, motors):
    for spec in robot.joints:
        owner = f"joint {spec.name!r} ({spec.type})"
        result.ignored += spec.ignored
        if spec.type in ("revolute", "continuous", "prismatic"):
            result.effort_limits[spec.name] = spec.effort
            result.velocity_limits[spec.name] = spec.velocity
        parent, _, _ = result.frames[spec.parent]
        child, _, _ = result.frames[spec.child]
        if child is parent:                 # (merged: both links on one body, or the world)
            continue
        anchor, R_child = frames[spec.child]
        axis = R_child @ spec.axis
        if spec.type in ("floating", "planar"):
            result.ignored.append(f"{owner}: link {spec.child!r} left free" + (
                "" if spec.type == "floating" else " (planar joints are not supported)"))
            continue
        try:
            if spec.type == "fixed":
                joint = Fixed(parent, child, anchor=anchor, name=spec.name)
            elif spec.type == "prismatic":
                joint = Slider(parent, child, anchor, axis, limits=(spec.lower, spec.upper),
                               friction=spec.friction, name=spec.name)
            else:
                limits = None if spec.type == "continuous" else (spec.lower, spec.upper)
                joint = Hinge(parent, child, anchor, axis, limits=limits,
                              friction=spec.friction, name=spec.name)
            world.add_joint(joint)
        except ValueError as exc:
            raise ValueError(f"{owner}: {exc}") from None
        result.joints[spec.name] = joint
        if spec.type == "fixed":
            continue
        if motors and spec.mimic is None:        # (a mimicking joint follows its gear)
            joint.set_motor(0.0, spec.effort)
            if spec.damping > 0:
                result.ignored.append(f"{owner}: <dynamics damping> (motors=True: the motor "
                                      "takes the joint's servo slot)")
        elif spec.damping > 0:
            joint.set_servo(0.0, stiffness=0.0, damping=spec.damping)
    _add_mimics(world, robot, result.joints, result)


def _add_mimics(world, robot, made, result):
    """A Gear for each <mimic> between two joints made as hinges or sliders."""
    for spec in robot.joints:
        if spec.mimic is None or spec.name not in made:
            continue
        source, multiplier, offset = spec.mimic
        owner = f"joint {spec.name!r} <mimic joint={source!r}>"
        if source not in made or any(isinstance(made[name], Fixed)
                                     for name in (source, spec.name)):
            result.ignored.append(f"{owner}: not both joints are hinges or sliders")
        elif offset != 0:
            result.ignored.append(f"{owner}: offset {offset:g} (a gear holds q2 = r q1 from "
                                  "the zero pose)")
        else:
            try:
                gear = world.add_joint(Gear(made[source], made[spec.name], multiplier,
                                            name=f"{spec.name} mimic"))
            except ValueError as exc:
                result.ignored.append(f"{owner}: {exc}")
                continue
            result.couplings[spec.name] = gear
