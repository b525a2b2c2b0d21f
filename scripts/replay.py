# Bitwise replay over a grown floor: 40 flush tiles, a cube and a ball sliding; state taken
# at step 60, 120 steps more; then set_state back (same world, and a fresh world built alike)
# and 120 steps again: the same bits?
import sys; sys.path.insert(0, '.')
import numpy as np
from physics import World, Box, Sphere
def build():
    w = World(dt=1/60)
    for i in range(-2, 40): w.add_body(Box((0.5, 2, 0.5)), static=True, position=(i, 0, -0.5), friction=0.3)
    c = w.add_body(Box((0.25,) * 3), mass=2, position=(0, 0, 0.25)); c.linear_velocity = (3, 0, 0)
    b = w.add_body(Sphere(0.1), mass=1, position=(0, 1, 0.1)); b.linear_velocity = (2, 0, 0)
    return w
def bits(w): return np.concatenate([w.positions.ravel(), w.orientations.ravel(), w.linear_velocities.ravel()]).tobytes()
w = build(); w.step(60); st = w.get_state(); w.step(120); a = bits(w)
w.set_state(st); w.step(120); print("same world:", bits(w) == a)
w2 = build(); w2.set_state(st); w2.step(120); print("fresh world:", bits(w2) == a)
