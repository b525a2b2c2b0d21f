"""Ragdolls dropped on top of each other."""
import numpy as np

from physics import Plane
from physics.math3d import quat_multiply

from scenes.humanoid import add_ragdoll, quat_axis_angle

TITLE = "Ragdoll pile"
DESCRIPTION = ("n capsule ragdolls (15 bodies each) dropped lying down, at staggered heights and "
               "headings, into a pile on the ground.")
PARAMS = {"count": 4, "spacing": 0.6, "spread": 0.25, "friction": 0.8, "seed": 3,
          "self_collision": True, "joint_friction": 0.0}
CAMERA = {"target": (0.0, 0.0, 1.0), "distance": 4.6, "yaw": -60, "pitch": 14}   # the whole drop


def build(world, count=4, spacing=0.6, spread=0.25, friction=0.8, seed=3, self_collision=True,
          joint_friction=0.0):
    """Ragdolls (15 capsules, 70 kg each) dropped lying down, face down and face up in
    turn, at staggered heights and random headings, into a pile on the ground.

    Parameters:
        count (count): how many ragdolls (1 to 100).
        spacing (m): height between successive ragdolls (at least 0.5 so they start apart).
        spread (m): the largest random horizontal offset of each, along x and along y.
        friction (-): Coulomb friction coefficient of the ragdolls and the ground.
        seed (-): the random generator's seed for the headings and offsets.
        self_collision (true/false): whether a ragdoll's own segments collide (they always
            collide with the other ragdolls).
        joint_friction (N m): every joint's dry friction (with none the pile sags for
            seconds; with 0.5-2 it lies still within 2-4 s).
    """
    count = int(count)
    if not 1 <= count <= 100:
        raise ValueError(f"count must be from 1 to 100, got {count}")
    if spread < 0:
        raise ValueError(f"spread must be zero or positive, got {spread}")
    if spacing < 0.5:
        raise ValueError(f"spacing must be at least 0.5 m (the ragdolls would overlap), got {spacing}")
    rng = np.random.default_rng(int(seed))
    world.add_body(Plane(), friction=friction, name="ground")
    dolls = []
    for k in range(count):
        heading = rng.uniform(-np.pi, np.pi)
        face = np.pi / 2 if k % 2 == 0 else -np.pi / 2        # face down, then face up
        lie = quat_axis_angle((0, 1, 0), face + rng.uniform(-0.2, 0.2))
        q = quat_multiply(quat_axis_angle((0, 0, 1), heading), lie)
        x, y = rng.uniform(-spread, spread, 2)
        dolls.append(add_ragdoll(world, (x, y, 0.45 + k * spacing), orientation=q,
                                 friction=friction, self_collision=self_collision,
                                 joint_friction=joint_friction, prefix=f"doll{k}/"))
    return None
