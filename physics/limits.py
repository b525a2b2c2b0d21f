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

Hinge angles are continuous (multi-turn): the world keeps each hinge's angle from the end of
the last step (``World._joint_angle``) and every evaluation takes the branch of the wrapped
angle nearest to it, so a coordinate never jumps by 2 pi when a hinge turns past +-pi.

Ball joints use the swing-twist decomposition of the relative rotation about the twist axis
t: swing is the angle between t carried by a and by b (the cone), twist is the rotation about
t left after undoing the swing by the shortest rotation taking t_b onto t_a, i.e.
2 atan2(q_t, q_w) of the relative quaternion in a's joint frame. Twist is well defined for
every swing below pi, and its rate is ((t_a + t_b) / (1 + t_a . t_b)) . (w_b - w_a).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .contact_rows import BoundedRows
from .math3d import cross, dot, quat_to_matrix, rotate
from .rows import Kinematics, Rows, line_rows


@dataclass
class CoordinateTable:
    """One coordinate per entry. kind: 'angle' (hinge, continuous), 'position' (slider),
    'twist', 'swing' (ball). a, b body rows; owner joint indices; args per kind (local vectors)."""
    kind: str
    owner: np.ndarray
    a: np.ndarray
    b: np.ndarray
    args: tuple
    lo: np.ndarray          # limit values (-inf / inf for none)
    hi: np.ndarray
    motor: np.ndarray       # (k, 4): mode (0 none, 1 velocity motor, 2 servo), value, k, d
    max_force: np.ndarray
    world: object = None    # for 'angle': the world whose _joint_angle holds the last angles


def wrap_near(angle, reference):
    """angle + 2 pi k (elementwise) closest to ``reference``: unwraps a wrapped angle."""
    return reference + np.remainder(angle - reference + np.pi, 2.0 * np.pi) - np.pi


def axis_angle(Ra, Rb, axis_a, ref_a, ref_b):
    """Wrapped hinge angle in [-pi, pi] (k,) of ref_b (local to b) from ref_a (local to a)
    about axis_a (local to a), and the world axis (k, 3). Ra, Rb (k, 3, 3)."""
    u = rotate(Ra, axis_a)
    ra = rotate(Ra, ref_a)
    rb = rotate(Rb, ref_b)
    rb = rb - dot(rb, u)[:, None] * u
    return np.arctan2(dot(cross(ra, rb), u), dot(ra, rb)), u


def twist_coordinate(Ra, Rb, ta, tb, ra, rb):
    """Swing-twist twist angle (k,) in [-pi, pi] and its rate vector G (k, 3), world frame:
    d(twist)/dt = G . (w_b - w_a). ta, tb: the twist axis local to a and b; ra, rb: a
    reference direction perpendicular to it, local to a and b (equal in the world at zero)."""
    ua, ub = rotate(Ra, ta), rotate(Rb, tb)
    ra, rb = rotate(Ra, ra), rotate(Rb, rb)
    c = dot(ua, ub)
    one_plus_c = np.maximum(1.0 + c, 1e-12)
    k = cross(ub, ua)                                   # sin(swing) times the swing axis
    # undo the swing: the shortest rotation taking ub onto ua, applied to rb (Rodrigues)
    rb = c[:, None] * rb + cross(k, rb) + (dot(k, rb) / one_plus_c)[:, None] * k
    twist = np.arctan2(dot(cross(ra, rb), ua), dot(ra, rb))
    return twist, (ua + ub) / one_plus_c[:, None]


def hinge_angles(world, owner, a, b, axis_a, ref_a, ref_b, R=None):
    """Continuous hinge angles (k,) and world axes (k, 3): the wrapped angle at the current
    (or given, R (N, 3, 3)) rotations, taken nearest to each hinge's last angle."""
    if R is None:
        Ra, Rb = quat_to_matrix(world._q[a]), quat_to_matrix(world._q[b])
    else:
        Ra, Rb = R[a], R[b]
    c, u = axis_angle(Ra, Rb, axis_a, ref_a, ref_b)
    return wrap_near(c, world._joint_angle[owner]), u


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
    z = _zeros(len(a))
    if table.kind == "twist":
        c, g = twist_coordinate(kin.R[a], kin.R[b], *table.args)
        return c, np.concatenate([z, -g], 1), np.concatenate([z, g], 1)
    # hinge angle: rotation of a reference vector about an axis fixed in a, continuous
    if table.world is not None:
        c, u = hinge_angles(table.world, table.owner, a, b, *table.args, R=kin.R)
    else:
        c, u = axis_angle(kin.R[a], kin.R[b], *table.args)
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
        world = joints[int(owner[0])]._world if kind == "angle" else None
        tables.append(CoordinateTable(kind, owner, a, b, args, lo, hi, motor.reshape(-1, 4),
                                      max_force, world))
    return tables
