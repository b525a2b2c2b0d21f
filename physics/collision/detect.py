"""find_contacts: broadphase, then one vectorised narrowphase call per pair type."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..shapes import BOX, CAPSULE, CYLINDER, PLANE, SPHERE
from .boxbox import box_box
from .boxround import box_round
from .broadphase import PairCache, find_pairs
from .contacts import ContactSet, Shapes, from_candidates, pair_keys
from .cylconvex import cylinder_box, cylinder_cylinder
from .cylround import cylinder_round
from .geometry import einsum, row_norms
from .manifolds import Manifolds, carried_contacts, found_manifolds, kept_pairs, relative_pose
from .plane import plane_box, plane_cylinder, plane_round
from .round import round_round
from .turning import TURNING, with_turned_contacts, shape_turning

# Each pair is ordered so that body a has the lower rank; the table gives the narrowphase
# for (rank a, rank b). Spheres and capsules share a rank: both are swept segments.
_RANK = {PLANE: 0, CYLINDER: 1, BOX: 2, SPHERE: 3, CAPSULE: 3}
_NARROWPHASE = {
    (0, 1): plane_cylinder, (0, 2): plane_box, (0, 3): plane_round,
    (1, 1): cylinder_cylinder, (1, 2): cylinder_box, (1, 3): cylinder_round,
    (2, 2): box_box, (2, 3): box_round,
    (3, 3): round_round,
}
# rank of each shape kind (index kind, NO_SHAPE = -1 the last entry), and the narrowphase of
# pair type 4 rank_a + rank_b; type order is the table's order
_RANK_OF_KIND = np.zeros(PLANE + 2, dtype=np.int64)
for _kind, _rank in _RANK.items():
    _RANK_OF_KIND[_kind] = _rank
_BY_TYPE = {4 * ra + rb: f for (ra, rb), f in _NARROWPHASE.items()}
# a pair type below this is a plane's (its body's rank; two bodies' 4 rank_a + rank_b is 5 or
# more), and the type of two round shapes (spheres or capsules, ``round_round``)
FIRST_BODY_PAIR_TYPE = 4
ROUND_PAIR_TYPE = 4 * _RANK[SPHERE] + _RANK[SPHERE]
# the pair types that keep their manifolds between steps (``find_contacts_keeping``): those
# whose narrowphase costs many numpy calls a pair type (box-box clipping, cylinders against
# boxes and cylinders). Keeping costs ~25 calls of its own a pair type: more than it saves
# where pairs seldom rest (1000 poured marbles on the bin's boxes: collision 3.2-3.5 against
# 3.8-3.9 ms a step; a ragdoll tumbling down stairs, capsules on boxes: 1.8-2.4 against
# 2.5-2.6 ms); a settled 55-box pyramid: 2.2 against 1.5 ms
KEPT_TYPES = frozenset(4 * ra + rb for ra, rb in ((1, 1), (1, 2), (2, 2)))
# A narrowphase's call costs about as much as a hundred pairs (box-box here: 450 us for one
# pair, 520 for 10, 1030 for 100), so a pair type whose narrowphase must run for some of its
# pairs keeps the others' manifolds only when there are at least this many of them: else
# all run it. Falling dominoes (a dozen box-box pairs, some moving) then pay ~0.2 ms a step
# for keeping (collision 1.45-1.48 against 1.26-1.36 ms; keeping what they could: 0.3-0.4 ms)
PARTLY_KEPT_PAIRS = 64


def pair_types(kind, a, b):
    """(M,) the pair type of each pair (a, b) (M,) ordered as contacts are (a of the lower
    rank; a plane is always a), whose narrowphase is ``narrowphase(type)``."""
    rank = _RANK_OF_KIND.take(kind)
    rank_b = rank.take(b)
    return np.where(kind.take(a) == PLANE, rank_b, 4 * rank.take(a) + rank_b)


def ranks_in_order(kind, a, b):
    """(M,) bool: the pairs (a, b) (M,) whose sides are in the order the narrowphase of
    their ``pair_types`` takes them (a plane, or a of no higher rank than b)."""
    rank = _RANK_OF_KIND.take(kind)
    return (kind.take(a) == PLANE) | ((kind.take(b) != PLANE) & (rank.take(a) <= rank.take(b)))


def narrowphase(pair_type):
    """The narrowphase of a pair type: f(Shapes a, Shapes b, margin (M,)) -> candidates
    (point, normal, depth, feature, valid) as ``from_candidates`` takes them."""
    return _BY_TYPE[pair_type]


def find_contacts(kind, params, position, rotation, *, static, group, mask,
                  excluded_pairs=None, margin=0.0, velocity=None, dt=None) -> ContactSet:
    """All contacts between N bodies' shapes.

    kind (N,) int shape kinds (physics.shapes; NO_SHAPE never collides); params (N, 4);
    position (N, 3) world centres; rotation (N, 3, 3) body->world; static (N,) bool (two
    static bodies never collide; planes are always static); group, mask (N,) int bit masks: i
    and j collide only if group[i] & mask[j] and group[j] & mask[i]; excluded_pairs (P, 2)
    index pairs that never collide, in either order (or None).

    margin: contacts are reported for gaps up to margin (then with depth -gap < 0).
    velocity (N, 3), dt: optional; a dynamic body's broadphase box grows by |v| dt, and the
    margin of a pair grows by |v_a - v_b| dt (static bodies count as still), so that a fast
    body gets a speculative contact before it can tunnel.

    The broadphase sweeps afresh (through a PairCache made for this call alone); a caller that
    detects the same bodies again and again keeps a cache and calls find_contacts_with_cache.

    Returns a ContactSet with normals from body_a to body_b (planes are always body a).
    """
    return find_contacts_with_cache(PairCache(kind, params, excluded_pairs), position, rotation,
                                    static=static, group=group, mask=mask, margin=margin,
                                    velocity=velocity, dt=dt)


def find_contacts_with_cache(pair_cache: PairCache, position, rotation, *, static, group, mask,
                             margin=0.0, velocity=None, dt=None) -> ContactSet:
    """find_contacts of the bodies a broadphase.PairCache(kind, params, excluded_pairs) was
    made for, kept between calls: the shapes and excluded pairs are the cache's alone (fixed
    for its lifetime, so the pairs it sweeps and the narrowphase see the same shapes), and it
    sweeps again only when a body has left its skin. The other arguments and the result are
    find_contacts'.
    """
    return _find(pair_cache, None, position, rotation, static=static, group=group, mask=mask,
                 margin=margin, velocity=velocity, dt=dt)[0]


def find_contacts_keeping(pair_cache: PairCache, manifolds: Manifolds, position, rotation, *,
                          static, group, mask, margin=0.0, velocity=None, dt=None, spin=None,
                          steered=None):
    """find_contacts_with_cache, where the pairs of KEPT_TYPES that have barely moved since
    their narrowphase ran keep its contacts (``manifolds``: last call's, see
    ``collision.manifolds``). spin (N, 3): the bodies' angular velocities (rad/s), whose
    turning within dt reaches further too (``broadphase.turning_arm``), and whose turn finds
    contacts where it takes them (``turning.with_turned_contacts``), but for the ``steered``
    bodies (N,) bool (or None: none), whose turn something else sets too. Returns
    (ContactSet, the manifolds for the next call)."""
    return _find(pair_cache, manifolds, position, rotation, static=static, group=group,
                 mask=mask, margin=margin, velocity=velocity, dt=dt, spin=spin, steered=steered)


def _find(pair_cache: PairCache, manifolds, position, rotation, *, static, group, mask, margin,
          velocity, dt, spin=None, steered=None):
    """The contacts, and the manifolds kept (None when not keeping them)."""
    kind = pair_cache.kind
    n = len(kind)
    position = np.asarray(position, dtype=float)
    rotation = np.asarray(rotation, dtype=float)
    static = np.asarray(static, dtype=bool) | (kind == PLANE)
    turning = motion = None
    if velocity is not None and dt is not None:
        vel = np.where(static[:, None], 0.0, np.asarray(velocity, dtype=float))
        reach = row_norms(vel) * float(dt)
        if spin is not None:
            # a turning body's far end comes this much nearer within dt (a thrown pole's far
            # end swung through a wall within a step of its hit: no contact was within reach)
            turning = np.where(static, 0.0, row_norms(spin) * pair_cache.turning_arm) * float(dt)
            reach = reach + turning
            spin = np.where(static[:, None], 0.0, np.asarray(spin, dtype=float))
            turn = shape_turning(kind, rotation, spin)
            if steered is not None:
                turn[steered] = 0.0
            # (no pair turns against itself by TURNING where no body turns by half of it)
            if (row_norms(turn) * float(dt) > 0.5 * TURNING).any():
                motion = (spin, turn, pair_cache.turning_arm, float(dt))
    else:
        vel, reach = np.zeros((n, 3)), np.zeros(n)

    i, j, pp, pb = find_pairs(pair_cache, position, rotation, static, group, mask,
                              float(margin), reach)
    if len(i) and reach.max() > margin:
        i, j = _meeting_pairs(pair_cache.radius, position, vel, float(dt), turning, margin, i, j)
    if len(i) + len(pp) == 0:
        return ContactSet.empty(), (None if manifolds is None else Manifolds.empty())
    typed = _typed_pairs(pair_cache, i, j, pp, pb)
    a, b, types, counts = typed.a, typed.b, typed.types, typed.counts
    rel = vel.take(a, axis=0) - vel.take(b, axis=0)
    pair_margin = margin + row_norms(rel) * (dt or 0.0)
    if turning is not None:
        pair_margin = pair_margin + turning.take(a) + turning.take(b)
    # both sides of all pairs gathered once; each pair type takes its contiguous slice.
    # (x.take(rows, axis=0) is x[rows]; numpy's fancy indexing of rows is several times
    # slower, here and in the other collision modules)
    pos_a, rot_a = (x.take(a, axis=0) for x in (position, rotation))
    pos_b, rot_b = (x.take(b, axis=0) for x in (position, rotation))
    par_a, par_b = typed.par_a, typed.par_b
    sets, kept, start = [], [], 0
    for t, count in zip(types, counts):
        s = slice(start, start + count)
        start += count
        sides = (a[s], b[s], pos_a[s], rot_a[s], pos_b[s], rot_b[s])
        if manifolds is None or t not in KEPT_TYPES:
            sets.append(from_candidates(a[s], b[s], *_narrowphase(
                t, *sides, par_a[s], par_b[s], pair_margin[s], motion)))
            continue
        found, carried, keep = _keeping(t, manifolds, typed.keys[s], *sides, par_a[s],
                                        par_b[s], pair_margin[s], motion)
        sets += [x for x in (found, carried) if x is not None]
        kept.append(keep)
    cs = sets[0] if len(sets) == 1 else ContactSet.concatenate(sets)
    return cs, (None if manifolds is None else Manifolds.concatenate(kept))


def _meeting_pairs(radius, position, velocity, dt, turning, margin, i, j):
    """The body pairs (i, j) (P,) each whose bounding spheres (radius (N,) m) come within
    ``margin`` m (and their turning (N,) m, or None) of each other along their relative
    straight paths within dt s (position, velocity (N, 3)). The broadphase grows each body's
    box by its own reach, so fast bodies flying side by side overlap all along their paths:
    400 bullets at 300 m/s in parallel, which never meet, cost 20 ms a step in collision
    (2 m/s: 0.5 ms), nearly all of it the narrowphase of pairs they made."""
    start = position.take(j, axis=0) - position.take(i, axis=0)
    path = (velocity.take(j, axis=0) - velocity.take(i, axis=0)) * dt
    length = einsum("pi,pi->p", path, path)
    along = np.clip(-einsum("pi,pi->p", start, path) / np.where(length > 0.0, length, 1.0),
                    0.0, 1.0)
    allowed = radius.take(i) + radius.take(j) + margin
    if turning is not None:
        allowed = allowed + turning.take(i) + turning.take(j)
    near = row_norms(start + along[:, None] * path) <= allowed
    return (i, j) if near.all() else (i.compress(near), j.compress(near))


def _narrowphase(t, a, b, pos_a, rot_a, pos_b, rot_b, par_a, par_b, margin, motion=None):
    """The candidate contacts of pairs (a, b) (M,) of type t, as ``from_candidates`` takes
    them. motion: None, or all N bodies' (angular velocity (N, 3), the part of it that turns
    their shapes (N, 3), dt), by which the contacts of pairs that turn fast are also found
    where the step's turn takes them (``turning.with_turned_contacts``)."""
    sides = Shapes(pos_a, rot_a, par_a), Shapes(pos_b, rot_b, par_b)
    if motion is None:
        return _BY_TYPE[t](*sides, margin)
    *motion, dt = motion
    return with_turned_contacts(_BY_TYPE[t], *sides, margin,
                                [x.take(a, axis=0) for x in motion],
                                [x.take(b, axis=0) for x in motion], dt)


def _keeping(t, manifolds, keys, a, b, pos_a, rot_a, pos_b, rot_b, par_a, par_b, margin,
             motion=None):
    """The contacts of pairs (a, b) (M,) of type t (their ``pair_keys``, keys (M,)), whose
    manifolds are kept: (the contacts of the pairs whose narrowphase runs again, those of the
    pairs that keep their manifolds (each ContactSet, or None for no such pairs), the
    manifolds of both for the next step, sorted by key). Where some pairs must run the
    narrowphase again and fewer than PARTLY_KEPT_PAIRS could keep theirs, all run it (see
    PARTLY_KEPT_PAIRS)."""
    turn, offset = relative_pose(pos_a, rot_a, pos_b, rot_b)
    keep, at = kept_pairs(manifolds, keys, turn, offset, margin)
    every = bool(keep.all())
    if not every and np.count_nonzero(keep) < PARTLY_KEPT_PAIRS:
        keep[:] = False
    if every:
        found = new = None
    else:
        again = (~keep).nonzero()[0]
        sides = [x.take(again, axis=0) for x in (a, b, pos_a, rot_a, pos_b, rot_b)]
        cand = _narrowphase(t, *sides, par_a.take(again, axis=0), par_b.take(again, axis=0),
                            margin.take(again), motion)
        found, count = from_candidates(*sides[:2], *cand), np.count_nonzero(cand[4], axis=1)
        new = found_manifolds(found, count, *sides, turn.take(again, axis=0),
                              offset.take(again, axis=0), margin.take(again))
        if not keep.any():
            return found, None, new
    sides = a, b, pos_a, rot_a, pos_b, rot_b
    if not every:
        held = keep.nonzero()[0]
        at = held if at is None else at.take(held)
        sides = [x.take(held, axis=0) for x in sides]
    # (the same pairs as last step's, all kept: a settled stack)
    same = at is None or (at.shape[0] == len(manifolds)
                          and (at == np.arange(at.shape[0])).all())
    old = manifolds if same else manifolds.pairs(at)
    carried = carried_contacts(old, *sides)
    # (last step's manifolds, all kept: sorted already)
    return found, carried, (old if same and new is None else
                            Manifolds.concatenate([old] if new is None else [new, old]))


class TypedPairs(NamedTuple):
    """All pairs as ``_by_pair_type`` orders them (a, b (M,), the types present and how many
    pairs each has), with what follows from them alone: the shape parameters of each side
    (M, 4) and the pairs' ``pair_keys`` (M,), and the pairs they were made of (``find_pairs``'
    i, j, pp, pb)."""
    a: np.ndarray
    b: np.ndarray
    types: list
    counts: list
    par_a: np.ndarray
    par_b: np.ndarray
    keys: np.ndarray
    made_of: tuple


def _typed_pairs(pair_cache: PairCache, i, j, pp, pb) -> TypedPairs:
    """The TypedPairs of find_pairs' pairs (i, j, pp, pb), kept on the cache while they are
    the same arrays (find_pairs hands out last step's while it keeps the same candidates: a
    resting pile; 55 boxes: ~25 calls a step saved)."""
    last = pair_cache.typed
    if last is not None:
        made = last.made_of
        if made[0] is i and made[1] is j and made[2] is pp and made[3] is pb:
            return last
    a, b, types, counts = _by_pair_type(pair_cache.kind, i, j, pp, pb)
    params = pair_cache.params
    typed = pair_cache.typed = TypedPairs(a, b, types, counts, params.take(a, axis=0),
                                          params.take(b, axis=0), pair_keys(a, b),
                                          (i, j, pp, pb))
    return typed


def _by_pair_type(kind, i, j, pp, pb):
    """All pairs, plane pairs (pp, pb) and body pairs (i, j), as (a, b) with a of the lower
    rank, grouped by pair type in table order (plane pairs' types come first) and in their
    given order within a type (sorted, stably, only when several types need it). Returns a,
    b, the types present and how many pairs each has."""
    rank = _RANK_OF_KIND.take(kind)
    ri, rj = rank.take(i), rank.take(j)
    swap = ri > rj
    # a plane pair's type is its body's rank (<= 3), below every body pair's (>= 5): the
    # plane pairs come first, and a sort is needed only for several types on either side
    a = np.concatenate([pp, np.where(swap, j, i)])
    b = np.concatenate([pb, np.where(swap, i, j)])
    pair_type = np.concatenate([rank.take(pb), 4 * np.minimum(ri, rj) + np.maximum(ri, rj)])
    count = np.bincount(pair_type, minlength=16)
    types = count.nonzero()[0].tolist()
    if len(types) > 1 and (types[1] < 4 or types[-2] >= 4):
        order = np.argsort(pair_type, kind="stable")
        a, b = a.take(order), b.take(order)
    return a, b, types, count.take(types).tolist()
