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
    """A crank, coupler and rocker (1 kg boxes) hinged into a closed loop with the ground,
    all three set moving as the loop lets them.

    Parameters:
        crank_speed (rad/s): the crank's start rate about its hinge (y); it then swings
            freely under gravity.
    """
    world.add_body(Plane(offset=-1.5), name="ground")     # (below the rocker's sweep)
    A, B, C, D = (0, 0, 0.5), (0, 0, 1.5), (1.5, 0, 1.9), (2.0, 0, 0.5)
    crank, coupler, rocker = (_link(world, A, B, "crank"), _link(world, B, C, "coupler"),
                              _link(world, C, D, "rocker"))
    y = (0, 1, 0)
    world.add_joint(Hinge(None, crank, anchor=A, axis=y))
    world.add_joint(Hinge(crank, coupler, anchor=B, axis=y))
    world.add_joint(Hinge(coupler, rocker, anchor=C, axis=y))
    world.add_joint(Hinge(None, rocker, anchor=D, axis=y))
    # every link moving as the loop lets it (turning the crank alone, the first step's
    # projection onto the joints kept 5 % of its energy and sent it back the other way)
    rates = _loop_rates(*(np.asarray(p, float) for p in (A, B, C, D)), crank_speed)
    for link, rate in zip((crank, coupler, rocker), rates):
        link.angular_velocity = (0, rate, 0)
    crank.linear_velocity = _turning(rates[0], crank.position - A)
    coupler.linear_velocity = _turning(rates[0], np.subtract(B, A)) + _turning(
        rates[1], coupler.position - B)
    rocker.linear_velocity = _turning(rates[2], rocker.position - D)


def _turning(rate, r):
    """Velocity (3,) of a point at r from a pivot, turning at rate about y."""
    return np.cross((0.0, rate, 0.0), r)


def _loop_rates(A, B, C, D, crank_rate):
    """The coupler's and rocker's rates about y (rad/s) that keep the loop closed while the
    crank A-B turns at crank_rate: C's velocity by way of B equals its velocity about D."""
    v_B = _turning(crank_rate, B - A)
    # v_B + w_c y x (C - B) = w_r y x (C - D), in x and z
    M = np.column_stack([_turning(1.0, C - B)[[0, 2]], -_turning(1.0, C - D)[[0, 2]]])
    coupler_rate, rocker_rate = np.linalg.solve(M, -v_B[[0, 2]])
    return crank_rate, coupler_rate, rocker_rate
