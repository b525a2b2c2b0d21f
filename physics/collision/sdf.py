"""Closest surface points of boxes and cylinders, and point-against-shape contacts.

The queries work in the shape's body frame: p (M, 3) or (M, C, 3) local points, the shape's
dimensions broadcast against p's leading axes. They return

    dist    signed distance from p to the surface (< 0 inside)
    surface the closest point on the surface, local
    normal  the outward unit normal there (the gradient of the signed distance), local
    region  which feature is closest (see each function)

so that p == surface + normal * dist exactly, inside and outside. That identity is what makes a
contact's two surface points (point +- normal * depth / 2) exact.

A point of another shape's edge or corner (a cylinder's rim, a box's edge) may lie on this
shape's surface, or inside it by less than it is inside through a neighbouring face: where two
shapes' edges line up (two equal cylinders stacked, a box whose edges' midpoints lie on a
cylinder's rim) the point sits on this shape's side while both overlap through the top, and
the nearest face, the side, read depth 0 with a horizontal normal: nothing held the top one
up. Given the other shape's outward normals at the point (``facing``: its faces there), the
queries take the nearest face that the other shape faces (see FACING_COS) instead of a
nearer one it does not, however deep the point: through a face it does not face, the other
shape reaches on into this one past the point, and the point's depth says nothing of theirs.
"""
from __future__ import annotations

from functools import reduce

import numpy as np

from .geometry import clip, norm, rotate, to_local, to_world

# Box regions: face id 2 k + (1 if the face is on the + side of axis k), or EDGE_OR_VERTEX.
EDGE_OR_VERTEX = -1
# Cylinder regions.
CYL_SIDE, CYL_CAP, CYL_RIM = 0, 1, 2
# A face of this shape (outward normal n) can be where another shape's edge or corner point
# touches it only if one of the other shape's faces there faces it: -n . g >= FACING_COS for
# one of their outward normals g. If none does, the other shape reaches on past the point into
# this one (its faces there are square to n or face along it: two coinciding sides), and
# the point's depth through that face says nothing of the overlap. An edge of right-angled
# faces faces every n its normal cone holds within 45 degrees, a corner within 54.7 degrees
# (cos 0.71, 0.58): 60 degrees leaves those alone, and a face tilted up to 30 degrees off
# a coinciding side still counts as coinciding.
FACING_COS = 0.5
# How far outside this shape (m) a point given with ``facing`` may lie and still be measured
# through a face the other shape faces. Points on the surface come out of to_local a few ulps
# either side of it; and a point just past this shape's side and below its top, whose shape
# reaches back over the top (the rim of a stacked cylinder a little wider than the one
# below), touches the top at most this far off it. Measured as a gap to the side, its
# horizontal normal held the wider cylinder from sliding that way, and turned into the top's
# when the point moved in by an ulp (no kept manifold could stand for both). As much as
# resting contacts are left to overlap (contact_rows.SLOP).
ON_SURFACE = 3e-4


def _lead(x, p, trailing=0):
    """Give per-shape values x (M,) or (M, 3) extra axes so they broadcast against p."""
    x = np.asarray(x, dtype=float)
    while x.ndim - trailing < p.ndim - 1:
        x = np.expand_dims(x, x.ndim - trailing)
    return x


def box_closest(p, h, facing=None):
    """Box with half extents h (M, 3) centred at the origin. region: face id (0..5) or -1.

    facing: None, or the outward unit normals of the other shape's faces that meet at each
    point p (2 at an edge, 3 at a corner; a zero vector faces nothing), local: a list of
    arrays shaped like p; then a point on or in the box (within ON_SURFACE) whose nearest
    face that shape does not face (FACING_COS) takes the nearest face it does, if any.
    """
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
    face_region = n_clamped <= 1
    if facing is not None:
        # per axis, whether the other shape faces the box's face on p's side of it (a few
        # whole-array operations per normal: reductions over short axes cost more)
        inward = np.where(p >= 0.0, -1.0, 1.0)
        faced = reduce(np.maximum, [inward * g for g in facing]) >= FACING_COS
        faced_k = faced.reshape(-1).take(k + np.arange(0, 3 * k.size, 3).reshape(k.shape))
        near = (np.abs(p) <= h + ON_SURFACE).all(axis=-1)
        switch = near & ~faced_k & (faced[..., 0] | faced[..., 1] | faced[..., 2])
        # the switched point is in or on the box (or within ON_SURFACE of it): measured as
        # inside, through its new face
        k = np.where(switch, np.argmin(np.where(faced, gap, np.inf), axis=-1), k)
        inside = inside | switch
        face_region = face_region | switch
    # x[..., k] as a gather from the flat x (take_along_axis costs several times more)
    at_k = k + np.arange(0, 3 * k.size, 3).reshape(k.shape)
    pk = np.ravel(p).take(at_k)
    sign = np.where(pk >= 0.0, 1.0, -1.0)
    axis = np.zeros(p.shape)
    np.put(axis, at_k, sign)
    gap_k = gap.reshape(-1).take(at_k)

    # In a face region the offset p - q is exactly along the face axis; using the axis itself
    # keeps the normal exactly the face normal.
    face = face_region[..., None]
    normal = np.where(face, axis, diff / np.maximum(outside_dist, 1e-300)[..., None])
    surface = np.where(inside[..., None], p + axis * gap_k[..., None], q)
    dist = np.where(inside, -gap_k, outside_dist)
    region = np.where(face_region, 2 * k + (sign > 0), EDGE_OR_VERTEX)
    return dist, surface, normal, region


def box_distance(p, h):
    """``box_closest``'s dist alone, to the bit (what a search along a segment evaluates
    dozens of times: a quarter of box_closest's operations)."""
    h = _lead(h, p, trailing=1)
    outside_dist = norm(p - clip(p, -h, h))
    abs_p = np.abs(p)
    inside = (abs_p <= h).all(axis=-1)
    return np.where(inside, -(h - abs_p).min(axis=-1), outside_dist)


# The sign patterns of the axes a point outside a box lies beyond (-1, +1; 0: within that
# axis's slab), all but "within every slab": the pieces on which the distance outside is the
# root of one quadratic in the segment's parameter.
_OUTSIDE_SIGNS = np.array([(i, j, k) for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1)
                           if (i, j, k) != (0, 0, 0)], dtype=float)
# where s_i q_i - h_i = s_j q_j - h_j: every pair of axes (i, j), every pair of signs
_I, _J = np.repeat([0, 0, 1], 4), np.repeat([1, 2, 2], 4)
_SI, _SJ = np.tile([1.0, 1.0, -1.0, -1.0], 3), np.tile([1.0, -1.0, 1.0, -1.0], 3)


def box_segment_deepest(c, d, h, half_length):
    """The parameter t in [-half_length, half_length] (M,) of the segment c + t d (local, d a
    unit vector; c, d (M, 3)) where box_distance(., h) is least: the segment's deepest point
    in the box, or its nearest outside it.

    Along a line the box's signed distance is convex and piecewise simple: outside, the root
    of a quadratic on each stretch beyond the same faces; inside, the largest of the linear
    |q_i| - h_i. So its least value lies at an end, where the point crosses a face's plane,
    where |q_i| has its kink (q_i = 0), where two of the |q_i| - h_i are equal, or at the
    least point of one of the quadratics. All 49 candidates are measured at once and the
    least taken: exact, where a search needed a dozen rounds of evaluations."""
    hl = np.asarray(half_length, dtype=float)
    if not hl.any():
        # points only (spheres: marbles against a bin's walls): every candidate is clipped to
        # t = +0.0 (clip's upper bound +0.0 wins a tie of zeros), all measure alike and the
        # first is taken: that zero, without the 49 candidates' distances (box_round of
        # spheres: 87 -> 59 Python calls; a pour's walls against its marbles)
        return np.zeros(hl.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        crossings = (np.concatenate([h, -h], axis=1) - np.concatenate([c, c], axis=1)) / \
            np.concatenate([d, d], axis=1)
        kinks = -c / d
        equal = ((h[:, _I] - h[:, _J] - _SI * c[:, _I] + _SJ * c[:, _J])
                 / (_SI * d[:, _I] - _SJ * d[:, _J]))
        # sum over the axes beyond a face of (s_i h_i - c_i) d_i, over the sum of d_i^2
        beyond = np.abs(_OUTSIDE_SIGNS).T
        quadratic = ((h * d) @ _OUTSIDE_SIGNS.T - (c * d) @ beyond) / ((d * d) @ beyond)
        t = np.concatenate([-hl[:, None], hl[:, None], crossings, kinks, equal,
                            quadratic], axis=1)
    t = np.clip(np.where(np.isfinite(t), t, 0.0), -hl[:, None], hl[:, None])
    values = box_distance(c[:, None, :] + t[..., None] * d[:, None, :], h[:, None, :])
    return t[np.arange(t.shape[0]), values.argmin(axis=1)]


def cylinder_distance(p, radius, half_length):
    """``cylinder_closest``'s dist alone, to the bit."""
    dr = np.hypot(p[..., 0], p[..., 1]) - _lead(radius, p)
    dz = np.abs(p[..., 2]) - _lead(half_length, p)
    rim = (dr > 0) & (dz > 0)
    return np.where(rim, np.hypot(dr, dz), np.maximum(dr, dz))


def cylinder_closest(p, radius, half_length, facing=None):
    """Solid cylinder along local z; radius, half_length (M,). region: CYL_SIDE/CAP/RIM.

    facing: None, or the other shape's outward unit normals at each p as for box_closest:
    a point on or in the cylinder (within ON_SURFACE) whose nearer feature, side or cap, that
    shape does not face but faces the other, takes the other.
    """
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
    if facing is not None:
        faced_side = reduce(np.maximum, [-(ux * g[..., 0] + uy * g[..., 1]) for g in facing])
        faced_cap = reduce(np.maximum, [-zs * g[..., 2] for g in facing])
        faced_side, faced_cap = faced_side >= FACING_COS, faced_cap >= FACING_COS
        # the other shape faces one of them alone: that one (the point is on or in the
        # cylinder, or within ON_SURFACE of it, so measured through it the depth is >= 0 or
        # a gap of at most ON_SURFACE)
        decided = (dr <= ON_SURFACE) & (dz <= ON_SURFACE) & (faced_side != faced_cap)
        side = np.where(decided, faced_side, side)
        rim = rim & ~decided
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


def point_contacts(closest, pos, rot, q, radius, facing=None):
    """Contacts of spheres (centre q, radius; radius 0 for points) against shape A.

    closest : callable (local points, local facing or None) -> (dist, surface, normal,
              region) of shape A
    pos (M, 3), rot (M, 3, 3) : pose of A;  q : (M, 3) or (M, C, 3) world;  radius broadcast
    facing : None, or the outward unit normals of the other shape's faces that meet at each
             point (radius 0), local to A: a list of G arrays shaped like q (see box_closest)
    Returns point, normal (from A towards the sphere), depth, region, all world frame.
    """
    ql = to_local(rot, pos, q)
    dist, surf, n_local, region = closest(ql, facing)
    normal = rotate(rot, n_local)
    depth = radius - dist
    # A's surface point is surf; the sphere's is surf - normal * depth; the contact is midway.
    point = to_world(rot, pos, surf) - normal * (depth[..., None] / 2.0)
    return point, normal, depth, region
