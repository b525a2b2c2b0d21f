"""Constraint row primitives, each evaluated for all of its instances in one vectorised call.

Every joint is made of a few primitive kinds of equality row, so the step evaluates one
function per primitive kind, not per joint:

- ``point``: the two anchor points coincide (3 rows, metres): C = p_b - p_a.
- ``perpendicular``: a unit vector fixed in a stays perpendicular to one fixed in b
  (1 row, ~radians): C = u_a . v_b.
- ``line``: the anchor of b stays on a plane through the anchor of a whose normal t is fixed
  in a (1 row, metres): C = t_a . (p_b - p_a).
- ``distance``: the anchors stay a fixed distance apart (1 row, metres): C = |p_b - p_a| - L.

Each function returns, per row: C, the Jacobian blocks Ja, Jb (rows, 6) acting on u = [v; w]
of bodies a and b, and Jdot u (rows,), the velocity product term of the second derivative:
Cddot = J udot + Jdot u. Line and distance rows take the body kinematics (positions x (N, 3),
rotations R (N, 3, 3), linear and angular velocities v, w (N, 3), all world frame); point and
perpendicular rows take their body vectors already turned into the world, for all tables at
once, and their Jdot u from ``Tables.velocity_products``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .math3d import cross, dot, einsum, rotate, skew


@dataclass
class Kinematics:
    """World-frame body state the row functions read. Arrays (N, 3) and R (N, 3, 3)."""
    x: np.ndarray
    R: np.ndarray
    v: np.ndarray
    w: np.ndarray
    velocity_terms: bool = True     # False: Jdot u may be left at zero (only J is wanted)


@dataclass
class Rows:
    """A block of evaluated rows. a, b: (m,) body indices; C, Jdu: (m,); Ja, Jb: (m, 6)."""
    a: np.ndarray
    b: np.ndarray
    C: np.ndarray
    Ja: np.ndarray
    Jb: np.ndarray
    Jdu: np.ndarray
    # [Ja | Jb] (m, 12), C-contiguous; Ja and Jb may be views of it (see ``blocks``)
    side_blocks: np.ndarray | None = field(default=None, repr=False, compare=False)
    # the rotated vectors of all point and perpendicular tables, stacked (Tables.rotated)
    turned: np.ndarray | None = field(default=None, repr=False, compare=False)

    @staticmethod
    def concatenate(blocks: list["Rows"], sides: tuple | None = None, turned=None) -> "Rows":
        """The rows of ``blocks`` one after the other. ``sides``: their a and b stacked, if
        at hand (they only change with the topology, see Tables.a); ``turned``: see the field."""
        if len(blocks) == 1:
            return blocks[0]
        a, b = sides if sides is not None else (np.concatenate([r.a for r in blocks]),
                                                np.concatenate([r.b for r in blocks]))
        C, Jdu = np.concatenate([r.C for r in blocks]), np.concatenate([r.Jdu for r in blocks])
        if all(r.side_blocks is not None for r in blocks):
            # one copy of [Ja | Jb], with Ja and Jb views of it (not three concatenations)
            J = np.concatenate([r.side_blocks for r in blocks])
            return Rows(a, b, C, J[:, :6], J[:, 6:], Jdu, side_blocks=J, turned=turned)
        return Rows(a, b, C, np.concatenate([r.Ja for r in blocks]),
                    np.concatenate([r.Jb for r in blocks]), Jdu, turned=turned)

    @property
    def count(self) -> int:
        return self.C.shape[0]

    def with_velocity_products(self, jdu: np.ndarray) -> "Rows":
        """These rows with another Jdu (m,) (the same positions, other velocities)."""
        return Rows(self.a, self.b, self.C, self.Ja, self.Jb, jdu, self.side_blocks,
                    self.turned)

    def at(self, index) -> "Rows":
        """The rows ``index`` (a slice, a mask or row numbers) of these, as a block of their
        own."""
        fields = (self.a, self.b, self.C, self.Ja, self.Jb, self.Jdu)
        if isinstance(index, np.ndarray) and index.dtype.kind in "iu":
            return Rows(*(x.take(index, axis=0) for x in fields))
        return Rows(*(x[index] for x in fields))

    def on_bodies(self, a: np.ndarray, b: np.ndarray) -> "Rows":
        """These rows on bodies a, b (m,) of another numbering of the bodies (the same rows)."""
        return Rows(a, b, self.C, self.Ja, self.Jb, self.Jdu, self.side_blocks)

    @property
    def blocks(self) -> np.ndarray:
        """[Ja | Jb] (m, 12): J in the layout of ``assembly.Scatter``'s products."""
        if self.side_blocks is None:
            self.side_blocks = np.concatenate([self.Ja, self.Jb], axis=1)
        return self.side_blocks

    def velocity(self, v: np.ndarray, w: np.ndarray) -> np.ndarray:
        """J u per row (m,)."""
        u = np.concatenate([v, w], axis=1)
        return (einsum("ij,ij->i", self.Ja, u.take(self.a, axis=0))
                + einsum("ij,ij->i", self.Jb, u.take(self.b, axis=0)))


# (x.take(rows, axis=0) is x[rows]: numpy's fancy indexing of rows is several times slower)
def _anchors(k: Kinematics, a, b, la, lb):
    ra = rotate(k.R.take(a, axis=0), la)
    rb = rotate(k.R.take(b, axis=0), lb)
    return ra, rb, k.x.take(a, axis=0) + ra, k.x.take(b, axis=0) + rb


def _turning(w, r):
    """w x r and w x (w x r) (k, 3) of world vectors r carried by bodies turning at w (both
    gathered, (k, 3)): the rate of change of r and the velocity part of its second derivative."""
    wxr = cross(w, r)
    return wxr, cross(w, wxr)


def _centripetal(wwxra, wwxrb):
    """The velocity part of p_b'' - p_a'' from w x (w x r) (``_turning``) of the anchor
    offsets on a and on b (k, 3)."""
    return wwxrb - wwxra


def _anchor_motion(k: Kinematics, a, b, ra, rb):
    """wa, p_b' - p_a' and the velocity part of p_b'' - p_a'' (k, 3) of anchors at offsets ra
    (on bodies a) and rb (on b): each body's w gathered and crossed with its offset once."""
    wa = k.w.take(a, axis=0)
    wxra, wwxra = _turning(wa, ra)
    wxrb, wwxrb = _turning(k.w.take(b, axis=0), rb)
    return (wa, k.v.take(b, axis=0) + wxrb - k.v.take(a, axis=0) - wxra,
            _centripetal(wwxra, wwxrb))


# The three rows [Ja | Jb] of a point triple, flattened (36,), are linear in the offsets
# [ra, rb]: -1 and skew(ra) on a, 1 and skew(-rb) on b. As one product with this (6, 36)
# matrix plus the constant part (each entry is one +-r_k or a constant: the same bits).
_SKEW_BASIS = skew(np.eye(3)).transpose(1, 2, 0)     # [i, j, k] = skew(e_k)[i, j]
_POINT_J = np.zeros((3, 12, 6))
_POINT_J[:, 3:6, :3] = _SKEW_BASIS
_POINT_J[:, 9:, 3:] = -_SKEW_BASIS
_POINT_J = _POINT_J.reshape(36, 6).T.copy()
_POINT_J_CONSTANT = np.zeros((3, 12))
_POINT_J_CONSTANT[:, :3], _POINT_J_CONSTANT[:, 6:9] = -np.eye(3), np.eye(3)
_POINT_J_CONSTANT = _POINT_J_CONSTANT.reshape(36)


def point_rows(k: Kinematics, layout, rotated, jdu=None) -> Rows:
    """Anchor la (local to a) coincides with lb (local to b). 3 rows per instance, xyz order.
    ``layout``: PrimitiveTable.point_layout() of these instances (with la, lb); ``rotated``:
    the world offsets [ra; rb] (2n, 3) (see Tables.rotated); ``jdu``: their Jdot u
    (Tables.velocity_products), zero if not given."""
    n = rotated.shape[0] // 2
    both, _, rows_a, rows_b = layout
    ra, rb = rotated[:n], rotated[n:]
    J = np.concatenate([ra, rb], axis=1) @ _POINT_J + _POINT_J_CONSTANT
    J = J.reshape(3 * n, 12)            # [Ja | Jb] of each row, Ja and Jb views of it
    if jdu is None:
        jdu = np.zeros(3 * n)
    return Rows(rows_a, rows_b, anchor_gap(k, both, rotated), J[:, :6], J[:, 6:], jdu,
                side_blocks=J)


def anchor_gap(k: Kinematics, both, rotated):
    """C of point rows (3n,): the world anchor of b minus that of a, (xb + rb) - (xa + ra),
    x-y-z per instance. both: the bodies [a; b] (2n,), rotated: the world offsets [ra; rb]
    (2n, 3). (One expression for the rows and for the position iterations' values: the
    same bits for the same state.)"""
    n = rotated.shape[0] // 2
    x = k.x.take(both, axis=0)                          # xa and xb in one gather
    return ((x[n:] + rotated[n:]) - (x[:n] + rotated[:n])).reshape(-1)


def point_layout(a, b, la, lb):
    """What point_rows gathers with: both bodies and both anchors stacked, and the body of
    each row on either side."""
    return np.concatenate([a, b]), np.concatenate([la, lb]), np.repeat(a, 3), np.repeat(b, 3)


def perpendicular_rows(a, b, rotated, jdu=None) -> Rows:
    """Unit vector ua (local to a) perpendicular to vb (local to b). 1 row per instance.
    ``rotated``: the world vectors [u; v] (2n, 3) of ua and vb (see Tables.rotated);
    ``jdu``: their Jdot u (Tables.velocity_products), zero if not given."""
    n = a.shape[0]
    u, v = rotated[:n], rotated[n:]
    J = np.zeros((n, 12))               # [Ja | Jb]: (0, u x v) on a, (0, -(u x v)) on b
    J[:, 3:6] = cross(u, v)
    np.negative(J[:, 3:6], out=J[:, 9:])
    if jdu is None:
        jdu = np.zeros(n)
    return Rows(a, b, dot(u, v), J[:, :6], J[:, 6:], jdu, side_blocks=J)


def _perpendicular_jdu(u, v, wxu, wxv, wa, wb):
    """Jdot u of perpendicular rows with world vectors u (on a) and v (on b) (k, 3), their
    rates wa x u and wb x v (``_turning``) and the bodies' angular velocities wa, wb."""
    # d/dt (u x v) with u, v carried by their bodies, dotted with (wa - wb)
    return dot(cross(wxu, v) + cross(u, wxv), wa - wb)


def _rotated_jdu(kind, rotated, w, wxr, wwxr):
    """Jdu of the rows of one point or perpendicular table (``kind``) from its rotated
    vectors [side a; side b] (2n, 3) (PrimitiveTable.rotated), the angular velocities w
    (2n, 3) of the bodies that carry them and how they turn, wxr and wwxr (``_turning``)."""
    n = rotated.shape[0] // 2
    if kind == "point":
        return _centripetal(wwxr[:n], wwxr[n:]).reshape(-1)
    return _perpendicular_jdu(rotated[:n], rotated[n:], wxr[:n], wxr[n:], w[:n], w[n:])


def line_rows(k: Kinematics, a, b, la, lb, ta) -> Rows:
    """Anchor of b stays in the plane through the anchor of a with normal ta (local to a)."""
    ra, rb, pa, pb = _anchors(k, a, b, la, lb)
    t = rotate(k.R.take(a, axis=0), ta)
    d = pb - pa
    if k.velocity_terms:
        wa, ddot, centripetal = _anchor_motion(k, a, b, ra, rb)
        wxt = cross(wa, t)
        jdu = dot(t, centripetal) + 2 * dot(wxt, ddot) + dot(cross(wa, wxt), d)
    else:
        jdu = np.zeros(a.shape[0])
    Ja = np.concatenate([-t, cross(t, pb - k.x.take(a, axis=0))], 1)
    Jb = np.concatenate([t, cross(rb, t)], 1)
    return Rows(a, b, dot(t, d), Ja, Jb, jdu)


def distance_rows(k: Kinematics, a, b, la, lb, length) -> Rows:
    """Anchors stay ``length`` apart (length > 0; 0 gives the distance itself as C)."""
    ra, rb, pa, pb = _anchors(k, a, b, la, lb)
    d = pb - pa
    dist = np.sqrt(dot(d, d))
    # (anchors that meet have no direction between them: a rope's rows then have none)
    n = d / np.maximum(dist, 1e-300)[:, None]
    if k.velocity_terms:
        _, ddot, centripetal = _anchor_motion(k, a, b, ra, rb)
        nd = dot(n, ddot)
        jdu = dot(n, centripetal) + (dot(ddot, ddot) - nd * nd) / dist
    else:
        jdu = np.zeros(a.shape[0])
    Ja = np.concatenate([-n, cross(n, ra)], 1)
    Jb = np.concatenate([n, cross(rb, n)], 1)
    return Rows(a, b, dist - length, Ja, Jb, jdu)


@dataclass
class PrimitiveTable:
    """Flat arrays of one primitive kind for every joint that uses it. ``owner`` (k,) is the
    index of the joint each instance belongs to; ``args`` are the extra per-instance arrays."""
    kind: str
    a: np.ndarray
    b: np.ndarray
    owner: np.ndarray
    args: tuple = field(default_factory=tuple)
    _point_layout: tuple | None = field(default=None, repr=False, compare=False)

    ROWS_PER_INSTANCE = {"point": 3, "perpendicular": 1, "line": 1, "distance": 1, "rolling": 3}

    def evaluate(self, k: Kinematics, rotated=None, jdu=None) -> Rows:
        """The rows at ``k``; ``rotated``, ``jdu``: a point or perpendicular table's rotated
        vectors (Tables.rotated) and, if ``k`` wants velocity terms, their Jdot u
        (Tables.velocity_products), made here if not given (a table evaluated alone: the
        constraints of jointspace.ArticulatedView)."""
        if self.kind == "rolling":              # its own module; imported here, not at load
            from .rolling import rolling_rows
            return rolling_rows(k, self.a, self.b, *self.args)
        if self.kind not in ROTATED:
            return PRIMITIVES[self.kind](k, self.a, self.b, *self.args)
        if rotated is None:
            rotated = self.rotated(k)
        if jdu is None and k.velocity_terms:
            w = k.w.take(self.rotation_layout()[0], axis=0)
            jdu = _rotated_jdu(self.kind, rotated, w, *_turning(w, rotated))
        if self.kind == "point":
            return point_rows(k, self.point_layout(), rotated, jdu)
        return perpendicular_rows(self.a, self.b, rotated, jdu)

    def point_layout(self):
        if self._point_layout is None:
            self._point_layout = point_layout(self.a, self.b, *self.args)
        return self._point_layout

    def values(self, k: Kinematics, rotated=None) -> np.ndarray:
        """C only (m,), without the Jacobians: what a position iteration needs. ``rotated``:
        this table's rotated vectors (Tables.rotated; None for the other kinds)."""
        if self.kind in ROTATED:
            n, r = self.a.shape[0], rotated
            if self.kind == "perpendicular":
                return dot(r[:n], r[n:])
            return anchor_gap(k, self.point_layout()[0], r)
        return self.evaluate(k).C

    def rotated(self, k: Kinematics) -> np.ndarray:
        """The body-fixed vectors of a point or perpendicular table in the world (2n, 3):
        those on side a, then those on side b (Tables.rotated turns all tables' at once)."""
        bodies, local = self.rotation_layout()
        return rotate(k.R.take(bodies, axis=0), local)

    def rotation_layout(self):
        """The bodies (2n,) and local vectors (2n, 3) that ``rotated`` turns."""
        if self.kind == "point":
            return self.point_layout()[:2]
        return np.concatenate([self.a, self.b]), np.concatenate(self.args)

    @property
    def row_owner(self) -> np.ndarray:
        return np.repeat(self.owner, self.ROWS_PER_INSTANCE[self.kind])


# kinds whose rows start from body vectors rotated (all tables' at once, Tables.rotated), in
# PrimitiveTable.evaluate; the others by their row function
ROTATED = ("point", "perpendicular")
PRIMITIVES = {"line": line_rows, "distance": distance_rows}


class StackedVectors:
    """Body-fixed vectors of several tables, stacked so that one gather and one product turn
    them all into the world (per-call costs dominate arrays of a few hundred rows).
    ``parts``: per table a list of (bodies (k,), local vectors (k, 3)), empty for none."""

    def __init__(self, parts):
        bodies, local, self.spans, start = [], [], [], 0
        for table_parts in parts:
            span = []
            for b, v in table_parts:
                bodies.append(b)
                local.append(v)
                span.append((start, start + b.shape[0]))
                start += b.shape[0]
            self.spans.append(span)          # per table the (start, stop) of each part
        self.bodies = np.concatenate(bodies) if bodies else None
        self.local = np.concatenate(local) if local else None

    def rotated(self, R: np.ndarray):
        """All the vectors in the world for body rotations R (N, 3, 3), stacked (M, 3) (None
        if there are none), and per table a tuple of its parts (empty for none)."""
        if self.bodies is None:
            return None, [()] * len(self.spans)
        r = rotate(R.take(self.bodies, axis=0), self.local)
        return r, [tuple(r[i:j] for i, j in span) for span in self.spans]


class Tables(list):
    """A model's primitive tables (``build_tables``) and what only changes with them: the
    body-fixed vectors of all point and perpendicular tables (StackedVectors), and the side
    bodies of all rows: ``a``, ``b`` (m,), the bodies of each row in evaluation order (the
    rows' own a and b, stacked)."""

    def __init__(self, tables=()):
        super().__init__(tables)
        self._stack = None
        self.a, self.b = (
            np.concatenate([np.repeat(getattr(t, side), t.ROWS_PER_INSTANCE[t.kind])
                            for t in self] or [[]]).astype(np.intp) for side in ("a", "b"))

    def stack(self) -> StackedVectors:
        """The point and perpendicular tables' vectors (PrimitiveTable.rotation_layout)."""
        if self._stack is None:
            self._stack = StackedVectors([[t.rotation_layout()] if t.kind in ROTATED else []
                                          for t in self])
        return self._stack

    def rotated(self, k: Kinematics):
        """The rotated vectors of all point and perpendicular tables at ``k``, stacked (M, 3)
        (None if there are none), and per table its part (2n, 3) or None."""
        r, parts = self.stack().rotated(k.R)
        return r, [p[0] if p else None for p in parts]

    def velocity_products(self, turned: np.ndarray, k: Kinematics) -> list:
        """Per table the Jdu of its point or perpendicular rows at the velocities of ``k``
        from the stacked rotated vectors ``turned`` (``rotated``), or None for other kinds:
        every body's w gathered and crossed with its vectors once for all tables."""
        stack = self.stack()
        w = k.w.take(stack.bodies, axis=0)
        wxr, wwxr = _turning(w, turned)     # how each rotated vector turns
        out = []
        for table, span in zip(self, stack.spans):
            if not span:
                out.append(None)
                continue
            (i, j), = span
            out.append(_rotated_jdu(table.kind, turned[i:j], w[i:j], wxr[i:j], wwxr[i:j]))
        return out


def build_tables(instances: dict[str, list[tuple]]) -> "Tables":
    """Stack per-joint primitive instances into tables (done once per topology change).

    ``instances[kind]`` is a list of tuples ``(owner, a, b, *args)``, one per instance.
    """
    tables = []
    if instances.get("coupling"):
        from .couplings import CouplingTable
        tables.append(CouplingTable(instances["coupling"]))
    for kind in (*ROTATED, *PRIMITIVES, "rolling"):
        items = instances.get(kind, [])
        if not items:
            continue
        cols = list(zip(*items))
        owner = np.array(cols[0], dtype=np.intp)
        a = np.array(cols[1], dtype=np.intp)
        b = np.array(cols[2], dtype=np.intp)
        args = tuple(np.array(c, dtype=float) for c in cols[3:])
        tables.append(PrimitiveTable(kind, a, b, owner, args))
    return Tables(tables)


def evaluate_tables(tables: Tables, k: Kinematics, c_only: bool = False):
    """All rows (``Rows``), or with ``c_only`` just the constraint values C (m,)."""
    turned, rotated = tables.rotated(k)
    if c_only:
        return np.concatenate([t.values(k, r) if hasattr(t, "values") else t.evaluate(k).C
                               for t, r in zip(tables, rotated)])
    # the point and perpendicular rows' Jdot u for all their tables at once
    products = (tables.velocity_products(turned, k) if turned is not None and k.velocity_terms
                else [None] * len(tables))
    parts = [t.evaluate(k, r, jdu) if r is not None else t.evaluate(k)
             for t, r, jdu in zip(tables, rotated, products)]
    if len(parts) == 1:
        parts[0].turned = turned
        return parts[0]
    return Rows.concatenate(parts, (tables.a, tables.b), turned)


def velocity_products(tables: Tables, rows: Rows, k: Kinematics) -> np.ndarray:
    """Jdu (m,) for the velocities of ``k`` of the ``rows`` that ``evaluate_tables`` made at
    the positions of ``k``: C and J do not depend on the velocities, so only Jdu is redone
    (point and perpendicular rows from their kept rotated vectors, ``Rows.turned``; other
    kinds are evaluated again)."""
    if rows.turned is not None:         # None: no point or perpendicular tables
        fused = tables.velocity_products(rows.turned, k)
    else:
        fused = [None] * len(tables)
    products = [table.evaluate(k).Jdu if jdu is None else jdu
                for table, jdu in zip(tables, fused)]
    return products[0] if len(products) == 1 else np.concatenate(products)
