"""Joint limits, motors and servos: bounded rows on one joint coordinate each.

Every such row acts on a scalar coordinate c of a joint (hinge angle, slider position, twist
or swing angle of a ball joint) through its rate Jacobian J (dc/dt = J u):

- limit ``lo``: C = c - lo >= 0 with lambda >= 0 (and ``hi``: C = hi - c >= 0 on -J);
  the row lets the joint approach the limit at up to C / h and pushes out a violation with
  the world's stabilisation time T;
- motor: drives dc/dt to a velocity with |lambda| <= max_force;
- servo: an implicit spring-damper towards a target coordinate (soft row with compliance
  1 / (h (k h + d))), |lambda| <= max_force;
- friction: drives dc/dt to zero with |lambda| <= friction (a joint's dry friction; a ball
  joint's acts on three ``axis`` coordinates, the rates about body a's axes, which have no
  value of their own).

All joints of one coordinate kind are evaluated in one vectorised call. A limit becomes a row
only near its bound (within ANGULAR_LIMIT_MARGIN / LINEAR_LIMIT_MARGIN) or when twice its
present rate would reach the bound within the step (LIMIT_REACH, ``bounded_joint_rows``);
motors, servos and friction always are rows.

Hinge angles are continuous (multi-turn): the world keeps each hinge's angle from the end of
the last step (``World._joint_angle``) and every evaluation takes the branch of the wrapped
angle nearest to it, so a coordinate never jumps by 2 pi when a hinge turns past +-pi.

A universal joint's two angles (``cardan_a``, ``cardan_b``) are wrapped, not continuous: the
turn of axis_b (carried by b) about axis_a (carried by a) from where a saw it at creation,
and the turn of axis_a as b saw it at creation about axis_b from axis_a. The joint keeps the
two axes perpendicular, so both are defined in every pose, and the relative angular
velocity is rate_a axis_a + rate_b axis_b.

Ball joints use the swing-twist decomposition of the relative rotation about the twist axis
t: swing is the angle between t carried by a and by b (the cone), twist is the rotation about
t left after undoing the swing by the shortest rotation taking t_b onto t_a, i.e.
2 atan2(q_t, q_w) of the relative quaternion in a's joint frame. Twist is well defined for
every swing below pi, and its rate is ((t_a + t_b) / (1 + t_a . t_b)) . (w_b - w_a).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .contact_rows import BoundedRows
from .math3d import (cross, dot, quat_to_matrix, rotate, rotate_by_quat,
                     rotation_vector_to_quat)
from .push_out import push_out
from .rows import Kinematics, Rows, StackedVectors, distance_rows, line_rows
from .validation import checked_array

# a joint's friction is a velocity motor at 0 (mode, value, k, d; see CoordinateTable.motor)
FRICTION_MOTOR = (1.0, 0.0, 0.0, 0.0)

# A limit row is made within this of its limit (and when its present rate, LIMIT_REACH times
# over, would reach it within the step): rad for angles, m for slider positions
ANGULAR_LIMIT_MARGIN = 0.05
LINEAR_LIMIT_MARGIN = 0.01
LIMIT_REACH = 2.0
# rad: where a solve or SHAKE turns no body by more than this beyond what the rows were made
# from, no angular limit can be passed by its margin (swing, twist and hinge angles move at
# most 1.6 times the bodies' relative turn below 1.3 rad of swing): ``limits_overrun`` and
# ``placement.held_at_limits`` look no further (each cost a 4-ragdoll pile 0.3 ms a step)
SETTLED_TURN = 0.01
# A limit overshot by no more than this is left alone, as a contact's penetration within its
# slop: pushed out, the overshoot that stopping a fast joint leaves (a few thousandths of a
# radian at 100 rad/s) stayed in the joint as a rate, 0.07 % of the speed it hit with
ANGULAR_LIMIT_SLOP = 1e-3        # rad
LINEAR_LIMIT_SLOP = 3e-4         # m
# rad/s (m/s for a slider): of the push back of an overshoot, what the joint keeps as a rate
# after the step; the rest turns it back without (``BoundedRows.push``). Kept whole, the push
# was the energy of the overshoot: a 1 m rod resting at 0.5 rad given limits of +-0.2 swung
# back at 18 rad/s. Limits met at speed overshoot by up to a hundredth of a radian: pushed
# back at up to this rate they keep it (a second solve for each would cost a pile of ragdolls
# a fifth more).
KEPT_LIMIT_PUSH = 1.0


@dataclass
class CoordinateTable:
    """One coordinate per entry. kind: 'angle' (hinge, continuous), 'position' (slider),
    'length' (distance joint), 'twist', 'swing', 'axis' (ball: only a rate about a vector
    fixed in a), 'cardan_a', 'cardan_b' (universal, wrapped). a, b body rows; owner joint
    indices; args per kind (local vectors)."""
    kind: str
    owner: np.ndarray
    a: np.ndarray
    b: np.ndarray
    args: tuple
    lo: np.ndarray          # limit values (-inf / inf for none)
    hi: np.ndarray
    motor: np.ndarray       # (k, 4): mode (0 none, 1 velocity motor, 2 servo), value, k, d
    max_force: np.ndarray
    friction: np.ndarray    # (k,) N m or N (0: none)
    world: object           # for 'angle': the world whose _joint_angle holds the last angles


def wrap_near(angle, reference):
    """angle + 2 pi k (elementwise) closest to ``reference``: unwraps a wrapped angle."""
    return reference + np.remainder(angle - reference + np.pi, 2.0 * np.pi) - np.pi


def angle_about(u, ra, rb):
    """Wrapped angle in [-pi, pi] (k,) of the world vector rb from ra about the unit u, and u
    (all (k, 3))."""
    rb = rb - dot(rb, u)[:, None] * u
    return np.arctan2(dot(cross(ra, rb), u), dot(ra, rb)), u


def twist_coordinate(Ra, Rb, ta, tb, ra, rb):
    """Swing-twist twist angle (k,) in [-pi, pi] and its rate vector G (k, 3), world frame:
    d(twist)/dt = G . (w_b - w_a). ta, tb: the twist axis local to a and b; ra, rb: a
    reference direction perpendicular to it, local to a and b (equal in the world at zero)."""
    return twist_of(rotate(Ra, ta), rotate(Rb, tb), rotate(Ra, ra), rotate(Rb, rb))


def twist_of(ua, ub, ra, rb):
    """twist_coordinate from the world twist axes ua, ub and reference directions ra, rb of
    the two bodies (k, 3)."""
    c = dot(ua, ub)
    one_plus_c = np.maximum(1.0 + c, 1e-12)
    k = cross(ub, ua)                                   # sin(swing) times the swing axis
    # undo the swing: the shortest rotation taking ub onto ua, applied to rb (Rodrigues)
    rb = c[:, None] * rb + cross(k, rb) + (dot(k, rb) / one_plus_c)[:, None] * k
    twist = np.arctan2(dot(cross(ra, rb), ua), dot(ra, rb))
    return twist, (ua + ub) / one_plus_c[:, None]


def swing_of(ua, ub):
    """Swing angle (k,) in [0, pi] between the world twist axes ua, ub of the two bodies
    (k, 3), and its rate vector (k, 3): d(swing)/dt = g . (w_b - w_a)."""
    axis = cross(ua, ub)
    sq = axis * axis        # np.linalg.norm(axis, axis=1) by columns: the same sum
    s = np.sqrt((sq[:, 0] + sq[:, 1]) + sq[:, 2])
    return np.arctan2(s, dot(ua, ub)), axis / np.maximum(s, 1e-12)[:, None]


# The coordinate kinds whose angles wrap at +-pi (a universal joint's): a servo on one pulls
# the short way round, and limits stay within WRAPPED_LIMIT (a joint that overshot one by
# more than pi - WRAPPED_LIMIT would come out on the far side of the wrap)
WRAPPED = ("cardan_a", "cardan_b")
# The coordinate kinds in metres: a slider's position along its axis and a distance joint's
# length (the anchors' distance: a distance row of length 0)
LINEAR = ("position", "length")
WRAPPED_LIMIT = np.pi - 0.2

# The body-fixed vectors each angular coordinate kind turns into the world: (side, argument)
# pairs, side 0 body a, 1 body b, in the order its function (swing_of, twist_of,
# angle_about) takes them
TURNED = {"swing": ((0, 0), (1, 1)), "twist": ((0, 0), (1, 1), (0, 2), (1, 3)),
          "angle": ((0, 0), (0, 1), (1, 2)), "axis": ((0, 0),),
          "cardan_a": ((0, 0), (0, 1), (1, 2)), "cardan_b": ((1, 0), (0, 1), (1, 2))}


def angular_coordinate(table: CoordinateTable, turned):
    """Values c (k,) of an angular coordinate and the world vector g (k, 3) with
    dc/dt = g . (w_b - w_a). ``turned``: the world vectors (k, 3) it starts from (TURNED),
    as CoordinateTables.turned makes them."""
    if table.kind == "swing":
        return swing_of(*turned)
    if table.kind == "twist":
        return twist_of(*turned)
    if table.kind == "axis":
        axis, = turned
        return np.zeros(axis.shape[0]), axis
    if table.kind in WRAPPED:
        return angle_about(*turned)
    # "angle": a hinge's continuous angle (its world always given), nearest to its last one
    return continuous_angle(table.world, table.owner, turned)


def continuous_angle(world, owner, turned, turn_rate=None, h=0.0):
    """Continuous hinge angles (k,) of the joints ``owner`` and their world axes (k, 3), from
    the world vectors TURNED["angle"] (axis and reference of a, reference of b): the wrapped
    angle taken nearest to each joint's last one (``world._joint_angle``, or within a step
    the angles at its last drift, ``symplectic.carry_angle_reference``), or, given the rate (k, 3)
    (rad/s, world frame) at which b turns against a, nearest to where that rate takes the
    last one in h s (a joint that turns more than pi within a step would else land on the
    wrong turn: a disc at 200 rad/s read -177 rad after 1 s at dt 1/60)."""
    c, u = angle_about(*turned)
    last = world._angle_reference if world._angle_reference is not None else world._joint_angle
    reference = last.take(owner)
    if turn_rate is not None:
        reference = reference + h * dot(turn_rate, u)
    return wrap_near(c, reference), u


class TurningAngles:
    """The continuous angles of a world's turning joints (Hinge, Cylindrical), with or
    without limits, read outside the limit rows: by World._track_angles after every step, by
    Hinge.angle and by couplings. Their vectors (TURNED["angle"]) are stacked once per
    topology and the angle is the limit rows' (continuous_angle)."""

    def __init__(self, world, joints):
        self.world = world
        self.owner = np.array([j.index for j in joints], dtype=np.intp)
        self.row = np.full(len(world._joints), -1, dtype=np.intp)     # joint -> its row here
        self.row[self.owner] = np.arange(self.owner.size)
        frames = [j._angle_frame() for j in joints]
        a, b = (np.array([f[i] for f in frames], dtype=np.intp) for i in (0, 1))
        args = tuple(np.array([f[i] for f in frames], dtype=float).reshape(-1, 3)
                     for i in (2, 3, 4))
        # the vectors part after part (axis of a, reference of a, reference of b): joint
        # row i's are the rows i, i + H and i + 2 H of the H joints' (_parts: 0, H, 2 H)
        self._bodies = np.concatenate([b if side else a for side, _ in TURNED["angle"]])
        self._local = np.concatenate([args[arg] for _, arg in TURNED["angle"]])
        self._parts = self.owner.size * np.arange(len(TURNED["angle"]))[:, None]
        # the bodies that carry them, once each (a hinge chain's inner links carry three)
        self._carriers, self._carried = np.unique(self._bodies, return_inverse=True)

    def at(self, R=None, joints=None, w=None, h=0.0):
        """Angles (k,) and world axes (k, 3) at body rotations R (N, 3, 3), or at the current
        orientations (None), of the turning joints ``joints`` (world joint indices), or of
        all in the order of ``owner`` (None). A joint's angle is the same alone as among all
        (row by row arithmetic). w (N, 3) rad/s, h s: the angular velocities with which the
        bodies turned over the h since the joints' last angles were taken (None: unwrapped
        against the last angles as they are, for rotations where they were taken)."""
        if joints is None:
            owner, bodies, local = self.owner, self._bodies, self._local
        else:
            owner = np.asarray(joints, dtype=np.intp)
            picked = (self.row.take(owner) + self._parts).reshape(-1)
            bodies, local = self._bodies.take(picked), self._local.take(picked, axis=0)
        if R is not None:
            R = R.take(bodies, axis=0)
        elif joints is None:        # each carrier's rotation made once, then spread
            R = quat_to_matrix(self.world._q.take(self._carriers, axis=0))
            R = R.take(self._carried, axis=0)
        else:
            R = quat_to_matrix(self.world._q.take(bodies, axis=0))
        turned = rotate(R, local).reshape(len(TURNED["angle"]), -1, 3)
        rate = None
        if w is not None:
            # (part 0 is carried by each joint's body a, the last part by its body b)
            sides = bodies.reshape(len(TURNED["angle"]), -1)
            rate = w.take(sides[-1], axis=0) - w.take(sides[0], axis=0)
        return continuous_angle(self.world, owner, turned, rate, h)


def angular_rate_blocks(g):
    """[Ja | Jb] (k, 12) of angular rates g (k, 3): (0, -g) on a, (0, g) on b."""
    J = np.zeros((len(g), 12))
    np.negative(g, out=J[:, 3:6])
    J[:, 9:] = g
    return J


def coordinate_blocks(table: CoordinateTable, kin: Kinematics, turned):
    """Coordinate values c (k,) and rate Jacobians [Ja | Jb] (k, 12). ``turned``: see
    angular_coordinate (None for a position table)."""
    if table.kind in LINEAR:
        kin = replace(kin, velocity_terms=False)
        r = (line_rows(kin, table.a, table.b, *table.args) if table.kind == "position"
             else distance_rows(kin, table.a, table.b, *table.args, 0.0))
        return r.C, np.concatenate([r.Ja, r.Jb], axis=1)
    c, g = angular_coordinate(table, turned)
    return c, angular_rate_blocks(g)


# the groups of a plan's rows, in the order each table's rows are made
LOWER, UPPER, DRIVE, FRICTION = range(4)

# The coordinate kinds whose joints (Hinge, Slider, and the Actuator handles of Cylindrical and
# Universal; a Ball's swing and twist) report their limits', drive's and friction's shares of
# the force along them: each has a slot of three efforts (limit, drive, friction) beside the
# joint's wrench (reporting.joint_wrenches). A Ball's friction ("axis": a row about each of body_a's
# axes) has a slot of its own for the torque its rows make on body_b (world frame, 3).
EFFORT_KINDS = ("angle", "position", "cardan_a", "cardan_b", "length", "swing", "twist", "axis")
AXIS_SLOT = EFFORT_KINDS.index("axis")
# a joint's reported wrench: force (3), torque about the anchor (3), then per EFFORT_KINDS
# the (limit, drive, friction) efforts along that coordinate
WRENCH_WIDTH = 6 + 3 * len(EFFORT_KINDS)
# the widths of older snapshots' wrenches (before the efforts; before a Ball's), read as these
# with the later columns 0
OLDER_WRENCH_WIDTHS = (6, 6 + 3 * 5)


def checked_wrenches(state, key, nj, where="state"):
    """A snapshot's joint wrenches state[key] as (nj, WRENCH_WIDTH) (None where it has none;
    ValueError naming the part where they are not such numbers); an older snapshot's
    (OLDER_WRENCH_WIDTHS columns) with the efforts it did not hold 0."""
    shape = np.shape(state.get(key))
    older = len(shape) == 2 and shape[1] in OLDER_WRENCH_WIDTHS
    wrenches = checked_array(state, key, (nj, shape[1] if older else WRENCH_WIDTH), where=where)
    if older and wrenches is not None:
        wrenches = np.concatenate([wrenches, np.zeros((nj, WRENCH_WIDTH - shape[1]))], axis=1)
    return wrenches


def _row_makers(lo, hi, motor, friction):
    """Which rows coordinates with these settings make (``bounded_plan``): (lower limit,
    upper limit, motor mode (0 none, 1 velocity motor, 2 servo), friction), per coordinate."""
    return np.isfinite(lo), np.isfinite(hi), motor[:, 0], friction > 0


def _settings(specs):
    """(lo, hi, motor (k, 4), max_force, friction) float arrays of coordinate specs' last five
    fields (a joint's ``_coordinate_specs``: its bodies and local vectors come first)."""
    lo, hi, motor, max_force, friction = (np.array(c, dtype=float)
                                          for c in list(zip(*specs))[-5:])
    return lo, hi, motor.reshape(-1, 4), max_force, friction


@dataclass
class BoundedPlan:
    """Which coordinates of a list of tables (their entries stacked in table order) become
    bounded rows, in the order the rows are made: per table its lower limits, upper limits,
    velocity motors, servos, then friction (a velocity motor at 0). Which rows there are
    only changes with the topology or when a limit, motor or friction comes or goes; their
    values (limits, settings, largest forces) are taken from the tables again when a user
    retunes a joint (``values_from``)."""
    entry: np.ndarray       # (mb,) stacked coordinate of each row
    group: np.ndarray       # (mb,) LOWER, UPPER, DRIVE (motor or servo) or FRICTION
    sign: np.ndarray        # (mb,) +1 (lower limit, motor) or -1 (upper limit): row = sign c
    motor: np.ndarray       # (mm,) the rows that are motors, servos or friction
    a: np.ndarray           # (mb,) body rows
    b: np.ndarray
    owner: np.ndarray       # (mb,) joint of each row
    margin: np.ndarray      # (mb,) a limit row is made within this of its limit (rad or m)
    slop: np.ndarray        # (mb,) an overshoot a limit row leaves alone (rad or m)
    wrapped: np.ndarray     # (mm,) the motor rows on a wrapped angle (WRAPPED)
    slot: np.ndarray        # (mb,) the row's coordinate kind in EFFORT_KINDS (-1: not one)
    linear: np.ndarray      # (mb,) bool: the row's coordinate is a length (m), not an angle
    # values, from the tables (values_from)
    bound: np.ndarray = None    # (mb,) the limit (0 for motors)
    mode: np.ndarray = None     # (mm,) 1 velocity motor (or friction), 2 servo
    velocity_motor: np.ndarray = None   # (mm,) bool: a velocity motor, not a servo or friction
    setting: np.ndarray = None  # (mm, 3) value, k, d
    lo: np.ndarray = None       # (mb,) bounds on lambda
    hi: np.ndarray = None

    def values_from(self, tables):
        """Take the rows' limits, motor and servo settings and largest forces from the
        tables (whose entries must still make these rows)."""
        def stacked(name):
            return np.concatenate([getattr(t, name) for t in tables])
        entry, group = self.entry, self.group
        limit = group <= UPPER
        self.bound = np.where(group == LOWER, stacked("lo").take(entry),
                              np.where(group == UPPER, stacked("hi").take(entry), 0.0))
        force = np.where(group == DRIVE, stacked("max_force").take(entry),
                         stacked("friction").take(entry))
        self.lo = np.where(limit, 0.0, -force)
        self.hi = np.where(limit, np.inf, force)
        driven = self.entry.take(self.motor)
        settings = np.where((group.take(self.motor) == DRIVE)[:, None],
                            stacked("motor").take(driven, axis=0), FRICTION_MOTOR)
        self.mode, self.setting = settings[:, 0], settings[:, 1:].copy()
        self.velocity_motor = (group.take(self.motor) == DRIVE) & (self.mode == 1)


def bounded_plan(tables) -> BoundedPlan | None:
    """The rows bounded_joint_rows makes from these tables, or None when there are none."""
    entry, group, sign, owner, margin, slop, wrapped, slot, lengths = ([] for _ in range(9))
    start = 0
    for t in tables:
        kind_slot = EFFORT_KINDS.index(t.kind) if t.kind in EFFORT_KINDS else -1
        linear = t.kind in LINEAR
        unit = LINEAR_LIMIT_MARGIN if linear else ANGULAR_LIMIT_MARGIN
        left = LINEAR_LIMIT_SLOP if linear else ANGULAR_LIMIT_SLOP
        lower, upper, mode, rubs = _row_makers(t.lo, t.hi, t.motor, t.friction)
        runs = [(np.flatnonzero(lower), LOWER, 1.0), (np.flatnonzero(upper), UPPER, -1.0)]
        runs += [(np.flatnonzero(mode == m), DRIVE, 1.0) for m in (1, 2)]
        runs.append((np.flatnonzero(rubs), FRICTION, 1.0))
        for on, g, s in runs:
            entry.append(start + on)
            group.append(np.full(on.size, g))
            sign.append(np.full(on.size, s))
            owner.append(t.owner.take(on))
            margin.append(np.full(on.size, unit))
            slop.append(np.full(on.size, left))
            slot.append(np.full(on.size, kind_slot))
            lengths.append(np.full(on.size, linear))
            if g >= DRIVE:
                wrapped.append(np.full(on.size, t.kind in WRAPPED))
        start += len(t.a)
    entry = np.concatenate(entry or [np.zeros(0, dtype=np.intp)]).astype(np.intp)
    if not entry.size:
        return None
    group = np.concatenate(group)
    stacked_a = np.concatenate([t.a for t in tables])
    stacked_b = np.concatenate([t.b for t in tables])
    plan = BoundedPlan(entry, group, np.concatenate(sign), np.flatnonzero(group >= DRIVE),
                       stacked_a.take(entry), stacked_b.take(entry),
                       np.concatenate(owner).astype(np.intp), np.concatenate(margin),
                       np.concatenate(slop),
                       np.concatenate(wrapped) if wrapped else np.zeros(0, dtype=bool),
                       np.concatenate(slot), np.concatenate(lengths))
    plan.values_from(tables)
    return plan


def _swing_limit_rows(tables, plan):
    """(index of the swing table, its entries of the plan's swing limit rows, those rows) or
    None (no cone limit): the rows swing_reach makes at the end of the step's turn."""
    kinds = [t.kind for t in tables]
    if plan is None or "swing" not in kinds:
        return None
    table = kinds.index("swing")
    start = sum(len(t.a) for t in tables[:table])
    rows = np.flatnonzero((plan.entry >= start) & (plan.entry < start + len(tables[table].a))
                          & (plan.group <= UPPER))
    return (table, plan.entry.take(rows) - start, rows) if rows.size else None


class CoordinateTables(list):
    """A world's coordinate tables, and what only changes with them: the plan of the bounded
    rows they make, and the body vectors that all angular tables turn into the world
    (rows.StackedVectors: one gather and one product turn them all)."""

    def __init__(self, tables):
        super().__init__(tables)
        self.plan = bounded_plan(self)
        self.swing_rows = _swing_limit_rows(self, self.plan)
        self.angular_only = all(t.kind not in LINEAR for t in self)
        self._stack = StackedVectors([[(t.b if side else t.a, t.args[arg])
                                       for side, arg in TURNED.get(t.kind, ())] for t in self])

    def retune(self, indexed_joints) -> bool:
        """Take the new limits, motor and servo settings and friction of the joints (index,
        joint) in place, with the plan's values, and say True; or change nothing and say
        False when the joints' specs would make other rows (a limit, motor or friction
        turned on or off, a motor made a servo): the tables must be built again. A joint's
        bodies and local vectors only change with the topology. (All joints' specs of a kind
        at once: per joint, six servos of a Stewart platform took 0.15 ms a step.)"""
        groups = _specs_by_kind(indexed_joints)
        retuned = np.array([index for index, _ in indexed_joints], dtype=np.intp)
        # which joints are retuned, as a mask over joint indices (np.isin per table cost
        # ~50 us a call here, a gather from the mask a few)
        top = max([retuned.max(initial=-1)] + [int(t.owner.max(initial=-1)) for t in self])
        is_retuned = np.zeros(top + 1, dtype=bool)
        is_retuned[retuned] = True
        changes = []
        for t in self:
            items = groups.pop(t.kind, [])
            at = np.flatnonzero(is_retuned.take(t.owner))
            if at.size != len(items):
                return False
            if not items:
                continue
            owners, specs = zip(*items)
            if not np.array_equal(t.owner.take(at), owners):
                return False
            lo, hi, motor, max_force, friction = _settings(specs)
            now = _row_makers(t.lo.take(at), t.hi.take(at), t.motor.take(at, axis=0),
                              t.friction.take(at))
            if not all(map(np.array_equal, _row_makers(lo, hi, motor, friction), now)):
                return False
            changes.append((t, at, lo, hi, motor, max_force, friction))
        if groups:                      # a kind the tables do not have yet
            return False
        for t, at, lo, hi, motor, max_force, friction in changes:
            t.lo[at], t.hi[at], t.motor[at], t.max_force[at], t.friction[at] = (
                lo, hi, motor, max_force, friction)
        if self.plan is not None:
            self.plan.values_from(self)
        return True

    def turned(self, kin: Kinematics) -> list:
        """Per table the world vectors (k, 3) its angular coordinate starts from (TURNED),
        or None for a position table."""
        return [parts or None for parts in self._stack.rotated(kin.R)[1]]

    def coordinates(self, kin: Kinematics, turned=None):
        """All tables' coordinates stacked: values c (K,) and [Ja | Jb] (K, 12). ``turned``:
        self.turned(kin), where the caller has it."""
        turned = self.turned(kin) if turned is None else turned
        if all(t.kind in TURNED for t in self):   # angular only: one J for all rates
            c, g = zip(*(angular_coordinate(t, r) for t, r in zip(self, turned)))
            return _stacked(c), angular_rate_blocks(_stacked(g))
        c, J = zip(*(coordinate_blocks(t, kin, r) for t, r in zip(self, turned)))
        return _stacked(c), _stacked(J)


def _stacked(arrays):
    return np.concatenate(arrays) if len(arrays) > 1 else arrays[0]


def plan_rows(tables, kin: Kinematics, turned=None):
    """Every row of the tables' plan (``tables.plan``, not None) at the bodies' state kin:
    its coordinate c (mb,), rad or m, its Jacobian sign J (mb, 12) ([Ja | Jb] on u = [v; w],
    world frame) and its value C = sign (c - bound) (mb,), which a limit row keeps >= 0
    (a motor's has no meaning). All tables' coordinates are stacked, then the rows gathered
    from them at once. ``turned``: tables.turned(kin), where the caller has it."""
    plan = tables.plan
    c, J = tables.coordinates(kin, turned)
    c = c.take(plan.entry)
    J = plan.sign[:, None] * J.take(plan.entry, axis=0)
    return c, J, plan.sign * (c - plan.bound)


@dataclass
class PlanRows:
    """Every row of a coordinate plan at the start of a step (``bounded_joint_rows``): its
    coordinate c (mb,), Jacobian J (mb, 12), value C (mb,) and the value its row takes
    (``swing_reach``), whether it is near enough to be a row (mb,) bool, and the world twist
    axes (ua, ub) of its swing limits (``CoordinateTables.swing_rows``) or None."""
    c: np.ndarray
    J: np.ndarray
    C: np.ndarray
    reach: np.ndarray
    near: np.ndarray
    swing_axes: tuple | None
    w: np.ndarray               # (N, 3) the angular velocities they were made at, rad/s


def found_plan_rows(tables, kin: Kinematics, h: float, load=None) -> PlanRows:
    """Every row of the tables' plan (``tables.plan``, not None) at kin, with which of them
    are near enough to be rows this step (``bounded_joint_rows``, whose ``load`` this is)."""
    plan = tables.plan
    turned = tables.turned(kin)
    c, J, C = plan_rows(tables, kin, turned)
    reach, axes = swing_reach(tables, turned, kin, h, J, C)
    v, w = (kin.v, kin.w) if load is None else (kin.v + h * load[0], kin.w + h * load[1])
    rate = Rows(plan.a, plan.b, C, J[:, :6], J[:, 6:], np.zeros(C.size)).velocity(v, w)
    near = reach < plan.margin - LIMIT_REACH * h * rate
    near[plan.motor] = True
    return PlanRows(c, J, C, reach, near, axes, kin.w)


def bounded_joint_rows(tables, h: float, T: float, found):
    """BoundedRows for every motor and servo and every limit near enough to matter this step,
    the owning joint of each row, each row's index in the plan (``tables.plan``; the warm
    start follows rows by it), and the plan's rows (PlanRows). ``tables``: the world's
    CoordinateTables (build_coordinate_tables), with their plan.

    A limit on coordinate c at ``lo`` is the row C = c - lo >= 0, one at ``hi`` the row
    C = hi - c >= 0 on -J; motors aim dc/dt at a speed, servos at a spring-damper's. Like a
    speculative contact, a limit row is only made while the joint is within its margin of
    the limit or could reach it within the step at twice its present rate: far from their
    limits (most of a ragdoll's, most of the time) rows would only be held at zero, at the
    cost of the whole solve. ``found``: the plan's rows (PlanRows, ``found_plan_rows``; None
    where there is no plan), whose reach counts the user's loads too."""
    plan = tables.plan
    if plan is None:
        return None, np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp), None
    c, J, C, reach = found.c, found.J, found.C, found.reach
    kept = np.flatnonzero(found.near)
    if kept.size < C.size:
        c, J, C, reach = c.take(kept), J.take(kept, axis=0), C.take(kept), reach.take(kept)
    else:
        C = C.copy()                # (its motors' are set to 0 below; found keeps its own)
    # (motors are always kept, and kept is sorted: their places among the kept rows)
    motor = np.searchsorted(kept, plan.motor)
    Ja, Jb = J[:, :6], J[:, 6:]
    slop = plan.slop if kept.size == plan.slop.size else plan.slop.take(kept)
    back = push_out(-C - slop, h, T)
    target = np.where(C > 0, -reach / h, back)
    push = np.maximum(back - KEPT_LIMIT_PUSH, 0.0)
    cfm = np.zeros(C.size)
    if motor.size:
        mode, (value, k, d) = plan.mode, plan.setting.T
        servo = mode == 2
        # velocity motors aim at their speed; servos at k (value - c) / (k h + d), soft
        # with compliance 1 / (h (k h + d))
        gain = np.where(servo, k * h + d, 1.0)
        error = value - c.take(motor)
        if plan.wrapped.any():            # (a wrapped angle's target the short way round)
            error = np.where(plan.wrapped, wrap_near(error, 0.0), error)
        target[motor] = np.where(servo, k * error / gain, value)
        cfm[motor] = np.where(servo, 1.0 / (h * gain), 0.0)
        C[motor] = 0.0
        push[motor] = 0.0
    hard = None
    if motor.size and motor.size < kept.size:
        hard = _limits_under_motors(plan, kept, motor[plan.velocity_motor | (plan.mode == 2)],
                                    target)
    rows = Rows(plan.a.take(kept), plan.b.take(kept), C, Ja, Jb, np.zeros(C.size), side_blocks=J)
    block = BoundedRows(rows, plan.lo.take(kept), plan.hi.take(kept), target,
                        np.full(C.size, -1), np.zeros(C.size), cfm, hard=hard, push=push)
    return block, plan.owner.take(kept), kept, found


def limits_overrun(tables, found: PlanRows, v, w, h: float, movable):
    """The limits that the velocities v, w (N, 3) a solve gave would carry beyond their
    margin (the nearness that makes a row: 0.05 rad, 1 cm; the step's pushes mend smaller
    misses) within the step, on joints whose bodies are all ``movable`` (N,) bool: ``found``
    with them among its rows (``near``) and its swing rows so met linearised about the end
    of the solve's turn, or None for none.

    Rows are made from the rates a step starts with, and an impact's impulse within the
    solve may turn a joint far faster: a ragdoll's hand struck by the ground went 0.75 rad
    past its wrist's twist limit in one step at dt 1/240, its limit not in the solve that
    struck it. And a swing row is linear about the start's turn: a hand the solve left
    tumbling at 120 rad/s across its cone's rate vector went 0.7 rad beyond it at dt 1/60.
    Other rows in the solve are linear and met by it."""
    plan = tables.plan
    if tables.angular_only and h * np.abs(w - found.w).max(initial=0.0) < SETTLED_TURN:
        return None           # (turned by no more than that, no limit can be missed by more)
    J, reach = found.J, found.reach
    end = reach + h * Rows(plan.a, plan.b, found.C, J[:, :6], J[:, 6:],
                           np.zeros(found.C.size)).velocity(v, w)
    missed = ~found.near
    swing = tables.swing_rows
    if swing is not None:
        # (a swing row in the solve is missed where its linear model misses the swing by
        # more than the margin: one resting past its slop, pushed back, is not)
        rows = swing[2]
        at_end = _swing_at_end(plan, rows, *found.swing_axes, w, h)
        linear = end.take(rows)
        end[rows] = plan.sign.take(rows) * (at_end[0] - plan.bound.take(rows))
        missed[rows] |= end.take(rows) < linear - plan.margin.take(rows)
    missed &= ((end < -plan.margin) & (plan.group <= UPPER) & movable.take(plan.a)
               & movable.take(plan.b))
    if not missed.any():
        return None
    if swing is not None and missed.take(rows).any():
        redo = np.flatnonzero(missed.take(rows))
        J, reach = J.copy(), reach.copy()
        _linearised_at_end(plan, rows.take(redo), *(x.take(redo, axis=0) for x in at_end), h,
                           J, reach)
    return replace(found, J=J, reach=reach, near=found.near | missed)


def swing_reach(tables, turned, kin: Kinematics, h: float, J, C):
    """The plan's rows' C as the step's row takes it (mb,): C itself, but for a swing limit
    (a cone) its value linearised where the step's present turn would take the joint. In
    place, J's swing rows take the swing's rate vector there. Also the world twist axes
    (ua, ub) of the swing rows (``tables.swing_rows``), or None.

    The swing is the length of a turn across the twist axis, not linear in it: a row made
    at the present pose lets through a turn across its rate vector, so a head whirling
    round its cone at 40 rad/s, dt 1/60, went 0.27 rad beyond it, and one swinging out
    from zero swing, where the rate vector is nought, was not seen coming at all. Made at
    the end of the present turn (b's twist axis turned by h (w_b - w_a)), the row's value
    C + h g.u (g there; >= C, the swing being convex in the turn) asks the linear model
    of the end swing to stay within the cone."""
    rows = tables.swing_rows
    if rows is None:
        return C, None
    table, at, plan_rows_ = rows
    axes = tuple(v.take(at, axis=0) for v in turned[table])
    reach = C.copy()
    _linearised_at_end(tables.plan, plan_rows_, *_swing_at_end(tables.plan, plan_rows_, *axes,
                                                                kin.w, h), h, J, reach)
    return reach, axes


def _swing_at_end(plan, rows, ua, ub, w, h):
    """The swing (k,) of the plan's swing limit rows ``rows`` once b's twist axis ub has
    turned by h (w_b - w_a) from ua's (k, 3), its rate vector g there (k, 3), and
    w_b - w_a (k, 3)."""
    relative = w.take(plan.b.take(rows), axis=0) - w.take(plan.a.take(rows), axis=0)
    end, g = swing_of(ua, rotate_by_quat(rotation_vector_to_quat(h * relative), ub))
    return end, g, relative


def _linearised_at_end(plan, rows, end, g, relative, h, J, reach):
    """Make the rows ``rows`` of J and reach (in place) the linear model of the swing
    about the end of the turn (``_swing_at_end``)."""
    sign = plan.sign.take(rows)
    J[rows] = sign[:, None] * angular_rate_blocks(g)
    reach[rows] = sign * (end - h * dot(g, relative) - plan.bound.take(rows))


def _limits_under_motors(plan, kept, motors, target):
    """(k,) bool of the ``kept`` plan rows: the limit rows that a velocity motor or a servo
    (``motors``: their places among the kept rows) drives into faster than the limit lets its
    coordinate go this step (its row's ``target``; a servo's is the rate its spring and
    damper ask for), or None for none. Such a limit is hard: it takes none of the bounded
    rows' softness, so the motor's own softness takes the conflict (a stalled velocity motor
    pushes with what that softness gives for the speed it misses, up to its max_force:
    ``bounded_solve.bounded_warm_start``; a servo with its spring's force at the limit) while
    the limit holds. (The two rows share their Jacobian: both soft, centred on last step's
    forces, they split the conflict afresh every step, and a 1 kg rod driven at 1 rad/s into
    a hinge limit with max_force 1e6 N m went on through it at 0.8 rad/s, the two efforts
    growing by 400 N m a step. A servo aiming past a limit, a pose target past a joint's
    range, did the same: a 1.1 kg foot on a hinge limited at -0.5 rad with its servo at
    -1.5 rad, 3000 N m/rad, settled 0.34 rad past the limit at dt 1/60, reading -4 rad/s
    while it stood still.)"""
    entry, sign = plan.entry.take(kept), plan.sign.take(kept)
    limit = np.ones(kept.size, dtype=bool)
    limit[np.searchsorted(kept, plan.motor)] = False
    coordinate = entry.take(motors)
    rate = target.take(motors) * sign.take(motors)      # the dc/dt each motor aims at
    hard = np.zeros(kept.size, dtype=bool)
    for side in (1.0, -1.0):        # lower limits (C = c - lo), then upper (C = hi - c)
        row_of = np.full(plan.entry.max() + 1, -1)
        rows = np.flatnonzero(limit & (sign == side))
        row_of[entry.take(rows)] = rows
        at = row_of.take(coordinate)
        # the limit row wants side * dc/dt >= its target
        beyond = (at >= 0) & (side * rate < target.take(np.maximum(at, 0)))
        hard[at[beyond]] = True
    return hard if hard.any() else None


def _specs_by_kind(indexed_joints) -> dict[str, list]:
    """Per coordinate kind the (joint index, spec) of the joints (index, joint), in the order
    of a table's entries: by joint index, each joint's specs in its own order."""
    groups: dict[str, list] = {}
    for index, joint in sorted(indexed_joints, key=lambda item: item[0]):
        for kind, spec in joint._coordinate_specs():
            groups.setdefault(kind, []).append((index, spec))
    return groups


def build_coordinate_tables(indexed_joints) -> CoordinateTables:
    """Gather the coordinate specs of the joints (index, joint) (done once per topology
    change; sleeping.joints_with_rows: a world's joints that make rows)."""
    joints = dict(indexed_joints)
    tables = []
    for kind, items in _specs_by_kind(joints.items()).items():
        owners, specs = zip(*items)
        owner = np.array(owners, dtype=np.intp)
        cols = list(zip(*specs))
        a, b = (np.array(c, dtype=np.intp) for c in cols[:2])
        args = tuple(np.array(c, dtype=float) for c in cols[2:-5])
        world = joints[int(owner[0])]._world if kind == "angle" else None
        tables.append(CoordinateTable(kind, owner, a, b, args, *_settings(specs), world))
    return CoordinateTables(tables)
