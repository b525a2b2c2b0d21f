"""Closest surface points of boxes and cylinders, and point-against-shape contacts.

The queries work in the shape's body frame: p (M, 3) or (M, C, 3) local points, the shape's
dimensions broadcast against p's leading axes. They return

    dist    signed distance from p to the surface (< 0 inside)
    surface the closest point on the surface, local
    normal  the outward unit normal there (the gradient of the signed distance), local
    region  which feature is closest (see each function)

so that p == surface + normal * dist exactly, inside and outside. That identity is what makes a
contact's two surface points (point +- normal * depth / 2) exact.
"""
from __future__ import annotations

import numpy as np

from .geometry import clip, norm, rotate, to_local, to_world

# Box regions: face id 2 k + (1 if the face is on the + side of axis k), or EDGE_OR_VERTEX.
EDGE_OR_VERTEX = -1
# Cylinder regions.
CYL_SIDE, CYL_CAP, CYL_RIM = 0, 1, 2


def _lead(x, p, trailing=0):
    """Give per-shape values x (M,) or (M, 3) extra axes so they broadcast against p."""
    x = np.asarray(x, dtype=float)
    while x.ndim - trailing < p.ndim - 1:
        x = np.expand_dims(x, x.ndim - trailing)
    return x


def box_closest(p, h):
    """Box with half extents h (M, 3) centred at the origin. region: face id (0..5) or -1."""
    h = _lead(h, p, trailing=1)
    q = clip(p, -h, h)
    diff = p - q
    outside_dist = norm(diff)
    clamped = np.abs(p) > h
    n_clamped = clamped.sum(axis=-1)
    inside = n_clamped == 0

    # Inside: the nearest face is the one with the least gap h - |p|.
    # Outside in a face region: the only clamped axis.
    gap = h - np.abs(p)
    k = np.where(inside, np.argmin(gap, axis=-1), np.argmax(clamped, axis=-1))
    # x[..., k] as a gather from the flat x (take_along_axis costs several times more)
    at_k = k + np.arange(0, 3 * k.size, 3).reshape(k.shape)
    pk = np.ravel(p).take(at_k)
    sign = np.where(pk >= 0.0, 1.0, -1.0)
    axis = np.zeros(p.shape)
    np.put(axis, at_k, sign)
    gap_k = gap.reshape(-1).take(at_k)

    # In a face region the offset p - q is exactly along the face axis; using the axis itself
    # keeps the normal exactly the face normal.
    face = (n_clamped <= 1)[..., None]
    normal = np.where(face, axis, diff / np.maximum(outside_dist, 1e-300)[..., None])
    surface = np.where(inside[..., None], p + axis * gap_k[..., None], q)
    dist = np.where(inside, -gap_k, outside_dist)
    region = np.where(n_clamped <= 1, 2 * k + (sign > 0), EDGE_OR_VERTEX)
    return dist, surface, normal, region


def box_distance(p, h):
    """``box_closest``'s dist alone, to the bit (what a search along a segment evaluates
    dozens of times: a quarter of box_closest's operations)."""
    h = _lead(h, p, trailing=1)
    outside_dist = norm(p - clip(p, -h, h))
    abs_p = np.abs(p)
    inside = (abs_p <= h).all(axis=-1)
    return np.where(inside, -(h - abs_p).min(axis=-1), outside_dist)


def cylinder_distance(p, radius, half_length):
    """``cylinder_closest``'s dist alone, to the bit."""
    dr = np.hypot(p[..., 0], p[..., 1]) - _lead(radius, p)
    dz = np.abs(p[..., 2]) - _lead(half_length, p)
    rim = (dr > 0) & (dz > 0)
    return np.where(rim, np.hypot(dr, dz), np.maximum(dr, dz))


def cylinder_closest(p, radius, half_length):
    """Solid cylinder along local z; radius, half_length (M,). region: CYL_SIDE/CAP/RIM."""
    r, hl = _lead(radius, p), _lead(half_length, p)
    rho = np.hypot(p[..., 0], p[..., 1])
    # Radial direction; on the axis any direction is as good (choose local x).
    on_axis = rho <= 1e-15
    ux = np.where(on_axis, 1.0, p[..., 0] / np.maximum(rho, 1e-300))
    uy = np.where(on_axis, 0.0, p[..., 1] / np.maximum(rho, 1e-300))
    zs = np.where(p[..., 2] >= 0.0, 1.0, -1.0)
    dr = rho - r
    dz = np.abs(p[..., 2]) - hl
    zero = np.zeros_like(rho)

    rim = (dr > 0) & (dz > 0)
    # Otherwise (inside, or outside in one direction only) the larger of dr, dz decides.
    side = ~rim & (dr >= dz)
    region = np.where(rim, CYL_RIM, np.where(side, CYL_SIDE, CYL_CAP))

    r_b, hl_b = np.broadcast_to(r, rho.shape), np.broadcast_to(hl, rho.shape)
    side_pt = np.stack([r_b * ux, r_b * uy, p[..., 2]], -1)
    cap_pt = np.stack([p[..., 0], p[..., 1], zs * hl_b], -1)
    rim_pt = np.stack([r_b * ux, r_b * uy, zs * hl_b], -1)
    rim_d = np.hypot(dr, dz)
    rim_n = np.stack([ux * dr, uy * dr, zs * dz], -1) / np.maximum(rim_d, 1e-300)[..., None]
    side_n = np.stack([ux, uy, zero], -1)
    cap_n = np.stack([zero, zero, zs], -1)

    def pick(a, b, c):
        return np.where(rim[..., None], a, np.where(side[..., None], b, c))

    surface = pick(rim_pt, side_pt, cap_pt)
    normal = pick(rim_n, side_n, cap_n)
    dist = np.where(rim, rim_d, np.where(side, dr, dz))
    return dist, surface, normal, region


def point_contacts(closest, pos, rot, q, radius):
    """Contacts of spheres (centre q, radius; radius 0 for points) against shape A.

    closest : callable local points -> (dist, surface, normal, region) of shape A
    pos (M, 3), rot (M, 3, 3) : pose of A;  q : (M, 3) or (M, C, 3) world;  radius broadcast
    Returns point, normal (from A towards the sphere), depth, region, all world frame.
    """
    ql = to_local(rot, pos, q)
    dist, surf, n_local, region = closest(ql)
    normal = rotate(rot, n_local)
    depth = radius - dist
    # A's surface point is surf; the sphere's is surf - normal * depth; the contact is midway.
    point = to_world(rot, pos, surf) - normal * (depth[..., None] / 2.0)
    return point, normal, depth, region
