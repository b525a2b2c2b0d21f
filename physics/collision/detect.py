"""find_contacts: broadphase, then one vectorised narrowphase call per pair type."""
from __future__ import annotations

import numpy as np

from ..shapes import BOX, CAPSULE, CYLINDER, PLANE, SPHERE
from .boxbox import box_box
from .boxround import box_round
from .broadphase import PairCache, find_pairs
from .contacts import ContactSet, Shapes, from_candidates
from .cylconvex import cylinder_box, cylinder_cylinder
from .cylround import cylinder_round
from .geometry import row_norms
from .plane import plane_box, plane_cylinder, plane_round
from .round import round_round

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
    kind, params = pair_cache.kind, pair_cache.params
    n = len(kind)
    position = np.asarray(position, dtype=float)
    rotation = np.asarray(rotation, dtype=float)
    static = np.asarray(static, dtype=bool) | (kind == PLANE)
    if velocity is not None and dt is not None:
        vel = np.where(static[:, None], 0.0, np.asarray(velocity, dtype=float))
        reach = row_norms(vel) * float(dt)
    else:
        vel, reach = np.zeros((n, 3)), np.zeros(n)

    i, j, pp, pb = find_pairs(pair_cache, position, rotation, static, group, mask,
                              float(margin), reach)
    if len(i) + len(pp) == 0:
        return ContactSet.empty()
    a, b, types, counts = _by_pair_type(kind, i, j, pp, pb)
    rel = vel.take(a, axis=0) - vel.take(b, axis=0)
    pair_margin = margin + row_norms(rel) * (dt or 0.0)
    # both sides of all pairs gathered once; each pair type takes its contiguous slice.
    # (x.take(rows, axis=0) is x[rows]; numpy's fancy indexing of rows is several times
    # slower, here and in the other collision modules)
    pos_a, rot_a, par_a = (x.take(a, axis=0) for x in (position, rotation, params))
    pos_b, rot_b, par_b = (x.take(b, axis=0) for x in (position, rotation, params))
    sets, start = [], 0
    for t, count in zip(types, counts):
        s = slice(start, start + count)
        start += count
        cand = _BY_TYPE[t](Shapes(pos_a[s], rot_a[s], par_a[s]),
                           Shapes(pos_b[s], rot_b[s], par_b[s]), pair_margin[s])
        sets.append(from_candidates(a[s], b[s], *cand))
    return sets[0] if len(sets) == 1 else ContactSet.concatenate(sets)


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
