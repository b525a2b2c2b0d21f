"""Rough timing of find_contacts (not a test): python -m physics.collision.timing [N]

N spheres (radius 0.05) jittered on a grid with slight overlaps in a 1 m x 1 m bin made of a
ground plane and 5 static boxes (4 walls and an obstacle in the middle of the floor).
"""
from __future__ import annotations

import sys
import time

import numpy as np

from ..shapes import BOX, PLANE, SPHERE
from .detect import find_contacts


def bin_scene(n_spheres=1000, seed=0):
    rng = np.random.default_rng(seed)
    r, side = 0.05, 10                          # 10 x 10 spheres per layer, 0.1 m apart
    idx = np.arange(n_spheres)
    grid = np.stack([idx % side, (idx // side) % side, idx // side**2], 1)
    centres = (grid + 0.5) * 0.095 - [0.475, 0.475, 0.0] + rng.normal(0, 0.003, (n_spheres, 3))
    centres[:, 2] += 0.2                        # above the obstacle
    walls = [((0.05, 0.6, 0.8), (-0.55, 0, 0.8)), ((0.05, 0.6, 0.8), (0.55, 0, 0.8)),
             ((0.6, 0.05, 0.8), (0, -0.55, 0.8)), ((0.6, 0.05, 0.8), (0, 0.55, 0.8)),
             ((0.2, 0.2, 0.1), (0, 0, 0.1))]
    kind = np.r_[PLANE, [BOX] * len(walls), [SPHERE] * n_spheres]
    params = np.zeros((len(kind), 4))
    params[0] = (0, 0, 1, 0)
    params[1:6, :3] = [w[0] for w in walls]
    params[6:, 0] = r
    pos = np.r_[np.zeros((1, 3)), [w[1] for w in walls], centres]
    rot = np.tile(np.eye(3), (len(kind), 1, 1))
    static = np.r_[np.ones(6, bool), np.zeros(n_spheres, bool)]
    return kind, params, pos, rot, static


def main(n_spheres=1000, repeats=20):
    kind, params, pos, rot, static = bin_scene(n_spheres)
    n = len(kind)
    kw = dict(static=static, group=np.ones(n, int), mask=np.ones(n, int),
              excluded_pairs=np.zeros((0, 2), int), margin=0.01,
              velocity=np.zeros((n, 3)), dt=1 / 240)
    contacts = find_contacts(kind, params, pos, rot, **kw)
    t0 = time.perf_counter()
    for _ in range(repeats):
        find_contacts(kind, params, pos, rot, **kw)
    ms = (time.perf_counter() - t0) / repeats * 1e3
    print(f"{n_spheres} spheres in a bin: {len(contacts)} contacts, {ms:.2f} ms per find_contacts")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
