"""Broadphase: which pairs of bodies may be in contact.

Bounded shapes (sphere, box, capsule, cylinder) are paired by a vectorised sweep-and-prune on
world axis-aligned bounding boxes; planes, being unbounded, are tested against every movable
body by the body's support distance. Then the pair filters: two static bodies never collide,
group/mask bits, excluded pairs.
"""
from __future__ import annotations

import numpy as np

from ..shapes import BOX, CAPSULE, CYLINDER, PLANE, SPHERE


def half_extents(kind, params, rotation):
    """(N, 3) half sizes of each body's world AABB about its centre (0 for unbounded kinds)."""
    r, hl = params[:, 0:1], params[:, 1:2]
    axis = np.abs(rotation[:, :, 2])                        # the local z axis, world
    box = np.einsum("nij,nj->ni", np.abs(rotation), params[:, :3])
    out = np.zeros((len(kind), 3))
    out = np.where((kind == SPHERE)[:, None], np.broadcast_to(r, out.shape), out)
    out = np.where((kind == BOX)[:, None], box, out)
    out = np.where((kind == CAPSULE)[:, None], r + hl * axis, out)
    # A disc of radius r perpendicular to unit a spans r sqrt(1 - a_k^2) along axis k.
    cyl = hl * axis + r * np.sqrt(np.maximum(0.0, 1.0 - axis**2))
    return np.where((kind == CYLINDER)[:, None], cyl, out)


def support_below(kind, params, rotation, n):
    """(N,) how far each shape reaches from its centre in direction -n (n: (N, 3) unit)."""
    r, hl = params[:, 0], params[:, 1]
    na = np.abs(np.einsum("ni,ni->n", rotation[:, :, 2], n))
    box = np.einsum("nk,nk->n", np.abs(np.einsum("ni,nik->nk", n, rotation)), params[:, :3])
    return np.select([kind == SPHERE, kind == BOX, kind == CAPSULE, kind == CYLINDER],
                     [r, box, r + hl * na, hl * na + r * np.sqrt(np.maximum(0, 1 - na**2))],
                     0.0)


def sweep_and_prune(lo, hi):
    """All pairs (i, j) (i != j, each pair once) of boxes [lo, hi] (n, 3) that overlap.

    Sort by the lower bound on the axis where the centres spread most; a box's partners further
    along the sort are the contiguous run whose lower bound is <= its upper bound, found with
    one searchsorted. The runs are expanded to pairs with repeat/cumsum and filtered on the
    other two axes, one axis at a time on 1-d columns (much faster than (K, 3) gathers).
    """
    n = len(lo)
    axis = int(np.argmax(np.var(lo + hi, axis=0))) if n else 0
    order = np.argsort(lo[:, axis], kind="stable")
    slo, shi = lo[order], hi[order]
    end = np.searchsorted(slo[:, axis], shi[:, axis], side="right")
    count = np.maximum(end - np.arange(n) - 1, 0)
    first = np.repeat(np.arange(n), count)
    # second = first + 1 + (position within the run of `first`)
    second = np.arange(len(first)) - np.repeat(np.cumsum(count) - count - np.arange(n) - 1,
                                               count)
    for k in {0, 1, 2} - {axis}:
        lo_k, hi_k = slo[:, k], shi[:, k]
        keep = (lo_k[first] <= hi_k[second]) & (lo_k[second] <= hi_k[first])
        first, second = first[keep], second[keep]
    return order[first], order[second]


def allowed(i, j, static, group, mask, excluded_keys, n):
    """(M,) bool: the pairs (i, j) that pass the static, group/mask and exclusion filters."""
    ok = ~(static[i] & static[j])
    ok &= ((group[i] & mask[j]) != 0) & ((group[j] & mask[i]) != 0)
    if len(excluded_keys):      # excluded_keys is sorted: a binary search per pair
        keys = np.minimum(i, j).astype(np.int64) * n + np.maximum(i, j)
        pos = np.minimum(np.searchsorted(excluded_keys, keys), len(excluded_keys) - 1)
        ok &= excluded_keys[pos] != keys
    return ok


def excluded_keys(excluded_pairs, n):
    """Order-free int64 keys min * n + max of the excluded pairs (P, 2)."""
    if excluded_pairs is None:
        return np.zeros(0, dtype=np.int64)
    e = np.asarray(excluded_pairs, dtype=np.int64).reshape(-1, 2)
    return np.unique(np.minimum(e[:, 0], e[:, 1]) * n + np.maximum(e[:, 0], e[:, 1]))


def find_pairs(kind, params, position, rotation, static, group, mask, excluded_pairs,
               margin, reach):
    """Candidate pairs, (i, j) int64 arrays, and plane pairs (plane, body).

    reach (N,) extra distance per body (|v| dt for fast dynamic bodies, 0 otherwise); a pair
    is returned if its shapes may be within margin + reach_i + reach_j of each other.
    """
    n = len(kind)
    keys = excluded_keys(excluded_pairs, n)
    group, mask = np.asarray(group, np.int64), np.asarray(mask, np.int64)
    bounded = np.flatnonzero((kind >= SPHERE) & (kind < PLANE))
    ext = half_extents(kind[bounded], params[bounded], rotation[bounded])
    ext += (0.5 * margin + reach[bounded])[:, None]
    c = position[bounded]
    i, j = sweep_and_prune(c - ext, c + ext)
    i, j = bounded[i], bounded[j]
    ok = allowed(i, j, static, group, mask, keys, n)
    i, j = i[ok], j[ok]

    planes = np.flatnonzero(kind == PLANE)
    movers = bounded[~static[bounded]]
    pp, pb = np.repeat(planes, len(movers)), np.tile(movers, len(planes))
    if len(pp):
        nrm = params[pp, :3]
        gap = (np.einsum("mi,mi->m", nrm, position[pb]) - params[pp, 3]
               - support_below(kind[pb], params[pb], rotation[pb], nrm))
        keep = (gap <= margin + reach[pb]) & allowed(pp, pb, np.zeros(n, bool), group, mask,
                                                     keys, n)
        pp, pb = pp[keep], pb[keep]
    return i, j, pp, pb
