"""Separating-axis test between two boxes over the 15 candidate axes, vectorised over pairs.

For boxes a, b (centres pa, pb; rotation columns = box axes; half extents ha, hb) the
separation along a unit axis n is |n . (pb - pa)| - sum_k ha_k |n . a_k| - sum_k hb_k |n . b_k|.
The largest separation over the axes is the separation of the boxes if positive (an
underestimate of the distance in corner-to-corner configurations) and minus the penetration
depth along the best axis if negative.

Layout: the pair index is the last (contiguous) axis of every array, e.g. the 15 axes of M
pairs are (3, 15, M), so that each numpy call runs one long loop over the pairs instead of
many loops of length 3; a batch takes a fixed, small number of numpy calls.
"""
from __future__ import annotations

import numpy as np

from .geometry import column_index, sum3

FACE_A, FACE_B, EDGE = 0, 1, 2
# Prefer a face axis to an edge axis, and a face of a to a face of b, unless the other is
# clearly better; otherwise nearly equal separations flip the choice from step to step.
REL_TOL, ABS_TOL = 0.05, 1e-4
# Component c of a x b is a[C1[c]] b[C2[c]] - a[C2[c]] b[C1[c]] (as np.cross), with
# C1 = [1, 2, 0] and C2 = [2, 0, 1]; _ROLL gathers both in one index.
_ROLL = np.array([1, 2, 0, 2, 0, 1])


def pair_last(shapes):
    """(axes (3 component, 3 axis, M), position (3, M), half extents (3, M)) of boxes."""
    return (np.ascontiguousarray(shapes.rot.transpose(1, 2, 0)),
            np.ascontiguousarray(shapes.pos.T), np.ascontiguousarray(shapes.params[:, :3].T))


def sat_pair_last(axes_a, pos_a, ha, axes_b, pos_b, hb):
    """Best separating axis of M box pairs, on pair-last arrays (see pair_last).

    Returns kind (M,) FACE_A / FACE_B / EDGE, index (M,) (face axis 0..2, or 3 i + j for
    a_i x b_j), normal (3, M) unit pointing from a towards b, separation (M,), `forward` (M,):
    whether the normal is the best axis itself (not its negative), and the (M,) largest half
    extent of each pair.

    Sums are formed in the order of the per-axis dot products (einsum) this replaces, so the
    separations are the same to the bit: x0 y0 + x1 y1 + x2 y2 left to right, except for
    products of two contiguous rows (edge axis . offset, |projection| . half extents), which
    einsum sums as (x0 y0 + x2 y2) + x1 y1.

    The axes are stored component first, (3, 15, M): each component of all axes is one
    contiguous block, and numpy's loops over strided 2-d views of this size cost two to three
    times those over contiguous ones.
    """
    m = axes_a.shape[2]
    axes = np.empty((3, 15, m))
    axes[:, :3] = axes_a
    axes[:, 3:6] = axes_b
    edges = axes[:, 6:]
    cross = edges.reshape(3, 3, 3, m)                               # component, i, j
    ra, rb = axes_a.take(_ROLL, axis=0), axes_b.take(_ROLL, axis=0)  # (6, 3, M): C1 then C2
    np.subtract(ra[:3, :, None] * rb[3:, None], ra[3:, :, None] * rb[:3, None], out=cross)
    sq = edges * edges
    length = np.sqrt((sq[0] + sq[1]) + sq[2])                       # (9, M)
    # Parallel edges give no axis of their own (the face axes cover them).
    parallel = length <= 1e-6
    edges /= np.where(parallel, 1.0, length)

    # Projections of the 15 axes on both boxes' 6 axes (the first 6 of them), box axis
    # first so that each box axis's projections are one contiguous block.
    proj = axes[0, :6, None] * axes[0]
    proj += axes[1, :6, None] * axes[1]
    proj += axes[2, :6, None] * axes[2]                             # (6, 15, M)
    d = pos_b - pos_a
    t = axes * d[:, None]                                           # (3, 15, M)
    offset = np.empty((15, m))
    np.add(t[0, :6], t[1, :6], out=offset[:6])
    offset[:6] += t[2, :6]
    np.add(t[0, 6:], t[2, 6:], out=offset[6:])
    offset[6:] += t[1, 6:]
    np.abs(proj, out=proj)
    proj[:3] *= ha[:, None]
    proj[3:] *= hb[:, None]
    seps = np.abs(offset)
    seps -= sum3(proj[:3])
    seps -= sum3(proj[3:])
    np.copyto(seps[6:], -np.inf, where=parallel)

    scale = np.maximum(ha, hb).max(axis=0)
    best_a = seps[:3].argmax(axis=0)
    best_b = 3 + seps[3:6].argmax(axis=0)
    best_e = 6 + seps[6:].argmax(axis=0)
    sa, sb, se = (seps.take(column_index(best, m)) for best in (best_a, best_b, best_e))

    use_b = sb > sa + REL_TOL * np.abs(sa) + ABS_TOL * scale
    best = np.where(use_b, best_b, best_a)
    sf = np.where(use_b, sb, sa)
    use_e = se > sf + REL_TOL * np.abs(sf) + ABS_TOL * scale
    best = np.where(use_e, best_e, best)

    kind = np.where(use_e, EDGE, np.where(use_b, FACE_B, FACE_A))
    index = np.where(use_e, best - 6, best % 3)
    flat = column_index(best, m)
    forward = offset.take(flat) >= 0.0
    normal = axes.reshape(3, -1).take(flat, axis=1)                 # (3, M)
    normal *= np.where(forward, 1.0, -1.0)
    return kind, index, normal, np.where(use_e, se, sf), forward, scale
