"""The symplectic sub-step (``symplectic_substep``, RATTLE form; its stages are listed in
``step``'s docstring): rows, impacts, multipliers, kick, drift, SHAKE, the velocity
projection; with its split into pieces (``_split``), the cold solve of a kick that gains too
much energy (``_gains_too_much``) and the joints' angles carried through fast turns
(``carry_angle_reference``).

Its own module because it is the sub-step in order; the pieces it calls live in ``seed``,
``manifold``, ``kicks``, ``velocity_metric`` and ``splits``.
"""
from __future__ import annotations

import numpy as np

from .assembly import inverse_mass_times
from .bounded_solve import bounded_multipliers
from .contact_rows import MAX_PUSH_OUT
from .energy import kinetic_energy
from .impacts import resolve_impacts
from .kicks import (_at_endpoint, _back_to_drift, _kicked_loads, _resting_where_given,
                    _retimed_kick, _retimed_velocities, _to_drift, _verlet_first_kick,
                    _verlet_where_unbounded)
from .manifold import (FAST_TURN, _corrected_drift, _projected, _pushed, carry_with_bodies,
                       correct_to_manifold, inverse_inertia_at, project_positions,
                       project_velocities)
from .math3d import einsum, quat_to_matrix, rotate_quat, turn_quat
from .motor_hold import held_motors, held_positions, held_velocities
from .placement import held_at_limits
from .position_push import kept_targets
from .reporting import StepReport
from .rotation import body_inertia, end_spin, free_rotation, midpoint_rotation
from .rows import Kinematics, evaluate_tables, velocity_products
from .seed import (_Kick, _aimed_torque, _damped_kick, _opened_rows, _with_gyroscopic,
                   applied_wrench, damped_velocities, generalized_acceleration, seed_multipliers,
                   seed_rhs)
from .splits import _may_split, _missed, _turn_pieces, _turns_more_than
from .stiffness import augmented_inverse_inertia, stiffness_carries, unresolved_stiffness
from .top_contacts import midway_targets
from .unilateral import bounded_impulse, unilateral_rows, with_overrun_limits
from .velocity_metric import (_between_metrics, _metric, _metric_change, _pull_bounded,
                              _same_metric, _stiff_moment, _tension_at_own_spins, _velocity_metric)


# -- one sub-step ----------------------------------------------------------------------------
def symplectic_substep(world, model, x, q, v, w, h, depth=0):
    """One sub-step of size h in velocity-Verlet (RATTLE) form, split for rigid bodies.

    Joints: half kick with the seed's lambda, corrected so that the new positions meet the
    joints (SHAKE), drift, half kick, then the velocities projected onto the joints. The drift
    moves each body along its velocity and turns it by its own torque-free motion (Euler's
    equations by the implicit midpoint rule, see ``free_rotation``), so a spinning body's
    gyroscopic coupling acts on the velocity it has after the kick. Bounded rows (contacts,
    limits, motors) are solved together with the joints and act as one impulse at the start
    of the step. When the joints cannot be met the step is split in two (up to
    ``world.max_split_depth`` times), and only then are positions projected."""
    n = world._n
    inv_mass = world._inv_mass[:n]
    inertia = body_inertia(world, model)     # (N, 3) principal moments if all diagonal
    cache, world._start_cache = world._start_cache, None
    # the last velocity projection may have been made at exactly these positions
    reuse = cache is not None and cache.x is x and cache.q is q and cache.cfm == world.cfm
    R = cache.R if reuse else quat_to_matrix(q)
    Iinv_true = cache.Iinv if reuse else None       # None: not made yet

    def true_inverse_inertia():
        """R I^-1 R^T (N, 3, 3), made when first needed (a stiff step may not need it)."""
        nonlocal Iinv_true
        if Iinv_true is None:
            Iinv_true = inverse_inertia_at(world, model, R)
        return Iinv_true

    retimed = None          # the lead a changed step size put in the drift's velocities
    if depth == 0:
        v, w, retimed = _retimed_velocities(world, model, R, v, w, h, true_inverse_inertia)
    # a step with bounded rows (symplectic Euler) starts from the last drift's velocities:
    # the state's, less what the last step added after its drift (see _to_drift)
    state_v, state_w, drift_only = v, w, world._drift_only
    given, world._velocity_given = world._velocity_given, None     # (see World._velocity_set)
    after_euler, to_drift = world._after_euler, _to_drift(world)
    if to_drift is not None and after_euler:
        v, w = _back_to_drift(world, v, w, to_drift)
    # Phi for the multipliers includes the gyroscopic torque; with the torque-free flow in the
    # drift the kicks carry only the applied loads
    F, T, T_kick = applied_wrench(world, model, R, v, w)
    flow = world.gyroscopic == "implicit"
    kin = Kinematics(x, R, v, w)
    rows = lam = factor = None
    clock = world._clock
    clock.lap("other")
    uni = (unilateral_rows(world, model, kin, h, inv_mass[:, None] * F)
           if depth == 0 or world._uni_each_split else None)
    if to_drift is not None and (uni is None) == after_euler:
        if uni is None:         # no bounded rows after all: Verlet, from the state's velocities
            v, w = state_v, state_w
            world._to_drift, world._drift_only = to_drift, drift_only
            F, T, T_kick = applied_wrench(world, model, R, v, w)
        else:                   # bounded rows begin (found at the state's velocities)
            v, w = _back_to_drift(world, v, w, to_drift)
        kin = Kinematics(x, R, v, w)
    world._after_euler = uni is not None
    # (the split's halves start from the drift's velocities, as the step found them)
    v_start, w_start, first = v, w, 1.0
    unbounded = None
    if uni is not None:
        unbounded, first, v, w = _verlet_where_unbounded(uni, model, inv_mass, v, w, state_v,
                                                         state_w, drift_only)
        if to_drift is not None and given is not None:
            v, w, resting = _resting_where_given(world, model, uni, given, unbounded, inv_mass,
                                                 v, w, state_v, state_w, h)
            if retimed is not None and resting is not None:
                # (their state's velocities hold no lead unless they were a drift's)
                retimed = retimed._replace(carried=retimed.carried
                                           & (~resting | retimed.in_state))
        if v is not v_start:
            kin = Kinematics(x, R, v, w)
            # (of the loads, only the gyroscopic torque depends on the velocities)
            T, T_kick = _with_gyroscopic(world, model, R, w, world._torque[:n])
    # the tension stiffness the last sub-step found (see unresolved_stiffness) carries this one
    K = world._stiffness if depth == 0 and model.m else None
    world._stiffness = None
    Iinv = true_inverse_inertia() if K is None else None     # the stiff metric follows
    if model.m:
        if reuse and cache.rows is not None:    # the same C and J; Jdu for these velocities
            rows = cache.rows.with_velocity_products(velocity_products(model.tables, cache.rows,
                                                                       kin))
        else:
            rows = evaluate_tables(model.tables, kin)
        # the projection that ended the last sub-step may have factorised A with this stiffness
        same_metric = reuse and cache.stiffness is K and (K is None or cache.h == h)
        if K is not None:
            Iinv = (cache.metric if same_metric
                    else augmented_inverse_inertia(R, inertia, K, h, model.dynamic))
        factor = (cache.factor if same_metric
                  else model.pattern.factor(rows, inv_mass, Iinv, world.cfm))
    kick_lin = kick_ang = 0.0
    lam_b = K_found = impact = None
    kick_length = h         # s: what the bounded rows' impulses are forces over (_retimed_kick)
    opened = _opened_rows(rows, given, inv_mass)
    stabilize = model.m and world.post_stabilization
    # the metric the velocities are in (the last projection's) and the one this step kicks in
    # (kept as the world's: a split's halves start from the same velocities)
    held = world._velocity_metric = _velocity_metric(world, n, given)
    metric = _metric(K, h)
    stiff_rows = None       # the rows at the velocities of a stiff metric taken into the true
    if stabilize and not _same_metric(held, metric):
        # (a split's halves, a step after one, a changed dt, a velocity set by the user, a
        # stiffness the last step did not hand on: see _between_metrics)
        endpoint = _at_endpoint(_verlet_first_kick(world, n) if uni is None else first, n)
        if metric is None and held is not None and world.geometric_stiffness:
            stiff_rows = rows
        v, w, kin, rows = _between_metrics(world, model, kin, rows, factor, Iinv, held, metric,
                                           endpoint)
        T, T_kick = _with_gyroscopic(world, model, R, w, world._torque[:n])
    clock.lap("rows")
    kick = None
    if uni is not None:
        v, w, impulses = resolve_impacts(world, model, rows, uni, inv_mass, Iinv, v, w, h, factor,
                                         load=inv_mass[:, None] * F)
        if impulses is not None:
            impact = tuple(None if p is None else p / h for p in impulses)
        clock.lap("impacts")
        # the kick's metric: in the first step after a change of step size, over the two
        # half steps where bounded rows act (see _retimed_kick); with viscous damping, the
        # damped one (see _damped_kick)
        kick_inv_mass, kick_Iinv, kick_v, kick_w = _retimed_kick(retimed, unbounded, inv_mass,
                                                                 Iinv, v, w)
        kick = _damped_kick(world, model, rows, kick_inv_mass, kick_Iinv, factor, kick_v,
                            kick_w, h, rescaled=kick_inv_mass is not inv_mass)
        if kick_inv_mass is not inv_mass:
            kick_length = h * retimed.scale
        # (the call made only where a body without joints spins: a scene without one pays no
        # call a step for it)
        aimed = T if T_kick is T or T[model.tumbling].size == 0 else _aimed_torque(model, T,
                                                                                  T_kick)
        free = inverse_mass_times(kick.inv_mass, kick.Iinv, F, aimed)
        rhs_e = (seed_rhs(world, model, rows, free, kick.v, kick.w, opened) if model.m
                 else None)
        target = kept_targets(uni)
        # (a free top's contacts aim midway through the drift that its torque-free flow turns)
        aim = target if T_kick is T else midway_targets(world, model, uni, target, x, R,
                                                        kick.w, T, T_kick, h)
        lam, lam_b = bounded_multipliers(world, model, rows, rhs_e, uni, kick.inv_mass, kick.Iinv,
                                         free, kick.v, kick.w, h, kick.factor, target=aim)
        kick_lin, kick_ang = bounded_impulse(uni, lam_b, kick.inv_mass, kick.Iinv, n)
    elif model.m:
        lam = seed_multipliers(world, model, rows, factor, inv_mass, Iinv, F, T, v, w, opened)
        endpoint = _at_endpoint(_verlet_first_kick(world, n), n)
        if world.geometric_stiffness:
            tension = (_tension_at_own_spins(world, model, kin, rows, factor, lam, metric,
                                             endpoint, true_inverse_inertia)
                       if stiff_rows is None
                       else _pull_bounded(model, rows, factor, lam, stiff_rows))
            K_found = unresolved_stiffness(model, kin, tension, h)
        if not stiffness_carries(K, K_found):
            # newly stiff, no longer stiff, or the stiffness moved: take the one found here,
            # and the velocities into its metric (one more solve with the new factor)
            K, before = K_found, metric
            metric = _metric(K, h)
            Iinv = (true_inverse_inertia() if K is None
                    else augmented_inverse_inertia(R, inertia, K, h, model.dynamic))
            factor = model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
            if stabilize:
                v, w, kin, rows = _between_metrics(world, model, kin, rows, factor, Iinv,
                                                   before, metric, endpoint)
                T, T_kick = _with_gyroscopic(world, model, R, w, world._torque[:n])
            lam = seed_multipliers(world, model, rows, factor, inv_mass, Iinv, F, T, v, w,
                                   opened)
        if K is not None:
            world.stats["stiff_steps"] += 1
    if kick is None:
        kick = _Kick(inv_mass, Iinv, factor, v, w, damped=False)
    clock.lap("solve")
    acc_lin, acc_ang = generalized_acceleration(model, rows, lam, kick.inv_mass, kick.Iinv, F,
                                                T_kick)
    # With bounded rows in play the whole kick comes first (symplectic Euler), so that the
    # velocity the contacts aim at is the one the bodies move with. Without, half of it
    # (velocity Verlet), but all of it where the velocities are still the last drift's.
    if uni is None:
        first = _verlet_first_kick(world, n)
    v_half = kick.v + first * h * acc_lin + h * kick_lin
    w_half = kick.w + first * h * acc_ang + h * kick_ang

    def solved_again(cold=False):
        """The bounded rows (``uni`` and ``target`` as they are now) and the joints solved
        again: lam, lam_b and the velocities after the kick."""
        lam, lam_b = bounded_multipliers(world, model, rows, rhs_e, uni, kick.inv_mass,
                                         kick.Iinv, free, kick.v, kick.w, h, kick.factor,
                                         cold=cold, target=aim)
        kick_lin, kick_ang = bounded_impulse(uni, lam_b, kick.inv_mass, kick.Iinv, n)
        acc_lin, acc_ang = generalized_acceleration(model, rows, lam, kick.inv_mass, kick.Iinv,
                                                    F, T_kick)
        return (lam, lam_b, kick.v + first * h * acc_lin + h * kick_lin,
                kick.w + first * h * acc_ang + h * kick_ang)

    for _ in range(MAX_OVERRUN_SOLVES if uni is not None else 0):
        wider = with_overrun_limits(world, uni, v_half, w_half, h, unbounded)
        if wider is None:
            break
        # limits the solve turned joints past: solved again with them
        world.stats["overrun_solves"] += 1
        uni, target = wider, kept_targets(wider)
        aim = target if T_kick is T else midway_targets(world, model, uni, target, x, R,
                                                        kick.w, T, T_kick, h)
        lam, lam_b, v_half, w_half = solved_again()
    if uni is not None and _gains_too_much(world, model, q, R, v, w, v_half, w_half, h):
        world.stats["cold_solves"] += 1
        lam, lam_b, v_half, w_half = solved_again(cold=True)
    if not kick.damped:
        v_half, w_half = damped_velocities(world, v_half, w_half, h)
    # (a split's halves with bounded rows kick in the true metric, the stiffness being handed
    # on between whole steps only, and so will the next half: they project in it too.
    # Projected in a stiffness found here, their bodies' velocities, a drift's never carried
    # between metrics, were taken on by the next half's true kick as they were: after the
    # 10 kg ball on 10 light links landed, 50 degrees out at dt 1/60, each such half put
    # energy into the links whipping on the ground, and a StepError followed at 1.35 s)
    if uni is not None and depth == 0 and world.geometric_stiffness and lam.size:
        K_found = unresolved_stiffness(
            model, kin, _tension_at_own_spins(world, model, kin, rows, factor, lam, metric,
                                              _at_endpoint(first, n), true_inverse_inertia), h)
    if uni is not None and (pieces := _turn_pieces(world, model, uni, R, w_half, h)) > 1 and \
            _may_split(world, depth, uni):
        end = _split(world, model, x, q, v_start, w_start, h, depth, pieces)
        return end, StepReport(rows, lam, x, R, uni, lam_b, impact)

    if flow:
        rotation = free_rotation(R, inertia, w_half, h, model.flows)
        q1 = turn_quat(q, midpoint_rotation(R, w_half, rotation, h, inertia, model.flows))
    else:
        rotation, q1 = None, rotate_quat(q, h * w_half)
    drifted = w_half
    carry_angle_reference(world, q1, w_half, h)
    x1 = x + h * v_half
    shaken = q1                              # (the orientations before SHAKE)
    drift = None
    if stabilize:
        drift = (_corrected_drift(world, model, q, R, inertia, w_half, rotation, h)
                 if _turns_more_than(model, w_half, h, FAST_TURN) else None)
        err, x1, q1, v_half, w_half = correct_to_manifold(
            world, model, rows, factor, x1, q1, v_half, w_half, inv_mass, Iinv, h, drift)
        # SHAKE aims at position_tolerance; only a miss beyond projection_tolerance (a link
        # turning too far within h) splits the step. With contacts too: each half detects and
        # solves its own (the step reports the whole step's, as it reports its joints' lambda
        # at x). Projecting positions instead left such a whip's velocities as they were, and
        # two light bodies on a long distance joint hitting the ground went from 100 to
        # 10^6 rad/s in three steps.
        if not err <= world.projection_tolerance and _may_split(world, depth, uni):
            clock.lap("integrate")
            end = _split(world, model, x, q, v_start, w_start, h, depth)
            return end, StepReport(rows, lam, x, R, uni, lam_b, impact)   # the seed's lambda at x
        if err > world.projection_tolerance and np.isfinite(err):
            world.stats["projections"] += 1
            _missed(world, depth, uni)
            err, x1, q1 = project_positions(world, model, x1, q1, v_half, w_half)
    # unsaturated velocity motors: SHAKE turned their joints off h w (see motor_hold)
    motors_held = held_motors(world, model, uni, lam_b) if stabilize else None
    if motors_held is not None:
        x1, q1, v_half, w_half, motors_held, motor_move = held_positions(
            world, model, rows, factor, uni, motors_held, x1, q1, v_half, w_half, inv_mass, Iinv,
            h, lam_b, kick_length)
    if stabilize and uni is not None and uni.limit_found is not None:
        x1, q1 = held_at_limits(world, model, uni.limit_found.C, x1, q1, v_half, w_half,
                                shaken)
    if uni is not None and (target is not None or uni.impact_shift is not None):
        unpushed = q1
        x1, q1 = _pushed(world, model, rows, uni, inv_mass, Iinv, factor, x1, q1, v_half,
                         w_half, h, target is not None)
        if stabilize and uni.limit_found is not None and q1 is not unpushed:
            # the push's own projection onto the joints turns a light body as SHAKE does
            x1, q1 = held_at_limits(world, model, uni.limit_found.C, x1, q1, v_half, w_half,
                                    unpushed)
    R1 = quat_to_matrix(q1)
    if flow and w_half is not drifted:   # velocities at the end of the drift SHAKE corrected
        # (SHAKE's last corrected drift may have made this flow already)
        kept = None if drift is None else drift.flow_of(w_half)
        rotation = (free_rotation(R, inertia, w_half, h, model.flows, near=rotation)
                    if kept is None else kept)
    w_drift = (end_spin(R1, w_half, rotation, model.spinning) if flow
               else carry_with_bodies(R, R1, w_half))
    w_moved = w_drift                       # the spins the bodies turned with
    Iinv_end = Iinv_stiff = None            # the true (stiff) I^-1 at R1, if made here
    # the bodies that end the step at a state's velocity (Verlet's) rather than a drift's
    ending = None if uni is None else unbounded
    ends_in = _metric(K_found, h)           # the metric of the projection below
    if stabilize and not _same_metric(metric, ends_in) and (ending is None or ending.any()):
        # from this step's metric into the projection's, each body keeping its angular
        # momentum (the projection then takes it onto the joints there: _between_metrics)
        if K_found is None:
            Iinv_end = inverse_inertia_at(world, model, R1)
        else:
            Iinv_stiff = augmented_inverse_inertia(R1, inertia, K_found, h, model.dynamic)
        change = _metric_change(metric, ends_in, ending)
        w_drift = w_drift + einsum("nij,nj->ni", Iinv_stiff if Iinv_end is None else Iinv_end,
                                   _stiff_moment(R1, change, w_drift))
    # second half kick with the applied loads (the velocity projection supplies the joints');
    # with bounded rows, for the mechanisms they do not act on (see _to_drift)
    if uni is None:
        second, kicks = 0.5, True
    else:
        world._drift_only = ~unbounded
        kicks = bool(unbounded.any())
        second = 0.5 * unbounded[:, None] if kicks else 0.0
    kick_v = second * h * inv_mass[:, None] * F if kicks else 0.0
    kick_w = 0.0
    if kicks and np.any(T_kick):    # user torques (and the explicit gyroscopic term)
        if stabilize and K_found is not None:
            # in the projection's metric: it keeps the impulse I_aug dw, so a kick made with
            # the true inertia came out I_aug / I times too strong (a 2 N m torque on a small
            # sphere on a 1 m hinge put in 23.7 J for 8.8 J of work)
            if Iinv_stiff is None:
                Iinv_stiff = augmented_inverse_inertia(R1, inertia, K_found, h, model.dynamic)
            Iinv_kick = Iinv_stiff
        elif flow or (stabilize and K is not None):
            if Iinv_end is None:
                Iinv_end = inverse_inertia_at(world, model, R1)
            Iinv_kick = Iinv_end
        else:
            Iinv_kick = Iinv
        kick_w = second * h * einsum("nij,nj->ni", Iinv_kick, T_kick)
    v1, w1 = v_half + kick_v, w_drift + kick_w
    if stabilize:
        # the projection already takes the stiffness found here, which the next sub-step
        # kicks with: its factorisation is then the next one's (the stiffness lags one step)
        v1, w1 = project_velocities(world, model, x1, q1, v1, w1, K_found, h, R1, Iinv_end,
                                    Iinv_stiff)
        if motors_held is not None:
            # and onto the held motors' speeds; their efforts take both corrections
            lam_b = lam_b.copy()
            lam_b[motors_held.block_rows] += motor_move
            v1, w1, motor_push = held_velocities(world, model, motors_held, x1, R1, v1, w1,
                                                 lam_b.take(motors_held.block_rows),
                                                 kick_length)
            if motor_push is not None:
                lam_b[motors_held.block_rows] += motor_push
        if depth == 0:
            world._stiffness = K_found
    # the metric the velocities are in now
    world._velocity_metric = ends_in if stabilize else None
    # (the user loads of the second half kick, which the next step exchanges for its own)
    world._kicked_loads = _kicked_loads(world, h, inv_mass > 0 if uni is None else unbounded)
    if uni is None:
        world._to_drift = (v1 - v_half, w1 - w_moved)
        world._drift_only = None
    elif not unbounded.any():
        world._to_drift = None        # (nothing added: every body ends at its drift's velocity)
    else:
        # (and, where the metric changed, the spins' change into the projection's)
        kick_w = kick_w + (w_drift - w_moved) + np.zeros_like(w1)
        # the projection is linear: the next step's start, P(drift velocities), is the end
        # less the projected kick
        world._to_drift = (_projected(world, model, kick_v, kick_w) if stabilize
                           else (kick_v, kick_w))
    clock.lap("integrate")
    return (x1, q1, v1, w1), StepReport(rows, lam, x, R, uni, lam_b, impact)


# rad a body may turn within a step before the joints' angles are taken again at its drift
REFERENCED_TURN = 1.0


def carry_angle_reference(world, q1, w, h):
    """Where the bodies turn far within the step (w (N, 3) rad/s over h s, to orientations
    q1 (N, 4)), the turning joints' angles at q1, each taken nearest to where its rate
    carried the last one (``limits.continuous_angle``): the angles the rows evaluated there
    (SHAKE, the velocity projection, the limits and couplings of the next sub-step) and the
    step's end unwrap against. Unwrapped against the step's start instead, a disc turning
    4.2 rad a step on a 2:1 gear was put 1.26 rad off its turn every step. (A world without
    such joints has no angle to carry, and no turn to count: World._track_angles resets it.)"""
    table = world._turning_angles()
    if not table.owner.size:
        return
    world._turned_unreferenced += h * float(np.sqrt(einsum("ni,ni->n", w, w).max(initial=0.0)))
    if world._turned_unreferenced <= REFERENCED_TURN:
        return
    last = (world._angle_reference if world._angle_reference is not None
            else world._joint_angle)
    reference = last.copy()
    reference[table.owner] = table.at(quat_to_matrix(q1), w=w, h=h)[0]
    world._angle_reference = reference
    world._turned_unreferenced = 0.0


# The bounded rows' softness is centred on last step's multipliers (bounded.CONTACT_SOFTNESS),
# a proximal step: where their targets conflict (bodies made overlapping and jammed, each
# contact pushing out at up to contact_rows.MAX_PUSH_OUT against the others), the multipliers
# grow from step to step without bound, balanced until they are not: a heap of 30 bodies
# dropped into one another had contact forces of 10^6 N on 1 kg boxes, then one box at
# 1.4 km/s. So a kick of the bounded rows that gives the bodies more than KICK_GAIN times
# the kinetic energy they had, plus KICK_GAIN times what every body pushed out at
# MAX_PUSH_OUT (and falling for the step) would have, is solved again from zero, centred on
# zero. Ordinary steps stay far below it (impacts, kinematic bodies' too, are resolved before
# the kick): none of the ready scenes solves cold.
KICK_GAIN = 2.0


def _gains_too_much(world, model, q, R, v, w, v_kicked, w_kicked, h):
    """Whether the kick of a step with bounded rows (theirs, the joints' and the applied
    loads'), from velocities (v, w) to (v_kicked, w_kicked) (N, 3), raises the kinetic energy
    beyond the bound of KICK_GAIN."""
    if np.abs(v_kicked - v).max(initial=0.0) <= MAX_PUSH_OUT and \
            h * np.abs(w_kicked - w).max(initial=0.0) <= 0.1:
        return False     # (a kick too small to matter: a resting stack's, without two energies)
    before = kinetic_energy(world, q, v, w, R)
    after = kinetic_energy(world, q, v_kicked, w_kicked, R)
    if after <= KICK_GAIN * before:
        return False
    speed = MAX_PUSH_OUT + np.linalg.norm(world._gravity) * h
    pushed = 0.5 * world._mass[:world._n][model.dynamic].sum() * speed * speed
    return after > KICK_GAIN * (before + pushed)


def _split(world, model, x, q, v, w, h, depth, pieces=2):
    """The sub-step from (x, q, v, w) as ``pieces`` of h / pieces: the end state."""
    world.stats["splits"] += pieces - 1
    state = (x, q, v, w)
    for _ in range(pieces):
        state, _ = symplectic_substep(world, model, *state, h / pieces, depth + 1)
    return state


# How many times a step with bounded rows solves again with the limits its solve turned
# joints past (unilateral.with_overrun_limits): each time the swing rows so met are made
# about the turn the last solve gave, a Newton step on the cone.
MAX_OVERRUN_SOLVES = 2
