"""Two rods on hinges: chaotic motion."""
import numpy as np

from physics import Capsule, Hinge, Plane

TITLE = "Double pendulum"
DESCRIPTION = "Two 1 m capsule rods hinged end to end, released from a large angle."
PARAMS = {"angle1": 1.5, "angle2": 2.0}
CAMERA = {"target": (0, 0, 1.5), "distance": 6.0, "yaw": 90, "pitch": 10}
WORLD = {"integrator": "rk4"}


def build(world, angle1=1.5, angle2=2.0):
    """Two 1 m, 1 kg capsule rods, hinged to the world 2.5 m above the ground and to each
    other end to end, released at rest.

    Parameters:
        angle1 (rad): the upper rod's start angle from hanging straight down.
        angle2 (rad): the lower rod's start angle from hanging straight down (measured from
            the vertical, not from the upper rod).
    """
    world.add_body(Plane(), name="ground")
    pivot = np.array([0.0, 0.0, 2.5])
    prev, anchor = None, pivot
    for i, th in enumerate((angle1, angle2)):
        d = np.array([-np.sin(th), 0, -np.cos(th)])
        rod = world.add_body(Capsule(0.04, 0.5), mass=1.0, position=anchor + d * 0.5,
                             orientation=(np.cos(th / 2), 0, np.sin(th / 2), 0), name=f"rod{i + 1}")
        world.add_joint(Hinge(prev, rod, anchor=anchor, axis=(0, 1, 0)))
        prev, anchor = rod, anchor + d
