"""Which bodies' bounding boxes each ray's segment crosses: the ray casts' broadphase.

Few rays and bodies are tested densely (a slab test of every ray against every box). Many
are swept as the contacts' broadphase sweeps boxes: the boxes sorted by their lower bound on
each axis, each ray's segment (clipped to the boxes' hull where it has no end) finds the
contiguous run of boxes that overlap it on one axis with two searchsorted calls, on whichever
axis its run is shortest (a shot along x picks y or z), and only those pairs get the slab
test. The few boxes much wider than the rest (a floor slab), which would lengthen every run,
are tested against every ray. The pairs are exactly those of the dense test.
"""
from __future__ import annotations

import numpy as np

# Up to this many ray-box pairs the dense slab test costs less than the sorts of the sweep.
DENSE_PAIRS = 1 << 14
# A box wider than this many times the mean width is tested against every ray.
WIDE = 4.0


def ray_box_pairs(lo, hi, origins, directions, reach):
    """(ray, box) int arrays, sorted by ray then box: the pairs where ray r (``origins`` (R, 3)
    m, unit ``directions`` (R, 3), from 0 to ``reach`` (R,) m, inf: no end) meets the
    axis-aligned box [lo, hi] (N, 3) m, the boundary included."""
    r, n = origins.shape[0], lo.shape[0]
    if r * n <= DENSE_PAIRS:
        return np.nonzero(_meets(origins, directions, reach, lo, hi, outer=True))
    size = hi - lo
    width = row_max(size)
    wide = width > WIDE * width.mean()
    narrow = np.flatnonzero(~wide)
    ray, box = _swept(lo[narrow], hi[narrow], origins, directions, reach)
    wide_ray, wide_box = np.nonzero(_meets(origins, directions, reach, lo[wide], hi[wide],
                                           outer=True))
    ray = np.concatenate([ray, wide_ray])
    box = np.concatenate([narrow[box], np.flatnonzero(wide)[wide_box]])
    order = np.lexsort((box, ray))
    return ray[order], box[order]


def row_max(a):
    """(M,) the largest of each row of a (M, 3) (reductions along an axis of 3 are slow)."""
    return np.maximum(np.maximum(a[:, 0], a[:, 1]), a[:, 2])


def _swept(lo, hi, origins, directions, reach):
    """ray_box_pairs by the sweep (see the module), for boxes of similar widths."""
    r = origins.shape[0]
    near, far = _slab(origins, directions, lo.min(axis=0, keepdims=True),
                      hi.max(axis=0, keepdims=True))
    start, end = np.maximum(near, 0.0), np.minimum(far, reach)
    live = start <= end
    start, end = np.where(live, start, 0.0), np.where(live, end, 0.0)
    a = origins + start[:, None] * directions
    b = origins + end[:, None] * directions
    seg_lo, seg_hi = np.minimum(a, b), np.maximum(a, b)
    widest = (hi - lo).max(axis=0)
    columns = np.ascontiguousarray(lo.T)                                  # (3, N)
    order = np.argsort(columns, axis=1)
    sorted_lo = np.take_along_axis(columns, order, axis=1)
    first = np.empty((3, r), dtype=np.int64)
    count = np.empty((3, r), dtype=np.int64)
    for k in range(3):
        # (a box overlapping the segment on axis k starts at most its width before it)
        first[k] = np.searchsorted(sorted_lo[k], seg_lo[:, k] - widest[k], side="left")
        count[k] = np.searchsorted(sorted_lo[k], seg_hi[:, k], side="right") - first[k]
    count = np.where(live, np.maximum(count, 0), 0)
    axis = np.argmin(count, axis=0)
    rays = np.arange(r)
    count, first = count[axis, rays], first[axis, rays]
    ray = np.repeat(rays, count)
    run_start = np.cumsum(count) - count
    at = np.arange(ray.size) - np.repeat(run_start - first, count)
    box = order.ravel()[np.repeat(axis, count) * lo.shape[0] + at]
    keep = _meets(origins[ray], directions[ray], reach[ray], lo[box], hi[box])
    return ray[keep], box[keep]


def _meets(o, d, reach, lo, hi, outer=False):
    """Whether rays (o, unit d (R, 3), up to reach (R,)) meet boxes [lo, hi]: pair by pair
    (as many boxes as rays), or every ray with every box (``outer``: (R, N))."""
    near, far = _slab(o, d, lo, hi, outer)
    if outer:
        reach = reach[:, None]
    return (near <= far) & (far >= 0.0) & (near <= reach)


def _slab(o, d, lo, hi, outer=False):
    """(near, far): the stretch of distances along each ray's line within box [lo, hi] (the
    slabs' overlap; empty where near > far), pair by pair or ``outer`` (see _meets). One
    axis at a time on columns (arrays with a last axis of 3 are several times slower)."""
    near = far = None
    for k in range(3):
        o_k, d_k, lo_k, hi_k = o[:, k], d[:, k], lo[:, k], hi[:, k]
        still = d_k == 0.0
        if outer:
            o_k, d_k, still = o_k[:, None], d_k[:, None], still[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            inverse = 1.0 / d_k
            a, b = (lo_k - o_k) * inverse, (hi_k - o_k) * inverse
        lower, upper = np.minimum(a, b), np.maximum(a, b)
        if still.any():
            # (along an axis the ray does not move on, it is within the slab for ever or
            # never)
            within = (lo_k <= o_k) & (o_k <= hi_k)
            lower = np.where(still, np.where(within, -np.inf, np.inf), lower)
            upper = np.where(still, np.where(within, np.inf, -np.inf), upper)
        near = lower if near is None else np.maximum(near, lower, out=near)
        far = upper if far is None else np.minimum(far, upper, out=far)
    return near, far
