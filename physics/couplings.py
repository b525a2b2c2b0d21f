"""Constraints built from other joints' coordinates, and a point held on a plane.

``Coupling(joints, phi, grad, hessian=None)`` keeps phi(q) = 0, where q are the coordinates
of hinges (angle) and sliders (position), e.g. Featherstone's gamma_q example: q2 - 2 sin q1 = 0.
Its single row is sum_k dphi/dq_k times joint k's rate row, so it acts on the bodies of the
coupled joints; it may move at most two bodies (the others must be static or the world).
``Gear(j1, j2, ratio)`` is the linear case q2 = ratio * q1.

``PointOnPlane(body_a, body_b, point, normal)`` keeps a point of body_b on a plane fixed in
body_a (None: the world): a pen on paper, an eraser on a whiteboard.

The coupled coordinates of all couplings, their rate rows and the rows they combine into are
evaluated at once (``CouplingTable``); only a ``Coupling``'s own functions phi, grad and
hessian are called coupling by coupling (a ``Gear`` is linear and calls none).
"""
from __future__ import annotations

import numpy as np

from .joints import Hinge, Joint, MadeWith, Slider
from .limits import angular_rate_blocks
from .math3d import cross, dot
from .rows import Kinematics, Rows, line_rows
from .validation import check_number, check_unit_direction, check_vector, numbers, shown


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


def _check_coordinate_joint(label: str, joint, user: str = "a coupling"):
    """ValueError naming ``label`` unless ``joint`` has one coordinate to couple: a Hinge's
    angle or a Slider's position."""
    if not isinstance(joint, (Hinge, Slider)):
        raise ValueError(f"{label} must be a Hinge or a Slider joint ({user} works on its "
                         f"angle or position), got {joint!r}")


_NEW_COUPLING = ("a coupling's joints and functions are fixed when it is made: make a new one "
                 "(world.remove_joint takes this one out)")


class Coupling(Joint):
    """phi(q) = 0 on the coordinates q of ``joints`` (hinge angles in rad, continuous over
    whole turns, slider positions in m, each zero at its joint's creation).

    phi(q) -> float, grad(q) -> (k,) and optionally hessian(q) -> (k, k) (otherwise it is
    taken by central differences of grad along q-dot). ``force`` and ``torque`` report its
    wrench on ``body_b``, the last joint's body_b (that joint's body_a where its body_b is
    static).
    """

    def __init__(self, joints, phi, grad, hessian=None, name=None):
        try:
            joints = list(joints)
        except TypeError:
            raise ValueError(f"joints must be a list of the Hinge or Slider joints to couple "
                             f"(e.g. [hinge1, hinge2]), got {joints!r}") from None
        if not joints:
            raise ValueError("joints must list at least one Hinge or Slider joint, got none")
        for k, joint in enumerate(joints):
            _check_coordinate_joint(f"joints[{k}]", joint)
        if len({id(j) for j in joints}) != len(joints):
            raise ValueError(f"joints must be different joints, got {joints} (a coupling of a "
                             "joint with itself holds or locks it)")
        for label, fn in (("phi", phi), ("grad", grad)):
            if not callable(fn):
                raise ValueError(f"{label} must be a function of the coordinates q, got {fn!r}")
        if hessian is not None and not callable(hessian):
            raise ValueError(f"hessian must be a function of the coordinates q (or None: "
                             f"central differences of grad), got {hessian!r}")
        bodies = []
        for j in joints:
            for body in (j.body_a, j.body_b):
                if body is not None and not body.static and body not in bodies:
                    bodies.append(body)
        if len(bodies) > 2:
            raise ValueError(f"a coupling may move at most two bodies; {joints} move {len(bodies)}")
        if not bodies:
            raise ValueError("the coupled joints move no body")
        # the body its force and torque are reported on: the last joint's (see body_b). (It
        # was the last moving body met among the joints' bodies, which a yo-yo's
        # Gear(Hinge(carriage, disc), Slider(None, carriage)) made the disc: its report read
        # no force and -T r about the axle instead of the string's tension T on the carriage.)
        last = joints[-1]
        body_b = next((body for body in (last.body_b, last.body_a)
                       if body is not None and not body.static), bodies[-1])
        body_a = next((body for body in bodies if body is not body_b), None)
        super().__init__(body_a, body_b, anchor=body_b.position, name=name)
        self._coupled = joints
        self._phi_given, self._grad_given, self._hessian_given = phi, grad, hessian

    coupled = MadeWith(_NEW_COUPLING, "The coupled joints, in the order of q.")
    body_b = MadeWith(_NEW_COUPLING, "The body the coupling's ``force`` and ``torque`` are "
                      "reported on (its wrench on it, world frame, about its centre at "
                      "creation): the last coupled joint's body_b (a Gear's joint2's), or "
                      "that joint's body_a where its body_b is static; if that joint moves "
                      "no body, the other joints' moving body. Fixed at creation.")
    body_a = MadeWith(_NEW_COUPLING, "The other body the coupled joints move (None: none), "
                      "fixed at creation. It does not receive the opposite of the reported "
                      "wrench: see ``body_b``, and the README on couplings.")
    phi = MadeWith(_NEW_COUPLING, "phi(q), the function held at 0.", "_phi_given")
    grad = MadeWith(_NEW_COUPLING, "grad(q), phi's gradient.", "_grad_given")
    hessian = MadeWith(_NEW_COUPLING, "hessian(q), grad's derivative (None: central "
                       "differences of grad).", "_hessian_given")

    # a linear coupling's constant gradient (phi = weights . q), None: call the functions
    _weights = None

    def _bind(self, world):
        for j in self.coupled:
            if j._world is not world:
                raise ValueError(f"{j!r} must be added to the world before the coupling")
        self._check_functions(self.q)
        super()._bind(world)

    def _check_functions(self, q):
        """phi, grad and hessian (if given) at the coordinates q (k,): a finite number, k
        finite numbers not all zero (a row with no direction constrains nothing), a finite
        (k, k) array; ValueError naming the function and what it gave otherwise."""
        k = len(self.coupled)
        wanted = [("phi", self.phi, "one finite number", lambda a: a.size == 1),
                  ("grad", self.grad, f"{k} finite numbers (one per coupled joint)",
                   lambda a: a.shape == (k,)),
                  ("hessian", self.hessian, f"a {k}x{k} array of finite numbers",
                   lambda a: a.shape == (k, k))]
        given = {}
        for label, fn, what, fits in wanted:
            if fn is None:                  # (no hessian: central differences of grad)
                continue
            array = given[label] = self._checked(label, fn, q, what, fits)
            if label == "grad" and not array.any():
                raise ValueError(f"{self!r}: grad(q) is zero at q = {shown(q)}: the coupling "
                                 "would constrain nothing there")
        # each derivative against central differences of the function it differentiates (a
        # grad of (1, 1) for phi = q2 - 2 q1 was taken as it was, and the coupling held
        # q2' = -q1' while phi drifted to -0.89 in 100 steps)
        for label, of, fn in (("grad", "phi", self._phi), ("hessian", "grad", self._grad)):
            if label in given:
                self._check_derivative(label, given[label], of, fn, q)

    def _check_derivative(self, label, derivative, of, fn, q):
        """ValueError naming ``label`` where ``derivative`` (its value at q) is not the
        derivative of ``of`` (fn) by central differences."""
        q = np.asarray(q, dtype=float)
        step = 1e-6 * np.maximum(1.0, np.abs(q))
        columns = []
        for i in range(q.size):
            dq = np.zeros(q.size)
            dq[i] = step[i]
            columns.append((np.asarray(fn(q + dq)) - np.asarray(fn(q - dq))) / (2.0 * step[i]))
        differences = np.stack(columns, axis=-1)
        scale = 1.0 + np.abs(derivative).max() + np.abs(np.asarray(fn(q))).max()
        if np.abs(differences - derivative).max() > 1e-5 * scale:
            raise ValueError(f"{self!r}: {label}(q) = {shown(derivative)} at q = {shown(q)} is "
                             f"not the derivative of {of}, which its central differences give "
                             f"as {shown(differences)}: check {label}")

    def _checked(self, label, fn, q, what, fits):
        """fn(q) as a float array, or ValueError naming this coupling and its function
        ``label`` when it is not ``what`` (``fits``: its shape is right) or not finite."""
        value = fn(q)
        try:
            array = numbers(label, value, what)
        except ValueError:                  # (a string, complex numbers ...)
            array = None
        if array is None or not fits(array) or not np.isfinite(array).all():
            raise ValueError(f"{self!r}: {label}(q) must be {what}, got {value!r} at "
                             f"q = {shown(q)}")
        return array

    def _phi(self, q) -> float:
        return float(self._checked("phi", self.phi, q, "one finite number",
                                   lambda a: a.size == 1).reshape(-1)[0])

    def _grad(self, q) -> np.ndarray:
        k = len(self.coupled)
        return self._checked("grad", self.grad, q, f"{k} finite numbers (one per coupled "
                             "joint)", lambda a: a.shape == (k,))

    def _hessian(self, q) -> np.ndarray:
        k = len(self.coupled)
        return self._checked("hessian", self.hessian, q, f"a {k}x{k} array of finite numbers",
                             lambda a: a.shape == (k, k))

    def _instances(self, owner):
        return [("coupling", (owner, self._rows_a, self.body_b.row, self))]

    @property
    def q(self) -> np.ndarray:
        return np.array([j.angle if isinstance(j, Hinge) else j.position for j in self.coupled])

    @property
    def error(self) -> float:
        return float(self.phi(self.q))

class Gear(Coupling):
    """q2 = ratio * q1, where q1 is ``joint1``'s coordinate and q2 ``joint2``'s (a Hinge's
    angle in rad or a Slider's position in m, each zero at its joint's creation): a gear
    pair (two hinges, ratio = -r1 / r2 for meshing gears turning opposite ways), a rack and
    pinion (a hinge and a slider, ratio in m/rad or rad/m). ``ratio`` is any finite number but
    0. ``force`` and ``torque`` report the gear's wrench on joint2's body_b (its body_a
    where that one is static): the tension on a rack, on an Atwood machine's mass, on a
    yo-yo's carriage (``Gear(Hinge(carriage, disc), Slider(None, carriage), r)``)."""

    def __init__(self, joint1, joint2, ratio: float, name=None):
        _check_coordinate_joint("joint1", joint1, "a gear")
        _check_coordinate_joint("joint2", joint2, "a gear")
        if joint1 is joint2:
            raise ValueError(f"joint1 and joint2 must be different joints, got {joint1!r} "
                             "twice (a gear of a joint with itself holds or locks it)")
        r = check_number("ratio", ratio)
        if r == 0.0:
            raise ValueError("ratio must not be 0: q2 = 0 * q1 locks joint2 and leaves joint1 "
                             "free (lock joint2 with its limits or a servo instead)")
        weights = np.array([-r, 1.0])        # phi = weights . q (the table uses them alone)
        super().__init__([joint1, joint2], lambda q: weights @ q, lambda q: weights,
                         lambda q: np.zeros((2, 2)), name=name)
        self._ratio = r
        self._weights = weights

    @property
    def ratio(self) -> float:
        """q2 / q1 (fixed at creation)."""
        return self._ratio


class CouplingTable:
    """Rows of all couplings. Their coupled coordinates (hinge angles, slider positions) are
    listed once per topology as entries, coupling by coupling; each step evaluates every
    entry's value and rate row at once, then combines them into one row per coupling,
    sum_k dphi/dq_k (rate row of entry k), onto the coupling's two bodies (the entries' other
    bodies are static or the world)."""
    kind = "coupling"
    ROWS_PER_INSTANCE = {"coupling": 1}

    def __init__(self, items):
        self.owner = np.array([i[0] for i in items], dtype=np.intp)
        self.a = np.array([i[1] for i in items], dtype=np.intp)
        self.b = np.array([i[2] for i in items], dtype=np.intp)
        self.couplings = [i[3] for i in items]
        joints = [j for c in self.couplings for j in c.coupled]
        self.of = np.repeat(np.arange(len(items)), [len(c.coupled) for c in self.couplings])
        sliding = np.array([isinstance(j, Slider) for j in joints])
        self.hinges, self.sliders = np.flatnonzero(~sliding), np.flatnonzero(sliding)
        self.hinge_joints = np.array([joints[e].index for e in self.hinges], dtype=np.intp)
        self.entry_a = np.array([j._rows_a for j in joints], dtype=np.intp)
        self.entry_b = np.array([j.body_b.row for j in joints], dtype=np.intp)
        self.slider_args = (self.entry_a.take(self.sliders), self.entry_b.take(self.sliders),
                            *(np.array([getattr(joints[e], name) for e in self.sliders],
                                       dtype=float).reshape(-1, 3)
                              for name in ("_la", "_lb", "_axis_a")))
        # each entry side's block goes to the coupling's b if it moves that body, else to its
        # a if it moves that, else nowhere (side a of entry e is 2 e, side b 2 e + 1)
        bodies = np.stack([self.entry_a, self.entry_b], 1).reshape(-1)
        coupling_of_side = np.repeat(self.of, 2)
        on_b = bodies == self.b.take(coupling_of_side)
        on_a = ~on_b & (bodies == self.a.take(coupling_of_side))
        self._to_b, self._to_a = np.flatnonzero(on_b), np.flatnonzero(on_a)
        self._b_of, self._a_of = coupling_of_side[on_b], coupling_of_side[on_a]
        # linear couplings (gears) by their constant weights, the others by their functions
        linear = np.array([c._weights is not None for c in self.couplings])
        self.weights = np.concatenate([np.full(len(c.coupled), np.nan) if c._weights is None
                                       else c._weights for c in self.couplings])
        self._linear_entries = np.flatnonzero(linear.take(self.of))
        ends = np.cumsum([0] + [len(c.coupled) for c in self.couplings])
        self._nonlinear = [(c, slice(ends[c], ends[c + 1]), self.couplings[c])
                           for c in np.flatnonzero(~linear)]
        self._world = joints[0]._world

    def _entries(self, k: Kinematics, with_rates=True):
        """Every entry's value q (e,), and its rate row as Rows (its Jdu when k wants it;
        None without ``with_rates``)."""
        e = self.of.size
        q = np.empty(e)
        hinge_axes = slider_rows = None
        if self.hinges.size:
            # the continuous hinge angle: nearest to the angle at the end of the last step, so
            # phi sees no 2 pi jump when the hinge turns past +-pi
            q[self.hinges], hinge_axes = self._world._turning_angles().at(k.R, self.hinge_joints)
        if self.sliders.size:
            slider_rows = line_rows(k, *self.slider_args)
            q[self.sliders] = slider_rows.C
        if not with_rates:
            return q, None
        jdu, J = np.zeros(e), np.zeros((e, 12))
        if hinge_axes is not None:
            J[self.hinges] = angular_rate_blocks(hinge_axes)
            if k.velocity_terms:
                wa = k.w.take(self.entry_a.take(self.hinges), axis=0)
                wb = k.w.take(self.entry_b.take(self.hinges), axis=0)
                # (the axis turns with body_a)
                jdu[self.hinges] = dot(wb - wa, cross(wa, hinge_axes))
        if slider_rows is not None:
            J[self.sliders] = slider_rows.blocks
            jdu[self.sliders] = slider_rows.Jdu
        return q, Rows(self.entry_a, self.entry_b, q, J[:, :6], J[:, 6:], jdu)

    def _gradients(self, q, rates, velocities):
        """Per entry dphi/dq (e,), per coupling phi (c,) and the curvature q-dot^T H q-dot
        (c,; zero for linear couplings, and without ``velocities``, (v, w), as Jdot u may
        be left out then)."""
        g, phi, curvature = self.weights.copy(), np.zeros(self.a.size), np.zeros(self.a.size)
        on = self._linear_entries
        np.add.at(phi, self.of.take(on), g.take(on) * q.take(on))
        if not self._nonlinear:
            return g, phi, curvature
        qd = rates.velocity(*velocities) if velocities is not None else None
        for c, span, coupling in self._nonlinear:  # the user's functions, coupling by coupling
            qc = q[span]
            # (checked as when the coupling was made: a function that goes wrong later
            # is named, and the step fails leaving the world as it was)
            g[span] = coupling._grad(qc)
            phi[c] = coupling._phi(qc)
            if qd is None:
                continue
            v = qd[span]
            if coupling.hessian is not None:
                curvature[c] = v @ coupling._hessian(qc) @ v
            else:
                eps = 1e-6
                curvature[c] = (coupling._grad(qc + eps * v)
                                - coupling._grad(qc - eps * v)) @ v / (2 * eps)
        return g, phi, curvature

    def values(self, k: Kinematics, rotated=None) -> np.ndarray:
        """Every coupling's phi (c,) alone, without rate rows (what SHAKE's iterations read:
        the whole rows cost a 20-gear train 42 us a call, this 19)."""
        q, _ = self._entries(k, with_rates=False)
        return self._gradients(q, None, None)[1]

    def evaluate(self, k: Kinematics) -> Rows:
        q, rates = self._entries(k)
        g, phi, curvature = self._gradients(q, rates, (k.v, k.w) if k.velocity_terms else None)
        sides = np.stack([rates.Ja, rates.Jb], 1).reshape(-1, 6) * np.repeat(g, 2)[:, None]
        n = self.a.size
        Ja, Jb = np.zeros((n, 6)), np.zeros((n, 6))
        np.add.at(Jb, self._b_of, sides.take(self._to_b, axis=0))
        np.add.at(Ja, self._a_of, sides.take(self._to_a, axis=0))
        jdu = np.zeros(n)
        np.add.at(jdu, self.of, g * rates.Jdu)
        return Rows(self.a, self.b, phi, Ja, Jb, jdu + curvature)

    @property
    def row_owner(self):
        return self.owner
