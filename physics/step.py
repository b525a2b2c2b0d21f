"""The step pipeline: plain functions over the world's arrays.

One symplectic sub-step of size h:
  1. applied_wrench   gravity, user loads, gyroscopic torque (implicit midpoint, body frame)
  2. rows             every joint primitive writes C, Ja, Jb, Jdot u (one call per kind)
  3. seed_multipliers A = J M^-1 J^T + cfm, rhs from the seed equation of 003_*, solve
  4. integrate        u+ = u + h M^-1 (Phi + J^T lambda); x+ = x + h v+; q+ = exp(h w+ / 2) q
  5. project          one Newton step of positions onto C = 0, then velocities onto J u = 0
  6. report           lambda and the rows it multiplies are kept for joint forces

"rk4" instead integrates udot = M^-1 (Phi + J^T lambda(x, u)) with classical Runge-Kutta.
No stage loops over bodies or joints in Python.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from .assembly import Pattern, Scatter, apply_inverse_mass
from .linsolve import SingularSystemError
from .math3d import cross, quat_multiply, quat_to_matrix, rotate_quat
from .rows import Kinematics, PrimitiveTable, Rows, build_tables, evaluate_tables


class StepError(FloatingPointError):
    """A step failed (non-finite result or singular constraints); the world is unchanged."""


@dataclass
class Model:
    """What a step needs that only changes with the topology."""
    tables: list[PrimitiveTable]
    a: np.ndarray            # (m,) body row of each constraint row's side a
    b: np.ndarray
    owner: np.ndarray        # (m,) joint index of each row
    pattern: Pattern | None
    scatter: Scatter | None
    dynamic: np.ndarray      # (d,) rows of bodies with finite mass
    joint_b: np.ndarray      # (nj,) body row of each joint's body_b
    joint_lb: np.ndarray     # (nj, 3) anchor on body_b, body_b frame

    @property
    def m(self) -> int:
        return self.a.shape[0]


def compile_model(world) -> Model:
    """Flatten the joints into primitive tables and cache the sparsity of A."""
    instances = defaultdict(list)
    for index, joint in enumerate(world._joints):
        for kind, inst in joint._instances(index):
            instances[kind].append(inst)
    tables = build_tables(instances)
    n = world._n
    inv_mass = world._inv_mass[:n]
    a = np.concatenate([np.repeat(t.a, t.ROWS_PER_INSTANCE[t.kind]) for t in tables] or [[]])
    b = np.concatenate([np.repeat(t.b, t.ROWS_PER_INSTANCE[t.kind]) for t in tables] or [[]])
    owner = np.concatenate([t.row_owner for t in tables] or [[]])
    a, b, owner = a.astype(np.intp), b.astype(np.intp), owner.astype(np.intp)
    pattern = Pattern(a, b, inv_mass > 0, n) if a.size else None
    scatter = Scatter(a, b, n) if a.size else None
    joints = world._joints
    return Model(tables, a, b, owner, pattern, scatter, np.flatnonzero(inv_mass > 0),
                 np.array([j.body_b.row for j in joints], dtype=np.intp),
                 np.array([j._lb for j in joints]).reshape(-1, 3))


# -- stage 1: applied wrench ---------------------------------------------------------------
def world_inverse_inertia(R: np.ndarray, inv_inertia_body: np.ndarray) -> np.ndarray:
    """R I^-1 R^T per body (N, 3, 3); zero for static bodies."""
    return R @ inv_inertia_body @ R.transpose(0, 2, 1)


def gyroscopic_torque_implicit(R, inertia, w, h, dyn, iterations=3):
    """Torque (N, 3) that reproduces the torque-free Euler equations over h by the implicit
    midpoint rule in the body frame: I (w1 - w0) / h + wm x I wm = 0, wm = (w0 + w1) / 2.

    The rule keeps both w.I w and |I w| exactly, so thin bodies (rods, where the explicit
    -w x I w term is unstable) spin without gaining energy.
    """
    out = np.zeros_like(w)
    if dyn.size == 0:
        return out
    Rd, Id = R[dyn], inertia[dyn]
    w0 = np.einsum("nji,nj->ni", Rd, w[dyn])
    w1 = w0.copy()
    for _ in range(iterations):
        wm = 0.5 * (w0 + w1)
        Iwm = np.einsum("nij,nj->ni", Id, wm)
        residual = np.einsum("nij,nj->ni", Id, w1 - w0) + h * cross(wm, Iwm)
        jac = Id + 0.5 * h * (_skew(wm) @ Id - _skew(Iwm))
        w1 = w1 - np.linalg.solve(jac, residual[..., None])[..., 0]
    out[dyn] = np.einsum("nij,nj->ni", Rd, np.einsum("nij,nj->ni", Id, w1 - w0)) / h
    return out


def gyroscopic_torque_explicit(R, inertia, w, dyn):
    """-w x (I_world w) (N, 3), the seed's term."""
    out = np.zeros_like(w)
    Rd = R[dyn]
    Iw = np.einsum("nij,njk,nlk,nl->ni", Rd, inertia[dyn], Rd, w[dyn])
    out[dyn] = -cross(w[dyn], Iw)
    return out


def _skew(r):
    z = np.zeros(r.shape[0])
    return np.stack([np.stack([z, -r[:, 2], r[:, 1]], 1), np.stack([r[:, 2], z, -r[:, 0]], 1),
                     np.stack([-r[:, 1], r[:, 0], z], 1)], 1)


def applied_wrench(world, model, R, w, h, implicit: bool):
    """External force (N, 3) and torque (N, 3), world frame: gravity, user loads, gyroscopic."""
    n = world._n
    mass = world._mass[:n]
    F = world._force[:n] + np.where(world._inv_mass[:n, None] > 0, mass[:, None], 0.0) * world.gravity
    inertia = world._inertia[:n]
    if implicit:
        T = world._torque[:n] + gyroscopic_torque_implicit(R, inertia, w, h, model.dynamic)
    else:
        T = world._torque[:n] + gyroscopic_torque_explicit(R, inertia, w, model.dynamic)
    return F, T


# -- stage 3: the seed equation --------------------------------------------------------------
def seed_multipliers(world, model, rows: Rows, factor, inv_mass, Iinv, F, T, v, w):
    """Solve -J M^-1 J^T lambda = Jdot u + J M^-1 Phi + k C + d J u for lambda (m,), N or N m,
    given the factorisation of J M^-1 J^T + cfm."""
    k, d = world.baumgarte
    free_acc_lin = inv_mass[:, None] * F
    free_acc_ang = np.einsum("nij,nj->ni", Iinv, T)
    rhs = -(rows.Jdu + rows.velocity(free_acc_lin, free_acc_ang) + k * rows.C
            + d * rows.velocity(v, w))
    return model.pattern.factorizer.solve(factor, rhs)


def generalized_acceleration(model, rows, lam, inv_mass, Iinv, F, T):
    """M^-1 (Phi + J^T lambda): linear (N, 3) and angular (N, 3) accelerations."""
    if rows is not None:
        G = model.scatter.forces(rows.Ja, rows.Jb, lam)
        F = F + G[:, :3]
        T = T + G[:, 3:]
    return inv_mass[:, None] * F, np.einsum("nij,nj->ni", Iinv, T)


# -- stage 5: post-stabilisation -------------------------------------------------------------
def _factor_at(world, model, rows, inv_mass, Iinv):
    fac = model.pattern.factorizer
    return fac.factor(model.pattern.values(rows.Ja, rows.Jb, inv_mass, Iinv, world.cfm))


def _advance_positions(x, q, v, w, h):
    """x + h v and exp(h w / 2) q: positions after a sub-step with the new velocities."""
    return x + h * v, rotate_quat(q, h * w)


def correct_to_manifold(world, model, rows, factor, x, q, v, w, acc_lin, acc_ang, inv_mass,
                        Iinv, h):
    """SHAKE: adjust lambda so that the positions reached with the new velocities satisfy
    C = 0. Quasi-Newton on C(x+(lambda)) with dC/dlambda ~ h^2 J M^-1 J^T, reusing the
    factorisation of the seed solve. Where no such lambda exists (a link turning by more than
    about a radian in one step) it stops at its best iterate. Returns (largest |C|, positions,
    velocities) of that iterate."""
    fac = model.pattern.factorizer
    v1, w1 = v + 0.5 * h * acc_lin, w + 0.5 * h * acc_ang
    best = None
    predicted = None
    for _ in range(world.shake_iterations):
        x1, q1 = _advance_positions(x, q, v1, w1, h)
        C = evaluate_tables(model.tables, Kinematics(x1, quat_to_matrix(q1), v1, w1), c_only=True)
        err = np.max(np.abs(C))
        predicted = err if predicted is None else predicted
        if best is None and not np.isfinite(err):
            best = (err, x1, q1, v1, w1)
        if not np.isfinite(err) or (best is not None and err >= best[0]):
            break
        best = (err, x1, q1, v1, w1)
        if err <= world.position_tolerance:
            break
        step = -fac.solve(factor, C) / (0.5 * h * h)
        d_lin, d_ang = generalized_acceleration(model, rows, step, inv_mass, Iinv, 0.0, 0.0)
        v1, w1 = v1 + 0.5 * h * d_lin, w1 + 0.5 * h * d_ang
    return (predicted,) + best


def project_positions(world, model, x, q, v, w):
    """Newton projection of positions onto C = 0 along J M^-1 J^T at the current iterate
    (the M-closest point on the constraint manifold; Cline and Pai's post-stabilisation).
    Stops when the error stops falling; returns (largest |C|, x, q)."""
    n = world._n
    inv_mass = world._inv_mass[:n]
    best = (np.inf, x, q)
    for _ in range(world.position_iterations):
        R = quat_to_matrix(q)
        rows = evaluate_tables(model.tables, Kinematics(x, R, v, w))
        err = np.max(np.abs(rows.C))
        if not err < best[0]:
            break
        best = (err, x, q)
        if err <= world.position_tolerance:
            break
        Iinv = world_inverse_inertia(R, world._inv_inertia[:n])
        factor = _factor_at(world, model, rows, inv_mass, Iinv)
        mu = model.pattern.factorizer.solve(factor, rows.C)
        dx, dtheta = generalized_acceleration(model, rows, -mu, inv_mass, Iinv, 0.0, 0.0)
        x, q = x + dx, rotate_quat(q, dtheta)
    return best


def project_velocities(world, model, x, q, v, w):
    """RATTLE's second half: the M-orthogonal projection of u onto J(x) u = 0 (removes only
    the velocity that violates the joints, so it never adds kinetic energy)."""
    n = world._n
    inv_mass = world._inv_mass[:n]
    R = quat_to_matrix(q)
    Iinv = world_inverse_inertia(R, world._inv_inertia[:n])
    rows = evaluate_tables(model.tables, Kinematics(x, R, v, w))
    factor = _factor_at(world, model, rows, inv_mass, Iinv)
    nu = model.pattern.factorizer.solve(factor, rows.velocity(v, w))
    dv, dw = generalized_acceleration(model, rows, -nu, inv_mass, Iinv, 0.0, 0.0)
    return v + dv, w + dw


def carry_with_bodies(R0, R1, vectors):
    """World vectors (N, 3) that are fixed in each body, moved from orientation R0 to R1."""
    return np.einsum("nij,nkj,nk->ni", R1, R0, vectors)


# -- one sub-step ----------------------------------------------------------------------------
def symplectic_substep(world, model, x, q, v, w, h, depth=0):
    """One sub-step of size h in velocity-Verlet (RATTLE) form: half kick with the seed's
    lambda corrected so the new positions meet the joints (SHAKE), drift, half kick, then the
    velocities projected onto the joints. Angular velocity kicks are body-fixed (they turn with
    the body over the drift), which keeps the implicit gyroscopic step exact for free bodies.
    When the joints cannot be met, positions are projected; if even that fails the step is split
    in two, up to ``world.max_split_depth`` times."""
    n = world._n
    inv_mass = world._inv_mass[:n]
    R = quat_to_matrix(q)
    Iinv = world_inverse_inertia(R, world._inv_inertia[:n])
    F, T = applied_wrench(world, model, R, w, h, implicit=world.gyroscopic == "implicit")
    rows = lam = None
    if model.m:
        rows = evaluate_tables(model.tables, Kinematics(x, R, v, w))
        factor = _factor_at(world, model, rows, inv_mass, Iinv)
        lam = seed_multipliers(world, model, rows, factor, inv_mass, Iinv, F, T, v, w)
    acc_lin, acc_ang = generalized_acceleration(model, rows, lam, inv_mass, Iinv, F, T)
    stabilize = model.m and world.post_stabilization
    if stabilize:
        _, err, x1, q1, v_half, w_half = correct_to_manifold(
            world, model, rows, factor, x, q, v, w, acc_lin, acc_ang, inv_mass, Iinv, h)
        if err > world.position_tolerance and np.isfinite(err):
            world.stats["projections"] += 1
            err, x1, q1 = project_positions(world, model, x1, q1, v_half, w_half)
        if not err <= world.projection_tolerance and depth < world.max_split_depth:
            world.stats["splits"] += 1
            half, _ = symplectic_substep(world, model, x, q, v, w, 0.5 * h, depth + 1)
            return symplectic_substep(world, model, *half, 0.5 * h, depth + 1)
        # second half kick with the applied wrench only; the projection supplies the rest
        acc_lin, acc_ang = generalized_acceleration(model, None, None, inv_mass, Iinv, F, T)
    else:
        v_half, w_half = v + 0.5 * h * acc_lin, w + 0.5 * h * acc_ang
        x1, q1 = _advance_positions(x, q, v_half, w_half, h)
    R1 = quat_to_matrix(q1)
    v1 = v_half + 0.5 * h * acc_lin
    w1 = carry_with_bodies(R, R1, w_half + 0.5 * h * acc_ang)
    if stabilize:
        v1, w1 = project_velocities(world, model, x1, q1, v1, w1)
    return (x1, q1, v1, w1), (rows, lam, x, R)


def rk4_substep(world, model, x, q, v, w, h):
    n = world._n
    inv_mass = world._inv_mass[:n]

    def derivative(x, q, v, w):
        qn = q / np.linalg.norm(q, axis=1, keepdims=True)
        R = quat_to_matrix(qn)
        Iinv = world_inverse_inertia(R, world._inv_inertia[:n])
        F, T = applied_wrench(world, model, R, w, h, implicit=False)
        rows = lam = None
        if model.m:
            rows = evaluate_tables(model.tables, Kinematics(x, R, v, w))
            factor = _factor_at(world, model, rows, inv_mass, Iinv)
            lam = seed_multipliers(world, model, rows, factor, inv_mass, Iinv, F, T, v, w)
        acc_lin, acc_ang = generalized_acceleration(model, rows, lam, inv_mass, Iinv, F, T)
        wq = np.concatenate([np.zeros((n, 1)), w], axis=1)
        qdot = 0.5 * quat_multiply(wq, qn)
        return (v, qdot, acc_lin, acc_ang), (rows, lam, x, R)

    y = (x, q, v, w)
    k1, report = derivative(*y)
    k2, _ = derivative(*(s + 0.5 * h * d for s, d in zip(y, k1)))
    k3, _ = derivative(*(s + 0.5 * h * d for s, d in zip(y, k2)))
    k4, _ = derivative(*(s + h * d for s, d in zip(y, k3)))
    x1, q1, v1, w1 = (s + h / 6.0 * (d1 + 2 * d2 + 2 * d3 + d4)
                      for s, d1, d2, d3, d4 in zip(y, k1, k2, k3, k4))
    q1 = q1 / np.linalg.norm(q1, axis=1, keepdims=True)
    return (x1, q1, v1, w1), report


SUBSTEPS = {"symplectic": symplectic_substep, "rk4": rk4_substep}


def advance(world):
    """One step of world.dt: sub-steps, then a finiteness check, then commit."""
    model = world._model()
    n = world._n
    h = world.dt / world.substeps
    state = tuple(world._view(name) for name in ("_x", "_q", "_v", "_w"))
    substep = SUBSTEPS[world.integrator]
    try:
        with np.errstate(all=world._errstate):
            for _ in range(world.substeps):
                state, report = substep(world, model, *state, h)
    except (SingularSystemError, np.linalg.LinAlgError) as exc:
        raise StepError(f"step at t={world.time:.6g} s failed: {exc}; the world is unchanged "
                        "(check for conflicting joints or bodies of wildly different mass)") from None
    if not all(np.isfinite(s).all() for s in state):
        raise StepError(f"step at t={world.time:.6g} s produced NaN or infinity; the world is "
                        "unchanged (forces too large for dt, or an unstable configuration)")
    for name, value in zip(("_x", "_q", "_v", "_w"), state):
        getattr(world, name)[:n] = value
    world._force[:n] = 0.0
    world._torque[:n] = 0.0
    world._steps += 1
    world._state_changed()
    world._report = report
    world.last_lambda = report[1] if report[1] is not None else np.zeros(0)


def joint_wrenches(world) -> np.ndarray:
    """(nj, 6) force and torque about the anchor on body_b, world frame, from the last step."""
    model = world._model()
    nj = len(world._joints)
    out = np.zeros((nj, 6))
    if world._report is None or world._report[0] is None or nj == 0:
        return out
    rows, lam, x, R = world._report
    np.add.at(out, model.owner, rows.Jb * lam[:, None])
    rb = np.einsum("nij,nj->ni", R[model.joint_b], model.joint_lb)
    out[:, 3:] -= np.cross(rb, out[:, :3])
    return out
