"""The rk4 integrator: one classical Runge-Kutta sub-step of the joints' acceleration-level
equation (``rk4_substep``), and why it refuses a world with bounded rows or bodies touching
(``rk4_refusal``).

Its own module because it is the alternative to the symplectic sub-step and shares only the
seed equation (``seed``) with it; the world asks its refusal when the integrator is set.
"""
from __future__ import annotations

import numpy as np

from .contacts import detect, kinematic
from .manifold import inverse_inertia_at
from .math3d import quat_multiply, quat_to_matrix
from .reporting import StepReport
from .rows import Kinematics, evaluate_tables
from .seed import applied_wrench, generalized_acceleration, seed_multipliers


def rk4_refusal(bounded, touching) -> str:
    """Why rk4 cannot step a world with ``bounded`` rows (limits, motors, joint friction)
    or bodies ``touching``."""
    has = " and ".join(what for what, found in (("limits, motors or joint friction", bounded),
                                                 ("bodies touching", touching)) if found)
    return ("the rk4 integrator is for contact-free mechanisms without limits, motors or "
            f"joint friction, and this world has {has}")


def rk4_substep(world, model, x, q, v, w, h):
    """One classical Runge-Kutta step of the joints' acceleration-level equation. A world with
    limits, motors or friction in its joints is refused at once, one with bodies touching
    when they touch. (A contact is refused only once it touches: a speculative one, a rod's
    reach towards the ground at dt 1/20, refused the double pendulum 1.1 m above it; and a
    limit was refused only when the joint came near it, a quarter of a second in.)"""
    n = world._n
    touching = detect(world, model, x, quat_to_matrix(q), np.zeros_like(v), h,
                      kinematic(world))[0].depth >= 0.0
    bounded = world._limit_tables().plan is not None
    if bounded or touching.any():
        # (contacts come and go, so the integrator setter cannot refuse them all: the
        # message says how to go on, since every step with rk4 fails as this one)
        raise ValueError(f"{rk4_refusal(bounded, touching.any())}; use integrator="
                         "'symplectic' for this world (set world.integrator = 'symplectic', "
                         "or make it with World(integrator='symplectic'): each step with "
                         "rk4 fails as this one did, leaving the world as it was)")
    inv_mass = world._inv_mass[:n]

    def derivative(x, q, v, w):
        qn = q / np.linalg.norm(q, axis=1, keepdims=True)
        R = quat_to_matrix(qn)
        Iinv = inverse_inertia_at(world, model, R)
        F, T, _ = applied_wrench(world, model, R, v, w, damped=True)
        rows = lam = None
        if model.m:
            rows = evaluate_tables(model.tables, Kinematics(x, R, v, w))
            factor = model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
            lam = seed_multipliers(world, model, rows, factor, inv_mass, Iinv, F, T, v, w)
        acc_lin, acc_ang = generalized_acceleration(model, rows, lam, inv_mass, Iinv, F, T)
        wq = np.concatenate([np.zeros((n, 1)), w], axis=1)
        qdot = 0.5 * quat_multiply(wq, qn)
        return (v, qdot, acc_lin, acc_ang), StepReport(rows, lam, x, R)

    y = (x, q, v, w)
    k1, report = derivative(*y)
    k2, _ = derivative(*(s + 0.5 * h * d for s, d in zip(y, k1)))
    k3, _ = derivative(*(s + 0.5 * h * d for s, d in zip(y, k2)))
    k4, _ = derivative(*(s + h * d for s, d in zip(y, k3)))
    x1, q1, v1, w1 = (s + h / 6.0 * (d1 + 2 * d2 + 2 * d3 + d4)
                      for s, d1, d2, d3, d4 in zip(y, k1, k2, k3, k4))
    q1 = q1 / np.linalg.norm(q1, axis=1, keepdims=True)
    world._clock.lap("integrate")     # (its four evaluations of rows and multipliers too)
    return (x1, q1, v1, w1), report
