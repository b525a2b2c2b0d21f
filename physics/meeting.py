"""Impacts' contacts where their bodies meet: the narrowphase run again for the contacts of an
impact pass at the bodies' poses at its meeting times, so that the bounce and its friction
push along the normal of the surfaces that touch, not along the normal found at the step's
start (up to a step's travel before they touch). Distances in m, times in s into the step,
velocities in m/s, world frame."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .collision.detect import narrowphase, pair_types, ranks_in_order
from .collision.contacts import Shapes
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
    and normal (c, 3), the gap (c,) (m, positive apart) and the bodies' poses there."""
    when: np.ndarray
    changed: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    gap: np.ndarray
    x_a: np.ndarray
    x_b: np.ndarray


def _poses(kin, v, w, shift, bodies, when):
    """Positions (c, 3) and rotations (c, 3, 3) of ``bodies`` (c,) at ``when`` (c,) s into
    the step: drifting at v, w from the step's start (kin), moved by the impacts' ``shift``
    (unilateral.Unilateral.impact_shift: the earlier jumps made at their times; None: none)."""
    t = when[:, None]
    x = kin.x.take(bodies, axis=0) + t * v.take(bodies, axis=0)
    turn = t * w.take(bodies, axis=0)
    if shift is not None:
        x += shift[0].take(bodies, axis=0)
        turn += shift[1].take(bodies, axis=0)
    R = einsum("mij,mjk->mik", quat_to_matrix(rotation_vector_to_quat(turn)),
               kin.R.take(bodies, axis=0))
    return x, R


def _found(world, contacts, idx, kin, v, w, shift, when, usable):
    """The contacts ``idx`` (c,) of ``contacts`` (collision.ContactSet) found by their pairs'
    narrowphase at the poses at ``when``, for those ``usable`` (c,) bool: (found (c,) bool,
    point, normal (c, 3), gap (c,), a's and b's positions (c, 3))."""
    c = idx.size
    a, b = contacts.body_a.take(idx), contacts.body_b.take(idx)
    x_a, R_a = _poses(kin, v, w, shift, a, when)
    x_b, R_b = _poses(kin, v, w, shift, b, when)
    found = np.zeros(c, dtype=bool)
    point, normal, gap = np.zeros((c, 3)), np.zeros((c, 3)), np.zeros(c)
    n = world._n
    kind, params = world._kind[:n], world._params[:n]
    types = pair_types(kind, a, b)
    feature = contacts.feature.take(idx)
    # (margin: as far apart as the contact was at the step's start, which its gap closes
    # from, and the world's: the feature is a candidate wherever within the step it is
    # looked at)
    margin = (np.maximum(-contacts.depth.take(idx), 0.0)
              + (world.contact_margin + SPECULATIVE_TOUCH))
    for t in np.unique(types[usable]).tolist():
        rows = np.flatnonzero(usable & (types == t))
        side_a = Shapes(x_a.take(rows, axis=0), R_a.take(rows, axis=0),
                        params.take(a.take(rows), axis=0))
        side_b = Shapes(x_b.take(rows, axis=0), R_b.take(rows, axis=0),
                        params.take(b.take(rows), axis=0))
        p, nrm, depth, feat, valid = narrowphase(t)(side_a, side_b, margin.take(rows))
        feat = np.broadcast_to(feat, valid.shape)
        same = valid & (feat == feature.take(rows)[:, None])
        slot = same.argmax(axis=1)
        ok = same[np.arange(rows.size), slot]
        pick = slot[:, None]
        point[rows] = np.take_along_axis(np.asarray(p, dtype=float),
                                         pick[:, :, None], axis=1)[:, 0]
        normal[rows] = np.take_along_axis(np.broadcast_to(np.asarray(nrm, dtype=float),
                                                          np.shape(p)),
                                          pick[:, :, None], axis=1)[:, 0]
        gap[rows] = -np.take_along_axis(np.asarray(depth, dtype=float), pick, axis=1)[:, 0]
        found[rows] = ok
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
        moved = (shift[0] != 0.0).any(axis=1) | (shift[1] != 0.0).any(axis=1)
        usable |= moved.take(a) | moved.take(b)
    if refine is not None:
        usable &= refine.changed
    if not usable.any():
        return None
    normal0 = contacts.normal.take(idx, axis=0)
    # (a pair whose sides are not in the narrowphase's order, as passing_pairs may leave
    # one, keeps its contact)
    usable &= ranks_in_order(world._kind[:world._n], a, b)
    when = when.copy()
    steps = MEETING_STEPS if refine is None else 1
    for step in range(steps):
        found, point, normal, gap, x_a, x_b = _found(world, contacts, idx, kin, v, w, shift,
                                                     when, usable)
        diff = normal - normal0
        changed = found & (einsum("ij,ij->i", diff, diff) > SAME_NORMAL * SAME_NORMAL)
        if step == steps - 1:
            break
        speed = _closing(point, normal, x_a, x_b, v, w, a, b)
        move = changed & (speed < 0.0) & (np.abs(gap) > MEETING_GAP)
        if not move.any():
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            later = np.clip(when + gap / -speed, 0.0, h)
        later = np.where(move, later, when)
        if (later == when).all():
            break
        when = later
    # (at a contact's own meeting time its gap is closed; at its blow's earlier one, open)
    changed &= (gap <= SPECULATIVE_TOUCH) if refine is None else refine.changed
    return MetContacts(when, changed, point, normal, gap, x_a, x_b)


def met_rows(world, uni, idx, met, v, w, h, T):
    """(the rows (3 c',) of the ``met.changed`` contacts of ``idx`` (their normals, then the
    first and the second friction rows, as ``contact_rows`` lays them, on the world's
    bodies), their friction bounds' mu (3 c',)): made at the point and normal where they
    meet, each body's arm from its centre there (T: the stabilisation time, for the rows'
    targets, which an impact does not read)."""
    changed = np.flatnonzero(met.changed)
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
    rows = block.rows.on_bodies(np.tile(a, 3), np.tile(b, 3))
    return rows, block.mu
