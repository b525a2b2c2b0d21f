"""Rolling without slipping: a wheel (a sphere, or the rim circle of a disc or cylinder) on a
fixed plane, as equality rows (no contact solver, no friction cone: the plane can pull as
well as push, and the grip is unlimited).

``Rolling(wheel, plane_normal=(0, 0, 1), plane_offset=0.0, radius=None, axis=None)`` keeps
the wheel's contact point P (the point of its rolling surface nearest to the plane
{p : n . p = plane_offset}) on the plane and at rest:

- 1 holonomic row (metres): C = n . P - offset, the height of the contact point above the plane.
- 2 non-holonomic rows (Pfaffian velocity constraints, m/s): t_i . (v + w x r) = 0,
  t_1, t_2 a fixed tangent basis of the plane, r = P - x the contact offset from the centre of
  mass. They have no position-level form, so they carry C = 0 always.

Rolling surfaces. A sphere (``Sphere`` shape, or ``axis=None`` with an explicit ``radius``):
r = -radius n. A disc: the circle of ``radius`` in the plane through the centre of mass
perpendicular to the body-local ``axis`` (a ``Cylinder`` shape: its local z and its radius;
the rim of the mid-plane, which is exact for a thin disc or a wheel with a rounded tread):
with a = R axis, m = n - (n . a) a and s = |m|,

    r = -radius m / s          (the rim point furthest along -n).

Every row is e . (velocity of the material point at P) with e = n, t_1, t_2, so
J = [e, r x e] (on u = [v; w] of the wheel). For the normal row this is also dC/dt, because P is
the extreme point of the rim along n (the envelope theorem: the drift of P through the body
changes n . P only at second order). The contact point moves through the body (r is not a
material vector), so Jdot u is not the centripetal term of a material point but

    Jdot u = e . (w x rdot),   rdot = dr/dt,

with rdot = 0 for a sphere and, for a disc, with adot = w x a, c = n . a, cdot = n . adot,
mdot = -cdot a - c adot, sdot = -c cdot / s: rdot = -radius (mdot / s - m sdot / s^2).

Multipliers (the engine's sign: forces on the wheel): the row along n is the normal force,
the two tangential rows the grip (static friction) force, all at P. ``force`` (inherited) is
their sum, world frame, and ``torque`` their moment about the wheel's centre of mass.

In the step, the velocity-only rows (C = 0) take part in the seed equation (stabilised by the
Baumgarte d term alone), in the SHAKE position correction (where they only ask the correction
not to slip the contact point: J_t dx = 0; there is no position error along them) and in the
final velocity projection onto J u = 0, which removes any slip exactly.
"""
from __future__ import annotations

import numpy as np

from .joints import Joint, MadeWith
from .math3d import cross, dot, perpendicular_pair, rotate
from .rows import Kinematics, Rows
from .shapes import Cylinder, Plane, Sphere
from .validation import check_number, check_positive, check_unit_direction, shown


_NEW_ROLLING = ("a wheel's plane, radius and axis are fixed when its Rolling is made: make a "
                "new Rolling (world.remove_joint takes this one out)")


class Rolling(Joint):
    """A wheel rolls without slipping on a fixed plane (3 rows: 1 holonomic, 2 velocity-only).

    Its anchor is the wheel's centre: ``force`` is the plane's push and grip on the wheel and
    ``torque`` is their moment about the centre (a grip f at the contact reads f r).

    Parameters
    ----------
    wheel : the rolling body (a Sphere or a Cylinder body, or any body with ``radius`` and,
        for a disc, ``axis``).
    plane_normal : unit normal of the plane (world frame), pointing towards the wheel.
    plane_offset : the plane is {p : plane_normal . p = plane_offset}, m.
    radius : rolling radius, m (default: the shape's radius).
    axis : for a disc, its axis in the wheel's body frame (default (0, 0, 1) for a Cylinder);
        None for a sphere.
    plane : optionally a static body with a ``Plane`` shape, whose normal and offset are used
        instead of plane_normal and plane_offset.
    """

    def __init__(self, wheel, plane_normal=(0.0, 0.0, 1.0), plane_offset: float = 0.0,
                 radius: float | None = None, axis=None, plane=None, name: str | None = None):
        from .body import Body
        if not isinstance(wheel, Body):
            raise ValueError(f"wheel must be a Body returned by world.add_body, got {wheel!r}")
        super().__init__(None, wheel, name=name)
        if plane is not None:
            shape = getattr(plane, "shape", None)
            if not isinstance(shape, Plane):
                raise ValueError(f"plane must be a static body with a Plane shape, got {plane!r}")
            plane_normal, plane_offset = shape.normal, shape.offset
        self._plane_body = plane       # (kept so that it cannot be removed under the wheel)
        self._normal = check_unit_direction("plane_normal", plane_normal)
        self._offset = check_number("plane_offset", plane_offset)
        self._tangents = np.array(perpendicular_pair(self.normal))
        shape = wheel.shape
        if radius is None:
            if not isinstance(shape, (Sphere, Cylinder)):
                raise ValueError(f"radius is needed: the wheel's shape {shape!r} is not a "
                                 "Sphere or a Cylinder")
            radius = shape.radius
        self._radius = check_positive("radius", radius)
        if axis is None and isinstance(shape, Cylinder):
            axis = (0.0, 0.0, 1.0)
        self._axis = None if axis is None else check_unit_direction("axis", axis)
        if wheel.static:
            raise ValueError("wheel must be a dynamic body")

    # (the world builds the rows from them when the joint is added: a radius set later was
    # reported and never used, and a 'big' one failed deep in the step)
    normal = MadeWith(_NEW_ROLLING, "The plane's unit normal (3,), world frame.")
    offset = MadeWith(_NEW_ROLLING, "The plane is {p : normal . p = offset}, m.")
    tangents = MadeWith(_NEW_ROLLING, "(2, 3) the plane's tangent directions the grip acts "
                        "along.")
    radius = MadeWith(_NEW_ROLLING, "The rolling radius, m.")
    axis = MadeWith(_NEW_ROLLING, "A disc's axis in the wheel's body frame (3,), or None "
                    "for a sphere.")

    def _bind(self, world):
        height = float(self.normal @ self.body_b.position) - self.offset
        if height < 0.0:
            # (its contact point would be the far side of the wheel: the step pulled a ball
            # resting on z = 0 through the plane given plane_normal (0, 0, -1))
            raise ValueError(f"plane_normal {shown(self.normal)} points away from the wheel "
                             f"(its centre is {-height:.4g} m behind the plane): give the "
                             "normal pointing from the plane towards the wheel")
        if self.axis is not None:
            a = self.body_b.rotation @ self.axis
            if abs(a @ self.normal) > 1.0 - 1e-9:
                raise ValueError("the disc lies flat on the plane (its axis is along "
                                 "plane_normal): the contact point is undefined")
        super()._bind(world)          # anchor: the wheel's centre of mass (local 0)

    def _params(self):
        """This wheel's entry of ``rolling_rows``: normal, t1, t2, offset, radius, axis, disc."""
        disc = self.axis is not None
        axis = self.axis if disc else np.array([0.0, 0.0, 1.0])     # unused for a sphere
        return (self.normal, *self.tangents, self.offset, self.radius, axis, float(disc))

    def _instances(self, owner):
        return [("rolling", (owner, 0, self.body_b.row, *self._params()))]

    # -- reporting -----------------------------------------------------------------------
    @property
    def contact_offset(self) -> np.ndarray:
        """r = contact point - centre of mass (3,), world frame, m."""
        normal, _, _, _, radius, axis, disc = self._params()
        body = self.body_b
        r, _ = contact_offsets(body.rotation[None], body.angular_velocity[None], normal[None],
                               np.array([radius]), axis[None], np.array([disc]))
        return r[0]

    @property
    def contact_point(self) -> np.ndarray:
        """The wheel's point nearest to the plane (3,), world frame, m."""
        return self.body_b.position + self.contact_offset

    @property
    def gap(self) -> float:
        """Signed distance of the contact point from the plane, m (C of the holonomic row)."""
        return float(self.normal @ self.contact_point - self.offset)

    @property
    def slip_velocity(self) -> np.ndarray:
        """Tangential velocity of the wheel's material point at the contact (3,), m/s."""
        body = self.body_b
        vp = body.linear_velocity + cross(body.angular_velocity, self.contact_offset)
        return vp - (vp @ self.normal) * self.normal

    @property
    def normal_force(self) -> float:
        """Force of the plane on the wheel along plane_normal, N (last step; negative when the
        plane pulls: these are equality rows)."""
        return float(self.force @ self.normal)

    @property
    def friction_force(self) -> np.ndarray:
        """Tangential (grip) force of the plane on the wheel at the contact (3,), N."""
        f = self.force
        return f - (f @ self.normal) * self.normal


def contact_offsets(R, w, normal, radius, axis, disc):
    """Contact offsets r (K, 3) from each wheel's centre of mass and their rates rdot (K, 3):
    -radius n for a sphere, the rim point furthest along -n for a disc (module docstring)."""
    a = rotate(R, axis)
    c = dot(normal, a)
    m = normal - c[:, None] * a
    s = np.maximum(np.sqrt(np.maximum(1.0 - c * c, 0.0)), 1e-12)
    adot = cross(w, a)
    cdot = dot(normal, adot)
    mdot = -cdot[:, None] * a - c[:, None] * adot
    sdot = -c * cdot / s
    rad = radius[:, None]
    is_disc = disc[:, None] > 0
    r = np.where(is_disc, -rad * m / s[:, None], -rad * normal)
    rdot = np.where(is_disc, -rad * (mdot / s[:, None] - m * (sdot / s**2)[:, None]), 0.0)
    return r, rdot


def rolling_rows(k: Kinematics, a, b, normal, t1, t2, offset, radius, axis, disc) -> Rows:
    """Rows of every Rolling constraint at once: 3 per wheel (n, t1, t2), wheel by wheel."""
    x, w = k.x[b], k.w[b]
    r, rdot = contact_offsets(k.R[b], w, normal, radius, axis, disc)
    E = np.stack([normal, t1, t2], axis=1)                        # (K, 3 rows, 3)
    K = b.shape[0]
    C = np.zeros((K, 3))
    C[:, 0] = dot(normal, x + r) - offset
    Jb = np.concatenate([E, np.cross(r[:, None, :], E)], axis=2).reshape(-1, 6)
    Jdu = np.einsum("kij,kj->ki", E, cross(w, rdot)).reshape(-1)
    return Rows(np.repeat(a, 3), np.repeat(b, 3), C.reshape(-1), np.zeros((3 * K, 6)), Jb, Jdu)
