"""Joint coordinates of the tree joints of an ``ArticulatedView``.

Every tree joint relates body_b to body_a (whichever of the two is the parent in the tree) by

    R_a^T R_b = relative rotation (expressed in body_a's frame), a function of q_j,
    anchor of b - anchor of a = R_a (s axis_a)            (translation, sliders only),

and its velocity variables qd_j by the relative twist of b over a at the anchor p of body_b
(a material point of b, world frame):

    w_b - w_a               = Sw qd_j
    v_b(p) - v_a(p)         = Sv qd_j          v_X(p) = v_X + w_X x (p - x_X)

with Sw, Sv (3, dof) world-frame columns, each carried by body a or body b. Differentiating
once more (p moves with b):

    wdot_b - wdot_a         = Sw qdd_j + kw,   kw = sum_c (w_carrier(c) x Sw_c) qd_c
    A_b(p) - A_a(p)         = Sv qdd_j + kv,   kv = sum_c (w_carrier(c) x Sv_c) qd_c + w_a x Sv qd_j

where A_X(p) = a_X + wdot_X x r + w_X x (w_X x r), r = p - x_X, is the acceleration of the
material point of X at p. These two relations are all the recursions of the view need.

Coordinates per joint type (q_j; qd_j):

- Hinge: the angle (``Hinge.angle``); its rate (``Hinge.rate``).
- Slider: the position (``Slider.position``); its rate (``Slider.rate``).
- Cylindrical: (angle, position) as for a hinge and a slider on the same axis.
- Ball: the rotation vector phi (rad, body_a frame) of the relative rotation since the view was
  created: R_a^T R_b = exp([phi]x) R_ref. qd_j is the relative angular velocity
  R_a^T (w_b - w_a) in body_a's frame (not dphi/dt: dphi/dt = J_l(phi)^-1 qd_j, see
  ``ArticulatedView.q_rate``).
- Universal: (theta1, theta2): R_a^T R_b = Rot(axis_a, theta1) R_ref Rot(axis_b, theta2), zero
  when the view was created; w_b - w_a = theta1' axis_a + theta2' axis_b (world directions,
  axis_a carried by body_a, axis_b by body_b).
- Fixed: no coordinates (a weld inside the tree), relative pose as when the view was created.
- RotationLock: the translation of body_b's centre (where the lock's anchor is) from where it
  was when the lock was made, in body_a's frame (m); qd_j its rate in that frame. With an
  axis, first the angle about it (rad, zero at creation, in (-pi, pi]: not a continuous
  angle, which the world keeps for hinges alone), then that translation: (angle, x, y, z).
  The relative rotation is the lock's own (as at its creation), turned by the angle.
- Floating base (``FloatingBase``: no engine joint; 6 DOF between the world frame and a free
  base body): (x, y, z, phi) with (x, y, z) the base's centre of mass in the world frame (m)
  and phi the rotation vector (rad, world frame) of its rotation since the view was created,
  R_base = exp([phi]x) R_ref, as a Ball joint whose body_a is the world. qd_j is (v, w): the
  velocity of the base's centre of mass and its angular velocity, both in the world frame
  (the engine's u = [v; w] of the base). dphi/dt = J_l(phi)^-1 w as for a ball; phi read
  from the pose has |phi| <= pi.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from ..joints import Ball, Cylindrical, Fixed, Hinge, RotationLock, Slider, Universal


def cross3(a, b) -> np.ndarray:
    """a x b for two 3-vectors (np.cross is slow for single vectors)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def skew(r: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix by ``angle`` about the unit ``axis`` (Rodrigues)."""
    K = skew(axis)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def exp_so3(phi: np.ndarray) -> np.ndarray:
    return Rotation.from_rotvec(phi).as_matrix()


def log_so3(R: np.ndarray) -> np.ndarray:
    return Rotation.from_matrix(R).as_rotvec()


def left_jacobian(phi: np.ndarray) -> np.ndarray:
    """J_l(phi): d/dt exp([phi]x) = [J_l(phi) phidot]x exp([phi]x)."""
    t = float(np.linalg.norm(phi))
    K = skew(phi)
    if t < 1e-6:
        return np.eye(3) + 0.5 * K + K @ K / 6.0
    return (np.eye(3) + (1.0 - np.cos(t)) / t**2 * K + (t - np.sin(t)) / t**3 * (K @ K))


def left_jacobian_inverse(phi: np.ndarray) -> np.ndarray:
    t = float(np.linalg.norm(phi))
    K = skew(phi)
    if t < 1e-6:
        return np.eye(3) - 0.5 * K + K @ K / 12.0
    c = 1.0 / t**2 - (1.0 + np.cos(t)) / (2.0 * t * np.sin(t))
    return np.eye(3) - 0.5 * K + c * (K @ K)


def _signed_angle(u, v, axis):
    """Angle turning unit vector u into v about ``axis`` (right-handed), in (-pi, pi]."""
    return float(np.arctan2(axis @ cross3(u, v), u @ v))


def _locked_rotation(lock) -> np.ndarray:
    """R_a^T R_b that a RotationLock's rows hold (``Joint._lock``: pairs of body_a's axis i and
    body_b's axis i + 1 as each body saw them at creation)."""
    Ra_T = np.column_stack([ua for ua, _ in lock])          # columns R_a^T e_i
    Rb_T = np.column_stack([lock[i - 1][1] for i in range(3)])   # columns R_b^T e_i
    return Ra_T @ Rb_T.T


class FloatingBase:
    """The 6-DOF tree joint of an ``ArticulatedView`` between the world frame (body_a = None)
    and a free base body (body_b); the engine has no joint there, so nothing in the world's
    rows holds it. Its coordinates are the base's centre of mass and rotation vector, world
    frame (see the module docstring)."""

    _la = _lb = (0.0, 0.0, 0.0)          # anchors: the world origin and the base's centre
    _rows_a = 0
    body_a = None

    def __init__(self, body):
        self.body_b = body

    @property
    def body(self):
        """The base body."""
        return self.body_b

    def __repr__(self):
        return f"<FloatingBase {self.body_b!r}>"


class TreeJoint:
    """One joint of the tree: its coordinate slice, tree direction and kinematic model.

    ``forward`` is True when body_a is the parent (the usual case) and False when body_b is
    the parent and body_a the child. ``a``, ``b``: rows in the world's arrays (0 = world).
    ``Ra0``, ``Rb0``: orientations of a and b when the view was created (the reference of
    ball, universal and fixed joints)."""

    KINDS = ((Hinge, "hinge", 1), (Slider, "slider", 1), (Cylindrical, "cylindrical", 2),
             (Ball, "ball", 3), (Universal, "universal", 2), (Fixed, "fixed", 0),
             (RotationLock, "lock", 3), (FloatingBase, "free", 6))

    def __init__(self, joint, forward: bool, start: int, Ra0: np.ndarray, Rb0: np.ndarray):
        for cls, kind, dof in self.KINDS:
            if type(joint) is cls:
                break
        else:
            raise ValueError(f"{joint!r} cannot be a tree joint of an ArticulatedView "
                             "(hinge, slider, cylindrical, ball, universal, fixed or "
                             "rotation lock; or a FloatingBase)")
        if kind == "lock" and joint.axis is not None:
            kind, dof = "axis_lock", 4        # its angle about the axis, then the translation
        self.joint, self.kind, self.dof = joint, kind, dof
        self.forward = forward
        self.sign = 1.0 if forward else -1.0
        self.start = start
        self.slice = slice(start, start + dof)
        self.a = joint._rows_a
        self.b = joint.body_b.row
        self.parent, self.child = (self.a, self.b) if forward else (self.b, self.a)
        self.la = np.array(joint._la, dtype=float)
        self.lb = np.array(joint._lb, dtype=float)
        if kind in ("hinge", "slider", "cylindrical", "axis_lock"):
            pa0, pa1 = (np.asarray(p, float) for p in joint._perp_a)
            pb0, pb1 = (np.asarray(p, float) for p in joint._perp_b)
            self.axis_a = np.cross(pa0, pa1)
            self.perp_a = pa0
            Fa = np.column_stack([self.axis_a, pa0, pa1])
            Fb = np.column_stack([np.cross(pb0, pb1), pb0, pb1])
            self.R_ref = Fa @ Fb.T            # R_a^T R_b at zero angle (as at creation)
        elif kind == "lock":
            self.R_ref = _locked_rotation(joint._lock)
        else:
            self.R_ref = Ra0.T @ Rb0
        if kind == "universal":
            self.u_a = np.asarray(joint._ua, float)
            self.v_b = np.asarray(joint._vb, float)
            self.v_ref = self.R_ref @ self.v_b          # axis_b in a's frame at zero
            self.u_ref = self.R_ref.T @ self.u_a        # axis_a in b's frame at zero

    def attached(self, world) -> bool:
        """Whether the joint (or a floating base's body) is still in ``world``."""
        if self.kind == "free":
            return self.joint.body_b._world is world and self.joint.body_b._row >= 0
        return self.joint._world is world and self.joint._index >= 0

    # -- position level ------------------------------------------------------------------
    def relative_rotation(self, qj: np.ndarray) -> np.ndarray:
        """R_a^T R_b for coordinates qj."""
        k = self.kind
        if k in ("hinge", "cylindrical", "axis_lock"):
            return axis_rotation(self.axis_a, qj[0]) @ self.R_ref
        if k == "ball":
            return exp_so3(qj) @ self.R_ref
        if k == "free":
            return exp_so3(qj[3:]) @ self.R_ref
        if k == "universal":
            return axis_rotation(self.u_a, qj[0]) @ self.R_ref @ axis_rotation(self.v_b, qj[1])
        return self.R_ref                              # slider, fixed, lock

    def translation(self, qj: np.ndarray) -> np.ndarray:
        """Anchor of b minus anchor of a, in a's frame."""
        if self.kind == "slider":
            return qj[0] * self.axis_a
        if self.kind == "cylindrical":
            return qj[1] * self.axis_a
        if self.kind in ("lock", "axis_lock"):
            return qj[-3:].copy()
        if self.kind == "free":
            return qj[:3].copy()
        return np.zeros(3)

    def coordinates(self, xa, Ra, xb, Rb) -> np.ndarray:
        """q_j from the poses of a and b (the inverse of the two maps above)."""
        k = self.kind
        Rrel = Ra.T @ Rb
        if k in ("lock", "axis_lock"):
            sep = Ra.T @ (xb + Rb @ self.lb - xa - Ra @ self.la)
            if k == "lock":
                return sep
            angle = _signed_angle(self.perp_a, Rrel @ self.R_ref.T @ self.perp_a, self.axis_a)
            return np.concatenate([[angle], sep])
        if k in ("hinge", "slider", "cylindrical"):
            sep = Ra.T @ (xb + Rb @ self.lb - xa - Ra @ self.la)
            angle = _signed_angle(self.perp_a, Rrel @ self.R_ref.T @ self.perp_a, self.axis_a)
            if k == "hinge":
                return np.array([angle])
            if k == "slider":
                return np.array([sep @ self.axis_a])
            return np.array([angle, sep @ self.axis_a])
        if k == "ball":
            return log_so3(Rrel @ self.R_ref.T)
        if k == "free":            # (the world frame is body_a: Ra = 1, xa = 0)
            return np.concatenate([Ra.T @ (xb - xa), log_so3(Rrel @ self.R_ref.T)])
        if k == "universal":
            t1 = _signed_angle(self.v_ref, Rrel @ self.v_b, self.u_a)
            t2 = -_signed_angle(self.u_ref, Rrel.T @ self.u_a, self.v_b)
            return np.array([t1, t2])
        return np.zeros(0)

    def q_rate(self, qj: np.ndarray, qdj: np.ndarray) -> np.ndarray:
        """dq_j/dt from the velocity variables (differs from qd_j only for the rotation
        vectors of balls and floating bases)."""
        if self.kind in ("ball", "free"):
            return self.qd_to_qdot_matrix(qj) @ qdj
        return qdj

    def qd_to_qdot_matrix(self, qj):
        if self.kind == "ball":
            return left_jacobian_inverse(qj)
        N = np.eye(self.dof)
        if self.kind == "free":
            N[3:, 3:] = left_jacobian_inverse(qj[3:])
        return N

    # -- velocity level ------------------------------------------------------------------
    def motion(self, Ra, Rb):
        """(Sv, Sw, carriers): world columns (3, dof) and for each column whether it is
        carried by body a (True) or body b (False)."""
        k = self.kind
        z = np.zeros((3, self.dof))
        if k == "hinge":
            return z, (Ra @ self.axis_a)[:, None], (True,)
        if k == "slider":
            return (Ra @ self.axis_a)[:, None], z, (True,)
        if k == "cylindrical":
            ax = Ra @ self.axis_a
            return np.column_stack([np.zeros(3), ax]), np.column_stack([ax, np.zeros(3)]), (True, True)
        if k == "ball":
            return z, Ra.copy(), (True, True, True)
        if k == "free":
            return np.column_stack([Ra, z[:, 3:]]), np.column_stack([z[:, :3], Ra]), (True,) * 6
        if k == "universal":
            return z, np.column_stack([Ra @ self.u_a, Rb @ self.v_b]), (True, False)
        if k == "lock":             # body_a's axes, which the translation is measured along
            return Ra.copy(), z, (True, True, True)
        if k == "axis_lock":
            z[:, 0] = Ra @ self.axis_a
            return np.column_stack([np.zeros(3), Ra]), z, (True,) * 4
        return z, z, ()

    def velocity_products(self, Ra, Rb, wa, wb, qdj):
        """(kv, kw): the parts of the relative accelerations that are not S qdd (see the
        module docstring)."""
        Sv, Sw, carriers = self.motion(Ra, Rb)
        kw = np.zeros(3)
        kv = np.zeros(3)
        for c, on_a in enumerate(carriers):
            wc = wa if on_a else wb
            kw += cross3(wc, Sw[:, c]) * qdj[c]
            kv += cross3(wc, Sv[:, c]) * qdj[c]
        kv += cross3(wa, Sv @ qdj)
        return kv, kw
