"""A rigid rod swinging on a hinge."""
import numpy as np

from physics import Box, Hinge, Plane

TITLE = "Pendulum"
DESCRIPTION = "A 1 m rod on a hinge, released from an angle."
PARAMS = {"angle": 1.0, "length": 1.0}
CAMERA = {"target": (0, 0, 1.2), "distance": 4.0, "yaw": 90, "pitch": 10}


def build(world, angle=1.0, length=1.0):
    """A 1 kg rod (a thin box) hung from a hinge 2 m above the ground, released at rest.

    Parameters:
        angle (rad): the rod's start angle from hanging straight down (0 hangs still).
        length (m): the rod's length, from the hinge to its free end (above 0).
    """
    if length <= 0:
        raise ValueError(f"length must be positive, got {length}")
    world.add_body(Plane(), name="ground")
    pivot = np.array([0.0, 0.0, 2.0])
    d = np.array([-np.sin(angle), 0, -np.cos(angle)])
    rod = world.add_body(Box((0.03, 0.03, length / 2)), mass=1.0, position=pivot + d * length / 2,
                         orientation=(np.cos(angle / 2), 0, np.sin(angle / 2), 0), name="rod")
    world.add_joint(Hinge(None, rod, anchor=pivot, axis=(0, 1, 0)))
