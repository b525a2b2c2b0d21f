"""Collision shapes and the mass properties they imply.

Every shape is described in its body's frame, centred on the body's centre of mass.
Capsules and cylinders lie along the body's local z axis. A ``Plane`` is static only and is
given in world coordinates: the points ``x`` with ``normal . x == offset``.

Each shape also has a numeric ``KIND`` and a 4-vector of ``params`` so that the world can
keep all shapes in two flat arrays (see ``SHAPE_PARAMS`` below for the layout).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import check_number, check_positive, check_vector, check_unit_direction, shown

# Numeric shape kinds, as stored in World arrays. NO_SHAPE marks a body without geometry
# (the hidden world-frame body, or a body created from an explicit inertia only).
NO_SHAPE, SPHERE, BOX, CAPSULE, CYLINDER, PLANE = -1, 0, 1, 2, 3, 4

# params layout per kind (length-4 float vector):
#   SPHERE   (radius, 0, 0, 0)
#   BOX      (hx, hy, hz, 0)            half extents along local x, y, z
#   CAPSULE  (radius, half_length, 0, 0) segment from -half_length to +half_length on local z
#   CYLINDER (radius, half_length, 0, 0)
#   PLANE    (nx, ny, nz, offset)        world frame, unit normal
SHAPE_PARAMS = "see module docstring"


class Shape:
    KIND = NO_SHAPE

    @property
    def params(self) -> np.ndarray:
        raise NotImplementedError

    def volume(self) -> float:
        raise NotImplementedError

    def unit_inertia(self) -> np.ndarray:
        """Body-frame inertia about the centre of mass per unit mass, m^2 (3x3)."""
        raise NotImplementedError

    def bounding_radius(self) -> float:
        raise NotImplementedError


@dataclass(frozen=True)
class Sphere(Shape):
    """A ball of ``radius`` (m, > 0) centred on the body's centre of mass.

    ``world.add_body(Sphere(0.1), mass=0.5, position=(0, 0, 1))``; a uniform solid's
    inertia, 2/5 m r^2 about every axis.
    """
    radius: float
    KIND = SPHERE

    def __post_init__(self):
        object.__setattr__(self, "radius", check_positive("radius", self.radius))

    @property
    def params(self):
        return np.array([self.radius, 0.0, 0.0, 0.0])

    def volume(self):
        return 4.0 / 3.0 * np.pi * self.radius**3

    def unit_inertia(self):
        return np.eye(3) * 0.4 * self.radius**2

    def bounding_radius(self):
        return self.radius


@dataclass(frozen=True)
class Box(Shape):
    """A box centred on the body's centre of mass, with ``half_extents`` (hx, hy, hz) (m, each
    > 0) along the body's local x, y and z axes: a 1 m cube is ``Box((0.5, 0.5, 0.5))``.

    A uniform solid's inertia, m (hy^2 + hz^2) / 3 about local x and likewise.
    """
    half_extents: tuple
    KIND = BOX

    def __post_init__(self):
        he = check_vector("half_extents", self.half_extents, 3)
        if np.any(he <= 0):
            raise ValueError(f"half_extents must all be positive, got {shown(he)}")
        object.__setattr__(self, "half_extents", tuple(float(x) for x in he))

    @property
    def params(self):
        return np.array([*self.half_extents, 0.0])

    def volume(self):
        return 8.0 * float(np.prod(self.half_extents))

    def unit_inertia(self):
        hx, hy, hz = self.half_extents
        return np.diag([hy**2 + hz**2, hx**2 + hz**2, hx**2 + hy**2]) / 3.0

    def bounding_radius(self):
        return float(np.linalg.norm(self.half_extents))


@dataclass(frozen=True)
class Capsule(Shape):
    """A capsule along the body's local z axis: the points within ``radius`` (m, > 0) of
    the segment from z = -half_length to z = +half_length (m, >= 0; 0 is a sphere), centred
    on the body's centre of mass. Its length overall is 2 (half_length + radius).

    To lay it along another direction, give the body an orientation turning local z onto
    it. A uniform solid's inertia (a cylinder and two hemispherical caps).
    """
    radius: float
    half_length: float
    KIND = CAPSULE

    def __post_init__(self):
        object.__setattr__(self, "radius", check_positive("radius", self.radius))
        object.__setattr__(self, "half_length",
                           check_positive("half_length", self.half_length, allow_zero=True))

    @property
    def params(self):
        return np.array([self.radius, self.half_length, 0.0, 0.0])

    def volume(self):
        r, a = self.radius, self.half_length
        return np.pi * r**2 * 2 * a + 4.0 / 3.0 * np.pi * r**3

    def unit_inertia(self):
        # Cylinder of length 2a plus two hemispherical caps, each cap's inertia moved from its
        # own centre of mass (3r/8 from the flat face) to the capsule centre.
        r, a = self.radius, self.half_length
        mc = np.pi * r**2 * 2 * a
        mh = 2.0 / 3.0 * np.pi * r**3  # one hemisphere
        total = mc + 2 * mh
        axial = mc * r**2 / 2 + 2 * mh * 2 * r**2 / 5
        cap_own = 83.0 / 320.0 * mh * r**2  # hemisphere about its centre of mass, transverse
        dist = a + 3.0 * r / 8.0
        transverse = mc * (r**2 / 4 + (2 * a) ** 2 / 12) + 2 * (cap_own + mh * dist**2)
        return np.diag([transverse, transverse, axial]) / total

    def bounding_radius(self):
        return self.radius + self.half_length


@dataclass(frozen=True)
class Cylinder(Shape):
    """A solid cylinder along the body's local z axis, centred on the body's centre of
    mass: ``radius`` (m, > 0) and flat caps at z = -half_length and z = +half_length (m,
    > 0), so it is 2 half_length long. A wheel rolling along x turns local z onto world y
    (orientation (cos(-pi/4), sin(-pi/4), 0, 0)).

    A uniform solid's inertia: m r^2 / 2 about local z, m (r^2 / 4 + (2 half_length)^2 / 12)
    about local x and y.
    """
    radius: float
    half_length: float
    KIND = CYLINDER

    def __post_init__(self):
        object.__setattr__(self, "radius", check_positive("radius", self.radius))
        object.__setattr__(self, "half_length", check_positive("half_length", self.half_length))

    @property
    def params(self):
        return np.array([self.radius, self.half_length, 0.0, 0.0])

    def volume(self):
        return np.pi * self.radius**2 * 2 * self.half_length

    def unit_inertia(self):
        r, a = self.radius, self.half_length
        t = r**2 / 4 + (2 * a) ** 2 / 12
        return np.diag([t, t, r**2 / 2])

    def bounding_radius(self):
        return float(np.hypot(self.radius, self.half_length))


@dataclass(frozen=True)
class Plane(Shape):
    """An infinite ground, or wall: the plane of points x with ``normal . x == offset``,
    given in world coordinates, solid on the side behind its normal (``normal . x <
    offset``); bodies rest on the side the normal points to.

    ``normal``: a direction (normalised; default (0, 0, 1), up); ``offset`` (m): how far the
    plane lies from the world origin along that unit normal (``Plane(offset=-1.0)``: the
    ground at z = -1 m; ``Plane(normal=(-1, 0, 0), offset=-2.0)``: a wall at x = 2 m, solid
    beyond it).

    Static only: ``world.add_body(Plane())`` makes a static body that never moves (a
    ``position``, ``orientation``, velocity, ``mass`` or ``density`` for it is refused);
    it collides with every other shape and no plane with another plane.
    """
    normal: tuple = (0.0, 0.0, 1.0)
    offset: float = 0.0
    KIND = PLANE

    def __post_init__(self):
        n = check_unit_direction("normal", self.normal)
        object.__setattr__(self, "normal", tuple(float(x) for x in n))
        object.__setattr__(self, "offset", check_number("offset", self.offset))

    @property
    def params(self):
        return np.array([*self.normal, self.offset])

    def volume(self):
        return np.inf

    def unit_inertia(self):
        return np.zeros((3, 3))

    def bounding_radius(self):
        return np.inf
