"""A closed four-bar linkage of 3D hinges (redundant rows, solved with cfm)."""
import numpy as np

from physics import Box, Hinge, Plane

TITLE = "Four-bar linkage"
DESCRIPTION = "Crank, coupler and rocker on four parallel 3D hinges: a closed loop with redundant rows."
PARAMS = {"crank_speed": 3.0}
CAMERA = {"target": (1.0, 0, 1.0), "distance": 5.0, "yaw": 90, "pitch": 15}


def _link(world, p, q, name):
    p, q = np.asarray(p, float), np.asarray(q, float)
    d = q - p
    angle = np.arctan2(d[0], d[2])
    return world.add_body(Box((0.04, 0.04, np.linalg.norm(d) / 2)), mass=1.0, position=(p + q) / 2,
                          orientation=(np.cos(angle / 2), 0, np.sin(angle / 2), 0), name=name)


def build(world, crank_speed=3.0):
    world.add_body(Plane(offset=-0.5), name="ground")
    A, B, C, D = (0, 0, 0.5), (0, 0, 1.5), (1.5, 0, 1.9), (2.0, 0, 0.5)
    crank, coupler, rocker = (_link(world, A, B, "crank"), _link(world, B, C, "coupler"),
                              _link(world, C, D, "rocker"))
    y = (0, 1, 0)
    world.add_joint(Hinge(None, crank, anchor=A, axis=y))
    world.add_joint(Hinge(crank, coupler, anchor=B, axis=y))
    world.add_joint(Hinge(coupler, rocker, anchor=C, axis=y))
    world.add_joint(Hinge(None, rocker, anchor=D, axis=y))
    crank.angular_velocity = (0, crank_speed, 0)
