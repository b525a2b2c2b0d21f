"""ArticulatedView: the joint-space (reduced-coordinate) view of a tree of joints in a World.

The view owns no state: q and qd are read from (and written to) the bodies of the world, and
every quantity is evaluated at the world's current state. Recursions run from the root
(the world frame and static bodies, and through a floating base's 6-DOF joint the free bodies
chosen as bases) to the leaves through the tree joints; see
``coordinates.py`` for the joint coordinates and the relations they rest on.

Equations (n = number of joint coordinates, all world frame, body twists u = [v; w] at the
centre of mass as in the engine):

    u_i = J_i qd,   udot_i = J_i qdd + Jdot_i qd
    M    = sum_i J_i^T M_i J_i,              M_i = blockdiag(m_i 1, R I_i R^T)
    bias = sum_i J_i^T (M_i Jdot_i qd + [-m_i g; w_i x I_i w_i])
    M qdd + bias = tau + A^T lambda

Constraints (null-space projection): rows C(q) = 0 with A = dC/dq (velocity variables) and
Cddot = A qdd + Adot_qd. They are made with the engine's own row primitives (rows.py), so
``lambda`` is the engine's multiplier: the force the constraint applies to the mechanism
(to body_b of a loop joint, in the engine's row order; to the body of a point contact; along
the normal for a point on a plane; see constrained.py), and tau_constraint = A^T lambda is that force as
generalised joint forces. The projection's lambda (torques the joints spend pushing against the
constraints) is minus this one.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..joints import Joint, _Turning
from ..limits import wrap_near
from ..math3d import cross, matrix_to_quat, quat_to_matrix
from ..sleeping import linked_labels
from ..validation import check_vector
from .constrained import Constraint, ConstrainedMixin
from .coordinates import FloatingBase, TreeJoint, cross3, skew

_STATE = ("_x", "_q", "_v", "_w")


@dataclass
class _Kin:
    """Kinematics of the whole world at one state (arrays indexed by world row)."""
    x: np.ndarray
    R: np.ndarray
    v: np.ndarray
    w: np.ndarray
    anchors: list           # per tree joint (coordinate order): world anchor of body_b
    qd: np.ndarray          # joint velocities
    Jv: np.ndarray          # (N, 3, n) COM velocity Jacobians
    Jw: np.ndarray          # (N, 3, n) angular velocity Jacobians
    a0: np.ndarray          # (N, 3) Jdot qd, linear (COM)
    al0: np.ndarray         # (N, 3) Jdot qd, angular


def _given_bases(world, base) -> list:
    """The bodies given as ``base`` (None: none yet, found later), checked."""
    from ..body import Body
    if base is None:
        return []
    given = [base] if isinstance(base, Body) else base
    try:
        given = list(given)
    except TypeError:
        raise ValueError(f"base must be a dynamic body of the world or a list of them, got "
                         f"{base!r}") from None
    for b in given:
        if not isinstance(b, Body) or b._world is not world or b._row < 0:
            raise ValueError(f"base: {b!r} is not a body of this world")
        if b.static:
            raise ValueError(f"base: {b!r} is static; a tree already grows from static bodies "
                             "(a floating base is a dynamic body)")
    if len({id(b) for b in given}) != len(given):
        raise ValueError(f"base: {given} names a body twice")
    return given


def _grow_tree(candidates, reached, chosen, order):
    """Add to the tree (``chosen``: joint id -> forward, ``order``: parents first) every
    candidate joint that reaches a new body from ``reached``, until none does."""
    changed = True
    while changed:
        changed = False
        for j in candidates:
            if id(j) in chosen:
                continue
            a, b = j._rows_a, j.body_b.row
            if (a in reached) == (b in reached):
                continue
            chosen[id(j)] = a in reached
            reached.add(b if a in reached else a)
            order.append(j)
            changed = True


def _untied_groups(world, candidates, chosen, reached, fixed, default_joints):
    """Groups (sets of rows) of the bodies that the candidate joints left out of the tree join
    to each other and that no joint of the world ties to the world frame or a static body:
    each gets a floating base. A group tied to the world only by joints that cannot be tree
    joints is a ValueError when the joints are the default ones (the view would leave
    jointed bodies out without a word); with joints given, the caller reports them."""
    left = [j for j in candidates if id(j) not in chosen
            and j._rows_a not in reached and j.body_b.row not in reached]
    if not left:
        return []
    a = np.array([j._rows_a for j in left])
    b = np.array([j.body_b.row for j in left])
    labels = linked_labels(a, b, world._n)
    groups = {}                      # (in the order of their first rows)
    for r in np.unique(np.concatenate([a, b])).tolist():
        groups.setdefault(labels[r], set()).add(r)
    untied = []
    for group in groups.values():
        ties = [j for j in world.joints if {j._rows_a, j.body_b.row} & group
                and {j._rows_a, j.body_b.row} & fixed]
        if not ties:
            untied.append(group)
        elif default_joints:
            bodies = [world._handles[r] for r in sorted(group)]
            raise ValueError(f"bodies {bodies} are joined to each other but "
                             f"tied to the world only by {ties}, which cannot be tree joints; "
                             "pass base=<one of them> to view them on a floating base (those "
                             "joints then close loops), or joints=[...] to leave them out")
    return untied


class ArticulatedView(ConstrainedMixin):
    """Joint-space view of the tree of joints of ``world`` rooted at the world frame, and at
    floating bases.

    Parameters
    ----------
    world : the World.
    joints : the tree joints (hinge, slider, cylindrical, ball, universal, fixed, rotation
        lock: see coordinates.py), in the order of their coordinates. Default: every such joint
        of ``world.joints`` that reaches a new body from the world frame (or a static body, or
        a floating base), in the world's order; a joint may point either way (body_a or body_b
        nearer the root).
    loop_joints : joints that close loops, applied as constraints with their engine rows.
        Default: every other joint of the world between bodies of the tree (or the world).
    base : a dynamic body, or a list of them, each joined to the world frame by a 6-DOF
        ``FloatingBase`` tree joint (coordinates: its centre of mass and rotation vector,
        velocities (v, w), world frame; see coordinates.py), first in q. The tree then grows
        from the bases too; a joint of the world between a base and the world (or a static
        body) becomes a loop joint. Default: one floating base for each group of dynamic
        bodies that ``joints`` join to each other but that no joint of the world ties to the
        world frame or a static body (a legged robot, a mobile manipulator, a ragdoll): the
        first of the group added to the world. ``base=()``: no floating base.

    Bodies that no tree joint reaches are not part of the view (a lone free body, or with
    ``base=()`` a free-floating mechanism); a joint between one of them and a body of the tree
    is an error, and so, by default, is a group of jointed bodies tied to the world only by
    joints that cannot be tree joints (a distance joint): pass ``base=`` to view them.
    """

    def __init__(self, world, joints=None, loop_joints=None, base=None):
        from ..world import World
        if not isinstance(world, World):
            raise ValueError(f"world must be the World whose joints to view, got {world!r}")
        self.world = world
        all_joints = world.joints
        fixed = {0} | {b.row for b in world.bodies if b.static}
        if joints is None:
            candidates = [j for j in all_joints
                          if any(type(j) is cls for cls, _, _ in TreeJoint.KINDS)]
        else:
            candidates = list(joints)
            for j in candidates:
                if not isinstance(j, Joint) or j._world is not world:
                    raise ValueError(f"joints: {j!r} is not a joint of this world")
        bases = _given_bases(world, base)
        reached = set(fixed) | {b.row for b in bases}
        chosen = {}                      # joint id -> forward
        order = []
        _grow_tree(candidates, reached, chosen, order)
        if base is None:
            for group in _untied_groups(world, candidates, chosen, reached, fixed,
                                        joints is None):
                first = min(group)
                bases.append(world._handles[first])
                reached.add(first)
                _grow_tree(candidates, reached, chosen, order)
        if joints is not None:
            missing = [j for j in candidates if id(j) not in chosen]
            if missing:
                raise ValueError(f"joints: {missing} do not extend the tree from the world "
                                 "or a floating base (they close a loop or do not reach it); "
                                 "pass loop-closing joints as loop_joints, and base=body for "
                                 "a floating base")
        tree_list = ([FloatingBase(b) for b in bases]
                     + [j for j in candidates if id(j) in chosen])    # coordinate order
        R_all = quat_to_matrix(world._q[: world._n])
        self.tree: list[TreeJoint] = []
        start = 0
        for j in tree_list:
            tj = TreeJoint(j, chosen.get(id(j), True), start, R_all[j._rows_a],
                           R_all[j.body_b.row])
            self.tree.append(tj)
            start += tj.dof
        self.n = start
        by_id = {id(tj.joint): tj for tj in self.tree}
        self._topo = self.tree[:len(bases)] + [by_id[id(j)] for j in order]   # parents first
        self._rows = np.array([tj.child for tj in self._topo], dtype=np.intp)
        self._fixed = fixed
        self._reached = reached
        self._mass = world._mass[self._rows].copy()
        self._inertia = world._inertia[self._rows].copy()

        # constraints: loop joints, then user-declared ones
        self.constraints: list[Constraint] = []
        self._n_rows = 0
        if loop_joints is None:
            loop_joints = []
            for j in all_joints:
                if id(j) in chosen:
                    continue
                ends = (j._rows_a, j.body_b.row)
                inside = [e in reached for e in ends]
                if all(inside):
                    if not all(e in fixed for e in ends):
                        loop_joints.append(j)
                elif any(inside) and not all(e in fixed for e in ends if e in reached):
                    raise ValueError(f"{j!r} joins a body of the tree to a body outside it; "
                                     "the view would not match the world")
        for j in loop_joints:
            if not isinstance(j, Joint) or j._world is not world:
                raise ValueError(f"loop_joints: {j!r} is not a joint of this world")
            if id(j) in chosen:
                raise ValueError(f"loop_joints: {j!r} is a tree joint")
            if j._rows_a not in reached or j.body_b.row not in reached:
                raise ValueError(f"loop_joints: {j!r} touches a body outside the tree")
            self._add_constraint("loop", j, j._instances(len(self.constraints)))
        self._bodies_made = list(world._handles)    # (the world's bodies when made)
        self._cache_key = None
        self._cache = None

    # -- bookkeeping ---------------------------------------------------------------------
    @property
    def joints(self) -> list:
        """The tree joints in coordinate order: a ``FloatingBase`` for each floating base
        first, then the world's joints."""
        return [tj.joint for tj in self.tree]

    @property
    def bases(self) -> list:
        """The floating bases' bodies, in the order of their coordinates (q[6 i: 6 i + 6])."""
        return [tj.joint.body for tj in self.tree if tj.kind == "free"]

    @property
    def bodies(self) -> list:
        """The bodies moved by the tree (children of the tree joints), root first."""
        return [self.world._handles[r] for r in self._rows]

    def coordinate_slice(self, joint) -> slice:
        """Where ``joint``'s coordinates are in q (a floating base's: pass its body or its
        ``FloatingBase``)."""
        for tj in self.tree:
            if tj.joint is joint or (tj.kind == "free" and tj.joint.body is joint):
                return tj.slice
        raise ValueError(f"joint {joint!r} is not a tree joint of this view")

    # -- kinematics ----------------------------------------------------------------------
    def _world_state(self):
        n = self.world._n
        return tuple(getattr(self.world, name)[:n] for name in _STATE)

    def _kin(self) -> _Kin:
        handles = self.world._handles
        if len(handles) != len(self._bodies_made) or any(
                a is not b for a, b in zip(handles, self._bodies_made)) or any(
                not tj.attached(self.world) for tj in self.tree):
            raise ValueError("the world's bodies or tree joints changed since this view was "
                             "made; make a new ArticulatedView")
        state = self._world_state()
        if self._cache is not None and all(
                s.shape == c.shape and np.array_equal(s, c) for s, c in zip(state, self._cache_key)):
            return self._cache
        x, qu, v, w = (s.copy() for s in state)
        R = quat_to_matrix(qu)
        N, n = x.shape[0], self.n
        anchors = [x[tj.b] + R[tj.b] @ tj.lb for tj in self.tree]
        qd = np.zeros(n)
        for tj, p in zip(self.tree, anchors):
            qd[tj.slice] = self._joint_rate(tj, x, R, v, w, p)
        Jv = np.zeros((N, 3, n))
        Jw = np.zeros((N, 3, n))
        a0 = np.zeros((N, 3))
        al0 = np.zeros((N, 3))
        for tj in self._topo:
            P, C, s = tj.parent, tj.child, tj.sign
            p = x[tj.b] + R[tj.b] @ tj.lb
            Sv, Sw, _ = tj.motion(R[tj.a], R[tj.b])
            # Jacobians
            Jw[C] = Jw[P]
            Jw[C][:, tj.slice] += s * Sw
            Jvp = Jv[P] - skew(p - x[P]) @ Jw[P]
            Jvp[:, tj.slice] += s * Sv
            Jv[C] = Jvp - skew(x[C] - p) @ Jw[C]
            # velocity products (Jdot qd): the acceleration recursion with qdd = 0
            kv, kw = tj.velocity_products(R[tj.a], R[tj.b], w[tj.a], w[tj.b], qd[tj.slice])
            al0[C] = al0[P] + s * kw
            rP, rC = p - x[P], p - x[C]
            AP = a0[P] + cross3(al0[P], rP) + cross3(w[P], cross3(w[P], rP))
            AC = AP + s * kv
            a0[C] = AC - cross3(al0[C], rC) - cross3(w[C], cross3(w[C], rC))
        kin = _Kin(x, R, v, w, anchors, qd, Jv, Jw, a0, al0)
        self._cache_key = tuple(s.copy() for s in state)
        self._cache = kin
        return kin

    @staticmethod
    def _joint_rate(tj, x, R, v, w, p):
        Sv, Sw, _ = tj.motion(R[tj.a], R[tj.b])
        if tj.dof == 0:
            return np.zeros(0)
        dv = v[tj.b] + cross3(w[tj.b], p - x[tj.b]) - v[tj.a] - cross3(w[tj.a], p - x[tj.a])
        S = np.vstack([Sv, Sw])
        return np.linalg.lstsq(S, np.concatenate([dv, w[tj.b] - w[tj.a]]), rcond=None)[0]

    # -- coordinates ---------------------------------------------------------------------
    @property
    def q(self) -> np.ndarray:
        """Joint coordinates (n,), read from the bodies' poses (see coordinates.py).

        Hinge and cylindrical angles are continuous and count whole turns, as ``Hinge.angle``
        and ``Cylindrical.angle``: the pose gives the angle up to 2 pi, and the branch is the
        one nearest to the joint's last angle in the world (the end of the last step, or the
        value last set through this view)."""
        k = self._kin()
        out = np.zeros(self.n)
        for tj in self.tree:
            out[tj.slice] = tj.coordinates(k.x[tj.a], k.R[tj.a], k.x[tj.b], k.R[tj.b])
        hinge, owner = self._hinge_coordinates()
        if hinge.size:
            out[hinge] = wrap_near(out[hinge], self.world._joint_angle[owner])
        return out

    def _hinge_coordinates(self):
        """Indices into q of the hinge and cylindrical angles and the world's joint index of
        each."""
        pairs = [(tj.start, tj.joint._index) for tj in self.tree
                 if isinstance(tj.joint, _Turning)]      # as the world tracks them
        return (np.array([p for p, _ in pairs], dtype=np.intp),
                np.array([o for _, o in pairs], dtype=np.intp))

    @q.setter
    def q(self, value):
        q = check_vector("q", value, self.n)
        self._set_state(q, self.qd)
        self._touched()

    @property
    def qd(self) -> np.ndarray:
        """Joint velocity variables (n,), read from the bodies' velocities."""
        return self._kin().qd.copy()

    @qd.setter
    def qd(self, value):
        qd = check_vector("qd", value, self.n)
        self._set_velocities(qd)
        self._touched()

    def set_state(self, q, qd):
        """Pose the bodies by forward kinematics for ``q`` and give them the velocities of
        ``qd``."""
        self._set_state(check_vector("q", q, self.n), check_vector("qd", qd, self.n))
        self._touched()

    def _set_state(self, q, qd):
        world = self.world
        x, qu = world._x, world._q
        R = {r: quat_to_matrix(qu[r][None])[0] for r in self._fixed}
        pos = {r: x[r].copy() for r in self._fixed}
        for tj in self._topo:
            qj = q[tj.slice]
            Rrel = tj.relative_rotation(qj)
            d = tj.translation(qj)
            if tj.forward:
                Ra, xa = R[tj.a], pos[tj.a]
                Rb = Ra @ Rrel
                p = xa + Ra @ (tj.la + d)
                R[tj.b], pos[tj.b] = Rb, p - Rb @ tj.lb
            else:
                Rb, xb = R[tj.b], pos[tj.b]
                Ra = Rb @ Rrel.T
                p = xb + Rb @ tj.lb
                R[tj.a], pos[tj.a] = Ra, p - Ra @ (tj.la + d)
        for r in self._rows:
            x[r] = pos[r]
            qu[r] = matrix_to_quat(R[r])
        # the hinges' turn counts: Hinge.angle and q read back the angles set, not wrapped
        hinge, owner = self._hinge_coordinates()
        world._joint_angle[owner] = q[hinge]
        self._set_velocities(qd)

    def _set_velocities(self, qd):
        world = self.world
        x, R = world._x[: world._n], quat_to_matrix(world._q[: world._n])
        v, w = world._v, world._w
        for tj in self._topo:
            P, C, s = tj.parent, tj.child, tj.sign
            p = x[tj.b] + R[tj.b] @ tj.lb
            Sv, Sw, _ = tj.motion(R[tj.a], R[tj.b])
            qj = qd[tj.slice]
            w[C] = w[P] + s * (Sw @ qj)
            vp = v[P] + cross3(w[P], p - x[P]) + s * (Sv @ qj)
            v[C] = vp + cross3(w[C], x[C] - p)
        world._state_changed()

    def _touched(self):
        """The user posed the tree (q, qd, set_state; not ``posed``, which puts it back): as
        setting a body's pose or velocity does, its islands wake and its velocities are
        states'."""
        self.world._wake(self._rows)
        self.world._velocity_set(self._rows)

    @contextmanager
    def posed(self, q=None, qd=None):
        """Temporarily pose the world at (q, qd) (default: the current values); the bodies'
        states are restored on exit."""
        n = self.world._n
        saved = [getattr(self.world, name)[:n].copy() for name in _STATE]
        saved_angles = self.world._joint_angle.copy()
        try:
            if q is not None or qd is not None:
                q0 = self.q if q is None else check_vector("q", q, self.n)
                qd0 = self.qd if qd is None else check_vector("qd", qd, self.n)
                self._set_state(q0, qd0)
            yield self
        finally:
            for name, arr in zip(_STATE, saved):
                getattr(self.world, name)[:n] = arr
            self.world._joint_angle[:] = saved_angles
            self.world._state_changed()

    def q_rate(self, q=None, qd=None) -> np.ndarray:
        """dq/dt for velocity variables qd (equal to qd except for ball coordinates)."""
        q = self.q if q is None else np.asarray(q, float)
        qd = self.qd if qd is None else np.asarray(qd, float)
        out = np.array(qd, dtype=float)
        for tj in self.tree:
            out[tj.slice] = tj.q_rate(q[tj.slice], qd[tj.slice])
        return out

    def q_rate_matrix(self, q=None) -> np.ndarray:
        """N(q) with dq/dt = N(q) qd (identity except for ball blocks)."""
        q = self.q if q is None else np.asarray(q, float)
        N = np.eye(self.n)
        for tj in self.tree:
            N[tj.slice, tj.slice] = tj.qd_to_qdot_matrix(q[tj.slice])
        return N

    # -- Jacobians -----------------------------------------------------------------------
    def _row_of(self, body):
        if body is None:
            return 0
        return self._body_row(body)

    def jacobian(self, body, point=None) -> np.ndarray:
        """(6, n) world-frame Jacobian of ``body``: rows 0-2 map qd to the velocity of the
        material point at world ``point`` (default: the centre of mass), rows 3-5 to the body's
        angular velocity (the engine's u = [v; w] order). Zero for the world and static
        bodies."""
        k = self._kin()
        r = self._row_of(body)
        Jv = k.Jv[r]
        if point is not None:
            Jv = Jv - skew(check_vector("point", point, 3) - k.x[r]) @ k.Jw[r]
        return np.vstack([Jv, k.Jw[r]])

    def point_jacobian(self, body, point) -> np.ndarray:
        """(3, n): qd -> velocity of the material point of ``body`` at world ``point``."""
        return self.jacobian(body, point)[:3]

    def jacobian_dot_qd(self, body, point=None) -> np.ndarray:
        """(6,): Jdot qd of ``jacobian(body, point)``, the acceleration of the point and the
        angular acceleration when qdd = 0."""
        k = self._kin()
        r = self._row_of(body)
        a, al = k.a0[r], k.al0[r]
        if point is not None:
            d = check_vector("point", point, 3) - k.x[r]
            a = a + cross3(al, d) + cross3(k.w[r], cross3(k.w[r], d))
        return np.concatenate([a, al])

    def body_accelerations(self, qdd) -> tuple[np.ndarray, np.ndarray]:
        """Linear (COM) and angular accelerations (nb, 3) of ``world.bodies`` for joint
        accelerations qdd at the current state (zero for bodies outside the tree)."""
        qdd = check_vector("qdd", qdd, self.n)
        k = self._kin()
        lin = np.einsum("nij,j->ni", k.Jv, qdd) + k.a0
        ang = np.einsum("nij,j->ni", k.Jw, qdd) + k.al0
        return lin[1:], ang[1:]

    def qdd_from_body_accelerations(self, acc_lin, acc_ang) -> np.ndarray:
        """Least-squares qdd with J qdd = body accelerations - Jdot qd over the tree bodies;
        acc_lin, acc_ang (nb, 3) in the order of ``world.bodies``."""
        k = self._kin()
        rows = self._rows
        lin = np.asarray(acc_lin, float)[rows - 1] - k.a0[rows]
        ang = np.asarray(acc_ang, float)[rows - 1] - k.al0[rows]
        J = np.concatenate([k.Jv[rows], k.Jw[rows]], axis=1).reshape(-1, self.n)
        rhs = np.concatenate([lin, ang], axis=1).reshape(-1)
        return np.linalg.lstsq(J, rhs, rcond=None)[0]

    # -- dynamics ------------------------------------------------------------------------
    def _world_inertia(self, k):
        R = k.R[self._rows]
        return R @ self._inertia @ R.transpose(0, 2, 1)

    def mass_matrix(self) -> np.ndarray:
        """Joint-space inertia matrix M (n, n) = sum J_i^T M_i J_i."""
        k = self._kin()
        Jv, Jw = k.Jv[self._rows], k.Jw[self._rows]
        I = self._world_inertia(k)
        M = np.einsum("b,bin,bim->nm", self._mass, Jv, Jv) + np.einsum(
            "bin,bij,bjm->nm", Jw, I, Jw)
        return 0.5 * (M + M.T)

    def bias_forces(self) -> np.ndarray:
        """Coriolis, centrifugal, gyroscopic and gravity terms (n,): M qdd + bias = tau."""
        k = self._kin()
        rows = self._rows
        Jv, Jw = k.Jv[rows], k.Jw[rows]
        I = self._world_inertia(k)
        w = k.w[rows]
        force = self._mass[:, None] * (k.a0[rows] - self.world.gravity)
        torque = np.einsum("bij,bj->bi", I, k.al0[rows]) + cross(
            w, np.einsum("bij,bj->bi", I, w))
        return np.einsum("bin,bi->n", Jv, force) + np.einsum("bin,bi->n", Jw, torque)

    def gravity_forces(self) -> np.ndarray:
        """The gravity part of ``bias_forces`` (n,) (minus the generalised gravity force)."""
        k = self._kin()
        Jv = k.Jv[self._rows]
        return -np.einsum("bin,bi->n", Jv, self._mass[:, None] * self.world.gravity)

    def applied_forces(self) -> np.ndarray:
        """The loads waiting in the world for the next step (body.apply_force / apply_torque)
        as generalised forces (n,)."""
        k = self._kin()
        rows = self._rows
        return (np.einsum("bin,bi->n", k.Jv[rows], self.world._force[rows])
                + np.einsum("bin,bi->n", k.Jw[rows], self.world._torque[rows]))

    def kinetic_energy(self) -> float:
        qd = self.qd
        return float(0.5 * qd @ self.mass_matrix() @ qd)

    def forward_dynamics(self, tau) -> np.ndarray:
        """qdd = M^-1 (tau - bias), constraints ignored."""
        tau = check_vector("tau", tau, self.n)
        return sla.cho_solve(sla.cho_factor(self.mass_matrix()), tau - self.bias_forces())

    def inverse_dynamics(self, qdd) -> np.ndarray:
        """tau = M qdd + bias, constraints ignored."""
        qdd = check_vector("qdd", qdd, self.n)
        return self.mass_matrix() @ qdd + self.bias_forces()

    def __repr__(self):
        floating = len(self.bases)
        return (f"<ArticulatedView {len(self.tree) - floating} joints"
                + (f", {floating} floating base{'s' * (floating > 1)}" if floating else "")
                + f", n={self.n}, {self._n_rows} constraint rows>")
