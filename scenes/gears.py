"""Couplings between joint coordinates: Featherstone's gamma_q example, an arm with
q2 = 2 sin q1, a gear pair and a rack and pinion."""
import numpy as np

from physics import Box, Coupling, Cylinder, Gear, Hinge, Plane, Slider

TITLE = "Gears and couplings"
DESCRIPTION = ("Seed 002's planar arm whose elbow follows q2 = 2 sin q1 (a Coupling) driven by a "
               "constant 1 N m shoulder torque, beside a 1:2 gear pair and a rack and pinion "
               "(Gear couplings) swung back and forth by a motor.")
PARAMS = {"torque": 1.0, "swing": 2.5, "drive_period": 4.0, "ratio": 2.0}
CAMERA = {"target": (0.0, 0.6, 0.5), "distance": 5.0, "yaw": -90, "pitch": 50}

ARM_HEIGHT = 1.0


def build(world, torque=1.0, swing=2.5, drive_period=4.0, ratio=2.0):
    """Seed 002's planar arm whose elbow follows q2 = 2 sin q1 (a Coupling), driven by a
    constant shoulder torque, beside a gear pair and a rack and pinion (Gear couplings)
    swung back and forth by a servo. Hinge angles count whole turns, so the gears may swing
    through more than half a turn; the rack's limits (+-0.5 m) stop the train beyond
    swing = 0.5 ratio / 0.15 rad.

    Parameters:
        torque (N m): the constant torque on the arm's first joint (the work it does,
            torque * q1, all becomes kinetic energy).
        swing (rad): the driving gear's swing, swing * sin(2 pi t / drive_period) (0 or
            more).
        drive_period (s): the time of one swing back and forth.
        ratio (-): the driven gear's radius over the driving gear's (it turns 1 / ratio as
            far, the other way).
    """
    if drive_period <= 0 or ratio <= 0:
        raise ValueError("drive_period and ratio must be positive")
    if not swing >= 0:
        raise ValueError(f"swing must be zero or positive (rad), got {swing}")
    world.add_body(Plane(), name="ground")
    z = (0.0, 0.0, 1.0)
    # -- Featherstone's gamma_q example: planar(2) with q2 = 2 sin q1, in a horizontal plane
    # (gravity along the axes)
    o = np.array([0.0, 0.0, ARM_HEIGHT])
    link1 = world.add_body(Box((0.5, 0.04, 0.04)), mass=1.0, position=o + (0.5, 0, 0), name="link1")
    link2 = world.add_body(Box((0.5, 0.04, 0.04)), mass=1.0, position=o + (1.5, 0, 0), name="link2")
    j1 = world.add_joint(Hinge(None, link1, anchor=o, axis=z, name="q1"))
    j2 = world.add_joint(Hinge(link1, link2, anchor=o + (1, 0, 0), axis=z, name="q2"))
    world.add_joint(Coupling([j1, j2], phi=lambda q: q[1] - 2 * np.sin(q[0]),
                             grad=lambda q: np.array([-2 * np.cos(q[0]), 1.0]),
                             hessian=lambda q: np.array([[2 * np.sin(q[0]), 0.0], [0.0, 0.0]]),
                             name="q2 = 2 sin q1"))
    # -- a gear pair: horizontal disks, pitch circles touching; the mesh is the Gear row
    r1, h = 0.2, 0.03
    r2 = ratio * r1
    c1 = np.array([-0.6, 1.2, 0.3])
    c2 = c1 + (r1 + r2, 0, 0)
    g1 = world.add_body(Cylinder(r1, h), density=7800.0, position=c1, name="gear_small")
    g2 = world.add_body(Cylinder(r2, h), density=7800.0, position=c2, name="gear_large")
    drive = world.add_joint(Hinge(None, g1, anchor=c1, axis=z, name="drive"))
    driven = world.add_joint(Hinge(None, g2, anchor=c2, axis=z, name="driven"))
    world.add_joint(Gear(drive, driven, -1.0 / ratio, name="mesh"))      # counter-rotating
    world.ignore_collision(g1, g2)
    # -- rack and pinion: a pinion turning with the large gear (a 1:1 coupling, as if on one
    # shaft) drives a rack along x (rack travel = pinion radius * angle)
    rp = 0.15
    cp = np.array([c2[0], c2[1] - r2 - 0.35, 0.3])
    pinion = world.add_body(Cylinder(rp, h), density=7800.0, position=cp, name="pinion")
    pin = world.add_joint(Hinge(None, pinion, anchor=cp, axis=z, name="pinion"))
    world.add_joint(Gear(driven, pin, 1.0, name="shaft"))      # turns with the large gear
    rack_c = cp + (0, -rp - 0.04, 0)
    rack = world.add_body(Box((0.6, 0.04, h)), density=7800.0, position=rack_c, name="rack")
    slide = world.add_joint(Slider(None, rack, anchor=rack_c, axis=(1, 0, 0), limits=(-0.5, 0.5),
                                   name="rack"))
    # the rack's contact point moves with the pinion's rim: a positive turn about z moves
    # the rim point at -y towards +x
    world.add_joint(Gear(pin, slide, rp, name="rack and pinion"))
    world.ignore_collision(pinion, rack)
    w = 2 * np.pi / drive_period

    def drive_and_push(world):
        link1.apply_torque((0.0, 0.0, torque))          # tau = [torque, 0] on joint 1 only
        t = world.time + world.dt
        # servo towards the next target, led by the damper's lag (rate * d / k)
        drive.set_servo(swing * (np.sin(w * t) + 0.05 * w * np.cos(w * t)), 400.0, 20.0, 200.0)

    drive_and_push.joints = {"q1": j1, "q2": j2, "drive": drive, "driven": driven,
                             "pinion": pin, "rack": slide}
    return drive_and_push
