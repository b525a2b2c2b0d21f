"""find_contacts: broadphase, then one vectorised narrowphase call per pair type."""
from __future__ import annotations

import numpy as np

from ..shapes import BOX, CAPSULE, CYLINDER, PLANE, SPHERE
from .boxbox import box_box
from .boxround import box_round
from .broadphase import find_pairs
from .contacts import ContactSet, Shapes, from_candidates
from .cylconvex import cylinder_box, cylinder_cylinder
from .cylround import cylinder_round
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


def find_contacts(kind, params, position, rotation, *, static, group, mask, excluded_pairs,
                  margin=0.0, velocity=None, dt=None, pair_cache=None) -> ContactSet:
    """All contacts between N bodies' shapes.

    kind (N,) int shape kinds (physics.shapes; NO_SHAPE never collides); params (N, 4);
    position (N, 3) world centres; rotation (N, 3, 3) body->world; static (N,) bool (two
    static bodies never collide; planes are always static); group, mask (N,) int bit masks: i
    and j collide only if group[i] & mask[j] and group[j] & mask[i]; excluded_pairs (P, 2)
    index pairs that never collide, in either order.

    margin: contacts are reported for gaps up to margin (then with depth -gap < 0).
    velocity (N, 3), dt: optional; a dynamic body's broadphase box grows by |v| dt, and the
    margin of a pair grows by |v_a - v_b| dt (static bodies count as still), so that a fast
    body gets a speculative contact before it can tunnel.

    pair_cache: a broadphase.PairCache kept between calls on the same bodies (optional).

    Returns a ContactSet with normals from body_a to body_b (planes are always body a).
    """
    kind = np.asarray(kind)
    n = len(kind)
    params = np.asarray(params, dtype=float)
    position = np.asarray(position, dtype=float)
    rotation = np.asarray(rotation, dtype=float)
    static = np.asarray(static, dtype=bool) | (kind == PLANE)
    if velocity is not None and dt is not None:
        vel = np.where(static[:, None], 0.0, np.asarray(velocity, dtype=float))
        reach = np.linalg.norm(vel, axis=1) * float(dt)
    else:
        vel, reach = np.zeros((n, 3)), np.zeros(n)

    i, j, pp, pb = find_pairs(kind, params, position, rotation, static, group, mask,
                              excluded_pairs, float(margin), reach, pair_cache)
    i, j = np.concatenate([i, pp]), np.concatenate([j, pb])
    if len(i) == 0:
        return ContactSet.empty()

    rank = np.zeros(PLANE + 2, dtype=np.int64)
    for k, r in _RANK.items():
        rank[k] = r
    swap = rank[kind[i]] > rank[kind[j]]
    a, b = np.where(swap, j, i), np.where(swap, i, j)
    pair_margin = margin + np.linalg.norm(vel[a] - vel[b], axis=1) * (dt or 0.0)

    ra, rb = rank[kind[a]], rank[kind[b]]
    sets = []
    for (rank_a, rank_b), narrowphase in _NARROWPHASE.items():
        sel = np.flatnonzero((ra == rank_a) & (rb == rank_b))
        if len(sel) == 0:
            continue
        ia, ib = a[sel], b[sel]
        shapes_a = Shapes(position[ia], rotation[ia], params[ia])
        shapes_b = Shapes(position[ib], rotation[ib], params[ib])
        cand = narrowphase(shapes_a, shapes_b, pair_margin[sel])
        sets.append(from_candidates(ia, ib, *cand))
    return ContactSet.concatenate(sets)
