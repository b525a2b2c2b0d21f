"""A capsule humanoid (15 bodies, ~70 kg at scale 1) for the ragdoll scenes.

    from scenes.humanoid import add_ragdoll
    doll = add_ragdoll(world, position=(0, 0, 1.5), yaw=0.3)
    doll["head"].position, doll.joints["knee_l"].angle

Body names: pelvis, torso, head, upper_arm_l/r, forearm_l/r, hand_l/r, thigh_l/r, shin_l/r,
foot_l/r. Joint names: spine, neck, shoulder_l/r, elbow_l/r, wrist_l/r, hip_l/r, knee_l/r,
ankle_l/r.

The body is laid out standing, facing +x with its left side at +y, then turned by ``yaw``
about z (and by ``orientation``), with the pelvis centre at ``position``; standing on the
ground that is ``z = STANDING_PELVIS_HEIGHT * scale``. Capsules run between the joint centres
(ends inset by their radius), so neighbouring segments touch; jointed pairs never collide.
"""
from __future__ import annotations

import numpy as np

from physics import Ball, Capsule, Hinge
from physics.math3d import quat_multiply, quat_to_matrix
from physics.validation import check_positive

STANDING_PELVIS_HEIGHT = 0.95          # m at scale 1, pelvis centre above the soles

# Joint centres of the standing pose, metres, body frame (x forward, y left, z up, ground 0).
_NECK = (0.0, 0.0, 1.52)
_SPINE = (0.0, 0.0, 1.03)
_SHOULDER = (0.0, 0.23, 1.45)
_HIP = (0.0, 0.09, 0.90)
_KNEE = (0.0, 0.09, 0.50)
_ANKLE = (0.0, 0.09, 0.09)
UPPER_ARM, FOREARM, HAND = 0.29, 0.26, 0.16           # segment lengths, m

# name: (radius m, mass kg). Total 70.0 kg.
SEGMENTS = {
    "pelvis": (0.10, 11.0), "torso": (0.13, 22.0), "head": (0.10, 5.0),
    "upper_arm": (0.045, 2.1), "forearm": (0.04, 1.3), "hand": (0.035, 0.5),
    "thigh": (0.07, 7.5), "shin": (0.05, 3.5), "foot": (0.04, 1.1),
}


class Ragdoll(dict):
    """name -> Body, plus ``joints``: name -> Joint."""

    def __init__(self, bodies, joints):
        super().__init__(bodies)
        self.joints = joints

    @property
    def mass(self) -> float:
        return float(sum(b.mass for b in self.values()))

    def centre_of_mass(self) -> np.ndarray:
        m = np.array([b.mass for b in self.values()])
        x = np.array([b.position for b in self.values()])
        return m @ x / m.sum()


# -- small rotation helpers (quaternions w, x, y, z) ------------------------------------------
def quat_axis_angle(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.array([np.cos(angle / 2), *(np.sin(angle / 2) * axis)])


def quat_from_z(d):
    """The shortest rotation taking local z onto the direction d."""
    d = np.asarray(d, float) / np.linalg.norm(d)
    z = np.array([0.0, 0.0, 1.0])
    c = float(z @ d)
    if c < -1 + 1e-12:
        return np.array([0.0, 1.0, 0.0, 0.0])
    axis = np.cross(z, d)
    q = np.array([1.0 + c, *axis])
    return q / np.linalg.norm(q)


def layout(arms: str = "down"):
    """Joint centres (name -> (3,)) of the standing pose for ``arms`` "down" (at the sides)
    or "forward" (upper arms 0.3 rad forward, forearms level: holding something)."""
    pts = {"neck": np.array(_NECK), "spine": np.array(_SPINE)}
    for side, s in (("l", 1.0), ("r", -1.0)):
        sh = np.array(_SHOULDER) * (1, s, 1)
        if arms == "down":
            up_dir = fore_dir = np.array([0.0, 0.0, -1.0])
        elif arms == "forward":
            up_dir = np.array([np.sin(0.3), 0.0, -np.cos(0.3)])
            fore_dir = np.array([1.0, 0.0, 0.0])
        else:
            raise ValueError(f"arms must be 'down' or 'forward', got {arms!r}")
        elbow = sh + UPPER_ARM * up_dir
        wrist = elbow + FOREARM * fore_dir
        pts[f"shoulder_{side}"] = sh
        pts[f"elbow_{side}"] = elbow
        pts[f"wrist_{side}"] = wrist
        pts[f"fingertip_{side}"] = wrist + HAND * fore_dir
        for j, p in (("hip", _HIP), ("knee", _KNEE), ("ankle", _ANKLE)):
            pts[f"{j}_{side}"] = np.array(p) * (1, s, 1)
    return pts


def add_ragdoll(world, position, scale=1.0, yaw=0.0, *, orientation=None, friction=0.8,
                arms="down", standing=False, self_collision=True, joint_friction=0.0,
                prefix="") -> Ragdoll:
    """Add a 15-body capsule humanoid to ``world`` and return its bodies and joints.

    position: world position of the pelvis centre (m); scale: lengths scale by it, masses by
    its cube; yaw: turn about world z (rad), then ``orientation`` (a quaternion w, x, y, z,
    turning about the pelvis centre) if given; friction of every segment.

    The default is a ragdoll: Ball joints with cone (swing) and twist limits at the spine,
    neck, shoulders, wrists and hips, limited Hinges at the elbows, knees and ankles. Limits
    are relative to the starting pose (every joint angle is zero at creation); the swing
    cones, below 1.3 rad, are a person's range (the twist is well defined up to a swing of
    pi, so wider cones work too).
    ``standing=True`` makes every joint a Hinge about the body's left-right axis (the spine,
    neck, shoulders, wrists and hips too), each with a servo holding its starting angle, so the
    figure can keep a pose; ``arms`` "down" or "forward" picks the starting arm pose.
    ``self_collision=False`` stops the segments colliding with each other (jointed neighbours
    never do). ``joint_friction`` (N m, scaled with the masses by ``scale`` to the fourth) is
    every joint's dry friction: with none the limp joints let a pile sag for seconds. ``prefix``
    is put before every body and joint name.
    """
    s = float(scale)
    if not s > 0:
        raise ValueError(f"scale must be positive, got {scale!r}")
    turn = quat_axis_angle((0, 0, 1), float(yaw))
    if orientation is not None:
        q = np.asarray(orientation, float)
        turn = quat_multiply(q / np.linalg.norm(q), turn)
    R = quat_to_matrix((np.asarray(turn, float) / np.linalg.norm(turn))[None])[0]
    origin = np.asarray(position, float) - R @ (s * np.array([0.0, 0.0, STANDING_PELVIS_HEIGHT]))
    pts = layout(arms)

    def world_point(p):
        return origin + R @ (s * np.asarray(p, float))

    bodies = {}

    def capsule(name, kind, p0, p1, inset=True):
        """A capsule of segment kind ``kind`` spanning p0..p1 (body frame, scale 1)."""
        r, m = SEGMENTS[kind]
        p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
        d = p1 - p0
        length = np.linalg.norm(d)
        half = 0.5 * length - r if inset else 0.5 * length
        if half < 0:
            raise AssertionError(f"segment {name} is shorter than its diameter")
        q = quat_multiply(turn, quat_from_z(d))
        bodies[name] = world.add_body(Capsule(s * r, s * half), mass=m * s**3,
                                      position=world_point(0.5 * (p0 + p1)), orientation=q,
                                      friction=friction, name=prefix + name)
        return bodies[name]

    capsule("pelvis", "pelvis", (0, -0.07, 0.95), (0, 0.07, 0.95), inset=False)
    capsule("torso", "torso", pts["spine"], pts["neck"] - (0, 0, 0.02))
    capsule("head", "head", (0, 0, 1.62), (0, 0, 1.66), inset=False)
    for side in ("l", "r"):
        capsule(f"upper_arm_{side}", "upper_arm", pts[f"shoulder_{side}"], pts[f"elbow_{side}"])
        capsule(f"forearm_{side}", "forearm", pts[f"elbow_{side}"], pts[f"wrist_{side}"])
        capsule(f"hand_{side}", "hand", pts[f"wrist_{side}"], pts[f"fingertip_{side}"])
        capsule(f"thigh_{side}", "thigh", pts[f"hip_{side}"], pts[f"knee_{side}"])
        capsule(f"shin_{side}", "shin", pts[f"knee_{side}"], pts[f"ankle_{side}"])
        y = pts[f"ankle_{side}"][1]
        capsule(f"foot_{side}", "foot", (-0.05, y, 0.04), (0.17, y, 0.04), inset=False)

    lateral = R @ np.array([0.0, 1.0, 0.0])       # flexion axis of every hinge
    # (a torque: mass times length times an acceleration)
    joint_torque = check_positive("joint_friction", joint_friction, allow_zero=True) * s ** 4
    joints = {}

    def hinge(name, a, b, at, limits, sign=1.0):
        joints[name] = world.add_joint(Hinge(bodies[a], bodies[b], anchor=world_point(pts[at]),
                                             axis=sign * lateral, limits=limits,
                                             friction=joint_torque, name=prefix + name))

    def ball(name, a, b, at, swing, twist):
        if standing:
            return hinge(name, a, b, at, (-swing, swing))
        joints[name] = world.add_joint(Ball(bodies[a], bodies[b], anchor=world_point(pts[at]),
                                            swing_limit=swing, twist_limits=twist,
                                            friction=joint_torque, name=prefix + name))

    ball("spine", "pelvis", "torso", "spine", 0.6, (-0.6, 0.6))
    ball("neck", "torso", "head", "neck", 0.7, (-1.0, 1.0))
    for side in ("l", "r"):
        ball(f"shoulder_{side}", "torso", f"upper_arm_{side}", f"shoulder_{side}", 1.3, (-1.0, 1.0))
        # flexion brings the forearm forward (+x): a negative turn about +y, so the axis is -y
        hinge(f"elbow_{side}", f"upper_arm_{side}", f"forearm_{side}", f"elbow_{side}",
              (-0.05, 2.5), sign=-1.0)
        ball(f"wrist_{side}", f"forearm_{side}", f"hand_{side}", f"wrist_{side}", 0.9, (-0.4, 0.4))
        ball(f"hip_{side}", "pelvis", f"thigh_{side}", f"hip_{side}", 1.2, (-0.6, 0.6))
        # knee flexion takes the shin backwards: a positive turn about +y
        hinge(f"knee_{side}", f"thigh_{side}", f"shin_{side}", f"knee_{side}", (-0.05, 2.4))
        # ankle: positive turns point the toes down
        hinge(f"ankle_{side}", f"shin_{side}", f"foot_{side}", f"ankle_{side}", (-0.5, 0.8))
    if not self_collision:
        parts = list(bodies.values())
        for i, a in enumerate(parts):
            for b in parts[i + 1:]:
                world.ignore_collision(a, b)
    return Ragdoll(bodies, joints)


def hold_pose(ragdoll: Ragdoll, stiffness=3000.0, damping=150.0, max_torque=np.inf, targets=None):
    """Servo every Hinge of ``ragdoll`` to its angle now (or ``targets``: name -> angle), all
    with the same stiffness (N m/rad), damping (N m s/rad) and torque limit (N m)."""
    targets = targets or {}
    for name, joint in ragdoll.joints.items():
        if isinstance(joint, Hinge):
            joint.set_servo(targets.get(name, joint.angle), stiffness, damping, max_torque)
