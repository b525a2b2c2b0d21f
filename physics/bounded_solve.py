"""The bounded rows solved together with the joints (``bounded_multipliers``): the choice of
method (direct, ``bounded.solve_bounded``, or iterative, ``iterative.solve_iterative``),
what the solve starts from and centres the rows' softness on (``bounded_warm_start``,
``softness_centre``, the velocity motors' ``MotorCentre``), and the rows it stops without the
softness' miss (``stopped_by_the_solve``, ``stopped_limits``). Forces in N (N m), velocities
in m/s, world frame.

Its own module because the step's solve is one stage (``symplectic`` calls it after the rows
are made and the impacts resolved), apart from making the rows (``unilateral``) and from the
impacts' passes (``impacts``).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .assembly import Pattern
from .bodyspace import BodySpace
from .bounded import CONTACT_SOFTNESS, solve_bounded
from .contact_rows import RESTITUTION_THRESHOLD, SLOP
from .feedforward import carried_contacts, motor_feedforward, velocity_motor_rows
from .iterative import VELOCITY_TOLERANCE, solve_iterative
from .limits import UPPER
from .motor_hold import SATURATED
from .rebound import _meeting
from .rows import Rows
from .unilateral import joint_space


def cached_pattern(world, a, b, inv_mass):
    """The sparsity of A for these rows, reused while the rows touch the same bodies (a
    resting pile keeps its contacts from step to step)."""
    key = (a.tobytes(), b.tobytes())
    cache = world._pattern_cache
    if key not in cache:
        if len(cache) >= 4:
            cache.pop(next(iter(cache)))
        cache[key] = Pattern(a, b, inv_mass > 0, world._n)
    return cache[key]


# "auto" solves directly while there are fewer bounded rows than DIRECT_BELOW and fewer rows
# in all (joints too) than DIRECT_ALL_BELOW: each round of the direct solve factorises the
# whole system. Measured (ms a step, direct against iterative): faster with a few contacts
# (humanoid_box, 4 contacts: 1.34 vs 2.25; Newton's cradle, 3: 0.86 vs 1.03), even with 28
# (car: 2.99 vs 2.96), and far slower with more contacts or joints (ragdoll pile of 4, 63
# contacts: 17.7 vs 3.3; dominoes, 202: 3.8 vs 2.2; a ragdoll pile of 10, 540 joint rows,
# at ~40 contacts: ~10 vs ~4).
DIRECT_BELOW = 150
DIRECT_ALL_BELOW = 300


def bounded_multipliers(world, model, rows, rhs_e, uni, inv_mass, Iinv, free, v, w, h, factor,
                        cold=False, target=None):
    """Solve joints and bounded rows together: the joints' rows keep the seed equation's
    right-hand side ``rhs_e`` (``seed.seed_rhs``; None without joints), the bounded rows aim
    at their end-of-step velocity targets. free: the applied loads' accelerations M^-1 Phi
    (``assembly.inverse_mass_times`` of the applied loads).

    ``world.contact_solver`` picks the method: "iterative" eliminates the joint rows with
    ``factor``, the joints' own factorisation of J M^-1 J^T + cfm, and solves the bounded rows
    by projected gradient methods (``iterative.solve_iterative``); "direct" solves the
    whole mixed problem with factorisations of the full matrix (``bounded.solve_bounded``);
    "auto" takes "direct" below DIRECT_BELOW bounded rows and DIRECT_ALL_BELOW rows in all.
    cold: start from zero multipliers, and centre the bounded rows' softness there, instead of
    on last step's (``bounded_warm_start``; see symplectic._gains_too_much). target (mb,): the
    bounded rows' velocity targets in place of the block's (those without their push:
    ``kept_targets``)."""
    block = uni.block
    target = block.target if target is None else target
    if cold:
        return _bounded_solve(world, model, rows, rhs_e, uni, inv_mass, Iinv, free, v, w, h,
                              factor, cold, target, None)
    args = (world, model, rows, rhs_e, uni, target, inv_mass, Iinv, free, v, w, h, factor)
    feedforward = _velocity_motors_feedforward(*args)
    lam_e, lam_b = _bounded_solve(world, model, rows, rhs_e, uni, inv_mass, Iinv, free, v, w,
                                  h, factor, cold, target, feedforward)
    if feedforward is not None:
        motors = feedforward.rows
        saturated = _saturated(lam_b.take(motors), block.lo.take(motors),
                               block.hi.take(motors))
        if not np.array_equal(saturated, feedforward.saturated):
            # the motors' centre took as forces other motors than the solve saturated: an
            # elbow's motor (10 N m) that a contact stopped in its first step, solved as a
            # row that met its 1 rad/s, left the shoulder's motor at speed 0 centred on
            # -3.0 N m where it needed 9.3, and the arm turned at -0.16 rad/s for a step (dt
            # 1/60): made again with the solve's, and solved again (once)
            world.stats["motor_resolves"] += 1
            feedforward = _velocity_motors_feedforward(*args, saturated=saturated)
            lam_e, lam_b = _bounded_solve(world, model, rows, rhs_e, uni, inv_mass, Iinv, free,
                                          v, w, h, factor, cold, target, feedforward)
    return lam_e, lam_b


def _bounded_solve(world, model, rows, rhs_e, uni, inv_mass, Iinv, free, v, w, h, factor,
                   cold, target, feedforward):
    """``bounded_multipliers`` with the velocity motors' centre ``feedforward``
    (``_velocity_motors_feedforward``; None: none): (lambda_E, lambda_B)."""
    block = uni.block
    solver = world.contact_solver
    if solver == "auto":
        few = block.rows.count < DIRECT_BELOW and block.rows.count + model.m < DIRECT_ALL_BELOW
        solver = "direct" if few else "iterative"
    if solver == "iterative":
        return _bounded_iterative(world, model, rows, rhs_e, uni, inv_mass, Iinv, free, v, w, h,
                                  factor, cold, target, feedforward)
    all_rows = Rows.concatenate([r for r in (rows, block.rows) if r is not None])
    m_eq = 0 if rows is None else rows.count
    pattern = cached_pattern(world, all_rows.a, all_rows.b, inv_mass)
    J, JM = pattern.sides(all_rows.Ja, all_rows.Jb, inv_mass, Iinv)
    rb = block.rows
    velocity = rb.velocity(v, w)
    rhs_b = (target - velocity) / h - rb.velocity(*free)
    parts_rhs, parts_lo, parts_hi = [rhs_b], [block.lo], [block.hi]
    parts_cfm = [world.cfm + block.cfm]
    if m_eq:
        parts_rhs.insert(0, rhs_e)
        parts_lo.insert(0, np.full(m_eq, -np.inf))
        parts_hi.insert(0, np.full(m_eq, np.inf))
        parts_cfm.insert(0, np.full(m_eq, world.cfm))
    fn = np.concatenate([np.full(m_eq, -1), np.where(block.friction_normal >= 0,
                                                     block.friction_normal + m_eq, -1)])
    lam0_b = np.zeros(rb.count) if cold else bounded_warm_start(world, uni, feedforward)
    lam0 = np.concatenate([np.zeros(m_eq), lam0_b])
    centre = softness_centre(uni, target, lam0_b)
    hard = _mark_stops(uni, velocity, lam0_b, h)
    exact = None if hard is None else np.concatenate([np.zeros(m_eq, dtype=bool), hard])
    if centre is not None:
        centre = np.concatenate([np.zeros(m_eq), centre])
    rhs, lo, hi = (np.concatenate(parts) for parts in (parts_rhs, parts_lo, parts_hi))
    cfm, mu = np.concatenate(parts_cfm), np.concatenate([np.zeros(m_eq), block.mu])
    hard_rows = (None if block.hard is None
                 else np.concatenate([np.zeros(m_eq, dtype=bool), block.hard]))
    # (an unsettled answer may leave a row short by what takes it MISSED_DEPTH deeper, as an
    # unconverged iterative solve may: rhs is in velocity / h)
    missed = MISSED_DEPTH / (h * h)
    lam, _, settled = solve_bounded(pattern, J, JM, rhs, lo, hi, cfm=cfm, friction_normal=fn,
                                    mu=mu, lam0=lam0, exact=exact, centre=centre, hard=hard_rows,
                                    missed=missed)
    if settled and hard is not None and hard[:uni.n_contact_rows // 3].any():
        lam, _, settled = solve_bounded(pattern, J, JM, rhs, lo, hi, cfm=cfm, friction_normal=fn,
                                        mu=mu, lam0=lam,
                                        centre=stops_recentred(lam0, centre, exact, lam),
                                        hard=hard_rows, missed=missed)
    if not settled:
        # the friction's bounds swung between the rounds (more friction takes load off the
        # normals): an arm's tip met the ground with 2770 N, then with none while its
        # friction, bounded by the 2770, stopped it, and so on; clipped to the last round's,
        # the answer had neither, and the tip sank 10 mm. The iterative solve bounds each
        # friction by its normal force at every step of its descent
        return _bounded_iterative(world, model, rows, rhs_e, uni, inv_mass, Iinv, free, v, w, h,
                                  factor, cold, target, feedforward)
    return lam[:m_eq], lam[m_eq:]


class MotorCentre(NamedTuple):
    """What the velocity motors' softness is centred on (``_velocity_motors_feedforward``):
    the motors' rows (indices into the bounded block) (k,), their forces (k,) (N m or N
    along each row), and which of them it took as forces at their bounds (k,) int (+1 at
    max_force, -1 at -max_force, 0 none)."""
    rows: np.ndarray
    force: np.ndarray
    saturated: np.ndarray


def _velocity_motors_feedforward(world, model, rows, rhs_e, uni, target, inv_mass, Iinv, free,
                                 v, w, h, factor, saturated=None):
    """MotorCentre: the velocity motors' rows in the block (k,), the force each needs to meet
    its speed with the joints and the contacts that pushed on their mechanisms last step, as
    rows met with them (``feedforward.carried_contacts``; their split of a load the motors
    could share nearest their own softness' centre), within its max_force, the motors
    ``saturated`` (k,) int (+1, -1: at their max_force, 0: not; None: those last step's
    solve ended at it) taken as forces there (``feedforward.motor_feedforward``); or None
    where there are no velocity motors."""
    motors = velocity_motor_rows(uni)
    if motors.size == 0:
        return None
    block = uni.block
    met = np.concatenate([motors, carried_contacts(uni, model.mechanism, inv_mass > 0,
                                                   motors)])
    sub = block.rows.at(met)
    rhs_m = (target.take(met) - sub.velocity(v, w)) / h - sub.velocity(*free)
    cfm = world.cfm + np.broadcast_to(block.cfm, (block.rows.count,)).take(met)
    lo, hi = block.lo.take(motors), block.hi.take(motors)
    centre = None
    if met.size > motors.size:
        # the carried contacts' least change from the forces their softness is centred on
        # (``softness_centre``), so that with the motors' centres they make one balance
        contact = np.zeros(block.rows.count)
        uni.put_contact_multipliers(uni.warm, contact)
        bounded = softness_centre(uni, target, contact)
        contact = contact if bounded is None else bounded
        centre = np.concatenate([np.full(motors.size, np.nan), contact.take(met[motors.size:])])
    if saturated is None:
        saturated = _saturated_last_step(world, uni, motors, lo, hi)
    lam = motor_feedforward(model, rows, rhs_e, sub, rhs_m, cfm, inv_mass, Iinv, factor,
                            world._n, lo, hi, centre, saturated)
    force = np.clip(lam[:motors.size], lo, hi)
    saturated = _saturated(force, lo, hi)
    return MotorCentre(motors, force, saturated)


def _saturated(force, lo, hi):
    """(k,) int: +1 (-1) where a velocity motor's ``force`` (k,) is at its upper (lower) bound
    hi (lo) (k,) (within motor_hold.SATURATED of it), else 0."""
    return ((force >= hi - SATURATED * np.abs(hi)).astype(np.int8)
            - (force <= lo + SATURATED * np.abs(lo)))


def _saturated_last_step(world, uni, motors, lo, hi):
    """``_saturated`` of the velocity motors' rows ``motors`` (k,) (indices into the bounded
    block) at last step's solved forces and their bounds lo, hi (k,) as they are now; None
    where last step made no limit rows."""
    if world._limit_warm is None:
        return None
    plan_rows, multipliers = world._limit_warm
    old = np.zeros(world._limit_plan_size())
    old[plan_rows] = multipliers
    return _saturated(old.take(uni.limit_rows.take(motors - uni.first_limit_row)), lo, hi)


# the fraction of its right-hand side a row may miss in the second solve of a step with
# stops met without the softness' miss (``stops_recentred``; iterative.RELATIVE_TOLERANCE
# in the others)
STOP_TOLERANCE = 1e-6


def stops_recentred(lam0, centre, exact, lam):
    """The softness' centre for a second solve of a step whose first met the ``exact`` rows
    (``_stopped_hard``) with their own rows' answer (``bounded.softened``), which is exact
    for a row alone: its first answer lam on those rows, lam0 or ``centre`` on the others.
    Rows that share a body are met by their answer together, to the softness' share of what
    the first missed: a capsule (or a box) met side-on at 1000 m/s at dt 1/60, two (four)
    contacts on one body, stopped 0.76 m/s short, 12.6 mm beyond a 2 mm wall's face and
    past its middle, and came out of the far side. Made only for contacts so met: limits,
    met so at any speed, are met well enough by their own answer, and a second solve for
    theirs made the 10-ragdoll pile's solves take 1.7 times as long."""
    recentred = np.zeros(lam.shape) if lam0 is None and centre is None else np.array(
        lam0 if centre is None else centre, dtype=float)
    recentred[exact] = lam[exact]
    return recentred


def bounded_warm_start(world, uni, feedforward=None):
    """What the bounded rows' solve starts from (and centres their softness on), either
    solver: the contacts' multipliers of last step (by feature key or position), and the limit,
    servo and joint friction rows' of the same rows of the plan (0 where the row was not made;
    the world drops them when the limits change, and World.set_state a snapshot's that do not
    fit the plan).

    Velocity motors start from, and centre on, ``feedforward``: (their rows (k,), the force
    each needs with the joints and the contacts that carry their load (k,))
    (``feedforward.motor_feedforward``), or no force
    where it is None (a cold solve). Beyond that force a velocity motor is a stiff velocity
    controller (a stalled one pushes with about 1e3 times its row's stiffness times the
    speed it misses, up to its max_force), and motors that work against each other through
    other rows hold a bounded load. Centred on last step's, such a load grew every step: the
    rear motors of a four-wheeled car on rigid axles pushed and the front ones braked,
    0.46 N m more each step, until the wheels slid at mu N (+-103 N m at 3 m/s)."""
    lam0 = np.zeros(uni.block.rows.count)
    if uni.n_contact_rows:
        uni.put_contact_multipliers(uni.warm, lam0)
    first = uni.first_limit_row
    if world._limit_warm is not None and lam0.size > first:
        plan_rows, multipliers = world._limit_warm
        old = np.zeros(world._limit_plan_size())
        old[plan_rows] = multipliers
        # (velocity motors: none, see above)
        old[uni.limit_plan.motor[uni.limit_plan.velocity_motor]] = 0.0
        lam0[first:] = old.take(uni.limit_rows)
    if feedforward is not None:
        lam0[feedforward.rows] = feedforward.force
    return lam0


# a pushing contact keeps last step's force as its softness' centre up to this many times the
# weight of all the dynamic bodies and the user's forces on them (``softness_centre``)
HELD_WEIGHTS = 2.0


def softness_centre(uni, target, lam0):
    """What the bounded rows' softness is centred on (``bounded.softened``): the warm start
    lam0 (mb,) (a contact that carries the same load from step to step meets its target
    exactly), but at most HELD_WEIGHTS times the weight of every dynamic body (and the
    forces applied to them: ``Unilateral.weight``) on the contacts' normal rows that push
    (a target above 0: beyond the slop); or None where that changes nothing.

    Centred on last step's force, a push that cannot happen is wound up: a box made 1 mm
    wider than the slot between two walls it is jammed in is pushed out of both, which no
    motion meets, and every step's solve added the same force again (its contacts held it
    by 25 kN more each step, 6 MN a second); so is one that the joints nearly forbid (a rod
    hung from a ball joint with its tip in the ground reached 0.97 MN as it swung out).
    With the centre bounded, such a push gives the bound plus the force the softness gives
    for the speed it misses, the same in every step. Centred on zero wherever they pushed,
    the contacts under a heavy body on a light one, pushed beyond the slop by the first
    step's miss, could not take up its load (a 1000 kg cube on a 1 kg plate sank 1.7 mm at
    dt 1/240, and at 1/60 it squeezed the plate out), and a tower of 30 boxes, whose
    iterative solves stop at their budget, sagged 18.5 mm instead of 6.5. (Limits keep last
    step's force: a limb resting on its limits rests within their slop, where placing it
    moves nothing.)"""
    k = uni.n_contact_rows // 3
    if k == 0:
        return None
    bound = HELD_WEIGHTS * uni.weight
    over = (target[:k] > 0.0) & (lam0[:k] > bound)
    if not over.any():
        return None
    centre = np.array(lam0, dtype=float)
    centre[:k][over] = bound
    return centre


# m/s: a one-sided row this far beyond its target at the warm start is left out of a long
# solve's working set (iterative._working_set). Over 10 steps of 1000 poured spheres, the rows
# left out at zero slack that had to join the set later started with at most 0.58 m/s of it
WORKING_SET_SLACK = 0.5


def _bounded_iterative(world, model, rows, rhs_e, uni, inv_mass, Iinv, free, v, w, h, factor,
                       cold=False, target=None, feedforward=None):
    """``bounded_multipliers`` by ``iterative.solve_iterative``: (lambda_E, lambda_B)."""
    n = world._n
    block = uni.block
    rb = block.rows
    B = BodySpace(rb, inv_mass, Iinv, n, uni.n_contact_rows, last_layout=world._bounded_layout)
    world._bounded_layout = B.layout
    block.body_space = B
    free_b = B.times_J(np.concatenate(free, axis=1).ravel())
    velocity = B.times_J(np.concatenate([v, w], axis=1).ravel())
    target = block.target if target is None else target
    rhs_b = (target - velocity) / h - free_b
    lam0 = None if cold else bounded_warm_start(world, uni, feedforward)
    exact = _mark_stops(uni, velocity, lam0, h)
    centre = None if cold else softness_centre(uni, target, lam0)
    E = None if rhs_e is None else joint_space(uni, model, rows, inv_mass, Iinv, n)

    def solve(start, budget, exact, centre, slack=None, relative_tolerance=None):
        return solve_iterative(B, rhs_b, block.lo, block.hi, world.cfm + block.cfm,
                               friction_normal=block.friction_normal, mu=block.mu, lam0=start,
                               E=E, rhs_e=rhs_e, tolerance=VELOCITY_TOLERANCE / h,
                               relative_tolerance=relative_tolerance, max_iterations=budget,
                               factorizer=model.pattern.factorizer if E is not None else None,
                               factor=factor, memory=world._solver_memory, slack=slack,
                               exact=exact, hard=block.hard, centre=centre)

    lam_e, lam_b, info = solve(lam0, world.contact_iterations, exact, centre,
                               WORKING_SET_SLACK / h)
    world.stats["contact_solves"] += 1
    world.stats["contact_iterations"] += info["iterations"]
    if info["residual"] > 1.0 and _missed_depth(B, E, lam_b, lam_e, free, v, w, target, h,
                                                uni.n_contact_rows // 3) > MISSED_DEPTH:
        # (on from where it stopped: the softness is centred there)
        lam_e, lam_b, info = solve(lam_b, MISSED_DEPTH_BUDGET * world.contact_iterations, exact,
                                   softness_centre(uni, target, lam_b))
        world.stats["contact_iterations"] += info["iterations"]
        world.stats["deep_misses"] += 1
    if exact is not None and exact[:uni.n_contact_rows // 3].any():
        # (its fraction of the right-hand side: the stops' own, 0.1 %, is what it is to meet)
        lam_e, lam_b, info = solve(lam_b, world.contact_iterations, None,
                                   stops_recentred(lam0, centre, exact, lam_b),
                                   relative_tolerance=STOP_TOLERANCE)
        world.stats["contact_iterations"] += info["iterations"]
    return (np.zeros(0) if lam_e is None else lam_e), lam_b


# m: an iterative solve that ends its budget unconverged with a contact that would end the
# step this much deeper than its target goes on for MISSED_DEPTH_BUDGET budgets more. In a
# wall of 95 boxes, 3100 rows, the 60 iterations of a 20 kg ball's hit at 30 m/s (dt 1/60)
# did not carry its momentum into the wall: the ball went 0.36 m into a box, on at
# 29.4 m/s; with 8 rows of boxes, 2300 rows, the same hit ended 2 cm in.
MISSED_DEPTH = 0.01
MISSED_DEPTH_BUDGET = 4


def _missed_depth(B, E, lam_b, lam_e, free, v, w, target, h, k):
    """How much deeper (m) than its target the deepest of the k contacts' normal rows (the
    first k of B) would end the step with the multipliers lam_b (and the joints' lam_e, E
    their BodySpace or None) from velocities v, w and the loads' accelerations free."""
    if not k:
        return 0.0
    u = np.concatenate([v + h * free[0], w + h * free[1]], axis=1).ravel() + h * B.times_W(lam_b)
    if E is not None:
        u += h * E.times_W(lam_e)
    return float(h * (target[:k] - B.times_J(u)[:k]).max(initial=0.0))


def stopped_by_the_solve(uni, velocity, h):
    """(K,) bool: the contacts that still approach faster than the restitution threshold once
    the impacts are resolved and meet within this step h (velocity (mb,): the bounded rows'
    velocities then, the contacts' normal rows first): the step's solve stops them
    (restitution 0), and their force this step is an impact's (m v / h), not a load that the
    next step will carry."""
    vn = velocity[:uni.n_contact_rows // 3]
    stopped = vn < -RESTITUTION_THRESHOLD
    if stopped.any():           # (a resting pile has none: 3 calls a step saved)
        stopped &= _meeting(uni.contacts.depth, vn, h)
    return stopped


def _mark_stops(uni, velocity, lam0, h):
    """Mark what this step's solve stops, from the bounded rows' velocities (mb,) and what
    they start from, lam0 (mb,; None: cold): ``uni.stopped`` (contacts), ``uni.limit_stopped``
    and ``uni.limit_start`` (what the limit rows start from: a stopped one's next warm start,
    reporting._store_contacts); and return the rows met without the softness' miss
    (``_stopped_hard``)."""
    uni.stopped = stopped_by_the_solve(uni, velocity, h)
    uni.limit_stopped = stopped_limits(uni, velocity, h)
    first = uni.first_limit_row
    uni.limit_start = np.zeros(uni.block.rows.count - first) if lam0 is None else lam0[first:]
    return _stopped_hard(uni, lam0, velocity, h)


def stopped_limits(uni, velocity, h):
    """(limit and motor rows,) bool, or None without them: the limit rows (not motors,
    servos or friction) that approach their bound faster than the restitution threshold
    and reach it within this step h (velocity (mb,): the bounded rows' velocities): this
    step's solve stops them, as it stops ``stopped_by_the_solve``'s contacts."""
    first = uni.first_limit_row
    if uni.limit_plan is None or first == uni.block.rows.count:
        return None
    rate, C = velocity[first:], uni.block.rows.C[first:]
    limit = uni.limit_plan.group.take(uni.limit_rows) <= UPPER
    return limit & (rate < -RESTITUTION_THRESHOLD) & (C + h * rate < 0.0)


def _stopped_hard(uni, lam0, velocity, h):
    """(mb,) bool over the bounded rows, or None for none: the rows this step's solve stops
    whose target is met without the softness' miss (``bounded.softened``), so that they stop
    at the surface or the bound instead of a thousandth of their speed beyond, from where
    the push-out sends them back. Only rows that start from no force (lam0 (mb,), None:
    cold):
    - the normal rows of contacts (``uni.stopped``; velocity (mb,): the rows' velocities,
      m/s) stopped so fast that the softness' miss (CONTACT_SOFTNESS of the speed, over
      the step h) would leave them in deeper than the slop: faster than 72 m/s at dt 1/240,
      18 m/s at 1/60 (a slower stop keeps the miss, and the push-out clears it within the
      slop), and not beyond already. Met so at any speed, a thrown whip of light bodies on
      a joint blew up, and in a heap of bodies made inside one another, jammed contacts
      that carried forces or pushed out flung bodies at 80 m/s;
    - the limit rows of ``uni.limit_stopped``, at any speed (a limit has no redundant rows
      whose load the softness must share out, and its slop is a milliradian), beyond their
      bound too. (Left to the softness there, a row stopped afresh every step stayed so: a
      rod pressed past its hinge limit by 600 N m, its row's softness centred on no force,
      missed its push back by a thousandth of the load's, 2.5 rad/s, which the push-out
      turned back by positions every step; it stood 0.17 rad past, reading -1.5 rad/s.)"""
    k = uni.stopped.size
    first = uni.first_limit_row
    stopped = uni.stopped
    # (none stopped, none stopped hard: a resting pile)
    hard = stopped & (CONTACT_SOFTNESS * h * -velocity[:k] > SLOP) if stopped.any() else stopped
    limits = uni.limit_stopped
    if not hard.any() and (limits is None or not limits.any()):
        return None
    rows = np.zeros(uni.block.rows.count, dtype=bool)
    rows[:k] = hard & (uni.contacts.depth - uni.contacts.lead < SLOP)
    if limits is not None:
        rows[first:] = limits
    if lam0 is not None:
        rows &= lam0 == 0.0
    return rows
