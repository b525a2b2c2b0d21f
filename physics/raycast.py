"""Ray casts: the first body each ray meets, where and with what surface normal.

A ray is an origin and a direction in the world frame (m); it meets a shape where it first
enters it, at a distance t >= 0 along the unit direction. A ray that starts inside a shape
meets it at t = 0, its normal against the ray (there is no surface between); one that starts
on a shape's surface meets it at 0 only if it goes in, and not at all if it leaves the
surface or runs along it (``rayshapes``). The bodies' bounding boxes pick each ray's
candidates (``raycull``), and each shape is met exactly in its body's frame, one function
per kind over all the (ray, body) pairs, with no Python loop over rays or bodies.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .collision.broadphase import bounding_radius
from .math3d import quat_to_matrix
from .raycull import ray_box_pairs, row_max
from .rayshapes import MISS, SURFACE_TOLERANCE, meet
from .shapes import NO_SHAPE, PLANE
from .validation import check_bits, numbers

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


def world_ray_casts(world, origins, directions, max_distance=np.inf, mask=-1, ignore=(),
                    ignore_each=None) -> RayHits:
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
    r = origins.shape[0]
    reach = _reach(max_distance, r)
    mask = check_bits("mask", mask)
    n = world._n
    kind, params = world._kind[1:n], world._params[1:n]
    candidate = (kind != NO_SHAPE) & ((world._group[1:n] & mask) != 0)
    candidate[_indices(world, "ignore", ignore)] = False
    own = None if ignore_each is None else _ignore_each(world, ignore_each, r)
    position = world._x[1:n]
    directions = directions / length[:, None]
    planes = np.flatnonzero(candidate & (kind == PLANE))
    bounded = np.flatnonzero(candidate & (kind != PLANE))
    # (cubes about the bounding spheres need no rotations: only the candidates' are made;
    # grown by twice the farthest an origin counts as on a surface (rayshapes), so that
    # every pair whose ray starts on the surface is a candidate)
    centre, radius = position[bounded], world_radii(world, kind, params)[bounded]
    size = max(np.abs(origins).max(), np.abs(centre).max(initial=0.0)
               + radius.max(initial=0.0))
    radius = (radius + 4.0 * SURFACE_TOLERANCE * max(size, 1.0))[:, None]
    lo, hi = centre - radius, centre + radius
    # (rays in batches of about a million ray-body pairs at most)
    batch = max(1, PAIRS_AT_ONCE // max(n - 1, 1))
    parts = []
    for i in range(0, r, batch):
        o, d, far = origins[i:i + batch], directions[i:i + batch], reach[i:i + batch]
        ray, box = ray_box_pairs(lo, hi, o, d, far)
        ray, body = _with_planes(ray, bounded[box], planes, o.shape[0])
        if own is not None:
            keep = body != own[i:i + batch][ray]
            ray, body = ray[keep], body[keep]
        parts.append(cast_pairs(kind, params, position, world._q[1:n], o, d, far, ray, body))
    return RayHits(*(np.concatenate(arrays) for arrays in zip(*parts)))


def world_radii(world, kind, params):
    """(N,) m the bounding radii of the world's bodies' shapes: those the step's broadphase
    keeps (its PairCache, made with the compiled model: of the bodies' own shapes, not of
    static boxes grown across internal faces), or made afresh before a step has compiled
    them."""
    compiled = world._compiled
    if compiled is not None:
        return compiled.pair_cache.own_radius[1:world._n]
    return bounding_radius(kind, params)


def _with_planes(ray, body, planes, r):
    """The pairs (ray, body) and every ray with every plane (planes are unbounded), sorted
    by ray then body."""
    ray = np.concatenate([ray, np.repeat(np.arange(r), planes.size)])
    body = np.concatenate([body, np.tile(planes, r)])
    order = np.lexsort((body, ray))
    return ray[order], body[order]


def _indices(world, name, bodies):
    """(K,) int: the indices into ``world.bodies`` of ``bodies`` (a Body or an index, or a
    list of them)."""
    items = bodies if isinstance(bodies, (list, tuple, set, np.ndarray)) else [bodies]
    return np.array([_index(world, name, b) for b in items], dtype=np.int64)


def _index(world, name, body):
    """The index of one body given as a Body of ``world`` or an index into its bodies."""
    count = world._n - 1
    if isinstance(body, (int, np.integer)) and not isinstance(body, (bool, np.bool_)):
        if 0 <= body < count:
            return int(body)
        raise ValueError(f"{name} must be bodies of this world or their indices (0 to "
                         f"{count - 1}), got index {body}")
    if getattr(body, "_world", None) is not world or getattr(body, "_row", -1) < 1:
        raise ValueError(f"{name} must be bodies of this world or their indices, got "
                         f"{body!r}")
    return body._row - 1


def _ignore_each(world, value, r):
    """(r,) int: the body each ray leaves out (-1: none), from one index or Body (or -1 or
    None) per ray."""
    items = list(value) if not isinstance(value, np.ndarray) else value.tolist()
    if len(items) != r:
        raise ValueError(f"ignore_each must give one body (or -1 or None) per ray ({r}), got "
                         f"{len(items)}")
    return np.array([-1 if b is None or (isinstance(b, (int, np.integer)) and b == -1)
                     else _index(world, "ignore_each", b) for b in items], dtype=np.int64)


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


def cast_pairs(kind, params, position, orientation, origins, directions, reach, ray, body):
    """The first of N bodies (shape ``kind`` (N,), ``params`` (N, 4) as in ``shapes``, centre
    ``position`` (N, 3) m, ``orientation`` (N, 4) quaternions, body to world) that each of R rays
    (``origins`` (R, 3) m, unit ``directions`` (R, 3)) meets within ``reach`` (R,) m, among
    the pairs (``ray``, ``body``) (P,) each; the others are not looked at. Returns RayHits
    with ``body`` indexing the N bodies."""
    r = origins.shape[0]
    t = np.full(ray.size, MISS)
    normal = np.zeros((ray.size, 3))
    rot = quat_to_matrix(orientation[body])
    o_world, d_world = origins[ray], directions[ray]
    centre = position[body]
    # (how near a surface an origin counts as on it: rounding grows with the coordinates)
    tol = SURFACE_TOLERANCE * np.maximum(row_max(np.abs(o_world)), row_max(np.abs(centre)))
    tol = np.maximum(tol, SURFACE_TOLERANCE)
    o = np.einsum("pji,pj->pi", rot, o_world - centre)                   # body frame
    d = np.einsum("pji,pj->pi", rot, d_world)
    k, p = kind[body], params[body]
    inside = np.zeros(ray.size, dtype=bool)
    for shape in np.unique(k):
        pick = np.flatnonzero(k == shape)
        if shape == PLANE:                  # (planes are given in the world frame)
            t[pick], normal[pick], inside[pick] = meet(shape, o_world[pick], d_world[pick],
                                                       p[pick], tol[pick])
        elif shape != NO_SHAPE:
            t[pick], local, inside[pick] = meet(shape, o[pick], d[pick], p[pick], tol[pick])
            normal[pick] = np.einsum("pij,pj->pi", rot[pick], local)
    # (met from inside: no surface between, the normal faces back along the ray)
    normal[inside] = -d_world[inside]
    t = np.where(t <= reach[ray], t, MISS)
    # each ray's nearest: sort the pairs by (ray, t, body) and take each ray's first
    order = np.lexsort((body, t, ray))
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
