"""Box against box: SAT picks the axis, then a face manifold (up to 4 points) or one
edge-edge point.

Face case: the face of the reference box (the one whose face axis won) facing the other box,
and the incident face of the other box (its face most anti-parallel to the reference normal).
In the reference face's frame (u, v along its edges, w along its outward normal) the contact
polygon is the overlap of the reference rectangle with the incident quad projected on it.
Its corners are among 24 candidates, each a fixed geometric feature (hence a stable id):
  0..3   incident vertices inside the reference rectangle
  4..7   reference vertices inside the projected incident quad
  8..23  crossings of incident edge e with reference side line s (8 + 4 e + s)
This is the result of Sutherland-Hodgman clipping without its sequential loop. The depth of
each point is -w of the incident surface there. At most 4 are kept: the deepest, the one
furthest from it, and the two spanning the largest triangles on either side.

Everything is computed for all pairs of a batch at once, pair index last (e.g. (24, M)
candidates, (4, 4, M) crossings) so that each numpy call is one long loop over the pairs; the
number of calls does not depend on the number of pairs. Pairs further apart than their margin
are dropped right after the SAT, before any manifold is built. Sums are formed in the same
order as before this layout (einsum dot products), so the manifolds are the same to the bit.
"""
from __future__ import annotations

import numpy as np

from .geometry import closest_segments, column_index, dot, einsum, sum3
from .sat import EDGE, FACE_B, pair_last, sat_pair_last

INCIDENT_QUAD = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])  # cyclic
EDGE_FEATURE = 1 << 12   # edge-edge ids: EDGE_FEATURE + 3 i + j, above every face id
INSIDE_TOL = 1e-9        # relative slack of the inside tests: coincident faces still count
_NEXT = np.array([1, 2, 3, 0])                 # the next corner of the cyclic quad
# column k is (k, k + 1, k + 2) mod 3: a lookup costs one numpy call where add and mod take two
_CYCLED = np.array([[0, 1, 2], [1, 2, 0], [2, 0, 1]])
_Q0, _Q1 = INCIDENT_QUAD[:, 0:1], INCIDENT_QUAD[:, 1:2]
# Crossings 8 + 4 e + s: side line s is u = +hu, u = -hu, v = +hv, v = -hv.
_S_AXIS = np.array([0, 0, 1, 1])               # the coordinate fixed on line s
_S_OTHER = np.array([1, 1, 0, 0])
_S_SIGN = np.array([1.0, -1.0, 1.0, -1.0])[:, None]
# (4 e, 4 s) flat row indices of coordinate _S_AXIS[s] (or _S_OTHER[s]) of vector e, in the
# (3 * 6, M) rows of the vectors' u, v, w and the (3 * 4, M) rows of the edges': constant
# indices for take, a third of the cost of the fancy index local[_S_AXIS[None], e]
_E = np.arange(4)[:, None]
_AXIS_OF_6, _OTHER_OF_6 = _S_AXIS[None] * 6 + _E, _S_OTHER[None] * 6 + _E
_AXIS_OF_4, _OTHER_OF_4 = _S_AXIS[None] * 4 + _E, _S_OTHER[None] * 4 + _E


def _face_candidates(ref_axes, ref_pos, ref_h, inc_axes, inc_pos, inc_h, k, normal_ref,
                     outward):
    """The 24 candidates of M face pairs, pair-last: ref_axes, inc_axes (3 component, 3 axis, M),
    positions and half extents (3, M), face axis k (M,), normal_ref (3, M) the outward normal
    of the reference face, which is +axis k where outward (M,) is true, else -axis k.

    Returns uvw (3, 24, M): u, v, w in the reference face frame, ok (24, M), the frame
    (3 component, 3 rows U, V, normal, M), its origin face_c (3, M), and the reference and
    incident face ids.

    Vectors are stored component first ((3, ..., M)): the rows a sum over components or a
    coordinate test reads are then contiguous blocks, and numpy's loops over strided 2-d
    views cost two to three times those over contiguous ones at this size.
    """
    m = len(k)
    # Gathers by flat index (axis k of pair i is column k M + i of an (..., 3, M) array):
    # take costs a half to two thirds of fancy indexing with broadcast index arrays.
    kk = column_index(_CYCLED.take(k, axis=1), m)   # (3, M): k, k1, k2 (take: 1/4 of [:, k])
    frame = np.empty((3, 3, m))                                     # component, U V normal
    frame[:, :2] = ref_axes.reshape(3, -1).take(kk[1:], axis=1)
    frame[:, 2] = normal_ref
    h_kuv = ref_h.take(kk)
    hk, hu, hv = h_kuv
    huv = h_kuv[1:]
    ref_face = 2 * k + outward
    face_c = ref_pos + normal_ref * hk

    p = inc_axes * normal_ref[:, None]
    m_dots = (p[0] + p[1]) + p[2]
    j = np.abs(m_dots).argmax(axis=0)
    jj = column_index(_CYCLED.take(j, axis=1), m)
    s_inc = np.where(m_dots.take(jj[0]) > 0, -1.0, 1.0)
    spans = inc_axes.reshape(3, -1).take(jj, axis=1)                # axis j, j1, j2
    inc_hj = inc_h.take(jj)
    inc_hj[0] *= s_inc
    # As the dot products this replaces (corners as inc_c + P + Q): the same bits.
    vecs = np.empty((3, 6, m))                      # 4 corners and the centre, from face_c
    np.multiply(spans[:, 0], s_inc, out=vecs[:, 5])                 # and inc_n
    spans *= inc_hj                                                 # inc_n * h_j, P, Q
    inc_c = inc_pos + spans[:, 0]
    inc_face = 2 * j + (s_inc > 0)
    corners = vecs[:, :4]
    np.add(inc_c[:, None], _Q0 * spans[:, 1, None], out=corners)
    corners += _Q1 * spans[:, 2, None]
    np.subtract(inc_c, face_c, out=vecs[:, 4])
    corners -= face_c[:, None]
    # u, v, w of the 6 vectors: sums over components ordered as einsum's (x0 y0 + x2 y2) + x1 y1
    prod = vecs[:, None] * frame[:, :, None]                        # (3 comp, 3 row, 6, M)
    local = sum3(prod)                                              # (3 row, 6, M)
    iu, iv, iw = local[:, :4]                                       # (4, M)
    nu, nv, mn = local[:, 5]                                        # mn <= -1/sqrt(3)
    q = vecs[:, 4] * vecs[:, 5]
    w0 = sum3(q) / mn

    uvw = np.empty((3, 24, m))
    u, v, w = uvw
    ok = np.empty((24, m), dtype=bool)
    tol = huv * (1 + INSIDE_TOL)
    tol_u, tol_v = tol
    # 0..3: incident vertices inside the reference rectangle.
    uvw[:, :4] = local[:, :4]
    np.logical_and(np.abs(iu) <= tol_u, np.abs(iv) <= tol_v, out=ok[:4])

    # 4..7: reference vertices inside the projected incident quad (either winding).
    ru, rv = _Q0 * hu, _Q1 * hv                                     # (4, M)
    nxt = local.take(_NEXT, axis=1)                                 # (3, 4, M)
    edge = nxt - local[:, :4]                                       # (3, 4, M)
    eu, ev = edge[0], edge[1]
    winding = np.sign((iu * nxt[1] - iv * nxt[0]).sum(axis=0))
    side = eu * (rv[:, None] - iv) - ev * (ru[:, None] - iu)        # (4 ref, 4 e, M)
    side *= winding
    edge_len = np.sqrt(eu**2 + ev**2)
    scale = np.maximum(hu, hv)
    np.logical_and((side >= -INSIDE_TOL * edge_len * scale).all(axis=1), winding != 0,
                   out=ok[4:8])
    u[4:8], v[4:8] = ru, rv
    w[4:8] = w0 - (ru * nu + rv * nv) / mn

    # 8..23: incident edge e crossing reference side line s, as (4 e, 4 s, M).
    line = _S_SIGN * huv.take(_S_AXIS, axis=0)                      # (4 s, M)
    local_rows, edge_rows = local.reshape(18, m), edge.reshape(12, m)
    denom = edge_rows.take(_AXIS_OF_4, axis=0)
    moving = np.abs(denom) > 1e-300
    t = (line - local_rows.take(_AXIS_OF_6, axis=0)) / np.where(moving, denom, 1.0)
    o = local_rows.take(_OTHER_OF_6, axis=0) + t * edge_rows.take(_OTHER_OF_4, axis=0)
    obound = tol.take(_S_OTHER, axis=0)
    # written in place through (4 e, 4 s, M) views: no where, reshape and copy per output
    u8, v8, w8 = uvw[:, 8:].reshape(3, 4, 4, m)
    u8[:, :2] = line[:2]                                            # s = 0, 1: u lines
    u8[:, 2:] = o[:, 2:]
    v8[:, :2] = o[:, :2]
    v8[:, 2:] = line[2:]
    np.multiply(t, edge[2, :, None], out=w8)
    w8 += iw[:, None]
    ok8 = ok[8:].reshape(4, 4, m)
    np.greater_equal(t, 0, out=ok8)
    ok8 &= moving
    ok8 &= t <= 1
    ok8 &= np.abs(o) <= obound
    return uvw, ok, frame, face_c, ref_face, inc_face, huv


def _reduce4(uvw, ok, scale):
    """Indices (4, M) of at most 4 well-spread of the (C, M) candidates (uvw (3, C, M), depth
    -w), their (4, M) validity and their flat indices i M + pair into (C, M) arrays."""
    m = uvw.shape[2]
    tiny = (1e-5 * scale) ** 2
    uv = uvw[:2]
    i1 = np.where(ok, uvw[2], np.inf).argmin(axis=0)               # the deepest
    f1 = column_index(i1, m)
    duv = uv - uv.reshape(2, -1).take(f1, axis=1)[:, None]
    du, dv = duv
    sq = duv * duv
    d2 = np.where(ok, sq[0] + sq[1], -np.inf)
    i2 = d2.argmax(axis=0)
    f2 = column_index(i2, m)
    du2, dv2 = duv.reshape(2, -1).take(f2, axis=1)
    area = du2 * dv - dv2 * du
    i3 = np.where(ok, area, -np.inf).argmax(axis=0)
    i4 = np.where(ok, area, np.inf).argmin(axis=0)
    f3, f4 = column_index(i3, m), column_index(i4, m)
    keep = np.array([ok.take(f1), d2.take(f2) > tiny, area.take(f3) > tiny, area.take(f4) < -tiny])
    return np.array([i1, i2, i3, i4]), keep, np.array([f1, f2, f3, f4])


def _take(x, rows):
    return x if rows is None else x.take(rows, axis=-1)


def box_box(a, b, margin):
    """Candidates (C = 4): a face manifold, or one edge-edge point in slot 0."""
    m = len(margin)
    axes_a, pos_a, h_a = pair_last(a)
    axes_b, pos_b, h_b = pair_last(b)
    kind, index, normal, sep, forward, scale = sat_pair_last(axes_a, pos_a, h_a,
                                                            axes_b, pos_b, h_b)
    close = sep <= margin
    face = close & (kind != EDGE)
    n_face = np.count_nonzero(face)
    if n_face < m:
        point = np.zeros((m, 4, 3))
        depth = np.zeros((m, 4))
        feature = np.zeros((m, 4), dtype=np.int64)
        valid = np.zeros((m, 4), dtype=bool)
    if n_face:
        sel = None if n_face == m else face.nonzero()[0]
        xa, pa, ha = _take(axes_a, sel), _take(pos_a, sel), _take(h_a, sel)
        xb, pb, hb = _take(axes_b, sel), _take(pos_b, sel), _take(h_b, sel)
        fb = _take(kind, sel) == FACE_B
        n_ref = _take(normal, sel)
        outward = _take(forward, sel)
        if fb.any():
            xa, xb = np.where(fb, xb, xa), np.where(fb, xa, xb)
            pa, pb = np.where(fb, pb, pa), np.where(fb, pa, pb)
            ha, hb = np.where(fb, hb, ha), np.where(fb, ha, hb)
            n_ref = np.where(fb, -n_ref, n_ref)
            outward = outward != fb
        uvw, ok, frame, face_c, ref_face, inc_face, huv = _face_candidates(
            xa, pa, ha, xb, pb, hb, _take(index, sel), n_ref, outward)
        reach = _take(margin, sel)
        ok &= uvw[2] <= reach
        idx, keep, flat = _reduce4(uvw, ok, _take(scale, sel))
        uu, vv, ww = uvw.reshape(3, -1).take(flat, axis=1)          # (4, M) each
        beside = ~keep[0]
        if beside.any():
            # a pair apart whose incident face lies beside the reference rectangle has no
            # candidate on it: its speculative contact is the incident vertex nearest the
            # reference plane, brought onto the rectangle (a 6 cm box at 400 m/s, 45 degrees
            # from a wall's normal, starting beside the wall's edge, got no contact and
            # passed through the wall in 7 of 20 shots)
            cols = np.flatnonzero(beside)
            nearest = uvw[2, :4].argmin(axis=0).take(cols)
            u0, v0, w0 = uvw[:, nearest, cols]
            hu, hv = huv[:, cols]
            uu[0, cols], vv[0, cols], ww[0, cols] = (np.clip(u0, -hu, hu),
                                                     np.clip(v0, -hv, hv), w0)
            idx[0, cols] = nearest
            keep[0, cols] = w0 <= reach.take(cols)
        pts = (face_c[:, None] + uu * frame[:, 0, None] + vv * frame[:, 1, None]
               + (ww / 2) * frame[:, 2, None])                      # (3, 4, M)
        fid = ((fb * 6 + ref_face) * 6 + inc_face) * 24 + idx
        if sel is None:
            point, depth, feature, valid = pts.transpose(2, 1, 0), -ww.T, fid.T, keep.T
        else:
            point[sel], depth[sel], feature[sel], valid[sel] = (pts.transpose(2, 1, 0), -ww.T,
                                                                fid.T, keep.T)

    edge = close & (kind == EDGE)
    if edge.any():
        n = normal.T[edge]
        i, j = index[edge] // 3, index[edge] % 3
        ha, hb = a.params[edge, :3], b.params[edge, :3]
        Ra, Rb = a.rot[edge], b.rot[edge]
        sa = np.where(einsum("mi,mij->mj", n, Ra) >= 0, 1.0, -1.0)
        sb = np.where(einsum("mi,mij->mj", n, Rb) >= 0, -1.0, 1.0)
        rows = np.arange(len(n))
        sa[rows, i] = 0.0     # edge midpoints: zero along the edge's own axis
        sb[rows, j] = 0.0
        ca = a.pos[edge] + einsum("mij,mj->mi", Ra, sa * ha)
        cb = b.pos[edge] + einsum("mij,mj->mi", Rb, sb * hb)
        da, db = Ra[rows, :, i], Rb[rows, :, j]
        s, t = closest_segments(ca, da, ha[rows, i], cb, db, hb[rows, j])
        pa, pb = ca + s[:, None] * da, cb + t[:, None] * db
        d = dot(pa - pb, n)
        point[edge, 0] = 0.5 * (pa + pb)
        depth[edge, 0] = d
        feature[edge, 0] = EDGE_FEATURE + index[edge]
        valid[edge, 0] = d >= -margin[edge]
    # the one normal of each pair as a stride-0 view (see from_candidates) of the contiguous
    # (3, M) normal: np.ndarray on its buffer is a quarter of np.broadcast_to's cost
    return (point, np.ndarray((m, 4, 3), buffer=normal, strides=(8, 0, 8 * m)), depth,
            feature, valid)
