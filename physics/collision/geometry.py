"""Small vectorised geometry helpers shared by the narrowphases.

All functions work on stacks of M items: vectors are (M, 3), rotations (M, 3, 3) body->world
(columns are the body axes in world coordinates), scalars (M,).
"""
from __future__ import annotations

import numpy as np

# np.einsum and np.clip without their Python dispatch layers (see math3d)
from ..math3d import clip, einsum


EPS = 1e-12
GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0
# Corner k of a box is BOX_CORNERS[k] * half_extents (k = 4 ix + 2 iy + iz, i = 0 for -).
BOX_CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)],
                       dtype=float)


def dot(a, b):
    return einsum("...i,...i->...", a, b)


def sum3(p):
    """p[0] + p[1] + p[2] in the order einsum sums a contiguous row of 3: (p0 + p2) + p1."""
    return (p[0] + p[2]) + p[1]


def norm(v):
    return np.sqrt(dot(v, v))


def row_norms(v):
    """(M,) lengths of the rows of v (M, 3): np.linalg.norm(v, axis=1) to the bit (the same
    sum, (x^2 + y^2) + z^2), by columns: numpy's reductions over a short last axis are
    several times slower than a few whole-column operations."""
    sq = v * v
    return np.sqrt((sq[:, 0] + sq[:, 1]) + sq[:, 2])


def normalize(v, fallback):
    """v / |v|, or `fallback` (broadcastable to v) where |v| is (almost) zero."""
    n = norm(v)[..., None]
    return np.where(n > EPS, v / np.maximum(n, EPS), fallback)


def perpendicular(a):
    """(M, 3) some unit vector perpendicular to each unit vector a."""
    # Cross with the world axis least aligned with a: never degenerate.
    k = np.argmin(np.abs(a), axis=-1)
    e = np.zeros_like(a)
    e[np.arange(len(a)), k] = 1.0
    return normalize(np.cross(a, e), np.array([1.0, 0.0, 0.0]))


def column_index(rows, m):
    """Flat indices rows * m + arange(m) into (R, m) arrays (pair last): index i is row
    rows[..., i] of column i. For take, which costs a half to two thirds of fancy indexing
    by (rows, arange(m))."""
    flat = rows * m
    flat += np.arange(m)
    return flat


def to_local(rot, pos, x):
    """World points x (M, 3) (or (M, C, 3)) into body frames: R^T (x - p)."""
    if x.ndim == 3:
        return einsum("mji,mcj->mci", rot, x - pos[:, None, :])
    return einsum("mji,mj->mi", rot, x - pos)


def to_world(rot, pos, x):
    """Body-frame points x (M, 3) or (M, C, 3) into world coordinates: R x + p."""
    if x.ndim == 3:
        return einsum("mij,mcj->mci", rot, x) + pos[:, None, :]
    return einsum("mij,mj->mi", rot, x) + pos


def rotate(rot, v):
    """Body-frame directions v (M, 3) or (M, C, 3) into world: R v."""
    if v.ndim == 3:
        return einsum("mij,mcj->mci", rot, v)
    return einsum("mij,mj->mi", rot, v)


def segment_ends(pos, rot, half_length):
    """(M, 2, 3) world end points (-half_length, +half_length) of local-z segments."""
    offset = (half_length[:, None] * rot[:, :, 2])[:, None, :]
    return pos[:, None, :] + np.array([-1.0, 1.0])[None, :, None] * offset


def closest_segments(c1, d1, l1, c2, d2, l2):
    """Closest points between segments c1 + s d1, s in [-l1, l1] and c2 + t d2, t in [-l2, l2].

    d1, d2 are unit (M, 3); l1, l2 (M,) half lengths (0 for a point). Returns s, t (M,).
    Ericson, Real-Time Collision Detection 5.1.9, with unit directions.
    """
    r = c1 - c2
    b = dot(d1, d2)
    c = dot(d1, r)
    f = dot(d2, r)
    denom = 1.0 - b * b
    # For (nearly) parallel segments any s works; s = 0 keeps the result continuous.
    s = np.where(denom > 1e-12, (b * f - c) / np.maximum(denom, 1e-12), 0.0)
    s = clip(s, -l1, l1)
    t = b * s + f
    t_clamped = clip(t, -l2, l2)
    s = np.where(t != t_clamped, clip(b * t_clamped - c, -l1, l1), s)
    return s, t_clamped


def clip_to_slab(c, d, h, lo, hi):
    """Clip t in [lo, hi] to |c + t d| <= h, per component; arrays (M,). Returns lo, hi
    (lo > hi when empty)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (-h - c) / d, (h - c) / d
    moving = np.abs(d) > 1e-12
    inside = np.abs(c) <= h
    lo = np.where(moving, np.maximum(lo, np.minimum(t1, t2)), np.where(inside, lo, np.inf))
    hi = np.where(moving, np.minimum(hi, np.maximum(t1, t2)), np.where(inside, hi, -np.inf))
    return lo, hi


# A search over few rows evaluates GRID_POINTS points of each at once (``golden_min``): numpy's
# per-call cost, not the points, sets its price there (a ragdoll's feet on a flight of
# stairs, a few dozen capsule-box pairs: a third of the step went to the golden section's
# ~1300 numpy calls). Capsules against boxes, grid against golden section: 10 rows 0.77
# against 1.62 ms, 40 rows 1.59 against 1.80, 60 rows 2.07 against 2.08, 140 rows 4.3
# against 2.7, 1000 rows 36 against 9.8
GRID_POINTS = 15
GRID_BUDGET = 64 * GRID_POINTS     # rows times GRID_POINTS up to which the grid is taken
_GRID = np.arange(1, GRID_POINTS + 1) / (GRID_POINTS + 1)


def golden_min(functions, lo, hi, iterations=48):
    """Minimise M convex (unimodal) functions of one variable on [lo, hi], vectorised.

    functions(rows) gives f, where f(t) gives the values (R, n) of the functions numbered
    ``rows`` (R,) at arguments t (R, n): whatever f needs of those rows is gathered once, not
    at each of the search's evaluations. Returns the (M,) minimisers, accurate to about
    (hi - lo) * 0.618**iterations; where lo == hi (a sphere's zero-length segment) that
    point, without any evaluation. Used for the deepest point of a segment in a convex shape:
    a convex set's signed distance is convex, hence unimodal along a segment.

    Many rows: golden-section search, one new point a row per iteration (n = 1). Few rows
    (up to GRID_BUDGET / GRID_POINTS): GRID_POINTS equally spaced points a row per
    iteration, the interval cut to the two cells around the least (a unimodal function's
    minimum lies there), 2 / (GRID_POINTS + 1) of it per iteration: as accurate in a quarter
    of the iterations and a fifth of the numpy calls, with more points each.
    """
    out = np.array(lo, dtype=float)
    rows = (np.asarray(hi) > out).ravel().nonzero()[0]      # np.flatnonzero, less its layers
    if len(rows) == 0:
        return out
    f = functions(rows)
    a, b = out[rows], np.asarray(hi, dtype=float)[rows]
    if len(rows) * GRID_POINTS <= GRID_BUDGET:
        out[rows] = _grid_min(f, a, b, GOLDEN ** iterations)
        return out
    x1 = b - GOLDEN * (b - a)
    x2 = a + GOLDEN * (b - a)
    f1, f2 = f(x1[:, None])[:, 0], f(x2[:, None])[:, 0]
    for _ in range(iterations):
        left = f1 <= f2  # the minimum lies in [a, x2]
        b = np.where(left, x2, b)
        a = np.where(left, a, x1)
        new_x = np.where(left, b - GOLDEN * (b - a), a + GOLDEN * (b - a))
        f_new = f(new_x[:, None])[:, 0]
        x2, f2, x1, f1 = (np.where(left, x1, new_x), np.where(left, f1, f_new),
                          np.where(left, new_x, x2), np.where(left, f_new, f2))
    out[rows] = np.where(f1 <= f2, x1, x2)
    return out


def _grid_min(f, a, b, accuracy):
    """``golden_min``'s grid search on [a, b] (R,) to ``accuracy`` times b - a: the grid's
    least point, and the cells either side of it as the next interval."""
    rows = np.arange(a.shape[0]) * GRID_POINTS
    shrink = 2.0 / (GRID_POINTS + 1)
    for _ in range(max(1, int(np.ceil(np.log(accuracy) / np.log(shrink))))):
        width = b - a
        x = a[:, None] + width[:, None] * _GRID
        least = f(x).argmin(axis=1)
        best = x.reshape(-1).take(rows + least)
        cell = width / (GRID_POINTS + 1)
        a, b = best - cell, best + cell
    return best
