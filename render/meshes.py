"""Unit triangle meshes for instanced drawing (numpy, no OpenGL).

Every mesh is an array of vertices ``(k, 7)`` float32 ``(x, y, z, nx, ny, nz, s)`` and an index
array ``(m,)`` uint32 (counter-clockwise triangles seen from outside). The vertex shader maps a
unit vertex into the body frame as ``p * scale.xyz + s * scale.w * ez`` so one mesh per shape
kind serves every size:

- sphere: radius 1, scale ``(r, r, r, 0)``;
- box: the cube [-1, 1]^3 with flat faces, scale ``(hx, hy, hz, 0)``;
- cylinder: radius 1 along z from -1 to 1, scale ``(r, r, a, 0)``;
- capsule: a unit sphere split at its equator, the upper half tagged ``s = +1`` and the lower
  ``s = -1``, joined by a side band; scale ``(r, r, r, a)`` pushes the halves apart by the
  capsule's half length ``a``.
"""
from __future__ import annotations

import numpy as np


def _pack(pos, nrm, s=None):
    s = np.zeros(len(pos)) if s is None else s
    return np.c_[pos, nrm, s].astype(np.float32)


def sphere(slices: int = 32, stacks: int = 16):
    """UV sphere of radius 1."""
    th = np.linspace(0.0, np.pi, stacks + 1)            # polar angle from +z
    ph = np.linspace(0.0, 2 * np.pi, slices + 1)
    T, P = np.meshgrid(th, ph, indexing="ij")
    pos = np.stack([np.sin(T) * np.cos(P), np.sin(T) * np.sin(P), np.cos(T)], -1).reshape(-1, 3)
    idx = _grid_indices(stacks, slices, top_pole=True, bottom_pole=True)
    return _pack(pos, pos), idx


def _grid_indices(rows: int, cols: int, start: int = 0, top_pole: bool = False,
                  bottom_pole: bool = False):
    """Two triangles per cell of a (rows+1) x (cols+1) vertex grid stored row-major; rows go
    from +z (or the upper edge) down, columns counter-clockwise about z. Where the first
    (last) row is a pole, a single point, the zero-area triangle of each of its cells is
    left out (a software rasteriser pays for every triangle)."""
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    a = start + r * (cols + 1) + c
    b = a + (cols + 1)
    first = np.stack([a, b, a + 1], -1)
    second = np.stack([a + 1, b, b + 1], -1)
    keep1 = np.ones(r.shape, bool)
    keep2 = np.ones(r.shape, bool)
    if top_pole:
        keep1[0] = False
    if bottom_pole:
        keep2[-1] = False
    tri = np.stack([first, second], 2)                  # (rows, cols, 2, 3)
    keep = np.stack([keep1, keep2], 2)
    return tri[keep].reshape(-1).astype(np.uint32)


def box():
    """Cube [-1, 1]^3, 24 vertices with flat normals."""
    pos, nrm, idx = [], [], []
    for axis in range(3):
        for sign in (1.0, -1.0):
            n = np.zeros(3)
            n[axis] = sign
            u = np.zeros(3)
            u[(axis + 1) % 3] = 1.0
            v = np.cross(n, u)
            base = len(pos)
            for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                pos.append(n + a * u + b * v)
                nrm.append(n)
            idx += [base, base + 1, base + 2, base, base + 2, base + 3]
    return _pack(np.array(pos), np.array(nrm)), np.array(idx, dtype=np.uint32)


def cylinder(slices: int = 32):
    """Radius 1, z from -1 to 1, smooth side and flat caps."""
    ph = np.linspace(0.0, 2 * np.pi, slices + 1)
    ring = np.c_[np.cos(ph), np.sin(ph), np.zeros_like(ph)]
    top, bot = ring + (0, 0, 1), ring - (0, 0, 1)
    side_pos = np.concatenate([top, bot])
    side_nrm = np.concatenate([ring, ring])
    idx = [_grid_indices(1, slices)]
    verts = [_pack(side_pos, side_nrm)]
    start = len(side_pos)
    for z, sign in ((1.0, 1.0), (-1.0, -1.0)):
        centre = np.array([[0.0, 0.0, z]])
        rim = ring + (0, 0, z)
        pos = np.concatenate([centre, rim])
        verts.append(_pack(pos, np.tile((0.0, 0.0, sign), (len(pos), 1))))
        k = np.arange(slices)
        if sign > 0:
            tri = np.stack([np.zeros(slices), 1 + k, 2 + k], -1)
        else:
            tri = np.stack([np.zeros(slices), 2 + k, 1 + k], -1)
        idx.append((tri.reshape(-1) + start).astype(np.uint32))
        start += len(pos)
    return np.concatenate(verts), np.concatenate(idx)


def capsule(slices: int = 32, stacks: int = 16):
    """Unit sphere cut at the equator (upper half s=+1, lower s=-1) with a side band."""
    half = stacks // 2
    ph = np.linspace(0.0, 2 * np.pi, slices + 1)
    parts, idx, start = [], [], 0
    for sign, th in ((1.0, np.linspace(0.0, np.pi / 2, half + 1)),
                     (-1.0, np.linspace(np.pi / 2, np.pi, half + 1))):
        T, P = np.meshgrid(th, ph, indexing="ij")
        pos = np.stack([np.sin(T) * np.cos(P), np.sin(T) * np.sin(P), np.cos(T)], -1)
        pos = pos.reshape(-1, 3)
        parts.append(_pack(pos, pos, np.full(len(pos), sign)))
        idx.append(_grid_indices(half, slices, start, top_pole=sign > 0,
                                 bottom_pole=sign < 0))
        start += len(pos)
    ring = np.c_[np.cos(ph), np.sin(ph), np.zeros_like(ph)]
    band = np.concatenate([ring, ring])
    parts.append(_pack(band, band, np.r_[np.ones(len(ring)), -np.ones(len(ring))]))
    idx.append(_grid_indices(1, slices, start))
    return np.concatenate(parts), np.concatenate(idx)


LOD_SEGMENTS = (64, 32, 20, 12, 8, 6)  # segments around the axis, level 0 (near) .. 5 (far)
# pixels between a polygonal silhouette and the circle. At 1.0 the Newton's cradle's balls,
# 45 px across at 1280x720, were 12-gons with visible corners (a viewer explorer's finding);
# at 0.35 they take 20 segments. Level 0 keeps a sphere filling the view within 0.6 px.
LOD_MAX_ERROR = 0.35


def lod_level(radius_pixels) -> np.ndarray:
    """Detail level for round shapes of the given on-screen radii: the coarsest level whose
    silhouette (a polygon of n segments) stays within LOD_MAX_ERROR pixels of the circle,
    r (1 - cos(pi / n)) <= LOD_MAX_ERROR."""
    r = np.asarray(radius_pixels, float)
    level = np.zeros(r.shape, dtype=np.int64)
    for lvl, n in enumerate(LOD_SEGMENTS[1:], start=1):
        level = np.where(r * (1.0 - np.cos(np.pi / n)) <= LOD_MAX_ERROR, lvl, level)
    return level


def shape_meshes(level: int = 0):
    """The four body meshes, keyed by shape kind name, at detail ``level`` (0 finest)."""
    n = LOD_SEGMENTS[level]
    stacks = max(4, n // 2 + (n // 2) % 2)
    return {"sphere": sphere(n, stacks), "box": box(), "capsule": capsule(n, stacks),
            "cylinder": cylinder(n)}
