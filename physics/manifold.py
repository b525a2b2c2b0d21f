"""Putting the bodies back onto the joints' constraint manifold: SHAKE's correction of the
drifted positions (``correct_to_manifold``, with the corrected drift of fast-turning bodies),
the Newton projection of positions (``project_positions``; ``_pushed`` after a push), and
RATTLE's projection of the velocities onto J u = 0 (``project_velocities``, which leaves the
next sub-step its ``model.StartCache``).

Its own module because these corrections are one method apart from how the sub-step kicks
and drifts (``symplectic``), and the driver and the user loads' catch-up
(``kicks.loads_caught_up``) project with them too.
"""
from __future__ import annotations

import numpy as np

from .assembly import onto_rows
from .jammed_push import progressing_push
from .math3d import einsum, quat_to_matrix, rotate_quat, turn_quat
from .model import StartCache
from .placement import SHAKE_TRUST, newton_move
from .position_push import push_velocities
from .rotation import (body_inertia, body_inverse_inertia, free_rotation, midpoint_rotation,
                       world_inverse_inertia)
from .rows import Kinematics, evaluate_tables
from .stiffness import augmented_inverse_inertia


# -- stage 5: post-stabilisation -------------------------------------------------------------
def correct_to_manifold(world, model, rows, factor, x1, q1, v_half, w_half, inv_mass, Iinv, h,
                        drift=None):
    """SHAKE: correct lambda so that the positions reached after the half kick and the drift
    satisfy C = 0. A correction dlambda moves the new positions by h^2/2 M^-1 J(x)^T dlambda
    (rotations applied on the left), so C(x+) changes by h^2/2 J(x+) M^-1 J(x)^T dlambda.
    The first iterations approximate that matrix by the seed's factorised J M^-1 J^T; if they
    stall, the rest are exact Newton steps with SuperLU. The half-step velocities are read
    back from the final positions. x1, q1 are the positions of the plain drift; ``drift``,
    if given, makes the orientations of a sum of rotational corrections (N, 3) from the
    drift of the spin they give (see _corrected_drift), instead of turning q1 by them.
    Returns (best |C|, x+, q+, v half, w half)."""
    fac = model.pattern.factorizer
    total = untouched = (0.0, 0.0)    # sum of the corrections, linear and angular
    best, restart, JM_start = None, None, None
    newton = world.shake_quasi_iterations == 0
    direction, fraction = None, 1.0
    for _ in range(world.shake_iterations):
        # (Newton's steps take C and J; neither wants Jdot u)
        k1 = Kinematics(x1, quat_to_matrix(q1), v_half, w_half, velocity_terms=False)
        rows1 = evaluate_tables(model.tables, k1) if newton else None
        C = rows1.C if newton else evaluate_tables(model.tables, k1, c_only=True)
        err = np.abs(C).max()
        if world._debug is not None:
            world._debug.append((err, newton, fraction))
        if best is None or err < best[0]:
            best, fraction = (err, x1, q1, total), 1.0
            if err <= world.position_tolerance:
                break
        else:                                   # no progress: backtrack along the last step
            fraction *= 0.25
            if fraction < 0.01:
                if newton or not world.shake_newton:
                    break
                newton, fraction = True, 1.0    # quasi-Newton stalled: exact Newton
                x1, q1, total = best[1], best[2], best[3]
                restart, best = best, None
                continue
            x1 = best[1] + fraction * direction[0]
            total = (best[3][0] + fraction * direction[0], best[3][1] + fraction * direction[1])
            q1 = (rotate_quat(best[2], fraction * direction[1]) if drift is None
                  else drift(total[1]))
            continue
        if newton:
            if JM_start is None:
                _, JM_start = model.pattern.sides(rows.Ja, rows.Jb, inv_mass, Iinv)
            J1 = np.stack([rows1.Ja, rows1.Jb], axis=1).reshape(-1, 6)
            lu = splu_or_none(model.pattern.cross_matrix(J1, JM_start, world.cfm))
            if lu is None:
                break
            dlam = -lu.solve(C)
        else:
            dlam = -fac.solve(factor, C)
        direction = model.scatter.response(rows.blocks, dlam, inv_mass, Iinv)
        total = (total[0] + direction[0], total[1] + direction[1])
        x1 = x1 + direction[0]
        q1 = rotate_quat(q1, direction[1]) if drift is None else drift(total[1])
        if not newton and err <= SHAKE_TRUST * world.position_tolerance:
            # one more quasi-Newton step from this close contracts the error by the turn
            # within h (~0.01): take it without measuring it again
            best = (err, x1, q1, total)
            break
    err, x1, q1, total = best if best is not None else restart
    if total is untouched:          # the drift already met the joints: nothing to correct
        return err, x1, q1, v_half, w_half
    # the velocities change by exactly M^-1 J^T (sum of corrections) / h, so internal forces
    # keep linear and angular momentum
    spin = w_half + total[1] / h if drift is None else drift.spin(total[1])
    return err, x1, q1, v_half + total[0] / h, spin


# A jointed body turning more than this in a step (rad) has SHAKE's corrections taken into
# its drift (_corrected_drift).
FAST_TURN = 0.05


def _corrected_drift(world, model, q, R, inertia, w_half, rotation, h):
    """The orientations (N, 4) at the end of the drift of the spin w_half + theta / h, as a
    function of SHAKE's summed rotational corrections theta (N, 3) (``_CorrectedDrift``).

    Turning the drift's orientations by the corrections, exp(theta) exp(h w) q, differs from
    the drift of the corrected spin at second order (their commutator), and for a body that
    turns fast within a step the difference acts as a torque that no load applies: a top
    spinning at 60 rad/s on a ball joint at dt 1/240 gained 0.06 J in 4 s (+2.2 % in 30 s)
    and its nutation fell 3.5 degrees behind. Slower bodies keep the cheaper turn."""
    if rotation is None:                     # (explicit gyroscopic torque: a plain turn)
        return _CorrectedDrift(q, R, inertia, w_half, None, h, None)
    return _CorrectedDrift(q, R, inertia, w_half, rotation, h, model.flows)


class _CorrectedDrift:
    """``_corrected_drift``'s function theta -> orientations (N, 4), which keeps the last
    drift's correction, spin and flow (``free_rotation``'s): the correction SHAKE keeps is
    most often the last it drifted with, and the step then wants that spin (``spin``) and its
    flow (``flow_of``) again, the same arrays (a 10-ragdoll pile: one free_rotation of the
    ~7 a step less)."""

    def __init__(self, q, R, inertia, w_half, rotation, h, flows):
        self.q, self.R, self.inertia, self.w_half, self.h = q, R, inertia, w_half, h
        self.rotation, self.flows = rotation, flows     # (rotation None: a plain turn)
        self._last = None                   # (theta, spin, flow) of the last drift

    def __call__(self, theta):
        if self.rotation is None:
            return rotate_quat(self.q, self.h * self.w_half + theta)
        w = self.w_half + theta / self.h
        flow = free_rotation(self.R, self.inertia, w, self.h, self.flows, near=self.rotation)
        self._last = (theta, w, flow)
        return turn_quat(self.q, midpoint_rotation(self.R, w, flow, self.h, self.inertia,
                                                   self.flows))

    def spin(self, theta):
        """w_half + theta / h (N, 3): the last drift's own array when theta is its
        correction (the same object)."""
        last = self._last
        if last is not None and last[0] is theta:
            return last[1]
        return self.w_half + theta / self.h

    def flow_of(self, w):
        """The flow (``free_rotation``'s, near the plain drift's) of the spin w when w is the
        last drift's own array (``spin``), else None."""
        last = self._last
        return last[2] if last is not None and last[1] is w else None


def splu_or_none(matrix):
    from scipy.sparse.linalg import splu
    try:
        return splu(matrix)
    except RuntimeError:
        return None


def project_positions(world, model, x, q, v, w):
    """Newton projection of positions onto C = 0 along J M^-1 J^T at the current iterate
    (the M-closest point on the constraint manifold; Cline and Pai's post-stabilisation).
    Stops when the error stops falling; returns (largest |C|, x, q)."""
    n = world._n
    inv_mass = world._inv_mass[:n]
    best = (np.inf, x, q)
    for _ in range(world.position_iterations):
        R = quat_to_matrix(q)
        rows = evaluate_tables(model.tables, Kinematics(x, R, v, w, velocity_terms=False))
        err = np.max(np.abs(rows.C))
        if not err < best[0]:
            break
        best = (err, x, q)
        if err <= world.position_tolerance:
            break
        dx, dtheta = newton_move(world, model, R, rows, inv_mass)
        x, q = x + dx, rotate_quat(q, dtheta)
    return best


def inverse_inertia_at(world, model, R, stiffness=None, h=0.0):
    """The world inverse inertias (N, 3, 3) at the rotations R: the true ones (stiffness
    None), or in the metric of the joints' ``stiffness`` over a step of h (the kick's
    augmented inertia, ``augmented_inverse_inertia``); static bodies' zero."""
    if stiffness is None:
        return world_inverse_inertia(R, body_inverse_inertia(world, model), model.dynamic)
    return augmented_inverse_inertia(R, body_inertia(world, model), stiffness, h,
                                     model.dynamic)


def project_velocities(world, model, x, q, v, w, stiffness=None, h=0.0, R=None,
                       Iinv_true=None, Iinv_stiff=None):
    """RATTLE's second half: the M-orthogonal projection of u onto J(x) u = 0 (removes only
    the velocity that violates the joints, so it never adds kinetic energy). With the joints'
    ``stiffness`` the metric is the kick's augmented inertia (see augmented_inverse_inertia).
    R: the rotations of q, if already at hand; Iinv_true: the world inverse inertias at R
    (world_inverse_inertia), if already at hand (used without stiffness only); Iinv_stiff:
    the augmented ones at R with this stiffness, if already at hand."""
    n = world._n
    inv_mass = world._inv_mass[:n]
    R = quat_to_matrix(q) if R is None else R
    if stiffness is None:
        if Iinv_true is None:
            Iinv_true = inverse_inertia_at(world, model, R)
        Iinv = Iinv_true
    else:       # the next sub-step makes the true ones only if it is no longer stiff
        Iinv = (inverse_inertia_at(world, model, R, stiffness, h) if Iinv_stiff is None
                else Iinv_stiff)
        Iinv_true = None
    rows = evaluate_tables(model.tables, Kinematics(x, R, v, w, velocity_terms=False))
    factor = model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
    # the next sub-step starts here: it may reuse R, I^-1 and (with this stiffness) the factor
    world._start_cache = StartCache(x, q, R, Iinv_true, factor, world.cfm, stiffness, Iinv, h, rows)
    return onto_rows(model.pattern, model.scatter, factor, rows.blocks, v, w, inv_mass, Iinv)


def carry_with_bodies(R0, R1, vectors):
    """World vectors (N, 3) that are fixed in each body, moved from orientation R0 to R1."""
    return einsum("nij,nkj,nk->ni", R1, R0, vectors)


def _pushed(world, model, rows, uni, inv_mass, Iinv, factor, x1, q1, v, w, h, pushing=True):
    """The drift's end x1 (N, 3), q1 (N, 4) moved by the push the bodies do not keep
    (position_push.push_velocities, over the step; pushing False: none) and by the impacts'
    moves to their meeting times (``Unilateral.impact_shift``), then put back onto the
    joints by positions alone (project_positions): they keep no speed of it. (Added to the
    drift's velocities and taken back after it, SHAKE's correction of the pushed drift
    stayed in them: a 5-link chain laid 5 cm into the ground left it at 2.8 m/s with 25 J.
    Not put back, the joints missed by the push's second order until the next step:
    9.5e-4 m in the ragdoll pile.) The push meets the joints to first order, so the
    projection moves the bodies less than the push did; one that would move them further, or
    fails, is not taken, and the next step's SHAKE takes what the push missed."""
    if pushing:
        dv, dw = push_velocities(world, model, rows, uni, inv_mass, Iinv, factor)
        dv, dw = progressing_push(world, model, uni, x1, q1, h, dv, dw)
        dx, dq = h * dv, h * dw
    else:
        dx = dq = np.zeros_like(x1)
    if uni.impact_shift is not None:
        dx, dq = dx + uni.impact_shift[0], dq + uni.impact_shift[1]
    pushed_x, pushed_q = x1 + dx, rotate_quat(q1, dq)
    if not (model.m and world.post_stabilization):
        return pushed_x, pushed_q
    _, x2, q2 = project_positions(world, model, pushed_x, pushed_q, v, w)
    moved = np.abs(x2 - pushed_x).max(initial=0.0)     # (NaN where it failed: not taken)
    if moved <= np.abs(dx).max(initial=0.0) and np.isfinite(q2).all():
        return x2, q2
    return pushed_x, pushed_q


def _projected(world, model, dv, dw):
    """The velocity changes dv, dw (N, 3) each projected onto the joints as the last
    project_velocities projected (its rows, factorisation and metric)."""
    cache = world._start_cache
    return onto_rows(model.pattern, model.scatter, cache.factor, cache.rows.blocks, dv, dw,
                     world._inv_mass[:world._n], cache.metric)
