"""Bodies the user placed (``position``, ``orientation``) where their joints do not allow are
moved onto the joints, and onto the limits of the mechanisms they were placed in, at the
start of the next step: Newton's method on C = 0 along J M^-1 J^T, near the nearest poses
the joints and limits allow in the mass metric. Positions in m, rotations as (N, 4)
quaternions or (N, 3, 3) matrices, world frame."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .assembly import Pattern, Scatter
from .errors import StepError
from .limits import ANGULAR_LIMIT_MARGIN, SETTLED_TURN, UPPER, plan_rows
from scipy.spatial.transform import Rotation

from .math3d import cross, einsum, quat_to_matrix, rotate_quat
from .rotation import body_inverse_inertia, world_inverse_inertia
from .rows import Kinematics, Rows, evaluate_tables


def newton_move(world, model, R, rows, inv_mass, pattern=None, scatter=None):
    """The move (dx, dtheta) (N, 3) each of Newton's step on C = 0 along J M^-1 J^T from the
    positions whose rotations R (N, 3, 3) and rows (C and J) are given: the model's joint
    rows, or other rows with their ``pattern`` and ``scatter``."""
    pattern = model.pattern if pattern is None else pattern
    scatter = model.scatter if scatter is None else scatter
    Iinv = world_inverse_inertia(R, body_inverse_inertia(world, model))
    factor = pattern.factor(rows, inv_mass, Iinv, world.cfm)
    mu = pattern.factorizer.solve(factor, rows.C)
    return scatter.response(rows.blocks, -mu, inv_mass, Iinv)


def bordered_newton_move(world, model, R, rows, extra, inv_mass):
    """newton_move on the model's joint rows ``rows`` and a few ``extra`` rows (k,) together
    (C and J of both at the rotations R (N, 3, 3)): the move (dx, dtheta) (N, 3) each that
    takes both to zero to first order, M-nearest. The joints' own factorisation of A_EE =
    J_E M^-1 J_E^T + cfm (their fixed pattern) with the extra rows bordering it: their k
    columns W_L = M^-1 J_L^T dense, X = A_EE^-1 A_EL (one solve of k + 1 columns), and the
    k x k Schur complement S = A_LL + cfm - A_EL^T X, so
        mu_L = S^-1 (C_L - A_EL^T A_EE^-1 C_E),  mu_E = A_EE^-1 C_E - X mu_L,
    the same Newton step as one factorisation of the whole matrix to rounding. (A pattern
    of the joints with each new set of extra rows was built for that: a 10-ragdoll pile's
    limit holds, 541-544 rows, ~0.9 ms a pattern, five in the bench's 24 landing steps,
    68 distinct sets in 720 steps, none met twice.)"""
    n = world._n
    Iinv = world_inverse_inertia(R, body_inverse_inertia(world, model))
    fac = model.pattern.factorizer
    factor = model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
    k = extra.count
    # J_L (k, N, 6) dense (a limit row's two sides are two bodies; add.at keeps one body
    # twice right) and W_L^T = J_L M^-1 (k, 6N)
    JL = np.zeros((k, n, 6))
    at = np.arange(k)
    np.add.at(JL, (at, extra.a), extra.Ja)
    np.add.at(JL, (at, extra.b), extra.Jb)
    WLt = np.empty_like(JL)
    WLt[:, :, :3] = inv_mass[None, :, None] * JL[:, :, :3]
    WLt[:, :, 3:] = einsum("nij,knj->kni", Iinv, JL[:, :, 3:])
    WLt = WLt.reshape(k, 6 * n)
    A_EL = model.scatter.times_columns(rows.blocks, np.ascontiguousarray(WLt.T))    # (m, k)
    solved = fac.solve(factor, np.concatenate([rows.C[:, None], A_EL], axis=1))
    y, X = solved[:, 0], solved[:, 1:]
    S = JL.reshape(k, 6 * n) @ WLt.T - A_EL.T @ X
    S[at, at] += world.cfm
    mu_L = np.linalg.solve(S, extra.C - A_EL.T @ y)
    mu_E = y - X @ mu_L
    dx, dtheta = model.scatter.response(rows.blocks, -mu_E, inv_mass, Iinv)
    moved = (WLt.T @ -mu_L).reshape(n, 6)
    return dx + moved[:, :3], dtheta + moved[:, 3:]


# A quasi-Newton correction along the step's start Jacobians (SHAKE's, the motors' hold)
# within this many position tolerances of its target is one step from meeting it: that step
# contracts the error by about the turn within h (~0.01), so it is taken without measuring
SHAKE_TRUST = 10.0

# Newton steps (each halved up to PLACING_HALVINGS times until it lowers the joints' error)
# that put bodies placed off their joints back on them
PLACING_STEPS = 300
PLACING_HALVINGS = 12


class Alignments(NamedTuple):
    """The axes and frames that joints' perpendicularity rows hold (``Joint._alignment``), as
    body-local unit vectors: axis pairs u_a (fixed in body a) along v_b (in b), and frame
    pairs (two such pairs that lock a relative orientation). The rows meet other poses too:
    an axis half a turn round, a frame turned a third of a turn about its diagonal or half a
    turn about an axis. The placement turns bodies placed far off these first (``aligned``),
    so that its Newton steps start near the pose the joint was made in."""
    axis_a: np.ndarray          # (k,) body rows
    axis_b: np.ndarray
    u: np.ndarray               # (k, 3) on a
    v: np.ndarray               # (k, 3) on b
    frame_a: np.ndarray         # (f,) body rows
    frame_b: np.ndarray
    frame_u: np.ndarray         # (f, 3, 2) on a: its x and y
    frame_v: np.ndarray         # (f, 3, 2) on b

    @staticmethod
    def of(joints) -> "Alignments | None":
        """Those of ``joints`` ((index, joint) pairs), or None when none holds any."""
        held = [(joint._rows_a, joint.body_b.row, *joint._alignment()) for _, joint in joints
                if joint._aligned is not None]
        if not held:
            return None
        axes = [(a, b, *vectors) for a, b, kind, vectors in held if kind == "axis"]
        frames = [(a, b, *vectors) for a, b, kind, vectors in held if kind == "frame"]
        def rows(pairs, side):
            return np.array([p[side] for p in pairs], dtype=np.intp)
        def frame(pairs, x, y):         # (f, 3, 2): the x and y of one side, as columns
            return np.array([np.stack([p[x], p[y]], axis=1) for p in pairs]).reshape(-1, 3, 2)
        return Alignments(rows(axes, 0), rows(axes, 1),
                          np.array([p[2] for p in axes]).reshape(-1, 3),
                          np.array([p[3] for p in axes]).reshape(-1, 3),
                          rows(frames, 0), rows(frames, 1), frame(frames, 2, 4),
                          frame(frames, 3, 5))

    def errors(self, R):
        """The turns (rad) (k,) and (f,) that would bring each pair onto its alignment, and
        rows (Rows) whose C = 0 to first order is that turn of b relative to a: at
        rotations R (N, 3, 3). An axis pair: a row about the axis n that turns v_b onto u_a
        (C = -angle) and one across (C = 0); a frame pair: three rows about x, y and z
        (C = -its rotation vector)."""
        u = einsum("kij,kj->ki", R.take(self.axis_a, axis=0), self.u)
        v = einsum("kij,kj->ki", R.take(self.axis_b, axis=0), self.v)
        across = cross(v, u)
        sine = np.linalg.norm(across, axis=1)
        axis_turn = np.arctan2(sine, einsum("ki,ki->k", u, v))
        # (half a turn round: any axis across v)
        fallback = cross(v, np.where(np.abs(v[:, :1]) < 0.9, [[1.0, 0, 0]], [[0, 1.0, 0]]))
        n = np.where(sine[:, None] > 1e-9, across, fallback)
        n /= np.linalg.norm(n, axis=1, keepdims=True)
        k, f = len(self.axis_a), len(self.frame_a)
        vector = np.zeros((f, 3))       # the rotation vector that turns b's frame onto a's
        if f:
            def completed(side, pairs):             # (f, 3, 3): x, y and x cross y
                F = einsum("kij,kjl->kil", R.take(side, axis=0), pairs)
                return np.concatenate([F, cross(F[:, :, 0], F[:, :, 1])[:, :, None]], axis=2)
            vector = Rotation.from_matrix(completed(self.frame_a, self.frame_u) @
                                          completed(self.frame_b, self.frame_v).transpose(0, 2, 1)
                                          ).as_rotvec()
        directions = np.concatenate([n, cross(n, v), np.tile(np.eye(3), (f, 1))])
        C = np.concatenate([-axis_turn, np.zeros(k), -vector.reshape(-1)])
        J = np.zeros((directions.shape[0], 6))
        J[:, 3:] = directions
        a = np.concatenate([self.axis_a, self.axis_a, np.repeat(self.frame_a, 3)])
        b = np.concatenate([self.axis_b, self.axis_b, np.repeat(self.frame_b, 3)])
        rows = Rows(a, b, C, -J, J, np.zeros(C.size))
        return axis_turn, np.linalg.norm(vector, axis=1), rows


# rad: a placed body whose joints' axes or frames are turned further than ALIGNING_FROM from
# what they hold is turned onto them (to within ALIGNED) before the placement's Newton steps
# on the joints' rows, which from there reach the pose the joint was made in. Half a turn
# off, they met the rows with the axis upside down (a yaw-locked capsule placed on its side
# ended on its head), and a weld turned a third of a turn about its diagonal met them as it
# was.
ALIGNING_FROM = 0.5
ALIGNED = 0.05
ALIGNING_STEPS = 30


def aligned(world, model, q, placed):
    """The orientations q (N, 4) with the bodies of the ``placed`` mechanisms ((N,) bool)
    turned onto their joints' axes and frames (``Alignments``) where these are further off
    than ALIGNING_FROM: Newton's steps on the turns alone, M-nearest; others unchanged."""
    al = model.alignments
    if al is None:
        return q
    inv_mass = world._inv_mass[:world._n]
    chosen = None
    pattern = scatter = None
    for _ in range(ALIGNING_STEPS):
        R = quat_to_matrix(q)
        axis_turn, frame_turn, rows = al.errors(R)
        turns = np.concatenate([axis_turn, frame_turn])
        if chosen is None:
            ends = np.concatenate([al.axis_a, al.frame_a]), np.concatenate([al.axis_b, al.frame_b])
            chosen = (placed.take(ends[0]) | placed.take(ends[1])) & (turns > ALIGNING_FROM)
            if not chosen.any():
                return q
            k = len(al.axis_a)
            keep = np.concatenate([chosen[:k], chosen[:k], np.repeat(chosen[k:], 3)])
            keep = np.flatnonzero(keep)
            pattern = Pattern(rows.a.take(keep), rows.b.take(keep), inv_mass > 0, world._n)
            scatter = Scatter(rows.a.take(keep), rows.b.take(keep), world._n)
        if turns[chosen].max() <= ALIGNED:
            break
        _, dtheta = newton_move(world, model, R, rows.at(keep), inv_mass, pattern, scatter)
        q = rotate_quat(q, dtheta)
    return q


def placed_on_joints(world, model, x, q, v, w):
    """The state with the poses the user set moved onto the joints (Newton's method on C = 0
    along J M^-1 J^T: near the nearest poses the joints allow in the mass metric), velocities
    as they are. A body placed off its joint was pulled back within one step by SHAKE, which
    turns the correction into velocity: a hinged rod lifted 0.3 m off its hinge swung away at
    5.6 m/s, and one moved 5 m at 8e4 m/s, held only by the energy level of that impossible
    pose (0.76 J, 44 J). Each Newton step is halved until it lowers |C|: full steps from a
    pose a metre or more off (a chain's middle link moved 1 m) made it worse, and the plain
    projection stopped there. StepError when the joints cannot be met this way (a chain's
    end placed 100 m off): the step would fling the bodies.

    The limits of the mechanisms a body was placed in are met too (``_PlacedLimits``): one
    placed past its limit is brought to the limit. The limit rows alone pushed it back within
    the step with the energy of the violation: a 1 m rod placed 0.7 rad past a hinge limit
    turned back at 42 rad/s with 291 J, and hit its other limit. Where joints and limits
    cannot be met together, the joints are met alone, as before, and the limits push."""
    q = aligned(world, model, q, _placed_mechanisms(world, model))
    limits = _PlacedLimits.of(world, model, x, quat_to_matrix(q), v, w)
    if limits is not None:
        err, x_met, q_met = _meet_joints(world, model, x, q, v, w, limits)
        if err <= world.projection_tolerance:
            return x_met, q_met, v, w
    err, x_met, q_met = _meet_joints(world, model, x, q, v, w)
    if not err <= world.projection_tolerance:
        raise StepError(f"bodies placed off their joints (position, orientation) could not be "
                        f"put back on them: a joint error of {err:.3g} (m, or rad where a "
                        "joint holds a turn) would be left, and the step would fling them; the "
                        "world is unchanged, the bodies still placed: place them again, the "
                        "mechanism whole or nearer what its joints (a RotationLock too) allow")
    return x_met, q_met, v, w


def held_at_limits(world, model, start_C, x, q, v, w, shaken):
    """Positions x (N, 3) and orientations q (N, 4) that a step reached, moved back onto the
    limits it carried joints past, or as they are where it carried none past or they cannot
    be met with the joints (a position move, as ``placed_on_joints``, velocities as they
    are). ``start_C`` (mb,): the coordinate plan's rows' C at the step's start
    (``limits.PlanRows.C``). Where some limit within its bound at the start is past it by
    more than its margin (the nearness that makes a row: 0.05 rad, 1 cm), or one past its
    bound by more than its slop at the start is limits.SETTLED_TURN (0.01 rad; 2 mm for a
    slider) further past, the limits past their bounds by more than their slop and than at
    the start are held at their bounds, the joints with them (``_PlacedLimits``); the
    step's pushes mend smaller misses. (Held only a margin further past, SHAKE turned a
    spinning ragdoll's elbow 0.043 rad further past its limit every step, which the push
    took back only in half: spun at 10 rad/s at dt 1/60 its elbows stood 0.23 rad past for
    seconds. Held 0.01 rad past from within, a 10-ragdoll pile held five times as often
    and took 10 % longer a step.) A limit more than SETTLED_TURN past at the end is held
    where it is any deeper (by its slop) than at the start: spun so, a shoulder's twist crept
    0.004 rad a step under the 0.01 trigger, SHAKE undoing the limit row's turn back and
    more, from 0.008 to 0.055 rad past in 13 steps. The step's push is followed by this too
    (manifold._pushed: its projection onto the joints turned a landing hand 0.15 rad past its
    cone).

    Bounded rows act at the start of the step; SHAKE then puts the joints back together
    without them, M-nearest: it turns a light body rather than move a heavy one, and a
    ragdoll's hand, its forearm whirled at 40 rad/s, was turned 0.47 rad past its wrist's
    cone in one step at dt 1/60 by the correction alone. ``shaken`` (N, 4): the orientations
    before SHAKE; where it turned no body by limits.SETTLED_TURN and all limits are on
    angles, nothing is looked at."""
    tables = world._limit_tables()
    plan = tables.plan
    if tables.angular_only:
        # (the smallest |cos| of the half turn SHAKE gave any body)
        least = np.abs(einsum("ij,ij->i", q, shaken)).min(initial=1.0)
        if least > np.cos(0.5 * SETTLED_TURN):
            return x, q
    R = quat_to_matrix(q)
    _, J, C = plan_rows(tables, Kinematics(x, R, v, w, velocity_terms=False))
    limit = plan.group <= UPPER
    # a limit past its bound at the start is held where SHAKE took it 0.01 rad (2 mm)
    # deeper; one within it, where SHAKE took it past by its margin
    already = start_C < -plan.slop
    settled = SETTLED_TURN * (plan.margin / ANGULAR_LIMIT_MARGIN)
    deep = C < -settled
    deepened = np.where(already, start_C - np.where(deep, plan.slop, settled),
                        np.minimum(start_C, 0.0) - plan.margin)
    if not np.any(limit & (C < -plan.slop) & (C < deepened)):
        return x, q
    rows = np.flatnonzero(limit)
    # (what a limit may keep past its bound: its slop, or what it had at the start)
    excused = np.maximum(np.maximum(-start_C.take(rows), 0.0), plan.slop.take(rows))
    limits = _PlacedLimits(tables, rows, excused)
    # (from the rotations and plan rows at hand: a 10-ragdoll pile's hold made them again)
    err, x_met, q_met = _meet_joints(world, model, x, q, v, w, limits, R,
                                     limits.from_plan_rows(J, C))
    if not err <= world.projection_tolerance:
        return x, q
    world.stats["limit_holds"] += 1
    return x_met, q_met


def _meet_joints(world, model, x, q, v, w, limits=None, R=None, bounds=None):
    """Newton's steps from positions x (N, 3) and orientations q (N, 4) towards C = 0 of the
    joints, and with ``limits`` (_PlacedLimits) of their active limit rows, each halved until
    it lowers the error (``_placing_error``). Returns (the largest joint |C| left (m, ~rad),
    x, q), or (inf, None, None) when the limits were not met. R: the rotations of q, and
    ``bounds``: limits.at there, if already at hand."""
    n = world._n
    inv_mass = world._inv_mass[:n]
    R = quat_to_matrix(q) if R is None else R
    rows = evaluate_tables(model.tables, Kinematics(x, R, v, w, velocity_terms=False))
    active = None
    if limits is not None:
        bounds = limits.at(x, R, v, w) if bounds is None else bounds
        active = limits.active(bounds.C, None, world.position_tolerance)
    for _ in range(PLACING_STEPS):
        if np.max(np.abs(rows.C)) <= world.position_tolerance and \
                (limits is None or limits.met(bounds.C, active, world.position_tolerance)):
            break
        error = _placing_error(rows.C, limits, bounds, active)
        if active is None or not active.any():
            dx, dtheta = newton_move(world, model, R, rows, inv_mass)
        else:
            dx, dtheta = limits.newton_move(world, model, R, rows, bounds, active, inv_mass)
        for _ in range(PLACING_HALVINGS):
            x_try, q_try = x + dx, rotate_quat(q, dtheta)
            R_try = quat_to_matrix(q_try)
            rows_try = evaluate_tables(model.tables, Kinematics(x_try, R_try, v, w,
                                                                velocity_terms=False))
            bounds_try = None if limits is None else limits.at(x_try, R_try, v, w)
            if _placing_error(rows_try.C, limits, bounds_try, active) < error:
                x, q, R, rows, bounds = x_try, q_try, R_try, rows_try, bounds_try
                break
            dx, dtheta = 0.5 * dx, 0.5 * dtheta
        else:
            break                          # no step lowers it: as near as this gets
        if limits is not None:
            active = limits.active(bounds.C, active, world.position_tolerance)
    if limits is not None and not limits.met(bounds.C, active, world.projection_tolerance):
        return np.inf, None, None
    return np.max(np.abs(rows.C)), x, q


def _placing_error(C, limits, bounds, active):
    """The squared error a placing step must lower: the joints' C (m,) and, with limits, the
    active limit rows' C (to be held at their bounds) and how far the others are past their
    bounds beyond what is excused (``_PlacedLimits``)."""
    error = C @ C
    if limits is not None:
        past = np.where(active, bounds.C, np.minimum(bounds.C + limits.excused, 0.0))
        error = error + past @ past
    return error


class _PlacedLimits(NamedTuple):
    """The limit rows of the mechanisms (bodies linked by joints) that the user placed a body
    of since the last step: their rows in the world's coordinate plan (``limits.plan_rows``),
    and what overshoot of each is excused (rad or m).

    An overshoot the placed pose has within the limit's slop (an overshoot the step's limit
    rows leave alone too) is excused: a resting ragdoll placed whole is moved as it lies. A
    row past its bound by more than that is active: the placement holds it at its bound, as
    an equality row, until it is no longer past it. The limits of other mechanisms are left
    as they are, and so is a limit the user moved past the pose of a mechanism not placed:
    the step's limit rows push those back."""
    tables: object              # limits.CoordinateTables
    rows: np.ndarray            # (k,) the limit rows of the placed mechanisms, in the plan
    excused: np.ndarray         # (k,) >= 0

    @staticmethod
    def of(world, model, x, R, v, w):
        """Those of this world's placed mechanisms at the placed poses (positions x (N, 3),
        rotations R (N, 3, 3)), or None when they have no limit rows."""
        tables = world._limit_tables()
        plan = tables.plan
        if plan is None:
            return None
        mechanism = _placed_mechanisms(world, model)
        limit = plan.group <= UPPER
        rows = np.flatnonzero(limit & (mechanism.take(plan.a) | mechanism.take(plan.b)))
        if not rows.size:
            return None
        placed = _PlacedLimits(tables, rows, np.zeros(rows.size)).at(x, R, v, w)
        overshoot = np.maximum(-placed.C, 0.0)
        slop = plan.slop.take(rows)
        return _PlacedLimits(tables, rows, np.where(overshoot <= slop, overshoot, 0.0))

    def at(self, x, R, v, w) -> Rows:
        """The rows at positions x (N, 3) and rotations R (N, 3, 3): C (k,) (>= 0 allowed,
        rad or m) and Jacobian blocks on u = [v; w], world frame."""
        _, J, C = plan_rows(self.tables, Kinematics(x, R, v, w, velocity_terms=False))
        return self.from_plan_rows(J, C)

    def from_plan_rows(self, J, C) -> Rows:
        """``at`` from every plan row's J (mb, 12) and C (mb,) there (``limits.plan_rows``)."""
        J, plan = J.take(self.rows, axis=0), self.tables.plan
        return Rows(plan.a.take(self.rows), plan.b.take(self.rows), C.take(self.rows),
                    J[:, :6], J[:, 6:], np.zeros(self.rows.size), side_blocks=J)

    def active(self, C, was, tolerance):
        """(k,) bool: the rows to hold at their bounds, from their values C (k,) and the rows
        ``was`` active (None at first): past their bound by more than is excused (and the
        tolerance), or active and still past it."""
        past = C < -(self.excused + tolerance)
        return past if was is None else past | (was & (C < 0.0))

    def met(self, C, active, tolerance) -> bool:
        """Whether the active rows are at their bounds and the others past them by no more
        than is excused, within the tolerance."""
        return bool(np.all(np.where(active, np.abs(C), -C - self.excused) <= tolerance))

    def newton_move(self, world, model, R, rows, bounds, active, inv_mass):
        """newton_move on the joints' rows and the active limit rows together: the move
        (dx, dtheta) (N, 3) each that takes both to zero to first order, M-nearest."""
        return bordered_newton_move(world, model, R, rows, bounds.at(np.flatnonzero(active)),
                                    inv_mass)


def _placed_mechanisms(world, model) -> np.ndarray:
    """(N,) bool: the dynamic bodies linked by the joints' rows to a body the user placed
    since the last step (``World._placed``), those bodies included."""
    n = world._n
    dynamic = world._inv_mass[:n] > 0
    label = model.mechanism
    return np.isin(label, label[world._placed[:n] & dynamic]) & dynamic
