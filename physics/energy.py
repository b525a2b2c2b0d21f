"""Mechanical energy of a world state (the world's committed arrays or a trial state inside a
step), and the cap that keeps a non-symplectic fallback step from creating energy."""
from __future__ import annotations

import numpy as np

from .math3d import quat_to_matrix


def kinetic_energy(world, q, v, w) -> float:
    """J: sum of 1/2 m v.v + 1/2 w.I w over dynamic bodies; q, v, w (N, ...) world frame."""
    n = world._n
    dyn = world._inv_mass[:n] > 0
    R = quat_to_matrix(q[dyn])
    wb = np.einsum("nji,nj->ni", R, w[dyn])
    Iw = np.einsum("nij,nj->ni", world._inertia[:n][dyn], wb)
    m = world._mass[:n][dyn]
    return float(0.5 * np.sum(m * np.einsum("ij,ij->i", v[dyn], v[dyn])) + 0.5 * np.sum(wb * Iw))


def potential_energy(world, x) -> float:
    """J, gravitational, zero at the world origin."""
    n = world._n
    dyn = world._inv_mass[:n] > 0
    return float(-np.sum(world._mass[:n][dyn] * (x[dyn] @ world.gravity)))


def cap_energy(world, start, end):
    """The end state with its velocities scaled down (never up) so that its energy does not
    exceed the start's. Uniform scaling keeps J u = 0 and the direction of motion. It is
    applied only to steps of conservative systems that had to be split or projected, which
    is where the step stops being symplectic (a varying step size or a projection) and can
    pump energy in."""
    x1, q1, v1, w1 = end
    allowed = kinetic_energy(world, *start[1:]) + potential_energy(world, start[0]) \
        - potential_energy(world, x1)
    ke = kinetic_energy(world, q1, v1, w1)
    if not ke > allowed:
        return end
    scale = np.sqrt(max(allowed, 0.0) / ke)
    world.stats["energy_caps"] += 1
    return x1, q1, scale * v1, scale * w1
