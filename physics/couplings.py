"""Constraints built from other joints' coordinates, and a point held on a plane.

``Coupling(joints, phi, grad, hessian=None)`` keeps phi(q) = 0, where q are the coordinates
of hinges (angle) and sliders (position), e.g. the example of seed 002: q2 - 2 sin q1 = 0.
Its single row is sum_k dphi/dq_k times joint k's rate row, so it acts on the bodies of the
coupled joints; it may move at most two bodies (the others must be static or the world).
``Gear(j1, j2, ratio)`` is the linear case q2 = ratio * q1.

``PointOnPlane(body_a, body_b, point, normal)`` keeps a point of body_b on a plane fixed in
body_a (None: the world): a pen on paper, an eraser on a whiteboard.

Couplings carry user functions, so their rows are evaluated coupling by coupling (they are
few); everything else in the step stays vectorised.
"""
from __future__ import annotations

import numpy as np

from .joints import Hinge, Joint, Slider
from .math3d import cross, dot
from .rows import Kinematics, Rows, line_rows
from .validation import check_unit_direction, check_vector


class PointOnPlane(Joint):
    """A point of body_b (world ``point`` at creation) stays on the plane through that point
    with world ``normal`` at creation, carried by body_a (1 row; force along the normal)."""

    def __init__(self, body_a, body_b, point, normal, name=None):
        super().__init__(body_a, body_b, check_vector("point", point, 3), name)
        self._normal_world = check_unit_direction("normal", normal)

    def _bind(self, world):
        super()._bind(world)
        self._na = self._local_vector(self.body_a, self._normal_world)

    def _instances(self, owner):
        return [self._line(owner, self._na)]

    @property
    def distance(self) -> float:
        """Signed distance of the point from the plane, m."""
        xa, ra = self._frame(self.body_a)
        return float((self.anchor - (xa + ra @ self._la)) @ (ra @ self._na))


class Coupling(Joint):
    """phi(q) = 0 on the coordinates q of ``joints`` (hinge angles in rad, continuous over
    whole turns, slider positions in m, each zero at its joint's creation).

    phi(q) -> float, grad(q) -> (k,) and optionally hessian(q) -> (k, k) (otherwise it is
    taken by central differences of grad along q-dot).
    """

    def __init__(self, joints, phi, grad, hessian=None, name=None):
        joints = list(joints)
        if not joints or not all(isinstance(j, (Hinge, Slider)) for j in joints):
            raise ValueError("joints must be a non-empty list of Hinge and Slider joints")
        for label, fn in (("phi", phi), ("grad", grad)):
            if not callable(fn):
                raise ValueError(f"{label} must be a function of the coordinates q")
        bodies = []
        for j in joints:
            for body in (j.body_a, j.body_b):
                if body is not None and not body.static and body not in bodies:
                    bodies.append(body)
        if len(bodies) > 2:
            raise ValueError(f"a coupling may move at most two bodies; {joints} move {len(bodies)}")
        if not bodies:
            raise ValueError("the coupled joints move no body")
        body_a = bodies[0] if len(bodies) == 2 else None
        super().__init__(body_a, bodies[-1], anchor=bodies[-1].position, name=name)
        self.coupled = joints
        self.phi, self.grad, self.hessian = phi, grad, hessian

    def _bind(self, world):
        for j in self.coupled:
            if j._world is not world:
                raise ValueError(f"{j!r} must be added to the world before the coupling")
        super()._bind(world)

    def _instances(self, owner):
        return [("coupling", (owner, self._rows_a, self.body_b.row, self))]

    @property
    def q(self) -> np.ndarray:
        return np.array([j.angle if isinstance(j, Hinge) else j.position for j in self.coupled])

    @property
    def error(self) -> float:
        return float(self.phi(self.q))

    def _evaluate(self, k: Kinematics) -> Rows:
        """The coupling's row at kinematics k."""
        q, qd, Jk, jdu = [], [], [], []
        for j in self.coupled:
            value, rate_rows, Jdu = _coordinate(j, k)
            q.append(value)
            qd.append(rate_rows.velocity(k.v, k.w)[0])
            Jk.append(rate_rows)
            jdu.append(Jdu)
        q, qd = np.array(q), np.array(qd)
        g = np.asarray(self.grad(q), dtype=float)
        if self.hessian is not None:
            curvature = qd @ np.asarray(self.hessian(q), dtype=float) @ qd
        else:
            eps = 1e-6
            curvature = (np.asarray(self.grad(q + eps * qd)) - np.asarray(self.grad(q - eps * qd))) @ qd / (2 * eps)
        a, b = self._rows_a, self.body_b.row
        Ja, Jb = np.zeros(6), np.zeros(6)
        for gk, r in zip(g, Jk):
            for body, block in ((r.a[0], r.Ja[0]), (r.b[0], r.Jb[0])):
                if body == b:
                    Jb += gk * block
                elif body == a:
                    Ja += gk * block
        return Rows(np.array([a]), np.array([b]), np.array([float(self.phi(q))]), Ja[None], Jb[None],
                    np.array([g @ np.array(jdu) + curvature]))


def _coordinate(joint, k: Kinematics):
    """(value, its rate row as Rows, Jdot u of that row) for a hinge angle or slider position."""
    a = np.array([joint._rows_a])
    b = np.array([joint.body_b.row])
    if isinstance(joint, Slider):
        r = line_rows(k, a, b, joint._la[None], joint._lb[None], joint._axis_a[None])
        return r.C[0], r, r.Jdu[0]
    # the continuous hinge angle: nearest to the angle at the end of the last step, so phi
    # sees no 2 pi jump when the hinge turns past +-pi
    c, u = joint.world._turning_angles().at(k.R, [joint.index])
    angle = c[0]
    z = np.zeros((1, 3))
    rows = Rows(a, b, np.array([angle]), np.concatenate([z, -u], 1), np.concatenate([z, u], 1),
                np.zeros(1))
    wa, wb = k.w[a], k.w[b]
    jdu = dot(wb - wa, cross(wa, u))[0]      # the axis turns with body_a
    return angle, rows, jdu


class Gear(Coupling):
    """q2 = ratio * q1 for two hinges or sliders (a gear pair, a rack and pinion)."""

    def __init__(self, joint1, joint2, ratio: float, name=None):
        r = float(check_vector("ratio", [ratio], 1)[0])
        super().__init__([joint1, joint2], lambda q: q[1] - r * q[0],
                         lambda q: np.array([-r, 1.0]), lambda q: np.zeros((2, 2)), name=name)
        self.ratio = r


class CouplingTable:
    """Rows of all couplings (one user callback each)."""
    kind = "coupling"
    ROWS_PER_INSTANCE = {"coupling": 1}

    def __init__(self, items):
        self.owner = np.array([i[0] for i in items], dtype=np.intp)
        self.a = np.array([i[1] for i in items], dtype=np.intp)
        self.b = np.array([i[2] for i in items], dtype=np.intp)
        self.couplings = [i[3] for i in items]

    def evaluate(self, k: Kinematics) -> Rows:
        return Rows.concatenate([c._evaluate(k) for c in self.couplings])

    @property
    def row_owner(self):
        return self.owner
