"""Joints: Ball, Hinge, Slider, Fixed, RotationLock, Universal, Cylindrical, Distance.

A joint is given in world coordinates at creation (anchor points, axes) and, when added to a
world, stores them in each body's local frame. It then contributes instances of the row
primitives of ``rows.py``; the world evaluates each primitive kind for all joints at once.

``body_a=None`` means the fixed world frame. Reported forces (``force``, ``torque``) are the
wrench the joint applies to ``body_b``, world frame, torque about the joint anchor on body_b;
body_a receives the opposite.
"""
from __future__ import annotations

import functools

import numpy as np

from .limits import EFFORT_KINDS, TURNED, WRAPPED_LIMIT, angle_about
from .math3d import cross, perpendicular_pair
from .validation import (check_known_attribute, check_number, check_positive,
                         check_unit_direction, check_vector, name_property, shown, warn_user)


class MadeWith:
    """A part of a joint given when it is made (its bodies, a coordinate's actuator, a
    coupling's functions, a wheel's plane): read as an attribute, refused when set. The world
    builds the joint's rows from it when the joint is added, so a new value would be
    reported and never act (a hinge given a new body_b kept holding the old one, and that
    body could then be removed from under it). ``remedy``, the error's sentence after the
    attribute's name, says so and what to do instead."""

    def __init__(self, remedy: str, doc: str, stored: str | None = None):
        self._remedy, self._stored = remedy, stored      # (stored: "_" + its name)
        self.__doc__ = doc

    def __set_name__(self, owner, name):
        self._name = name
        self._stored = self._stored or "_" + name

    def __get__(self, joint, owner=None):
        return self if joint is None else getattr(joint, self._stored)

    def __set__(self, joint, value):
        raise ValueError(f"cannot set {type(joint).__name__}.{self._name}: {self._remedy}")


_NEW_JOINT = "make a new joint (world.remove_joint takes this one out)"


def _once_added(measure):
    """For what a joint measures from the frames it fixes in its bodies when it is added
    (its anchors, axes and coordinates, and the loads along them): before that a ValueError
    saying to add it first (it was an AttributeError for an attribute made there, such as
    'Hinge' object has no attribute '_axis_a'). A removed joint keeps its frames."""
    @functools.wraps(measure)
    def checked(self, *args, **kwargs):
        if self._world is None and not self._removed:
            raise ValueError(f"{self!r} is not in a world yet: add it with world.add_joint "
                             "first (its anchors and axes are fixed in its bodies there, and "
                             "what it measures is taken from them)")
        return measure(self, *args, **kwargs)
    return checked


class Joint:
    """A constraint between ``body_a`` (a Body, or None for the fixed world frame) and
    ``body_b``, added with ``world.add_joint``. ``anchor`` (m) and any axes are given in world
    coordinates at creation and kept in each body's frame from then on; ``anchor=None``
    takes body_b's centre where it is when the joint is added. A joint removed and added
    again is bound afresh from those arguments, as a new joint made with them would be
    (``_bind``). ``force`` and ``torque`` report what the joint applied to body_b in the
    last step (world frame, N and N m about the anchor; body_a receives the opposite)."""
    _anchor_name = "anchor"     # the name the anchor goes by in errors
    _anchor_a_name = "anchor"   # ... and body_a's anchor (a Distance's has its own)
    _joins_bodies = True        # joined at a point: its two bodies do not collide

    def __init__(self, body_a, body_b, anchor=None, name: str | None = None):
        from .body import Body
        if body_b is None:
            raise ValueError("body_b must be a body; use body_a=None to attach to the world")
        for label, body in (("body_a", body_a), ("body_b", body_b)):
            if body is not None and not isinstance(body, Body):
                raise ValueError(f"{label} must be a Body returned by world.add_body "
                                 f"(or None for the world frame), got {body!r}")
        if body_a is body_b:
            raise ValueError("body_a and body_b are the same body; a joint needs two bodies")
        self._body_a = body_a
        self._body_b = body_b
        # the anchor as given (None: body_b's centre at each add), and as bound (_bind)
        self._anchor_given = None if anchor is None else check_vector(self._anchor_name, anchor, 3)
        self._anchor_world = self._anchor_given
        self.name = name
        self._removed = False         # (taken out with world.remove_joint: its errors say so)
        self._world = None
        self._index = -1

    name = name_property("joint")
    body_a = MadeWith("a joint's bodies are fixed when it is made: " + _NEW_JOINT,
                      "The first body (None: the world frame), fixed at creation.")
    body_b = MadeWith("a joint's bodies are fixed when it is made: " + _NEW_JOINT,
                      "The second body, fixed at creation; forces are reported on it.")

    # what only a joint with a coordinate to drive has (``_Actuated``), and where to find it
    _ACTUATION = frozenset(("limits", "set_motor", "set_servo", "disable_motor", "limit_effort",
                            "motor_effort", "friction_effort"))
    _actuated_by = ("limits, motors, servos and their efforts belong to a coordinate: a Hinge's "
                    "angle, a Slider's position, a Distance's length, a Cylindrical's "
                    ".turning and .sliding, a Universal's .turning_a and .turning_b")

    def __getattr__(self, name):
        # (reached for a name the joint does not have, and also when one of its properties
        # raised AttributeError inside: "no attribute 'angle'" then hid what went wrong, so
        # the property is read again and its own error let through)
        attribute = getattr(type(self), name, None)
        if hasattr(attribute, "__get__"):
            return attribute.__get__(self, type(self))
        if name in Joint._ACTUATION:
            raise AttributeError(f"{type(self).__name__} has no {name}: {self._actuated_by}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name in Joint._ACTUATION and not hasattr(type(self), name):
            # (set on a joint without it, it would be kept and never act)
            raise AttributeError(f"{type(self).__name__} has no {name}: {self._actuated_by}")
        check_known_attribute(self, name)
        super().__setattr__(name, value)

    # -- binding to a world --------------------------------------------------------------
    def _frame(self, body):
        """(position, rotation matrix) of a body, or the world frame for None."""
        if body is None:
            return np.zeros(3), np.eye(3)
        return body.position, body.rotation

    def _local_point(self, body, p):
        x, r = self._frame(body)
        return r.T @ (p - x)

    def _check_reach(self):
        """ValueError for an anchor so far from a dynamic body's centre that the inverse
        effective mass of the joint's rows there, 1/m + |r|^2 / I_min (1/kg, r the anchor's
        offset, m), overflows to infinity: a hinge anchored at (1e300, 0, 1) on a body at
        the origin. Its rows' matrix held infinities, which one machine's factorisation
        turned into NaN (a StepError) and another's, with other BLAS kernels, into a finite
        step that held nothing (its constraint error read 1e-12 m, its force 0); an anchor
        at 1e153 m from a 1 kg, 0.2 m box is the farthest taken (its rows then reach
        1.5e308)."""
        for body, local, name in ((self.body_a, getattr(self, "_la", None), self._anchor_a_name),
                                  (self.body_b, getattr(self, "_lb", None), self._anchor_name)):
            if body is None or local is None or body.static:
                continue
            world, row = body._world, body.row
            with np.errstate(over="ignore", invalid="ignore"):
                reach = float(local @ local)
                inverse = (world._inv_mass[row]
                           + reach * np.abs(np.linalg.eigvalsh(world._inv_inertia[row])).max())
            if not np.isfinite(inverse):
                raise ValueError(
                    f"{name} lies {np.abs(local).max():.3g} m from {body!r}'s centre: so far "
                    "that the joint's rows there overflow (1/m + |r|^2 / I is infinite); put "
                    "the anchor within about 1e150 m of the bodies it joins")

    def _local_vector(self, body, v):
        return self._frame(body)[1].T @ v

    def _bind(self, world):
        """Store the world-frame definition in body-local terms (called by World.add_joint).
        Each add takes it afresh from the arguments, at the bodies' poses then: a joint
        removed and added again is the joint those arguments make there (``anchor=None``
        body_b's centre now, the angles zero now), as ``RotationLock`` holds the orientation
        the bodies have when it is added again. (Its first anchor was kept: a ball joint
        re-added after its body_b was moved 2 m held it 2 m off its centre.)"""
        self._anchor_world = (self.body_b.position if self._anchor_given is None
                              else self._anchor_given)
        self._la = self._local_point(self.body_a, self._anchor_world)
        self._lb = self._local_point(self.body_b, self._anchor_world)
        self._world = world
        self._aligned = None        # "axis", "frame" or None: see ``_alignment``

    @property
    def _rows_a(self):
        return 0 if self.body_a is None else self.body_a.row

    def _instances(self, owner: int) -> dict[str, list[tuple]]:
        raise NotImplementedError

    def _coordinate_specs(self) -> list[tuple]:
        """(kind, (a, b, *args, lo, hi, motor(4), max_force, friction)) for limits, motors
        and joint friction."""
        return []

    def _check_settable_joint(self):
        """ValueError for a joint taken out of its world: a new limit, motor or friction
        would silently do nothing (its force and angle raise the same)."""
        if self._world is None and self._removed:
            raise ValueError(f"{self!r} has been removed from its world (remove_joint): add "
                             "it again with world.add_joint before setting its limits, motor "
                             "or friction")

    def _coordinates_changed(self):
        if self._world is not None:
            self._world._wake([self._rows_a, self.body_b.row])
            self._world._actuation_changed(self)

    def _point(self, owner):
        return ("point", (owner, self._rows_a, self.body_b.row, self._la, self._lb))

    def _perpendicular(self, owner, ua, vb):
        return ("perpendicular", (owner, self._rows_a, self.body_b.row, ua, vb))

    def _line(self, owner, ta):
        return ("line", (owner, self._rows_a, self.body_b.row, self._la, self._lb, ta))

    def _keep_axis(self, axis_world):
        """Store, at creation, the axis local to body_a and a pair of directions across it
        local to each body (kept perpendicular to the axis by ``_axis_alignment``; the first
        of them is where an angle about the axis is measured from)."""
        p1, p2 = perpendicular_pair(axis_world)
        self._axis_a = self._local_vector(self.body_a, axis_world)
        self._perp_a = [self._local_vector(self.body_a, p) for p in (p1, p2)]
        self._perp_b = [self._local_vector(self.body_b, p) for p in (p1, p2)]
        self._aligned = "axis"              # (a Slider then locks its frame: "frame")

    def _axis_alignment(self, owner):
        """Two perpendicularity rows that keep body_b's directions across the axis across
        body_a's axis: the axis keeps its direction in both bodies, turning about it free."""
        return [self._perpendicular(owner, self._axis_a, pb) for pb in self._perp_b]

    def _lock_rotation(self):
        """Store, at creation, the body-local axes whose perpendicularity locks rotation."""
        e = np.eye(3)
        self._lock = [(self._local_vector(self.body_a, e[i]),
                       self._local_vector(self.body_b, e[(i + 1) % 3])) for i in range(3)]
        self._aligned = "frame"

    def _alignment(self):
        """What the perpendicularity rows hold, which they also meet turned the wrong way (an
        axis half a turn round, a frame a third of a turn round its diagonal), as body-local
        unit vectors: ("axis", (u_a, v_b)) for the axis fixed in body_a that stays along the
        one fixed in body_b, ("frame", (x_a, x_b, y_a, y_b)) for two such pairs, or None
        (``placement.Alignments`` turns placed bodies onto them)."""
        if self._aligned == "frame":        # (_lock: (x_a, y_b), (y_a, z_b), (z_a, x_b))
            lock = self._lock
            return "frame", (lock[0][0], lock[2][1], lock[1][0], lock[0][1])
        if self._aligned == "axis":         # (across b's directions across it: p1 x p2)
            return "axis", (self._axis_a, np.cross(*self._perp_b))
        return None

    def _no_rotation(self, owner):
        """Three perpendicularity rows that lock the relative orientation at creation."""
        return [self._perpendicular(owner, ua, vb) for ua, vb in self._lock]

    # -- reporting -----------------------------------------------------------------------
    @property
    def world(self):
        if self._world is None:
            if self._removed:
                raise ValueError(f"{self!r} has been removed from its world (remove_joint)")
            raise ValueError(f"{self!r} is not in a world; add it with world.add_joint")
        return self._world

    @property
    def index(self) -> int:
        self.world
        if self._index < 0:
            raise ValueError(f"{self!r} has been removed from its world")
        return self._index

    @property
    @_once_added
    def anchor(self) -> np.ndarray:
        """Current world position of the anchor on body_b (3,), metres."""
        return self.body_b.position + self.body_b.rotation @ self._lb

    @property
    def force(self) -> np.ndarray:
        """Constraint force on body_b (body_a takes the opposite), world frame, N (3,): the
        last step's multiplier, solved at the state that step started from, so it lags the
        state read after it by about a step (a link on a turntable at w reads its force
        turned back by w dt)."""
        return self.world._joint_wrenches()[self.index, :3].copy()

    @property
    def torque(self) -> np.ndarray:
        """Constraint torque on body_b about the anchor, world frame, N m (3,), from the last
        step as ``force`` is (a Ball's swing and twist limits' torques are in it; a Rolling
        joint's anchor is the wheel's centre)."""
        return self.world._joint_wrenches()[self.index, 3:6].copy()

    def _efforts(self, kind: str) -> np.ndarray:
        """The last step's (limit, drive, friction) efforts (3,) along this joint's
        coordinate ``kind`` (limits.EFFORT_KINDS; a Ball's "axis": its friction's torque)."""
        start = 6 + 3 * EFFORT_KINDS.index(kind)
        return self.world._joint_wrenches()[self.index, start:start + 3]

    def _load_both_sides(self, force=None, torque=None, point=None):
        """Queue ``force`` (at world ``point``) and ``torque`` on body_b and their opposites
        on body_a for the next step; a static side (or the world) takes none."""
        self.world
        for body, sign in ((self.body_b, 1.0), (self.body_a, -1.0)):
            if body is None or body.static:
                continue
            if force is not None:
                body.apply_force(sign * force, point=point)
            if torque is not None:
                body.apply_torque(sign * torque)

    def _relative_angular_velocity(self):
        wa = np.zeros(3) if self.body_a is None else self.body_a.angular_velocity
        return self.body_b.angular_velocity - wa

    def __repr__(self):
        label = f" {self.name!r}" if self.name else ""
        a = "world" if self.body_a is None else repr(self.body_a)
        return f"<{type(self).__name__}{label} {a} -> {self.body_b!r}>"


NO_MOTOR = (0.0, 0.0, 0.0, 0.0)


def _check_limits(limits, name="limits"):
    """(lower, upper) with lower < upper; one of them may be infinite (a one-sided limit)."""
    if limits is None:
        return (-np.inf, np.inf)
    if isinstance(limits, (set, frozenset)):
        # (unpacked, {-1, 1} gave whichever order the set keeps, and was refused as (1, -1))
        raise ValueError(f"{name} must be a tuple (lower, upper): a set has no order, got "
                         f"{limits!r}")
    try:
        lo, hi = limits
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be (lower, upper), two numbers, got {limits!r}") from None
    # (each a number, not a string or a bool; infinite is allowed: a one-sided limit, so a
    # NaN is not told "must be finite" by check_number)
    if any(isinstance(x, (float, np.floating)) and np.isnan(x) for x in (lo, hi)):
        raise ValueError(f"{name} must be numbers, not NaN (an infinite bound is a one-sided "
                         f"limit), got {shown((lo, hi))}")
    lo, hi = (x if isinstance(x, (float, np.floating)) and np.isinf(x)
              else check_number(name, x) for x in (lo, hi))
    if np.isnan(lo) or np.isnan(hi) or lo == np.inf or hi == -np.inf or not lo < hi:
        raise ValueError(f"{name} must be (lower, upper) with lower < upper (either may be "
                         f"infinite: a one-sided limit), got {shown((lo, hi))}")
    return (lo, hi)


def _motor_force(max_force, allow_inf=False) -> float:
    """A motor's or servo's max_force: positive. 0, as one might try to switch a motor off,
    is refused pointing to disable_motor()."""
    zero = isinstance(max_force, (int, float, np.integer, np.floating)) \
        and not isinstance(max_force, bool) and max_force == 0
    if zero:
        raise ValueError(f"max_force must be positive, got {max_force!r}: a motor of no force "
                         "drives nothing; to switch it off, call disable_motor()")
    if not allow_inf and isinstance(max_force, (float, np.floating)) and max_force == np.inf:
        raise ValueError("max_force must be finite for a velocity motor, got inf: give the most "
                         "it can push (N m or N); held against a limit or a stalled load, it "
                         "pushes with all of it (a servo may have max_force=inf: its spring "
                         "pulls with a force that grows with its miss)")
    return check_positive("max_force", max_force, allow_inf=allow_inf)


class _Frictional:
    """Dry friction in the joint: its relative motion is resisted with up to ``friction``
    (N m for rotation, N for sliding), as a bounded row aiming at no motion (MuJoCo's
    frictionloss)."""
    _friction = 0.0
    _prefix = ""            # of the parameter names errors give ("angle_": Cylindrical.turning)

    @property
    def friction(self) -> float:
        """The largest torque (N m) or force (N) the joint's friction resists motion with
        (0: none, and no rows for it)."""
        return self._friction

    @friction.setter
    def friction(self, value):
        self._check_settable()
        self._friction = check_positive(self._prefix + "friction", value, allow_zero=True)
        self._coordinates_changed()

    def _check_settable(self):
        getattr(self, "_joint", self)._check_settable_joint()

    def _axis_friction_specs(self, axes):
        """The friction rows' specs on rates about (kind, axis) pairs, a kind of
        limits.TURNED that only has a rate ('axis': fixed in body a); none without
        friction."""
        if not self._friction:
            return []
        a, b = self._rows_a, self.body_b.row
        return [(kind, (a, b, axis, -np.inf, np.inf, np.array(NO_MOTOR), 0.0, self._friction))
                for kind, axis in axes]


class _Actuated(_Frictional):
    """Limits, a velocity motor, a position servo and friction on a joint's single
    coordinate."""
    _wrapped = False        # the coordinate is an angle that wraps at +-pi (limits.WRAPPED)
    _kind = "angle"         # the coordinate's kind (limits.EFFORT_KINDS)

    def _effort(self, column: int) -> float:
        return float(getattr(self, "_joint", self)._efforts(self._kind)[column])

    @property
    def limit_effort(self) -> float:
        """What the limits applied along the coordinate in the last step: N m about the axis
        (an angle) or N along it (a position), on body_b, signed as the coordinate (a limit
        holding the coordinate down is negative); 0 off the limits. A joint's ``torque`` or
        ``force`` holds it together with the motor's, the friction's and the joint's own."""
        return self._effort(0)

    @property
    def motor_effort(self) -> float:
        """What the motor or servo applied along the coordinate in the last step (N m or N,
        on body_b, signed as the coordinate; see limit_effort): at most its max_force."""
        return self._effort(1)

    @property
    def friction_effort(self) -> float:
        """What the joint's friction applied along the coordinate in the last step (N m or N,
        on body_b, signed as the coordinate; see limit_effort): at most its friction."""
        return self._effort(2)

    def _init_actuation(self, limits, friction):
        self.limits = limits
        self._motor = NO_MOTOR
        self._max_force = 0.0
        self.friction = friction

    @property
    def limits(self):
        """(lower, upper) bounds of the coordinate, or None."""
        return None if np.isinf(self._limits).all() else tuple(self._limits)

    @limits.setter
    def limits(self, value):
        self._check_settable()
        limits = _check_limits(value, self._prefix + "limits")
        finite = [abs(x) for x in limits if np.isfinite(x)]
        if self._wrapped and value is not None and max(finite, default=0.0) > WRAPPED_LIMIT:
            raise ValueError(f"{self._prefix}limits must lie within +-{WRAPPED_LIMIT:.2f} rad "
                             f"(the angle wraps at +-pi), got {limits}")
        if self._kind == "angle" and max(finite, default=0.0) > 2 * np.pi:
            # (legal: a hinge's angle counts whole turns; but degrees typed for radians look
            # so, and would otherwise leave the joint silently unlimited)
            warn_user(f"{self._prefix}limits {shown(limits)} reach beyond a whole turn "
                      f"({max(finite) / (2 * np.pi):.3g} turns): they are in rad; for degrees "
                      f"give np.radians({shown(limits)})")
        self._limits = limits
        self._coordinates_changed()

    def set_motor(self, velocity: float, max_force: float):
        """Drive the coordinate's rate to ``velocity`` (rad/s or m/s) with at most
        ``max_force`` (N m or N)."""
        self._check_settable()
        v = check_number("velocity", velocity)
        f = _motor_force(max_force)
        # (both checked before either is kept: a refused call changes nothing)
        self._motor = (1.0, v, 0.0, 0.0)
        self._max_force = f
        self._coordinates_changed()

    def set_servo(self, target: float, stiffness: float, damping: float = 0.0,
                  max_force: float = np.inf):
        """Pull the coordinate towards ``target`` with an implicit spring (stiffness, N m/rad
        or N/m) and damper (N m s/rad or N s/m), at most ``max_force``. Stiffness 0 with a
        damping makes a pure damper, resisting the rate alone (the target then plays no
        part)."""
        self._check_settable()
        t = check_number("target", target)
        if self._wrapped and abs(t) > np.pi:
            raise ValueError(f"target must lie within [-pi, pi] (the angle wraps), got {t}")
        k = check_positive("stiffness", stiffness, allow_zero=True)
        d = check_positive("damping", damping, allow_zero=True)
        if k == 0 and d == 0:
            raise ValueError("stiffness and damping are both 0: give a stiffness for a servo, "
                             "or a damping (with stiffness 0) for a damper")
        f = _motor_force(max_force, allow_inf=True)
        self._motor = (2.0, t, k, d)
        self._max_force = f
        self._coordinates_changed()

    def disable_motor(self):
        self._check_settable()
        self._motor = NO_MOTOR
        self._coordinates_changed()

    def _actuation_spec(self):
        if np.isinf(self._limits).all() and self._motor[0] == 0 and self._friction == 0:
            return None
        return (*self._limits, np.array(self._motor), self._max_force, self._friction)


_SET_THROUGH = ("a joint's coordinates are fixed when it is made: set their limits, friction "
                "and motor through them (e.g. joint.turning_a.limits = (-1, 1))")


class Actuator(_Actuated):
    """Limits, a velocity motor or a position servo, and dry friction on one coordinate of a
    joint that has two: ``Cylindrical.turning`` (its angle: rad, rad/s, N m) and
    ``Cylindrical.sliding`` (its position: m, m/s, N), ``Universal.turning_a`` and
    ``turning_b`` (its two angles). The same ``limits``, ``friction``,
    ``set_motor``, ``set_servo`` and ``disable_motor`` as a Hinge or a Slider has for its one."""

    _kinds = {"angle": "angle", "position": "position", "angle_a": "cardan_a",
              "angle_b": "cardan_b"}

    def __init__(self, joint, coordinate: str, limits=None, friction=0.0, wrapped=False):
        self._joint, self._coordinate = joint, coordinate
        self._kind = self._kinds[coordinate]
        self._prefix = coordinate + "_"
        self._wrapped = wrapped
        self._init_actuation(limits, friction)

    def _coordinates_changed(self):
        self._joint._coordinates_changed()

    def __setattr__(self, name, value):
        check_known_attribute(self, name)
        super().__setattr__(name, value)

    def __repr__(self):
        return f"<Actuator of {self._joint!r}'s {self._coordinate}>"

    # read as a Hinge's or a Slider's coordinate is read, so one control loop serves them all
    @property
    def angle(self) -> float:
        """The angle this acts on, now (rad): the joint's ``angle``, ``angle_a`` or
        ``angle_b``."""
        if self._coordinate == "position":
            raise AttributeError(f"{self!r} acts on a position (m): read .position")
        return getattr(self._joint, self._coordinate)

    @property
    def position(self) -> float:
        """The position this acts on, now (m): the joint's ``position``."""
        if self._coordinate != "position":
            raise AttributeError(f"{self!r} acts on an angle (rad): read .angle")
        return self._joint.position

    @property
    def rate(self) -> float:
        """The time derivative of the coordinate this acts on (rad/s or m/s): the joint's
        ``angle_rate``, ``position_rate``, ``angle_a_rate`` or ``angle_b_rate``."""
        return getattr(self._joint, self._coordinate + "_rate")


class Ball(_Frictional, Joint):
    """Spherical joint: the anchor points coincide, all rotations free (3 rows).

    Ragdoll limits: ``swing_limit`` (rad) bounds the angle between ``twist_axis`` carried by
    body_a and by body_b (a cone); ``twist_limits`` (lower, upper) bound the rotation of
    body_b about that axis. ``twist_axis`` is a world direction at creation (default: from
    the anchor towards body_b's centre).

    Swing and twist are the swing-twist decomposition of body_b's rotation relative to
    body_a (zero at creation): twist is the rotation about the twist axis that remains once
    the swing is undone by the shortest rotation taking body_b's twist axis back onto
    body_a's; it is well defined for every swing below pi (``swing`` and ``twist`` report
    both, rad).

    ``friction`` (N m) resists the relative rotation about each of body_a's axes with up to
    that torque (a box, as the contacts' friction pyramid).
    """
    _ta = None          # the twist frame (local to a and b), made at _bind when it can be

    _actuated_by = ("a Ball's swing and twist are limited by swing_limit and twist_limits "
                    "(their efforts: swing_effort, twist_effort; its friction's: "
                    "friction_effort), and it has no motor; " + Joint._actuated_by)

    def __init__(self, body_a, body_b, anchor=None, swing_limit=None, twist_limits=None,
                 twist_axis=None, friction=0.0, name=None):
        super().__init__(body_a, body_b, anchor, name)
        self.friction = friction
        self.swing_limit = swing_limit
        self.twist_limits = twist_limits
        self._twist_axis_world = None if twist_axis is None else check_unit_direction(
            "twist_axis", twist_axis)

    @property
    def swing_limit(self) -> float | None:
        """The cone's half angle (rad), or None."""
        return self._swing_limit

    @swing_limit.setter
    def swing_limit(self, value):
        self._check_settable()
        value = None if value is None else check_positive("swing_limit", value)
        if value is not None and value >= np.pi:
            raise ValueError(f"swing_limit must be below pi (a cone's half angle, rad), got "
                             f"{value!r}")
        self._check_twist_axis("swing_limit", value)
        self._swing_limit = value
        self._coordinates_changed()

    @property
    def twist_limits(self) -> tuple | None:
        """(lower, upper) bounds of the twist (rad), or None."""
        return self._twist_limits

    @twist_limits.setter
    def twist_limits(self, value):
        self._check_settable()
        value = None if value is None else _check_limits(value, "twist_limits")
        reach = max((abs(x) for x in value if np.isfinite(x)), default=0.0) if value else 0.0
        if reach > np.pi:
            raise ValueError(f"twist_limits must lie within +-pi rad (the twist angle does; "
                             f"for degrees give np.radians(...)), got {shown(value)}")
        self._check_twist_axis("twist_limits", value)
        self._twist_limits = value
        self._coordinates_changed()

    def _check_twist_axis(self, name, value):
        if value is not None and self._world is not None and self._ta is None:
            raise ValueError(f"{name} needs a twist axis, and {self!r} has none (body_b's "
                             "centre was at the anchor): give twist_axis when you make it")

    def _bind(self, world):
        axis = self._twist_axis_world
        if axis is None:
            # (from the anchor to body_b's centre, kept even without limits: they may be
            # set later; checked before the joint counts as bound)
            anchor = self.body_b.position if self._anchor_given is None else self._anchor_given
            d = self.body_b.position - anchor
            if np.linalg.norm(d) < 1e-9:
                if self.swing_limit is not None or self.twist_limits is not None:
                    raise ValueError("give twist_axis: body_b's centre is at the anchor")
                super()._bind(world)
                self._ta = self._tb = self._ra = self._rb = None   # (an earlier world's)
                return
            axis = d / np.linalg.norm(d)
        super()._bind(world)
        p1, _ = perpendicular_pair(axis)
        self._ta = self._local_vector(self.body_a, axis)
        self._tb = self._local_vector(self.body_b, axis)
        self._ra = self._local_vector(self.body_a, p1)
        self._rb = self._local_vector(self.body_b, p1)

    def _instances(self, owner):
        return [self._point(owner)]

    @_once_added
    def _swing_twist(self):
        from .limits import twist_coordinate
        if self._ta is None:
            raise ValueError(f"{self!r} has no twist axis (body_b's centre was at the "
                             "anchor): give twist_axis when you make it")
        Ra, Rb = self._frame(self.body_a)[1][None], self.body_b.rotation[None]
        twist, _ = twist_coordinate(Ra, Rb, self._ta[None], self._tb[None], self._ra[None],
                                    self._rb[None])
        ua, ub = Ra[0] @ self._ta, Rb[0] @ self._tb
        swing = np.arctan2(np.linalg.norm(np.cross(ua, ub)), ua @ ub)
        return float(swing), float(twist[0])

    @property
    def swing(self) -> float:
        """Angle between the twist axis carried by body_a and by body_b, rad in [0, pi]."""
        return self._swing_twist()[0]

    @property
    def twist(self) -> float:
        """Rotation of body_b about the twist axis after the swing, rad in [-pi, pi]."""
        return self._swing_twist()[1]

    @property
    def swing_effort(self) -> float:
        """What the swing limit (the cone) applied in the last step: N m, the torque on
        body_b about the direction in which the swing grows (ua x ub over its length, ua and
        ub the twist axis carried by body_a and by body_b), so a cone holding the swing in is
        negative (it balances the load's torque about that axis); 0 off the cone or without
        a swing_limit. The joint's ``torque`` holds it with the rest."""
        return float(self._efforts("swing")[0])

    @property
    def twist_effort(self) -> float:
        """What the twist limits applied in the last step: N m, the torque on body_b about the
        twist axis, signed as ``twist`` (a limit holding the twist down is negative: twisted
        into its upper limit by a torque T, it reads -T); 0 off the limits or without
        twist_limits. The joint's ``torque`` holds it with the rest."""
        return float(self._efforts("twist")[0])

    @property
    def friction_effort(self) -> np.ndarray:
        """The torque (3,) the joint's friction applied to body_b in the last step, N m,
        world frame (body_a takes the opposite): up to ``friction`` about each of body_a's
        axes; zero without friction. The joint's ``torque`` holds it with the rest."""
        return self._efforts("axis").copy()

    def _coordinate_specs(self):
        a, b = self._rows_a, self.body_b.row
        specs = []
        if self.swing_limit is not None:
            specs.append(("swing", (a, b, self._ta, self._tb, -np.inf, self.swing_limit,
                                    np.array(NO_MOTOR), 0.0, 0.0)))
        if self.twist_limits is not None:
            specs.append(("twist", (a, b, self._ta, self._tb, self._ra, self._rb,
                                    *self.twist_limits, np.array(NO_MOTOR), 0.0, 0.0)))
        return specs + self._axis_friction_specs(("axis", axis) for axis in np.eye(3))


class _AxisJoint(Joint):
    """A joint with an axis fixed in body_a (world-frame ``axis`` at creation)."""

    def __init__(self, body_a, body_b, anchor=None, axis=(0, 0, 1), name=None):
        super().__init__(body_a, body_b, anchor, name)
        self._axis_world = check_unit_direction("axis", axis)

    def _bind(self, world):
        super()._bind(world)
        self._keep_axis(self._axis_world)

    @property
    @_once_added
    def axis(self) -> np.ndarray:
        """Current world direction of the axis (fixed in body_a) (3,)."""
        return self._frame(self.body_a)[1] @ self._axis_a

    def _across_axis(self, owner):
        return [self._line(owner, pa) for pa in self._perp_a]


class _Turning:
    """The continuous angle of an axis joint that turns about its axis (Hinge, Cylindrical)."""

    @property
    def angle(self) -> float:
        """Rotation of body_b relative to body_a about the axis, right-handed, zero at
        creation; continuous, counting whole turns (rad)."""
        world = self.world
        if world._angles_current:       # (the step's own, at the state it ended with)
            return float(world._joint_angle[self.index])
        return float(world._turning_angles().at(joints=[self.index])[0][0])

    def _angle_rate(self) -> float:
        return float(self._relative_angular_velocity() @ self.axis)

    def apply_torque(self, torque: float):
        """Drive the angle with ``torque`` (N m) for the next step, as a motor acting
        between the bodies would: ``torque`` about the axis on body_b and its opposite on
        body_a (``Body.apply_torque``: it acts on that one step; apply it before every step
        for a steady one). Its power is torque times ``rate``."""
        self._load_both_sides(torque=check_number("torque", torque) * self.axis)

    def _angle_frame(self):
        """What the angle is taken from (limits.TURNED["angle"]): the body rows of a and b,
        then the axis and the reference direction local to a and the reference local to b."""
        return self._rows_a, self.body_b.row, self._axis_a, self._perp_a[0], self._perp_b[0]

    def _angle_specs(self, actuation: _Actuated):
        spec = actuation._actuation_spec()
        return [] if spec is None else [("angle", (*self._angle_frame(), *spec))]


class _Sliding:
    """The displacement of an axis joint that slides along its axis (Slider, Cylindrical)."""

    def _separation(self):
        xa, ra = self._frame(self.body_a)
        return self.anchor - (xa + ra @ self._la)

    @property
    def position(self) -> float:
        """Displacement of body_b's anchor along the axis from where it was at creation (m)."""
        return float(self._separation() @ self.axis)

    def apply_force(self, force: float):
        """Drive the position with ``force`` (N) for the next step, as an actuator acting
        between the bodies would: ``force`` along the axis on body_b at its anchor and its
        opposite on body_a at the same point (``Body.apply_force``: it acts on that one
        step). Its power is force times the position's rate."""
        self._load_both_sides(force=check_number("force", force) * self.axis,
                              point=self.anchor)

    def _position_rate(self) -> float:
        va = np.zeros(3) if self.body_a is None else self.body_a.point_velocity(
            self._frame(self.body_a)[0] + self._frame(self.body_a)[1] @ self._la)
        vb = self.body_b.point_velocity(self.anchor)
        wa = np.zeros(3) if self.body_a is None else self.body_a.angular_velocity
        # d/dt (axis . d) with the axis carried by body_a
        return float((vb - va) @ self.axis + cross(wa, self.axis) @ self._separation())

    def _position_specs(self, actuation: _Actuated):
        spec = actuation._actuation_spec()
        return [] if spec is None else [("position", (self._rows_a, self.body_b.row, self._la,
                                                      self._lb, self._axis_a, *spec))]


class Hinge(_Turning, _AxisJoint, _Actuated):
    """Revolute joint: anchors coincide, rotation only about ``axis`` (5 rows).

    ``angle`` is the rotation of body_b relative to body_a about the axis, right-handed,
    zero at creation (rad); ``rate`` its time derivative (rad/s). ``limits=(lo, hi)`` in rad;
    ``set_motor`` / ``set_servo`` drive the angle (torques in N m); ``friction`` (N m) resists
    its turning.

    The angle is continuous and counts whole turns: a wheel driven for three turns reports
    about 6 pi, not a value wrapped into (-pi, pi]. The world keeps each hinge's angle from
    the end of every step and takes the branch of the geometric angle nearest to it, so
    limits, servo targets and couplings (``Gear``, ``Coupling``) may span several turns.
    (Posing the bodies by hand keeps the branch nearest to the last angle; ``World.set_state``
    restores the turn count of its snapshot.)
    """

    def __init__(self, body_a, body_b, anchor=None, axis=(0, 0, 1), limits=None, friction=0.0,
                 name=None):
        super().__init__(body_a, body_b, anchor, axis, name)
        self._init_actuation(limits, friction)

    def _coordinate_specs(self):
        return self._angle_specs(self)

    def _instances(self, owner):
        return [self._point(owner)] + self._axis_alignment(owner)

    @property
    def rate(self) -> float:
        """d angle / dt (rad/s). In a step that bounded rows (contacts, a limit) act on, the
        rate the joint moved with over that step: in the step a limit stops it, up to its
        approach speed (the angle is at the limit already)."""
        return self._angle_rate()


class Slider(_Sliding, _AxisJoint, _Actuated):
    """Prismatic joint: no relative rotation, translation only along ``axis`` (5 rows).

    ``position`` is the displacement of body_b's anchor along the axis from where it was at
    creation (m); ``rate`` its time derivative (m/s). ``limits=(lo, hi)`` in m; motors and
    servos push with forces in N; ``friction`` (N) resists its sliding.
    """
    _kind = "position"

    def __init__(self, body_a, body_b, anchor=None, axis=(0, 0, 1), limits=None, friction=0.0,
                 name=None):
        super().__init__(body_a, body_b, anchor, axis, name)
        self._init_actuation(limits, friction)

    def _bind(self, world):
        super()._bind(world)
        self._lock_rotation()

    def _coordinate_specs(self):
        return self._position_specs(self)

    def _instances(self, owner):
        return self._no_rotation(owner) + self._across_axis(owner)

    @property
    def rate(self) -> float:
        """d position / dt (m/s)."""
        return self._position_rate()


class Cylindrical(_Turning, _Sliding, _AxisJoint):
    """Rotation about and translation along ``axis`` (4 rows).

    ``angle`` (rad, continuous through whole turns, as ``Hinge.angle``) and ``position`` (m,
    as ``Slider.position``) are its two coordinates, zero at creation; ``angle_rate``
    (rad/s) and ``position_rate`` (m/s) their time derivatives.

    Each coordinate has its own limits, motor or servo and friction, as a Hinge's angle and
    a Slider's position have: ``turning`` acts on the angle (rad, N m), ``sliding`` on the
    position (m, N), e.g. ``joint.sliding.set_motor(velocity=0.1, max_force=50.0)``; the
    constructor takes their limits and friction as ``angle_limits``, ``position_limits``,
    ``angle_friction`` and ``position_friction``."""

    def __init__(self, body_a, body_b, anchor=None, axis=(0, 0, 1), angle_limits=None,
                 position_limits=None, angle_friction=0.0, position_friction=0.0, name=None):
        super().__init__(body_a, body_b, anchor, axis, name)
        self._turning = Actuator(self, "angle", angle_limits, angle_friction)
        self._sliding = Actuator(self, "position", position_limits, position_friction)

    turning = MadeWith(_SET_THROUGH, "The angle's limits, motor or servo and friction.")
    sliding = MadeWith(_SET_THROUGH, "The position's limits, motor or servo and friction.")

    def _coordinate_specs(self):
        return self._angle_specs(self.turning) + self._position_specs(self.sliding)

    def _instances(self, owner):
        return self._axis_alignment(owner) + self._across_axis(owner)

    @property
    def angle_rate(self) -> float:
        return self._angle_rate()

    @property
    def position_rate(self) -> float:
        return self._position_rate()


class Fixed(Joint):
    """Weld: anchors coincide and the relative orientation is locked (6 rows)."""

    def _bind(self, world):
        super()._bind(world)
        self._lock_rotation()

    def _instances(self, owner):
        return [self._point(owner)] + self._no_rotation(owner)


class RotationLock(Joint):
    """Holds body_b's orientation relative to body_a (the world for None), leaving its
    translation free: Box2D's fixedRotation, Unity's freezeRotation, Bullet's angular factor
    (3 rows). With ``axis`` (a world direction at creation), only that axis is held: body_b's
    direction along it stays along body_a's, and body_b turns freely about it (2 rows), e.g.
    ``RotationLock(None, character, axis=(0, 0, 1))`` for a capsule that yaws but never tips.

    It has no anchor: its rows are those of ``Fixed`` (or of a ``Hinge``'s axis) without the
    point, so its ``force`` is zero and its ``torque`` (N m, world frame, on body_b; body_a
    takes the opposite) is a pure torque, the same about every point (``anchor`` reports
    body_b's centre). Two bodies locked to each other are not joined at any point, so they
    still collide (``world.ignore_collision`` them if they should not)."""

    _joins_bodies = False       # (contacts.excluded_pairs: its bodies still collide)

    def __init__(self, body_a, body_b, axis=None, name: str | None = None):
        super().__init__(body_a, body_b, None, name)
        self._axis_world = None if axis is None else check_unit_direction("axis", axis)

    def _bind(self, world):
        super()._bind(world)
        if self._axis_world is None:
            self._lock_rotation()
        else:
            self._keep_axis(self._axis_world)

    def _instances(self, owner):
        if self._axis_world is None:
            return self._no_rotation(owner)
        return self._axis_alignment(owner)

    @property
    def axis(self) -> np.ndarray | None:
        """Current world direction of the held axis (carried by body_a) (3,), or None for a
        lock of the whole orientation."""
        if self._axis_world is None:
            return None
        return self._frame(self.body_a)[1] @ self._axis_a

    @property
    def anchor(self) -> np.ndarray:
        """body_b's centre (3,), metres: the lock has no anchor, and its wrench is a pure
        torque, which is the same about every point."""
        return self.body_b.position


class Universal(Joint):
    """Cardan joint: anchors coincide, ``axis_a`` (fixed in body_a) stays perpendicular to
    ``axis_b`` (fixed in body_b); the two must be perpendicular at creation (4 rows).

    Its two coordinates, zero at creation (rad, in [-pi, pi]): ``angle_a``, the turn of the
    cross (which carries axis_b) about axis_a, and ``angle_b``, body_b's turn about axis_b
    against the cross; the relative angular velocity is ``angle_a_rate`` axis_a plus
    ``angle_b_rate`` axis_b. Each has its own limits, motor or servo and friction, as a
    Hinge's angle has: ``turning_a`` acts on angle_a, ``turning_b`` on angle_b (e.g.
    ``joint.turning_b.set_servo(target=0.3, stiffness=50.0)``); the constructor takes them
    as ``angle_a_limits``, ``angle_b_limits``, ``angle_a_friction`` and ``angle_b_friction``
    (keyword only). ``friction`` (N m) is both axes' friction. The angles wrap: limits stay
    within +-(pi - 0.2) and servo targets within +-pi, and a servo pulls the short way
    round."""

    def __init__(self, body_a, body_b, anchor=None, axis_a=(1, 0, 0), axis_b=(0, 1, 0),
                 friction=0.0, name=None, *, angle_a_limits=None, angle_b_limits=None,
                 angle_a_friction=None, angle_b_friction=None):
        super().__init__(body_a, body_b, anchor, name)
        self._axis_a_world = check_unit_direction("axis_a", axis_a)
        self._axis_b_world = check_unit_direction("axis_b", axis_b)
        if abs(self._axis_a_world @ self._axis_b_world) > 1e-6:
            raise ValueError("axis_a and axis_b of a Universal joint must be perpendicular")
        friction = check_positive("friction", friction, allow_zero=True)
        self._turning_a = Actuator(self, "angle_a", angle_a_limits,
                                   friction if angle_a_friction is None else angle_a_friction,
                                   wrapped=True)
        self._turning_b = Actuator(self, "angle_b", angle_b_limits,
                                   friction if angle_b_friction is None else angle_b_friction,
                                   wrapped=True)

    turning_a = MadeWith(_SET_THROUGH, "angle_a's limits, motor or servo and friction.")
    turning_b = MadeWith(_SET_THROUGH, "angle_b's limits, motor or servo and friction.")

    @property
    def friction(self):
        """The largest torque (N m) the friction about each axis resists turning with (None
        when ``turning_a`` and ``turning_b`` were given different friction)."""
        fa, fb = self.turning_a.friction, self.turning_b.friction
        return fa if fa == fb else None

    @friction.setter
    def friction(self, value):
        self._check_settable_joint()
        value = check_positive("friction", value, allow_zero=True)
        self.turning_a.friction = value
        self.turning_b.friction = value

    def _bind(self, world):
        super()._bind(world)
        self._ua = self._local_vector(self.body_a, self._axis_a_world)
        self._vb = self._local_vector(self.body_b, self._axis_b_world)
        # where the angles are measured from: axis_b as body_a saw it at creation, and
        # axis_a as body_b saw it
        self._ra = self._local_vector(self.body_a, self._axis_b_world)
        self._rb = self._local_vector(self.body_b, self._axis_a_world)

    def _instances(self, owner):
        return [self._point(owner), self._perpendicular(owner, self._ua, self._vb)]

    def _cardan_frames(self):
        """Per coordinate (limits.TURNED kind, its actuator, its local vectors)."""
        return (("cardan_a", self.turning_a, (self._ua, self._ra, self._vb)),
                ("cardan_b", self.turning_b, (self._vb, self._ua, self._rb)))

    @_once_added
    def _coordinates(self):
        """(angle_a, angle_b) now, and the world axes their rates are taken about."""
        R = (self._frame(self.body_a)[1], self.body_b.rotation)
        out = []
        for kind, _, local in self._cardan_frames():
            turned = [(R[side] @ local[arg])[None] for side, arg in TURNED[kind]]
            angle, axis = angle_about(*turned)
            out.append((float(angle[0]), axis[0]))
        return out

    @property
    def angle_a(self) -> float:
        """The cross's turn about axis_a relative to body_a (rad, [-pi, pi])."""
        return self._coordinates()[0][0]

    @property
    def angle_b(self) -> float:
        """body_b's turn about axis_b relative to the cross (rad, [-pi, pi])."""
        return self._coordinates()[1][0]

    @property
    def angle_a_rate(self) -> float:
        return float(self._relative_angular_velocity() @ self._coordinates()[0][1])

    @property
    def angle_b_rate(self) -> float:
        return float(self._relative_angular_velocity() @ self._coordinates()[1][1])

    def _coordinate_specs(self):
        a, b = self._rows_a, self.body_b.row
        specs = []
        for kind, actuator, local in self._cardan_frames():
            spec = actuator._actuation_spec()
            if spec is not None:
                specs.append((kind, (a, b, *local, *spec)))
        return specs


class Distance(_Actuated, Joint):
    """A rigid rod, or a rope, strut or spring, between ``anchor_a`` (on body_a) and
    ``anchor_b`` (on body_b), world points at creation (metres).

    Without ``limits`` it keeps the anchors ``length`` apart (default: their distance at
    creation), pulling and pushing (1 row). With ``limits=(lower, upper)`` (m) it has no
    fixed length: the anchors move freely between ``lower`` and ``upper`` apart, held there
    by one-sided rows as a hinge's limits hold its angle. A rope of 2 m is
    ``limits=(0, 2.0)`` (a lower limit of 0 is none: it never pushes), a strut that only
    pushes ``limits=(0.5, inf)``. Such a joint's length also takes ``set_servo(target,
    stiffness, damping)``, a spring-damper pulling it towards ``target`` (N/m, N s/m: a
    spring that cannot overstretch, with limits), ``set_motor(velocity, max_force)``, a winch
    (m/s, N), and ``friction`` (N). ``distance`` is the anchors' distance now and ``rate``
    its rate (m/s); ``limit_effort``, ``motor_effort`` and ``friction_effort`` report the
    force along the line from anchor_a to anchor_b on body_b (N, positive pushing apart)."""

    _anchor_name = "anchor_b"           # (the anchor Joint keeps is body_b's)
    _anchor_a_name = "anchor_a"
    _kind = "length"

    def __init__(self, body_a, body_b, anchor_a=None, anchor_b=None, length=None, limits=None,
                 friction=0.0, name=None):
        super().__init__(body_a, body_b, anchor_b, name)
        self._anchor_a_world = None if anchor_a is None else check_vector("anchor_a", anchor_a, 3)
        self._rigid = limits is None
        if not self._rigid and length is not None:
            raise ValueError("give a Distance either length= (a rigid rod) or limits= (a rope, "
                             "strut or spring, whose length moves within them), not both")
        # the length as given (None: the anchors' distance at each add), and as bound
        self._length_given = None if length is None else check_positive("length", length)
        self._length = self._length_given
        self._init_actuation(limits, friction)

    def _check_free(self, what: str):
        if self._rigid:
            raise ValueError(f"this Distance is a rigid rod (made without limits): its length "
                             f"has no {what}; make it with limits=(lower, upper) for a rope, "
                             "strut or spring")

    @_Actuated.limits.setter
    def limits(self, value):
        if value is not None:
            self._check_free("limits")
            lower, upper = _check_limits(value)
            if upper <= 0:
                raise ValueError(f"limits' upper bound must be > 0 m (a distance), got "
                                 f"{shown(value)}")
            # (-5 was taken and reported back, though no length is ever below 0; -inf is
            # the one-sided limit any coordinate takes)
            if lower < 0 and lower != -np.inf:
                raise ValueError(f"limits' lower bound must be 0 m or more (a distance is "
                                 f"never negative), got {shown(value)}; give 0, or -inf for "
                                 "no lower bound")
        _Actuated.limits.fset(self, value)

    @_Actuated.friction.setter
    def friction(self, value):
        if check_positive("friction", value, allow_zero=True):
            self._check_free("friction")
        _Actuated.friction.fset(self, value)

    def set_motor(self, velocity: float, max_force: float):
        """Drive the length at ``velocity`` (m/s, positive lengthening) with at most
        ``max_force`` (N): a winch."""
        self._check_free("motor")
        super().set_motor(velocity, max_force)

    def set_servo(self, target: float, stiffness: float, damping: float = 0.0,
                  max_force: float = np.inf):
        """Pull the length towards ``target`` (m) with an implicit spring (``stiffness``,
        N/m) and damper (``damping``, N s/m), at most ``max_force`` (N)."""
        self._check_free("servo")
        check_positive("target", target, allow_zero=True)
        super().set_servo(target, stiffness, damping, max_force)

    def _bind(self, world):
        super()._bind(world)
        pa = self._anchor_a_world
        if pa is None:
            pa = np.zeros(3) if self.body_a is None else self.body_a.position
        self._la = self._local_point(self.body_a, pa)
        self._length = self._length_given
        if self._length is None and self._rigid:
            self._length = float(np.linalg.norm(self._anchor_world - pa))
            if self._length < 1e-9:
                raise ValueError("anchor_a and anchor_b coincide; give a Distance joint a "
                                 "positive length or separate anchors")

    @property
    def length(self) -> float | None:
        """The rigid rod's length (m), or None for one made with limits (see ``distance``)."""
        return self._length

    @property
    @_once_added
    def anchor_a(self) -> np.ndarray:
        """Current world position of the anchor on body_a (3,), metres."""
        x, r = self._frame(self.body_a)
        return x + r @ self._la

    @property
    def distance(self) -> float:
        """The anchors' distance now (m)."""
        return float(np.linalg.norm(self.anchor - self.anchor_a))

    @property
    def rate(self) -> float:
        """d distance / dt (m/s): the anchors' relative velocity along the line between
        them."""
        d = self.anchor - self.anchor_a
        va = np.zeros(3) if self.body_a is None else self.body_a.point_velocity(self.anchor_a)
        n = d / max(np.linalg.norm(d), 1e-300)
        return float((self.body_b.point_velocity(self.anchor) - va) @ n)

    def _coordinate_specs(self):
        spec = self._actuation_spec()
        if spec is None:
            return []
        lo = -np.inf if spec[0] <= 0 else spec[0]     # (a distance is never below 0)
        return [("length", (self._rows_a, self.body_b.row, self._la, self._lb, lo, *spec[1:]))]

    def _instances(self, owner):
        if not self._rigid:
            return []
        return [("distance", (owner, self._rows_a, self.body_b.row, self._la, self._lb,
                              self._length))]
