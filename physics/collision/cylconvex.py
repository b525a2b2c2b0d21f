"""Cylinder (body a) against box or cylinder (body b): an approximation by feature points.

Exact point-against-shape queries (sdf.py) on a fixed set of feature points of each body:
  - a cylinder's rim points (rim.py: per cap the rim point furthest towards the other body
    plus 4 fixed samples) against the other body;
  - a box's 8 corners against the cylinder;
  - a box's 12 edges against the cylinder (the edge point of least signed distance, when it
    lies strictly inside the edge: corners are already covered);
  - for two cylinders, their axes as capsules when the closest points of the axes are
    strictly inside both (crossed or side-by-side cylinders);
  - for a cylinder and a box where none of those points is in the other but the cylinder's
    axis passes through the box (a rod through a wall), the overlap by separating axes
    (``_pierced_box``).
Each point whose signed distance is within the margin is a contact, normal from the other
shape's gradient (or, where the point's own faces do not face the other shape's nearest face,
as where an edge lines up with the other's side, from the nearest face they do face:
sdf.FACING_COS); at most MAX_POINTS, the deepest. This finds caps on faces, boxes on caps,
cylinders lying on faces or across box edges and stacked cylinders. What it misses is
rim-against-edge contact between samples, where it may report a contact late by up to
radius * (1 - cos 45 deg) for the sampled rim, and the normals of deep penetrations are
only as good as the nearest-feature guess.
"""
from __future__ import annotations

import numpy as np

from .contacts import keep_deepest, slot_features
from .geometry import (BOX_CORNERS, clip_to_slab, closest_segments, dot, einsum, golden_min,
                       rotate, row_norms, to_local, to_world)
from .rim import rim_candidates
from .round import sphere_pair
from .sdf import box_closest, cylinder_closest, cylinder_distance, point_contacts

MAX_POINTS = 8
# A box edge within 10 degrees of a cylinder's axis is met at both ends of its span along the
# cylinder (rather than at the least of its distances, which for an edge along the axis is
# either end: a barrel rolling off a ledge's edge was held at one cap only, and turned)
PARALLEL_COS = np.cos(np.radians(10.0))
# (such an edge that far from the axis, times the radius, lies on the side: one nearer lies
# across a cap, where its corner stands for it)
ON_SIDE = 0.9
# The 12 box edges as (corner i, corner j) pairs of BOX_CORNERS differing in one sign.
BOX_EDGES = np.array([(i, j) for i in range(8) for j in range(8)
                      if i < j and np.sum(BOX_CORNERS[i] != BOX_CORNERS[j]) == 1])
# The faces that meet at each corner, then at each edge: (20, 3), entry k the sign of the
# face normal along the box's axis k (+-1), or 0 where no face normal to axis k meets there
# (along an edge's own axis).
BOX_FACE_SIGNS = np.concatenate([
    BOX_CORNERS,
    np.where(BOX_CORNERS[BOX_EDGES[:, 0]] == BOX_CORNERS[BOX_EDGES[:, 1]],
             BOX_CORNERS[BOX_EDGES[:, 0]], 0.0)])


def _box(s):
    return lambda p, facing=None: box_closest(p, s.params[:, :3], facing)


def _cylinder(s):
    return lambda p, facing=None: cylinder_closest(p, s.params[:, 0], s.params[:, 1], facing)


def _towards(closest, target, x):
    """Unit world directions (M, 3) from points x towards (into) the shape `target`."""
    # Minus the SDF gradient: towards the target from outside, deeper into it from inside.
    return -rotate(target.rot, closest(to_local(target.rot, target.pos, x))[2])


def _rims_against(cyl, other, closest_other, margin, flip):
    """The rim points of `cyl` against `other`: candidates (M, 10) with normals a -> b."""
    direction = _towards(closest_other, other, cyl.pos)
    # with the faces that meet at each rim point, side and cap, so that a rim point lying on
    # the other shape's side is measured through the face it is pressed into (sdf.FACING_COS:
    # equal cylinders stacked fell through each other)
    rim, usable, faces = rim_candidates(cyl.pos, cyl.rot, cyl.params, direction, other.rot)
    point, normal, depth, _ = point_contacts(closest_other, other.pos, other.rot, rim, 0.0,
                                             faces)
    normal = -normal if flip else normal
    return point, normal, depth, usable & (depth >= -margin[:, None])


def _box_points_against(cyl, box, margin):
    """Box corners (8) and interior edge points (2 x 12: the second only for an edge along the
    cylinder's axis) against the cylinder a."""
    closest = _cylinder(cyl)
    corners = box.pos[:, None, :] + rotate(box.rot, BOX_CORNERS[None] * box.params[:, None, :3])
    # with the faces meeting at each corner and edge, as for rim points above: the face
    # normal along the box's axis k is the sign of its corners' coordinate k (BOX_FACE_SIGNS)
    # times that axis, here in the cylinder's frame (by columns: no einsum over the points)
    m = len(margin)
    axes = einsum("mji,mjk->mik", cyl.rot, box.rot)[:, None]
    faces = [axes[..., k] * BOX_FACE_SIGNS[:, k, None] for k in range(3)]    # (M, 20, 3)
    pc, nc, dc, _ = point_contacts(closest, cyl.pos, cyl.rot, corners, 0.0,
                                   [f[:, :8] for f in faces])

    c0, c1 = corners[:, BOX_EDGES[:, 0]], corners[:, BOX_EDGES[:, 1]]    # (M, 12, 3)
    mid, half_vec = 0.5 * (c0 + c1), 0.5 * (c1 - c0)
    # Flatten the M x 12 searches to one vectorised golden-section search.
    rep = lambda x: np.repeat(x, 12, axis=0)
    cyl_r, cyl_h = rep(cyl.params[:, 0]), rep(cyl.params[:, 1])
    rot, pos = rep(cyl.rot), rep(cyl.pos)
    mid_f, hv_f = mid.reshape(-1, 3), half_vec.reshape(-1, 3)

    def sdf(rows):
        mid_r, hv_r, rot_r, pos_r = mid_f[rows, None], hv_f[rows, None], rot[rows], pos[rows]
        r_r, h_r = cyl_r[rows, None], cyl_h[rows, None]
        return lambda t: cylinder_distance(to_local(rot_r, pos_r, mid_r + t[..., None] * hv_r),
                                           r_r, h_r)

    # an edge that stays further from the cylinder's centre than the cylinder reaches plus the
    # margin is not searched (hi = lo: golden_min leaves it at lo, a corner, not a contact):
    # 100 barrels on a box floor spent 12.6 ms a step in collision, most of it searching the
    # floor's far edges
    along_edge = np.clip(dot(pos - mid_f, hv_f) / np.maximum(dot(hv_f, hv_f), 1e-300), -1, 1)
    gap = row_norms(mid_f + along_edge[:, None] * hv_f - pos) - np.hypot(cyl_r, cyl_h)
    near = gap <= np.repeat(margin, 12)
    t = golden_min(sdf, -np.ones(len(mid_f)), np.where(near, 1.0, -1.0), iterations=40)
    # an edge along the cylinder's axis lies on its side with a span of equal distances, of
    # which the search finds either end: it meets the side at both ends of the span
    axis = rot[:, :, 2]
    centre, along = dot(mid_f - pos, axis), dot(hv_f, axis)
    lo, hi = clip_to_slab(centre, along, cyl_h, -1.0, 1.0)
    radial = row_norms(np.cross(mid_f - pos, axis))
    parallel = ((np.abs(along) > PARALLEL_COS * row_norms(hv_f)) & (lo <= hi)
                & (radial > ON_SIDE * cyl_r))
    # (the second point of an edge that is not along the axis lies off it: never a contact)
    t = np.stack([np.where(parallel, lo, t), np.where(parallel, hi, 2.0)], axis=1)  # (12 M, 2)
    q = (mid_f[:, None] + t[..., None] * hv_f[:, None]).reshape(m, 24, 3)
    edge_faces = [np.repeat(f[:, 8:], 2, axis=1) for f in faces]
    pe, ne, de, _ = point_contacts(closest, cyl.pos, cyl.rot, q, 0.0, edge_faces)
    interior = (np.abs(t) < 1 - 1e-6).reshape(m, 24)
    point = np.concatenate([pc, pe], axis=1)
    normal = np.concatenate([nc, ne], axis=1)
    depth = np.concatenate([dc, de], axis=1)
    ok = np.concatenate([np.ones((m, 8), bool), interior], axis=1)
    return point, normal, depth, ok & (depth >= -margin[:, None])


def _finish(parts):
    point, normal, depth, valid = (np.concatenate(x, axis=1) for x in zip(*parts))
    valid = keep_deepest(depth, valid, MAX_POINTS)
    return point, normal, depth, slot_features(depth.shape[1]), valid


def _pierced_box(cyl, box, seen):
    """The cylinder a's body through the box b where no feature point is in the other
    (``seen`` (M,) False) but a's axis passes through b, both caps' centres outside it: one
    candidate (M, 1), by separating axes.

    A cylinder whose body pierces the box (in at one face, out at the opposite one: a rod
    through a wall, a log end-on through a slab) has no rim point, box corner or box edge
    point inside the other: a rod moving at 1 m/s and turning at 4 rad/s went through a 2 cm
    wall, and ``overlapping`` did not see one put in it. Its axis has a stretch inside
    the box (clipped to the box's slabs), so they overlap. The candidate takes the least
    overlap of their projections on the box's 3 face normals, the cylinder's axis and the 3
    crossings of that axis with the box's edges (on which the cylinder's projection is its
    half length times |cos| plus its radius times |sin|; the box's, its half extents' sum):
    as far as the cylinder must move to come out, no less than the least over all
    directions (447 random pairs with the axis through the box: at most 2.7 % more; 400
    with a cap's centre in it, where a rim meets an edge or corner: up to 1.5 times), its
    normal from the cylinder to the box's side of it, at the cylinder's point furthest
    along that normal. Where feature points are in the other, they stand for the overlap
    (the deepest of them is it where a cylinder rests on a box, whose manifold stays as it
    was; deep in, where their points are not the overlap's, this one's point, on the
    cylinder's far side, may not be over the box either). With a cap's centre in the box
    it is left to the rim points: where they flickered out of a cylinder made inside a box
    (``test_contacts.overlapping_heap``, seeds 4 and 14) this candidate's 0.24-0.26 m came
    and went, and flung a body at 16-20 m/s (4 m/s without). That leaves a rod's end swung
    into a wall past its middle, its rim points furthest and nearest the wall outside its
    faces (those further round are dropped: rim.FLAT_REACH), unseen."""
    h, radius, half = box.params[:, :3], cyl.params[:, 0], cyl.params[:, 1]
    c = to_local(box.rot, box.pos, cyl.pos)                 # the cylinder's centre, box frame
    d = einsum("mji,mj->mi", box.rot, cyl.rot[:, :, 2])     # its axis, box frame
    # the stretch of the axis in the box (lo > hi: none)
    lo, hi = -half, half
    for k in range(3):
        lo, hi = clip_to_slab(c[:, k], d[:, k], h[:, k], lo, hi)
    pierced = (lo < hi) & (lo > -half) & (hi < half) & ~seen
    m = len(half)
    point, normal, depth = np.zeros((m, 1, 3)), np.zeros((m, 1, 3)), np.zeros((m, 1))
    if not pierced.any():       # (most pairs: the separating axes cost ~100 numpy calls)
        return point, normal, depth, pierced[:, None]
    rows = np.flatnonzero(pierced)
    h, radius, half, c, d = (x.take(rows, axis=0) for x in (h, radius, half, c, d))
    n = len(rows)
    eye = np.broadcast_to(np.eye(3), (n, 3, 3))
    crossed = np.cross(d[:, None, :], eye)                  # d x e_k, (n, 3, 3)
    length = np.sqrt(dot(crossed, crossed))
    crossed = crossed / np.maximum(length, 1e-300)[..., None]
    axes = np.concatenate([eye, d[:, None, :], crossed], axis=1)          # (n, 7, 3)
    along = dot(axes, d[:, None, :])
    reach = (half[:, None] * np.abs(along)
             + radius[:, None] * np.sqrt(np.maximum(1.0 - along * along, 0.0))
             + einsum("mak,mk->ma", np.abs(axes), h))
    apart = -dot(axes, c[:, None, :])                       # box centre less cylinder's
    overlap = reach - np.abs(apart)
    # (an edge along the axis crosses it in no direction)
    overlap[:, 4:] = np.where(length > 1e-9, overlap[:, 4:], np.inf)
    best = overlap.argmin(axis=1)
    at = np.arange(n)
    deep = overlap[at, best]
    n_local = axes[at, best] * np.where(apart[at, best] >= 0.0, 1.0, -1.0)[:, None]
    # the cylinder's point furthest along the normal: the cap that way, its rim that way (the
    # cap's centre where the normal is along the axis)
    cos = dot(n_local, d)
    across = n_local - cos[:, None] * d
    across_len = np.sqrt(dot(across, across))
    rim = np.where((across_len > 1e-9)[:, None], across / np.maximum(across_len, 1e-300)[:, None],
                   0.0)
    furthest = c + np.where(cos >= 0.0, half, -half)[:, None] * d + radius[:, None] * rim
    rot, pos = box.rot.take(rows, axis=0), box.pos.take(rows, axis=0)
    point[rows, 0] = to_world(rot, pos, furthest - n_local * (deep / 2.0)[:, None])
    normal[rows, 0] = rotate(rot, n_local)
    depth[rows, 0] = deep
    return point, normal, depth, pierced[:, None]


def cylinder_box(a, b, margin):
    """Candidates (C = 43): features 0..9 a's rim, 10..17 b's corners, 18..41 b's edges (two
    points each), 42 a's body through b (``_pierced_box``)."""
    rims = _rims_against(a, b, _box(b), margin, flip=True)
    points = _box_points_against(a, b, margin)
    seen = ((rims[3] & (rims[2] > 0.0)).any(axis=1)
            | (points[3] & (points[2] > 0.0)).any(axis=1))
    return _finish([rims, points, _pierced_box(a, b, seen)])


def cylinder_cylinder(a, b, margin):
    """Candidates (C = 21): features 0..9 a's rim, 10..19 b's rim, 20 the axes."""
    rims_a = _rims_against(a, b, _cylinder(b), margin, flip=True)
    rims_b = _rims_against(b, a, _cylinder(a), margin, flip=False)
    la, lb = a.params[:, 1], b.params[:, 1]
    da, db = a.rot[:, :, 2], b.rot[:, :, 2]
    s, t = closest_segments(a.pos, da, la, b.pos, db, lb)
    p, n, d = sphere_pair(a.pos + s[:, None] * da, b.pos + t[:, None] * db,
                          a.params[:, 0], b.params[:, 0], da, db)
    ok = (np.abs(s) < la * (1 - 1e-9)) & (np.abs(t) < lb * (1 - 1e-9)) & (d >= -margin)
    axes = (p[:, None], n[:, None], d[:, None], ok[:, None])
    return _finish([rims_a, rims_b, axes])
