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
"""
from __future__ import annotations

import numpy as np

from .geometry import closest_segments, dot
from .sat import EDGE, FACE_B, box_sat

INCIDENT_QUAD = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])  # cyclic
EDGE_FEATURE = 1 << 12   # edge-edge ids: EDGE_FEATURE + 3 i + j, above every face id
INSIDE_TOL = 1e-9        # relative slack of the inside tests: coincident faces still count


def _face_candidates(ref, inc, k, normal_ref):
    """(u, v, w, valid) (M, 24) candidates and face ids; ref/inc are Shapes, k (M,) axis."""
    m = len(k)
    rows = np.arange(m)
    ref_h, inc_h = ref.params[:, :3], inc.params[:, :3]
    k1, k2 = (k + 1) % 3, (k + 2) % 3
    U, V = ref.rot[rows, :, k1], ref.rot[rows, :, k2]
    hk, hu, hv = ref_h[rows, k], ref_h[rows, k1], ref_h[rows, k2]
    face_c = ref.pos + normal_ref * hk[:, None]
    ref_face = 2 * k + (dot(normal_ref, ref.rot[rows, :, k]) > 0)

    m_dots = np.einsum("mi,mij->mj", normal_ref, inc.rot)
    j = np.argmax(np.abs(m_dots), axis=1)
    s_inc = np.where(m_dots[rows, j] > 0, -1.0, 1.0)
    inc_n = inc.rot[rows, :, j] * s_inc[:, None]
    j1, j2 = (j + 1) % 3, (j + 2) % 3
    P = inc.rot[rows, :, j1] * inc_h[rows, j1][:, None]
    Q = inc.rot[rows, :, j2] * inc_h[rows, j2][:, None]
    inc_c = inc.pos + inc_n * inc_h[rows, j][:, None]
    inc_face = 2 * j + (s_inc > 0)
    verts = (inc_c[:, None, :] + INCIDENT_QUAD[None, :, 0:1] * P[:, None, :]
             + INCIDENT_QUAD[None, :, 1:2] * Q[:, None, :])                   # (M, 4, 3)
    rel = verts - face_c[:, None, :]
    iu, iv, iw = dot(rel, U[:, None]), dot(rel, V[:, None]), dot(rel, normal_ref[:, None])

    tol_u, tol_v = hu * (1 + INSIDE_TOL), hv * (1 + INSIDE_TOL)
    # 0..3: incident vertices inside the reference rectangle.
    c_u, c_v, c_w = [iu], [iv], [iw]
    c_ok = [(np.abs(iu) <= tol_u[:, None]) & (np.abs(iv) <= tol_v[:, None])]

    # 4..7: reference vertices inside the projected incident quad (either winding).
    ru, rv = INCIDENT_QUAD[None, :, 0] * hu[:, None], INCIDENT_QUAD[None, :, 1] * hv[:, None]
    nu, nv = np.roll(iu, -1, 1), np.roll(iv, -1, 1)
    eu, ev = nu - iu, nv - iv                                                # (M, 4) edges
    winding = np.sign(np.sum(iu * nv - iv * nu, axis=1))[:, None, None]
    side = (eu[:, None, :] * (rv[:, :, None] - iv[:, None, :])
            - ev[:, None, :] * (ru[:, :, None] - iu[:, None, :])) * winding  # (M, 4ref, 4e)
    edge_len = np.sqrt(eu**2 + ev**2)[:, None, :]
    scale = np.maximum(hu, hv)[:, None, None]
    inside_quad = np.all(side >= -INSIDE_TOL * edge_len * scale, axis=2) & (winding[..., 0] != 0)
    mn = np.einsum("mi,mi->m", inc_n, normal_ref)           # <= -1/sqrt(3): never zero
    w0 = dot(inc_c - face_c, inc_n) / mn
    rw = w0[:, None] - (ru * dot(inc_n, U)[:, None] + rv * dot(inc_n, V)[:, None]) / mn[:, None]
    c_u.append(ru), c_v.append(rv), c_w.append(rw), c_ok.append(inside_quad)

    # 8..23: incident edge e crossing reference side line s (u = +-hu, v = +-hv).
    nw = np.roll(iw, -1, 1)
    for coord, other, bound, obound in ((iu, iv, hu, tol_v), (iv, iu, hv, tol_u)):
        ncoord, nother = np.roll(coord, -1, 1), np.roll(other, -1, 1)
        for line in (1.0, -1.0):
            denom = ncoord - coord
            safe = np.where(np.abs(denom) > 1e-300, denom, 1.0)
            t = (line * bound[:, None] - coord) / safe
            o = other + t * (nother - other)
            ok = (np.abs(denom) > 1e-300) & (t >= 0) & (t <= 1) & (np.abs(o) <= obound[:, None])
            at = np.broadcast_to(line * bound[:, None], t.shape)
            c_u.append(at if coord is iu else o), c_v.append(o if coord is iu else at)
            c_w.append(iw + t * (nw - iw)), c_ok.append(ok)
    # Stacked in order line s, then edge e; reorder to 8 + 4 e + s.
    u, v, w, ok = (np.concatenate(x, axis=1) for x in (c_u, c_v, c_w, c_ok))
    perm = np.r_[0:8, 8 + (np.arange(16) % 4) * 4 + np.arange(16) // 4]
    u, v, w, ok = u[:, perm], v[:, perm], w[:, perm], ok[:, perm]
    return u, v, w, ok, face_c, U, V, ref_face, inc_face


def _reduce4(u, v, depth, ok, scale):
    """Indices (M, 4) of at most 4 well-spread candidates and their (M, 4) validity."""
    rows = np.arange(len(u))
    tiny = (1e-5 * scale) ** 2
    pick = lambda x, i: x[rows, i]
    i1 = np.argmax(np.where(ok, depth, -np.inf), axis=1)
    u1, v1 = pick(u, i1), pick(v, i1)
    d2 = np.where(ok, (u - u1[:, None]) ** 2 + (v - v1[:, None]) ** 2, -np.inf)
    i2 = np.argmax(d2, axis=1)
    u2, v2 = pick(u, i2), pick(v, i2)
    area = (u2 - u1)[:, None] * (v - v1[:, None]) - (v2 - v1)[:, None] * (u - u1[:, None])
    i3 = np.argmax(np.where(ok, area, -np.inf), axis=1)
    i4 = np.argmin(np.where(ok, area, np.inf), axis=1)
    keep = np.stack([ok.any(axis=1), pick(d2, i2) > tiny,
                     pick(area, i3) > tiny, pick(area, i4) < -tiny], axis=1)
    return np.stack([i1, i2, i3, i4], axis=1), keep


def box_box(a, b, margin):
    """Candidates (C = 4): a face manifold, or one edge-edge point in slot 0."""
    m = len(margin)
    kind, index, normal, sep = box_sat(a, b)
    point = np.zeros((m, 4, 3))
    depth = np.zeros((m, 4))
    feature = np.zeros((m, 4), dtype=np.int64)
    valid = np.zeros((m, 4), dtype=bool)
    close = sep <= margin

    face = close & (kind != EDGE)
    if face.any():
        fb = (kind == FACE_B)[face]
        sel = lambda x, y: np.where(fb.reshape((-1,) + (1,) * (x.ndim - 1)), y, x)
        A = type(a)(*(x[face] for x in a))
        B = type(b)(*(x[face] for x in b))
        ref = type(a)(*(sel(x, y) for x, y in zip(A, B)))
        inc = type(a)(*(sel(y, x) for x, y in zip(A, B)))
        n_ref = np.where(fb[:, None], -normal[face], normal[face])
        u, v, w, ok, face_c, U, V, ref_face, inc_face = _face_candidates(ref, inc, index[face],
                                                                         n_ref)
        dep = -w
        ok &= dep >= -margin[face][:, None]
        scale = np.maximum(ref.params[:, :3].max(1), inc.params[:, :3].max(1))
        idx, keep = _reduce4(u, v, dep, ok, scale)
        g = lambda x: np.take_along_axis(x, idx, 1)
        uu, vv, ww = g(u), g(v), g(w)
        point[face] = (face_c[:, None] + uu[..., None] * U[:, None] + vv[..., None] * V[:, None]
                       + (ww / 2)[..., None] * n_ref[:, None])
        depth[face] = -ww
        feature[face] = ((fb[:, None] * 6 + ref_face[:, None]) * 6 + inc_face[:, None]) * 24 + idx
        valid[face] = keep

    edge = close & (kind == EDGE)
    if edge.any():
        n = normal[edge]
        i, j = index[edge] // 3, index[edge] % 3
        ha, hb = a.params[edge, :3], b.params[edge, :3]
        Ra, Rb = a.rot[edge], b.rot[edge]
        sa = np.where(np.einsum("mi,mij->mj", n, Ra) >= 0, 1.0, -1.0)
        sb = np.where(np.einsum("mi,mij->mj", n, Rb) >= 0, -1.0, 1.0)
        rows = np.arange(len(n))
        sa[rows, i] = 0.0     # edge midpoints: zero along the edge's own axis
        sb[rows, j] = 0.0
        ca = a.pos[edge] + np.einsum("mij,mj->mi", Ra, sa * ha)
        cb = b.pos[edge] + np.einsum("mij,mj->mi", Rb, sb * hb)
        da, db = Ra[rows, :, i], Rb[rows, :, j]
        s, t = closest_segments(ca, da, ha[rows, i], cb, db, hb[rows, j])
        pa, pb = ca + s[:, None] * da, cb + t[:, None] * db
        d = dot(pa - pb, n)
        point[edge, 0] = 0.5 * (pa + pb)
        depth[edge, 0] = d
        feature[edge, 0] = EDGE_FEATURE + index[edge]
        valid[edge, 0] = d >= -margin[edge]
    return point, np.repeat(normal[:, None], 4, axis=1), depth, feature, valid
