# A wall standing on a floor box against the same wall sunk into a plane (one L-shaped solid):
# a ball, a cube and a capsule slid along the floor into the wall; largest difference of their
# tracks (position and velocity), over 1 s at dt 1/120.
import numpy as np
from physics import World, Box, Plane, Sphere, Capsule
def run(floor, shape, q=(1, 0, 0, 0), z=0.05):
    w = World(dt=1/120)
    if floor == "beside":
        # the wall beside the floor, from its bottom up: the floor's end face is covered
        w.add_body(Box((1.05, 2, 0.25)), static=True, position=(-0.15, 0, -0.25), friction=0.3)
        w.add_body(Box((0.1, 2, 0.75)), static=True, position=(1, 0, 0.25), friction=0.3, restitution=0.5)
    elif floor == "box":
        w.add_body(Box((2, 2, 0.25)), static=True, position=(0, 0, -0.25), friction=0.3)
        w.add_body(Box((0.1, 2, 0.5)), static=True, position=(1, 0, 0.5), friction=0.3, restitution=0.5)
    else:
        w.add_body(Plane(), friction=0.3)
        w.add_body(Box((0.1, 2, 0.75)), static=True, position=(1, 0, 0.25), friction=0.3, restitution=0.5)
    b = w.add_body(shape, mass=1, position=(0.5, 0, z), orientation=q, friction=0.3, restitution=0.5)
    b.linear_velocity = (2, 0, -0.5)
    tr = []
    for k in range(120):
        w.step(); tr.append(np.concatenate([b.position, b.linear_velocity]))
    return np.array(tr)
for name, shape, q, z in [("ball", Sphere(0.05), (1, 0, 0, 0), 0.05), ("cube", Box((0.05, 0.05, 0.05)), (1, 0, 0, 0), 0.05),
                          ("tilted cube", Box((0.05, 0.05, 0.05)), (np.cos(0.2), 0, np.sin(0.2), 0), 0.08),
                          ("capsule lying", Capsule(0.05, 0.1), (np.cos(np.pi/4), np.sin(np.pi/4), 0, 0), 0.05)]:
    p = run("plane", shape, q, z)
    for floor in ("box", "beside"):
        a = run(floor, shape, q, z)
        print(f"{name}, wall {'on' if floor == 'box' else 'beside'} the floor box: max |it - plane floor| {np.abs(a - p).max():.2e}; end x {a[-1,0]:.4f} vs {p[-1,0]:.4f}, vx {a[-1,3]:.3f} vs {p[-1,3]:.3f}")
