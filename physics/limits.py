"""Joint limits, motors and servos: bounded rows on one joint coordinate each.

Every such row acts on a scalar coordinate c of a joint (hinge angle, slider position, twist
or swing angle of a ball joint) through its rate Jacobian J (dc/dt = J u):

- limit ``lo``: C = c - lo >= 0 with lambda >= 0 (and ``hi``: C = hi - c >= 0 on -J);
  the row lets the joint approach the limit at up to C / h and pushes out a violation with
  the world's stabilisation time T;
- motor: drives dc/dt to a velocity with |lambda| <= max_force;
- servo: an implicit spring-damper towards a target coordinate (soft row with compliance
  1 / (h (k h + d))), |lambda| <= max_force.

All joints of one coordinate kind are evaluated in one vectorised call.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .contact_rows import BoundedRows
from .math3d import cross, dot, rotate
from .rows import Kinematics, Rows, line_rows


@dataclass
class CoordinateTable:
    """One coordinate per entry. kind: 'angle' (hinge), 'position' (slider), 'twist',
    'swing' (ball). a, b body rows; owner joint indices; args per kind (local vectors)."""
    kind: str
    owner: np.ndarray
    a: np.ndarray
    b: np.ndarray
    args: tuple
    lo: np.ndarray          # limit values (-inf / inf for none)
    hi: np.ndarray
    motor: np.ndarray       # (k, 4): mode (0 none, 1 velocity motor, 2 servo), value, k, d
    max_force: np.ndarray


def _zeros(k):
    return np.zeros((k, 3))


def coordinates(table: CoordinateTable, kin: Kinematics):
    """Coordinate values c (k,) and rate Jacobians Ja, Jb (k, 6)."""
    a, b = table.a, table.b
    if table.kind == "position":
        r = line_rows(kin, a, b, *table.args)
        return r.C, r.Ja, r.Jb
    if table.kind == "swing":
        ua = rotate(kin.R[a], table.args[0])
        ub = rotate(kin.R[b], table.args[1])
        axis = cross(ua, ub)
        s = np.linalg.norm(axis, axis=1)
        c = np.arctan2(s, dot(ua, ub))
        axis = axis / np.maximum(s, 1e-12)[:, None]
        z = _zeros(len(a))
        return c, np.concatenate([z, -axis], 1), np.concatenate([z, axis], 1)
    # hinge angle and ball twist: rotation of a reference vector about an axis fixed in a
    axis_a, ref_a, ref_b = table.args
    u = rotate(kin.R[a], axis_a)
    ra = rotate(kin.R[a], ref_a)
    rb = rotate(kin.R[b], ref_b)
    rb = rb - dot(rb, u)[:, None] * u
    c = np.arctan2(dot(cross(ra, rb), u), dot(ra, rb))
    z = _zeros(len(a))
    return c, np.concatenate([z, -u], 1), np.concatenate([z, u], 1)


def bounded_joint_rows(tables, kin: Kinematics, h: float, T: float):
    """BoundedRows for every limit, motor and servo, and the owning joint of each row."""
    blocks, owners = [], []
    for t in tables:
        c, Ja, Jb = coordinates(t, kin)
        for sign, bound in ((1.0, t.lo), (-1.0, t.hi)):
            on = np.flatnonzero(np.isfinite(bound))
            if on.size:
                C = sign * (c[on] - bound[on])
                target = np.where(C > 0, -C / h, -C / T)
                blocks.append(_block(t, on, sign * Ja[on], sign * Jb[on], C, target,
                                     np.zeros(on.size), np.full(on.size, np.inf), np.zeros(on.size)))
                owners.append(t.owner[on])
        mode = t.motor[:, 0]
        for m in (1, 2):
            on = np.flatnonzero(mode == m)
            if not on.size:
                continue
            value, k, d = t.motor[on, 1], t.motor[on, 2], t.motor[on, 3]
            if m == 1:
                target, cfm = value, np.zeros(on.size)
            else:
                target = k * (value - c[on]) / (k * h + d)
                cfm = 1.0 / (h * (k * h + d))
            f = t.max_force[on]
            blocks.append(_block(t, on, Ja[on], Jb[on], np.zeros(on.size), target, -f, f, cfm))
            owners.append(t.owner[on])
    if not blocks:
        return None, np.zeros(0, dtype=np.intp)
    return BoundedRows.concatenate(blocks), np.concatenate(owners)


def _block(t, on, Ja, Jb, C, target, lo, hi, cfm):
    n = on.size
    rows = Rows(t.a[on], t.b[on], C, Ja, Jb, np.zeros(n))
    return BoundedRows(rows, lo, hi, target, np.full(n, -1), np.zeros(n), cfm)


def build_coordinate_tables(joints) -> list[CoordinateTable]:
    """Gather the joints' coordinate specs (done once per topology change)."""
    groups: dict[str, list] = {}
    for index, joint in enumerate(joints):
        for kind, spec in joint._coordinate_specs():
            groups.setdefault(kind, []).append((index, *spec))
    tables = []
    for kind, items in groups.items():
        cols = list(zip(*items))
        owner, a, b = (np.array(c, dtype=np.intp) for c in cols[:3])
        nargs = len(cols) - 7
        args = tuple(np.array(c, dtype=float) for c in cols[3:3 + nargs])
        lo, hi, motor, max_force = (np.array(c, dtype=float) for c in cols[3 + nargs:])
        tables.append(CoordinateTable(kind, owner, a, b, args, lo, hi, motor.reshape(-1, 4), max_force))
    return tables
