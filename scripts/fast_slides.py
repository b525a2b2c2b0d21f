# Fast bodies over flush 1 m tiles (tops at z = 0), frictionless, dt 1/60: a 0.5 m cube slid at
# 10 and 20 m/s, the same cube dropped from 3 m onto a join while sliding at 2 m/s, a 5 cm ball
# at 40 m/s; for EXTENSION 0.05, 0.1 (chosen) and 1 m. Prints the speed kept, the lowest and
# highest centre height (the cube rests at 0.25) and the least upright cosine.
import sys; sys.path.insert(0, '.')
import numpy as np
from physics import World, Box, Sphere
from physics.collision import internal_faces
def run(shape, z, v, seconds=1.5):
    w = World(dt=1/60)
    for i in range(-2, 50):
        w.add_body(Box((0.5, 2, 0.5)), static=True, position=(i * 1.0, 0, -0.5), friction=0.0)
    b = w.add_body(shape, mass=2, position=(0.5, 0, z), friction=0.0)
    b.linear_velocity = v
    zs, ups = [], []
    for k in range(int(seconds * 60)):
        w.step(); zs.append(b.position[2]); ups.append(b.rotation[2, 2])
    zs = np.array(zs)
    return f"vx {b.linear_velocity[0]:6.2f}, z {zs[20:].min():.4f}..{zs[20:].max():.4f}, upright {min(ups[20:]):.4f}"
for ext in (0.0, 0.05, 0.1, 1.0):   # (0: nothing grows, as before)
    internal_faces.EXTENSION = ext
    print(f"EXTENSION {ext}: cube 10 m/s: {run(Box((0.25,)*3), 0.25, (10, 0, 0))} | cube 20 m/s: {run(Box((0.25,)*3), 0.25, (20, 0, 0), 1.0)} "
          f"| cube dropped 3 m at 2 m/s: {run(Box((0.25,)*3), 3.25, (2, 0, 0))} | ball 40 m/s: {run(Sphere(0.05), 0.05, (40, 0, 0), 1.0)}")
