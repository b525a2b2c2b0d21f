"""Body: a thin handle onto one row of the world's body arrays.

Reading a property returns a copy (a fresh numpy array), so keeping it around does not see
later steps; assigning to a property writes through to the world. For all bodies at once use
the world's batch arrays (``World.positions`` and friends).
"""
from __future__ import annotations

import numpy as np

from .math3d import (cross, quat_conjugate, quat_multiply, quat_to_matrix,
                     quat_to_rotation_vector)
from .validation import (check_bits, check_inertia, check_mass, check_positive, check_quaternion,
                         check_restitution, check_vector, name_property, shown)


def _material(name: str, field: str, doc: str, dynamic_only: bool = False) -> property:
    """A body's non-negative material value ``name``, held in the world array ``field``;
    ``dynamic_only``: a static body's stays 0 (damping: nothing slows a static body)."""
    def get(self) -> float:
        return float(getattr(self._world, field)[self.row])

    def set(self, value):
        value = check_positive(name, value, allow_zero=True)
        if dynamic_only and value and self.static:
            raise ValueError(f"{name}: {self!r} is static, and nothing slows a static body "
                             "(a moving one keeps its velocity); give damping to dynamic "
                             "bodies")
        getattr(self._world, field)[self.row] = value
        self._world._wake_touching(self)        # (a box made slippery on a slope slides)

    return property(get, set, doc=doc)


def queued_sum(name, queued, added, body):
    """``queued + added`` (3,), a body's load for the next step with one more; ValueError
    naming ``name`` when it overflows (a step with an infinite load can only fail)."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = queued + added
    if not np.all(np.isfinite(total)):
        raise ValueError(f"{name}: {shown(added)} added to the {shown(queued)} already applied "
                         f"to {body!r} for the next step overflows; apply smaller loads "
                         "(world.clear_forces() drops those queued)")
    return total


def check_plane_still(name, moves):
    """A Plane is placed by its normal and offset and never moves: ValueError naming ``name``
    (position, orientation or a velocity) when ``moves`` (giving it one would move it)."""
    if moves:
        raise ValueError(f"a Plane does not move: its {name} stays at its default (for a "
                         "moving floor use a static Box given a velocity)")


def impulse_response(world, rows, impulses, points=None):
    """(dv, dw) (k, 3) each: the change of velocity (m/s) and spin (rad/s) of dynamic body
    rows ``rows`` (k,) struck by world-frame ``impulses`` (k, 3) N s at world ``points``
    (k, 3) m (None: their centres of mass): J / m and I_world^-1 (r x J). From the masses
    and inertias themselves (a sleeping body's inverses are zero to the step)."""
    with np.errstate(over="ignore", invalid="ignore"):
        dv = impulses / world._mass[rows][:, None]
        if points is None:
            return dv, np.zeros_like(dv)
        R = quat_to_matrix(world._q[rows])
        moment = cross(points - world._x[rows], impulses)
        # I_world^-1 m = R I^-1 R^T m, solved in the body frame
        local = np.einsum("kji,kj->ki", R, moment)
        spin = np.linalg.solve(world._inertia[rows], local[..., None])[..., 0]
        return dv, np.einsum("kij,kj->ki", R, spin)


class Body:
    """A rigid body of a World, made by ``world.add_body(shape, mass=..., position=...)``
    (never directly): a handle onto its row of the world's arrays. State (``position``,
    ``orientation``, ``linear_velocity``, ``angular_velocity``: SI units, world frame),
    mass properties (``mass``, ``inertia`` in the body frame), material (``friction``,
    ``restitution``, ``rolling_friction``, ``spin_friction``), collision filtering
    (``collision_group``, ``collision_mask``), loads for the next step (``apply_force``,
    ``apply_torque``) and impulses (``apply_impulse``). Properties return copies; setting
    one writes to the world."""
    __slots__ = ("_world", "_row", "_shape", "_name")

    def __init__(self, world, row: int, shape, name: str | None):
        self._world = world
        self._row = row          # row in the world's internal arrays; row 0 is the world frame
        self._shape = shape
        self.name = name

    name = name_property("body")

    @property
    def shape(self):
        """The body's shape (None for none), fixed at creation."""
        return self._shape

    @shape.setter
    def shape(self, value):
        raise ValueError("a body's shape is fixed when it is made (its mass, inertia and "
                         "contacts come from it): remove the body and add a new one")

    @property
    def row(self) -> int:
        """This body's row in the world's internal arrays (``index`` + 1: row 0 is the world
        frame). Index the world's batch arrays (``world.positions``) with ``index``."""
        if self._row < 0:
            raise ValueError(f"{self!r} has been removed from its world")
        return self._row

    @property
    def index(self) -> int:
        """Position of this body in ``world.bodies`` and in the world's batch arrays
        (changes when an earlier body is removed)."""
        return self.row - 1

    @property
    def world(self):
        """The World this body is in; ValueError once ``world.remove_body`` took it out (as
        its other properties; ``removed`` tells without one)."""
        self.row
        return self._world

    @property
    def removed(self) -> bool:
        """Whether ``world.remove_body`` has taken this body out of its world (its handle
        then only names it: its properties and methods raise ValueError)."""
        return self._row < 0

    def _get(self, array):
        return array[self.row].copy()

    def _set(self, array, name, value, size):
        value = check_vector(name, value, size)
        self._check_not_plane(name, value.any())
        array[self.row] = value
        self._touched()

    def _check_not_plane(self, name, moves):
        from .shapes import PLANE
        check_plane_still(name, moves and self._world._kind[self.row] == PLANE)

    def _placed(self):
        """The user set this body's pose: the next step starts by moving dynamic bodies placed
        off their joints onto them (placement.placed_on_joints); a static body moved this way
        drives what is jointed to it through the step itself."""
        if not self.static:
            self._world._posed = True
            self._world._placed[self.row] = True
            self._world._kick_forgotten(self.row)

    def _touched(self):
        """The user moved or pushed this body: wake it (and its island) and what sleeps on
        it or jointed to it, forget caches."""
        self._world._wake_touching(self)
        self._world._state_changed()

    # -- state ---------------------------------------------------------------------------
    @property
    def position(self) -> np.ndarray:
        """Centre of mass, world frame, metres (3,). A dynamic jointed body placed where its
        joints do not allow is moved onto them at the next step (near the nearest pose they
        allow, in the mass metric; bodies jointed to it share the move; StepError if they
        cannot be met), keeping its velocity; one placed past a joint limit is brought to
        the limit the same way (the limits of its mechanism, beyond their slop); place a
        mechanism whole to move it. A static body moved this way each step is teleported:
        its velocity stays zero, so what rests on it is not carried (a platform moved 1.742 m
        by position left the box on it where it was) and what is jointed to it follows
        without its velocity; give it a ``linear_velocity`` to drive it (kinematic, see
        ``static``). (``orientation`` likewise.)"""
        return self._get(self._world._x)

    @position.setter
    def position(self, value):
        self._set(self._world._x, "position", value, 3)
        self._world._wake_overlapping(self)
        self._placed()

    @property
    def orientation(self) -> np.ndarray:
        """Unit quaternion (w, x, y, z), body to world (4,)."""
        return self._get(self._world._q)

    @orientation.setter
    def orientation(self, value):
        q = check_quaternion("orientation", value)
        self._check_not_plane("orientation", np.any(q != (1, 0, 0, 0)))
        self._world._q[self.row] = q
        self._touched()
        self._world._wake_overlapping(self)
        self._placed()

    @property
    def rotation(self) -> np.ndarray:
        """Rotation matrix body to world (3, 3)."""
        from .math3d import quat_to_matrix
        return quat_to_matrix(self.orientation[None])[0]

    @property
    def linear_velocity(self) -> np.ndarray:
        """Velocity of the centre of mass, world frame, m/s (3,). A static body given one
        moves with it, unpushed (kinematic, see ``static``). On a jointed body, set velocities
        its joints allow: the next step projects the rest onto the joints, keeping momentum
        (a hinged arm given only a spin keeps a fraction of it). Given the value it holds,
        nothing changes (as for an unchanged row of ``world.linear_velocities``)."""
        return self._get(self._world._v)

    @linear_velocity.setter
    def linear_velocity(self, value):
        self._set_velocity(self._world._v, "linear_velocity", value)

    @property
    def angular_velocity(self) -> np.ndarray:
        """Angular velocity, world frame, rad/s (3,) (a static body given one turns with it;
        on a jointed body, see ``linear_velocity``)."""
        return self._get(self._world._w)

    @angular_velocity.setter
    def angular_velocity(self, value):
        self._set_velocity(self._world._w, "angular_velocity", value)

    def _set_velocity(self, array, name, value):
        """Set this body's row of ``array`` (the world's _v or _w) to ``value`` (3,), as the
        user's velocity: the next step takes it as a state's, in the true metric, not a stiff
        step's (World._velocity_set). Given the value it already holds, nothing: a stiff
        step's velocities are in the metric I + h^2 K / 4 (velocity_metric._between_metrics), and
        recording a controller's `bob.linear_velocity = bob.linear_velocity` as set took them
        out of it every step: the stiff rope of README's Integrators section (10 kg ball on
        10 links of 0.01 kg kicked to 2 m/s) lost 18.9 J of its 20 J in 3 s at dt 1/60 that
        way, and split 122 times at 1/240. (The batch setters leave an unchanged row alike.)"""
        new = check_vector(name, value, 3)
        if np.array_equal(new, array[self.row]):
            return
        self._check_not_plane(name, new.any())
        array[self.row] = new
        self._world._velocities_changed(np.array([self.row]))

    def move_to(self, position, orientation=None):
        """Drive a static (kinematic) body so that the next step ends it at ``position`` (m,
        world) and ``orientation`` (unit quaternion (w, x, y, z); None keeps it): its
        ``linear_velocity`` and ``angular_velocity`` are set to that move over ``world.dt``,
        at which it pushes and carries what it meets, and which it keeps after the step (call
        it every step to follow a path). Driven by velocities of its own, a door swung about
        its edge with v = w x r drifted 55 mm off its hinge in a turn at dt 1/60; placed by
        ``position`` it is teleported and carries nothing. Of the turns that reach
        ``orientation`` (whole turns apart), it takes the one nearest its present
        ``angular_velocity`` times dt, so a fan turning more than half a turn a step keeps
        its sense: set its spin once when you start it that fast. Moved to the orientation
        it has, it stops turning."""
        if not self.static:
            raise ValueError(f"move_to drives a static (kinematic) body, and {self!r} is "
                             "dynamic: push it with apply_force or apply_impulse, or set its "
                             "velocities")
        target = check_vector("position", position, 3)
        turn = np.zeros(3)
        if orientation is not None:
            q = check_quaternion("orientation", orientation)
            turn = _turn_nearest(quat_to_rotation_vector(
                quat_multiply(q[None], quat_conjugate(self.orientation[None])))[0],
                self.angular_velocity * self._world.dt)
        dt = self._world.dt
        self.linear_velocity = (target - self.position) / dt
        self.angular_velocity = turn / dt

    def point_velocity(self, point) -> np.ndarray:
        """Velocity of the material point at world position ``point`` (3,), m/s."""
        p = check_vector("point", point, 3)
        return self.linear_velocity + cross(self.angular_velocity, p - self.position)

    # -- mass properties -----------------------------------------------------------------
    @property
    def mass(self) -> float:
        """kg; infinite for static bodies. Setting it (dynamic bodies) scales the inertia with
        it, as for the same shape of another density; set ``inertia`` after it for another
        distribution."""
        return float(self._world._mass[self.row])

    @mass.setter
    def mass(self, value):
        self._world._set_mass_properties(self, mass=check_mass("mass", value))

    @property
    def inertia(self) -> np.ndarray:
        """Body-frame inertia about the centre of mass, kg m^2 (3, 3); set a 3x3 matrix or 3
        diagonal values (dynamic bodies)."""
        return self._get(self._world._inertia)

    @inertia.setter
    def inertia(self, value):
        self._world._set_mass_properties(self, inertia=check_inertia("inertia", value))

    @property
    def static(self) -> bool:
        """Whether the body has infinite mass (static=True or a plane; a sleeping body is not):
        nothing pushes it. It stays put unless given a velocity or spin, which it then keeps
        (kinematic; not a plane, which never moves): it pushes and carries the dynamic bodies
        it meets, wakes sleeping ones, and passes through other static bodies. Drive it by
        its velocity: setting its ``position`` teleports it and carries nothing."""
        return bool(np.isinf(self._world._mass[self.row]))    # (sleeping.movable, one body)

    @static.setter
    def static(self, value):
        raise ValueError("whether a body is static is fixed when it is made: remove it and add "
                         "it again with static=True, or with mass= for a dynamic one")

    @property
    def asleep(self) -> bool:
        """Whether the body sleeps (``World(sleeping=True)``; see physics.sleeping)."""
        return bool(self._world._asleep[self.row])

    def wake(self):
        """Wake this body and the island it fell asleep with (nothing if awake)."""
        self._world._wake([self.row])

    @property
    def touching(self) -> list:
        """The bodies this one touched in the last step, in ``world.bodies`` order: those of
        its contacts (``world.contacts``) that pushed or overlapped, not the speculative
        ones still apart. "Is it on the ground", and, compared with the last step's list,
        what it began or stopped touching."""
        c = self._world.contacts
        pressed = (c.normal_force > 0.0) | (c.depth >= 0.0)
        mine = pressed & ((c.body_a == self.index) | (c.body_b == self.index))
        others = np.unique(np.where(c.body_a == self.index, c.body_b, c.body_a)[mine])
        bodies = self._world.bodies
        return [bodies[i] for i in others]

    # -- material and filtering ----------------------------------------------------------
    friction = _material("friction", "_friction", """Coulomb friction coefficient (the
        pair's is the geometric mean of the two bodies').""")
    rolling_friction = _material("rolling_friction", "_rolling_friction", """m: a contact of
        this body resists rolling with a torque of up to this length times its normal force
        (the larger of the two bodies' values; 0: rolls freely). Spheres need it, and
        ``spin_friction``, to come to rest in a pile and sleep: 120 balls poured into a bin
        slept by 6 s with both at 0.002, and none had after 14 s with neither.""")
    linear_damping = _material("linear_damping", "_linear_damping", """1/s: viscous damping of
        the body's velocity, a force -c m v (implicit: a free body's speed falls by
        1 / (1 + c dt) a step, near exp(-c t), stable for any c; a body at rest feels none);
        0: none. A body falling under gravity reaches about g / c.""", dynamic_only=True)
    angular_damping = _material("angular_damping", "_angular_damping", """1/s: viscous damping
        of the body's spin, a torque -c I w (as linear_damping); 0: none.""", dynamic_only=True)
    spin_friction = _material("spin_friction", "_spin_friction", """m: a contact of this body
        resists turning about its normal with a torque of up to this length times its normal
        force (the larger of the two bodies' values; 0: spins freely, as a point contact
        does; a pile of spheres needs it to sleep, see ``rolling_friction``).""")

    @property
    def restitution(self) -> float:
        """Coefficient of restitution, 0 to 1: the share of an impact's closing speed it
        leaves as. The pair takes the larger of the two bodies' values; impacts slower than
        0.2 m/s do not bounce (a resting contact stays put)."""
        return float(self._world._restitution[self.row])

    @restitution.setter
    def restitution(self, value):
        self._world._restitution[self.row] = check_restitution(value)
        self._world._wake_touching(self)

    @property
    def collision_group(self) -> int:
        """The groups this body belongs to, as bits (default 1; -1: all). Two bodies collide
        when each one's group shares a bit with the other's mask. A group of no bits (0) is
        refused: nothing would collide with the body; to turn its collisions off set
        ``collision_mask = 0`` (``world.ignore_collision`` for one pair)."""
        return int(self._world._group[self.row])

    @collision_group.setter
    def collision_group(self, value):
        group = check_bits("collision_group", value)
        if group == 0:
            # (as Box2D's categoryBits 0 does, it was taken silently and the body then met
            # nothing; found by a game-prototyper explorer)
            raise ValueError(f"collision_group 0 puts {self!r} in no group, so nothing would "
                             "collide with it: give the bits of the groups it is in (default "
                             "1); to turn its collisions off set collision_mask = 0 (or "
                             "world.ignore_collision(a, b) for one pair)")
        self._world._group[self.row] = group
        self._world._wake_touching(self)
        self._world._wake_overlapping(self)

    @property
    def collision_mask(self) -> int:
        """The groups this body collides with, as bits (default -1: all; 0: none, the way
        to turn a body's collisions off). Two bodies collide when each one's group shares a
        bit with the other's mask."""
        return int(self._world._mask[self.row])

    @collision_mask.setter
    def collision_mask(self, value):
        self._world._mask[self.row] = check_bits("collision_mask", value)
        self._world._wake_touching(self)
        self._world._wake_overlapping(self)

    # -- loads ---------------------------------------------------------------------------
    def apply_force(self, force, point=None):
        """Add a world-frame force (N) for the next step, at world ``point`` (default: the
        centre of mass, so no torque). A static body takes none (ValueError, unless zero)."""
        world, i = self._world, self.row
        f = check_vector("force", force, 3)
        self._check_loaded("force", f)
        total = queued_sum("force", world._force[i], f, self)
        torque = None
        if point is not None:
            p = check_vector("point", point, 3)
            with np.errstate(over="ignore", invalid="ignore"):
                moment = cross(p - world._x[i], f)
            if not np.all(np.isfinite(moment)):
                raise ValueError(f"point {shown(p)} is so far from {self!r}'s centre that the "
                                 f"torque of force {shown(f)} about it overflows: apply the "
                                 "force nearer the body, or as a force and a torque")
            torque = queued_sum("point", world._torque[i], moment, self)
        # (all checked: a refused load leaves the queue as it was; a zero force, a field
        # that is off, leaves a sleeping body asleep)
        if f.any():
            world._wake([i])
        world._force[i] = total
        if torque is not None:
            world._torque[i] = torque

    def apply_impulse(self, impulse, point=None):
        """Strike the body: ``impulse`` (3,) N s, world frame, at world ``point`` (3,) m
        (default: the centre of mass, so no spin) changes its velocity and spin at once,
        ``linear_velocity += J / m`` and ``angular_velocity += I^-1 (r x J)`` (I the
        world-frame inertia, r = point - position); a jump is ``apply_impulse((0, 0, m v))``.
        It is a velocity set (``linear_velocity``), not a load for the next step: on a
        jointed body the next step projects what the joints forbid onto them, keeping
        momentum, so a hinged rod struck at its tip turns with the angular momentum r x J
        about the hinge (the hinge takes the rest). A sleeping body wakes (unless the
        impulse is zero); a static body takes none (ValueError, unless zero)."""
        world, i = self._world, self.row
        J = check_vector("impulse", impulse, 3)
        self._check_loaded("impulse", J)
        p = None if point is None else check_vector("point", point, 3)
        if not J.any():
            return
        dv, dw = impulse_response(world, np.array([i]), J[None],
                                  None if p is None else p[None])
        with np.errstate(over="ignore", invalid="ignore"):
            v, w = world._v[i] + dv[0], world._w[i] + dw[0]
        if not (np.all(np.isfinite(v)) and np.all(np.isfinite(w))):
            raise ValueError(f"impulse {shown(J)} N s" + ("" if p is None else
                             f" at point {shown(p)}") + f" gives {self!r} a velocity or spin "
                             "past the largest float; apply a smaller impulse, nearer its "
                             "centre")
        world._v[i], world._w[i] = v, w
        self._touched()
        world._velocity_set(i)

    def apply_torque(self, torque):
        """Add a world-frame torque (N m) for the next step. A static body takes none
        (ValueError, unless zero)."""
        t = check_vector("torque", torque, 3)
        self._check_loaded("torque", t)
        total = queued_sum("torque", self._world._torque[self.row], t, self)
        if t.any():                     # (a zero torque leaves a sleeping body asleep)
            self._world._wake([self.row])
        self._world._torque[self.row] = total

    def _check_loaded(self, name, load):
        """ValueError for a non-zero ``load`` on a static body: the step moves nothing static
        (its load was dropped, silently)."""
        if self.static and load.any():
            raise ValueError(f"{name} on {self!r}, which is static: nothing pushes a static "
                             f"body, so {'an' if name[0] in 'aeiou' else 'a'} {name} on it has no "
                             "effect. Apply it to a dynamic body, or remove this one and add it "
                             "with mass= or density=")

    def __repr__(self):
        label = f" {self.name!r}" if self.name else ""
        where = f"#{self._row - 1}" if self._row >= 0 else "(removed)"
        return f"<Body{label} {where} {type(self.shape).__name__ if self.shape else 'no shape'}>"


def _turn_nearest(turn: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Of the rotation vectors that give the same orientation as ``turn`` (rad, its angle
    plus whole turns about its axis, either sense), the one nearest ``expected``. No turn at
    all (the orientation the body has) stays no turn: a move_to the pose a body has holds
    it (counted in whole turns about its spin, a fan at 200 rad/s at dt 1/60 held so was
    given 377 rad/s)."""
    angle = np.linalg.norm(turn)
    if angle == 0.0:
        return turn
    axis = turn / angle
    whole_turns = np.round((axis @ expected - angle) / (2.0 * np.pi))
    return axis * (angle + 2.0 * np.pi * whole_turns)
