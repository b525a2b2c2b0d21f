"""Rows for contacts: one normal row (lambda >= 0) and two friction rows (|lambda| <= mu lambda_n,
a pyramid) per contact point, all contacts in one vectorised call.

These rows are velocity-level: each carries the normal velocity it aims for by the end of the
step (``target``): the restitution bounce, a push-out of the penetration beyond a small slop,
or, for a speculative contact still separated by a gap g, the approach speed g / h that just
closes it (this is what stops fast bodies tunnelling).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .math3d import cross, dot
from .rows import Rows

RESTITUTION_THRESHOLD = 0.2   # m/s: slower impacts do not bounce (resting contact stays put)
SLOP = 3e-4                   # m of penetration left alone, so resting contacts do not jitter
SPECULATIVE_TOUCH = 5e-4      # m: a gap this small counts as touching for impacts


@dataclass
class BoundedRows:
    """Rows with bounds lo <= lambda <= hi and a velocity target (m/s or rad/s)."""
    rows: Rows
    lo: np.ndarray
    hi: np.ndarray
    target: np.ndarray
    friction_normal: np.ndarray   # index (within this block) of the bounding normal row, or -1
    mu: np.ndarray
    cfm: np.ndarray               # per-row compliance (soft rows, e.g. servos); 0 = hard
    push: np.ndarray | None = None  # contact normal rows: the push-out target without bounce
    body_space: object = None     # iterative.BodySpace of these rows, once the solve built it

    @staticmethod
    def concatenate(blocks):
        blocks = [b for b in blocks if b is not None and b.rows.count]
        if not blocks:
            return None
        offsets = np.cumsum([0] + [b.rows.count for b in blocks[:-1]])
        fn = [np.where(b.friction_normal >= 0, b.friction_normal + o, -1)
              for b, o in zip(blocks, offsets)]
        return BoundedRows(Rows.concatenate([b.rows for b in blocks]),
                           *(np.concatenate([getattr(b, f) for b in blocks])
                             for f in ("lo", "hi", "target")),
                           np.concatenate(fn),
                           *(np.concatenate([getattr(b, f) for b in blocks]) for f in ("mu", "cfm")))


def tangent_basis(n: np.ndarray):
    """Two unit tangents (k, 3) completing each normal to a right-handed frame."""
    helper = np.where(np.abs(n[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    t1 = cross(n, helper)
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True)
    return t1, cross(n, t1)


def contact_rows(kin, a, b, point, normal, depth, friction, restitution, h, T) -> BoundedRows:
    """Rows for K contacts between bodies a and b (rows of the world arrays).

    point (K, 3) world, normal (K, 3) from a to b, depth (K,) m (negative: a gap);
    friction, restitution (K,) combined coefficients; h the step, T the stabilisation time.
    (Impacts are resolved before the step's solve, see ``step.resolve_impacts``; the bounce
    target here serves worlds that skip that phase.)
    """
    k = a.shape[0]
    ra = point - kin.x[a]
    rb = point - kin.x[b]
    t1, t2 = tangent_basis(normal)
    dirs = np.concatenate([normal, t1, t2])
    ra3, rb3 = np.tile(ra, (3, 1)), np.tile(rb, (3, 1))
    Ja = np.concatenate([-dirs, -cross(ra3, dirs)], axis=1)
    Jb = np.concatenate([dirs, cross(rb3, dirs)], axis=1)
    a3, b3 = np.tile(a, 3), np.tile(b, 3)
    rows = Rows(a3, b3, np.concatenate([-depth, np.zeros(2 * k)]), Ja, Jb, np.zeros(3 * k))
    vn = dot(normal, kin.v[b] + cross(kin.w[b], rb) - kin.v[a] - cross(kin.w[a], ra))
    bounce = np.where(vn < -RESTITUTION_THRESHOLD, -restitution * vn, 0.0)
    push = np.maximum(depth - SLOP, 0.0) / T
    target_n = np.where(depth >= 0, np.maximum(bounce, push), depth / h)
    inf = np.full(k, np.inf)
    zeros = np.zeros(k)
    normal_index = np.arange(k)
    return BoundedRows(
        rows,
        lo=np.concatenate([zeros, -inf, -inf]),
        hi=np.concatenate([inf, inf, inf]),
        target=np.concatenate([target_n, zeros, zeros]),
        friction_normal=np.concatenate([np.full(k, -1), normal_index, normal_index]),
        mu=np.tile(friction, 3),
        cfm=np.zeros(3 * k),
        push=push,
    )


def positional_warm_start(previous, body_a, body_b, point, t1, t2, warm, reach=2e-3):
    """Fill the warm start (K, 3) of contacts that found no multipliers under their feature
    key with those of last step's contact of the same two bodies nearest to their point
    (within ``reach`` m). Box manifolds can renumber their features from step to step while
    the points stay where they were; a cold row in a resting stack costs the iterative
    solver many iterations. ``previous`` is last step's ``ContactReport`` (user indices),
    body_a, body_b (K,) body rows. Returns the (K, 3) warm start."""
    cold = np.flatnonzero(~warm.any(axis=1))
    if previous is None or len(previous) == 0 or cold.size == 0:
        return warm
    pkey = ((previous.body_a.astype(np.int64) + 1) << 32) | (previous.body_b.astype(np.int64) + 1)
    order = np.argsort(pkey, kind="stable")
    pkey = pkey[order]
    key = (body_a[cold].astype(np.int64) << 32) | body_b[cold].astype(np.int64)
    start = np.searchsorted(pkey, key, side="left")
    count = np.searchsorted(pkey, key, side="right") - start
    width = int(count.max(initial=0))
    if width == 0:
        return warm
    slot = np.arange(width)
    cand = order[np.minimum(start[:, None] + slot, len(pkey) - 1)]       # (c, width)
    dist = np.linalg.norm(previous.point[cand] - point[cold, None], axis=2)
    dist = np.where(slot < count[:, None], dist, np.inf)
    best = np.argmin(dist, axis=1)
    near = dist[np.arange(cold.size), best] <= reach
    src = cand[np.arange(cold.size), best][near]
    dst = cold[near]
    warm = warm.copy()
    f = previous.friction_force[src]
    warm[dst, 0] = previous.normal_force[src]
    warm[dst, 1] = dot(f, t1[dst])
    warm[dst, 2] = dot(f, t2[dst])
    return warm
