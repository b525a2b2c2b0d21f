"""Box (body a) against sphere or capsule (body b).

The deepest point of b's segment is where the box's signed distance along the segment is
least (exactly, ``sdf.box_segment_deepest``); a sphere of b's radius there gives the contact.
When that point faces a box face (not an edge or corner) the capsule may lie along the face:
the segment is clipped to the face's side planes and both clipped ends become contacts with
the face normal, which is what lets a capsule rest flat on a box (or overhang its edge).
So does a segment within PARALLEL_SINE of parallel to the face nearest its contact normal
when the deepest point lies on an edge: a level capsule overhanging two opposite edges of a
face is as deep all along the face, and the search may end just past either edge.
"""
from __future__ import annotations

import numpy as np

from .contacts import point_or_ends_features, single_candidate
from .geometry import clip_to_slab, einsum, rotate, to_local, to_world
from .sdf import box_closest, box_segment_deepest

# A segment within this sine of parallel to a face is clipped to it even where its deepest
# point lies on the face's edge (as cylround.PARALLEL_SINE for a cylinder's cap and side).
PARALLEL_SINE = 0.02


def box_round(a, b, margin):
    """Candidates (C = 3): feature 0 single point, or features 1 + 2 face + {0, 1} clipped;
    C = 1 (feature 0, through single_candidate) when no b has a segment (all spheres)."""
    h = a.params[:, :3]
    r, hl = b.params[:, 0], b.params[:, 1]
    c = to_local(a.rot, a.pos, b.pos)                    # segment centre, box frame
    d = einsum("mji,mj->mi", a.rot, b.rot[:, :, 2])   # segment direction, box frame

    t_star = box_segment_deepest(c, d, h, hl)
    q = c + t_star[:, None] * d
    dist, surf, n_loc, face = box_closest(q, h)
    depth0 = r - dist
    point0 = surf - n_loc * (depth0 / 2.0)[:, None]
    if not hl.any():
        # Spheres only (marbles against walls): a zero-length segment is never clipped, so
        # the single point is the one candidate.
        return single_candidate(to_world(a.rot, a.pos, point0), rotate(a.rot, n_loc), depth0,
                                margin)

    # A level segment overhanging two opposite edges of a face is equally deep all along the
    # face: the search ends at one end of that flat stretch, on the edge or just past it (an
    # edge region), so the one point it gave jumped from edge to edge and the capsule rocked.
    # Where the segment lies along the face nearest the contact normal, it is clipped to that
    # face as in a face region (a segment that is not over the face clips to nothing).
    rows = np.arange(c.shape[0])      # (indexing by (rows, axis): take_along_axis is slow)
    k_n = np.abs(n_loc).argmax(axis=1)
    n_k = n_loc[rows, k_n]
    level = np.abs(d[rows, k_n]) < PARALLEL_SINE
    face = np.where((face < 0) & level, 2 * k_n + (n_k > 0), face)

    # Face region: clip the segment to the two side slabs of that face.
    k = np.maximum(face, 0) // 2
    sign = np.where(face % 2 == 1, 1.0, -1.0)
    lo, hi = -hl.copy(), hl.copy()
    for offset in (1, 2):
        j = (k + offset) % 3
        lo, hi = clip_to_slab(c[rows, j], d[rows, j], h[rows, j], lo, hi)
    clipped = (face >= 0) & (hi - lo > 1e-9 * np.maximum(hl, 1e-300))
    t_ends = np.stack([lo, hi], axis=1)
    t_ends = np.where(clipped[:, None], t_ends, 0.0)     # keep unused rows finite
    ends = c[:, None, :] + t_ends[..., None] * d[:, None, :]
    e_k = ends[rows, :, k]
    h_k = h[rows, k][:, None]
    depth12 = r[:, None] - (sign[:, None] * e_k - h_k)
    n_face = np.zeros_like(c)
    n_face[rows, k] = sign
    # a's surface point: the end projected onto the face plane; b's: end - n r.
    on_face = ends.copy()
    on_face[rows, :, k] = sign[:, None] * h_k
    point12 = on_face - n_face[:, None, :] * (depth12 / 2.0)[..., None]

    point = np.concatenate([point0[:, None], point12], axis=1)
    n_all = np.concatenate([n_loc[:, None], np.repeat(n_face[:, None], 2, 1)], axis=1)
    depth = np.concatenate([depth0[:, None], depth12], axis=1)
    valid = np.stack([~clipped, clipped, clipped], axis=1) & (depth >= -margin[:, None])
    return (to_world(a.rot, a.pos, point), rotate(a.rot, n_all), depth,
            point_or_ends_features(np.maximum(face, 0)), valid)
