"""Impacts resolved before the step's solve (``resolve_impacts``): passes of velocity jumps,
each made where its contacts meet within the step, a bounce then its friction, with the
joints kept; and the one-off bounded solve of a few rows with the joints
(``_velocity_jump``), which the push made by positions shares. Impulses in N s, velocities
in m/s, times in s into the step, world frame.

Its own module because the impact passes are a stage of their own (the step's "impacts"),
run before and apart from the step's bounded solve (``bounded_solve``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .assembly import Pattern, Scatter, onto_rows
from .bodyspace import BodySpace
from .bounded import softened, solve_bounded
from .contact_rows import RESTITUTION_THRESHOLD, SPECULATIVE_TOUCH
from .iterative import VELOCITY_TOLERANCE, solve_iterative
from .math3d import einsum
from .meeting import met_contacts, met_rows
from .rebound import _held_by_contacts, _meeting, _supports, meeting_time, rebound_speed
from .rows import Rows
from .sleeping import linked_labels
from .unilateral import _time_constant, joint_space


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
