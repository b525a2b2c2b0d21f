"""Marbles poured into a bin."""
import numpy as np

from physics import Box, Plane, Sphere

TITLE = "Marbles"
DESCRIPTION = ("n glass spheres (radius 3-5 cm) dropped from a jittered grid into a bin: the "
               "ground and four static walls.")
PARAMS = {"count": 1000, "half_width": 0.6, "friction": 0.4, "restitution": 0.3, "seed": 1}
CAMERA = {"target": (0.0, 0.0, 0.4), "distance": 3.5, "yaw": -60, "pitch": 35}

R_MIN, R_MAX = 0.03, 0.05


def build(world, count=1000, half_width=0.6, friction=0.4, restitution=0.3, seed=1):
    """Glass marbles (radius 3-5 cm, 2500 kg/m^3) dropped from a jittered grid into a square
    bin: the ground and four static walls 0.8 m high.

    Parameters:
        count (count): how many marbles (1 to 20000).
        half_width (m): half the bin's inner width (at least 0.1 m).
        friction (-): Coulomb friction coefficient of the marbles, walls and ground.
        restitution (-): the marbles' coefficient of restitution (0: no bounce, 1: elastic).
        seed (-): the random generator's seed for the radii and the jitter.
    """
    count = int(count)
    if not 1 <= count <= 20000:
        raise ValueError(f"count must be from 1 to 20000, got {count}")
    if half_width < 2 * R_MAX:
        raise ValueError(f"half_width must be at least {2 * R_MAX} m, got {half_width}")
    rng = np.random.default_rng(int(seed))
    world.add_body(Plane(), friction=friction, name="ground")
    wall_h, t = 0.4, 0.05                     # wall half height, half thickness
    for i, (x, y) in enumerate(((1, 0), (-1, 0), (0, 1), (0, -1))):
        half = (t, half_width + 2 * t, wall_h) if x else (half_width + 2 * t, t, wall_h)
        world.add_body(Box(half), static=True, friction=friction, name=f"wall{i}",
                       position=((half_width + t) * x, (half_width + t) * y, wall_h))
    # a jittered grid whose cells (2.2 R_MAX wide) keep any two spheres apart
    cell = 2.2 * R_MAX
    side = int((2 * half_width - 2 * R_MAX) // cell) + 1
    jitter = 0.5 * (cell - 2 * R_MAX)
    k = np.arange(count)
    layer, rest = divmod(k, side * side)
    i, j = divmod(rest, side)
    origin = -0.5 * (side - 1) * cell
    centres = np.stack([origin + i * cell, origin + j * cell, 0.2 + R_MAX + layer * cell], 1)
    centres[:, :2] += rng.uniform(-jitter, jitter, (count, 2))
    radii = rng.uniform(R_MIN, R_MAX, count)
    for n, (p, r) in enumerate(zip(centres, radii)):
        world.add_body(Sphere(float(r)), density=2500.0, position=p, friction=friction,
                       restitution=restitution, name=f"marble{n}")
