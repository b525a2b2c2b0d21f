"""Where a ray meets each kind of shape, in the shape's frame (planes: the world's).

A shape is solid: a ray that starts inside it meets it at once (distance 0, its normal
against the ray: there is no surface between), as PhysX and Jolt report a ray that starts
in a solid shape. A ray that starts on its surface meets it at 0 only if it goes in; one
that leaves the surface or runs along it does not meet it at all (the shapes are convex, so
it never comes back), as Unity, Bullet and PhysX let a ray cast from a hit point along the
reflected direction go on to the next body. "On" is within ``tol`` (m) of the surface,
which covers the rounding of a hit point computed by an earlier cast.
"""
from __future__ import annotations

import numpy as np

from .collision.geometry import normalize
from .shapes import BOX, CAPSULE, CYLINDER, PLANE, SPHERE

MISS = np.inf
# How far from a surface (m, per metre of the coordinates' size, at least 1 m) a ray's
# origin still counts as on it, and how small a slope (of a unit direction against the
# surface normal) counts as along it: rounding of a hit point is ~1e-16 of its coordinates.
SURFACE_TOLERANCE = 1e-9


def meet(kind, o, d, p, tol):
    """Rays o + t d (P, 3) (unit d) against P shapes of one ``kind`` with params p (P, 4),
    in the shapes' frames (planes: the world's), an origin within tol (P,) m of a surface
    counting as on it: (t (P,) m, MISS where none; normal (P, 3), the outward surface normal
    where met; inside (P,) bool: the ray starts inside, met at 0 with no surface (its normal
    is the caller's: against the ray in the world frame))."""
    t, normal = _ENTRY[kind](o, d, p)
    clearance, into, surface = _START[kind](o, d, p, tol)
    on = np.abs(clearance) <= tol
    inside = clearance < -tol
    t = np.where(inside, 0.0, np.where(on, np.where(into, 0.0, MISS), t))
    return t, np.where(on[:, None], surface, normal), inside


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
    return t, normalize(o + np.where(np.isfinite(t), t, 0.0)[:, None] * d, 0.0)


def _box(o, d, p):
    """Rays against boxes of half extents p[:, :3] (the slabs' overlap): (t, normal)."""
    h = p[:, :3]
    with np.errstate(divide="ignore", invalid="ignore"):
        lo, hi = (-h - o) / d, (h - o) / d
    # (along an axis the ray does not move on, it is within the slab for ever or never)
    still = d == 0.0
    within = np.abs(o) <= h
    near = np.where(still, np.where(within, -np.inf, np.inf), np.minimum(lo, hi))
    far = np.where(still, np.where(within, np.inf, -np.inf), np.maximum(lo, hi))
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
    return t, normalize(hit * np.array([1.0, 1.0, 0.0]), 0.0)


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


# Where each ray starts against its shape: (clearance (P,) m, negative inside, the exact
# distance to the surface within tol of it; into (P,) bool: the direction goes into the
# solid at the origin's surface point, against the normal of every face it lies on; the
# outward surface normal there (P, 3)).

def _round_start(v, d, radius, tol):
    """The start against a ball of ``radius`` about the origin of offsets v (P, 3)."""
    length = np.linalg.norm(v, axis=1)
    normal = normalize(v, 0.0)
    return length - radius, np.einsum("pk,pk->p", d, normal) < -SURFACE_TOLERANCE, normal


def _start_sphere(o, d, p, tol):
    return _round_start(o, d, p[:, 0], tol)


def _start_capsule(o, d, p, tol):
    """(a capsule is a ball about its segment's nearest point)"""
    v = o.copy()
    v[:, 2] -= np.clip(o[:, 2], -p[:, 1], p[:, 1])
    return _round_start(v, d, p[:, 0], tol)


def _faces_start(gap, outward_normal, outward_rate, tol):
    """The start against a solid bounded by faces (box: 6, cylinder: side and caps) from
    each face's gap (P, F) m (outside it: > 0), each face's outward normal at the origin
    (P, F, 3) and the direction's rate along it (P, F)."""
    clearance = gap.max(axis=1)
    on_face = gap >= -tol[:, None]
    into = ~np.any(on_face & (outward_rate >= -SURFACE_TOLERANCE), axis=1)
    nearest = np.argmax(gap, axis=1)
    return clearance, into, outward_normal[np.arange(gap.shape[0]), nearest]


def _start_box(o, d, p, tol):
    side = np.where(o >= 0.0, 1.0, -1.0)
    return _faces_start(np.abs(o) - p[:, :3], side[:, :, None] * np.eye(3), d * side, tol)


def _start_cylinder(o, d, p, tol):
    radial = np.hypot(o[:, 0], o[:, 1])
    side = normalize(o * np.array([1.0, 1.0, 0.0]), 0.0)
    cap = np.zeros_like(o)
    cap[:, 2] = np.where(o[:, 2] >= 0.0, 1.0, -1.0)
    gap = np.stack([radial - p[:, 0], np.abs(o[:, 2]) - p[:, 1]], axis=1)
    normals = np.stack([side, cap], axis=1)
    return _faces_start(gap, normals, np.einsum("pfk,pk->pf", normals, d), tol)


def _start_plane(o, d, p, tol):
    n = p[:, :3]
    rate = np.einsum("pk,pk->p", n, d)
    return np.einsum("pk,pk->p", n, o) - p[:, 3], rate < -SURFACE_TOLERANCE, n


_ENTRY = {SPHERE: _sphere, BOX: _box, CAPSULE: _capsule, CYLINDER: _cylinder, PLANE: _plane}
_START = {SPHERE: _start_sphere, BOX: _start_box, CAPSULE: _start_capsule,
          CYLINDER: _start_cylinder, PLANE: _start_plane}
