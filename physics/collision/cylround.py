"""Cylinder (body a) against sphere or capsule (body b).

As for boxes (boxround.py): the deepest point of b's segment minimises the cylinder's signed
distance (golden-section search), and a sphere of b's radius there gives one exact contact.
Two-point manifolds where b lies along a flat-ish feature:
  - on a cap: the segment clipped to the cap disc, both ends against the cap plane (also
    where the deepest point is on the rim and b lies within PARALLEL_SINE of the cap's
    plane: a level capsule overhanging the rim on both sides);
  - along the side, axes within PARALLEL_SINE of parallel: the segment clipped to the
    cylinder's height, both ends against the side (also from a deepest point on the rim).
"""
from __future__ import annotations

import numpy as np

from .contacts import point_or_ends_features
from .geometry import clip_to_slab, einsum, golden_min, rotate, to_local, to_world
from .sdf import CYL_CAP, CYL_RIM, CYL_SIDE, cylinder_closest, cylinder_distance

PARALLEL_SINE = 0.02
# Features (point_or_ends_features): the manifold is numbered 0 cap -z, 1 cap +z, 2 side.


def _disc_interval(c, d, radius, lo, hi):
    """Clip t in [lo, hi] to |xy(c + t d)| <= radius (M,); returns lo, hi (lo > hi: empty)."""
    qa = d[:, 0] ** 2 + d[:, 1] ** 2
    qb = c[:, 0] * d[:, 0] + c[:, 1] * d[:, 1]
    qc = c[:, 0] ** 2 + c[:, 1] ** 2 - radius**2
    disc = qb**2 - qa * qc
    moving = qa > 1e-12
    root = np.sqrt(np.maximum(disc, 0.0))
    safe = np.where(moving, qa, 1.0)
    t1, t2 = (-qb - root) / safe, (-qb + root) / safe
    lo = np.where(moving, np.where(disc >= 0, np.maximum(lo, t1), np.inf),
                  np.where(qc <= 0, lo, np.inf))
    hi = np.where(moving, np.where(disc >= 0, np.minimum(hi, t2), -np.inf),
                  np.where(qc <= 0, hi, -np.inf))
    return lo, hi


def cylinder_round(a, b, margin):
    """Candidates (C = 3): the single deepest point, or 2 clipped ends (see module doc)."""
    radius, half = a.params[:, 0], a.params[:, 1]
    r, hl = b.params[:, 0], b.params[:, 1]
    c = to_local(a.rot, a.pos, b.pos)
    d = einsum("mji,mj->mi", a.rot, b.rot[:, :, 2])

    def sdf_along(rows):
        c_r, d_r = c[rows, None], d[rows, None]
        radius_r, half_r = radius[rows, None], half[rows, None]
        return lambda t: cylinder_distance(c_r + t[..., None] * d_r, radius_r, half_r)

    t_star = golden_min(sdf_along, -hl, hl)
    dist, surf, n0, region = cylinder_closest(c + t_star[:, None] * d, radius, half)
    depth0 = r - dist
    point0 = surf - n0 * (depth0 / 2.0)[:, None]

    # A level segment overhanging the cap's rim on both sides (or one along the side, past
    # both caps) is equally deep all along the cap (the side): the search ends at one end of
    # that flat stretch, on the rim or just past it, where the one point it gave jumped from
    # rim to rim. A deepest point on the rim counts as on the cap or the side, whichever
    # normal is nearer its own, for the two-point manifolds below (whose parallel tests
    # then decide; a segment that is not over the cap or along the side clips to nothing).
    nearer_cap = np.abs(n0[:, 2]) >= np.hypot(n0[:, 0], n0[:, 1])
    rim = region == CYL_RIM
    cap = (region == CYL_CAP) | (rim & nearer_cap & (np.abs(d[:, 2]) < PARALLEL_SINE))
    side = (((region == CYL_SIDE) | (rim & ~nearer_cap))
            & (np.abs(d[:, 2]) > np.sqrt(1 - PARALLEL_SINE**2)))
    lo_c, hi_c = _disc_interval(c, d, radius, -hl, hl)
    lo_s, hi_s = clip_to_slab(c[:, 2], d[:, 2], half, -hl, hl)
    lo, hi = np.where(cap, lo_c, lo_s), np.where(cap, hi_c, hi_s)
    two = (cap | side) & (hl > 0) & (hi - lo > 1e-9 * np.maximum(hl, 1e-300))
    t_ends = np.where(two[:, None], np.stack([lo, hi], 1), 0.0)
    ends = c[:, None, :] + t_ends[..., None] * d[:, None, :]             # (M, 2, 3) local

    # Cap: the plane z = zs * half. Side: the radial direction of each end.
    zs = np.sign(surf[:, 2])[:, None]
    rho = np.hypot(ends[..., 0], ends[..., 1])
    u = np.where((rho > 1e-15)[..., None], ends[..., :2] / np.maximum(rho, 1e-300)[..., None],
                 np.array([1.0, 0.0]))
    cap_gap = zs * ends[..., 2] - half[:, None]
    side_gap = rho - radius[:, None]
    gap = np.where(cap[:, None], cap_gap, side_gap)
    n_cap = np.concatenate([np.zeros_like(u), np.broadcast_to(zs[..., None], u.shape[:2] + (1,))],
                           axis=2)
    n_side = np.concatenate([u, np.zeros(u.shape[:2] + (1,))], axis=2)
    n12 = np.where(cap[:, None, None], n_cap, n_side)
    on_a = ends - n12 * gap[..., None]            # the end projected onto a's surface
    depth12 = r[:, None] - gap
    point12 = on_a - n12 * (depth12 / 2.0)[..., None]

    point = np.concatenate([point0[:, None], point12], axis=1)
    normal = np.concatenate([n0[:, None], n12], axis=1)
    depth = np.concatenate([depth0[:, None], depth12], axis=1)
    valid = np.stack([~two, two, two], axis=1) & (depth >= -margin[:, None])
    manifold = np.where(cap, (zs[:, 0] > 0).astype(int), 2)
    return (to_world(a.rot, a.pos, point), rotate(a.rot, normal), depth,
            point_or_ends_features(manifold), valid)
