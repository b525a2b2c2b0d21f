"""The seed equation's pieces (DESIGN.md, "Why the velocity-level step is the seed
equation"): the applied wrench Phi (gravity, user loads, the gyroscopic torque, damping), the
joints' right-hand side and multipliers, and the accelerations M^-1 (Phi + J^T lambda); with
the bodies' viscous damping of the velocities and of a kick with bounded rows (``_Kick``).

Its own module because both integrators (``symplectic``, ``rk4``) and
``jointspace.tools.maximal_accelerations`` evaluate the same equation with it.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .assembly import inverse_mass_times
from .math3d import einsum
from .rotation import body_inertia, gyroscopic_torque_explicit, inertia_times
from .rows import Rows


# -- stage 1: applied wrench ---------------------------------------------------------------
def applied_wrench(world, model, R, v, w, damped=False):
    """External force (N, 3) and torque (N, 3), world frame: gravity, user loads and the
    gyroscopic torque -w x I w, with ``damped`` the bodies' viscous damping too (the
    acceleration-level equation; the symplectic step damps the velocities it ends with,
    ``damped_velocities``); and the torque the kicks take when the gyroscopic torque is left
    to the drift (``world.gyroscopic == "implicit"``): the loads'."""
    n = world._n
    F = world._force[:n] + model.dynamic_mass[:, None] * world._gravity
    T_loads = world._torque[:n]
    damping = _damping(world) if damped else None
    if damping is not None:
        c, c_spin = damping
        spin = einsum("nij,nj->ni", R, inertia_times(body_inertia(world, model),
                                                      einsum("nji,nj->ni", R, w)))
        F = F - (c * model.dynamic_mass)[:, None] * v
        T_loads = T_loads - c_spin[:, None] * spin
    return (F, *_with_gyroscopic(world, model, R, w, T_loads))


def _with_gyroscopic(world, model, R, w, T_loads):
    """The torque (N, 3) of the loads T_loads with the gyroscopic torque -w x I w at
    angular velocities w, and what the kicks take of it (``applied_wrench``)."""
    T = T_loads + gyroscopic_torque_explicit(R, body_inertia(world, model), w, model.spinning)
    return T, (T_loads if world.gyroscopic == "implicit" else T)


def _damping(world):
    """The dynamic bodies' linear and angular damping (n,) each, 1/s (0 for the others), or
    None when no body has any."""
    n = world._n
    c, c_spin = world._linear_damping[:n], world._angular_damping[:n]
    if not (c.any() or c_spin.any()):
        return None
    dynamic = world._inv_mass[:n] > 0
    return np.where(dynamic, c, 0.0), np.where(dynamic, c_spin, 0.0)


def damped_velocities(world, v, w, h):
    """The velocities (N, 3) the drift moves the bodies with, damped: v / (1 + c h) and
    w / (1 + c' h) (c, c' each body's linear and angular damping, 1/s), the step of
    dv/dt = -c v taken implicitly after the kick of the loads, contacts and joints (SHAKE and
    the velocity projection then keep the joints). Stable for any c h; a body at rest feels
    nothing, so the forces that hold it are its weight's (damping the velocity the loads
    alone would give took part of the weight off the contacts and joints: a box resting on
    the ground with c = 10 at dt 1/60 pressed with 16.8 N of its 19.6). A body falling freely
    ends at g (1 + c h / 2) / c (its kick is split around the drift), one touching something
    at g / c."""
    damping = _damping(world)
    if damping is None:
        return v, w
    c, c_spin = damping
    return v / (1.0 + c * h)[:, None], w / (1.0 + c_spin * h)[:, None]


class _Kick(NamedTuple):
    """The metric a step with bounded rows kicks in, and the velocities it kicks from: inverse
    masses (N,), world inverse inertias (N, 3, 3), the joints' factorisation of A with them
    (None without joints), v and w (N, 3); ``damped``: the bodies' viscous damping is in them
    (``_damped_kick``), so the velocities after the kick are not damped again."""
    inv_mass: np.ndarray
    Iinv: np.ndarray
    factor: object
    v: np.ndarray
    w: np.ndarray
    damped: bool


def _damped_kick(world, model, rows, inv_mass, Iinv, factor, v, w, h, rescaled=False):
    """The kick of a step with bounded rows with the bodies' viscous damping in it (_Kick):
    dv/dt = -c v taken implicitly with the loads, joints and bounded rows,
    (1 + c h) M v+ = M v + h (Phi + J^T lambda), which is a kick from v / (1 + c h) with the
    masses and inertias (1 + c h) M (c, c' each body's linear and angular damping, 1/s).

    So the rows meet their targets with the velocities the bodies end with: a velocity motor
    holds its speed against its own body's damping, pushing c I w (damped after the solve,
    a wheel with c' = 20 driven at 2 rad/s ran at 2 / (1 + c' h): 1.85 rad/s at dt 1/240,
    1.50 at 1/60). A resting body feels no damping, so what holds it still carries its
    weight, and a body sliding on the ground ends at g sin(slope) / c, as before. The cost:
    one factorisation of the joints' A more in steps where a damped body has joints.
    rescaled: inv_mass and Iinv are not those ``factor`` was made with (``_retimed_kick``),
    which is then made again with them."""
    damping = _damping(world)
    if damping is None:
        if rescaled and factor is not None:
            factor = model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
        return _Kick(inv_mass, Iinv, factor, v, w, damped=False)
    c, c_spin = damping
    lin, spin = 1.0 / (1.0 + c * h), 1.0 / (1.0 + c_spin * h)
    inv_mass, Iinv = inv_mass * lin, Iinv * spin[:, None, None]
    if factor is not None:
        factor = model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
    return _Kick(inv_mass, Iinv, factor, v * lin[:, None], w * spin[:, None], damped=True)


# -- stage 3: the seed equation --------------------------------------------------------------
def seed_rhs(world, model, rows: Rows, free, v, w, opened=None):
    """The seed equation's right-hand side -(Jdot u + J M^-1 Phi + k C + d J u) (m,) of the
    joint rows: what J M^-1 J^T lambda must equal (m/s^2, rad/s^2). free: M^-1 Phi
    (``assembly.inverse_mass_times`` of the applied loads).

    The part of J u that kinematic bodies' velocities, changed by the user since the last
    step (``World._carrier_change``), open up is met within this sub-step (1/h for d): it
    is the acceleration they carry their joints with. (Stabilised as a drift, half of it
    came in the velocity projection the report leaves out: a 2 kg load on a lift set
    accelerating at 2 m/s^2 reported 21.62 N, not m (g + a) = 23.62 N.) So is the J u of
    the rows ``opened`` ((m,) bool, or None: ``_opened_rows``) that the user's velocities
    set on their bodies open (a strike: the joint's share of it is its impulse over h; it
    was reported as half of it on a free hinge, -0.2497 N s for -0.4994, and as twice it
    with a motor holding the hinge, +1.998 N s for +1.0)."""
    k, d = world.baumgarte
    J, velocity = rows.blocks, model.scatter.velocity_of
    Ju = velocity(J, v, w)
    rhs = -(rows.Jdu + velocity(J, *free) + k * rows.C + d * Ju)
    if opened is not None:
        rhs -= (world.substeps / world.dt - d) * np.where(opened, Ju, 0.0)
    change = world._carrier_change
    if change is not None:
        rhs -= (world.substeps / world.dt - d) * velocity(J, *change)
    return rhs


def _aimed_torque(model, T, T_kick):
    """The torques (N, 3) the bounded rows of a step aim with: the seed's T, but the kick's
    T_kick for the bodies without joints (``model.tumbling``), which the drift's
    torque-free flow turns by the gyroscopic torque that T_kick leaves out
    (``gyroscopic="implicit"``); so they aim at the velocities those bodies move with. (No
    joint row acts on them: the joints' right-hand side takes the same accelerations.)

    With the explicit gyroscopic torque in their aim, a thin stick (r 1 cm, 0.6 m) lying
    along a wall, spinning about its own axis at 75 rad/s and tilting at 9 rad/s, its end
    8 mm into the wall and closing at 1.7 m/s, was seen by its contact's row as leaving at
    0.7 m/s: the torque turned the tilt's velocity by h w_axial = 1.26 rad a step, which the
    flow does not (it keeps the tilt's momentum). The row pushed nothing, and the end went
    on into the wall and out of its far side (3 of 27 sticks thrown at a 5 cm wall at
    dt 1/60 went through it). Jointed bodies keep the seed's torque, with which their
    joints' rows aim in the same solve: aimed with the kick's, the whip of two spinning
    cylinders on a long rod struck by the ground (test_dynamics, seed 3) failed with a
    StepError at 0.41 s instead of holding for its 140 steps. (The contacts of free tops of
    revolution also aim at the drift's midpoint: ``top_contacts.midway_targets``.)"""
    aimed = T.copy()
    aimed[model.tumbling] = T_kick[model.tumbling]
    return aimed


def seed_multipliers(world, model, rows: Rows, factor, inv_mass, Iinv, F, T, v, w,
                     opened=None):
    """Solve -J M^-1 J^T lambda = Jdot u + J M^-1 Phi + k C + d J u for lambda (m,), N or N m,
    given the factorisation of J M^-1 J^T + cfm (``opened``: see seed_rhs)."""
    free = inverse_mass_times(inv_mass, Iinv, F, T)
    return model.pattern.factorizer.solve(factor, seed_rhs(world, model, rows, free, v, w,
                                                           opened))


def _opened_rows(rows, given, inv_mass):
    """(m,) bool, or None for none: the joint rows on a dynamic body whose velocity the user
    set since the last step (``given`` (N,) bool or None: World._velocity_set's record)."""
    if rows is None or given is None or given.shape[0] != inv_mass.shape[0]:
        return None
    set_here = given & (inv_mass > 0)
    if not set_here.any():
        return None
    opened = set_here.take(rows.a) | set_here.take(rows.b)
    return opened if opened.any() else None


def generalized_acceleration(model, rows, lam, inv_mass, Iinv, F, T):
    """M^-1 (Phi + J^T lambda): linear (N, 3) and angular (N, 3) accelerations."""
    if rows is not None:
        G = model.scatter.forces_of(rows.blocks, lam)
        F = F + G[:, :3]
        T = T + G[:, 3:]
    return inverse_mass_times(inv_mass, Iinv, F, T)
