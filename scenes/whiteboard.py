"""An arm wiping a whiteboard: its eraser is held on the board by a PointOnPlane constraint."""
import numpy as np

from physics import Box, Capsule, Cylinder, Fixed, Hinge, Plane, PointOnPlane

from scenes.humanoid import quat_from_z

TITLE = "Whiteboard"
DESCRIPTION = ("A three-joint arm (turret, shoulder, elbow; servos from inverse kinematics) wipes "
               "a figure eight on a vertical board; a PointOnPlane constraint (frictionless, "
               "workless) keeps the eraser on the board and reports how hard it presses.")
PARAMS = {"width": 0.25, "height": 0.12, "period": 5.0, "press": 0.003, "stiffness": 3000.0,
          "damping": 100.0}
CAMERA = {"target": (0.5, 0.0, 1.0), "distance": 3.0, "yaw": -140, "pitch": 15}

BASE = np.array([0.0, 0.0, 1.0])     # shoulder centre (m)
L1, L2 = 0.55, 0.55                  # upper arm, forearm (forearm ends at the eraser face)
BOARD_X = 0.8                        # the board's surface: the plane x = BOARD_X
RAMP = 1.0                           # s


def inverse_kinematics(p):
    """(yaw, shoulder elevation, elbow bend) putting the forearm tip at world point p (3,),
    elbow up. Elevation is measured up from the horizontal; the bend is the forearm's turn
    relative to the upper arm, positive upwards (so it is negative here)."""
    d = np.asarray(p, float) - BASE
    yaw = np.arctan2(d[1], d[0])
    rho, dz = np.hypot(d[0], d[1]), d[2]
    c = np.clip((rho**2 + dz**2 - L1**2 - L2**2) / (2 * L1 * L2), -1.0, 1.0)
    bend = -np.arccos(c)
    elevation = np.arctan2(dz, rho) - np.arctan2(L2 * np.sin(bend), L1 + L2 * np.cos(bend))
    return np.array([yaw, elevation, bend])


def wipe_point(t, width, height, period, press=0.0):
    """Where the eraser should be at time t: a figure eight on the board, ``press`` metres
    behind its surface (the arm pushes towards it; the constraint stops it)."""
    u = np.clip(t / RAMP, 0.0, 1.0)
    a = u * u * (3 - 2 * u)
    ph = 2 * np.pi * t / period
    return np.array([BOARD_X + press, a * width * np.sin(ph), BASE[2] + a * height * np.sin(2 * ph)])


def build(world, width=0.25, height=0.12, period=5.0, press=0.003, stiffness=3000.0,
          damping=100.0):
    """width, height: half sizes of the figure eight (m); period (s); press: how far behind
    the board surface the servos aim (m): the pressing force grows with it; stiffness
    (N m/rad) and damping (N m s/rad) of the three joint servos."""
    if period <= 0 or stiffness <= 0 or damping < 0 or press < 0:
        raise ValueError("need period > 0, stiffness > 0, damping >= 0, press >= 0")
    world.add_body(Plane(), name="ground")
    board = world.add_body(Box((0.02, 0.6, 0.4)), static=True, position=(BOARD_X + 0.02, 0, 1.0),
                           friction=0.0, name="board")
    world.add_body(Cylinder(0.08, BASE[2] / 2 - 0.05), static=True,
                   position=(0, 0, BASE[2] / 2 - 0.05), name="pillar")
    yaw0, el0, bend0 = inverse_kinematics(wipe_point(0.0, width, height, period))
    d = np.array([np.cos(yaw0), np.sin(yaw0), 0.0])
    pitch_axis = np.cross(d, (0.0, 0.0, 1.0))          # a positive turn raises the arm
    pitch_axis /= np.linalg.norm(pitch_axis)
    up1 = np.cos(el0) * d + np.sin(el0) * np.array([0, 0, 1.0])
    el2 = el0 + bend0
    up2 = np.cos(el2) * d + np.sin(el2) * np.array([0, 0, 1.0])
    elbow = BASE + L1 * up1
    tip = elbow + L2 * up2
    turret = world.add_body(Cylinder(0.07, 0.04), mass=2.0, position=BASE, name="turret")
    upper = world.add_body(Capsule(0.035, L1 / 2 - 0.035), mass=1.5, position=BASE + 0.5 * L1 * up1,
                           orientation=quat_from_z(up1), name="upper_arm")
    fore = world.add_body(Capsule(0.03, L2 / 2 - 0.06), mass=1.0,
                          position=elbow + 0.5 * (L2 - 0.06) * up2, orientation=quat_from_z(up2),
                          name="forearm")
    eraser = world.add_body(Box((0.05, 0.08, 0.03)), mass=0.2, position=tip - 0.03 * up2,
                            orientation=quat_from_z(up2), name="eraser")
    joints = [world.add_joint(Hinge(None, turret, anchor=BASE, axis=(0, 0, 1), name="turret")),
              world.add_joint(Hinge(turret, upper, anchor=BASE, axis=pitch_axis, name="shoulder")),
              world.add_joint(Hinge(upper, fore, anchor=elbow, axis=pitch_axis, name="elbow"))]
    world.add_joint(Fixed(fore, eraser, anchor=tip - 0.03 * up2, name="eraser mount"))
    contact = world.add_joint(PointOnPlane(None, eraser, point=tip, normal=(-1.0, 0.0, 0.0),
                                           name="eraser on board"))
    for body in (eraser, fore, upper):
        world.ignore_collision(body, board)
    start = np.array([yaw0, el0, bend0])
    lead = damping / stiffness

    def wipe(world):
        t, h = world.time, world.dt
        q1 = inverse_kinematics(wipe_point(t + h, width, height, period, press)) - start
        q2 = inverse_kinematics(wipe_point(t + 2 * h, width, height, period, press)) - start
        for joint, a, b in zip(joints, q1, q2):
            joint.set_servo(float(a + lead * (b - a) / h), stiffness, damping)

    wipe.contact = contact
    wipe.eraser = eraser
    wipe.path = lambda t: wipe_point(t, width, height, period)
    return wipe
