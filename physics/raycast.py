"""Ray casts: the first body each ray meets, where and with what surface normal.

A ray is an origin and a direction in the world frame (m); it meets a shape where it first
enters it, at a distance t >= 0 along the unit direction. A ray that starts inside a shape
meets it at t = 0, its normal against the ray (there is no surface between). Each shape is
met in its body's frame, one function per kind over all the (ray, body) pairs that the
bodies' bounding spheres let through, so the cost is one pass over the rays and bodies,
with no Python loop over either.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .collision.broadphase import bounding_radius
from .math3d import quat_to_matrix
from .shapes import BOX, CAPSULE, CYLINDER, NO_SHAPE, PLANE, SPHERE
from .validation import check_bits, numbers

MISS = np.inf
# ray-body pairs tested at once (each a few dozen bytes of temporaries)
PAIRS_AT_ONCE = 1 << 20


class RayHits(NamedTuple):
    """What R rays met: ``body`` (R,) the index of the body each met first (``world.bodies``;
    -1: none within its reach), ``distance`` (R,) m along the unit direction (inf: none),
    ``point`` (R, 3) m and ``normal`` (R, 3) unit, world frame, the surface's outward normal
    where it was met (NaN: none)."""
    body: np.ndarray
    distance: np.ndarray
    point: np.ndarray
    normal: np.ndarray


class RayHit(NamedTuple):
    """What one ray met first: ``body`` (Body), ``point`` (3,) m and ``normal`` (3,) unit,
    world frame (the surface's outward normal there), ``distance`` m along the ray."""
    body: object
    point: np.ndarray
    normal: np.ndarray
    distance: float


def world_ray_casts(world, origins, directions, max_distance=np.inf, mask=-1,
                    ignore=()) -> RayHits:
    """R rays cast into ``world`` (see World.ray_casts)."""
    origins = _rows("origins", origins)
    directions = _rows("directions", directions)
    if origins.shape != directions.shape:
        raise ValueError(f"origins and directions must have one row each per ray, got "
                         f"{origins.shape[0]} origins and {directions.shape[0]} directions")
    length = np.linalg.norm(directions, axis=1)
    if np.any(length == 0.0):
        raise ValueError(f"directions must not be zero: row {int(np.argmin(length))} is "
                         f"{directions[np.argmin(length)].tolist()}")
    reach = _reach(max_distance, origins.shape[0])
    mask = check_bits("mask", mask)
    n = world._n
    kind, params = world._kind[1:n], world._params[1:n]
    candidate = (kind != NO_SHAPE) & ((world._group[1:n] & mask) != 0)
    for body in ([ignore] if not isinstance(ignore, (list, tuple, set)) else ignore):
        if body is None or getattr(body, "_world", None) is not world or body.row < 1:
            raise ValueError(f"ignore must be bodies of this world, got {body!r}")
        candidate[body.index] = False
    radius = np.where(kind == PLANE, np.inf, bounding_radius(kind, params))
    position, rotation = world._x[1:n], quat_to_matrix(world._q[1:n])
    directions = directions / length[:, None]
    # (rays in batches of about a million ray-body pairs: the bounding test is dense)
    batch = max(1, PAIRS_AT_ONCE // max(n - 1, 1))
    parts = [cast_rays(kind, params, position, rotation, radius, origins[i:i + batch],
                       directions[i:i + batch], reach[i:i + batch],
                       np.broadcast_to(candidate, (min(batch, origins.shape[0] - i), n - 1)))
             for i in range(0, origins.shape[0], batch)]
    return RayHits(*(np.concatenate(arrays) for arrays in zip(*parts)))


def _reach(max_distance, r):
    """(r,) positive distances (m; inf: no end) from one number or one per ray."""
    arr = np.ravel(numbers("max_distance", max_distance, "a positive number or one per ray"))
    if arr.size not in (1, r):
        raise ValueError(f"max_distance must be one number or one per ray ({r}), got "
                         f"{arr.size}")
    if not np.all(arr > 0.0):       # (NaN too)
        raise ValueError(f"max_distance must be positive (inf: no end), got "
                         f"{arr[~(arr > 0.0)][0]!r}")
    return np.broadcast_to(arr, (r,))


def _rows(name, value):
    """(R, 3) finite floats from one point (3,) or R rows."""
    arr = numbers(name, value, "3 real numbers a row")
    arr = arr.reshape(1, 3) if arr.shape == (3,) else arr
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name} must be (R, 3) numbers, one row per ray, got shape "
                         f"{arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    return arr


def cast_rays(kind, params, position, rotation, radius, origins, directions, reach, candidate):
    """The first of N bodies (shape ``kind`` (N,), ``params`` (N, 4) as in ``shapes``, centre
    ``position`` (N, 3) m, ``rotation`` (N, 3, 3) body to world, bounding ``radius`` (N,) m,
    inf for planes) that each of R rays (``origins`` (R, 3) m, unit ``directions`` (R, 3))
    meets within ``reach`` (R,) m, among the bodies ``candidate`` (R, N) bool lets it meet.
    Returns RayHits with ``body`` indexing the N bodies."""
    r = origins.shape[0]
    to_centre = position[None, :, :] - origins[:, None, :]                  # (R, N, 3)
    along = np.einsum("rnk,rk->rn", to_centre, directions)
    across = np.einsum("rnk,rnk->rn", to_centre, to_centre) - along ** 2
    # (a bounding sphere the ray's line misses, or that lies behind it or beyond its reach)
    near = candidate & (across <= radius ** 2) & (along + radius >= 0.0) \
        & (along - radius <= reach[:, None])
    ray, body = np.nonzero(near)
    t = np.full(ray.size, MISS)
    local_normal = np.zeros((ray.size, 3))
    rot = rotation[body]
    o = np.einsum("pji,pj->pi", rot, origins[ray] - position[body])         # body frame
    d = np.einsum("pji,pj->pi", rot, directions[ray])
    k, p = kind[body], params[body]
    for shape, meet in ((SPHERE, _sphere), (BOX, _box), (CAPSULE, _capsule),
                        (CYLINDER, _cylinder)):
        pick = np.flatnonzero(k == shape)
        if pick.size:
            t[pick], local_normal[pick] = meet(o[pick], d[pick], p[pick])
    normal = np.einsum("pij,pj->pi", rot, local_normal)
    pick = np.flatnonzero(k == PLANE)
    if pick.size:                          # (planes are given in the world frame)
        t[pick], normal[pick] = _plane(origins[ray[pick]], directions[ray[pick]], p[pick])
    # a hit met from inside faces back along the ray
    inside = t == 0.0
    normal[inside] = -directions[ray[inside]]
    t = np.where(t <= reach[ray], t, MISS)
    # each ray's nearest: sort the pairs by (ray, t) and take each ray's first
    order = np.lexsort((t, ray))
    first = order[np.flatnonzero(np.r_[True, np.diff(ray[order]) != 0])] if ray.size else order
    first = first[np.isfinite(t[first])]
    hits = RayHits(np.full(r, -1), np.full(r, MISS), np.full((r, 3), np.nan),
                   np.full((r, 3), np.nan))
    rays = ray[first]
    hits.body[rays] = body[first]
    hits.distance[rays] = t[first]
    hits.point[rays] = origins[rays] + t[first, None] * directions[rays]
    hits.normal[rays] = normal[first]
    return hits


def _entry(t_near, t_far):
    """The distance where a ray enters a convex region it is inside of between t_near and
    t_far along its line (0 where it starts inside; MISS where the region is empty or behind
    it)."""
    return np.where((t_near <= t_far) & (t_far >= 0.0), np.maximum(t_near, 0.0), MISS)


def _sphere(o, d, p):
    """Rays o + t d (P, 3) in a sphere's frame against radius p[:, 0]: (t (P,), normal)."""
    b = np.einsum("pk,pk->p", o, d)
    c = np.einsum("pk,pk->p", o, o) - p[:, 0] ** 2
    root = np.sqrt(np.maximum(b * b - c, 0.0))
    t = np.where(b * b - c >= 0.0, _entry(-b - root, -b + root), MISS)
    return t, _unit(o + np.where(np.isfinite(t), t, 0.0)[:, None] * d)


def _box(o, d, p):
    """Rays against boxes of half extents p[:, :3] (the slabs' overlap): (t, normal)."""
    h = p[:, :3]
    with np.errstate(divide="ignore", invalid="ignore"):
        lo, hi = (-h - o) / d, (h - o) / d
    # (along an axis the ray does not move on, it is within the slab for ever or never)
    still = d == 0.0
    within = np.abs(o) <= h
    lo = np.where(still, np.where(within, -np.inf, np.inf), lo)
    hi = np.where(still, np.where(within, np.inf, -np.inf), hi)
    near, far = np.minimum(lo, hi), np.maximum(lo, hi)
    axis = np.argmax(near, axis=1)
    t = _entry(near.max(axis=1), far.min(axis=1))
    normal = np.zeros_like(o)
    rows = np.arange(o.shape[0])
    normal[rows, axis] = -np.sign(d[rows, axis])
    return t, normal


def _side(o, d, radius, half_length):
    """Rays against the side of an infinite cylinder of ``radius`` on the local z axis, kept
    where they meet it within |z| <= half_length: (t, normal)."""
    a = d[:, 0] ** 2 + d[:, 1] ** 2
    b = o[:, 0] * d[:, 0] + o[:, 1] * d[:, 1]
    c = o[:, 0] ** 2 + o[:, 1] ** 2 - radius ** 2
    disc = b * b - a * c
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (-b - np.sqrt(np.maximum(disc, 0.0))) / a
    t = np.where((a > 0.0) & (disc >= 0.0) & (t >= 0.0), t, MISS)
    z = o[:, 2] + np.where(np.isfinite(t), t, 0.0) * d[:, 2]
    t = np.where(np.abs(z) <= half_length, t, MISS)
    hit = o + np.where(np.isfinite(t), t, 0.0)[:, None] * d
    return t, _unit(hit * np.array([1.0, 1.0, 0.0]))


def _capsule(o, d, p):
    """Rays against capsules (radius p[:, 0], half length p[:, 1]): the side or either end's
    sphere, whichever is met first (0 from inside the segment's reach)."""
    radius, half = p[:, 0], p[:, 1]
    t, normal = _side(o, d, radius, half)
    for end in (-1.0, 1.0):
        centre = np.zeros_like(o)
        centre[:, 2] = end * half
        t_end, n_end = _sphere(o - centre, d, p)
        nearer = t_end < t
        t, normal = np.where(nearer, t_end, t), np.where(nearer[:, None], n_end, normal)
    # (inside the side's cylinder between the ends: within the capsule)
    inside = (o[:, 0] ** 2 + o[:, 1] ** 2 <= radius ** 2) & (np.abs(o[:, 2]) <= half)
    return np.where(inside, 0.0, t), normal


def _cylinder(o, d, p):
    """Rays against cylinders (radius p[:, 0], half length p[:, 1]): the side or a cap."""
    radius, half = p[:, 0], p[:, 1]
    t, normal = _side(o, d, radius, half)
    with np.errstate(divide="ignore", invalid="ignore"):
        for end in (-1.0, 1.0):
            t_cap = (end * half - o[:, 2]) / d[:, 2]
            at = o + np.where(np.isfinite(t_cap), t_cap, 0.0)[:, None] * d
            on = (t_cap >= 0.0) & (at[:, 0] ** 2 + at[:, 1] ** 2 <= radius ** 2) \
                & (end * o[:, 2] >= half)
            nearer = on & (t_cap < t)
            t = np.where(nearer, t_cap, t)
            normal = np.where(nearer[:, None], np.array([0.0, 0.0, end]), normal)
    inside = (o[:, 0] ** 2 + o[:, 1] ** 2 <= radius ** 2) & (np.abs(o[:, 2]) <= half)
    return np.where(inside, 0.0, t), normal


def _plane(o, d, p):
    """Rays in the world frame against planes n . x = offset (p = (n, offset)), solid behind
    n: (t, normal n)."""
    n, offset = p[:, :3], p[:, 3]
    height = np.einsum("pk,pk->p", n, o) - offset
    rate = np.einsum("pk,pk->p", n, d)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(rate < 0.0, -height / rate, MISS)
    return np.where(height <= 0.0, 0.0, np.where(t >= 0.0, t, MISS)), n


def _unit(v):
    """Rows of v (P, 3) scaled to unit length (zero rows left zero)."""
    norm = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, norm, out=np.zeros_like(v), where=norm > 0.0)
