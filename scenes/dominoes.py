"""A curved line of dominoes toppling one after another."""
import numpy as np

from physics import Box, Plane

TITLE = "Dominoes"
DESCRIPTION = "50 thin boxes standing along a spiral arc; the first is tipped and they fall in turn."
PARAMS = {"count": 50, "height": 0.4, "spacing": 0.22, "radius": 1.2, "growth": 0.25,
          "tip": 3.0, "friction": 0.5}
CAMERA = {"target": (0.0, 0.0, 0.0), "distance": 9.0, "yaw": -90, "pitch": 55}


def layout(count, spacing, radius, growth):
    """Base centres (count, 2) and unit tangents (count, 2) along the spiral
    r = radius + growth * theta, spaced ``spacing`` apart along the curve (outwards)."""
    theta = np.linspace(0.0, 60.0, 60001)
    r = radius + growth * theta
    xy = np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1)
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(xy, axis=0), axis=1))])
    want = spacing * np.arange(count)
    if want[-1] > s[-1]:
        raise ValueError("the dominoes do not fit on the spiral; lower count or spacing")
    th = np.interp(want, s, theta)
    r = radius + growth * th
    p = np.stack([r * np.cos(th), r * np.sin(th)], axis=1)
    t = np.stack([growth * np.cos(th) - r * np.sin(th), growth * np.sin(th) + r * np.cos(th)], 1)
    return p, t / np.linalg.norm(t, axis=1, keepdims=True)


def build(world, count=50, height=0.4, spacing=0.22, radius=1.2, growth=0.25, tip=3.0,
          friction=0.5):
    """Dominoes (700 kg/m^3) standing along the spiral r = radius + growth * theta, the
    first tipped over onto the next.

    Parameters:
        count (count): how many dominoes (1 to 1000).
        height (m): each domino's height (width 0.5 height, thickness 0.15 height).
        spacing (m): distance between neighbours, along the curve.
        radius (m): the spiral's radius where it starts (theta = 0).
        growth (m/rad): how fast the spiral's radius grows with the angle theta.
        tip (rad/s): the angular speed given to the first domino, about its front bottom
            edge.
        friction (-): Coulomb friction coefficient of the dominoes and the ground.
    """
    count = int(count)
    if not 1 <= count <= 1000:
        raise ValueError(f"count must be from 1 to 1000, got {count}")
    if height <= 0 or spacing <= 0.15 * height:
        raise ValueError(f"need height > 0 and spacing > the thickness 0.15*height, got "
                         f"height={height}, spacing={spacing}")
    world.add_body(Plane(), friction=friction, name="ground")
    half = np.array([0.075, 0.25, 0.5]) * height          # thickness along the curve
    centres, tangents = layout(count, spacing, radius, growth)
    dominoes = []
    for i, ((x, y), (tx, ty)) in enumerate(zip(centres, tangents)):
        yaw = np.arctan2(ty, tx)
        q = (np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2))
        dominoes.append(world.add_body(Box(tuple(half)), density=700.0, position=(x, y, half[2]),
                                       orientation=q, friction=friction, name=f"domino{i}"))
    # tip the first one forward about its front bottom edge
    t = np.array([*tangents[0], 0.0])
    axis = np.cross((0.0, 0.0, 1.0), t)
    edge = np.array([*centres[0], 0.0]) + half[0] * t
    omega = tip * axis
    first = dominoes[0]
    first.angular_velocity = omega
    first.linear_velocity = np.cross(omega, first.position - edge)
