"""Joints: Ball, Hinge, Slider, Fixed, Universal, Cylindrical, Distance.

A joint is given in world coordinates at creation (anchor points, axes) and, when added to a
world, stores them in each body's local frame. It then contributes instances of the row
primitives of ``rows.py``; the world evaluates each primitive kind for all joints at once.

``body_a=None`` means the fixed world frame. Reported forces (``force``, ``torque``) are the
wrench the joint applies to ``body_b``, world frame, torque about the joint anchor on body_b;
body_a receives the opposite.
"""
from __future__ import annotations

import numpy as np

from .math3d import perpendicular_pair
from .validation import check_positive, check_unit_direction, check_vector


class Joint:
    """Base class. Subclasses define ``_instances`` (their rows) and coordinates."""

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
        self.body_a = body_a
        self.body_b = body_b
        self._anchor_world = None if anchor is None else check_vector("anchor", anchor, 3)
        self.name = name
        self._world = None
        self._index = -1

    # -- binding to a world --------------------------------------------------------------
    def _frame(self, body):
        """(position, rotation matrix) of a body, or the world frame for None."""
        if body is None:
            return np.zeros(3), np.eye(3)
        return body.position, body.rotation

    def _local_point(self, body, p):
        x, r = self._frame(body)
        return r.T @ (p - x)

    def _local_vector(self, body, v):
        return self._frame(body)[1].T @ v

    def _bind(self, world):
        """Store the world-frame definition in body-local terms (called by World.add_joint)."""
        if self._anchor_world is None:
            self._anchor_world = self.body_b.position
        self._la = self._local_point(self.body_a, self._anchor_world)
        self._lb = self._local_point(self.body_b, self._anchor_world)
        self._world = world

    @property
    def _rows_a(self):
        return 0 if self.body_a is None else self.body_a.row

    def _instances(self, owner: int) -> dict[str, list[tuple]]:
        raise NotImplementedError

    def _point(self, owner):
        return ("point", (owner, self._rows_a, self.body_b.row, self._la, self._lb))

    def _perpendicular(self, owner, ua, vb):
        return ("perpendicular", (owner, self._rows_a, self.body_b.row, ua, vb))

    def _line(self, owner, ta):
        return ("line", (owner, self._rows_a, self.body_b.row, self._la, self._lb, ta))

    def _no_rotation(self, owner):
        """Three perpendicularity rows that lock the relative orientation."""
        e = np.eye(3)
        return [self._perpendicular(owner, self._local_vector(self.body_a, e[i]),
                                    self._local_vector(self.body_b, e[(i + 1) % 3]))
                for i in range(3)]

    # -- reporting -----------------------------------------------------------------------
    @property
    def world(self):
        if self._world is None:
            raise ValueError(f"{self!r} is not in a world; add it with world.add_joint")
        return self._world

    @property
    def index(self) -> int:
        self.world
        if self._index < 0:
            raise ValueError(f"{self!r} has been removed from its world")
        return self._index

    @property
    def anchor(self) -> np.ndarray:
        """Current world position of the anchor on body_b (3,), metres."""
        return self.body_b.position + self.body_b.rotation @ self._lb

    @property
    def force(self) -> np.ndarray:
        """Constraint force on body_b, world frame, N (3,), from the last step."""
        return self.world._joint_wrenches()[self.index, :3].copy()

    @property
    def torque(self) -> np.ndarray:
        """Constraint torque on body_b about the anchor, world frame, N m (3,)."""
        return self.world._joint_wrenches()[self.index, 3:].copy()

    def _relative_angular_velocity(self):
        wa = np.zeros(3) if self.body_a is None else self.body_a.angular_velocity
        return self.body_b.angular_velocity - wa

    def __repr__(self):
        label = f" {self.name!r}" if self.name else ""
        a = "world" if self.body_a is None else repr(self.body_a)
        return f"<{type(self).__name__}{label} {a} -> {self.body_b!r}>"


class Ball(Joint):
    """Spherical joint: the anchor points coincide, all rotations free (3 rows)."""

    def _instances(self, owner):
        return [self._point(owner)]


class _AxisJoint(Joint):
    """A joint with an axis fixed in body_a (world-frame ``axis`` at creation)."""

    def __init__(self, body_a, body_b, anchor=None, axis=(0, 0, 1), name=None):
        super().__init__(body_a, body_b, anchor, name)
        self._axis_world = check_unit_direction("axis", axis)

    def _bind(self, world):
        super()._bind(world)
        p1, p2 = perpendicular_pair(self._axis_world)
        self._axis_a = self._local_vector(self.body_a, self._axis_world)
        self._perp_a = [self._local_vector(self.body_a, p) for p in (p1, p2)]
        self._perp_b = [self._local_vector(self.body_b, p) for p in (p1, p2)]

    @property
    def axis(self) -> np.ndarray:
        """Current world direction of the axis (fixed in body_a) (3,)."""
        return self._frame(self.body_a)[1] @ self._axis_a

    def _axis_alignment(self, owner):
        return [self._perpendicular(owner, self._axis_a, pb) for pb in self._perp_b]

    def _across_axis(self, owner):
        return [self._line(owner, pa) for pa in self._perp_a]


class Hinge(_AxisJoint):
    """Revolute joint: anchors coincide, rotation only about ``axis`` (5 rows).

    ``angle`` is the rotation of body_b relative to body_a about the axis, right-handed,
    zero at creation (rad); ``rate`` its time derivative (rad/s).
    """

    def _instances(self, owner):
        return [self._point(owner)] + self._axis_alignment(owner)

    @property
    def angle(self) -> float:
        ra = self._frame(self.body_a)[1] @ self._perp_a[0]
        rb = self.body_b.rotation @ self._perp_b[0]
        return float(np.arctan2(np.cross(ra, rb) @ self.axis, ra @ rb))

    @property
    def rate(self) -> float:
        return float(self._relative_angular_velocity() @ self.axis)


class Slider(_AxisJoint):
    """Prismatic joint: no relative rotation, translation only along ``axis`` (5 rows).

    ``position`` is the displacement of body_b's anchor along the axis from where it was at
    creation (m); ``rate`` its time derivative (m/s).
    """

    def _instances(self, owner):
        return self._no_rotation(owner) + self._across_axis(owner)

    def _separation(self):
        xa, ra = self._frame(self.body_a)
        return self.anchor - (xa + ra @ self._la)

    @property
    def position(self) -> float:
        return float(self._separation() @ self.axis)

    @property
    def rate(self) -> float:
        va = np.zeros(3) if self.body_a is None else self.body_a.point_velocity(
            self._frame(self.body_a)[0] + self._frame(self.body_a)[1] @ self._la)
        vb = self.body_b.point_velocity(self.anchor)
        wa = np.zeros(3) if self.body_a is None else self.body_a.angular_velocity
        # d/dt (axis . d) with the axis carried by body_a
        return float((vb - va) @ self.axis + np.cross(wa, self.axis) @ self._separation())


class Cylindrical(_AxisJoint):
    """Rotation about and translation along ``axis`` (4 rows)."""

    def _instances(self, owner):
        return self._axis_alignment(owner) + self._across_axis(owner)


class Fixed(Joint):
    """Weld: anchors coincide and the relative orientation is locked (6 rows)."""

    def _instances(self, owner):
        return [self._point(owner)] + self._no_rotation(owner)


class Universal(Joint):
    """Cardan joint: anchors coincide, ``axis_a`` (fixed in body_a) stays perpendicular to
    ``axis_b`` (fixed in body_b); the two must be perpendicular at creation (4 rows)."""

    def __init__(self, body_a, body_b, anchor=None, axis_a=(1, 0, 0), axis_b=(0, 1, 0), name=None):
        super().__init__(body_a, body_b, anchor, name)
        self._axis_a_world = check_unit_direction("axis_a", axis_a)
        self._axis_b_world = check_unit_direction("axis_b", axis_b)
        if abs(self._axis_a_world @ self._axis_b_world) > 1e-6:
            raise ValueError("axis_a and axis_b of a Universal joint must be perpendicular")

    def _bind(self, world):
        super()._bind(world)
        self._ua = self._local_vector(self.body_a, self._axis_a_world)
        self._vb = self._local_vector(self.body_b, self._axis_b_world)

    def _instances(self, owner):
        return [self._point(owner), self._perpendicular(owner, self._ua, self._vb)]


class Distance(Joint):
    """Keeps ``anchor_a`` (on body_a) and ``anchor_b`` (on body_b) at ``length`` metres
    (default: their distance at creation) (1 row)."""

    def __init__(self, body_a, body_b, anchor_a=None, anchor_b=None, length=None, name=None):
        super().__init__(body_a, body_b, anchor_b, name)
        self._anchor_a_world = None if anchor_a is None else check_vector("anchor_a", anchor_a, 3)
        self._length = None if length is None else check_positive("length", length)

    def _bind(self, world):
        super()._bind(world)
        pa = self._anchor_a_world
        if pa is None:
            pa = np.zeros(3) if self.body_a is None else self.body_a.position
        self._la = self._local_point(self.body_a, pa)
        if self._length is None:
            self._length = float(np.linalg.norm(self._anchor_world - pa))
            if self._length < 1e-9:
                raise ValueError("anchor_a and anchor_b coincide; give a Distance joint a "
                                 "positive length or separate anchors")

    @property
    def length(self) -> float:
        return self._length

    def _instances(self, owner):
        return [("distance", (owner, self._rows_a, self.body_b.row, self._la, self._lb,
                              self._length))]
