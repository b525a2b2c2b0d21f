"""An arm wiping a whiteboard (the null-space projection's hybrid motion-force example): its
eraser is held on the board by a PointOnPlane constraint, and the joint torques come from the
constrained inverse dynamics of the arm's joint-space view, so that the eraser follows the
wiping path while the board pushes back with exactly the chosen force."""
import numpy as np

from physics import ArticulatedView, Box, Capsule, Cylinder, Fixed, Hinge, Plane, PointOnPlane
from physics.jointspace import apply_joint_torques

from scenes.humanoid import quat_from_z

TITLE = "Whiteboard"
DESCRIPTION = ("A three-joint arm (turret, shoulder, elbow) wipes a figure eight on a vertical "
               "board while pressing on it with 10 N: hybrid motion-force control by constrained "
               "inverse dynamics (null-space projection); a PointOnPlane constraint "
               "(frictionless, workless) keeps the eraser on the board and reports how hard "
               "it presses.")
PARAMS = {"width": 0.25, "height": 0.12, "period": 5.0, "press": 10.0, "stiffness": 400.0,
          "damping": 40.0}
CAMERA = {"target": (0.5, 0.0, 1.0), "distance": 3.0, "yaw": -140, "pitch": 15}

BASE = np.array([0.0, 0.0, 1.0])     # shoulder centre (m)
TURRET_HALF_HEIGHT = 0.04            # m: the turret, a cylinder centred on the shoulder
L1, L2 = 0.55, 0.55                  # upper arm, forearm (forearm ends at the eraser face)
BOARD_X = 0.8                        # the board's surface: the plane x = BOARD_X
NORMAL = np.array([-1.0, 0.0, 0.0])  # the board's normal, towards the arm
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
    """Where the eraser should be at time t: a figure eight on the board (``press`` metres
    behind its surface), its size ramped up smoothly over the first RAMP seconds."""
    u = np.clip(t / RAMP, 0.0, 1.0)
    a = u * u * (3 - 2 * u)
    ph = 2 * np.pi * t / period
    return np.array([BOARD_X + press, a * width * np.sin(ph), BASE[2] + a * height * np.sin(2 * ph)])


def wipe_motion(t, width, height, period):
    """(position, velocity, acceleration) (3,) each of the wiping path at time t."""
    w = 2 * np.pi / period
    ph = w * t
    if t < RAMP:
        u = max(t, 0.0) / RAMP
        a, da, dda = u * u * (3 - 2 * u), 6 * u * (1 - u) / RAMP, (6 - 12 * u) / RAMP**2
    else:
        a, da, dda = 1.0, 0.0, 0.0
    s1, c1, s2, c2 = np.sin(ph), np.cos(ph), np.sin(2 * ph), np.cos(2 * ph)
    y = (a * s1, da * s1 + a * w * c1, dda * s1 + 2 * da * w * c1 - a * w * w * s1)
    z = (a * s2, da * s2 + 2 * a * w * c2, dda * s2 + 4 * da * w * c2 - 4 * a * w * w * s2)
    return tuple(np.array([BOARD_X if k == 0 else 0.0, width * y[k], (BASE[2] if k == 0 else 0.0)
                           + height * z[k]]) for k in range(3))


class WipingController:
    """Hybrid motion-force control of the arm (null-space projection): every step, the joint
    accelerations that move the eraser tip along the path (acceleration of the path plus a PD
    term on the tracking error, in the board's plane) and keep it on the board, then the joint
    torques tau = M qdd + bias - A^T lambda of ``constrained_inverse_dynamics`` with the
    board's multiplier lambda = ``force``, applied to the bodies as joint torques for the next
    step.

    Attributes after each call: ``tracking_error`` (m, eraser tip to the path point),
    ``measured_force`` (N, the board's push reported by the constraint for the last step). Over
    the run so far: ``worst_path_error`` (m, the largest tracking error once the path's ramp is
    over, nan before), ``force_mean`` (N) and ``worst_force_error`` (relative to the commanded
    ``force``) of the measured forces; ``summary()`` gives them as text lines."""

    def __init__(self, view, contact, eraser, motion, force, stiffness, damping):
        self.view, self.contact, self.eraser, self.motion = view, contact, eraser, motion
        self.force, self.kp, self.kd = float(force), float(stiffness), float(damping)
        self.tangents = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])     # the board's plane
        self.tracking_error = 0.0
        self.measured_force = float("nan")
        self.worst_path_error = float("nan")
        self._force_sum, self._force_count = 0.0, 0
        self.worst_force_error = float("nan")
        self._measured_at = None          # world time of the last state measured

    @property
    def force_mean(self) -> float:
        return self._force_sum / self._force_count if self._force_count else float("nan")

    def _measure(self, world):
        """Tracking error and the board's force (of the step that ended) at the world's
        state, counted once per state in the run's figures. Returns the tip and the path's
        (position, velocity, acceleration) now."""
        tip = self.contact.anchor
        p, v, a = self.motion(world.time)
        self.tracking_error = float(np.linalg.norm(p - tip))
        stepped = world._report is not None
        if stepped:
            self.measured_force = float(self.contact.force @ NORMAL)
        if world.time != self._measured_at:
            self._measured_at = world.time
            if world.time >= RAMP - 1e-9:
                self.worst_path_error = np.fmax(self.worst_path_error, self.tracking_error)
            if stepped:
                self._force_sum += self.measured_force
                self._force_count += 1
                rel = abs(self.measured_force - self.force) / max(self.force, 1e-300)
                self.worst_force_error = np.fmax(self.worst_force_error, rel)
        return tip, p, v, a

    def summary(self):
        """(label, value) lines for ``maxcoord run``: what the scene shows, that the eraser
        stays on its path and presses with the commanded force."""
        self._measure(self.view.world)          # the end of the last step too
        path = (f"{self.worst_path_error * 1e3:.3f} mm max after the {RAMP:g} s ramp"
                if np.isfinite(self.worst_path_error) else f"- (the run ended in the {RAMP:g} s ramp)")
        if self._force_count:
            force = (f"{self.force_mean:.4f} N mean over {self._force_count} steps, worst "
                     f"{self.worst_force_error * 100:.2g} % off the {self.force:g} N command")
        else:
            force = "- (no step measured)"
        return [("eraser path error", path), ("eraser pressing force", force)]

    def __call__(self, world):
        view, eraser = self.view, self.eraser
        tip, p, v, a = self._measure(world)
        err = p - tip
        a_cmd = a + self.kd * (v - eraser.point_velocity(tip)) + self.kp * err
        Jt = view.point_jacobian(eraser, tip)
        jt = view.jacobian_dot_qd(eraser, tip)[:3]
        A, Adot_qd = view.constraint_rows()
        T = self.tangents
        qdd = np.linalg.solve(np.vstack([T @ Jt, A]), np.concatenate([T @ (a_cmd - jt), -Adot_qd]))
        lam = np.zeros(A.shape[0])
        lam[self.rows] = self.force
        tau = view.constrained_inverse_dynamics(qdd, lam=lam, check=False)
        apply_joint_torques(view, tau)


def build(world, width=0.25, height=0.12, period=5.0, press=10.0, stiffness=400.0,
          damping=40.0):
    """A three-joint arm (turret, shoulder, elbow) wiping a figure eight on a vertical board
    at x = 0.8 m while its eraser presses on it: hybrid motion-force control by constrained
    inverse dynamics; the figure grows from a point over the first 1 s.

    Parameters:
        width (m): half the figure eight's width, along the board (y).
        height (m): half the figure eight's height, up the board (z).
        period (s): the time of one figure eight.
        press (N): the force with which the eraser pushes on the board.
        stiffness (1/s^2): the stiffness of the PD term on the eraser's tracking error in
            the board's plane (an acceleration per metre of error).
        damping (1/s): the damping of that PD term (an acceleration per m/s of error).
    """
    if period <= 0 or stiffness < 0 or damping < 0 or press < 0:
        raise ValueError("need period > 0, stiffness >= 0, damping >= 0, press >= 0")
    world.add_body(Plane(), name="ground")
    board = world.add_body(Box((0.02, 0.6, 0.4)), static=True, position=(BOARD_X + 0.02, 0, 1.0),
                           friction=0.0, name="board")
    # the pillar reaches up to the turret's underside (it stopped 6 cm short: the turret
    # floated above it); the turret turns on it without touching it (no contact, no friction)
    top = BASE[2] - TURRET_HALF_HEIGHT
    pillar = world.add_body(Cylinder(0.08, top / 2), static=True, position=(0, 0, top / 2),
                            name="pillar")
    yaw0, el0, bend0 = inverse_kinematics(wipe_point(0.0, width, height, period))
    d = np.array([np.cos(yaw0), np.sin(yaw0), 0.0])
    pitch_axis = np.cross(d, (0.0, 0.0, 1.0))          # a positive turn raises the arm
    pitch_axis /= np.linalg.norm(pitch_axis)
    up1 = np.cos(el0) * d + np.sin(el0) * np.array([0, 0, 1.0])
    el2 = el0 + bend0
    up2 = np.cos(el2) * d + np.sin(el2) * np.array([0, 0, 1.0])
    elbow = BASE + L1 * up1
    tip = elbow + L2 * up2
    turret = world.add_body(Cylinder(0.07, TURRET_HALF_HEIGHT), mass=2.0, position=BASE,
                            name="turret")
    world.ignore_collision(turret, pillar)
    upper = world.add_body(Capsule(0.035, L1 / 2 - 0.035), mass=1.5, position=BASE + 0.5 * L1 * up1,
                           orientation=quat_from_z(up1), name="upper_arm")
    fore = world.add_body(Capsule(0.03, L2 / 2 - 0.06), mass=1.0,
                          position=elbow + 0.5 * (L2 - 0.06) * up2, orientation=quat_from_z(up2),
                          name="forearm")
    eraser = world.add_body(Box((0.05, 0.08, 0.03)), mass=0.2, position=tip - 0.03 * up2,
                            orientation=quat_from_z(up2), name="eraser")
    world.add_joint(Hinge(None, turret, anchor=BASE, axis=(0, 0, 1), name="turret"))
    world.add_joint(Hinge(turret, upper, anchor=BASE, axis=pitch_axis, name="shoulder"))
    world.add_joint(Hinge(upper, fore, anchor=elbow, axis=pitch_axis, name="elbow"))
    world.add_joint(Fixed(fore, eraser, anchor=tip - 0.03 * up2, name="eraser mount"))
    contact = world.add_joint(PointOnPlane(None, eraser, point=tip, normal=NORMAL,
                                           name="eraser on board"))
    for body in (eraser, fore, upper):
        world.ignore_collision(body, board)
    view = ArticulatedView(world)          # the hinges; the PointOnPlane closes the loop
    wipe = WipingController(view, contact, eraser,
                            lambda t: wipe_motion(t, width, height, period), press, stiffness,
                            damping)
    (c,) = [c for c in view.constraints if c.source is contact]
    wipe.rows = c.rows
    wipe.path = lambda t: wipe_point(t, width, height, period)
    return wipe
