"""Newton's cradle: steel balls on V-shaped strings, the first ones lifted and released."""
import numpy as np

from physics import Box, Distance, Plane, Sphere

TITLE = "Newton's cradle"
DESCRIPTION = ("Five steel balls hung on V strings (Distance joints) with 0.1 % gaps; the lifted "
               "ones swing in and the momentum passes ball by ball.")
PARAMS = {"count": 5, "lifted": 1, "angle": 0.5, "radius": 0.025, "length": 0.2}
CAMERA = {"target": (0.0, 0.0, 0.2), "distance": 0.9, "yaw": -90, "pitch": 10}

STEEL = 7850.0      # kg/m^3


def build(world, count=5, lifted=1, angle=0.5, radius=0.025, length=0.2):
    """Steel balls (7850 kg/m^3, restitution 1, no friction) each hung from a frame by
    two strings (Distance joints) in a V, in a row with 0.1 % gaps.

    Parameters:
        count (count): how many balls (2 to 50).
        lifted (count): how many balls at the -x end are pulled out and released (0 to
            count - 1).
        angle (rad): how far the lifted balls are swung out.
        radius (m): each ball's radius.
        length (m): the vertical drop from the frame to the ball centres.
    """
    count, lifted = int(count), int(lifted)
    if not 2 <= count <= 50:
        raise ValueError(f"count must be from 2 to 50, got {count}")
    if not 0 <= lifted < count:
        raise ValueError(f"lifted must be between 0 and count - 1 = {count - 1}, got {lifted}")
    if radius <= 0 or length <= radius:
        raise ValueError(f"need 0 < radius < length, got radius={radius}, length={length}")
    world.add_body(Plane(), name="ground")
    gap = 0.001 * 2 * radius                    # 0.1 % of the diameter
    pitch = 2 * radius + gap
    top = length + 2 * radius                   # frame height above the ground (z)
    spread = 0.6 * length                       # half the distance between a V's two anchors
    # the frame (static, no collisions with the balls: it is above them)
    world.add_body(Box((0.5 * count * pitch + radius, spread, 0.004)), static=True,
                   position=(0, 0, top + 0.004), name="frame")
    x0 = -0.5 * (count - 1) * pitch
    balls = []
    for i in range(count):
        pivot = np.array([x0 + i * pitch, 0.0, top])
        # the V hangs the ball a vertical distance `length` below the frame; it swings
        # about the line through its two anchors (parallel to y)
        th = -angle if i < lifted else 0.0
        centre = pivot + length * np.array([np.sin(th), 0.0, -np.cos(th)])
        ball = world.add_body(Sphere(radius), density=STEEL, position=centre, friction=0.0,
                              restitution=1.0, name=f"ball{i + 1}")
        for side in (-1.0, 1.0):
            world.add_joint(Distance(None, ball, anchor_a=pivot + (0, side * spread, 0),
                                     anchor_b=centre))
        balls.append(ball)
