"""Impacts' contacts where their bodies meet: the narrowphase run again for the contacts of an
impact pass at the bodies' poses at its meeting times, so that the bounce and its friction
push along the normal of the surfaces that touch, not along the normal found at the step's
start (up to a step's travel before they touch). Distances in m, times in s into the step,
velocities in m/s, world frame."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .collision.contacts import Shapes
from .collision.detect import (FIRST_BODY_PAIR_TYPE, ROUND_PAIR_TYPE, narrowphase, pair_types,
                               ranks_in_order)
from .collision.geometry import norm
from .collision.round import sphere_pair
from .contact_rows import SPECULATIVE_TOUCH, contact_rows, glide_speeds
from .math3d import cross, einsum, quat_to_matrix, rotation_vector_to_quat
from .rows import Kinematics

# a normal found at the meeting time that differs from the step's start's by less than this
# (|n - n0|) is taken as the same, and the contact keeps its rows: a head-on hit, or a body on
# a plane, is solved as before, to the bit
SAME_NORMAL = 1e-9
# Newton steps on the gap at most, and the gap (m) at which the meeting time is found: the
# gap of round surfaces passing obliquely is convex in time, so its Newton steps come from
# below and do not overshoot (a half-ball billiard hit at dt 1/60, 33 mm a step: 0.4 mm after
# the first, 3e-9 m after the second; stopped at 1e-8 the struck ball leaves within 3e-6
# degrees of its angle, at 1e-10 within 1e-6, a narrowphase more per pass)
MEETING_STEPS = 4
MEETING_GAP = 1e-8


@dataclass
class MetContacts:
    """c contacts as found at their bodies' poses at times ``when`` (c,): which were found
    there with a normal of their own (``changed`` (c,) bool: same feature, normal not within
    SAME_NORMAL of the step's start's), and, for all c (the others' meaningless), the point
    and normal (c, 3), the gap (c,) (m, positive apart) and the bodies' poses there; for
    taking them at earlier times (``_met_earlier``), the _PairGroups they were found by and
    which were found (c,) bool (or None)."""
    when: np.ndarray
    changed: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    gap: np.ndarray
    x_a: np.ndarray
    x_b: np.ndarray
    groups: list | None = None
    found: np.ndarray | None = None


def _positions(kin, v, shift, bodies, when):
    """Positions (c, 3) of ``bodies`` (c,) at ``when`` (c,) s into the step: drifting at v
    from the step's start (kin), moved by the impacts' ``shift`` (unilateral.Unilateral.
    impact_shift: the earlier jumps made at their times; None: none)."""
    x = kin.x.take(bodies, axis=0) + when[:, None] * v.take(bodies, axis=0)
    if shift is not None:
        x += shift[0].take(bodies, axis=0)
    return x


def _rotations(kin, w, shift, bodies, when):
    """Rotations (c, 3, 3) body to world of ``bodies`` (c,) at ``when`` (c,) s into the step,
    as ``_positions`` (turning at w)."""
    turn = when[:, None] * w.take(bodies, axis=0)
    if shift is not None:
        turn += shift[1].take(bodies, axis=0)
    return einsum("mij,mjk->mik", quat_to_matrix(rotation_vector_to_quat(turn)),
                  kin.R.take(bodies, axis=0))


class _PairGroup(NamedTuple):
    """The contacts ``rows`` (m,) (of a met_contacts call's c) of one pair type, fixed over
    its Newton steps: their sides' shape params (m, 4), their features (m,), their margins
    (m,) in m, and whether all are sphere pairs (``round_round`` then reads their centres
    alone, and so does ``_found``)."""
    pair_type: int
    rows: np.ndarray
    par_a: np.ndarray
    par_b: np.ndarray
    feature: np.ndarray
    margin: np.ndarray
    spheres: bool


def _pair_groups(world, contacts, idx, a, b, usable, normal0):
    """The _PairGroups of the contacts ``idx`` (c,) of ``contacts`` (collision.ContactSet),
    bodies a, b (c,), that are ``usable`` (c,) bool and can be found with a normal of their
    own. A plane's contacts take the plane's normal at any pose (collision.plane: its
    params' first three): one whose start's normal ``normal0`` (c, 3) is within SAME_NORMAL
    of it has none of its own, and needs no narrowphase (a pour: 1.7 calls a step)."""
    n = world._n
    kind, params = world._kind[:n], world._params[:n]
    types = pair_types(kind, a, b)
    # (ndarray.nonzero and np.bincount, where np.flatnonzero and np.unique add Python
    # layers: this runs once a pass, 12 times a step in the pour's first 150 steps)
    on_plane = (usable & (types < FIRST_BODY_PAIR_TYPE)).nonzero()[0]
    if on_plane.size:
        diff = (params.take(a.take(on_plane), axis=0)[:, :3]
                - normal0.take(on_plane, axis=0))
        usable = usable.copy()
        usable[on_plane] = einsum("ij,ij->i", diff, diff) > SAME_NORMAL * SAME_NORMAL
    found_again = usable.nonzero()[0]
    types = types.take(found_again)
    present = np.bincount(types).nonzero()[0].tolist()
    # (margin: as far apart as the contact was at the step's start, which its gap closes
    # from, and the world's: the feature is a candidate wherever within the step it is
    # looked at)
    margin = (np.maximum(-contacts.depth.take(idx.take(found_again)), 0.0)
              + (world.contact_margin + SPECULATIVE_TOUCH))
    feature = contacts.feature.take(idx.take(found_again))
    groups = []
    for t in present:
        of_type = None if len(present) == 1 else (types == t).nonzero()[0]
        rows = found_again if of_type is None else found_again.take(of_type)
        par_a, par_b = params.take(a.take(rows), axis=0), params.take(b.take(rows), axis=0)
        spheres = t == ROUND_PAIR_TYPE and not (par_a[:, 1].any() or par_b[:, 1].any())
        groups.append(_PairGroup(t, rows, par_a, par_b,
                                 feature if of_type is None else feature.take(of_type),
                                 margin if of_type is None else margin.take(of_type),
                                 spheres))
    return groups


def _sphere_meeting_times(group, kin, v, shift, a, b, when, h):
    """The meeting times (s into the step h) of the sphere pairs of ``group`` (a _PairGroup
    of spheres; bodies a, b (c,) of the call's c contacts), written into ``when`` (c,) in
    place: the first time their centres, moving at v from their poses at the step's start
    (``_positions``: kin, the earlier passes' ``shift``), are the radii's sum apart, a
    quadratic in time (0 for a pair overlapping and closing at the start, h for one meeting
    after the step). Where it has no root in time (the pair passes by, or overlaps and
    opens) ``when`` is kept, for the Newton steps to take as before. (The Newton steps on
    the gap took 2.6 narrowphases a pass to come within MEETING_GAP; the root is within
    round-off, and its one narrowphase finds the gap closed.)"""
    rows = group.rows
    ra, rb = a.take(rows), b.take(rows)
    start = np.zeros(rows.size)
    d0 = _positions(kin, v, shift, rb, start) - _positions(kin, v, shift, ra, start)
    u = v.take(rb, axis=0) - v.take(ra, axis=0)
    reach = group.par_a[:, 0] + group.par_b[:, 0]
    dist = norm(d0)
    apart = (dist - reach) * (dist + reach)     # |d0|^2 - reach^2, keeping its digits
    approach = einsum("ij,ij->i", d0, u)        # half the rate of |d|^2 at the start
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.sqrt(approach * approach - einsum("ij,ij->i", u, u) * apart)
        # (|d0 + t u|^2 = reach^2 in the form that keeps its digits: apart / (the larger
        # root's denominator))
        first = np.where(apart > 0.0, apart / (root - approach), 0.0)
    meets = (approach < 0.0) & ((apart <= 0.0) | (root >= 0.0))
    at = rows.compress(meets)
    when[at] = np.minimum(first.compress(meets), h)


def _found(groups, kin, v, w, shift, a, b, when, out=None):
    """The contacts of ``groups`` (_PairGroups) of c contacts, bodies a, b (c,), found by
    their pairs' narrowphase at the poses at ``when`` (c,) (``_positions``): (found (c,) bool,
    point, normal (c, 3), gap (c,), a's and b's positions (c, 3)). Sphere pairs are found as
    ``round_round`` finds them, from their centres (its one candidate, feature 0), without
    the bodies' rotations (which it reads only for centres within 1e-12 m). out: None, or
    an earlier call's result on these c contacts, whose first four arrays take these
    groups' rows in place (the other rows kept)."""
    x_a, x_b = _positions(kin, v, shift, a, when), _positions(kin, v, shift, b, when)
    c = x_a.shape[0]
    if out is None:
        found = np.zeros(c, dtype=bool)
        point, normal, gap = np.zeros((c, 3)), np.zeros((c, 3)), np.zeros(c)
    else:
        found, point, normal, gap = out[:4]
    for group in groups:
        rows = group.rows
        pos_a, pos_b = x_a.take(rows, axis=0), x_b.take(rows, axis=0)
        if group.spheres and norm(pos_b - pos_a).min() > 1e-12:
            p, nrm, depth = sphere_pair(pos_a, pos_b, group.par_a[:, 0], group.par_b[:, 0],
                                        None, None)
            found[rows] = (depth >= -group.margin) & (group.feature == 0)
            point[rows], normal[rows], gap[rows] = p, nrm, -depth
            continue
        at = when.take(rows)
        R_a = _rotations(kin, w, shift, a.take(rows), at)
        R_b = _rotations(kin, w, shift, b.take(rows), at)
        p, nrm, depth, feat, valid = narrowphase(group.pair_type)(
            Shapes(pos_a, R_a, group.par_a), Shapes(pos_b, R_b, group.par_b), group.margin)
        same = valid & (feat == group.feature[:, None])
        slot = same.argmax(axis=1)
        pick = np.arange(rows.size), slot
        p = np.asarray(p, dtype=float)
        found[rows] = same[pick]
        point[rows] = p[pick]
        normal[rows] = np.broadcast_to(np.asarray(nrm, dtype=float), p.shape)[pick]
        gap[rows] = -np.asarray(depth, dtype=float)[pick]
    return found, point, normal, gap, x_a, x_b


def _closing(point, normal, x_a, x_b, v, w, a, b):
    """(c,) m/s: how fast b's surface point moves along the normal (c, 3) from a's, both at
    ``point`` (c, 3) with the bodies' centres at x_a, x_b (c, 3)."""
    u_b = v.take(b, axis=0) + cross(w.take(b, axis=0), point - x_b)
    u_a = v.take(a, axis=0) + cross(w.take(a, axis=0), point - x_a)
    return einsum("ij,ij->i", u_b - u_a, normal)


def met_contacts(world, uni, idx, when, v, w, shift, h, refine=None):
    """The MetContacts of an impact pass's contacts ``idx`` (c,) (of ``uni.contacts``), at
    their meeting times: ``when`` (c,) (``meeting_time``'s, found along the step's start's
    normals) made the time the contact's own gap closes, by Newton steps on it along the
    normal found there (``refine``; else kept), for the contacts whose pair's narrowphase
    finds them again (same feature) with another normal, and whose gap closes there (to
    SPECULATIVE_TOUCH): the others keep the rows of the step's start (a pair that passes by
    or turns off within the step, its gap along that normal still open when the step ends;
    a feature the narrowphase numbers alike for another point). refine: None, or the
    MetContacts of these contacts found so (then taken at ``when`` as they are, for those
    it found alone: the earlier times of their blows, ``_earliest_in_islands``). v, w
    (N, 3): the drift velocities; shift: the earlier passes' moves (or None); h: the step."""
    contacts, kin = uni.contacts, uni.kin
    a, b = contacts.body_a.take(idx), contacts.body_b.take(idx)
    # a contact met at the step's start by bodies no earlier pass moved is where it was
    # found: it keeps its rows, without a narrowphase (most of a pour's impacts: 1000
    # spheres poured, ~8 passes a step)
    usable = when > 0.0
    if shift is not None:
        moved = np.logical_or.reduce((shift[0] != 0.0) | (shift[1] != 0.0), axis=1)
        usable |= moved.take(a) | moved.take(b)
    if refine is not None:
        usable &= refine.changed
    if not usable.any():
        return None
    normal0 = contacts.normal.take(idx, axis=0)
    if refine is not None:
        return _met_earlier(refine, usable, kin, v, w, shift, a, b, when, normal0)
    # (a pair whose sides are not in the narrowphase's order, as passing_pairs may leave
    # one, keeps its contact)
    usable &= ranks_in_order(world._kind[:world._n], a, b)
    when = when.copy()
    groups = _pair_groups(world, contacts, idx, a, b, usable, normal0)
    if not groups:
        return None
    for group in groups:
        if group.spheres:
            _sphere_meeting_times(group, kin, v, shift, a, b, when, h)
    searched, out = groups, None
    for step in range(MEETING_STEPS):
        out = _found(searched, kin, v, w, shift, a, b, when, out)
        found, point, normal, gap, x_a, x_b = out
        diff = normal - normal0
        changed = found & (einsum("ij,ij->i", diff, diff) > SAME_NORMAL * SAME_NORMAL)
        if step == MEETING_STEPS - 1:
            break
        # (the closing speeds only where the gap is open: at sphere pairs' closed-form times
        # it is closed, and no Newton step is taken)
        move = changed & (np.abs(gap) > MEETING_GAP)
        if not move.any():
            break
        speed = _closing(point, normal, x_a, x_b, v, w, a, b)
        move &= speed < 0.0
        if not move.any():
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            later = np.clip(when + gap / -speed, 0.0, h)
        later = np.where(move, later, when)
        if (later == when).all():
            break
        when = later
        # (the groups whose rows stay where they are found the same again)
        searched = [group for group in groups if move.take(group.rows).any()]
    # (at a contact's own meeting time its gap is closed)
    changed &= gap <= SPECULATIVE_TOUCH
    return MetContacts(when, changed, point, normal, gap, x_a, x_b, groups, found)


def _met_earlier(met, usable, kin, v, w, shift, a, b, when, normal0):
    """The MetContacts ``met`` (met_contacts' first) taken at the earlier times ``when`` (c,)
    of their blows, for its ``changed`` contacts that are ``usable`` (c,) bool (met_contacts'
    test): found again by their pairs' narrowphase there (``met.groups``, restricted to
    them) where their time moved, as found before where it did not (the same poses, the
    same bits), and ``changed`` where found there with a normal other than the step's
    start's ``normal0`` (c, 3). (Its pair groups were made again for it: 34 Python calls.)"""
    again = usable & (when != met.when)
    groups = []
    for group in met.groups:
        keep = again.take(group.rows).nonzero()[0]
        if keep.size:
            groups.append(group._replace(
                rows=group.rows.take(keep), par_a=group.par_a.take(keep, axis=0),
                par_b=group.par_b.take(keep, axis=0), feature=group.feature.take(keep),
                margin=group.margin.take(keep)))
    out = (met.found & usable, met.point.copy(), met.normal.copy(), met.gap.copy())
    found, point, normal, gap, x_a, x_b = _found(groups, kin, v, w, shift, a, b, when, out)
    diff = normal - normal0
    changed = (found & (einsum("ij,ij->i", diff, diff) > SAME_NORMAL * SAME_NORMAL)
               & met.changed)
    return MetContacts(when, changed, point, normal, gap, x_a, x_b, groups=None)


def met_rows(world, uni, idx, met, v, w, h, T):
    """(the rows (3 c',) of the ``met.changed`` contacts of ``idx`` (their normals, then the
    first and the second friction rows, as ``contact_rows`` lays them, on the world's
    bodies), their friction bounds' mu (3 c',)): made at the point and normal where they
    meet, each body's arm from its centre there (T: the stabilisation time, for the rows'
    targets, which an impact does not read)."""
    changed = met.changed.nonzero()[0]
    c = changed.size
    contacts = uni.contacts
    picked = idx.take(changed)
    a, b = contacts.body_a.take(picked), contacts.body_b.take(picked)
    # the bodies numbered for these rows alone: a's 0..c-1, b's c..2c-1, at their poses there
    local = Kinematics(np.concatenate([met.x_a.take(changed, axis=0),
                                       met.x_b.take(changed, axis=0)]),
                       None, np.concatenate([v.take(a, axis=0), v.take(b, axis=0)]),
                       np.concatenate([w.take(a, axis=0), w.take(b, axis=0)]))
    mu = uni.block.mu.take(picked)
    block, _ = contact_rows(local, np.arange(c), c + np.arange(c), met.point.take(changed, axis=0),
                            met.normal.take(changed, axis=0), -met.gap.take(changed), mu, h, T,
                            glide=glide_speeds(mu, world._gravity, h))
    # (concatenated: np.tile is np.concatenate to the bit, behind 20 Python calls)
    rows = block.rows.on_bodies(np.concatenate([a, a, a]), np.concatenate([b, b, b]))
    return rows, block.mu
