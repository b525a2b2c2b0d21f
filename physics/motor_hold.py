"""Velocity motors held at their speed through the step's end-of-step corrections.

A velocity motor's row meets its speed in the bounded solve at the step's start. The step then
puts the joints back together without it: SHAKE corrects the drift's positions (and the
velocities by the correction over h), and the velocities are projected onto the joints at the
end positions. Both are M-nearest for the joints alone, so they turn the driven joint too:
by O(h w^2) where the mechanism's inertia changes with its angle (centripetal loads). A
slider-crank (crank 0.1 m, rod 0.3 m, 0.5 kg piston) driven at 30 rad/s ran between 28.3 and
30.3 rad/s at dt 1/240 (20.3 to 35.3 at 1/60), its angle advancing up to 8.8 % off h w a step.

Here an unsaturated velocity motor's row is an equality row of both corrections, with the
joints eliminated by their own factorisation (the Schur complement over k motor rows, as
``feedforward.motor_feedforward``; no new factorisation):

- positions (``held_positions``): after SHAKE, quasi-Newton steps on the joints' C = 0 and
  the motors' c_end - c_start = h w, along the step's start Jacobians, the velocities changed
  by the move over h as SHAKE's own;
- velocities (``held_velocities``): after the projection onto the joints, the least change
  within their null space that makes J_m u = w.

The motor's reported effort takes both corrections' impulses (over h), and a correction that
would take it past max_force is not made (that motor stays what the solve made it: a force).
A limit pushing on a held motor's mechanism (a bounded row with a force) is held with it: its
value advancing h times the rate the solve aimed it at, then its rate 0; left out, SHAKE and the
projection took what it held from the driven joint (a 2-link arm's shoulder at 1.5 rad/s read
1.42639 in the step its elbow slammed into a limit, dt 1/60). A limit the corrections would make
pull is left out with its mechanism's motors. Not held are motors whose mechanism a contact acts
on this step (contact rows are not in the corrections, which would work against them), a motor
driving into its own joint's limit (it stalls: a force), and all when the held rows cannot be met
together (a closed loop's motor stalled against a limit elsewhere on the loop).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .feedforward import joints_schur, least_solve, velocity_motor_rows
from .limits import UPPER, plan_rows, wrap_near
from .math3d import quat_to_matrix, rotate_quat
from .assembly import Scatter
from .rows import Kinematics, Rows, evaluate_tables
from .placement import SHAKE_TRUST
from .sleeping import labels_reached

# quasi-Newton steps of the positions' hold (each contracts the error by about the turn the
# bodies make within h, as SHAKE's own)
HOLD_ITERATIONS = 30
# a motor whose solved force is within this share of its max_force is saturated: a force
SATURATED = 1e-6
# share of the held rows' misses that their joint solve may leave unmet (least_solve drops
# singular values below feedforward.SINGULAR: a closed loop's redundant rows)
MET_SHARE = 1e-4


class Held(NamedTuple):
    """The rows held this step (k: the velocity motors, then the limits pushing on their
    mechanisms): their rows in the bounded block (k,), their rows in the coordinate plan
    (k,), the advance of their row value over the step (k,) over h (rad/s or m/s along the
    row: a motor's speed, a limit's solved rate), their coordinates at the step's start (k,),
    which are angles (k,) bool, the bounds of their multipliers (k,) each (N m or N), the rate
    each is held at after the velocity projection (k,) (a motor's speed; 0 for a limit),
    which are limits (k,) bool, and the mechanism (``model.mechanism``) of each (k,)."""
    block_rows: np.ndarray
    plan_rows: np.ndarray
    target: np.ndarray
    c0: np.ndarray
    angular: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    speed: np.ndarray
    limit: np.ndarray
    label: np.ndarray


def _reached_by(reached, label, dynamic, rows, at):
    """(at.size,) bool: whether a dynamic body of each of the rows ``at`` (indices into
    ``rows``) is in a mechanism that ``reached`` (labels_reached) marks."""
    a, b = rows.a.take(at), rows.b.take(at)
    return ((dynamic.take(b) & reached.take(label.take(b)))
            | (dynamic.take(a) & reached.take(label.take(a))))


def held_motors(world, model, uni, lam_b) -> Held | None:
    """The rows to hold (Held), or None: the velocity motors unsaturated by the bounded
    solve's multipliers lam_b on mechanisms (``model.mechanism``) that no contact row acts
    on, and the limit rows with a force on those mechanisms (held at their solved rate, then
    at rest: as SHAKE would otherwise turn the driven joint by what it takes from the limit).
    Nothing is looked at without velocity motors."""
    if uni is None or lam_b is None or uni.limit_found is None:
        return None
    motors = velocity_motor_rows(uni)
    if motors.size == 0:
        return None
    block = uni.block
    lo, hi = block.lo.take(motors), block.hi.take(motors)
    lam = lam_b.take(motors)
    free = (lam < hi - SATURATED * np.abs(hi)) & (lam > lo + SATURATED * np.abs(lo))
    rows = block.rows
    first = uni.first_limit_row
    plan = uni.limit_plan
    n = world._n
    dynamic = world._inv_mass[:n] > 0
    label = model.mechanism
    if first and free.any():
        # contacts are not rows of the corrections: their mechanisms' motors stay forces
        acting = np.concatenate([rows.a[:first], rows.b[:first]])
        touched = labels_reached(label, acting[dynamic.take(acting)])
        free &= ~_reached_by(touched, label, dynamic, rows, motors)
    pushing = first + np.flatnonzero((plan.group.take(uni.limit_rows) <= UPPER)
                                     & (lam_b[first:] != 0.0))
    if pushing.size:
        # a motor driving into its own joint's limit stalls there: a force, not held
        entry = plan.entry.take(uni.limit_rows.take(motors - first))
        free &= ~np.isin(entry, plan.entry.take(uni.limit_rows.take(pushing - first)))
    if not free.any():
        return None
    motors = motors[free]
    if pushing.size:
        ends = np.concatenate([rows.a.take(motors), rows.b.take(motors)])
        driven = labels_reached(label, ends[dynamic.take(ends)])
        pushing = pushing[_reached_by(driven, label, dynamic, rows, pushing)]
    held = np.concatenate([motors, pushing])
    in_plan = uni.limit_rows.take(held - first)
    limit = np.arange(held.size) >= motors.size
    body = np.where(dynamic.take(rows.b.take(held)), rows.b.take(held), rows.a.take(held))
    target = block.target.take(held)
    if block.push is not None:
        # (the solve aims at the target without the push the bodies do not keep, which
        # manifold._pushed moves them by after)
        target = target - block.push.take(held)
    return Held(held, in_plan, target, uni.limit_found.c.take(in_plan),
                ~plan.linear.take(in_plan), block.lo.take(held), block.hi.take(held),
                np.where(limit, 0.0, target), limit, label.take(body))


def _motor_rows(world, held, x, R, v, w):
    """The held motors' rows (Rows, k) at positions x and rotations R, and their coordinates
    (k,)."""
    tables = world._limit_tables()
    plan = tables.plan
    c, J, _ = plan_rows(tables, Kinematics(x, R, v, w, velocity_terms=False))
    p = held.plan_rows
    J = J.take(p, axis=0)
    return Rows(plan.a.take(p), plan.b.take(p), np.zeros(p.size), J[:, :6], J[:, 6:],
                np.zeros(p.size), side_blocks=J), c.take(p)


def _advance_miss(world, held, x, R, v, w, h):
    """How far (k,) each held motor's coordinate is from c_start + h w at x, R (rad or m):
    an angle's difference taken nearest to h w, so that a wrapped or re-referenced angle
    counts its true turn."""
    _, c = _motor_rows(world, held, x, R, v, w)
    sign = world._limit_tables().plan.sign.take(held.plan_rows)
    advance = sign * (c - held.c0)
    aim = h * held.target
    advance = np.where(held.angular, wrap_near(advance, aim), advance)
    return advance - aim


def held_positions(world, model, rows, factor, uni, held, x1, q1, v, w, inv_mass, Iinv, h,
                   lam_b, kick):
    """SHAKE's result x1 (N, 3), q1 (N, 4), v, w (N, 3) moved so that each held motor's
    coordinate advanced h w over the step, with the joints still met: quasi-Newton steps along
    the step's start Jacobians (``rows``: the joints', the motors' from ``uni``) in the
    metric inv_mass, Iinv whose joint matrix ``factor`` factorises, the velocities changed by
    the move over h, as SHAKE changes them. Returns (x, q, v, w, held, the motors' added
    multipliers (k,), N m or N), the held motors less those the move would take past their
    max force; (x1, q1, v, w, None, None) where it does not converge. kick: the time (s) the
    step's multipliers are forces over (h, but (last + h) / 2 in the first step after a
    change of step size: kicks._retimed_kick)."""
    n = world._n
    # the held rows' Schur complement, made once: rows dropped below are left out of it (made
    # again after each drop, it doubled a step of a chain whose 25 hinges were all motored)
    X_all, S_all, A_all = joints_schur(model, rows, uni.block.rows.at(held.block_rows),
                                       inv_mass, Iinv, factor, n)
    S_all[np.diag_indices_from(S_all)] += world.cfm
    kept = np.arange(held.block_rows.size)
    while held is not None:
        start = uni.block.rows.at(held.block_rows)
        motors = Scatter(start.a, start.b, n)
        X, S, A_em = ((X_all, S_all, A_all) if kept.size == S_all.shape[0] else
                      (X_all[:, kept], S_all[np.ix_(kept, kept)], A_all[:, kept]))
        x, q = x1, q1
        lin = ang = 0.0
        moved = np.zeros(held.block_rows.size)
        # SHAKE left the joints met: the first step moves the motors alone (their misses
        # measured), and each after it the joints alone (their C measured), the motors'
        # coordinates kept where the last step put them: its move (~1e-4 rad) meets them to
        # its second order (the misses measured after it were ~1e-14 rad). Measuring both
        # every step took 2.9 evaluations of the motors' coordinates a step on a four-bar at
        # 6 rad/s, dt 1/240, for 1 now.
        miss = _advance_miss(world, held, x, quat_to_matrix(q), v, w, h)
        err = np.abs(miss).max()
        if err <= world.position_tolerance:            # (the velocities may still miss)
            return x1, q1, v, w, held, moved
        C = None
        for _ in range(HOLD_ITERATIONS):
            # [A_ee A_em; A_me A_mm] (dl_e, dl_m) = -(C, miss), the joints eliminated
            if C is None:
                dl_m = least_solve(S, -miss)
                if not _met(S, dl_m, -miss):
                    return x1, q1, v, w, None, None
                dl_e = -(X @ dl_m)
            else:
                y = model.pattern.factorizer.solve(factor, C)
                dl_m = least_solve(S, A_em.T @ y)
                dl_e = -y - X @ dl_m
            dv_e, dw_e = model.scatter.response(rows.blocks, dl_e, inv_mass, Iinv)
            dv_m, dw_m = motors.response(start.blocks, dl_m, inv_mass, Iinv)
            dx, dtheta = dv_e + dv_m, dw_e + dw_m
            x, q = x + dx, rotate_quat(q, dtheta)
            lin, ang, moved = lin + dx, ang + dtheta, moved + dl_m
            if err <= SHAKE_TRUST * world.position_tolerance:
                # (as SHAKE: one more step from this close contracts the error by about the
                # turn within h; taken without measuring it again)
                err = 0.0
                break
            kin = Kinematics(x, quat_to_matrix(q), v, w, velocity_terms=False)
            C = evaluate_tables(model.tables, kin, c_only=True)
            last, err = err, np.abs(C).max(initial=0.0)
            if err <= world.position_tolerance or not err < last:
                break
        if not err <= world.projection_tolerance:
            return x1, q1, v, w, None, None
        added = moved / (h * kick)     # (the move's impulse / h)
        force = lam_b.take(held.block_rows) + added
        past = (force > held.hi) | (force < held.lo)
        if not past.any():
            return x, q, v + lin / h, w + ang / h, held, added
        keep = ~_dropped(held, past)
        kept = kept[keep]
        held = Held(*(field[keep] for field in held)) if keep.any() else None
    return x1, q1, v, w, None, None


def held_velocities(world, model, held, x, R, v, w, lam_b, h):
    """Velocities v, w (N, 3), projected onto the joints at x, R by the step's last
    project_velocities (``world._start_cache``: its rows, factorisation and metric), changed
    within the joints' null space so that each held motor's rate is its speed: u + M^-1
    (J_m^T - J_e^T A_ee^-1 A_em) mu with S mu = w - J_m u. ``lam_b`` (k,): the held motors'
    multipliers so far (N m or N), which mu / h must keep within max force (a motor it would
    take past is left out; h: the time the step's multipliers are forces over, the step's,
    or (last + h) / 2 in the first after a change of step size: kicks._retimed_kick).
    Returns (v, w, the motors' added multipliers (k,) or None)."""
    cache = world._start_cache
    n = world._n
    inv_mass = world._inv_mass[:n]
    motors, _ = _motor_rows(world, held, x, R, v, w)
    keep = np.ones(held.block_rows.size, dtype=bool)
    X, S, A_em = joints_schur(model, cache.rows, motors, inv_mass, cache.metric, cache.factor, n)
    S[np.diag_indices_from(S)] += world.cfm
    scatter = Scatter(motors.a, motors.b, n)
    miss = held.speed - scatter.velocity_of(motors.blocks, v, w)
    while keep.any():
        on = np.flatnonzero(keep)
        mu = np.zeros(keep.size)
        mu[on] = least_solve(S[np.ix_(on, on)], miss[on])
        if not _met(S[np.ix_(on, on)], mu[on], miss[on]):
            return v, w, None
        force = lam_b + mu / h
        past = keep & ((force > held.hi) | (force < held.lo))
        if not past.any():
            break
        keep &= ~_dropped(held, past)
    else:
        return v, w, None
    dv, dw = scatter.response(motors.blocks, mu, inv_mass, cache.metric)
    dv_e, dw_e = model.scatter.response(cache.rows.blocks, -(X @ mu), inv_mass, cache.metric)
    return v + dv + dv_e, w + dw + dw_e, mu / h


def _met(S, x, r):
    """Whether S x = r (k,) holds within MET_SHARE of r: the held rows can all be met (a motor
    and a limit on one coordinate of a closed loop, the motor stalled against the limit,
    cannot, and a least-squares compromise would move the mechanism both ways)."""
    return np.abs(S @ x - r).max(initial=0.0) <= MET_SHARE * np.abs(r).max(initial=0.0)


def _dropped(held, past):
    """(k,) bool: the held rows to leave out when the rows ``past`` (k,) bool would be taken
    past their bounds: those, a limit's whole mechanism with it (held without its limit,
    a motor would turn the limited joint as SHAKE did), and limits on mechanisms left with
    no motor."""
    drop = past | np.isin(held.label, held.label[past & held.limit])
    driven = held.label[~drop & ~held.limit]
    return drop | (held.limit & ~np.isin(held.label, driven))
