"""Constraints on an ArticulatedView (the null-space projection, Featherstone's gamma_q,
Gauss's principle): loop-closing joints, point contacts and points on planes as rows
C(q) = 0 made with the engine's own row primitives, and the constrained dynamics built on
them.

With A = dC/dq (in the view's velocity variables) and Cddot = A qdd + Adot_qd:

    M qdd + bias = tau + A^T lambda,      A qdd + Adot_qd = 0

lambda is the engine's multiplier for the same rows: the force the constraint applies to the
mechanism (to body_b of a loop joint, rows in the engine's order: by primitive kind, point
(x, y, z), perpendicular, line, distance, as ``joint_rows`` picks them out of the world; to
the body for a point contact; along the normal for a point on a plane), and
tau_constraint = A^T lambda is that force as generalised joint forces. The projection's lambda (the
torques the joints spend pushing against the constraints) is minus this one.

Redundant rows (a planar loop closed by a hinge has 5 rows of rank 2) are allowed: the
inverse of A M^-1 A^T is a pseudo-inverse, lambda the minimum-norm one, P of rank n - rank(A).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..math3d import quat_to_matrix
from ..rows import Kinematics, build_tables
from ..validation import check_unit_direction, check_vector


def _pinvh(K: np.ndarray, rcond: float = 1e-10) -> np.ndarray:
    """Pseudo-inverse of a symmetric positive semi-definite matrix (redundant rows, as in a
    planar loop closed by a hinge, make A M^-1 A^T singular)."""
    if K.size == 0:
        return K.copy()
    s, U = np.linalg.eigh(0.5 * (K + K.T))
    keep = s > rcond * max(s.max(), 0.0)
    return (U[:, keep] / s[keep]) @ U[:, keep].T


@dataclass
class Constraint:
    """One declared or loop-closing constraint of a view: ``label`` ("loop", "point" or
    "plane"), the joint or body it concerns, and its rows in ``constraint_rows()``."""
    label: str
    source: object
    tables: list
    rows: slice


class ConstrainedMixin:
    """The constraint half of ArticulatedView (needs its kinematics and mass matrix)."""

    # -- declaring constraints -----------------------------------------------------------
    def _add_constraint(self, label, source, instances):
        groups = defaultdict(list)
        for kind, inst in instances:
            groups[kind].append(inst)
        tables = build_tables(groups)
        count = sum(t.a.shape[0] * t.ROWS_PER_INSTANCE[t.kind] for t in tables)
        c = Constraint(label, source, tables, slice(self._n_rows, self._n_rows + count))
        self.constraints.append(c)
        self._n_rows += count
        return c

    def _body_row(self, body, name="body"):
        from ..body import Body
        if not isinstance(body, Body) or body._world is not self.world or body._row < 0:
            raise ValueError(f"{name} must be a body of this view's world, got {body!r}")
        if body.row not in self._reached:
            raise ValueError(f"{name} {body!r} is not moved by the tree of this view")
        return body.row

    def add_point_contact(self, body, point) -> Constraint:
        """Hold the material point of ``body`` now at world ``point`` fixed in the world
        (3 rows, C = p - point; lambda = the force on the body, world frame, N)."""
        r = self._body_row(body)
        p = check_vector("point", point, 3)
        x, R = self.world._x[r], quat_to_matrix(self.world._q[r][None])[0]
        inst = ("point", (len(self.constraints), 0, r, p, R.T @ (p - x)))
        return self._add_constraint("point", body, [inst])

    def add_point_on_plane(self, body, point, plane_point, normal) -> Constraint:
        """Keep the material point of ``body`` now at world ``point`` on the plane through
        ``plane_point`` with ``normal`` (1 row, C = n . (p - plane_point); lambda = the force
        on the body along n, N)."""
        r = self._body_row(body)
        p = check_vector("point", point, 3)
        p0 = check_vector("plane_point", plane_point, 3)
        nrm = check_unit_direction("normal", normal)
        x, R = self.world._x[r], quat_to_matrix(self.world._q[r][None])[0]
        inst = ("line", (len(self.constraints), 0, r, p0, R.T @ (p - x), nrm))
        return self._add_constraint("plane", body, [inst])

    def clear_constraints(self, keep_loops: bool = True):
        """Drop the declared constraints (and the loop joints unless ``keep_loops``)."""
        kept = [c for c in self.constraints if keep_loops and c.label == "loop"]
        self.constraints, self._n_rows = [], 0
        for c in kept:
            c.rows = slice(self._n_rows, self._n_rows + (c.rows.stop - c.rows.start))
            self.constraints.append(c)
            self._n_rows = c.rows.stop

    # -- constraints (null-space projection) ------------------------------------------------------
    def _rows_now(self, k):
        if not self.constraints:
            return None
        kin = Kinematics(k.x, k.R, k.v, k.w)
        return [t.evaluate(kin) for c in self.constraints for t in c.tables]

    def constraint_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(A (k, n), Adot_qd (k,)) of all constraints: Cdot = A qd, Cddot = A qdd + Adot_qd.
        Row order: the constraints in ``self.constraints`` order, each in the engine's order
        (by primitive kind: point rows x, y, z, then perpendicular, line, distance rows)."""
        k = self._kin()
        blocks = self._rows_now(k)
        if blocks is None:
            return np.zeros((0, self.n)), np.zeros(0)
        J6 = np.concatenate([k.Jv, k.Jw], axis=1)          # (N, 6, n)
        acc0 = np.concatenate([k.a0, k.al0], axis=1)       # (N, 6)
        A, b = [], []
        for r in blocks:
            A.append(np.einsum("mi,min->mn", r.Ja, J6[r.a]) + np.einsum("mi,min->mn", r.Jb, J6[r.b]))
            b.append(r.Jdu + np.einsum("mi,mi->m", r.Ja, acc0[r.a])
                     + np.einsum("mi,mi->m", r.Jb, acc0[r.b]))
        return np.concatenate(A), np.concatenate(b)

    def constraint_values(self) -> np.ndarray:
        """C (k,) at the current state, same rows as ``constraint_rows``."""
        blocks = self._rows_now(self._kin())
        return np.zeros(0) if blocks is None else np.concatenate([r.C for r in blocks])

    def _constrained_parts(self):
        M = self.mass_matrix()
        h = self.bias_forces()
        A, b = self.constraint_rows()
        cho = sla.cho_factor(M)
        MiAT = sla.cho_solve(cho, A.T) if A.size else np.zeros((self.n, 0))
        K = A @ MiAT
        return M, h, A, b, cho, MiAT, _pinvh(K)

    def projection(self) -> np.ndarray:
        """P = I - A^T (A M^-1 A^T)^+ A M^-1 (n, n), of rank n - rank(A) (pseudo-inverse, so
        that redundant rows are allowed)."""
        _, _, A, _, _, MiAT, Kp = self._constrained_parts()
        return np.eye(self.n) - A.T @ Kp @ MiAT.T

    def constrained_forward_dynamics(self, tau):
        """(qdd, lambda) with M qdd + bias = tau + A^T lambda and A qdd + Adot_qd = 0.
        lambda is the minimum-norm multiplier when rows are redundant."""
        tau = check_vector("tau", tau, self.n)
        M, h, A, b, cho, MiAT, Kp = self._constrained_parts()
        qf = sla.cho_solve(cho, tau - h)
        lam = -Kp @ (b + A @ qf)
        return qf + MiAT @ lam, lam

    def constrained_inverse_dynamics(self, qdd, lam=None, check: bool = True) -> np.ndarray:
        """Joint forces that give the accelerations ``qdd`` (which must satisfy
        A qdd + Adot_qd = 0).

        With ``lam=None``: tau = P (M qdd + bias), the one of smallest M^-1-norm (it pushes
        nothing into the constraints: A M^-1 tau = 0). Adding any A^T mu to it changes the
        constraint forces, not the motion. With floating bases, nothing drives a base: tau is
        zero on the bases' coordinates and the constraints (feet on point contacts) carry
        them, lambda being the one nearest to that of P's (a ValueError when no lambda can:
        three point feet carry a base, two do not in general). With ``lam``: tau = M qdd +
        bias - A^T lam, the one for which the constraints apply exactly ``lam`` (engine sign)
        to the mechanism (nonzero on a base unless ``lam`` carries it)."""
        qdd = check_vector("qdd", qdd, self.n)
        M, h, A, b, cho, MiAT, Kp = self._constrained_parts()
        if check and A.size:
            res = A @ qdd + b
            scale = 1.0 + np.abs(b).max(initial=0) + np.abs(A).max() * np.abs(qdd).max(initial=0)
            if np.abs(res).max() > 1e-6 * scale:
                raise ValueError("qdd violates the constraints (A qdd + Adot_qd = "
                                 f"{np.abs(res).max():.3g}); it cannot be produced by any tau")
        full = M @ qdd + h
        if lam is not None:
            lam = check_vector("lam", lam, A.shape[0])
            return full - A.T @ lam
        lam = Kp @ (MiAT.T @ full)
        passive = self._base_coordinates()
        if passive.size:
            # (A^T lam)[passive] = full[passive]: the constraints' force on the bases is all
            # that moves them; of those lambda the nearest to P's (its own when P's is one)
            B = A[:, passive].T
            if B.shape[1]:
                lam = lam + np.linalg.lstsq(B, full[passive] - B @ lam, rcond=1e-10)[0]
            left = full[passive] - B @ lam
            if check and np.abs(left).max(initial=0.0) > 1e-9 * (1.0 + np.abs(full).max()):
                raise ValueError("qdd needs a force on a floating base that its constraints "
                                 f"cannot give ({np.abs(left).max():.3g} N or N m left over "
                                 "on its coordinates); no joint forces produce it "
                                 "(inverse_dynamics gives the base wrench it would need)")
        return full - A.T @ lam

    def _base_coordinates(self) -> np.ndarray:
        """Indices into q of the floating bases' coordinates (no actuator drives them)."""
        return np.array([i for tj in self.tree if tj.kind == "free"
                         for i in range(tj.start, tj.start + tj.dof)], dtype=np.intp)

    # -- Featherstone's FDgq ---------------------------------------------------------------------
    def forward_dynamics_gq(self, tau, gamma_q, q=None, qd=None) -> np.ndarray:
        """FDgq: qdd = G (G^T H G)^-1 G^T (tau - C - H gs) + gs, with
        (qn, qdn, G, gs) = gamma_q(view, q, qd) and H, C evaluated at (qn, qdn). The world is
        left as it was."""
        tau = check_vector("tau", tau, self.n)
        q = self.q if q is None else check_vector("q", q, self.n)
        qd = self.qd if qd is None else check_vector("qd", qd, self.n)
        qn, qdn, G, gs = gamma_q(self, q, qd)
        G = np.asarray(G, float).reshape(self.n, -1)
        gs = np.asarray(gs, float).reshape(self.n)
        with self.posed(qn, qdn):
            H = self.mass_matrix()
            C = self.bias_forces()
        y = np.linalg.solve(G.T @ H @ G, G.T @ (tau - C - H @ gs))
        return G @ y + gs

    def least_constraint_accelerations(self, tau):
        """Gauss's principle's KKT form at the current state: (qdd, f) from
        [[M, -A^T], [A, 0]] [qdd; f] = [tau - bias; -Adot_qd] (f = lambda)."""
        from .tools import least_constraint_accelerations
        tau = check_vector("tau", tau, self.n)
        A, b = self.constraint_rows()
        return least_constraint_accelerations(self.mass_matrix(), tau - self.bias_forces(), A, b)
