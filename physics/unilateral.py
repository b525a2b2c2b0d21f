"""The step's bounded rows: contacts (detected, turned into rows, warm started), joint limits
and motors; their solve together with the joints (``bounded_multipliers``: direct or
iterative); impacts resolved before it (``resolve_impacts``). Forces in N, impulses in N s,
velocities in m/s, world frame."""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from .assembly import Pattern, Scatter, inverse_mass_times, onto_rows
from .bodyspace import BodySpace
from .bounded import CONTACT_SOFTNESS, softened, solve_bounded
from .contact_rows import (KEPT_PUSH, MAX_PUSH_OUT, RESTITUTION_THRESHOLD, SLOP,
                           SPECULATIVE_TOUCH, BoundedRows, ContactFrames, contact_rows,
                           glide_speeds, gripping_friction, positional_warm_start,
                           projected_warm_start, row_ends, with_torque_rows)
from .feedforward import carried_contacts, motor_feedforward, velocity_motor_rows
from .motor_hold import SATURATED
from .contacts import detect, kinematic, live_contacts, warm_start
from .iterative import VELOCITY_TOLERANCE, solve_iterative
from .limits import UPPER, bounded_joint_rows, found_plan_rows, limits_overrun
from .math3d import cross, einsum, nonzero_rows
from .meeting import met_contacts, met_rows
from .rotation import body_inverse_inertia, world_inverse_inertia
from .rows import Rows
from .sleeping import check_reached, labels_reached, linked_labels


@dataclass
class Unilateral:
    """This sub-step's bounded rows (contacts first, then their rolling and spin friction,
    then limits and motors)."""
    block: BoundedRows
    owner: np.ndarray            # (mb,) joint index of each row, -1 for contacts
    contacts: object             # ContactSet (its packed_keys are the warm-starting keys)
    n_contact_rows: int
    frames: ContactFrames        # the contacts' rows' directions (contact_rows)
    warm: np.ndarray             # (K, 3) last step's multipliers of the same contacts, (K, 6)
    #                              with spin and rolling torques (contacts.warm_start; its
    #                              forces along the new rows where the frame turned, or of
    #                              the nearest contact: contact_rows.positional_warm_start)
    restitution: np.ndarray      # (K,)
    limit_rows: np.ndarray       # each limit and motor row's index in the coordinate plan
    torque_contacts: tuple       # the contacts of the spin, first and second rolling rows
    manifolds: object            # collision.Manifolds the next step's contacts may keep
    joint_space: object = None   # the joints' BodySpace, once an iterative solve needed it
    limit_plan: object = None    # limits.BoundedPlan that limit_rows index (None: no rows)
    limit_stopped: np.ndarray | None = None   # (limit rows,) bool: ``stopped_limits``
    limit_start: np.ndarray | None = None     # (limit rows,) what their solve started from
    stopped: np.ndarray | None = None   # (K,) bool: ``stopped_by_the_solve`` (by the solve)
    weight: float = 0.0                 # N: the weight of every dynamic body (softness_centre)
    limit_found: object = None          # limits.PlanRows: every plan row at the step's start
    # (dx, dtheta) (N, 3) each, m and rad, or None: where the impacts met within the step
    # move the bodies at the drift's end (``resolve_impacts``: each jump at its meeting time)
    impact_shift: tuple | None = None
    kin: object = None      # rows.Kinematics of the step's start the contacts were found at
    moving: np.ndarray | None = None    # (N,) bool: the kinematic bodies (contacts.kinematic)

    @functools.cached_property
    def first_limit_row(self) -> int:
        """The first limit or motor row (after the contacts' and their torque rows). (Made
        once: a step asks five times, which took 30 Python calls a step as a property.)"""
        return self.n_contact_rows + sum([c.size for c in self.torque_contacts])

    # The contacts' multipliers by contact, (K, 3): normal, tangent 1, tangent 2, or (K, 6)
    # with the rolling and spin friction's (spin, rolling 1, rolling 2; zero on contacts
    # without them), and by row: the normal rows, then the first and the second friction
    # rows, then the torque rows, run by run (spin, rolling 1, rolling 2) of their
    # torque_contacts (contact_rows, with_torque_rows).
    def _torque_rows(self):
        """(contacts, column of the (K, 6) multipliers, slice of the rows) per torque row
        run."""
        runs, start = [], self.n_contact_rows
        for column, contacts in enumerate(self.torque_contacts, 3):
            runs.append((contacts, column, slice(start, start + contacts.size)))
            start += contacts.size
        return runs

    def contact_multipliers(self, lam_b) -> np.ndarray:
        """The contacts' multipliers (K, 3) or (K, 6) in the rows' multipliers lam_b."""
        k = self.n_contact_rows // 3
        lam = lam_b[:3 * k].reshape(3, k).T
        if self.first_limit_row > 3 * k:
            lam = np.concatenate([lam, np.zeros((k, 3))], axis=1)
            for contacts, column, rows in self._torque_rows():
                lam[contacts, column] = lam_b[rows]
        return lam

    def put_contact_multipliers(self, lam, out):
        """The contacts' multipliers lam (K, 3) or (K, 6) into their rows of out (mb,) (the
        torque rows only from a (K, 6) lam)."""
        k = self.n_contact_rows // 3
        out[:3 * k] = lam[:, :3].T.reshape(-1)
        if lam.shape[1] == 6:
            for contacts, column, rows in self._torque_rows():
                out[rows] = lam[contacts, column]


def joint_space(uni, model, rows, inv_mass, Iinv, n):
    """The joints' rows in body space (BodySpace on the model's columns), made once a
    sub-step: the impact passes and the bounded solve share it."""
    if uni.joint_space is None:
        uni.joint_space = BodySpace(rows, inv_mass, Iinv, n, layout=model.scatter)
    return uni.joint_space


def _time_constant(world, h) -> float:
    """s: the stabilisation time T the bounded rows push out with (2 / d of the world's
    Baumgarte gains, or 4 h without damping)."""
    d = world._baumgarte[1]
    return 1.0 / d * 2.0 if d > 0 else 4 * h


def unilateral_rows(world, model, kin, h, load=None):
    """Bounded rows of this sub-step, or None when there are none. load (n, 3): the bodies'
    accelerations by the applied loads (m/s^2), which turn sticking contacts' friction rows
    (``contact_rows.friction_frame``)."""
    T = _time_constant(world, h)
    moving = kinematic(world)
    world._clock.lap("rows")
    # (what the user's forces add within the step counts in the reach: a ball pushed with
    # 1e4 N for one step at dt 1/60 went through a 10 cm floor that the same speed, set as
    # its velocity, did not)
    pushed = world._force[:world._n]
    reach_v = kin.v if not pushed.any() else kin.v + h * world._inv_mass[:world._n, None] * pushed
    cs, manifolds = detect(world, model, kin.x, kin.R, reach_v, h, moving, kin.w)
    world._clock.lap("collide")
    # (an awake or kinematic body reaching a sleeping one)
    check_reached(world, cs.body_a, cs.body_b, moving)
    if moving.any():
        cs = live_contacts(world, cs)
    tables = world._limit_tables()
    # (the plan's rows are made here, before the contacts' rows: which motors a contact's push
    # would turn is read off them, ``held_contacts_kept_push``)
    plan_found = None if tables.plan is None else found_plan_rows(
        tables, kin, h, _user_load(world, model, kin))
    blocks, owners = [], []
    if not len(cs):
        frames = ContactFrames.empty()
        warm, e = np.zeros((0, 3)), np.zeros(0)
        torque_contacts = (np.zeros(0, dtype=np.intp),) * 3
    else:
        a, b = cs.body_a, cs.body_b
        # (gathers by take: numpy's fancy indexing costs ~1 us more a call)
        friction, restitution = world._friction, world._restitution
        mu = np.sqrt(friction.take(a) * friction.take(b))
        e = np.maximum(restitution.take(a), restitution.take(b))
        warm, found, src = warm_start(world, cs.packed_keys)
        rolling_friction = world._rolling_friction
        rolling = np.maximum(rolling_friction.take(a), rolling_friction.take(b))
        # (which contacts slid last step: their warm start is projected, and they grip not)
        slid = world._contacts.sliding.take(src) if found.any() else found
        grip = gripping_friction(world._contacts, src, found, slid, mu, cs.pair_keys)
        glide = glide_speeds(mu, world._gravity, h)
        ends = world._contact_row_ends = row_ends(a, b, world._contact_row_ends)
        block, frames = contact_rows(kin, a, b, cs.point, cs.normal, cs.depth, mu, h, T, load,
                                     rolling > 0, grip, glide,
                                     cs.lead if cs.lead.any() else None, ends,
                                     held_contacts_kept_push(world, model, kin, tables.plan,
                                                             plan_found, cs))
        # the friction rows turn with the slip, the roll and the load (the frame of the
        # normal alone only where all are slow): where they turned, the warm start is last
        # step's forces along the new rows. (So are those that slid last step. A contact
        # whose rows followed its load or its roll last step, but not now, starts from its
        # multipliers along its new rows: a warm start a step off where a push ends. Telling
        # them apart by their forces cost a 55-box pyramid 30 us a step; projecting every
        # contact's forces changed its warm start by round-off, and its settling took 118
        # iterations over 48 steps instead of 82.)
        frame = (cs.normal, *frames.tangents, *frames.roll_tangents)
        turned = found & (frames.turned | slid)
        if turned.any():
            dst = turned.nonzero()[0]
            warm = projected_warm_start(world._contacts, src.take(dst), dst, frame, warm)
        warm = positional_warm_start(world._contacts, a, b, cs.point, frame, warm, found)
        spin_friction = world._spin_friction
        block, torque_contacts = with_torque_rows(
            block, frames, np.maximum(spin_friction.take(a), spin_friction.take(b)), rolling)
        blocks.append(block)
        owners.append(np.full(block.rows.count, -1, dtype=np.intp))
    limit_block, limit_owner, limit_rows, found = bounded_joint_rows(tables, h, T, plan_found)
    if limit_block is not None:
        blocks.append(limit_block)
        owners.append(limit_owner)
    merged = BoundedRows.concatenate(blocks)
    if merged is None:
        return None
    return Unilateral(merged, np.concatenate(owners), cs, 3 * len(cs), frames, warm, e,
                      limit_rows, torque_contacts, manifolds, limit_plan=tables.plan,
                      weight=_weight(world, model), limit_found=found, kin=kin,
                      moving=moving)


def held_contacts_kept_push(world, model, kin, plan, found, cs):
    """Of the push-out of each contact of ``cs`` (ContactSet, K contacts), what the bodies
    keep as speed (m/s, ``contact_rows`` ``kept``): contact_rows.KEPT_PUSH, but none on a
    contact that a velocity motor of the ``plan`` (limits.BoundedPlan, or None; its rows at
    kin, ``found``: limits.PlanRows) holds: one between two dynamic bodies of one mechanism
    (``model.mechanism``) that such a motor drives, or one whose push turns such a motor's
    joint (``pushes_held_motor``); the scalar where no contact is so.

    A velocity motor holds its joint's speed, and a push kept as speed between two links of
    its mechanism is a speed of the joints between them: the step's solve set the two
    against each other, each missing its target by its share of the rows' softness. Two
    links of a 6-link arm held by motors at speed 0 (1e4 N m), made 10 mm into one another
    near a pin, pushed with 7.8 kN at dt 1/240 and 33 kN at 1/1000 (the softness' force for
    the speed missed, over h), kept their joints turning at up to 1.1 rad/s, and where the
    push fell below KEPT_PUSH (all of it asked as speed) the motors won: the links stayed
    1.1 mm deep, held apart by 8.5 kN. So does a link pushed out of a body outside its
    mechanism: a 2 kg, 1 m rod on a hinge held at speed 0, its tip 10 mm into a static
    block, pushed with 4.2 kN against 3.8 kN m at dt 1/240 and with 11 kN against the
    motor's whole 1e4 N m at 1/1000. Made by positions alone, the push is no speed for the
    motors to fight (Box2D v2's split of the position correction from the velocity solve).
    (Made so for every contact on a driven mechanism, the car scene's wheels, whose pushes
    out of the ground turn no motor, took the push's own solve in 447 of 600 steps: 4796
    calls a step against 3939.)"""
    if plan is None or not plan.velocity_motor.any():
        return KEPT_PUSH
    a, b = cs.body_a, cs.body_b
    inv_mass = world._inv_mass[:world._n]
    motors = plan.motor[plan.velocity_motor]
    ends = np.concatenate([plan.a.take(motors), plan.b.take(motors)])
    dynamic = inv_mass > 0
    label = model.mechanism
    driven = labels_reached(label, ends[dynamic.take(ends)])
    label_a = label.take(a)
    held = (dynamic.take(a) & dynamic.take(b) & (label_a == label.take(b))
            & driven.take(label_a))
    held |= pushes_held_motor(world, model, kin, found, cs, motors, ends)
    return np.where(held, 0.0, KEPT_PUSH) if held.any() else KEPT_PUSH


# of a contact's push on a body (its row's velocity change, M^-1 J^T), the least share along
# a velocity motor's row at that body (the cosine of the two rows in the M^-1 metric) that
# makes the push one the motor holds. The car scene's wheels pushed out of the ground share
# <= 1.3e-9 with their spin motors over its first 630 steps (round wheels: the push passes
# through the axle); a rod on a hinge pushed out of a block near its tip, 0.66 to 0.74.
HELD_PUSH_SHARE = 0.05


def pushes_held_motor(world, model, kin, found, cs, motors, body):
    """(K,) bool: which contacts of cs (ContactSet) push a dynamic body along the row of a
    velocity motor (``motors``: plan rows, limits.BoundedPlan; ``found``: limits.PlanRows,
    their Jacobians; ``body``: their body_a rows, then their body_b rows) at that body by
    more than HELD_PUSH_SHARE of the push (the cosine of the contact's normal row and the
    motor's row on that body, in the body's M^-1 metric): a push the motor, holding its
    joint's speed, would have to give way to."""
    held = np.zeros(len(cs), dtype=bool)
    inv_mass = world._inv_mass[:world._n]
    ends = np.zeros(inv_mass.size, dtype=bool)
    ends[body] = True
    ends &= inv_mass > 0
    # (only a contact deeper than the slop pushes: of the car scene's 630 steps, 466 have one)
    pushed = np.flatnonzero((cs.depth - cs.lead > SLOP)
                            & (ends.take(cs.body_a) | ends.take(cs.body_b)))
    if not pushed.size:
        return held
    # every (pushed contact, motor row) pair on one dynamic body: the motor row's a (side 0)
    # or b (side 1) in ``body``; a few contacts and motors: one comparison of all with all
    touching = np.concatenate([cs.body_a.take(pushed), cs.body_b.take(pushed)])
    touching = np.where(ends.take(touching), touching, -1)
    contact, end = np.nonzero(touching[:, None] == body)
    contact = pushed.take(contact % pushed.size)
    on_body = body.take(end)
    J = found.J.take(np.concatenate([motors, motors]).take(end), axis=0)
    J = np.where((end < motors.size)[:, None], J[:, :6], J[:, 6:])
    n = cs.normal.take(contact, axis=0)
    r = cs.point.take(contact, axis=0) - kin.x.take(on_body, axis=0)
    turn = cross(r, n)
    Iinv = _inverse_inertia_of(world, model, kin, on_body)
    m = inv_mass.take(on_body)
    J_lin, J_ang = J[:, :3], J[:, 3:]
    I_turn = einsum("nij,nj->ni", Iinv, turn)
    across = m * einsum("ij,ij->i", J_lin, n) + einsum("ij,ij->i", J_ang, I_turn)
    motor_self = m * einsum("ij,ij->i", J_lin, J_lin) + einsum(
        "ij,ij->i", J_ang, einsum("nij,nj->ni", Iinv, J_ang))
    push_self = m + einsum("ij,ij->i", turn, I_turn)
    share = np.abs(across) / np.sqrt(np.maximum(motor_self * push_self, 1e-300))
    held[contact[share > HELD_PUSH_SHARE]] = True
    return held


def with_overrun_limits(world, uni, v, w, h, unbounded):
    """``uni`` with the rows of the limits that the solve's velocities v, w (N, 3) would carry
    past (``limits.limits_overrun``) made too, on the mechanisms it acts on (``unbounded``
    (N,) bool: those it does not), or None where there are none: the step solves again with
    them."""
    found = uni.limit_found
    if found is None:
        return None
    tables = world._limit_tables()
    found = limits_overrun(tables, found, v, w, h, ~unbounded)
    if found is None:
        return None
    block, owner, rows, found = bounded_joint_rows(tables, h, _time_constant(world, h), found)
    first = uni.first_limit_row
    merged = BoundedRows.concatenate([uni.block.head(first), block])
    return replace(uni, block=merged, owner=np.concatenate([uni.owner[:first], owner]),
                   limit_rows=rows, limit_stopped=None, limit_start=None, stopped=None,
                   limit_found=found)


def _inverse_inertia_of(world, model, kin, rows):
    """(r, 3, 3) the world inverse inertias (1/(kg m^2)) of the bodies ``rows`` (r,) at the
    step's start (kin), computed for them alone."""
    return world_inverse_inertia(kin.R.take(rows, axis=0),
                                 body_inverse_inertia(world, model).take(rows, axis=0))


def _user_load(world, model, kin):
    """The accelerations (lin, ang), (N, 3) each (m/s^2, rad/s^2), that the user's forces and
    torques queued for this step give the bodies, or None where none are queued."""
    n = world._n
    force, torque = world._force[:n], world._torque[:n]
    if not (force.any() or torque.any()):
        return None
    inv_mass = world._inv_mass[:n]
    ang = np.zeros((n, 3))
    turned = np.flatnonzero(nonzero_rows(torque))
    if turned.size:         # (the world inertias of the bodies turned only)
        Iinv = _inverse_inertia_of(world, model, kin, turned)
        ang[turned] = inverse_mass_times(inv_mass.take(turned), Iinv,
                                         force.take(turned, axis=0),
                                         torque.take(turned, axis=0))[1]
    return inv_mass[:, None] * force, ang


def _weight(world, model) -> float:
    """N: the weight of every dynamic body, and the user's forces on them this step (a 1 kg
    box pressed onto the floor with 1e5 N sank through it: its contact's force was capped
    at twice its weight)."""
    n = world._n
    g = world._gravity
    weight = float(np.sqrt(g @ g) * model.dynamic_mass_sum)
    pushed = world._force[:n]
    if pushed.any():
        weight += float(np.sqrt((pushed * pushed).sum(axis=1)).sum(where=world._inv_mass[:n] > 0.0))
    return weight


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
    parts_rhs, parts_lo, parts_hi, parts_cfm = [rhs_b], [block.lo], [block.hi], [world.cfm + block.cfm]
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


# Impacts are solved nearly hard and to 1e-6 of the bounce: a 0.1 % shortfall per contact left
# a Newton's cradle's resting balls creeping along together and took 0.7 % of the swing's
# energy at every knock.
IMPACT_SOFTNESS = 1e-7
IMPACT_TOLERANCE = 1e-6
# rounds of spreading a pass's earliest times through its chains of struck bodies before
# they are labelled instead (``_earliest_in_islands``; a pour's take 2-4)
SPREAD_ROUNDS = 16


@dataclass
class ImpactRows:
    """An impact pass's rows (Rows) with their velocity targets (m/s) and the bounds on
    their impulses (N s), (c,) each; or, solved among the pass's bodies only
    (``_impact_among_bodies``), the rows as ``space`` (BodySpace on ``bodies``, numbered in
    that order), made once for the pass's bounce and friction (``_PassBodies``), whether
    they are ``separate`` (no body that moves on two of them: their J M^-1 J^T is
    diagonal), and rows None."""
    rows: Rows | None
    target: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    space: BodySpace | None = None
    bodies: np.ndarray | None = None
    separate: bool = False


class _PassBodies:
    """The bodies (b,) of an impact pass's c contacts' rows ``rows`` (3 c: their normal rows,
    then their first and their second friction rows, as ``contact_rows`` lays them), as one
    BodySpace on those bodies only: made once a pass, where its bounce and its friction
    solve each made their own (the mark of the world's bodies, M^-1 of the rows, the layout);
    each takes its rows (``rows``)."""

    def __init__(self, rows, n, inv_mass, Iinv):
        # (np.unique's sort costs more than marking the world's bodies; a contact's friction
        # rows are on its normal row's bodies)
        mark = np.zeros(n, dtype=np.intp)
        mark[rows.a] = mark[rows.b] = 1
        self.bodies = mark.nonzero()[0]
        mark[self.bodies] = np.arange(self.bodies.size)
        self.a, self.b = mark.take(rows.a), mark.take(rows.b)
        inv_mass, Iinv = inv_mass.take(self.bodies), Iinv.take(self.bodies, axis=0)
        self.space = BodySpace(rows.on_bodies(self.a, self.b), inv_mass, Iinv,
                               self.bodies.size)
        # (the ufunc's own reduce: ndarray.any adds two Python layers)
        self.moves = (inv_mass > 0.0) | np.logical_or.reduce(Iinv.reshape(-1, 9) != 0.0, axis=1)

    def rows(self, index):
        """(the BodySpace of rows ``index`` of the pass's 3 c rows, the bodies it is on,
        whether no body that moves is on two of them), for ImpactRows' space, bodies and
        separate."""
        a, b = self.a.take(index), self.b.take(index)
        ends = np.concatenate([a.compress(self.moves.take(a)), b.compress(self.moves.take(b))])
        return self.space.at(index), self.bodies, np.bincount(ends).max(initial=0) <= 1


def resolve_impacts(world, model, rows, uni, inv_mass, Iinv, v, w, h, factor=None, load=None,
                    max_passes=32):
    """Impacts as a sequence of velocity jumps before the step's solve, each made where the
    bodies meet within the step.

    Each pass takes the contacts that still approach faster than the restitution threshold
    and meet within the step, and solves for the impulses (lambda >= 0, with the joints'
    velocity rows) that send them apart at e times the speed they meet at
    (``rebound_speed``). A contact meets its surface t* into the step (its gap closed under
    its approach and the loads); its jump is made at t*, not at the step's start: the
    bodies move by the jump times -t* at the drift's end (``Unilateral.impact_shift``), so
    that they end the step where the reflected motion puts them, having turned at the face
    (a jump made at the step's start turned them up to a step's travel before they
    touched). Later passes see the gaps as those moves leave them (a Newton's cradle's
    second ball is struck at the time the first meets it), and the step's solve aims the
    contacts' rows at the gaps they leave at the drift's end (but for those the impacts
    leave separating: they need no force).

    A contact that was at rest when the pass began takes no part in it, so a Newton's cradle
    passes its momentum ball by ball, as the real one does through its tiny gaps, unless it
    is one of restitution 0 that the struck bodies rest on something through (``_supports``:
    a crate on the floor, which the floor holds; it takes its blow when the crate is
    struck). h: the sub-step; factor: the factorisation of the joints' A + cfm at ``Iinv``
    (the step's own); load (n, 3): the bodies' accelerations by the applied loads (m/s^2;
    None: none). Returns the new velocities and the impulses (N s) that made them, or None
    without impacts: the contacts' (K, 3), along the normal, then the two friction rows of
    ``uni.frames``, and the joint rows' (m,) (None without joints), which the step reports
    with its forces.

    An impact's friction is Coulomb's over the impulse: after each pass's bounce, a pass of
    its contacts' friction rows, each up to mu times its normal impulse (the bounce's part
    too), against the slip, enough to stop it where that suffices (a ball struck obliquely
    leaves rolling; its rows turn each body about its own surface point, which meet, not
    the contact's point midway across the gap: ``contact_rows.surface_points``). Left to
    the step's solve, which a bouncing contact leaves separating with no load, a bounce had
    none: a ball meeting the ground at 3 m/s sideways and 3 m/s down, e 0.5 and mu 0.3,
    left at 3 m/s with no spin, where at e 0 it left rolling at 5/7 of that. Solved with
    the bounce in one pass, Newton's restitution and the friction that turns a body met off
    its centre (a spinning rod landing on its end) gave it energy (Kane's paradox: +40 % in
    a bounce of e 1, mu 1); a friction pass after the bounce, a slip brought towards zero by
    an impulse along it, takes energy only."""
    bouncy = uni.restitution > 0          # (empty without contacts)
    if not bouncy.any():
        return v, w, None
    k = uni.n_contact_rows // 3
    n = world._n
    block = uni.block
    normal = block.rows.at(slice(k))
    contact_rows = block.rows.at(slice(3 * k))    # (normals, then both friction runs)
    depth = uni.contacts.depth
    joints = rows is not None and rows.count
    # the normal rows' velocities once, then again only for the rows of bodies a pass moved
    # (a pass is a handful of hits among thousands of contacts); likewise how far the
    # jumps' moves (``shift``) close each contact's gap (m)
    vn = normal.velocity(v, w)
    closing = impulses = shift = closed = None
    live = bouncy       # (the bouncy contacts not found to miss the step: copied to mark one)
    # (touching contacts of restitution 0, which may carry a pass's blows, ``_supports``:
    # none in a bin of bouncing marbles, whose passes then skip it)
    may_hold = ((uni.restitution == 0) & (depth > -SPECULATIVE_TOUCH)).any()
    for _ in range(max_passes):
        # (a pass's tests on the contacts that approach, not on all K: a pile's thousands)
        near = ((vn < -RESTITUTION_THRESHOLD) & live).nonzero()[0]
        if not near.size:
            break
        if closing is None and load is not None:    # (once, and only when something closes)
            pulled = load + _held_by_contacts(world, inv_mass)
            closing = normal.velocity(pulled, np.zeros_like(pulled))
        gap_near = -depth.take(near) if closed is None else closed.take(near) - depth.take(near)
        vn_near = vn.take(near)
        # (meeting within the step with the loads' kick: a ball that the kick alone brought
        # to the face by the step's end was stopped there by the step's solve, losing the
        # kick's speed, and bounced the next step off the stop's force taken for support: it
        # rose 17 % short of e^2 at dt 1/60)
        meet = _meeting(-gap_near, vn_near if closing is None
                        else vn_near + h * closing.take(near), h)
        idx = near.compress(meet)
        if not idx.size:
            break
        pull = None if closing is None else closing[idx]
        vn_hit, gap_hit = vn_near.compress(meet), gap_near.compress(meet)
        when = meeting_time(vn_hit, gap_hit, pull, h)
        meets = ~np.isnan(when)
        if not meets.all():
            live = live.copy() if live is bouncy else live
            live[idx[~meets]] = False
            if not meets.any():
                continue
            idx, when = idx[meets], when[meets]
            vn_hit, gap_hit = vn_hit[meets], gap_hit[meets]
            pull = None if pull is None else pull[meets]
        # the contacts where their bodies meet: the gap closed along the normal of the
        # surfaces there, the bounce made along it (``meeting``)
        met = None if uni.kin is None else met_contacts(world, uni, idx, when, v, w, shift, h)
        if met is not None:
            if met.changed.any():
                when = met.when
            else:
                met = None
        if when.size > 1 and np.ptp(when) > 0.0:
            earliest = _earliest_in_islands(normal.a.take(idx), normal.b.take(idx), when,
                                            inv_mass > 0, model.mechanism)
            if met is not None and (earliest != when)[met.changed].any():
                met = met_contacts(world, uni, idx, earliest, v, w, shift, h, refine=met)
                met = met if met is not None and met.changed.any() else None
            when = earliest
        if met is not None:
            changed = met.changed.nonzero()[0]
            new_rows, new_mu = met_rows(world, uni, idx, met, v, w, h, _time_constant(world, h))
            met_normal = new_rows.at(slice(changed.size))
            vn_hit[changed] = vn_met = met_normal.velocity(v, w)
            t = when.take(changed)
            if pull is None:
                gap_hit[changed] = met.gap.take(changed) - vn_met * t
            else:
                pull = pull.copy()
                pull[changed] = a_met = met_normal.velocity(pulled, np.zeros_like(pulled))
                gap_hit[changed] = (met.gap.take(changed)
                                    - (vn_met + 0.5 * h * a_met + 0.5 * a_met * t) * t)
        target = rebound_speed(uni.restitution[idx], vn_hit, gap_hit, pull, h, when)
        if may_hold:
            hit = np.zeros(k, dtype=bool)
            hit[idx] = True
            held, held_when = _supports(normal, depth, hit, uni.restitution, inv_mass, n, when)
        else:
            held = ()
        if len(held):
            idx = np.concatenate([idx, held])
            target = np.concatenate([target, np.zeros(held.size)])
            when = np.concatenate([when, held_when])
        if impulses is None:
            impulses = (np.zeros((k, 3)), np.zeros(rows.count) if joints else None)
            shift = (np.zeros((n, 3)), np.zeros((n, 3)))
            closed = np.zeros(k)
        c = idx.size
        # the pass's rows: its contacts' normal rows, then their first and second friction
        # rows, those of the contacts met elsewhere made there
        pass_rows = contact_rows.at(np.concatenate([idx, idx + k, idx + 2 * k]))
        pass_mu = block.mu.take(np.concatenate([idx + k, idx + 2 * k]))
        if met is not None:
            m = changed.size
            at = np.concatenate([changed, c + changed, 2 * c + changed])
            for field in ("a", "b", "C", "Ja", "Jb", "Jdu"):
                getattr(pass_rows, field)[at] = getattr(new_rows, field)
            pass_mu[np.concatenate([changed, c + changed])] = new_mu[m:]
        # without joints an iterative step solves each pass among its bodies only
        among = (_PassBodies(pass_rows, n, inv_mass, Iinv)
                 if world.contact_solver != "direct" and not joints else None)
        bounce = (ImpactRows(None, target, np.zeros(c), np.full(c, np.inf),
                             *among.rows(np.arange(c))) if among is not None
                  else ImpactRows(pass_rows.at(slice(c)), target, np.zeros(c),
                                  np.full(c, np.inf)))
        v, w, p, moved = _impact_pass(world, model, rows, uni, bounce, impulses, v, w, inv_mass,
                                      Iinv, factor, when, shift)
        pass_p = np.zeros(3 * c)         # (the pass's impulses by its rows)
        pass_p[:c] = p
        # then the contacts' friction, up to mu times the normal impulse, against the slip
        rubs = np.concatenate([idx + k, idx + 2 * k])
        grip = np.concatenate([p, p]) * pass_mu
        rubbed = (grip > 0.0).nonzero()[0]
        if rubbed.size:
            rubs, grip = rubs.take(rubbed), grip.take(rubbed)
            friction = (ImpactRows(None, np.zeros(rubbed.size), -grip, grip,
                                   *among.rows(c + rubbed)) if among is not None
                        else ImpactRows(pass_rows.at(c + rubbed), np.zeros(rubbed.size), -grip,
                                        grip))
            v, w, p_t, more = _impact_pass(world, model, rows, uni, friction, impulses, v, w,
                                           inv_mass, Iinv, factor,
                                           np.concatenate([when, when]).take(rubbed), shift)
            pass_p[c + rubbed] = p_t
            moved = (moved, more)
        _report_pass(impulses[0], pass_p, idx, contact_rows, pass_rows,
                     None if met is None else changed, k)
        vn, closed = _normal_velocity_update(normal, (vn, closed), (v, shift[0]),
                                             (w, shift[1]), moved, n)
    if closed is not None and closed.any():
        # the step's solve aims each contact at its gap at the drift's end, moves included,
        # but for a contact that the moves bring closer and the impacts leave separating: its
        # gap stayed open until its bodies' first meeting (the impacts' time) and opens after,
        # so it needs no force. Its end gap by the rows' linear terms (the moves' first-order
        # turn, the kick's explicit gyroscopic torque at the spin before the jump) can be cm
        # off for a body turning fast, and a solve aimed there pushed the rebounding contact,
        # adding its impulse times the rebound speed: a frictionless e 1 box (10 kg, 128 J)
        # tumbling at dt 1/60 gained 2.34 J in a step (0.44 N s on a corner leaving at 5 m/s
        # and ending 12 mm up without it)
        uni.impact_shift = shift
        target = block.target.copy()
        target[:k] -= np.where((vn > 0.0) & (closed < 0.0), 0.0, closed) / h
        block.target = target
    return v, w, impulses


def _report_pass(report, p, idx, contact_rows, pass_rows, met, k):
    """Add an impact pass's impulses p (3 c,) (N s: by its rows ``pass_rows``, as
    ``resolve_impacts`` lays them) to the contacts' ``report`` (K, 3) (along the rows of the
    step's start, ``contact_rows``: normal, first and second friction row), in place: by row,
    and for the contacts ``met`` (indices into the c, or None) made along the rows where they
    meet, their impulse's vector along the rows of the start (the three are orthonormal),
    so that the reported forces are the blow the bodies took."""
    c = idx.size
    rows = np.concatenate([idx, idx + k, idx + 2 * k])
    if met is not None and met.size:
        at = np.concatenate([met, c + met, 2 * c + met])
        blow = (p.take(at)[:, None] * pass_rows.Jb.take(at, axis=0)[:, :3]).reshape(3, -1, 3)
        blow = blow.sum(axis=0)                                     # (m, 3) world, N s
        start = contact_rows.Jb.take(rows.take(at), axis=0)[:, :3].reshape(3, -1, 3)
        p = p.copy()
        p[at] = einsum("jmi,mi->jm", start, blow).reshape(-1)
    keep = p != 0.0
    np.add.at(report, (rows[keep] % k, rows[keep] // k), p[keep])


def _impact_pass(world, model, rows, uni, impact, impulses, v, w, inv_mass, Iinv, factor,
                 when, shift):
    """One impact pass on the ``impact`` rows (ImpactRows) whose jumps are made when (c,) s
    into the step: the velocities after it, the rows' impulses (c,) (N s), and the bodies
    whose velocity changed; the joint rows' impulses are added to ``impulses[1]``, and the
    moves that make each jump at its time (the velocity change it gives times -when) to
    ``shift`` ((N, 3) each, m and rad, in place)."""
    if impact.space is not None:
        return _impact_among_bodies(world, impact, v, w, when, shift)
    dv, dw, p, p_e = _velocity_jump(world, model, rows, uni, impact.rows, impact.target, v, w,
                                    inv_mass, Iinv, factor, IMPACT_SOFTNESS, IMPACT_TOLERANCE,
                                    bounds=(impact.lo, impact.hi))
    if p_e is not None:
        impulses[1][:] += p_e
    moved = _moved(dv, dw)
    if moved.size:
        if np.ptp(when) == 0.0:         # (one time: the jump itself, joints' part and all)
            sx, sw = -when[0] * dv, -when[0] * dw
        else:
            sx, sw = _jointed_response(model, rows, impact.rows, -when * p, inv_mass, Iinv,
                                       factor, world._n)
        shift[0][:] += sx
        shift[1][:] += sw
    return v + dv, w + dw, p, moved


def _earliest_in_islands(a, b, when, dynamic, mechanism):
    """(c,) the time of each of a pass's rows (bodies a, b (c,); their meeting times when
    (c,) s): the earliest of those of the rows linked to it through the pass's dynamic
    bodies' mechanisms (``mechanism`` (N,) labels: bodies linked by joints share one; a
    static body links nothing). A body takes its pass's blows at one time, when its first
    contact meets: the others, met later, are met then (their gaps at that time are not
    closed). Each at its own time, the moves of a box landing on two corners met 5 ms apart
    at dt 1/60 put it into the ground and gave it up to 22 J of its 12 in a step. Through
    chains of struck bodies, not the rows' own bodies only: a body whose rows took their
    blows at two times (each row at the earlier of its two bodies') turned the pass's
    impulses about points a step's travel apart, and a ten-ball break in zero g changed its
    angular momentum by 8e-6 of |p| r at dt 1/240 (3.9e-6 N m s at dt 1/60 with the rack
    spread by 1 %); one time per chain: 1e-13 or less. (The chains of the pass's rows
    alone, labelled on their few mechanisms: labelling the world's islands cost a thousand
    poured spheres 3 ms a step.)"""
    la, lb = mechanism.take(a), mechanism.take(b)
    da, db = dynamic.take(a), dynamic.take(b)
    # (no mechanism in two rows: each row's own time; most passes of a pour)
    ends = np.concatenate([la[da], lb[db]])
    if np.bincount(ends).max(initial=0) <= 1:
        return when
    # (a static side links the row to its other side alone)
    node_a, node_b = np.where(da, la, lb), np.where(db, lb, la)
    # the earliest time spread through the chains a link a round, until no row's changes:
    # then each row holds its chain's earliest. A pour's chains settle in 2-4 rounds (~7
    # calls each), where labelling them cost ~450 Python calls (scipy's graph, 2.2 times
    # a step: spheres_1000's resolve_impacts 5800 -> 4800 calls a step); longer chains are
    # labelled
    first = np.full(mechanism.shape[0], np.inf)
    row = when
    for _ in range(SPREAD_ROUNDS):
        np.minimum.at(first, node_a, row)
        np.minimum.at(first, node_b, row)
        spread = np.minimum(first.take(node_a), first.take(node_b))
        if (spread == row).all():
            return spread
        row = spread
    row_chain = linked_labels(node_a, node_b, first.shape[0]).take(node_a)
    first[:] = np.inf
    np.minimum.at(first, row_chain, when)
    return first.take(row_chain)


def _jointed_response(model, rows, sub, p, inv_mass, Iinv, factor, n):
    """The velocity changes (N, 3) each that impulses p (s,) on the rows ``sub`` give the
    bodies with the joints' rows (``rows``, None without; ``factor``: their A + cfm's
    factorisation at Iinv) kept: M^-1 J^T p made to meet the joints."""
    dv, dw = Scatter(sub.a, sub.b, n).response(sub.blocks, p, inv_mass, Iinv)
    if rows is None or not rows.count:
        return dv, dw
    return onto_rows(model.pattern, model.scatter, factor, rows.blocks, dv, dw, inv_mass, Iinv)


def _velocity_jump(world, model, rows, uni, sub, target, v, w, inv_mass, Iinv, factor, softness,
                   relative_tolerance, bounds=None):
    """The velocity changes (N, 3) each that take the rows ``sub`` (Rows; one-sided, lambda
    >= 0, or within ``bounds``: (lo, hi) (s,) each) from their velocities at v, w to
    ``target`` (m/s or rad/s) together with the joints' rows (``rows``, None without
    joints), which they leave meeting J u = 0: one bounded solve of those rows alone,
    iterative or direct as the step's. Returns (dv, dw, the rows' impulses (s,), the joint
    rows' (m,) or None), impulses in N s (N m s)."""
    n = world._n
    lo, hi = (np.zeros(sub.count), np.full(sub.count, np.inf)) if bounds is None else bounds
    if world.contact_solver != "direct":
        E = None if rows is None or not rows.count else joint_space(uni, model, rows, inv_mass,
                                                                      Iinv, n)
        B = BodySpace(sub, inv_mass, Iinv, n)
        u = np.concatenate([v, w], axis=1).ravel()
        lam_e, p, _ = solve_iterative(
            B, target - B.times_J(u), lo, hi, world.cfm, E=E, tolerance=VELOCITY_TOLERANCE,
            rhs_e=None if E is None else -E.times_J(u),
            factorizer=model.pattern.factorizer if E is not None else None, factor=factor,
            softness=softness, relative_tolerance=relative_tolerance)
        # the joints' impulses with the rows' (as the direct path's response of all rows):
        # the bodies leave meeting their joints
        dv, dw = B.impulse(p)
        if E is not None:
            dv_e, dw_e = E.impulse(lam_e)
            dv, dw = dv + dv_e, dw + dw_e
        return dv, dw, p, lam_e
    all_rows = Rows.concatenate([r for r in (rows, sub) if r is not None])
    m_eq = 0 if rows is None else rows.count
    pattern = Pattern(all_rows.a, all_rows.b, inv_mass > 0, n)
    J, JM = pattern.sides(all_rows.Ja, all_rows.Jb, inv_mass, Iinv)
    rhs = np.concatenate([np.zeros(m_eq), target]) - all_rows.velocity(v, w)
    lo = np.concatenate([np.full(m_eq, -np.inf), lo])
    hi = np.concatenate([np.full(m_eq, np.inf), hi])
    p = solve_bounded(pattern, J, JM, rhs, lo, hi, cfm=world.cfm, softness=softness)[0]
    dv, dw = Scatter(all_rows.a, all_rows.b, n).response(all_rows.blocks, p, inv_mass, Iinv)
    return dv, dw, p[m_eq:], p[:m_eq] if m_eq else None


def kept_targets(uni):
    """The bounded rows' velocity targets (mb,) without the push the bodies do not keep
    (``BoundedRows.push``), or None when no row has any."""
    push = uni.block.push
    if push is None or not push.max(initial=0.0) > 0.0:
        return None
    return uni.block.target - push


def push_velocities(world, model, rows, uni, inv_mass, Iinv, factor):
    """The velocities (N, 3) each that the drift adds to move the bodies by the push they do
    not keep (``BoundedRows.push``: of a contact's push-out beyond contact_rows.KEPT_PUSH, of
    a limit's beyond limits.KEPT_LIMIT_PUSH) and takes back after: from rest, the pushing rows
    reach their push with the joints kept, and the limits that are rows this step (near
    their bounds) are not turned towards them (the other bounded rows take no part). As
    Bullet's split impulse, Box2D v2's position iterations: the bodies are moved out without
    the speed, and the step's solve aims the rows at their targets without the push. A solve
    of those few rows alone, as an impact pass's, but as soft as the step's
    (CONTACT_SOFTNESS): a push that the joints nearly forbid then moves little. (With an impact's softness, a rod
    hanging from a ball joint, its tip 2 cm into the ground, was swung out by 1.5 m within a
    step to lift the tip those 2 cm, and left at 163 m/s with 18 kJ. Without the limits, a
    ragdoll's hand pushed out of the ground at dt 1/60 was turned 0.25 rad past its wrist's
    twist limit.)"""
    push = uni.block.push
    idx = np.flatnonzero(push)
    first = uni.first_limit_row
    if uni.limit_plan is not None and first < push.size:
        # (the limits on the bodies pushed: the others stay out of its solve)
        limits = first + np.flatnonzero(uni.limit_plan.group.take(uni.limit_rows) <= UPPER)
        rows_b = uni.block.rows
        pushed = np.zeros(world._n, dtype=bool)
        pushed[rows_b.a.take(idx)] = pushed[rows_b.b.take(idx)] = True
        pushed[world._inv_mass[:world._n] == 0.0] = False
        on = pushed.take(rows_b.a.take(limits)) | pushed.take(rows_b.b.take(limits))
        idx = np.union1d(idx, limits[on])
    zero = np.zeros((world._n, 3))
    dv, dw = _velocity_jump(world, model, rows, uni, uni.block.rows.at(idx), push.take(idx),
                            zero, zero, inv_mass, Iinv, factor, CONTACT_SOFTNESS,
                            IMPACT_TOLERANCE)[:2]
    contacts = idx[idx < uni.n_contact_rows // 3]
    touched = np.concatenate([uni.block.rows.a.take(contacts), uni.block.rows.b.take(contacts)])
    return within_push_cap(model, dv, dw, touched)


def within_push_cap(model, dv, dw, touched):
    """The push's velocities dv, dw (N, 3) each (m/s, rad/s), scaled down on each mechanism
    (``model.mechanism``) of the bodies ``touched`` (rows) by pushing contacts whose fastest
    point (|dv| + |dw| times the body's bounding radius) would move faster than
    contact_rows.MAX_PUSH_OUT: no body is pushed out of an overlap faster than that (a
    limit's push back, uncapped, turns a mechanism that no contact pushes as fast as its
    own rule asks). The cap on the rows' push (m/s along a contact's normal) bounds the
    bodies' speed where they are free; through joints a lever multiplies it: two links of a
    6-link arm
    made 10 mm into one another 2 cm from a pin were pushed apart at 0.5 m/s along the
    normal at dt 1/240 (2.4 m/s at 1/1000, the same 2.5 mm a step) by turning the links at
    40 rad/s (170), and the last link's centre moved 15 mm a step (17 m/s at 1/1000). The
    scaled push keeps to the joints as the whole one does (the rows' solve is linear in it)."""
    n = dv.shape[0]
    speed = (np.sqrt(einsum("ni,ni->n", dv, dv))
             + np.sqrt(einsum("ni,ni->n", dw, dw)) * model.pair_cache.own_radius[:n])
    if not speed.max(initial=0.0) > MAX_PUSH_OUT:
        return dv, dw
    label = model.mechanism
    fastest = np.zeros(label.max(initial=0) + 1)
    np.maximum.at(fastest, label, speed)
    scale = MAX_PUSH_OUT / np.maximum(fastest, MAX_PUSH_OUT)
    scale[~labels_reached(label, touched)[:scale.size]] = 1.0
    if (scale == 1.0).all():
        return dv, dw
    scale = scale.take(label)[:, None]
    return dv * scale, dw * scale


def _held_by_contacts(world, inv_mass):
    """(n, 3) m/s^2: the accelerations that last step's contact forces gave the bodies, so
    that with the loads' they tell how fast a body resting on something falls (it does not:
    a ball dropped onto a crate on the floor meets a crate that stays, and its rebound is
    carried back across the gap under g, not under nothing)."""
    n = world._n
    report = world._contacts
    if report is None or not len(report):
        return np.zeros((n, 3))
    force = report.normal_force[:, None] * report.normal + report.friction_force
    # (the report's bodies are indices into world.bodies: rows less one)
    on_b, on_a = report.body_b + 1, report.body_a + 1
    out = np.stack([np.bincount(on_b, force[:, k], n) - np.bincount(on_a, force[:, k], n)
                    for k in range(3)], axis=1)
    return out * inv_mass[:, None]


def _supports(normal, depth, hit, restitution, inv_mass, n, when):
    """(the touching contacts (s,) of restitution 0 through which the bodies of this impact
    pass's ``hit`` contacts (K,) bool rest on something (a crate on the floor, a stack of
    them), the time (s,) s into the step each takes its blow at: the latest of the hits'
    ``when`` (their meeting times, (hits,)) among the bodies it links). They take part in the
    pass, pushing only to keep from closing, so the impact meets the floor through the
    crate. Left out, a ball with e = 0.8 dropped 1 m onto a 20 kg
    crate on the floor rose to 0.566 m (0.544 at dt 1/60), as off a crate floating free,
    instead of 0.64; the crate's blow into the floor was lost. (Touching contacts that
    bounce stay out, so a Newton's cradle passes its momentum ball by ball.)"""
    resting = ~hit & (restitution == 0) & (depth > -SPECULATIVE_TOUCH)
    if not resting.any():
        return np.zeros(0, dtype=np.intp), np.zeros(0)
    a, b = normal.a, normal.b
    dynamic = inv_mass > 0
    # bodies linked through resting contacts between dynamic bodies (a static floor links
    # nothing: it does not carry a blow from one crate to the next)
    linked = resting & dynamic.take(a) & dynamic.take(b)
    label = linked_labels(a[linked], b[linked], n)
    ends = np.concatenate([a[hit], b[hit]])
    struck = np.zeros(n, dtype=bool)
    struck[label[ends]] = True
    reached = struck.take(label) & dynamic
    held = np.flatnonzero(resting & (reached.take(a) | reached.take(b)))
    if not held.size:
        return held, np.zeros(0)
    # (the struck dynamic bodies' labels keep the latest time they are struck at)
    at = np.zeros(n)
    struck_ends = dynamic.take(ends)
    np.maximum.at(at, label[ends[struck_ends]], np.tile(when, 2)[struck_ends])
    at_label = np.where(dynamic, at.take(label), 0.0)
    return held, np.maximum(at_label.take(a.take(held)), at_label.take(b.take(held)))


def meeting_time(vn, gap, acceleration, h):
    """(k,) s: when within the step h contacts approaching at vn (k,) (m/s, negative; drift
    velocities, see rebound_speed) across a gap (k,) (m; negative: overlapping, taken as
    touching) meet, where the loads accelerate them apart at ``acceleration`` (k,) (m/s^2;
    None: no loads); NaN for those that do not meet within it (the loads part them, or a
    touching one's gap outlasts the step)."""
    gap = np.maximum(gap, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        if acceleration is None:
            when = np.where(gap > 0.0, gap / -vn, 0.0)
            return np.where(when <= h, when, np.nan)
        start = vn + 0.5 * h * acceleration     # the normal velocity at the step's start
        speed = np.sqrt(np.maximum(start * start - 2.0 * gap * acceleration, 0.0))
        # (gap + start t + acceleration t^2 / 2 = 0, in the form that keeps its digits)
        closes = speed - start
        when = np.where(gap > 0.0, 2.0 * gap / closes, 0.0)
    met = (closes > 0.0) & (when <= h * (1.0 + 1e-9))
    return np.where(met, np.minimum(when, h), np.nan)


def rebound_speed(e, vn, gap, acceleration, h, when):
    """The normal velocities (k,) m/s that contacts approaching at vn (k,) (m/s, negative)
    across a gap (k,) (m; negative: overlapping, taken as touching) leave at, for
    restitution e (k,), their jump made ``when`` (k,) s into the step h (at or before they
    meet: ``meeting_time``), where the loads accelerate them apart at ``acceleration`` (k,)
    (m/s^2; gravity pulls a ball onto the ground at -g; None: no loads). vn and the result
    are drift velocities (a step with bounded rows takes the whole kick first): the velocity
    at the step's start is h / 2 of the loads' kick further on; and the result is the
    velocity the bodies leave with carried back from ``when`` to the step's start under the
    loads (``resolve_impacts`` moves them by the jump times -when at the drift's end, so
    that with the step's kick they end it where the motion after the jump puts them).

    The rebound is e times the speed s they meet at; made where they meet, they leave the
    surface at e s, and a ball rises to e^2 of its drop. Made earlier, at a gap (the later
    contacts of a body's blow, made when its first meets), it is e s carried back across
    that gap under the loads (a rebound too slow to cross back leaves at rest). (Made at the
    step's start as e times vn, a ball dropped onto the ground rose above e^2 of its drop by
    its gap's (1 - e^2): by 0.3-3.7 % over five bounces from 1 m at dt 1/240, up to 7 % at
    1/60, by where in a step it landed.)"""
    if acceleration is None:
        return -e * vn
    gap = np.maximum(gap, 0.0)
    lead = 0.5 * h * acceleration
    start = vn + lead                       # the normal velocity at the step's start
    at = start + acceleration * when        # ... at the jump
    left = np.maximum(gap + (start + 0.5 * acceleration * when) * when, 0.0)   # its gap then
    reach = left * acceleration
    met = at * at - 2.0 * reach
    return np.sqrt(np.maximum(e * e * met + 2.0 * reach, 0.0)) - acceleration * when - lead


def _meeting(depth, vn, h):
    """(K,) bool: the contacts touching, or closing their gap within the step h (depth (K,)
    m, negative apart; vn (K,) m/s, their normal velocities)."""
    return (depth > -SPECULATIVE_TOUCH) | (vn * h < depth)


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


def _moved(dv, dw):
    """The bodies whose velocity changes (dv, dw (N, 3) not all zero)."""
    # (the ufunc's own reduce: ndarray.any adds two Python layers, 18 calls a pass's solve)
    return np.logical_or.reduce((dv != 0) | (dw != 0), axis=1).nonzero()[0]


def _impact_among_bodies(world, impact, v, w, when, shift):
    """One impact pass on the rows ``impact`` (ImpactRows: their ``space`` on the pass's
    ``bodies``) without joints, solved among the bodies of the pass only: the solve's
    products run over body-space vectors of those few bodies rather than of the whole world
    (a product of seven rows over 1000 bodies is mostly their zero entries). The sums are
    the same, term for term, so the impulses are the same bits (a body no row acts on, as
    the friction rows of a pass may leave some, takes a zero change). Returns (v, w, the
    rows' impulses (c,), N s, the bodies whose velocity changed)."""
    B, bodies = impact.space, impact.bodies
    vb, wb = v.take(bodies, axis=0), w.take(bodies, axis=0)
    rhs = impact.target - B.times_J(np.concatenate([vb, wb], axis=1).ravel())
    if impact.separate:
        p = _separate_impulses(B.diagonal, rhs, impact.lo, impact.hi, world.cfm)
    else:
        _, p, _ = solve_iterative(B, rhs, impact.lo, impact.hi, world.cfm,
                                  tolerance=VELOCITY_TOLERANCE, softness=IMPACT_SOFTNESS,
                                  relative_tolerance=IMPACT_TOLERANCE)
    dv, dw = B.impulse(p)
    # v + 0. where nothing acts (as adding the whole world's zero impulse did: -0. -> 0.)
    v, w = v + 0.0, w + 0.0
    v[bodies], w[bodies] = vb + dv, wb + dw
    if when.any():
        sx, sw = B.impulse(-when * p)
        shift[0][bodies] += sx
        shift[1][bodies] += sw
    return v, w, p, bodies.take(_moved(dv, dw))


def _separate_impulses(diagonal, rhs, lo, hi, cfm):
    """The impulses (c,) N s of an impact pass's solve on rows that no body that moves is on
    two of (ImpactRows.separate: a pass of separate hits, half the solves of a thousand
    poured spheres), towards ``rhs`` (c,) m/s within lo, hi (c,): their J M^-1 J^T is
    diagonal (``diagonal`` (c,)), and the solve's answer is each row's own, its rhs over its
    diagonal with the impacts' softness, clipped to its bounds (``solve_iterative``'s
    scaled matrix is then the identity: its impulses were these to 5e-16 of the largest in
    the 85 such solves of spheres_1000's bench window, after its setup and iterations, ~220
    numpy calls a solve); a row that moves no body (both sides static) takes none."""
    soft = softened(cfm, diagonal, IMPACT_SOFTNESS, rhs, None)[0]
    p = np.clip(rhs / (diagonal + soft), lo, hi)
    dead = diagonal <= 1e-12 * diagonal.max(initial=0.0)
    return np.where(dead, 0.0, p) if dead.any() else p


def _normal_velocity_update(normal, vn, v, w, moved, n):
    """vn (the rows' ``normal.velocity``, updated in place) after the bodies ``moved`` changed
    velocity (indices, or a tuple of index arrays: those of each of a pass's solves): the
    rows on those bodies evaluated again (the same products row by row); the others cannot
    have changed (but for the sign of a zero). vn, v, w may be tuples of as many (rows'
    values, linear, angular) triples, updated together."""
    moved = moved if isinstance(moved, tuple) else (moved,)
    if all(m.size == 0 for m in moved):
        return vn
    mark = np.zeros(n, dtype=bool)
    for m in moved:
        mark[m] = True
    r = (mark.take(normal.a) | mark.take(normal.b)).nonzero()[0]
    rows = normal.at(r)
    if isinstance(vn, tuple):
        for out, lin, ang in zip(vn, v, w):
            out[r] = rows.velocity(lin, ang)
        return vn
    vn[r] = rows.velocity(v, w)
    return vn


def bounded_impulse(uni, lam_b, inv_mass, Iinv, n):
    """M^-1 J_b^T lambda_b per body: linear and angular accelerations (N, 3) each."""
    if uni.block.body_space is not None:
        return uni.block.body_space.impulse(lam_b)
    rows = uni.block.rows
    return Scatter(rows.a, rows.b, n).response(rows.blocks, lam_b, inv_mass, Iinv)
