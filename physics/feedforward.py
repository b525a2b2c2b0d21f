"""What each velocity motor must push with to meet its speed through the joints, and the contacts
that carry its load.

The bounded rows are soft (``bounded.CONTACT_SOFTNESS``: 0.1 % of a row's own stiffness, the
diagonal of J M^-1 J^T), and a velocity motor's softness is centred on this force, not on
last step's. Centred on no force, a motor missed its speed by the softness times the load it
carried over its own body's inertia, whatever that body drove: a 1e-3 kg m^2 hub turning at
0.5 rad/s against 10 N m ran at 0.333 rad/s at dt 1/60, and as fast welded to a 10 kg m^2
flywheel; a motor turning a slider-crank against 100 N on its piston swung between 0.25 and
0.75 rad/s (a mechanism explorer's measurement). Centred on last step's force, motors set
against one another through contacts wound up their load every step (see
``bounded_solve.bounded_warm_start``). The joints alone (no contacts, limits or other motors)
never do that, and they carry the loads that a mechanism's own links, gravity and the user's
forces put on its motors. So do the contacts that pushed on the motors' mechanisms last step
(``carried_contacts``), as rows met with them here (while none of them slides): without
them, four motors at speed 0 let a car parked on a 10 degree slope creep downhill at 0.1 %
of the 46 N m each carried over a wheel's inertia times dt (-8.57e-5 m/s at dt 1/240, a
mechanisms explorer's measurement; 5.0e-10 with them, as a brake holds it).
Least-norm, they set no motor against another either: the four driven wheels of a car whose
contact depths differ still hold a bounded fight (``bounded_warm_start``).

The motors' rows meet their targets together with the joints: with the joints eliminated by
their own factorisation, S lambda_m = r, the Schur complement

    S = A_mm - A_me A_ee^-1 A_em,   r = rhs_m - A_me A_ee^-1 rhs_e,

of A = J M^-1 J^T over the joint rows e and motor rows m (k x k, one motor row per velocity
motor and three per carried contact: few), solved for the least forces: motors that the
joints tie together (two on one closed loop) share what their targets ask of them, and where
those targets disagree, none is set against the other here (the bounded solve's softness
then bounds their fight, as it did).
"""
from __future__ import annotations

import numpy as np

from .assembly import Scatter, apply_inverse_mass
from .sleeping import labels_reached

# singular values of S (scaled to a unit diagonal) below this share of its largest are
# motions that the joints leave to no motor alone: the force is least along them. Well above
# what the joints' own regularisation (World.cfm, 1e-9) leaves there: two motors on one
# parallelogram four-bar left 8.5e-10 of S's largest, and at 1e-9 one step in a few set
# them against each other with 2e8 N m (their max forces, 50 N m, held it)
SINGULAR = 1e-6


# a direction of forces that the motors' S leaves free (a load that a motor and a contact can
# share any way) is one on which the rows' targets agree where their share of the right-hand
# side (both in S's own scale) is at most this (``nearest_centre``): an arm resting on a table
# with its tip held by friction and its shoulder by a motor, 3e-8 or less; four driven wheels
# on rigid axles whose contact depths differ by micrometres, 1.1e-5
AGREE = 1e-6


# at most this many contacts are carried (``carried_contacts``): the motors' S is dense and
# solved by an SVD (lstsq), O(k^3); beyond it the motors are centred on the joints alone, as
# before the contacts were carried (the car's eight contacts and four motors: 28 rows)
CARRIED_CONTACTS = 32
# a contact's friction row whose last force is within this share of its bound (mu times its
# normal's) slid
SLIDING = 1e-6


def velocity_motor_rows(uni) -> np.ndarray:
    """Indices (k,) into the bounded block's rows of its velocity motors' rows."""
    plan = uni.limit_plan
    if plan is None or not plan.velocity_motor.any():
        return np.zeros(0, dtype=np.intp)
    motors = plan.motor[plan.velocity_motor]
    # (motors are always rows, and the rows are kept in plan order: np.isin took 60 us)
    return uni.first_limit_row + np.searchsorted(uni.limit_rows, motors)


def carried_contacts(uni, mechanism, dynamic, motors) -> np.ndarray:
    """The contacts' rows in the bounded block (c,) that load the mechanisms (``mechanism``
    (N,) labels of the bodies; ``dynamic`` (N,) bool) of the velocity motors' rows
    ``motors``: the normal and friction rows of the contacts that pushed on them last step
    (``uni.warm``). None where none pushed (a contact's first step), more than
    CARRIED_CONTACTS did, or one of them slid: a sliding contact is no row to meet, and
    carried as a load at last step's force, it left the four driven wheels of a car that
    sped up sliding (mu 0.2) set against each other with +-5.9 N m at 3 m/s, dt 1/60 (+-0.37
    with the joints alone, +-0.13 so)."""
    k = uni.n_contact_rows // 3
    none = np.zeros(0, dtype=np.intp)
    if k == 0:
        return none
    rows = uni.block.rows
    ends = np.concatenate([rows.a.take(motors), rows.b.take(motors)])
    driven = labels_reached(mechanism, ends[dynamic.take(ends)])
    a, b = rows.a[:k], rows.b[:k]
    warm = uni.warm
    on = (((dynamic.take(a) & driven.take(mechanism.take(a)))
           | (dynamic.take(b) & driven.take(mechanism.take(b)))) & (warm[:, 0] > 0.0))
    c = np.flatnonzero(on)
    if c.size > CARRIED_CONTACTS:
        return none
    friction = np.concatenate([k + c, 2 * k + c])
    force = np.concatenate([warm[c, 1], warm[c, 2]])
    mu = uni.block.mu.take(friction)
    # (a frictionless contact's friction rows hold nothing: no rows to meet, and not sliding;
    # taken so, one frictionless contact on a parked car let it creep at -3.5e-4 m/s. Its
    # first row's mu is the contact's: a gliding contact frees only its row across the slip)
    gripping = np.tile(mu[:c.size] > 0.0, 2)
    if (np.abs(force) >= (1.0 - SLIDING) * mu * np.tile(warm[c, 0], 2))[gripping].any():
        return none
    return np.concatenate([c, friction[gripping]])


def motor_feedforward(model, rows, rhs_e, motor_rows, rhs_m, cfm, inv_mass, Iinv, factor,
                      n_bodies: int, lo=None, hi=None, centre=None,
                      saturated=None) -> np.ndarray:
    """lambda_m (k,) (N m or N, along each row) that meets the velocity motors' targets with
    the joints and no other bounded row (but the contacts among ``motor_rows``, after the
    motors: ``carried_contacts``).

    rows: the joint rows (``Rows``, m_e) whose J M^-1 J^T + cfm ``factor`` factorises (with
    ``model.pattern``), rhs_e (m_e,) their right-hand side (None, None: no joint rows);
    motor_rows: the motors' rows (``Rows``, k) and rhs_m (k,) theirs, as the bounded
    solve's (accelerations: m/s^2 or rad/s^2); cfm (k,) their regularisation; inv_mass (N,),
    Iinv (N, 3, 3) world frame.
    lo, hi (j,): the max forces of the first j rows (the motors); a motor whose force would
    leave them is saturated: held at its bound, a load, and the others solved again without
    its row (``saturated_solve``), as are those ``saturated`` (j,) int marks: +1 at hi, -1 at
    lo (last step's solve held them there), 0 not. centre (k,): the forces the least-norm
    answer is nearest (None: zero)."""
    X, S, _ = joints_schur(model, rows, motor_rows, inv_mass, Iinv, factor, n_bodies)
    S[np.diag_indices_from(S)] += cfm
    # least norm in S's own scale: a motor meets its target exactly, motors whose targets the
    # joints make one (two on a closed loop) share it, and none is set against another
    r = rhs_m if rows is None else rhs_m - X.T @ rhs_e
    return saturated_solve(S, r, lo, hi, centre, saturated)


def saturated_solve(S, r, lo=None, hi=None, centre=None, saturated=None):
    """lambda (k,) with S lambda = r on the rows it leaves within lo <= lambda <= hi (j,) (the
    first j rows: the motors; the rest unbounded) and not ``saturated`` (j,) int (+1: held at
    hi, -1: at lo, 0: not), the others held at their bound (saturated: forces, whose targets
    are not met). Least norm in S's own scale (``least_solve``), but along the forces that
    S leaves free, nearest ``centre`` (k,; NaN on rows without one; None: none) on the rows
    that have one (``nearest_centre``).

    A motor that cannot meet its speed is a force. Solved as a row, it left the others'
    answer as if it met it: an arm's elbow motor (10 N m) asked for 1 rad/s while it pressed
    the tip onto a table (its speed, the shoulder's 0 and the contact's make three rows on
    the arm's two turns, which least norm split among them) put -5.4 N m in the centre of
    the shoulder's motor at speed 0, which held the arm with 24 N m; the softness between
    them turned the shoulder at -0.019 rad/s at dt 1/60 (a robotics explorer's finding).
    A motor last step's solve held at its max force is held so here first; one whose answer
    here leaves its bounds is held there and the rest solved again (at most j rounds)."""
    k = r.shape[0]
    lam = np.zeros(k)
    held = np.zeros(k, dtype=bool)
    j = 0 if lo is None else lo.shape[0]
    if saturated is not None and saturated.any():
        held[:j] = saturated != 0
        lam[:j] = np.where(saturated > 0, hi, np.where(saturated < 0, lo, 0.0))
    for _ in range(j + 1):
        free = np.flatnonzero(~held)
        if free.size == 0:
            break
        S_free = S.take(free, axis=0)
        # (the held rows' forces as loads)
        lam[free] = 0.0
        S_ff = S_free.take(free, axis=1)
        r_free = r.take(free) - S_free @ lam
        lam[free] = least_solve(S_ff, r_free)
        if centre is not None:
            lam[free] = nearest_centre(S_ff, r_free, lam.take(free), centre.take(free))
        if j == 0:
            break
        motors = lam[:j]
        out = ~held[:j] & ((motors > hi) | (motors < lo))
        if not out.any():
            break
        motors[out] = np.clip(motors[out], lo[out], hi[out])
        held[:j] |= out
    return lam


def nearest_centre(S, r, lam, centre):
    """lam (k,) (``least_solve``'s answer to S lambda = r) moved along the forces that S
    (k, k) leaves free (its singular directions in its own scale, as ``least_solve`` drops
    them: forces that balance among the rows) on which the targets r (k,) agree (their
    share of r at most AGREE), to where the rows with a ``centre`` (k,; NaN: none) are
    nearest it; the other free directions left least.

    The carried contacts' softness is centred on last step's forces (``unilateral.
    softness_centre``); where they and a motor share a load (the tip's friction and the
    shoulder's motor both hold an arm pressed on a table), least norm split it otherwise,
    and the two centres, not one balance, turned the shoulder at -0.0021 rad/s at dt 1/60
    (mu 0.8, a robotics explorer's finding): least norm put 25 N of friction on 19 N of
    normal force, beyond mu, so the solve could not meet it. Where the targets disagree
    (four driven wheels on rigid axles, their contact depths a few micrometres apart: a
    share of 1.1e-5, against at most 3e-8 on the arm), kept where last step's forces were,
    the fight between the motors wound up as when they were centred on last step's torques
    (+-49 to +-93 N m over 4 s at 3 m/s, dt 1/60): least there, it holds +-0.70 N m."""
    has = ~np.isnan(centre)
    if S.shape[0] == 1 or not has.any():
        return lam
    scale = np.sqrt(np.maximum(np.diag(S), np.finfo(float).tiny))
    _, sv, Vt = np.linalg.svd(S / np.outer(scale, scale))
    free = Vt[sv < SINGULAR * sv[0]]                               # (f, k) in S's scale
    scaled_r = r / scale
    free = free[np.abs(free @ scaled_r) <= AGREE * np.linalg.norm(scaled_r)].T / scale[:, None]
    if free.shape[1] == 0:
        return lam
    y = np.linalg.lstsq(free[has], centre[has] - lam[has], rcond=SINGULAR)[0]
    return lam + free @ y


def least_solve(S, r):
    """S^-1 r (k,) for the motors' S (k, k), least norm in S's own scale (scaled to a unit
    diagonal, singular values below SINGULAR of the largest dropped). One motor's scaled S is
    1: its division directly (numpy's lstsq cost 0.4 ms a call)."""
    if S.shape[0] == 1:
        return r / S[0, 0] if S[0, 0] > 0.0 else np.zeros(1)
    scale = np.sqrt(np.maximum(np.diag(S), np.finfo(float).tiny))
    y = np.linalg.lstsq(S / np.outer(scale, scale), r / scale, rcond=SINGULAR)[0]
    return y / scale


def joints_schur(model, rows, motor_rows, inv_mass, Iinv, factor, n_bodies: int):
    """(X = A_ee^-1 A_em (m_e, k), S = A_mm - A_me X (k, k), A_em (m_e, k)) of
    A = J M^-1 J^T over the joint rows e (``rows``, whose A_ee + cfm ``factor`` factorises with
    ``model.pattern``) and the rows m (``motor_rows``), inv_mass (N,), Iinv (N, 3, 3) world
    frame: the k x k system of rows m with the joints eliminated (S without their cfm)."""
    # M^-1 J_m^T as a dense (6N, k) matrix, then both products by the rows' own CSR pattern
    # (scipy.sparse matrices made and multiplied each call took 2.6 ms of a four-bar's step)
    motors = Scatter(motor_rows.a, motor_rows.b, n_bodies)
    MJ_m = np.concatenate([apply_inverse_mass(motor_rows.Ja, motor_rows.a, inv_mass, Iinv),
                           apply_inverse_mass(motor_rows.Jb, motor_rows.b, inv_mass, Iinv)],
                          axis=1)
    k = motor_rows.a.size
    G = np.zeros((6 * n_bodies, k))
    # (a row's two bodies differ: no column is set twice)
    G[motors.indices, np.repeat(np.arange(k), 12)] = MJ_m.ravel()
    A_mm = motors.times_columns(motor_rows.blocks, G)                # (k, k)
    if rows is None:
        # no joint rows to eliminate (a winch on a rope whose length only its limits bound)
        return np.zeros((0, k)), A_mm, np.zeros((0, k))
    A_em = model.scatter.times_columns(rows.blocks, G)               # (m_e, k)
    X = model.pattern.factorizer.solve(factor, A_em)                 # A_ee^-1 A_em
    return X, A_mm - A_em.T @ X, A_em
