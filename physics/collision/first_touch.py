"""Where pairs of shapes moving along straight paths first touch: conservative advancement.

A speculative contact is made at the step's start, with the normal of the features nearest
then. A fast body struck obliquely meets a wall's edge that way: its row stops only its
speed along the edge's normal, and its slide within the step can carry it past the face it
would have hit (a 1 cm ball at 300 m/s, 60 degrees from a wall's normal, went on through).
The step then moves such a body back along its path to where it first touches (see
``physics.continuous``), and the next step's contact there has the face's normal.

For convex shapes moved along straight lines, the distance between them is a convex function
of the fraction t of the way: Newton's iteration on it from t = 0 never passes its first root,
so every iterate is a time at which the shapes have not yet met. Its slope is the relative
displacement along the normal at the closest points, which every narrowphase reports with
its deepest candidate. (Where a narrowphase only approximates the distance, a cylinder's
feature points, an iterate may fall a little past the touch.)
"""
from __future__ import annotations

import numpy as np

from .contacts import Shapes, deepest_candidates
from .detect import narrowphase, pair_types
from .geometry import einsum

ADVANCE_ITERATIONS = 8    # Newton steps at most; each is one narrowphase call a pair type
TOUCHING = 1e-4           # m: a gap this small is a touch


def first_touch(kind, params, a, b, end_a, end_b, move_a, move_b, rot_a, rot_b, allowed):
    """(P,) the fraction of the way along their paths at which the pairs (a, b) (P,) first
    touch, where going on from there would take them deeper than ``allowed`` m; 1 where it
    would not, or where they do not meet, or where they touch at the start already (their
    contacts are the step's own). Also (P, 3) the unit normals from a to b where the
    iteration left each pair: at the touch, or where it found that they do not meet (zero
    for pairs further apart than their paths reach).

    kind (N,), params (N, 4): the bodies' shapes; a, b (P,) pairs ordered as contacts are;
    end_a, end_b (P, 3) m world positions at the end of the paths, move_a, move_b (P, 3) m
    the displacements along them (a path starts at end - move); rot_a, rot_b (P, 3, 3) the
    orientations throughout."""
    types = pair_types(kind, a, b)
    relative = move_b - move_a
    reach = np.sqrt(einsum("pi,pi->p", relative, relative)) + TOUCHING
    t = np.zeros(len(a))
    gap, slope, normal = gap_and_slope(kind, params, types, a, b, end_a - move_a,
                                       end_b - move_b, rot_a, rot_b, relative, reach)
    live = (gap > TOUCHING) & (slope < 0.0)
    for _ in range(ADVANCE_ITERATIONS):
        idx = np.flatnonzero(live & (gap > TOUCHING))
        if idx.size == 0:
            break
        ahead = t.take(idx) + gap.take(idx) / -slope.take(idx)
        live[idx[ahead >= 1.0]] = False        # the first touch is beyond the path's end
        keep = ahead < 1.0
        idx, ahead = idx[keep], ahead[keep]
        t[idx] = ahead
        back = (1.0 - ahead)[:, None]
        g, s, nrm = gap_and_slope(kind, params, types.take(idx), a.take(idx), b.take(idx),
                                  end_a.take(idx, axis=0) - back * move_a.take(idx, axis=0),
                                  end_b.take(idx, axis=0) - back * move_b.take(idx, axis=0),
                                  rot_a.take(idx, axis=0), rot_b.take(idx, axis=0),
                                  relative.take(idx, axis=0), gap.take(idx) + TOUCHING)
        gap[idx], slope[idx], normal[idx] = g, s, nrm
        live[idx[s >= 0.0]] = False             # turned away before touching
    # (pairs still approaching after the last iteration stop where it left them, short of
    # the touch). Whether going on takes a pair deeper than allowed is asked of the gap a
    # little past the touch, where its tangent would have it twice that deep: the tangent
    # alone took a ball grazing the corner of a slab flush with its own for a hit
    deeper = live & (gap + slope * (1.0 - t) < -allowed)
    if allowed > 0.0 and deeper.any():
        idx = np.flatnonzero(deeper)
        probe = np.minimum(t.take(idx) + (gap.take(idx) + 2.0 * allowed) / -slope.take(idx),
                           1.0)
        back = (1.0 - probe)[:, None]
        past = gap_and_slope(kind, params, types.take(idx), a.take(idx), b.take(idx),
                             end_a.take(idx, axis=0) - back * move_a.take(idx, axis=0),
                             end_b.take(idx, axis=0) - back * move_b.take(idx, axis=0),
                             rot_a.take(idx, axis=0), rot_b.take(idx, axis=0),
                             relative.take(idx, axis=0), np.full(idx.size, 4.0 * allowed))[0]
        deeper[idx[~(past < -allowed)]] = False
    return np.where(deeper, t, 1.0), normal


def gap_and_slope(kind, params, types, a, b, pos_a, pos_b, rot_a, rot_b, relative, margin):
    """(P,) gaps (m; infinite beyond ``margin``) between pairs of shapes at the given poses,
    their rates of change along the relative displacements ``relative`` (P, 3) (m per unit
    of the path; negative: closing), and (P, 3) the normals from a to b at their nearest
    points (zero beyond the margin)."""
    gap = np.full(len(a), np.inf)
    slope = np.zeros(len(a))
    normals = np.zeros((len(a), 3))
    for pair_type in np.unique(types).tolist():
        rows = np.flatnonzero(types == pair_type)
        sides = [Shapes(pos.take(rows, axis=0), rot.take(rows, axis=0),
                        params.take(body.take(rows), axis=0))
                 for pos, rot, body in ((pos_a, rot_a, a), (pos_b, rot_b, b))]
        _, normal, depth, _, valid = narrowphase(pair_type)(*sides, margin.take(rows))
        deepest, nearest = deepest_candidates(depth, valid)
        gap[rows] = -nearest
        normal = np.broadcast_to(normal, depth.shape + (3,))[np.arange(rows.size), deepest]
        normal[~np.isfinite(nearest)] = 0.0
        normals[rows] = normal
        slope[rows] = einsum("pi,pi->p", normal, relative.take(rows, axis=0))
    return gap, slope, normals
