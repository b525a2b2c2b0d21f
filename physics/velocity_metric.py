"""The metric the velocities are in: a stiff sub-step (``stiffness.unresolved_stiffness``)
kicks with the inertia I + h^2 K / 4, and its velocities are momentum over that inertia. Here:
a sub-step's metric (``_metric``) and the world's velocities' (``_velocity_metric``), the
velocities taken from one metric into another (``_between_metrics``), and the joints' tension
at the bodies' own spins that the stiffness is found from (``_tension_at_own_spins``,
``_pull_bounded``).

Its own module because it is one idea, what velocities mean under a stiffness, with its own
measured reasons; the sub-step only calls into it.
"""
from __future__ import annotations

import numpy as np

from .assembly import onto_rows
from .math3d import einsum
from .rotation import body_inverse_inertia, inertia_times
from .rows import Kinematics, velocity_products
from .stiffness import STIFFNESS_DRIFT


def _metric(K, h):
    """The metric a sub-step of size h kicks in with the tension stiffness K (N, 3, 3), body
    frame (inertias I + h^2 K / 4): (K, h), or None for the true one (K None)."""
    return None if K is None else (K, h)


def _same_metric(a, b) -> bool:
    """Whether two metrics (see _metric) are one (the same stiffness array and h)."""
    if a is None or b is None:
        return a is b
    return a[0] is b[0] and a[1] == b[1]


def _velocity_metric(world, n, given):
    """The metric the world's velocities are in (see _metric): the last velocity
    projection's, but the true one for the bodies whose velocity the user set since
    (``given`` (N,) bool or None: World._velocity_set's record)."""
    held = world._velocity_metric
    if held is None or held[0].shape[0] != n:
        return None
    if given is None or given.shape[0] != n or not given.any():
        return held
    return held[0] * ~given[:, None, None], held[1]


def _metric_change(source, target, only=None):
    """(N, 3, 3) body frame: the inertia of metric ``source`` less that of ``target`` (the
    true inertia cancels: h_s^2 K_s / 4 - h_t^2 K_t / 4), zero outside ``only`` ((N,) bool,
    None for every body)."""
    change = 0.0
    if source is not None:
        change = (0.25 * source[1] * source[1]) * source[0]
    if target is not None:
        change = change - (0.25 * target[1] * target[1]) * target[0]
    if only is not None:
        change = change * only[:, None, None]
    return change


def _stiff_moment(R, change, w):
    """R change R^T w (N, 3): the angular momentum that the inertia ``change`` (N, 3, 3), body
    frame, adds to the spins w (N, 3) at orientations R."""
    return einsum("nij,nj->ni", R, _body_moment(R, change, w))


def _body_moment(R, change, w):
    """change R^T w (N, 3): _stiff_moment in the body frame."""
    # (three products: one einsum of four was 1.5 ms)
    return einsum("nij,njk->nik", change, einsum("nji,nj->ni", R, w)[:, :, None])[:, :, 0]


def _between_metrics(world, model, kin, rows, factor, Iinv, source, target, endpoint):
    """The velocities of ``kin`` (Kinematics), in metric ``source``, taken into metric
    ``target`` (see _metric; inverse inertias Iinv, A factorised with them as ``factor``):
    each body keeps its angular momentum, and the change is projected onto the joints in the
    target metric. That is the one velocity there whose momentum differs from the source's
    by joint impulses alone; the velocities being on the joints already, only the change is
    projected. Returns (v, w, their Kinematics, the rows with their velocity products).

    Verlet's step with the inertia I + h^2 K / 4 is the trapezoidal rule (exactly, on a
    linear system) where its velocity stands for momentum over that inertia: a stiff step's
    velocities are not the bodies' own. Kept as they were from one metric to another (a step
    stiff or not, K taken anew, h halved by a split), each change scaled a stiff mode's
    energy by up to 1 + h^2 K / 4 I or its inverse, depending on its phase, and the changes
    did not cancel: a 10 kg ball swung at 2 m/s on 10 links of 0.01 kg (0.1 m), whose steps
    stiffened and split at random, folded its links to 60 degrees at dt 1/1000 (rk4 at
    1/4000: 11.4), and to 172 degrees at dt 1/240 before a StepError at 1.53 s. The
    velocities stay in the metric the last step ended in and are carried straight from one
    metric to the next where it changes (going through the true one gives the same, at the
    same positions, for one more factorisation a step).

    Only the bodies ``endpoint`` (N,) bool: those whose velocities are a state's (Verlet's,
    at the step's instant). A velocity a step with bounded rows left a mechanism at is its
    drift's, the turn over that step, which leapfrog's kicks carry on in either metric: it is
    no momentum over an inertia. Converted all the same (through the true metric), a
    tumbling ragdoll's hand landing at dt 1/60 had its spin scaled at each contact step with
    the stiffness, was turned against its forearm, and went 0.194 rad past its wrist's cone
    (0.079 before any conversion)."""
    change = _metric_change(source, target, endpoint)
    if not np.any(change):
        return kin.v, kin.w, kin, rows
    dw = einsum("nij,nj->ni", Iinv, _stiff_moment(kin.R, change, kin.w))
    dv, dw = onto_rows(model.pattern, model.scatter, factor, rows.blocks, np.zeros_like(kin.v),
                       dw, world._inv_mass[:world._n], Iinv)
    v, w = kin.v + dv, kin.w + dw
    kin = Kinematics(kin.x, kin.R, v, w)
    return v, w, kin, rows.with_velocity_products(velocity_products(model.tables, rows, kin))


# The share of the largest joint multiplier by which the tension at the bodies' own spins may
# differ from the stiff metric's before it is found exactly (see _tension_at_own_spins): the
# share by which a carried stiffness may drift (stiffness.STIFFNESS_DRIFT). The 1000-link
# hanging chain of the benchmark, pushed at 0.05 m/s, sits at 0.02.
OWN_SPIN_TENSION = STIFFNESS_DRIFT

# The most by which the own spins' pull may add to the largest joint multiplier, a share of it
# (see _tension_at_own_spins). Whips measured add up to 1.75 of it (a 200 kg ball landing on
# 10 links of 0.01 kg; 1.31 for the 10 kg ball on them kicked to 2 m/s). Beyond, the pull is
# the stiff metric's own loop: its added inertia h^2 K / 4 on the rope's slow common turn,
# read as spin, which a bent rope's joints cannot take off in the true metric, pulls in
# proportion to K squared, and sets the next step's K (the 10 kg ball released 70 degrees out
# at dt 1/60, swinging up clear of the ground: 66 N read as 706, K 1.2 times larger a step to
# 5e13 N m/rad, the rope frozen in mid-air 40 degrees out, then a StepError at 2.7 s).
OWN_SPIN_PULL = 2.0


def _tension_at_own_spins(world, model, kin, rows, factor, lam, metric, endpoint,
                          true_inverse_inertia):
    """The joints' multipliers lam (m,), solved at the velocities of ``kin`` in ``metric``
    (see _metric; A factorised in it as ``factor``), with the velocity products (Jdot u)
    taken at the bodies' own velocities instead: the true metric's (true_inverse_inertia()
    (N, 3, 3)) that carry the same momenta up to joint impulses (_between_metrics). The
    tension the stiffness is found from. A light link's spin in a stiff metric is a fraction
    of its own, and a straight rope's links whipping pull on its load by their own spins'
    centripetal terms: at dt 1/240 the rope of _between_metrics's note pulled with 242 N
    where the stiff metric's spins (7 rad/s for 13) gave 161; found from those, the
    stiffness came out too low where the rope whipped, and its steps split 770 times in 3 s.

    The own velocities cost a factorisation in the true metric, made only where they
    matter: where the spins the momenta give each body alone (an upper bound of the own
    ones, in energy) change some multiplier by more than OWN_SPIN_TENSION of the largest
    (not a hanging chain's swaying, whose links barely turn: 2 % of its tension).

    Only the bodies ``endpoint`` (N,) bool have their spins in the metric (see
    _between_metrics); the others' are a drift's, the turn they made over the last step,
    their own already. Taken as the metric's all the same, the 10 kg ball of that note,
    landing on the ground on its 10 links (every body then at its drift's velocity), had
    its links' spins scaled up by their I_aug / I, the tension by its square and the next
    step's stiffness with it, step after step (its largest K 14 -> 83 -> 2e3 -> 3e5 ->
    2e9 N m/rad in four contact steps at dt 1/60, then a StepError).

    The pull the own spins add is at most OWN_SPIN_PULL times the largest multiplier: I_aug /
    I applies to every turn, the rope's slow common one too, and that stiffness loop has no
    other bound (see there)."""
    if metric is None or not lam.size or not endpoint.any():
        return lam
    # R I^-1 (h^2 K / 4) R^T w, the change of spin, made in the body frame
    R, change = kin.R, _metric_change(metric, None, endpoint)
    alone = einsum("nij,nj->ni", R, inertia_times(body_inverse_inertia(world, model),
                                                  _body_moment(R, change, kin.w)))
    jdu = velocity_products(model.tables, rows, Kinematics(kin.x, kin.R, kin.v, kin.w + alone))
    solve = model.pattern.factorizer.solve
    shift = solve(factor, jdu - rows.Jdu)
    if np.abs(shift).max() <= OWN_SPIN_TENSION * np.abs(lam).max():
        return lam
    inv_mass = world._inv_mass[:world._n]
    Iinv_true = true_inverse_inertia()
    true_factor = model.pattern.factor(rows, inv_mass, Iinv_true, world.cfm)
    dv, dw = onto_rows(model.pattern, model.scatter, true_factor, rows.blocks,
                       np.zeros_like(kin.v), alone, inv_mass, Iinv_true)
    own = Kinematics(kin.x, kin.R, kin.v + dv, kin.w + dw)
    shift = solve(factor, velocity_products(model.tables, rows, own) - rows.Jdu)
    # (bounded: see OWN_SPIN_PULL)
    largest, limit = np.abs(shift).max(), OWN_SPIN_PULL * np.abs(lam).max()
    return lam - (shift * (limit / largest) if largest > limit else shift)


def _pull_bounded(model, rows, factor, lam, stiff_rows):
    """The joints' multipliers lam (m,), solved in the true metric (A factorised as
    ``factor``) at velocities taken into it from a stiff metric (``rows``' velocity products
    at those, ``stiff_rows``' at the velocities before: _between_metrics), with the pull the
    taking added bounded as the own spins' is (OWN_SPIN_PULL times the largest multiplier
    before it). Each body keeps its angular momentum, so the rope's slow common turn in a
    stiff metric becomes spins I_aug / I times its own in the true one: the 10 kg ball on its
    10 light links 70 degrees out at dt 1/60, swinging up clear of the ground, alternated
    stiff steps with split ones (whose halves are true), and each true step read its 98 N of
    tension as 3e6-1.5e7 N, found a stiffness 1.3-1.6 times the last (3e5 to 4e8 N m/rad
    in 23 steps), froze the ball in mid-air 33 degrees out and ended in NaN at 2.67 s."""
    shift = model.pattern.factorizer.solve(factor, rows.Jdu - stiff_rows.Jdu)
    before = lam + shift
    largest, limit = np.abs(shift).max(initial=0.0), OWN_SPIN_PULL * np.abs(before).max()
    return lam if largest <= limit else before - shift * (limit / largest)
