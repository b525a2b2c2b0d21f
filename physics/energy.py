"""Mechanical energy of a world state (the world's committed arrays or a trial state inside a
step), and the projections that hold a conservative system's energy through the steps that
had to fall back from the symplectic step, and keep a system with contacts from gaining any
in them."""
from __future__ import annotations

import numpy as np

from .math3d import einsum, quat_to_matrix
from .rotation import body_inertia, inertia_times
from .sleeping import movable


def _dynamic(world):
    """The rows of dynamic bodies: the compiled model's (a slice when contiguous, so the
    arrays below are views), else a mask."""
    model = world._compiled
    return model.dynamic if model is not None else world._inv_mass[:world._n] > 0


def kinetic_energy(world, q, v, w, R=None) -> float:
    """J: sum of 1/2 m v.v + 1/2 w.I w over dynamic bodies; q, v, w (N, ...) world frame;
    R (N, 3, 3) the rotations of q if already at hand."""
    n = world._n
    dyn = _dynamic(world)
    R = quat_to_matrix(q[dyn]) if R is None else R[dyn]
    wb = einsum("nji,nj->ni", R, w[dyn])
    model = world._compiled
    inertia = (world._inertia[:n] if model is None else body_inertia(world, model))[dyn]
    Iw = inertia_times(inertia, wb)
    m = world._mass[:n][dyn]
    vd = v[dyn]
    return float(0.5 * (m * einsum("ij,ij->i", vd, vd)).sum() + 0.5 * (wb * Iw).sum())


def potential_energy(world, x) -> float:
    """J, gravitational, zero at the world origin."""
    n = world._n
    # all bodies that are not static: a sleeping one is static to the step, not weightless
    moves = movable(world)
    return float(-(world._mass[:n][moves] * (x[moves] @ world.gravity)).sum())


def state_energy(world, state) -> float:
    x, q, v, w = state
    return kinetic_energy(world, q, v, w) + potential_energy(world, x)


def restore_energy(world, target, state, most=1.1, slack=0.0, least=0.9, R=None,
                   stat="energy_restores"):
    """The state with its velocities scaled so that its energy is ``target`` (J), the energy
    the system had before its steps left the symplectic path (split into varying sub-steps or
    projected). Those steps conserve no modified energy: left alone, a run of them walks the
    energy up or down. Projecting back onto the energy level is the standard cure (a
    projection method for a first integral); uniform scaling keeps J u = 0 and the direction
    of motion. The scale is at most ``most`` per step, so a state that cannot reach the level
    (too high up) is never flung; a state whose position alone is above the level (just
    released from rest and a little lifted by the projection) is slowed by ``least``, not
    stopped; a state within ``slack`` (a fraction of its kinetic energy) above the level is
    left alone. Each rescaling counts in ``world.stats[stat]``."""
    x1, q1, v1, w1 = state
    ke = kinetic_energy(world, q1, v1, w1, R)
    allowed = target - potential_energy(world, x1)
    if ke <= 0.0 or ke <= allowed + slack * ke and most <= 1.0:
        return state
    scale = min(np.sqrt(allowed / ke), most) if allowed > 0.0 else least
    if scale == 1.0:
        return state
    world.stats[stat] += 1
    return x1, q1, scale * v1, scale * w1


def dissipative_bound(world, start, state, R=None):
    """The state (x, q, v, w) a step with only contacts among its bounded rows ended in, its
    velocities scaled down so that its energy is at most the step's ``start`` one, plus what
    the step's position corrections lifted (push-out, SHAKE, projections: the potential
    energy it gained), but only where it rose above that: such a step (no motors, user loads
    or kinematic bodies) can only lose energy to its contacts and damping. The steps that
    split (for joints SHAKE could not meet within h, or bodies turning too far for their
    contact rows) kick each piece's joints and contacts whole at its start (symplectic Euler,
    in the true metric), and near a singular configuration of light links (a slack rope
    between its pivot and a heavy ball on the ground, nearly straight) those kicks pumped the
    links' whips: 10 kg on 10 links of 0.01 kg at dt 1/240, 40 degrees out, gained 21.5 J in
    221 split steps (lost 7.9) in its last 2 s, and the ball left the ground. Uniform scaling
    keeps J u = 0 and the direction of motion (see restore_energy); each such step counts in
    ``world.stats["energy_bounds"]``."""
    lifted = max(potential_energy(world, state[0]) - potential_energy(world, start[0]), 0.0)
    return restore_energy(world, state_energy(world, start) + lifted, state, most=1.0, R=R,
                          stat="energy_bounds")
