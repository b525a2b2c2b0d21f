"""A pyramid of boxes on the ground (stacking stability), then a heavy ball rolls into its foot:
a small pyramid (base 3) scatters, the 3.4 t one of base 10 is shoved along as one block."""
from physics import Box, Plane, Sphere

TITLE = "Box pyramid"
DESCRIPTION = ("A 2D pyramid of cubes (base 10: 55 boxes) resting on the ground, friction 0.6; "
               "at shot_time a heavy ball rolls into its foot, scattering a small pyramid and "
               "shoving a big one (shot_speed=0: it only stands).")
PARAMS = {"base": 10, "size": 0.5, "friction": 0.6, "gap": 0.02, "shot_speed": 8.0,
          "shot_time": 1.0}
CAMERA = {"target": (0.0, 0.0, 2.0), "distance": 10.0, "yaw": -90, "pitch": 15}


def build(world, base=10, size=0.5, friction=0.6, gap=0.02, shot_speed=8.0, shot_time=1.0):
    """A 2D pyramid of cubes (500 kg/m^3) on the ground, and a ball (radius 0.6 size, 2000
    kg/m^3) at rest on the -x side that is set rolling into the pyramid's foot.

    Parameters:
        base (count): cubes in the bottom row, 1 to 40 (base 10: 55 cubes).
        size (m): each cube's edge.
        friction (-): Coulomb friction coefficient of the cubes, the ball and the ground.
        gap (m): horizontal gap between neighbouring cubes in a row.
        shot_speed (m/s): the speed the ball is given, rolling along +x (0: no shot, the
            pyramid only stands).
        shot_time (s): when the ball is set rolling.
    """
    base = int(base)
    if not 1 <= base <= 40:
        raise ValueError(f"base must be from 1 to 40, got {base}")
    if size <= 0 or gap < 0:
        raise ValueError(f"need size > 0 and gap >= 0, got size={size}, gap={gap}")
    world.add_body(Plane(), friction=friction, name="ground")
    h = 0.5 * size
    pitch = size + gap
    for row in range(base):
        n = base - row
        z = h + row * (size + 1e-4)           # a hair above the layer below: no start overlap
        for i in range(n):
            x = (i - 0.5 * (n - 1)) * pitch
            world.add_body(Box((h, h, h)), density=500.0, position=(x, 0.0, z),
                           friction=friction, name=f"box{row}_{i}")
    r = 0.6 * size
    ball = world.add_body(Sphere(r), density=2000.0, friction=friction, name="ball",
                          position=(-0.5 * base * pitch - 2.0 - r, 0.0, r))
    if shot_speed <= 0:
        return None
    fired = []

    def shoot(world):
        if not fired and world.time >= shot_time - 1e-9:
            fired.append(True)
            ball.linear_velocity = (shot_speed, 0.0, 0.0)
            ball.angular_velocity = (0.0, shot_speed / r, 0.0)     # rolling
    return shoot
