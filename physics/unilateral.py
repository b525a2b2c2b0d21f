"""The step's bounded rows: contacts (detected, turned into rows, warm started), joint limits
and motors (``Unilateral``, made by ``unilateral_rows``). Their solve together with the joints
is ``bounded_solve.bounded_multipliers`` (direct or iterative); the impacts resolved before
it are ``impacts.resolve_impacts`` (their meeting times and rebounds: ``rebound``); the push
the bodies do not keep is made by positions (``position_push``). Forces in N, impulses in
N s, velocities in m/s, world frame."""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np

from .assembly import Scatter, inverse_mass_times
from .bodyspace import BodySpace
from .contact_rows import (KEPT_PUSH, SLOP, BoundedRows, ContactFrames, contact_rows,
                           glide_speeds, gripping_friction, positional_warm_start,
                           projected_warm_start, row_ends, with_torque_rows)
from .contacts import detect, kinematic, live_contacts, warm_start
from .limits import bounded_joint_rows, found_plan_rows, limits_overrun
from .math3d import cross, einsum, nonzero_rows
from .rotation import body_inverse_inertia, world_inverse_inertia
from .sleeping import check_reached, labels_reached


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


def bounded_impulse(uni, lam_b, inv_mass, Iinv, n):
    """M^-1 J_b^T lambda_b per body: linear and angular accelerations (N, 3) each."""
    if uni.block.body_space is not None:
        return uni.block.body_space.impulse(lam_b)
    rows = uni.block.rows
    return Scatter(rows.a, rows.b, n).response(rows.blocks, lam_b, inv_mass, Iinv)
