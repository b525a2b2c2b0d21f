"""A uniform rod swinging on a hinge at its end: a physical pendulum."""
import numpy as np

from physics import Box, Hinge, Plane

TITLE = "Pendulum"
DESCRIPTION = "A uniform rod hinged at its end (period 2 pi sqrt(2L/3g)), released at an angle."
PARAMS = {"angle": 1.0, "length": 1.0}
CAMERA = {"target": (0, 0, 1.2), "distance": 4.0, "yaw": 90, "pitch": 10}


def build(world, angle=1.0, length=1.0):
    """A 1 kg uniform rod (a thin box, 6 cm square) hung by its end from a hinge 2 m above
    the ground, released at rest. A physical pendulum, not a bob on a string: its small
    swings take 2 pi sqrt(2 L / (3 g)) (1.64 s for L = 1 m), not 2 pi sqrt(L / g). Its
    hinge's angle is the rod's angle from hanging straight down, signed as ``angle`` (a
    turn about +y, the hinge's axis), so a recording's joint coordinate swings between
    +angle and -angle (an angle beyond pi reads as the same pose within -pi to pi).

    Parameters:
        angle (rad): the rod's start angle from hanging straight down (0 hangs still).
        length (m): the rod's length, from the hinge to its free end (above 0).
    """
    if length <= 0:
        raise ValueError(f"length must be positive, got {length}")
    world.add_body(Plane(), name="ground")
    pivot = np.array([0.0, 0.0, 2.0])
    # the hinge is made with the rod hanging, so that its angle (zero at creation) is the
    # angle from the vertical; then the rod is turned about it to the start angle
    rod = world.add_body(Box((0.03, 0.03, length / 2)), mass=1.0,
                         position=pivot - (0, 0, length / 2), name="rod")
    world.add_joint(Hinge(None, rod, anchor=pivot, axis=(0, 1, 0)))
    d = np.array([-np.sin(angle), 0, -np.cos(angle)])
    rod.position = pivot + d * length / 2
    rod.orientation = (np.cos(angle / 2), 0, np.sin(angle / 2), 0)
