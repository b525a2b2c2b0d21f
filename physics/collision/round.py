"""Spheres and capsules against each other: both are a segment (length 0 for a sphere) swept
by a radius, so one function handles sphere-sphere, sphere-capsule and capsule-capsule.

params of either body: (radius, half_length, 0, 0) with half_length 0 for a sphere; the
segment lies on the body's local z axis.
"""
from __future__ import annotations

import numpy as np

from ..math3d import cross
from .contacts import single_candidate, slot_features
from .geometry import clip, closest_segments, dot, norm, perpendicular

# Two capsules whose axes are within this sine of parallel get a 2-point manifold (the ends
# of the axes' overlap), so that one can lie along another without rocking.
PARALLEL_SINE = 0.02
# |cos| <= PARALLEL_COS means a sine of at least twice PARALLEL_SINE, far from it whatever
# the round-off: a pre-test that leaves the same pairs
PARALLEL_COS = float(np.sqrt(1.0 - (2.0 * PARALLEL_SINE) ** 2))
# The ends of such an overlap are never closer than the segments' closest points (feature 0),
# so only pairs whose feature 0 lies within the margin (plus this much, for round-off) can
# have an end contact; the others skip the end tests (most candidate pairs of a pile are
# apart, and its ragdolls' limbs are often parallel).
END_SLACK = 1e-6    # m


def sphere_pair(pa, pb, ra, rb, da, db):
    """Contact of spheres (centre pa, radius ra) and (pb, rb); arrays (M, 3) and (M,).

    da, db (M, 3) are the segment directions, used only for a normal when the centres
    coincide. Returns point (M, 3), normal (M, 3) from a to b, depth (M,).
    """
    diff = pb - pa
    dist = norm(diff)
    normal = diff / np.maximum(dist, 1e-300)[:, None]
    if len(dist) and dist.min() <= 1e-12:     # (rare: one reduction tells)
        degenerate = np.flatnonzero(dist <= 1e-12)
        # Crossing axes or coincident centres: any normal is right; prefer one across both.
        across = np.cross(da[degenerate], db[degenerate])
        c_len = norm(across)[:, None]
        normal[degenerate] = np.where(c_len > 1e-9, across / np.maximum(c_len, 1e-300),
                                      perpendicular(da[degenerate]))
    depth = ra + rb - dist
    # a's surface point pa + n ra and b's pb - n rb; the contact is midway.
    point = 0.5 * (pa + pb) + normal * (0.5 * (ra - rb))[:, None]
    return point, normal, depth


def round_round(a, b, margin):
    """Sphere/capsule a against sphere/capsule b.

    Candidates: feature 0 the closest points of the two segments; features 1, 2 the two ends
    of the overlap of nearly parallel capsules (then feature 0 is dropped). C = 3, or C = 1
    (``single_candidate``) when no pair is nearly parallel.
    """
    m = len(margin)
    ra, la, rb, lb = a.params[:, 0], a.params[:, 1], b.params[:, 0], b.params[:, 1]
    da, db = a.rot[:, :, 2], b.rot[:, :, 2]
    capsules_a, capsules_b = la.any(), lb.any()
    if capsules_a or capsules_b:
        s, t = closest_segments(a.pos, da, la, b.pos, db, lb)
        ca, cb = a.pos + s[:, None] * da, b.pos + t[:, None] * db
    else:
        ca, cb = a.pos, b.pos       # spheres only (a bin of marbles): the centres
    point0, normal0, depth0 = sphere_pair(ca, cb, ra, rb, da, db)

    # Nearly parallel capsules: the overlap of b's segment projected on a's axis.
    # Only axes with |cos| > PARALLEL_COS can be within PARALLEL_SINE of parallel, and most
    # steps have none: then the sines are not needed at all.
    par = ()
    if capsules_a and capsules_b:
        cos = dot(da, db)
        par = ((la > 0) & (lb > 0) & (depth0 >= -(margin + END_SLACK))
               & (np.abs(cos) > PARALLEL_COS)).nonzero()[0]
    if len(par):
        # (math3d.cross is np.cross to the bit, without its per-call cost; take is indexing)
        par = par.compress(norm(cross(da.take(par, axis=0), db.take(par, axis=0)))
                           < PARALLEL_SINE)
    if not len(par):
        # usually none: then feature 0 is every pair's one candidate, and returning it alone
        # saves filling (M, 3) candidate arrays whose end slots would all be invalid
        return single_candidate(point0, normal0, depth0, margin)
    point = np.zeros((m, 3, 3))
    normal = np.zeros((m, 3, 3))
    depth = np.full((m, 3), -np.inf)
    point[:, 0], normal[:, 0], depth[:, 0] = point0, normal0, depth0
    centre = dot(b.pos[par] - a.pos[par], da[par])
    half = lb[par] * np.abs(cos.take(par))
    lo, hi = np.maximum(centre - half, -la[par]), np.minimum(centre + half, la[par])
    par, lo, hi = (x[hi - lo > 1e-9 * la[par]] for x in (par, lo, hi))
    for end, s_end in ((1, lo), (2, hi)):
        pa = a.pos[par] + s_end[:, None] * da[par]
        t_end = clip(dot(pa - b.pos[par], db[par]), -lb[par], lb[par])
        pb = b.pos[par] + t_end[:, None] * db[par]
        point[par, end], normal[par, end], depth[par, end] = sphere_pair(
            pa, pb, ra[par], rb[par], da[par], db[par])
    depth[par, 0] = -np.inf     # the two ends replace the single point

    valid = depth >= -margin[:, None]
    return point, normal, depth, slot_features(3), valid
