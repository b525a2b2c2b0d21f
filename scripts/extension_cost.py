# What the reach across covered faces costs: a 12 x 12 floor of flush 1 m static tiles (0.5 m
# thick) with 60 cubes (0.3 m) and 60 balls (r 0.1) dropped on it, settled 2 s, then all given
# 2 m/s sideways for 1 s. For EXTENSION 0 (no growth: main's behaviour), 0.05, 0.1, 0.25 and
# the neighbour's whole thickness (1 m: the exact union): candidate pairs and contacts a step
# (mean over the last second), best-of-3 ms a step of that second, and the cubes' mean speed
# at the end (frictionless tiles: 2.0 if nothing trips).
import sys, time; sys.path.insert(0, '.')
import numpy as np
from physics import World, Box, Sphere
from physics.collision import internal_faces
def build():
    w = World(dt=1/60)
    for i in range(12):
        for j in range(12):
            w.add_body(Box((0.5, 0.5, 0.25)), static=True, position=(i - 5.5, j - 5.5, -0.25), friction=0.0)
    rng = np.random.default_rng(1)
    cubes = []
    for k in range(120):
        p = (rng.uniform(-5, 5), rng.uniform(-5, 3), 0.3 + 0.0 * k)
        if k % 2:
            cubes.append(w.add_body(Box((0.15, 0.15, 0.15)), mass=1, position=(p[0], p[1], 0.16), friction=0.0))
        else:
            w.add_body(Sphere(0.1), mass=1, position=(p[0], p[1], 0.11), friction=0.0)
    return w, cubes
for ext in (0.0, 0.05, 0.1, 0.25, 1.0):
    internal_faces.EXTENSION = ext
    best = np.inf
    for rep in range(3):
        w, cubes = build()
        w.step(120)
        v = w.linear_velocities.copy(); v[144:, 1] = 2.0; w.linear_velocities = v
        pairs, contacts = [], []
        t0 = time.perf_counter()
        for k in range(60):
            w.step()
            contacts.append(len(w.contacts.depth)); pairs.append(len(w._model().pair_cache.typed.a))
        best = min(best, (time.perf_counter() - t0) / 60 * 1e3)
    speed = np.mean([c.linear_velocity[1] for c in cubes])
    tilt = min(c.rotation[2, 2] for c in cubes)
    print(f"EXTENSION {ext:4.2f} m: {np.mean(pairs):6.1f} pairs, {np.mean(contacts):6.1f} contacts a step, {best:5.2f} ms a step (best of 3); cubes' mean vy {speed:.3f} m/s, least upright cos {tilt:.3f}")
