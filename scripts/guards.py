# The joins that stay: a frictionless 0.5 m cube slid at 1 m/s for 1.5 s (dt 1/60) over
# (a) 1 m tiles, the second shifted 0.5 m sideways (its face half covered), (b) flush tiles
# with one 1 cm higher (and thicker), (c) flush tiles, one turned 5 degrees about z,
# (d) flush tiles, one kinematic (sliding sideways at 0.1 mm/s). Prints travelled and vx.
import sys; sys.path.insert(0, '.')
import numpy as np
from physics import World, Box
def cube_run(w):
    c = w.add_body(Box((0.25,) * 3), mass=2, position=(0, 0, 0.25), friction=0.0)
    w.step(3); x0 = c.position[0]; c.linear_velocity = (1, 0, 0); w.step(90)
    return f"travelled {c.position[0] - x0:.3f} m, vx {c.linear_velocity[0]:.3f}, upright {c.rotation[2, 2]:.3f}"
def tiles(w, k_special=None, **kw):
    out = []
    for i in range(-2, 10):
        args = dict(position=(i * 1.0, 0, -0.5), friction=0.0, static=True)
        half = (0.5, 2, 0.5)
        if i == k_special:
            if "dy" in kw: args["position"] = (i, kw["dy"], -0.5)
            if "dz" in kw: half = (0.5, 2, 0.5 + kw["dz"] / 2); args["position"] = (i, 0, -0.5 + kw["dz"] / 2)
            if "yaw" in kw: a = np.radians(kw["yaw"]) / 2; args["orientation"] = (np.cos(a), 0, 0, np.sin(a))
        out.append(w.add_body(Box(half), **args))
    return out
w = World(dt=1/60); tiles(w, 1, dy=0.5); print("(a) half covered:", cube_run(w))
w = World(dt=1/60); tiles(w, 1, dz=0.01); print("(b) 1 cm step:", cube_run(w))
w = World(dt=1/60); tiles(w, 1, yaw=5); print("(c) turned 5 deg:", cube_run(w))
w = World(dt=1/60); t = tiles(w); t[3].linear_velocity = (0, 1e-4, 0); print("(d) one kinematic:", cube_run(w))
w = World(dt=1/60); tiles(w); print("flush:", cube_run(w))
