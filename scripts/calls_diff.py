# Per-function call counts over 60 steps of spawn_on_tiles (argv[1]: "spawn" or "rest"), as "name count" lines.
import sys, cProfile, pstats; sys.path.insert(0, '.')
import numpy as np
from physics import World, Box, Sphere
w = World(dt=1/60)
for i in range(40):
    w.add_body(Box((0.5, 2, 0.25)), static=True, position=(i - 20.0, 0, -0.25))
rng = np.random.default_rng(0)
for k in range(200):
    w.add_body(Sphere(0.1), mass=1, position=(rng.uniform(-19, 19), rng.uniform(-1.8, 1.8), 0.1))
w.step(60)
pr = cProfile.Profile(); pr.enable()
for k in range(60):
    if sys.argv[1] == "spawn":
        w.add_body(Sphere(0.05), mass=0.1, position=(rng.uniform(-19, 19), rng.uniform(-1.8, 1.8), 0.5))
    w.step()
pr.disable()
for k, v in sorted(pstats.Stats(pr).stats.items(), key=lambda kv: -kv[1][1]):
    print(f"{k[0].split('/')[-1]}:{k[2]} {v[1]}")
