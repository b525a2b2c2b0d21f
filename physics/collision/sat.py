"""Separating-axis test between two boxes over the 15 candidate axes, vectorised over pairs.

For boxes a, b (centres pa, pb; rotation columns = box axes; half extents ha, hb) the
separation along a unit axis n is |n . (pb - pa)| - sum_k ha_k |n . a_k| - sum_k hb_k |n . b_k|.
The largest separation over the axes is the separation of the boxes if positive (an
underestimate of the distance in corner-to-corner configurations) and minus the penetration
depth along the best axis if negative.
"""
from __future__ import annotations

import numpy as np

from .geometry import dot

FACE_A, FACE_B, EDGE = 0, 1, 2
# Prefer a face axis to an edge axis, and a face of a to a face of b, unless the other is
# clearly better; otherwise nearly equal separations flip the choice from step to step.
REL_TOL, ABS_TOL = 0.05, 1e-4


def _separation(n, d, ra_axes, ha, rb_axes, hb):
    """Separation (M,) along unit axes n (M, 3); also the signed projection of d on n."""
    proj = dot(n, d)
    ra = np.einsum("mk,mk->m", np.abs(np.einsum("mi,mik->mk", n, ra_axes)), ha)
    rb = np.einsum("mk,mk->m", np.abs(np.einsum("mi,mik->mk", n, rb_axes)), hb)
    return np.abs(proj) - ra - rb, proj


def box_sat(a, b):
    """Best separating axis of M box pairs.

    Returns kind (M,) FACE_A / FACE_B / EDGE, index (M,) (face axis 0..2, or 3 i + j for
    a_i x b_j), normal (M, 3) unit pointing from a towards b, separation (M,).
    """
    ha, hb = a.params[:, :3], b.params[:, :3]
    d = b.pos - a.pos
    scale = np.maximum(ha.max(axis=1), hb.max(axis=1))

    seps, projs, normals = [], [], []
    for axes in (a.rot, b.rot):
        for i in range(3):
            n = axes[:, :, i]
            s, p = _separation(n, d, a.rot, ha, b.rot, hb)
            seps.append(s), projs.append(p), normals.append(n)
    for i in range(3):
        for j in range(3):
            cross = np.cross(a.rot[:, :, i], b.rot[:, :, j])
            length = np.linalg.norm(cross, axis=1)
            # Parallel edges give no axis of their own (the face axes cover them).
            ok = length > 1e-6
            n = cross / np.where(ok, length, 1.0)[:, None]
            s, p = _separation(n, d, a.rot, ha, b.rot, hb)
            seps.append(np.where(ok, s, -np.inf)), projs.append(p), normals.append(n)
    seps = np.stack(seps, axis=1)          # (M, 15)
    projs = np.stack(projs, axis=1)
    normals = np.stack(normals, axis=1)    # (M, 15, 3)

    best_a = np.argmax(seps[:, :3], axis=1)
    best_b = 3 + np.argmax(seps[:, 3:6], axis=1)
    best_e = 6 + np.argmax(seps[:, 6:], axis=1)
    take = lambda idx: np.take_along_axis(seps, idx[:, None], 1)[:, 0]
    sa, sb, se = take(best_a), take(best_b), take(best_e)

    use_b = sb > sa + REL_TOL * np.abs(sa) + ABS_TOL * scale
    best = np.where(use_b, best_b, best_a)
    sf = np.where(use_b, sb, sa)
    use_e = se > sf + REL_TOL * np.abs(sf) + ABS_TOL * scale
    best = np.where(use_e, best_e, best)

    kind = np.where(use_e, EDGE, np.where(use_b, FACE_B, FACE_A))
    index = np.where(use_e, best - 6, best % 3)
    normal = np.take_along_axis(normals, best[:, None, None], 1)[:, 0]
    proj = np.take_along_axis(projs, best[:, None], 1)[:, 0]
    normal = normal * np.where(proj >= 0.0, 1.0, -1.0)[:, None]
    return kind, index, normal, take(best)
