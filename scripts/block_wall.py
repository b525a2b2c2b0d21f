# A wall of flush static 1 m blocks, 2 high (seams along x and z), gravity turned towards it
# (0, -9.81, 0): a frictionless 0.5 m cube pressed on it by gravity, slid at 3 m/s along x and
# 0.3 m/s up for 1.5 s (crossing vertical and horizontal seams), dt 1/60. Expect 4.5 m along x.
import sys; sys.path.insert(0, '.')
import numpy as np
from physics import World, Box
w = World(dt=1/60); w.gravity = (0, -9.81, 0)
for i in range(-2, 12):
    for k in range(2):
        w.add_body(Box((0.5, 0.5, 0.5)), static=True, position=(i, -0.5, k + 0.5), friction=0.0)
c = w.add_body(Box((0.25,) * 3), mass=2, position=(0, 0.25, 0.6), friction=0.0)
w.step(3); x0 = c.position.copy(); c.linear_velocity = (3, 0, 0.3)
w.step(90)
print(f"travelled {c.position[0] - x0[0]:.3f} m along x (4.5), {c.position[2] - x0[2]:.3f} up (0.45), vx {c.linear_velocity[0]:.3f}, "
      f"off the wall {c.position[1]:.4f} (0.25), upright cos {c.rotation[1, 1]:.4f}")
