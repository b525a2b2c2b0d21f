"""Helpers around ArticulatedView: Gauss's principle as a KKT solve, gamma_q functions
and Featherstone's FDgq simulation, joint torques as body loads, and the engine's own
maximal-coordinate accelerations (003_*) at the current state, for cross-checks."""
from __future__ import annotations

import numpy as np

from ..math3d import quat_to_matrix
from ..rows import Kinematics, evaluate_tables
from ..validation import check_positive, check_vector


# -- Gauss's least constraint -------------------------------------------------------------------
def least_constraint_accelerations(M, tau_minus_bias, J, Jdot_qd, rcond: float = 1e-12):
    """Gauss's principle: qdd = argmin 1/2 |a - qdd_free|_M^2 subject to J a + Jdot_qd = 0,
    from the KKT system

        [[M, -J^T], [J, 0]] [qdd; f] = [tau - bias; -Jdot_qd].

    Returns (qdd, f); f are the dual forces, M qdd + bias = tau + J^T f (the engine's sign:
    the forces the constraints apply). Redundant rows are allowed: then f is the
    minimum-norm one (least squares on the KKT system)."""
    M = np.atleast_2d(np.asarray(M, float))
    n = M.shape[0]
    rhs_top = check_vector("tau_minus_bias", tau_minus_bias, n)
    J = np.asarray(J, float).reshape(-1, n)
    k = J.shape[0]
    c = check_vector("Jdot_qd", Jdot_qd, k) if k else np.zeros(0)
    K = np.block([[M, -J.T], [J, np.zeros((k, k))]])
    rhs = np.concatenate([rhs_top, -c])
    if k and np.linalg.matrix_rank(J, tol=1e-10 * max(1.0, np.abs(J).max())) == k:
        sol = np.linalg.solve(K, rhs)
    else:
        sol = np.linalg.lstsq(K, rhs, rcond=rcond)[0]
    return sol[:n], sol[n:]


# -- joint torques as body loads -----------------------------------------------------------------
def apply_joint_torques(view, tau):
    """Apply generalised joint forces ``tau`` (n,) as equal and opposite loads on the two bodies
    of each tree joint (body.apply_force / apply_torque, so they act in the next step or in
    ``maximal_accelerations``). A joint's load is the wrench W on body_b at its anchor (and -W
    on body_a) of least norm with S^T W = tau_j, so its power is tau_j . qd_j: a torque
    tau axis for a hinge, a force tau axis for a slider, R_a tau for a ball, tau1 axis_a +
    tau2 axis_b for a universal joint, the force tau[:3] and torque tau[3:] (world frame) at
    the centre of a floating base (from nothing: the world frame takes no load)."""
    tau = check_vector("tau", tau, view.n)
    world = view.world
    R = quat_to_matrix(world._q[: world._n])
    for tj in view.tree:
        if tj.dof == 0:
            continue
        Sv, Sw, _ = tj.motion(R[tj.a], R[tj.b])
        S = np.vstack([Sv, Sw])
        W = S @ np.linalg.solve(S.T @ S, tau[tj.slice])
        p = world._x[tj.b] + R[tj.b] @ tj.lb
        joint = tj.joint
        if not joint.body_b.static:     # (a tree joint may point to its static root)
            joint.body_b.apply_force(W[:3], point=p)
            joint.body_b.apply_torque(W[3:])
        if joint.body_a is not None and not joint.body_a.static:
            joint.body_a.apply_force(-W[:3], point=p)
            joint.body_a.apply_torque(-W[3:])


# -- 003_*: the engine's accelerations at the current state --------------------------------------
def maximal_accelerations(world):
    """Body accelerations from the engine's seed equation at the world's current state,
    without stepping: gravity, the loads waiting in the world, the explicit gyroscopic term
    -w x I w, and the multipliers of -J M^-1 J^T lambda = Jdot u + J M^-1 Phi + k C + d Cdot
    (k, d = world.baumgarte; use World(baumgarte=(0, 0)) for the pure acceleration-level
    equation). Returns (acc_lin (nb, 3), acc_ang (nb, 3), lambda (m,)), bodies in the order
    of ``world.bodies``, lambda in the engine's row order (as ``world.last_lambda``)."""
    from .. import seed
    from ..rotation import world_inverse_inertia
    model = world._model()
    n = world._n
    x, q, v, w = (getattr(world, name)[:n] for name in ("_x", "_q", "_v", "_w"))
    R = quat_to_matrix(q)
    inv_mass = world._inv_mass[:n]
    Iinv = world_inverse_inertia(R, world._inv_inertia[:n])
    F, T, _ = seed.applied_wrench(world, model, R, v, w, damped=True)
    rows = lam = None
    if model.m:
        rows = evaluate_tables(model.tables, Kinematics(x, R, v, w))
        factor = model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
        lam = seed.seed_multipliers(world, model, rows, factor, inv_mass, Iinv, F, T, v, w)
    acc_lin, acc_ang = seed.generalized_acceleration(model, rows, lam, inv_mass, Iinv, F, T)
    return acc_lin[1:], acc_ang[1:], (np.zeros(0) if lam is None else lam)


def joint_rows(world, joint) -> np.ndarray:
    """Indices of ``joint``'s rows in the engine's row order (to pick its multipliers out of
    ``maximal_accelerations`` or ``world.last_lambda``)."""
    return np.flatnonzero(world._model().owner == joint.index)


# -- Featherstone's gamma_q and FDgq -------------------------------------------------------------
def trivial_gamma_q(view, q, qd):
    """q = y: no constraint (G = 1, gs = 0); FDgq then equals forward_dynamics."""
    q = np.asarray(q, float)
    return q.copy(), np.asarray(qd, float).copy(), np.eye(q.shape[0]), np.zeros(q.shape[0])


def constraint_gamma(independent, tstab: float = 0.1, tol: float = 1e-12,
                     max_iterations: int = 30):
    """A numeric gamma_q for the constraints of a view (its loop joints and declared
    constraints): y = q[independent]; the other coordinates solve C(q) = 0 by Newton,
    qd = G y' with A G = 0, g = G' y' from A g = -Adot_qd, and the suggested stabilisation
    gstab = 2/T (qdn - qdo) + 1/T^2 (qn - qo). The dependent coordinates must be determined by
    the constraints (A restricted to them has full column rank)."""
    independent = np.atleast_1d(np.asarray(independent, dtype=np.intp))
    T = check_positive("tstab", tstab)

    def gamma_q(view, qo, qdo):
        n = view.n
        ind = independent
        dep = np.setdiff1d(np.arange(n), ind)
        qo = np.asarray(qo, float)
        qdo = np.asarray(qdo, float)
        q = qo.copy()
        zero = np.zeros(n)
        for _ in range(max_iterations):
            with view.posed(q, zero):
                C = view.constraint_values()
                A, _ = view.constraint_rows()
                Aq = A @ np.linalg.inv(view.q_rate_matrix(q))     # dC/dq
            if np.abs(C).max(initial=0.0) <= tol:
                break
            step = np.linalg.lstsq(Aq[:, dep], C, rcond=None)[0]
            q[dep] -= step
            if np.abs(step).max(initial=0.0) <= 1e-3 * tol:
                break
        G = np.zeros((n, ind.size))
        G[ind, np.arange(ind.size)] = 1.0
        if dep.size:
            G[dep] = -np.linalg.lstsq(A[:, dep], A[:, ind], rcond=None)[0]
        qd = G @ qdo[ind]
        g = np.zeros(n)
        if dep.size:
            with view.posed(q, qd):
                _, b = view.constraint_rows()
            g[dep] = -np.linalg.lstsq(A[:, dep], b, rcond=None)[0]
        gstab = 2.0 / T * (qd - qdo) + 1.0 / T**2 * (q - qo)
        return q, qd, G, g + gstab

    return gamma_q


def simulate_gq(view, gamma_q, tau_fn, t_end: float, dt: float, q0=None, qd0=None):
    """Integrate FDgq with classical RK4 at fixed step ``dt`` from (q0, qd0) (default: the
    view's current state) to ``t_end``. ``tau_fn(t, q, qd) -> tau`` (or a constant array).
    q advances by dq/dt = view.q_rate(q, qd). Returns (times, q, qd) arrays; the world is left
    as it was."""
    t_end = check_positive("t_end", t_end)
    dt = check_positive("dt", dt)
    q = view.q if q0 is None else check_vector("q0", q0, view.n)
    qd = view.qd if qd0 is None else check_vector("qd0", qd0, view.n)
    torque = tau_fn if callable(tau_fn) else (lambda t, q, qd, c=check_vector(
        "tau_fn", tau_fn, view.n): c)

    def f(t, q, qd):
        qdd = view.forward_dynamics_gq(torque(t, q, qd), gamma_q, q, qd)
        return view.q_rate(q, qd), qdd

    steps = int(np.ceil(t_end / dt - 1e-9))
    times = np.linspace(0.0, steps * dt, steps + 1)
    Q = np.zeros((steps + 1, view.n))
    QD = np.zeros((steps + 1, view.n))
    Q[0], QD[0] = q, qd
    with view.posed():
        for i in range(steps):
            t = times[i]
            k1 = f(t, q, qd)
            k2 = f(t + dt / 2, q + dt / 2 * k1[0], qd + dt / 2 * k1[1])
            k3 = f(t + dt / 2, q + dt / 2 * k2[0], qd + dt / 2 * k2[1])
            k4 = f(t + dt, q + dt * k3[0], qd + dt * k3[1])
            q = q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            qd = qd + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
            Q[i + 1], QD[i + 1] = q, qd
    return times, Q, QD


# -- hybrid motion-force control -----------------------------------------------------------------
def whiteboard_torques(view, path_fn, push_force: float, t: float, constraint=None):
    """Feed-forward joint forces for an arm whose tip is held on a plane (a point-on-plane
    constraint of the view; default its last one): the tip follows ``path_fn(t) -> (p, pd,
    pdd)`` (world frame, in the plane; only the acceleration pdd is used, at the current
    state) while pressing on the plane with ``push_force`` N. qdd is the least-squares
    solution of [J_tip; A] qdd = [pdd - Jdot_tip qd; -Adot_qd]; tau comes from
    ``constrained_inverse_dynamics`` with the plane's lambda = push_force (the plane pushes
    back along its normal) and the other constraints' lambda of least norm."""
    planes = [c for c in view.constraints if c.label == "plane"]
    if constraint is None:
        if not planes:
            raise ValueError("the view has no point-on-plane constraint; add one with "
                             "view.add_point_on_plane")
        constraint = planes[-1]
    elif constraint not in planes:
        raise ValueError("constraint must be a point-on-plane constraint of this view")
    body = constraint.source
    _, _, pdd = path_fn(t)
    pdd = check_vector("path_fn(t)[2]", pdd, 3)
    local = constraint.tables[0].args[1][0]
    tip = body.position + body.rotation @ local
    Jt = view.point_jacobian(body, tip)
    jt = view.jacobian_dot_qd(body, tip)[:3]
    A, b = view.constraint_rows()
    lhs = np.vstack([Jt, A])
    rhs = np.concatenate([pdd - jt, -b])
    qdd = np.linalg.lstsq(lhs, rhs, rcond=None)[0]
    # lambda: least-norm split of the generalised constraint force, with the plane row fixed
    tau0 = view.constrained_inverse_dynamics(qdd, check=False)
    _, lam0 = view.constrained_forward_dynamics(tau0)
    lam = lam0.copy()
    lam[constraint.rows] = push_force
    return view.constrained_inverse_dynamics(qdd, lam=lam, check=False)
