"""A Stewart platform: six servo-driven prismatic legs move a plate along a path."""
import numpy as np

from physics import Ball, Box, Capsule, Cylinder, Plane, Slider, Universal

from scenes.humanoid import quat_from_z

TITLE = "Stewart platform"
DESCRIPTION = ("A 6-UPS parallel robot: six two-body legs (universal joint at the base, servoed "
               "slider, ball joint at the plate) move the top plate around a circle while it "
               "tilts; leg lengths come from inverse kinematics every step.")
PARAMS = {"radius": 0.1, "tilt": 0.12, "period": 4.0, "height": 0.9, "stiffness": 4e5,
          "damping": 4e3}
CAMERA = {"target": (0.0, 0.0, 0.6), "distance": 3.2, "yaw": -70, "pitch": 20}

BASE_RADIUS, PLATE_RADIUS = 0.6, 0.35
BASE_ANGLES = np.radians([-15, 15, 105, 135, 225, 255])
PLATE_ANGLES = np.radians([-45, 45, 75, 165, 195, 285])
BASE_TOP = 0.1                 # m: top face of the base slab (the base joints sit there)
RAMP = 1.0                     # s: the path's amplitude grows from 0 over this time


def rotation(roll, pitch, yaw=0.0):
    """R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr, cp, sp, cy, sy = (np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch),
                              np.cos(yaw), np.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def base_points():
    """(6, 3) world positions of the base joints."""
    return np.stack([BASE_RADIUS * np.cos(BASE_ANGLES), BASE_RADIUS * np.sin(BASE_ANGLES),
                     np.full(6, BASE_TOP)], 1)


def plate_points():
    """(6, 3) plate joints in the plate frame (centre of the plate)."""
    return np.stack([PLATE_RADIUS * np.cos(PLATE_ANGLES), PLATE_RADIUS * np.sin(PLATE_ANGLES),
                     np.zeros(6)], 1)


def pose(t, radius, tilt, period, height):
    """Desired plate centre (3,) and rotation (3, 3) at time t: a horizontal circle of
    ``radius`` about the home point while the plate tilts by ``tilt`` towards the direction
    of travel; amplitude ramps up smoothly over the first RAMP seconds."""
    u = np.clip(t / RAMP, 0.0, 1.0)
    a = u * u * (3 - 2 * u)
    ph = 2 * np.pi * t / period
    centre = np.array([a * radius * np.cos(ph) - a * radius, a * radius * np.sin(ph),
                       height + 0.03 * a * np.sin(2 * ph)])
    return centre, rotation(a * tilt * np.sin(ph), -a * tilt * np.cos(ph))


def leg_lengths(centre, R):
    """(6,) distances base joint -> plate joint for the plate pose (inverse kinematics)."""
    return np.linalg.norm(centre + plate_points() @ R.T - base_points(), axis=1)


def build(world, radius=0.1, tilt=0.12, period=4.0, height=0.9, stiffness=4e5, damping=4e3):
    """A Stewart platform: a 20 kg plate on six legs (universal joint at the base, servoed
    slider, ball joint at the plate) moved around a horizontal circle while it tilts, the
    leg lengths from inverse kinematics every step; the path grows from rest over 1 s.

    Parameters:
        radius (m): the radius of the circle the plate's centre goes round.
        tilt (rad): how far the plate tilts towards its direction of travel.
        period (s): the time of one circle.
        height (m): the plate centre's height at home (above 0.4 m).
        stiffness (N/m): each leg servo's stiffness.
        damping (N s/m): each leg servo's damping.
    """
    if period <= 0 or height <= BASE_TOP + 0.3 or stiffness <= 0 or damping < 0:
        raise ValueError("need period > 0, height > 0.4 m, stiffness > 0, damping >= 0")
    world.add_body(Plane(), name="ground")
    base = world.add_body(Box((0.7, 0.7, BASE_TOP / 2)), static=True,
                          position=(0, 0, BASE_TOP / 2), name="base")
    home, R0 = pose(0.0, radius, tilt, period, height)
    plate = world.add_body(Cylinder(0.45, 0.025), mass=20.0, position=home, name="plate")
    B = base_points()
    P = home + plate_points() @ R0.T
    parts, sliders = [plate], []
    for i in range(6):
        d = P[i] - B[i]
        L = np.linalg.norm(d)
        u = d / L
        q = quat_from_z(u)
        # lower tube: from the base joint to 55 % of the leg; upper rod from 45 % to the plate
        lower = world.add_body(Capsule(0.03, 0.275 * L - 0.03), mass=1.0, orientation=q,
                               position=B[i] + 0.275 * L * u, name=f"leg{i}_lower")
        upper = world.add_body(Capsule(0.02, 0.275 * L - 0.02), mass=0.5, orientation=q,
                               position=P[i] - 0.275 * L * u, name=f"leg{i}_upper")
        across = np.cross(u, (0.0, 0.0, 1.0))
        across /= np.linalg.norm(across)
        world.add_joint(Universal(base, lower, anchor=B[i], axis_a=across,
                                  axis_b=np.cross(u, across), name=f"hip{i}"))
        s = world.add_joint(Slider(lower, upper, anchor=0.5 * (B[i] + P[i]), axis=u,
                                   limits=(-0.3 * L, 0.3 * L), name=f"actuator{i}"))
        world.add_joint(Ball(upper, plate, anchor=P[i], name=f"wrist{i}"))
        parts += [lower, upper]
        sliders.append(s)
    for i, a in enumerate(parts):          # the legs pass close to each other: no contacts
        for b in parts[i + 1:]:
            world.ignore_collision(a, b)
    L0 = leg_lengths(home, R0)
    lead = damping / stiffness     # the servo's damper lags by rate * d / k: lead the target

    def follow_path(world):
        t, h = world.time, world.dt
        c1, R1 = pose(t + h, radius, tilt, period, height)   # where the plate should be next
        c2, R2 = pose(t + 2 * h, radius, tilt, period, height)
        L1, L2 = leg_lengths(c1, R1), leg_lengths(c2, R2)
        target = L1 - L0 + lead * (L2 - L1) / h
        for s, x in zip(sliders, target):
            s.set_servo(float(x), stiffness, damping, 5000.0)

    follow_path.pose = lambda t: pose(t, radius, tilt, period, height)
    follow_path.plate = plate
    return follow_path
