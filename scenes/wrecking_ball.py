"""A wrecking ball on a rope swung into a wall of boxes, then reeled in by a winch."""
import numpy as np

from physics import Box, Distance, Plane, Sphere

TITLE = "Wrecking ball"
DESCRIPTION = ("A heavy ball on a rope (a Distance joint with limits: it pulls, never pushes) "
               "swings from a jib into a wall of boxes; then a winch (the rope's motor) reels "
               "it up.")
PARAMS = {"rope_length": 5.0, "ball_mass": 300.0, "angle": 0.9, "rows": 6, "columns": 4,
          "winch_time": 3.0, "winch_speed": 1.0}
CAMERA = {"target": (0.0, 0.0, 2.5), "distance": 12.0, "yaw": -135, "pitch": 10}

RADIUS = 0.4        # m, the ball's
CLEARANCE = 0.2     # m, the ball's lowest point above the ground at the bottom of its swing
BRICK = 0.25        # m, half the edge of a wall's box
BRICK_MASS = 20.0   # kg
WINCH_FORCE = 5.0   # the winch's largest pull, in ball weights
SHORTEST = 1.0      # m, the rope's least length (the winch stops there)


def build(world, rope_length=5.0, ball_mass=300.0, angle=0.9, rows=6, columns=4,
          winch_time=3.0, winch_speed=1.0):
    """A jib (static) holds a rope whose end carries a steel ball 0.4 m in radius, released
    taut at ``angle`` from hanging straight down; at the bottom of its swing it meets a wall
    of 0.5 m boxes (20 kg) standing across its path. From ``winch_time`` the winch reels the
    rope in at ``winch_speed`` with up to five times the ball's weight, to 1 m.

    Parameters:
        rope_length (m): the rope's length, jib to the ball's centre (more than 1,
            the winch's stop, to 20).
        ball_mass (kg): the ball's mass (above 0).
        angle (rad): the release angle from hanging straight down (0 to 1.5).
        rows (count): the wall's height in boxes (0 to 12).
        columns (count): the wall's width in boxes (1 to 12).
        winch_time (s): when the winch starts reeling in (inf: never).
        winch_speed (m/s): how fast it reels in (0 to 5).
    """
    rows, columns = int(rows), int(columns)
    if not SHORTEST < rope_length <= 20.0:      # (the rope's limits need shortest < longest)
        raise ValueError(f"rope_length must be more than {SHORTEST:g} m (the winch's stop) "
                         f"and at most 20 m, got {rope_length}")
    if not ball_mass > 0:
        raise ValueError(f"ball_mass must be above 0 kg, got {ball_mass}")
    if not 0.0 <= angle <= 1.5:
        raise ValueError(f"angle must be from 0 to 1.5 rad, got {angle}")
    if not 0 <= rows <= 12 or not 1 <= columns <= 12:
        raise ValueError(f"rows must be from 0 to 12 and columns from 1 to 12, got {rows} "
                         f"and {columns}")
    if not 0.0 <= winch_speed <= 5.0 or np.isnan(winch_time):
        raise ValueError(f"winch_speed must be from 0 to 5 m/s and winch_time a time, got "
                         f"{winch_speed} and {winch_time}")
    world.add_body(Plane(), name="ground")
    jib = np.array([0.0, 0.0, CLEARANCE + RADIUS + rope_length])
    world.add_body(Box((0.3, 0.3, 0.15)), static=True, position=jib + (0, 0, 0.15), name="jib")
    start = jib + rope_length * np.array([-np.sin(angle), 0.0, -np.cos(angle)])
    ball = world.add_body(Sphere(RADIUS), mass=ball_mass, position=start, friction=0.4,
                          name="ball")
    rope = world.add_joint(Distance(None, ball, anchor_a=jib, anchor_b=start,
                                    limits=(SHORTEST, rope_length), name="rope"))
    face = RADIUS + 0.05            # the wall's face, just past the ball at rest
    for row in range(rows):
        for column in range(columns):
            y = (column - (columns - 1) / 2) * 2 * BRICK + (BRICK if row % 2 else 0.0)
            world.add_body(Box((BRICK, BRICK, BRICK)), mass=BRICK_MASS, friction=0.6,
                           position=(face + BRICK, y, BRICK + 2 * BRICK * row),
                           name=f"brick{row}_{column}")
    return Winch(rope, ball, winch_time, winch_speed)


class Winch:
    """Reels the rope in from ``start`` (s) at ``speed`` (m/s), with up to WINCH_FORCE ball
    weights; keeps the rope's largest tension and the ball's largest speed for
    ``summary()``."""

    def __init__(self, rope, ball, start, speed):
        self.rope, self.ball, self.start, self.speed = rope, ball, start, speed
        self.most_tension, self.fastest, self.reeling = 0.0, 0.0, False

    def __call__(self, world):
        self.most_tension = max(self.most_tension, -self.rope.limit_effort - self.rope.motor_effort)
        self.fastest = max(self.fastest, float(np.linalg.norm(self.ball.linear_velocity)))
        if world.time >= self.start and not self.reeling and self.speed > 0:
            force = WINCH_FORCE * self.ball.mass * np.linalg.norm(world.gravity)
            self.rope.set_motor(velocity=-self.speed, max_force=force)
            self.reeling = True

    def summary(self):
        return [("ball's top speed", f"{self.fastest:.2f} m/s"),
                ("rope's top tension", f"{self.most_tension / 1000:.2f} kN"),
                ("rope's length now", f"{self.rope.distance:.2f} m")]
