"""World: owns every body's state in flat arrays and advances it in time.

Row 0 of every body array is the fixed world frame (``body_a=None`` in a joint); user bodies
start at row 1. The batch properties (``positions`` ...) cover user bodies only, in the order
of ``world.bodies``.
"""
from __future__ import annotations

import dataclasses
import operator
import warnings

import numpy as np

from . import sleeping
from . import step as pipeline
from .binding import binding_message, share_lines
from .body import Body, check_plane_still, impulse_response
from .collision import Manifolds, checked_manifolds, manifold_snapshot
from .contacts import (ContactReport, checked_contact_snapshot, checked_report, contact_snapshot,
                       manifolds_without_bodies, report_snapshot, report_without_bodies,
                       without_bodies)
from .energy import kinetic_energy, potential_energy
from .iterative import MAX_ITERATIONS, SolverMemory
from .joints import Joint
from .kicks import KickedLoads
from .limits import checked_wrenches
from .math3d import cross, quat_to_matrix
from .model import Kept, compile_model
from .overlap import overlapping_bodies
from .raycast import RayHit, world_ray_casts
from .removal import RemovedRows
from .reporting import joint_wrenches
from .rk4 import rk4_refusal
from .rows import Kinematics, evaluate_tables
from .shapes import NO_SHAPE, Plane, Shape
from .sleeping import SLEEP_SPEED, SLEEP_SPIN, SLEEP_TIME
from .stages import StageClock
from .validation import (check_array_shape, check_choice, check_count, check_flag, check_inertia,
                         check_inertia_holds_contacts, check_integers, check_mass, check_name,
                         check_number,
                         check_positive, check_quaternion, check_restitution, check_vector,
                         checked_array, check_known_attribute, close_names, listed, numbers,
                         read_only, shown, warn_user)

INTEGRATORS = ("symplectic", "rk4")
GYROSCOPIC = ("implicit", "explicit")
CONTACT_SOLVERS = ("auto", "iterative", "direct")


def _setting(name: str, check, doc: str) -> property:
    """A World setting, held as ``_name``, checked whenever it is set: ``check(name, value)``
    returns what is kept or raises ValueError naming it. (Read by an attrgetter: no Python
    call, where a getter function took two; a step reads six.)"""
    def set(self, value):
        setattr(self, "_" + name, check(name, value))

    return property(operator.attrgetter("_" + name), set, doc=doc)


# kg m/N: the most a body's mass times World.cfm may be. The regularisation is absolute, beside
# a row's own stiffness 1 / m: a resting 0.1 m box sank 0.3 mm in a second at a product of 0.1
# (1 kg at cfm 0.1, or validation.MAX_MASS at the default 1e-9), 2 mm at 10, and fell through
# the ground at 100; joints came apart at cfm 1e300.
CFM_TIMES_MASS = 0.1
# m (or rad): a joint this far off after a step that projected positions is warned about
# (World._warn_unheld_joints).
UNHELD_ERROR = 1e-3
MIN_DT = 1e-9     # s: shorter steps are a typo, and their Baumgarte terms 1/T^2 overflow
MAX_DT = 10.0     # s: longer steps are a typo (dt 1e300 overflowed in the terms' T^2)
MAX_SUBSTEPS = 1000     # (10**20 was taken, and a step never returned)


def _substep_count(name, value):
    n = check_count(name, value)
    if n > MAX_SUBSTEPS:
        raise ValueError(f"{name} must be at most {MAX_SUBSTEPS}, got {value!r}")
    return n


def _step_size(name, value):
    dt = check_positive(name, value)
    if dt < MIN_DT:
        raise ValueError(f"{name} must be at least {MIN_DT:g} s, got {value!r}")
    if dt > MAX_DT:
        raise ValueError(f"{name} must be at most {MAX_DT:g} s, got {value!r}")
    return dt


def _stabilization(T, h):
    """The Baumgarte terms (k, d) = (1/T^2, 2/T), critically damped, of a stabilisation time
    T (s) with sub-steps of h (s); ValueError for a T under two sub-steps, which overshoots."""
    if T < 2 * h:
        raise ValueError(f"a sub-step of {h:g} s is more than half the stabilisation time "
                         f"{T:g} s (stabilization_time, or 2 / d of baumgarte); the Baumgarte "
                         "terms would overshoot: give a longer stabilization_time or a shorter "
                         "step")
    return 1.0 / T**2, 2.0 / T


def _non_negative(name, value):
    return check_positive(name, value, allow_zero=True)


def _checked_baumgarte(name, value):
    k, d = check_vector(name, value, 2)
    if k < 0 or d < 0:
        raise ValueError(f"{name} terms (k, d) must be >= 0, got {shown((k, d))}")
    return float(k), float(d)


def _finite_product(compute):
    """compute() with overflow giving infinity (Python floats raise OverflowError instead)."""
    try:
        with np.errstate(over="ignore", under="ignore"):
            return compute()
    except OverflowError:
        return np.inf


class World:
    """A set of rigid bodies and the joints between them.

    Parameters
    ----------
    gravity : (3,) m/s^2, world frame.
    dt : step size, s.
    substeps : each ``step()`` runs this many sub-steps of ``dt / substeps``.
    integrator : "symplectic" (default: RATTLE on the seed equation, SHAKE at the new
        positions, velocities projected onto the constraints; see ``step.symplectic_substep``)
        or "rk4" (the acceleration-level seed equation fed to classical Runge-Kutta 4;
        accurate, for contact-free mechanisms).
    cfm : diagonal regularisation added to J M^-1 J^T (ODE's constraint force mixing), so that
        redundant rows of closed loops still solve; at most 0.1 over the heaviest dynamic
        body's mass in kg (``CFM_TIMES_MASS``), beyond which contacts and joints give way.
    stabilization_time : T in s for the Baumgarte terms k = 1/T^2, d = 2/T (critically
        damped); default 4 sub-steps. Or give ``baumgarte=(k, d)`` directly.
    post_stabilization : project positions and velocities onto the constraints after each
        symplectic sub-step (Cline and Pai); on by default.
    gyroscopic : "implicit" (default: the drift turns each body by its torque-free motion,
        Euler's equations by the implicit midpoint rule, stable for thin rods) or "explicit"
        (the seed's -w x I w torque in the kick and a turn about the fixed axis w).
    contact_solver : how contacts, limits and motors are solved with the joints.
        "iterative": the joint rows are eliminated exactly with their own banded
        factorisation and the bounded rows solved by projected gradient methods in body
        space (accelerated projected gradients with friction, MPRGP without); its work
        grows about linearly with the contacts, so piles and stacks run many times faster.
        "direct": active-set / projected Newton with a sparse factorisation of the whole
        system per iteration; exact, but each factorisation costs milliseconds once
        there are hundreds of contacts. "auto" (default): each step, "direct" while there are
        fewer than ``unilateral.DIRECT_BELOW`` bounded rows and ``DIRECT_ALL_BELOW`` rows in
        all (a car, a ragdoll: faster there, and exact where the iterative budget would leave
        light bodies creeping), else "iterative".
    contact_iterations : the iterative solve's budget of iterations (products with the
        contact matrix) per step (default 60). A step that needs more (a pile being hit,
        spheres pouring in) stops there with its best impulses so far, never worse than none,
        and the next step, warm started, carries on. More buys accuracy in violent piles
        (120: fewer transient penetrations deeper than 5 mm in a 10-ragdoll pile); 20-30
        trade it for speed (deeper transient penetration where bodies are crushed). Impacts
        (restitution) keep the default budget. With thousands of rows, a violent step's
        solve leaves out the speculative contacts that start well apart; when some of them
        turn out to push, it takes up to ``iterative.WORKING_SET_ROUND`` (10) iterations
        more for them.
    sleeping : let islands of bodies that have stayed still sleep until something touches
        them (off by default; see ``physics.sleeping``): a settled pile then costs next to
        nothing. ``sleep_speed`` (m/s), ``sleep_spin`` (rad/s) and ``sleep_time`` (s): how
        slow, for how long (defaults 0.02, 0.05, 0.5). Spheres touch at points and roll or
        spin in place for a long time without ``rolling_friction`` and ``spin_friction``
        (see ``Body.rolling_friction``): give a pile of them both to let it sleep.

    Attributes worth knowing: ``geometric_stiffness`` (default True) lets bodies pulled by
    more joint tension than the step can resolve (a long chain or a heavy load hanging from
    light links) carry that stiffness implicitly instead of splitting the step (see
    ``stiffness.unresolved_stiffness``); ``stats`` counts the steps that were split, projected,
    energy-restored or stiff, and the iterative contact solves and their iterations in all
    (``deep_misses``: solves that went on past their budget, unilateral.MISSED_DEPTH);
    ``profile`` says where the steps' time went, by stage of the pipeline.
    """

    def __init__(self, gravity=(0.0, 0.0, -9.81), dt: float = 1 / 240, substeps: int = 1,
                 integrator: str = "symplectic", cfm: float = 1e-9,
                 stabilization_time: float | None = None, baumgarte=None,
                 post_stabilization: bool = True, gyroscopic: str = "implicit",
                 contact_solver: str = "auto", contact_iterations: int = MAX_ITERATIONS,
                 sleeping: bool = False):
        self._gravity = check_vector("gravity", gravity, 3)
        self._time_origin = 0.0
        self._steps = 0
        self._default_stabilization = stabilization_time is None and baumgarte is None
        self._dt = _step_size("dt", dt)
        self._substeps = _substep_count("substeps", substeps)
        self._integrator = check_choice("integrator", integrator, INTEGRATORS)
        self.cfm = cfm
        self.gyroscopic = gyroscopic
        self.contact_solver = contact_solver
        self.contact_iterations = contact_iterations
        self.post_stabilization = post_stabilization
        # SHAKE iterations per sub-step and the joint error (m, ~rad) at which they stop
        self.position_iterations = 8
        self.shake_iterations = 12
        self.shake_quasi_iterations = 4
        self.shake_newton = True
        self.position_tolerance = 1e-8
        self.max_split_depth = 6
        self.projection_tolerance = 1e-6
        self.stats = {"splits": 0, "projections": 0, "energy_restores": 0, "energy_bounds": 0,
                      "stiff_steps": 0,
                      "contact_solves": 0, "contact_iterations": 0, "cold_solves": 0,
                      "deep_misses": 0, "overrun_solves": 0, "motor_resolves": 0,
                      "limit_holds": 0, "first_touches": 0}
        self._clock = StageClock()
        self._warned_unheld = False
        self._projected_miss = 0.0        # m (~rad): the last projected step's worst joint
        self._errstate = "ignore"
        self._debug = None
        self._uni_each_split = True
        self.geometric_stiffness = True
        h = self.dt / self.substeps
        if baumgarte is not None and stabilization_time is not None:
            raise ValueError("give either stabilization_time or baumgarte, not both")
        if baumgarte is not None:
            self.baumgarte = baumgarte
        else:
            T = 4 * h if stabilization_time is None else check_positive(
                "stabilization_time", stabilization_time)
            self._baumgarte = _stabilization(T, h)
        self._n = 0
        self._capacity = 0
        self._bodies_added = 0          # (the last body's _serial)
        self._handles: list[Body | None] = []
        self._joints: list[Joint] = []
        # per joint: the continuous hinge angle at the end of the last step (0 for others)
        self._joint_angle = np.zeros(0)
        self._angles_current = False      # whether _joint_angle is at the present state
        # each joint's primitive rows (step.compile_model), made again only when its index or
        # bodies' rows change: an island falling asleep or waking recompiles the step
        self._joint_instances = {}
        self._angle_table = None
        # within a step: the joints' angles at its last drift (or None: at _joint_angle), and
        # how far (rad) the fastest body has turned since (step.carry_angle_reference)
        self._angle_reference, self._turned_unreferenced = None, 0.0
        self._compiled = None
        # what holds of the compiled step after bodies on no joint came or went (step.Kept),
        # or None
        self._kept_model = None
        self._coordinate_tables = None
        self._retuned = {}              # joint index -> joint whose settings changed
        self._ignored: set[frozenset] = set()
        self._pattern_cache = {}
        # the layout (assembly.Scatter) of the last iterative solve's bounded rows, which the
        # next one takes where its rows are the same (bodyspace.BodySpace's last_layout)
        self._bounded_layout = None
        # the last step's contacts' contact_rows.RowEnds, which the next takes where its
        # contacts are on the same bodies (contact_rows.row_ends)
        self._contact_row_ends = None
        self._start_cache = None
        self._stiffness = None          # stiffness.unresolved_stiffness handed to the next step
        # the metric the velocities are in: (K (N, 3, 3) body frame, h) or None for the true
        # one (see step._between_metrics)
        self._velocity_metric = None
        self._after_euler = False       # the last sub-step had bounded rows (step._to_drift)
        self._to_drift = None           # what it added after its drift (step._to_drift)
        self._drift_only = None         # (N,) bodies left with the drift's velocity by it
        self._drift_step = None         # s: the sub-step they are of (step._retimed_velocities)
        self._velocity_given = None     # (N,) bodies whose velocity the user set (_velocity_set)
        self._kicked_loads = None       # the user loads of its second half kick (step.KickedLoads)
        self._allowed: set[frozenset] = set()
        self._links = None              # sleeping.joint_links
        self._jointed = None            # sleeping.jointed_bodies: (the links, the mask)
        # the pairs (a, b) whose speculative contacts the sub-step left out (continuous)
        self._passing = (np.zeros(0, dtype=np.int64),) * 2
        self._next_island = 0           # the first id of the next islands to fall asleep
        self._held_wrenches = None      # the joints' wrenches and errors when their island
        self._held_errors = None        # fell asleep (sleeping.update_sleep)
        # the sleeping islands' contacts (report, keys, multipliers), or None (sleeping)
        self._held_contacts = None
        self._joined_contacts = None    # (live, held, both): the contacts property's cache
        # (live, shown): what the contacts property shows instead of the live report while
        # it is the live one (``_show``); the live report, which the next step reads, holds
        # the last solve's forces alone
        self._shown = None
        self.sleep_speed, self.sleep_spin, self.sleep_time = SLEEP_SPEED, SLEEP_SPIN, SLEEP_TIME
        self.contact_margin = 0.01      # m: gap below which a contact row is made (speculative)
        # the last step's ContactReport, the warm start of its contacts (keys, multipliers)
        # and of its limit rows (plan rows, multipliers)
        self._forget_contacts()
        self._report = None
        self._solver_memory = SolverMemory()   # carried by the iterative contact solve
        self._wrench_cache = None
        self._energy_reference = None     # J, see step.advance
        self._posed = False               # a body was placed by the user (step.advance)
        self._joined_since_step = False   # a joint was added since the last step (advance)
        self._carrier_change = None       # their change met by the step's first sub-step
        self.last_lambda = np.zeros(0)
        self._allocate(16)
        # row 0: the world frame, a static row with no shape (body_a=None of the joints)
        self._n = 1
        self._blank_rows(0)
        self._kind[0], self._mass[0], self._friction[0] = NO_SHAPE, np.inf, 0.5
        self._handles.append(None)
        self.sleeping = sleeping

    # -- body arrays ---------------------------------------------------------------------
    _FIELDS = {  # name: (shape per body, dtype)
        "_x": ((3,), float), "_q": ((4,), float), "_v": ((3,), float), "_w": ((3,), float),
        "_force": ((3,), float), "_torque": ((3,), float),
        "_mass": ((), float), "_inv_mass": ((), float),
        "_inertia": ((3, 3), float), "_inv_inertia": ((3, 3), float),
        "_kind": ((), np.int64), "_params": ((4,), float),
        "_friction": ((), float), "_restitution": ((), float),
        "_rolling_friction": ((), float), "_spin_friction": ((), float),
        "_linear_damping": ((), float), "_angular_damping": ((), float),
        "_group": ((), np.int64), "_mask": ((), np.int64),
        # sleeping: asleep, still for how long (s), the island it fell asleep with (-1 awake)
        "_asleep": ((), bool), "_still_time": ((), float), "_island": ((), np.int64),
        # placed by the user since the last step (Body._placed; placement.placed_on_joints)
        "_placed": ((), bool),
        # a static body's velocity and spin as the last step ended (as made, before its first
        # step): what the next measures the user's change from (step._carrier_change)
        "_carried": ((6,), float),
        # which body of the world's this is, 1, 2, ... as added, never given again: what a
        # snapshot knows its bodies by (a body removed and another of the same shape added
        # in its place is another body)
        "_serial": ((), np.int64),
    }

    def _allocate(self, capacity):
        for name, (shape, dtype) in self._FIELDS.items():
            new = np.zeros((capacity, *shape), dtype=dtype)
            old = getattr(self, name, None)
            if old is not None:
                new[: self._n] = old[: self._n]
            setattr(self, name, new)
        self._capacity = capacity

    def _blank_rows(self, new):
        """The rows ``new`` (an index or a slice) as a new body's before its values: a removed
        body's row is reused, and none of it is kept."""
        for name in self._FIELDS:
            getattr(self, name)[new] = 0
        self._q[new] = (1.0, 0.0, 0.0, 0.0)
        self._group[new] = 1
        self._mask[new] = -1
        self._island[new] = -1

    def _set_inverses(self, rows):
        """The inverse mass and inertia of the dynamic body rows ``rows`` (indices) from their
        mass and inertia (a new body, bodies waking)."""
        self._inv_mass[rows] = 1.0 / self._mass[rows]
        self._inv_inertia[rows] = np.linalg.inv(self._inertia[rows])

    def _view(self, name):
        return getattr(self, name)[: self._n]

    # -- building ------------------------------------------------------------------------
    def add_body(self, shape: Shape | None = None, *, mass=None, density=None, inertia=None,
                 position=(0, 0, 0), orientation=(1, 0, 0, 0), linear_velocity=(0, 0, 0),
                 angular_velocity=(0, 0, 0), static: bool | None = None, friction: float = 0.5,
                 restitution: float = 0.0, rolling_friction: float = 0.0,
                 spin_friction: float = 0.0, linear_damping: float = 0.0,
                 angular_damping: float = 0.0, name: str | None = None) -> Body:
        """Add a rigid body and return its handle.

        Mass properties come from ``shape`` with ``mass`` (kg) or ``density`` (kg/m^3); an
        explicit body-frame ``inertia`` (3x3 or 3 diagonal values, kg m^2, about the centre of
        mass) overrides the shape's. Planes, and bodies with ``static=True``, are never pushed
        (a static body takes no mass, density or inertia, and a plane no ``static=False``).
        Planes never move; a static body stays put unless given a velocity
        (``linear_velocity`` / ``angular_velocity``), which moves it at that velocity
        (kinematic: a moving platform, a turntable, a paddle that pushes and carries dynamic
        bodies).
        Material: ``friction`` (Coulomb, the pair's is the geometric mean of the two bodies'),
        ``restitution`` (0..1, the pair's is the larger), ``rolling_friction`` and
        ``spin_friction`` (m: a contact resists rolling, and turning about its normal, with up
        to that length times its normal force; the pair's is the larger; 0: none, and no rows
        for it). ``linear_damping`` and ``angular_damping`` (1/s): viscous damping of the
        body's velocity and spin (see ``Body.linear_damping``).
        """
        values = self._body_values(shape, mass, density, inertia, position, orientation,
                                   linear_velocity, angular_velocity, static, friction,
                                   restitution, rolling_friction, spin_friction, linear_damping,
                                   angular_damping, name)
        return self._append_bodies([shape], [values])[0]

    # the add_body arguments add_bodies takes one per body, by the dimensions of one value
    # (a body-frame inertia: one (3, 3) or (3,) for all, or (n, 3, 3) one per body)
    _PER_BODY_NDIM = {"mass": 0, "density": 0, "inertia": 2, "orientation": 1,
                      "linear_velocity": 1, "angular_velocity": 1, "friction": 0,
                      "restitution": 0, "rolling_friction": 0, "spin_friction": 0,
                      "linear_damping": 0, "angular_damping": 0}

    def add_bodies(self, shape: Shape | None | list = None, *, position, mass=None,
                   density=None, inertia=None, orientation=(1, 0, 0, 0),
                   linear_velocity=(0, 0, 0), angular_velocity=(0, 0, 0),
                   static: bool | None = None, friction=0.5, restitution=0.0,
                   rolling_friction=0.0, spin_friction=0.0, linear_damping=0.0,
                   angular_damping=0.0, name=None) -> list[Body]:
        """Add n bodies at once and return their handles, in order: the world ``add_body``
        of each in turn gives, bit for bit, for a fraction of the cost (100 spheres: 2.8 ms
        against 15-19 ms one by one).

        ``position`` (n, 3) m, one row per body, says how many. Every other argument is
        add_body's, either one value for all the bodies or one per body: ``shape`` one Shape
        or a list of n; ``mass``, ``density``, the materials and damping a number or n of
        them; ``orientation`` (4,) or (n, 4); the velocities (3,) or (n, 3); ``inertia`` one
        (3, 3) or (3,) or (n, 3, 3); ``name`` one string (or None) or a list of n;
        ``static`` one flag. An entry add_body would refuse is refused with its index
        ("entry 7 of 100: ..."), and then none of the bodies is added.
        """
        given = {"mass": mass, "density": density, "inertia": inertia,
                 "orientation": orientation, "linear_velocity": linear_velocity,
                 "angular_velocity": angular_velocity, "friction": friction,
                 "restitution": restitution, "rolling_friction": rolling_friction,
                 "spin_friction": spin_friction, "linear_damping": linear_damping,
                 "angular_damping": angular_damping}
        try:
            positions = np.asarray(position, dtype=float)
        except (TypeError, ValueError):
            positions = None
        if positions is None or positions.ndim != 2 or positions.shape[1] != 3:
            raise ValueError(f"position must be (n, 3) numbers (m), one row per body, got "
                             f"{shown(position)}")
        n = positions.shape[0]
        per_body = {}
        for label, value in [("shape", shape), ("name", name)] + list(given.items()):
            if label in ("shape", "name"):
                many = isinstance(value, (list, tuple))
            else:
                many = value is not None and np.ndim(value) == self._PER_BODY_NDIM[label] + 1
            if many:
                if len(value) != n:
                    raise ValueError(f"{label} has {len(value)} entries for the {n} bodies of "
                                     "position: give one for all, or one per body")
                per_body[label] = value
        shapes = per_body.get("shape", [shape] * n)
        names = per_body.get("name", [name] * n)
        # one shape, mass and inertia for all: their mass properties are found once
        shared_mass = not {"shape", "mass", "density", "inertia"} & per_body.keys()
        values, known = [], None
        for k in range(n):
            entry = {label: per_body[label][k] if label in per_body else value
                     for label, value in given.items()}
            try:
                v = self._body_values(shapes[k], position=positions[k], static=static,
                                      name=names[k], known=known, **entry)
            except ValueError as exc:
                raise ValueError(f"entry {k} of {n}: {exc}") from None
            if shared_mass and not v[0]:
                known = v[1], v[2]
            values.append(v)
        return self._append_bodies(shapes, values) if n else []

    def _body_values(self, shape, mass, density, inertia, position, orientation,
                     linear_velocity, angular_velocity, static, friction, restitution,
                     rolling_friction, spin_friction, linear_damping, angular_damping, name,
                     known=None) -> tuple:
        """add_body's arguments checked (ValueError naming the bad one), as the values
        ``_append_bodies`` writes; nothing in the world changes. known: the (mass, inertia)
        these arguments give, already found for another body of the same shape and mass."""
        if shape is not None and not isinstance(shape, Shape):
            raise ValueError(f"shape must be a Sphere, Box, Capsule, Cylinder or Plane, got {shape!r}")
        given_static = None if static is None else check_flag("static", static)
        if isinstance(shape, Plane) and given_static is False:
            raise ValueError("static=False cannot hold for a Plane: a plane is always static "
                             "(it never moves); drop static=, or give a thin Box with mass= "
                             "for a slab that moves")
        static = isinstance(shape, Plane) or bool(given_static)
        damping = [check_positive(label, value, allow_zero=True) for label, value in
                   (("linear_damping", linear_damping), ("angular_damping", angular_damping))]
        if static and any(damping):
            raise ValueError("a static body takes no damping (nothing slows a static body); "
                             "drop linear_damping= and angular_damping=")
        # (the materials are checked before the body is made, as the rest: a refused one
        # left a body with the default material in the world)
        materials = (check_positive("friction", friction, allow_zero=True),
                     check_restitution(restitution),
                     check_positive("rolling_friction", rolling_friction, allow_zero=True),
                     check_positive("spin_friction", spin_friction, allow_zero=True))
        pos = check_vector("position", position, 3)
        quat = check_quaternion("orientation", orientation)
        vel = check_vector("linear_velocity", linear_velocity, 3)
        omega = check_vector("angular_velocity", angular_velocity, 3)
        if isinstance(shape, Plane):
            for param, value in (("position", pos), ("orientation", quat - (1, 0, 0, 0)),
                                  ("linear_velocity", vel), ("angular_velocity", omega)):
                check_plane_still(param, value.any())
        m, I = 0.0, np.zeros((3, 3))
        if known is not None:
            m, I = known
        elif not static:
            m, I = self._mass_properties(shape, mass, density, inertia)
            self._check_mass_for_cfm(m)
        elif mass is not None or density is not None:
            raise ValueError("a static body has no mass; drop mass= and density=")
        elif inertia is not None:
            # (it was dropped without a word: a static body turns as it is told, never pushed)
            raise ValueError("a static body has no inertia (nothing turns it but the "
                             "angular_velocity it is given); drop inertia=")
        check_name("name", name)      # (before the row: a refused name left a row behind)
        return static, m, I, pos, quat, vel, omega, materials, damping, name

    def _append_bodies(self, shapes, values) -> list[Body]:
        """Append bodies of ``shapes`` with their ``_body_values``, all rows at once (as
        add_body of each in turn would, bit for bit); returns their handles."""
        k, first = len(values), self._n
        while self._n + k > self._capacity:
            self._allocate(2 * self._capacity)
        rows = np.arange(first, first + k)
        self._n += k
        static, m, I, pos, quat, vel, omega, materials, damping, names = zip(*values)
        materials, damping = zip(*materials), zip(*damping)
        if k == 1:
            # one body (add_body): its row and values as they are; a one-row slice takes each
            # column through a sequence-to-array conversion (+6% instructions an add_body)
            new, column = first, lambda values: values[0]
        else:
            new, column = np.s_[first: first + k], lambda values: values
        self._blank_rows(new)
        static = np.array(static, dtype=bool)
        self._kind[new] = column([NO_SHAPE if shape is None else shape.KIND for shape in shapes])
        self._params[new] = column([np.zeros(4) if shape is None else shape.params
                                    for shape in shapes])
        self._mass[new] = column(m)
        self._mass[rows.compress(static)] = np.inf
        self._inertia[new] = column(I)
        self._set_inverses(rows.compress(~static))
        self._x[new], self._q[new] = column(pos), column(quat)
        self._v[new], self._w[new] = column(vel), column(omega)
        self._serial[new] = column(range(self._bodies_added + 1, self._bodies_added + k + 1))
        self._bodies_added += k
        self._carried[new, :3], self._carried[new, 3:] = column(vel), column(omega)
        self._carried[rows.compress(~static)] = 0.0          # (a static body's alone)
        (self._friction[new], self._restitution[new], self._rolling_friction[new],
         self._spin_friction[new]) = map(column, materials)
        self._linear_damping[new], self._angular_damping[new] = map(column, damping)
        bodies = [Body(self, i, shape, name) for i, shape, name in zip(range(first, self._n),
                                                                        shapes, names)]
        self._handles += bodies
        self._body_appended(k)
        moving = self._v[rows].any(axis=1) | self._w[rows].any(axis=1)
        if moving.any():
            self._velocity_set(rows.compress(moving))   # (made moving: see _velocity_set)
        return bodies

    @staticmethod
    def _mass_properties(shape, mass, density, inertia):
        if mass is not None and density is not None:
            raise ValueError("give either mass or density, not both")
        if mass is not None:
            m = check_mass("mass", mass)
        elif density is not None:
            if shape is None:
                raise ValueError("density needs a shape to give a volume; pass mass= instead")
            rho = check_positive("density", density)
            m = _finite_product(lambda: rho * shape.volume())
            if not (np.isfinite(m) and m > 0):
                raise ValueError(f"density {rho:g} kg/m^3 gives {shape!r} a mass of {m:g} kg; "
                                 "give a shape of a size a body can have, or mass=")
            check_mass(f"density {rho:g} kg/m^3 gives {shape!r} a mass that", m)
        else:
            raise ValueError("a dynamic body needs mass= or density= (or static=True)")
        if inertia is not None:
            I = check_inertia("inertia", inertia)
            check_inertia_holds_contacts(shape, m, I)
        elif shape is None:
            raise ValueError("a body without a shape needs an explicit inertia=")
        else:
            I = _finite_product(lambda: m * shape.unit_inertia())
            if not (np.all(np.isfinite(I)) and np.linalg.eigvalsh(I)[0] > 0):
                raise ValueError(f"{shape!r} with a mass of {m:g} kg has no finite, positive "
                                 "inertia; give a shape of a size a body can have, or inertia=")
        return m, I

    def add_joint(self, joint: Joint) -> Joint:
        """Add a joint between two bodies of this world; returns it."""
        if not isinstance(joint, Joint):
            raise ValueError(f"add_joint expects a joint (Ball, Hinge, ...), got {joint!r}")
        if joint._world is not None:
            raise ValueError(f"{joint!r} is already in a world")
        if joint.body_a is joint.body_b:
            # (the constructor refuses it too; checked again for a joint whose bodies were
            # changed behind its back)
            raise ValueError(f"{joint!r} joins a body to itself: body_a and body_b must be "
                             "two bodies")
        for label, body in (("body_a", joint.body_a), ("body_b", joint.body_b)):
            if body is not None and (body._world is not self or body._row < 0):
                raise ValueError(f"{label} {body!r} is not a body of this world")
        if all(body is None or body.static for body in (joint.body_a, joint.body_b)):
            # (its rows would move nothing: the direct solve's matrix then lacks them)
            raise ValueError(f"{joint!r} joins no dynamic body: body_a and body_b are both "
                             "static or the world; a joint must hold at least one dynamic body")
        wrenches = self._joint_wrenches()       # (the last step's, by the rows it had)
        unbound = dict(vars(joint))
        try:
            joint._bind(self)
            joint._check_reach()
        except Exception:
            # (refused: left as it was, to be mended and added again; a Distance with its
            # anchors at one point was "already in a world", and added at the second try)
            vars(joint).clear()
            vars(joint).update(unbound)
            raise
        share_lines(joint, self._joints)
        joint._index = len(self._joints)
        self._joints.append(joint)
        self._joint_angle = np.append(self._joint_angle, 0.0)   # hinge angles start at zero
        sleeping.joint_added(self)
        self._wake([joint._rows_a, joint.body_b.row])
        self._joints_changed(np.concatenate([wrenches, np.zeros((1, wrenches.shape[1]))]))
        # (added mid-run, its velocities are projected at the next step: step.advance; a
        # world being built keeps the velocities it is given, as they are)
        self._joined_since_step = self._steps > 0
        binds = binding_message(joint, self._joints)
        if binds:
            warn_user(binds)
        return joint

    def remove_joint(self, joint: Joint):
        """Remove a joint. A coupling (Gear, Coupling) that uses it must be removed first."""
        if not isinstance(joint, Joint):
            raise ValueError(f"joint must be a joint of this world (Ball, Hinge, ...; as "
                             f"add_joint returned it), got {joint!r}")
        if joint._world is not self or joint._index < 0:
            raise ValueError(f"{joint!r} is not a joint of this world")
        users = [c for c in self._joints if joint in getattr(c, "coupled", ())]
        if users:
            raise ValueError(f"{joint!r} is coupled by {users}; remove them first")
        self._wake([joint._rows_a, joint.body_b.row])
        wrenches = np.delete(self._joint_wrenches(), joint._index, axis=0)
        del self._joints[joint._index]
        self._joint_angle = np.delete(self._joint_angle, joint._index)
        sleeping.joint_removed(self, joint._index)
        for i, j in enumerate(self._joints):
            j._index = i
        joint._index = -1
        joint._world = None
        joint._removed = True             # (for its errors; adding it again is allowed)
        self._joints_changed(wrenches)

    def remove_body(self, body: Body):
        """Remove a body. Its joints must be removed first (so nothing is lost silently)."""
        if not isinstance(body, Body):
            raise ValueError(f"body must be a Body of this world (as add_body returned it), "
                             f"got {body!r}")
        if body._world is not self or body._row < 0:
            raise ValueError(f"{body!r} is not a body of this world")
        self._remove_rows(np.array([body._row], dtype=np.intp), [body], "")

    def remove_bodies(self, bodies):
        """Remove several bodies at once (a list or other iterable of Body handles): the
        world ``remove_body`` of each in turn leaves, in one pass over the arrays (50 of 400
        resting spheres: 0.4 ms against 6.5 ms one by one), the run after it the same to the
        bit (the contacts of sleeping islands it wakes join the live ones in another order).
        Their joints must be removed first. Nothing is removed if any entry is refused: not
        a Body of this world (or already removed), given twice, or still jointed."""
        if isinstance(bodies, (Body, str, bytes)) or not hasattr(bodies, "__iter__"):
            raise ValueError(f"bodies must be a list (or other iterable) of Body handles of this "
                             f"world, got {bodies!r}" + (" (for one body, use remove_body)"
                                                         if isinstance(bodies, Body) else ""))
        bodies = list(bodies)
        for k, body in enumerate(bodies):
            if not isinstance(body, Body):
                raise ValueError(f"bodies[{k}] must be a Body of this world (as add_body "
                                 f"returned it), got {body!r}")
            if body._world is not self or body._row < 0:
                raise ValueError(f"bodies[{k}]: {body!r} is not a body of this world")
        given = np.array([body._row for body in bodies], dtype=np.intp)
        rows, first = np.unique(given, return_index=True)
        if rows.size < given.size:
            k = int(np.flatnonzero(~np.isin(np.arange(given.size), first))[0])
            j = int(np.flatnonzero(given == given[k])[0])
            raise ValueError(f"bodies[{k}] is bodies[{j}] again ({bodies[k]!r}): give each "
                             "body once")
        if rows.size:
            self._remove_rows(rows, bodies, "bodies")

    def _remove_rows(self, rows, bodies, label):
        """Remove the bodies of ``rows`` (sorted, distinct int array), ``bodies`` (as given),
        checked to be this world's; ``label``: the parameter that named them in a list, for
        the errors ("" for one body)."""
        removed = RemovedRows(rows)
        links = sleeping.joint_links(self)
        if removed.among(links).any() or any(
                removed.among(j._plane_body._row) for j in self._joints
                if getattr(j, "_plane_body", None) is not None):
            for k, body in enumerate(bodies):
                attached = [j for j in self._joints if body is j.body_a or body is j.body_b
                            or body is getattr(j, "_plane_body", None)]
                if attached:
                    where = f"{label}[{k}]: " if label else ""
                    raise ValueError(f"{where}{body!r} still has joints {attached}; remove "
                                     "them first")
        gone = set(bodies)
        self._ignored = {p for p in self._ignored if gone.isdisjoint(p)}
        self._allowed = {p for p in self._allowed if gone.isdisjoint(p)}
        if self._sleeping:                     # (what rested on them falls)
            sleeping.wake_touching(self, rows)
        wrenches = self._joint_wrenches()      # (the last step's, by the rows it had)
        kept = self._kept_model if self._compiled is None else Kept.of(self._compiled)
        if (links > rows[0]).any():
            kept = None                        # (a joint's rows move: compiled again)
        # the rows after the first removed move up, in place (the batch views see it): one
        # body's by a slice, several by an index array (a third of a boolean mask's cost over
        # the 26 fields; a take cost one remove_body 2.5x the slice's 15 us)
        n, first = self._n, int(rows[0])
        moved = (np.s_[first + 1: n] if rows.size == 1
                 else np.delete(np.arange(first, n), rows - first))
        for name in self._FIELDS:
            arr = getattr(self, name)
            arr[first: n - rows.size] = arr[moved]
        self._n -= rows.size
        for r in rows[::-1].tolist():
            del self._handles[r]
        for i in range(first, self._n):
            self._handles[i]._row = i
        for body in bodies:
            body._row = -1
        self._phase_rows(lambda arr, fill: np.delete(arr, rows, axis=0), before=n)
        self._contacts_without(removed)
        self._recompile_for_bodies(None if kept is None else kept.without_rows(removed))
        self._report, self._wrench_cache = None, wrenches
        u = self._solver_memory.u
        if u is not None:
            entries = (6 * rows[:, None] + np.arange(6)).ravel()   # (6 per body)
            self._solver_memory.u = np.delete(u, entries.compress(entries < u.size))

    def _phase_rows(self, change, before=None):
        """``change(array, fill)`` applied to the per-body rows of what the step keeps about
        velocities (step._to_drift: what to take back from them, which are only a drift's,
        which the user set), kept where they fitted the ``before`` bodies (default one fewer
        than now); fill: the new row's (a state's velocity, nothing to take back)."""
        n = self._n - 1 if before is None else before
        if self._to_drift is not None and self._to_drift[0].shape[0] == n:
            self._to_drift = tuple(change(part, 0.0) for part in self._to_drift)
        for name in ("_drift_only", "_velocity_given"):
            arr = getattr(self, name)
            if arr is not None and arr.shape[0] == n:
                setattr(self, name, change(arr, False))
        kicked = self._kicked_loads       # (a new body's velocity holds no half kick)
        if kicked is not None and kicked.bodies.shape[0] == n:
            self._kicked_loads = kicked._replace(
                force=None if kicked.force is None else change(kicked.force, 0.0),
                torque=None if kicked.torque is None else change(kicked.torque, 0.0),
                bodies=change(kicked.bodies, False))

    def _contacts_without(self, removed):
        """The contacts, their warm start and kept manifolds, live and sleeping, once the
        bodies ``removed`` (a RemovedRows) are gone: theirs left out, the others renumbered,
        so that removing bodies leaves the rest as it was (before, every island woke and every
        contact started cold: despawning a bullet 30 m away shook a sleeping stack at 5e-3
        m/s). What
        ``world.contacts`` shows for the live ones (impacts, a sub-step mean) is renumbered
        likewise: dropped, a bouncing ball's 2098 N read 0 N after a body far away went."""
        shown = self._shown_contacts()
        if self._contacts is not None:
            self._contacts, self._warm = without_bodies(self._contacts, self._warm, removed)
        if self._held_contacts is not None:
            self._held_contacts = without_bodies(*self._held_contacts, removed)
        self._joined_contacts = self._shown = None
        if shown is not None:
            self._show(report_without_bodies(shown, removed))
        self._manifolds = manifolds_without_bodies(self._manifolds, removed)

    def _body_appended(self, k=1):
        """``k`` bodies were added after the others: the step is compiled again, but every row
        it had keeps its meaning (``_recompile_keeping_contacts``), and what there is to take
        back from each velocity (``_phase_rows``; a new body's velocity is its state's).
        They have no joints: what the joints fix, the sparsity patterns and the
        broadphase's sweep hold as they were (``_recompile_for_bodies``)."""
        kept = self._kept_model if self._compiled is None else Kept.of(self._compiled)
        self._recompile_for_bodies(kept, self._pattern_cache)
        self._phase_rows(lambda arr, fill: np.concatenate([arr, np.full((k,) + arr.shape[1:],
                                                                       fill)]),
                         before=self._n - k)
        u = self._solver_memory.u
        if u is not None:            # (the power iteration's vector, 6 per body)
            self._solver_memory.u = np.concatenate([u, np.zeros(6 * self._n - u.size)])

    def _recompile_for_bodies(self, kept, patterns=None):
        """The step is compiled again after bodies on no joint came or went (no joint's body
        changing row; else ``kept`` is None): what the joints alone fix is kept, their part
        of the compiled step (``kept``, a step.Kept), their bodies' rows, angle table and
        coordinate tables, and ``patterns`` (the sparsity patterns) when no body changed row.
        (Building them again made the step after a bullet spawned into ragdoll_pile, 56
        joints, 2.5x a plain one: 42 against 17 ms; now 23 ms, the bullet's own contacts.)"""
        if kept is None:
            self._recompile_keeping_contacts()
            return
        joints = self._links, self._angle_table
        self._recompile_keeping_contacts(tables_hold=True)
        self._kept_model = kept
        self._links, self._angle_table = joints
        if patterns is not None:
            self._pattern_cache = patterns

    def _recompile_keeping_contacts(self, tables_hold=False):
        """The step is compiled again for the same bodies and joints (a body added after them,
        a body's mass changed): the contacts keep their warm start and manifolds, the limits
        theirs and the joints their report. (Dropping them, a far-away marker shook a settled
        12-box stack at 5e-3 m/s for its next step, against 8e-10.) tables_hold: the joints'
        coordinate tables still hold (no joint's body changed row) and are kept, with the
        settings changed since to retune them; else they are built again, and the limits'
        warm start is dropped if settings changed (its rows were the old settings': a limit
        dropped then failed the step with an IndexError)."""
        self._links = None            # (the joints' body rows)
        self._angle_table = None
        tables = self._coordinate_tables, self._retuned
        warm = self._limit_warm if tables_hold or not self._retuned else None
        kept = warm, self._report, self._wrench_cache
        self._recompile()
        self._limit_warm, self._report, self._wrench_cache = kept
        if tables_hold:
            self._coordinate_tables, self._retuned = tables

    def _set_mass_properties(self, body, mass=None, inertia=None):
        """A dynamic body's new mass (kg; its inertia scales with it: the same shape of another
        density) or body-frame inertia (3, 3) kg m^2. It wakes, with what rests on it."""
        if body.static:
            raise ValueError(f"{body!r} is static (infinite mass); to make it dynamic, remove "
                             "it and add a body with mass= or density=")
        if inertia is not None:
            check_inertia_holds_contacts(body.shape, self._mass[body.row], inertia)
        if mass is not None:
            self._check_mass_for_cfm(mass)
        self._wake_touching(body)
        row = body.row
        if mass is not None:
            inertia = self._inertia[row] * (mass / self._mass[row])
            if not np.all(np.isfinite(inertia)):
                raise ValueError(f"mass {mass:g} kg gives {body!r} no finite inertia")
            self._mass[row] = mass
        self._inertia[row] = inertia
        self._set_inverses([row])
        self._recompile_keeping_contacts(tables_hold=True)

    def _joints_changed(self, wrenches):
        """A joint was added or removed: the step is compiled again, the contacts keep their
        warm start (those of two bodies a joint now joins are not found again), and until
        the next step the joints report ``wrenches`` (nj, WRENCH_WIDTH): the others' as they
        were. (Dropping them, a joint added 30 m away turned a settled stack's contacts and an
        unrelated pin's force to 0 N, and the stack moved at 2.5e-3 m/s in its next step.)"""
        self._joint_instances = {}
        self._links = None
        self._angle_table = None
        self._recompile()
        self._solver_memory = SolverMemory()
        self._wrench_cache = wrenches

    def _actuation_changed(self, joint):
        """A joint's limits, motor, servo or friction changed: the coordinate tables take
        the new values before the next step, or are built again (with no warm start for the
        limit rows) when rows come or go (``_limit_tables``). Tables dropped with the limits'
        warm start kept (bodies whose rows moved under joints) are built again without it
        (see ``_recompile_keeping_contacts``)."""
        if self._coordinate_tables is not None:
            self._retuned[joint.index] = joint
        else:
            self._limit_warm = None

    def _recompile(self):
        """What the step compiled from the joints and from which bodies move is made again
        (after a topology change, or bodies falling asleep or waking: the contacts' warm
        start is kept then, and the awake bodies' solver memory: an island falling asleep
        far away must not change how a pile is solved)."""
        self._compiled = self._kept_model = None
        self._coordinate_tables = None
        self._retuned = {}
        self._pattern_cache = {}
        self._limit_warm = None
        self._step_caches_dropped()
        self._report = None            # (its rows are the old model's)
        self._wrench_cache = None

    # -- sleeping (physics.sleeping) -----------------------------------------------------
    @property
    def sleeping(self) -> bool:
        """Whether islands of still bodies sleep (see physics.sleeping); turning it off wakes
        them all."""
        return self._sleeping

    @sleeping.setter
    def sleeping(self, value):
        self._sleeping = check_flag("sleeping", value)
        if not value:
            sleeping.wake_all(self)

    sleep_speed = _setting("sleep_speed", check_positive, "m/s: a body slower than this (and than "
                           "sleep_spin) is still.")
    sleep_spin = _setting("sleep_spin", check_positive, "rad/s: a body turning slower than this "
                          "(and moving slower than sleep_speed) is still; so is one whose spin "
                          "moves its mass about its centre slower than sleep_speed.")
    sleep_time = _setting("sleep_time", check_positive, "s: an island still this long falls asleep.")

    @property
    def gravity(self) -> np.ndarray:
        """(3,) m/s^2, world frame, read-only (set the whole vector). Setting it wakes every
        sleeping body, and the energy a conservative system holds (``step.advance``) is
        measured again under the new gravity."""
        return read_only(self._gravity)

    @gravity.setter
    def gravity(self, value):
        self._gravity = check_vector("gravity", value, 3)
        sleeping.wake_all(self)
        self._energy_reference = None

    def _wake(self, rows):
        """Wake the islands the bodies of these rows fell asleep with (a user's touch)."""
        if self._sleeping:
            sleeping.wake_islands(self, rows)

    def _wake_touching(self, body):
        """Wake ``body``'s island and the sleeping islands that rest on it or are jointed to
        it (a change to the body that may move them)."""
        if self._sleeping:
            sleeping.wake_touching(self, body.row)

    def _wake_overlapping(self, body):
        """Wake the sleeping islands a static ``body`` may now touch (moved onto them, or made
        to collide with them): the step makes no contacts between a static body and a
        sleeping one, so none would wake them (a dynamic body does: it wakes itself)."""
        if self._sleeping and body.static:
            sleeping.wake_overlapping(self, body.row)

    def _show(self, report):
        """Show ``report`` (a ContactReport, body indices, or a function of no arguments that
        makes one when it is first asked for) for the live contacts until they change: theirs
        with the impacts' forces added (their impulses over the step), or those of a step of
        several sub-steps (``step.substep_mean``)."""
        self._shown = (self._contacts, report)

    def _shown_contacts(self):
        """The report ``_show`` gave for the live contacts, or None."""
        shown = self._shown
        if shown is None or shown[0] is not self._contacts:
            return None
        if callable(shown[1]):
            shown = self._shown = (shown[0], shown[1]())
        return shown[1]

    def _forget_contacts(self):
        """No last contacts (nor their warm start), and no limit multipliers to start from."""
        self._contacts = self._shown = None
        self._warm = (np.zeros(0, dtype=np.int64), np.zeros((0, 3)))
        self._limit_warm = None
        self._manifolds = Manifolds.empty()

    # -- collision filtering -------------------------------------------------------------
    def ignore_collision(self, body_a: Body, body_b: Body):
        """Never let these two bodies collide."""
        pair = self._pair(body_a, body_b)
        self._allowed.discard(pair)
        self._ignored.add(pair)
        self._compiled = self._kept_model = None
        for body in (body_a, body_b):     # (one may have rested on the other)
            self._wake_touching(body)

    def allow_collision(self, body_a: Body, body_b: Body):
        """Let these two bodies collide even if a joint connects them."""
        pair = self._pair(body_a, body_b)
        self._ignored.discard(pair)
        self._allowed.add(pair)
        self._compiled = self._kept_model = None
        for body in (body_a, body_b):     # (as ignore_collision: they may overlap now)
            self._wake_touching(body)
            self._wake_overlapping(body)

    def _pair(self, a, b):
        for label, body in (("body_a", a), ("body_b", b)):
            if not isinstance(body, Body) or body._world is not self or body._row < 0:
                raise ValueError(f"{label} {body!r} is not a body of this world")
        if a is b:
            raise ValueError("body_a and body_b are the same body")
        return frozenset((a, b))

    @property
    def contacts(self):
        """Contacts of the last step (a ContactReport of read-only arrays; empty before the
        first), then those of the sleeping islands, with the forces they had when their
        island fell asleep (the step makes no contacts for them). Copy an array to change it."""
        live = self._shown_contacts()
        if live is None:
            live = self._contacts if self._contacts is not None else ContactReport.empty()
        held = self._held_contacts
        if held is None:
            return live.read_only()
        # (joined once for the same live and held contacts: a run loop asks every step)
        joined = self._joined_contacts
        if joined is None or joined[0] is not live or joined[1] is not held:
            joined = (live, held, ContactReport.concatenate([live, held[0]]))
            self._joined_contacts = joined
        return joined[2].read_only()

    def _state_changed(self):
        self._step_caches_dropped()
        self._solver_memory = SolverMemory()

    def _velocity_set(self, row):
        """The user set body ``row``'s velocity (or rows', an int array, or made the body with
        one): it is its state's, at the step's start. A step that finds bounded rows acting
        on a body starts it from its drift's velocity (step._to_drift), the state's less what
        the body's acceleration adds over half the step: for a body given a velocity that is
        gravity's half kick, unless bounded rows hold it up, directly or through its joints
        (a contact, limit or motor tying it to a static body: step._resting_where_given).
        (With nothing to take back, a ball thrown up from the ground, its contact's row still
        acting in the first step, flew g dt / 2 too slowly ever after: 10.2 mm low after
        0.5 s at dt 1/240, 40.9 mm at 1/60.)"""
        n = self._n         # (the world's own arrays: the step and set_state make them anew)
        if self._drift_only is not None and self._drift_only.shape[0] == n:
            self._drift_only[row] = False
        if self._to_drift is None or self._to_drift[0].shape[0] != n:
            # (none kept: nothing to take back from the other bodies, as with none)
            self._to_drift = (np.zeros((n, 3)), np.zeros((n, 3)))
        # (a sub-step's half kick: the last sub-step's, as the rest of _to_drift, where dt has
        # changed since; the next step makes it the new one's, step._retimed_velocities)
        h = self.dt / self.substeps if self._drift_step is None else self._drift_step
        self._to_drift[0][row] = np.where(np.asarray(self._inv_mass[row] > 0)[..., None],
                                          0.5 * h * self._gravity, 0.0)
        self._to_drift[1][row] = 0.0
        if self._velocity_given is None or self._velocity_given.shape[0] != n:
            self._velocity_given = np.zeros(n, dtype=bool)
        self._velocity_given[row] = True
        self._kick_forgotten(row)

    def _kick_forgotten(self, row):
        """Body ``row`` (or rows, an int array or (N,) mask) holds no half kick of the user
        loads that the next step should exchange for its own (step.loads_caught_up): the user
        set its velocity or pose, or it fell asleep, and the step takes its velocity as it
        is."""
        kicked = self._kicked_loads
        if kicked is not None and kicked.bodies.shape[0] == self._n:
            bodies = kicked.bodies.copy()
            bodies[row] = False
            self._kicked_loads = kicked._replace(bodies=bodies)

    def _step_caches_dropped(self):
        """What the last step left for the next that the bodies' rows or masses fix. (Not
        its report: the joints' forces describe the last step until the next.)"""
        self._start_cache = None      # see step.symplectic_substep
        self._stiffness = None
        self._energy_reference = None
        self._angles_current = False  # _joint_angle is the last step's, not the state's

    # -- read access ---------------------------------------------------------------------
    @property
    def bodies(self) -> list[Body]:
        """The bodies in the order they were added (``body.index`` is the position here and
        in the batch arrays: ``positions``, ``linear_velocities``, ...)."""
        return self._handles[1:]

    @property
    def joints(self) -> list[Joint]:
        """The joints (and couplings) in the order they were added."""
        return list(self._joints)

    def body(self, name: str) -> Body:
        """The body called ``name`` (``add_body(..., name=...)``); ValueError where none is,
        naming those there are, or where several are."""
        return _named(self.bodies, name, "body")

    def joint(self, name: str) -> Joint:
        """The joint called ``name``; ValueError where none is, or several are."""
        return _named(self._joints, name, "joint")

    @property
    def joint_forces(self) -> np.ndarray:
        """(J, 3) the force every joint applied to its body_b in the last step, N, world
        frame, in ``joints`` order (each joint's ``force``, all at once)."""
        return self._joint_wrenches()[:, :3].copy()

    @property
    def joint_anchors(self) -> np.ndarray:
        """(J, 3) where every joint's anchor on its body_b is now, m, world frame, in ``joints``
        order (each joint's ``anchor`` to rounding: a RotationLock's or a coupling's is its
        body_b's centre), from the joints' local anchors and the bodies' orientations as
        arrays: 0.2 ms for 2000 joints, whose ``anchor`` one by one took 25 ms (the J overlay)."""
        model = self._model()
        rows = model.joint_b
        turned = np.einsum("nij,nj->ni", quat_to_matrix(self._q[rows]), model.joint_lb)
        return self._x[rows] + turned

    @property
    def joint_torques(self) -> np.ndarray:
        """(J, 3) the torque every joint applied to its body_b about its anchor in the last
        step, N m, world frame, in ``joints`` order (each joint's ``torque``)."""
        return self._joint_wrenches()[:, 3:6].copy()

    @property
    def positions(self) -> np.ndarray:
        """(n, 3) centres of mass, a read-only view (valid until bodies are added or removed)."""
        return self._readonly("_x")

    @property
    def masses(self) -> np.ndarray:
        """(n,) masses, kg, in ``bodies`` order (infinite for static bodies), a read-only view;
        set one with ``Body.mass``."""
        return self._readonly("_mass")

    @property
    def asleep(self) -> np.ndarray:
        """(n,) bool: which bodies sleep (see ``sleeping``), a read-only view."""
        return self._readonly("_asleep")

    @property
    def orientations(self) -> np.ndarray:
        """(n, 4) quaternions (w, x, y, z), a read-only view."""
        return self._readonly("_q")

    @property
    def linear_velocities(self) -> np.ndarray:
        """(n, 3) velocities of the centres of mass, m/s, world frame, in ``bodies`` order.
        Read: a read-only view (it follows the steps; valid until bodies are added or
        removed; ``.copy()`` it to keep or edit it). Set: assign a whole (n, 3) array
        (``v = world.linear_velocities.copy(); v[k] = ...; world.linear_velocities = v``),
        which is copied in and checked as ``Body.linear_velocity`` checks one row; each body
        whose row changes is treated as if set alone (it and what rests on it wake, a static
        one moves kinematically, a jointed one has what its joints forbid projected at the
        next step keeping momentum); a body whose row is unchanged is left as it is (asleep,
        if it sleeps). A plane's row stays zero."""
        return self._readonly("_v")

    @linear_velocities.setter
    def linear_velocities(self, value):
        self._set_velocities("linear_velocities", "_v", value, "m/s")

    @property
    def angular_velocities(self) -> np.ndarray:
        """(n, 3) angular velocities, rad/s, world frame, in ``bodies`` order: a read-only
        view; set a whole (n, 3) array, as ``linear_velocities``."""
        return self._readonly("_w")

    @angular_velocities.setter
    def angular_velocities(self, value):
        self._set_velocities("angular_velocities", "_w", value, "rad/s")

    def _set_velocities(self, name, field, value, unit):
        """Every body's velocity or spin (``field`` "_v" or "_w") from ``value`` (n, 3)."""
        from .shapes import PLANE
        shape = (self._n - 1, 3)
        new = numbers(name, value, f"{shape} numbers ({unit}), one row per body")
        check_array_shape(name, new, shape, f"finite numbers ({unit}), one row per body")
        old = getattr(self, field)[1: self._n]
        changed = (new != old).any(axis=1)
        plane = changed & (self._kind[1: self._n] == PLANE) & new.any(axis=1)
        if plane.any():
            k = int(np.flatnonzero(plane)[0])
            raise ValueError(f"{name}[{k}] is for {self._handles[k + 1]!r}, a Plane, which does "
                             "not move: give it a zero row (for a moving floor use a static "
                             "Box given a velocity)")
        rows = np.flatnonzero(changed) + 1
        if not rows.size:
            return
        getattr(self, field)[rows] = new[rows - 1]
        self._velocities_changed(rows)

    def _readonly(self, name):
        return read_only(getattr(self, name)[1: self._n])

    # -- compiled topology ---------------------------------------------------------------
    def _model(self):
        if self._compiled is None:
            self._compiled = compile_model(self, self._kept_model)
            self._kept_model = None
        return self._compiled

    # -- stepping ------------------------------------------------------------------------
    @property
    def time(self) -> float:
        """Simulated time, s (counted in steps, so it does not accumulate rounding)."""
        return self._time_origin + self._steps * self.dt

    def step(self, n: int = 1):
        """Advance ``n`` steps (a whole number, default 1) of ``world.dt`` each: the step size
        is the world's, not an argument (``World(dt=...)`` or ``world.dt = ...``). On failure
        (a non-finite result or a singular system) raises and leaves the world as it was
        before the failing step."""
        # (a plain int needs no checking: a script's step() per frame took five calls more)
        for _ in range(n if type(n) is int and n >= 0 else self._step_count(n)):
            # what a failed step puts back: the attributes an attempt may replace (contacts,
            # warm starts, the compiled step, the joints' report ...: references, no
            # copies), the solver's memory, the counts, and the sleep arrays a wake changes
            before = dict(vars(self))
            memory = (self._solver_memory.u, self._solver_memory.settled)
            counted = dict(self.stats)
            slept = None
            attempt = before          # (what an attempt starts from)
            self._clock.step_started()
            while True:
                try:
                    pipeline.advance(self)
                    break
                except sleeping.Woken as woken:
                    # awake bodies reached a sleeping island: the step again, with it awake
                    # (what the abandoned attempt counted, or kept of its sub-steps, does not
                    # count; a second island reached keeps what waking the first brought back)
                    self.stats.update(counted)
                    for name in self._ATTEMPTED:
                        setattr(self, name, attempt[name])
                    if slept is None:
                        slept = sleeping.sleep_arrays(self)
                    sleeping.wake_islands(self, woken.rows)
                    attempt = dict(vars(self))
                except BaseException:
                    # (Ctrl-C too: a step stopped part-way left the world half stepped)
                    self._clock.step_ended(completed=False)   # (its time counts)
                    self._step_undone(before, memory, counted, slept)
                    raise
            self._track_angles()
            if (self.stats["projections"] > counted["projections"] and not self._warned_unheld
                    and self._projected_miss > UNHELD_ERROR):
                self._warn_unheld_joints()
            if self._sleeping:
                sleeping.update_sleep(self)
            self._clock.step_ended()

    def _warn_unheld_joints(self):
        """Once per world: a step whose positions had to be projected that still leaves a
        joint more than UNHELD_ERROR off (its ``_projected_miss``) warns, naming the joint.
        (A two-link arm of reach 0.6 m tied back by a rigid Distance of 1.0 m ran on silently
        at 0.13 m off, its joints reading 4.8e11 N and each step 140 times slower.)"""
        errors = sleeping.joint_errors(self)
        if errors.max(initial=0.0) <= UNHELD_ERROR:
            return
        worst = int(errors.argmax())
        self._warned_unheld = True
        joint = self._joints[worst]
        label = repr(joint.name) if joint.name else f"{type(joint).__name__} {worst}"
        largest = np.linalg.norm(self.joint_forces, axis=1).max()
        warnings.warn(
            f"joint {label} is {errors[worst]:.3g} m (or rad) off its constraint after step "
            f"{self._steps}: the joints cannot all hold (a loop that cannot close, such as a "
            f"Distance longer than the arm it closes can reach, or joints fighting each other "
            f"or a contact). Their forces then mean nothing (up to {largest:.3g} N now) and "
            f"each step splits and projects (world.stats['projections']); "
            f"world.constraint_error() gives the miss. This warning is given once per world.",
            RuntimeWarning, stacklevel=3)

    def _step_count(self, n) -> int:
        """``step``'s n, a whole number >= 0; a step size passed instead (``step(1 / 60)``, as
        Box2D's and pymunk's step take) is refused with what to do."""
        try:
            return check_count("n", n, minimum=0)
        except ValueError as exc:
            if isinstance(n, (float, np.floating)) and np.isfinite(n) and 0 < n <= MAX_DT:
                raise ValueError(f"{exc}: step(n) takes a number of steps, not a step size; "
                                 f"each step is world.dt ({self.dt:g} s) long. For steps of "
                                 f"{n:g} s set world.dt = {n!r}, then call step()") from None
            raise

    # what an attempt at a step replaces before it may find a sleeping island in reach (the
    # velocities' bookkeeping, and the contacts, limits and reports each sub-step keeps)
    _ATTEMPTED = ("_after_euler", "_to_drift", "_drift_only", "_drift_step", "_velocity_given",
                  "_kicked_loads",
                  "_contacts", "_shown", "_warm", "_limit_warm", "_manifolds", "_report",
                  "_wrench_cache", "_angle_reference", "_turned_unreferenced", "_velocity_metric")

    def _step_undone(self, before, memory, counted, slept):
        """A step failed: the world as it was before it, bit for bit. (Without this, a step
        that woke a sleeping island on its way to failing left it awake, its contacts and
        the joints' forces made anew, though the StepError said the world was unchanged.)"""
        if slept is not None:
            sleeping.restore_arrays(self, slept)
        vars(self).update(before)
        self._start_cache = None          # (as step.advance leaves it after a failure)
        self._solver_memory.u, self._solver_memory.settled = memory
        self.stats.update(counted)

    def apply_forces(self, forces, bodies=None):
        """Add world-frame forces (N) at the centres of mass for the next step, as
        ``Body.apply_force`` does, for many bodies at once: ``forces`` (k, 3) on ``bodies``
        (k,), Body handles of this world or their indices in world.bodies (default: every
        body, k = len(world.bodies); a static body's row must be zero). A zero row leaves a
        sleeping body asleep."""
        rows = np.arange(1, self._n) if bodies is None else self._rows_of(bodies)
        f = self._rows_on_bodies("forces", forces, rows, "N", "a force")
        total = self._force[: self._n].copy()
        with np.errstate(over="ignore", invalid="ignore"):
            np.add.at(total, rows, f)
        if not np.all(np.isfinite(total[rows])):
            k = int(np.flatnonzero(~np.isfinite(total[rows]).all(axis=1))[0])
            raise ValueError(f"forces on {self._handles[rows[k]]!r} (forces[{k}] and any "
                             "other row for it, with what is already applied to it for the "
                             "next step) add up past the largest float; apply smaller forces "
                             "(world.clear_forces() drops those queued)")
        # (all checked: a refused call leaves the queue as it was). Only the bodies pushed
        # wake: a field applied every step, zero on most bodies, kept every one awake
        self._wake(rows[f.any(axis=1)])
        self._force[rows] = total[rows]

    def apply_impulses(self, impulses, bodies=None, points=None):
        """Strike many bodies at once, as ``Body.apply_impulse`` strikes one: ``impulses``
        (k, 3) N s, world frame, on ``bodies`` (k,) (Body handles of this world or their
        indices in world.bodies; default: every body, k = len(world.bodies)) at world
        ``points`` (k, 3) m (default: their centres of mass). A body named twice takes both.
        Velocities and spins change now (not at the next step), and the next step projects
        what joints forbid onto them, keeping momentum. A zero row leaves a sleeping body
        asleep; a static body's row must be zero."""
        rows = np.arange(1, self._n) if bodies is None else self._rows_of(bodies)
        J = self._rows_on_bodies("impulses", impulses, rows, "N s", "an impulse")
        P = None
        if points is not None:
            shape = (rows.size, 3)
            P = numbers("points", points, f"{shape} numbers (m), one row per body")
            check_array_shape("points", P, shape, "finite world points (m), one row per body")
        struck = J.any(axis=1)
        rows, J = rows[struck], J[struck]
        if not rows.size:
            return
        dv, dw = impulse_response(self, rows, J, None if P is None else P[struck])
        v, w = self._v[: self._n].copy(), self._w[: self._n].copy()
        with np.errstate(over="ignore", invalid="ignore"):
            np.add.at(v, rows, dv)
            np.add.at(w, rows, dw)
        bad = ~(np.isfinite(v[rows]).all(axis=1) & np.isfinite(w[rows]).all(axis=1))
        if bad.any():
            k = int(np.flatnonzero(struck)[np.flatnonzero(bad)[0]])
            raise ValueError(f"impulses[{k}] (with any other row for the same body) gives "
                             f"{self._handles[rows[bad][0]]!r} a velocity or spin past the "
                             "largest float; apply smaller impulses, nearer the centres")
        # (all checked: a refused call changes nothing)
        self._v[rows], self._w[rows] = v[rows], w[rows]
        self._velocities_changed(np.unique(rows))

    def _rows_on_bodies(self, name, value, rows, unit, what):
        """``value`` (k, 3) in ``unit`` for the body rows ``rows`` (k,), checked: finite
        numbers, one row per body, zero on a static body (``what``: "a force" ...), each
        refusal a ValueError naming ``name``."""
        shape = (rows.size, 3)
        out = numbers(name, value, f"{shape} numbers ({unit}), one row per body")
        check_array_shape(name, out, shape, f"finite numbers ({unit}), one row per body")
        static = np.isinf(self._mass[rows]) & out.any(axis=1)
        if static.any():
            k = int(np.flatnonzero(static)[0])
            raise ValueError(f"{name}[{k}] is on {self._handles[rows[k]]!r}, which is static: "
                             f"nothing pushes a static body, so {what} on it has no effect. "
                             "Give it a zero row, or leave it out of bodies")
        return out

    def _velocities_changed(self, rows):
        """The user changed the velocities of body rows ``rows`` (int array) together: as
        setting each one's (``Body._touched``, ``_velocity_set``), in one go."""
        if self._sleeping:
            sleeping.wake_touching(self, rows)
        self._state_changed()
        self._velocity_set(rows)

    def _rows_of(self, bodies) -> np.ndarray:
        """Body rows (k,) of ``bodies``: Body handles of this world or integer indices into
        world.bodies (an integer array or a sequence of them); ValueError naming ``bodies``
        for anything else (0.5 was cut to 0, True taken as 0, a Body was a TypeError)."""
        if isinstance(bodies, np.ndarray) and bodies.dtype.kind in "iu":
            index = bodies.reshape(-1).astype(np.intp)
        else:
            items = list(bodies) if isinstance(bodies, (list, tuple, np.ndarray)) else [bodies]
            index = np.array([self._index_of(item, k) for k, item in enumerate(items)],
                             dtype=np.intp)
        bad = (index < 0) | (index >= self._n - 1)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise ValueError(f"bodies[{k}] is {index[k]}: bodies must be indices into "
                             f"world.bodies (0 to {self._n - 2}) or Body handles")
        return index + 1

    def _index_of(self, item, k) -> int:
        """The index in world.bodies of ``bodies[k]`` (a Body of this world or an int)."""
        if isinstance(item, Body):
            if item._world is not self or item._row < 0:
                raise ValueError(f"bodies[{k}]: {item!r} is not a body of this world")
            return item._row - 1
        if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            if not 0 <= item < self._n - 1:       # (10**400 is no C long: checked here)
                raise ValueError(f"bodies[{k}] is {item}: bodies must be indices into "
                                 f"world.bodies (0 to {self._n - 2}) or Body handles")
            return int(item)
        raise ValueError(f"bodies[{k}] must be a Body of this world or an integer index into "
                         f"world.bodies, got {item!r}")

    def clear_forces(self):
        """Drop the forces and torques applied (``apply_force``, ``apply_torque``) for the next
        step: after a StepError they stay queued, and the next step would fail again."""
        self._force[: self._n] = 0.0
        self._torque[: self._n] = 0.0

    @property
    def profile(self) -> dict:
        """Where the steps' time went since the world was made or ``reset_profile``: wall-clock
        seconds by stage of the pipeline ("collide", "rows", "impacts", "solve", "integrate",
        "other"; see ``physics.stages``), their sum "total" and the "steps" taken (a copy).
        Divide by "steps" for a step's share."""
        return self._clock.report()

    def reset_profile(self):
        """Start ``profile`` from zero."""
        self._clock.reset()

    def _track_angles(self):
        """Carry every hinge's (and cylindrical joint's) continuous angle to the new state (one
        vectorised call): the geometric angle's branch nearest to the angles the step carried
        along its drifts (``step.carry_angle_reference``), i.e. a running turn count. (The
        step's limit and motor rows took their angles at the rotations it started from;
        these are at the ones it ended with, which the next step unwraps against: a second
        evaluation, not a repeat.)"""
        table = self._turning_angles()
        if table.owner.size:
            # the rotations the step ended with, if it kept them for the next one (the same
            # values as made afresh from the orientations)
            cache = self._start_cache
            self._joint_angle[table.owner] = table.at(cache.R if cache is not None else None)[0]
        self._angle_reference, self._turned_unreferenced = None, 0.0
        self._angles_current = True     # (until the state changes: _step_caches_dropped)

    def _turning_angles(self):
        """The continuous angles of this world's hinges and cylindrical joints
        (limits.TurningAngles), made once per topology."""
        if self._angle_table is None:
            from .joints import _Turning
            from .limits import TurningAngles
            self._angle_table = TurningAngles(
                self, [j for j in self._joints if isinstance(j, _Turning)])
        return self._angle_table

    # -- settings (each checked whenever it is set) ----------------------------------------
    @property
    def dt(self) -> float:
        """The step, s. Setting it keeps the time reached, and with the default stabilisation
        time (4 sub-steps) moves that with it."""
        return self._dt

    @dt.setter
    def dt(self, value):
        self._retimed(_step_size("dt", value), self._substeps)

    @property
    def substeps(self) -> int:
        """Sub-steps per step (each one of dt / substeps)."""
        return self._substeps

    @substeps.setter
    def substeps(self, value):
        self._retimed(self._dt, _substep_count("substeps", value))

    def _retimed(self, dt, substeps):
        if (dt, substeps) == (self._dt, self._substeps):
            return
        h, d = dt / substeps, self.baumgarte[1]
        if self._default_stabilization:
            baumgarte = _stabilization(4 * h, h)
        else:
            baumgarte = self._baumgarte
            if d > 0:
                _stabilization(2.0 / d, h)              # (the check alone)
        self._time_origin, self._steps = self.time, 0
        self._dt, self._substeps, self._baumgarte = dt, substeps, baumgarte
        self._step_caches_dropped()

    contact_iterations = _setting("contact_iterations", check_count,
                                  "The iterative contact solve's iteration budget per step (see "
                                  "the class docstring).")
    @property
    def integrator(self) -> str:
        """'symplectic' or 'rk4' (see the class docstring). Set to 'rk4' in a world with
        limits, motors or joint friction, or whose bodies touched in the last step, it is
        refused (each step would fail); a contact that comes later fails its step, which
        says to set it back."""
        return self._integrator

    @integrator.setter
    def integrator(self, value):
        value = check_choice("integrator", value, INTEGRATORS)
        if value == "rk4":
            contacts = self._contacts
            touching = contacts is not None and bool((contacts.depth >= 0.0).any())
            bounded = self._limit_tables().plan is not None
            if bounded or touching:
                # (accepted, it failed every step after, until set back)
                raise ValueError(f"integrator 'rk4' refused: "
                                 f"{rk4_refusal(bounded, touching)}, so every step "
                                 f"would fail; keep integrator={self._integrator!r}")
        self._integrator = value
    gyroscopic = _setting("gyroscopic", lambda n, v: check_choice(n, v, GYROSCOPIC),
                          "'implicit' or 'explicit' (see the class docstring).")
    contact_solver = _setting("contact_solver", lambda n, v: check_choice(n, v, CONTACT_SOLVERS),
                              "'auto', 'iterative' or 'direct' (see the class docstring).")
    @property
    def cfm(self) -> float:
        """The joints' and contacts' diagonal regularisation (ODE's CFM), m/N per unit of row:
        at most CFM_TIMES_MASS over the heaviest dynamic body's mass (1 kg in a world of
        lighter ones or none)."""
        return self._cfm

    @cfm.setter
    def cfm(self, value):
        value = check_positive("cfm", value, allow_zero=True)
        masses = getattr(self, "_mass", np.zeros(0))
        heaviest = max(1.0, masses[np.isfinite(masses)].max(initial=0.0))
        if value * heaviest > CFM_TIMES_MASS:
            raise ValueError(f"cfm must be at most {CFM_TIMES_MASS / heaviest:g} here ("
                             f"{CFM_TIMES_MASS:g} over the heaviest dynamic body's mass, taken "
                             f"as at least 1 kg: {heaviest:g} kg), got {value:g}: "
                             f"beyond it the contacts and joints give way (cfm 1 let a resting "
                             f"100 kg box sink through the ground); leave cfm at its default "
                             f"1e-9 unless redundant joints need more")
        self._cfm = value

    def _check_mass_for_cfm(self, mass: float):
        if mass * self._cfm > CFM_TIMES_MASS:
            raise ValueError(f"mass {mass:g} kg is too heavy for this world's cfm "
                             f"{self._cfm:g}: contacts and joints hold a body while mass times "
                             f"cfm is at most {CFM_TIMES_MASS:g} (here {CFM_TIMES_MASS / self._cfm:g}"
                             f" kg); give a lighter body or lower world.cfm first")

    @property
    def baumgarte(self) -> tuple:
        """(k, d): the joints' stabilisation terms, 1/s^2 and 1/s (see the class docstring).
        Set, they stay when dt changes."""
        return self._baumgarte

    @baumgarte.setter
    def baumgarte(self, value):
        self._baumgarte = _checked_baumgarte("baumgarte", value)
        self._default_stabilization = False
    post_stabilization = _setting("post_stabilization", check_flag,
                                  "Whether each symplectic sub-step ends projected onto "
                                  "the joints (see the class docstring).")
    shake_newton = _setting("shake_newton", check_flag,
                            "Whether SHAKE finishes with Newton iterations.")
    geometric_stiffness = _setting("geometric_stiffness", check_flag,
                                   "See the class docstring.")
    position_iterations = _setting("position_iterations", check_count,
                                   "Projection iterations per sub-step.")
    shake_iterations = _setting("shake_iterations", check_count, "SHAKE iterations per sub-step.")
    shake_quasi_iterations = _setting("shake_quasi_iterations", check_count,
                                      "SHAKE's quasi-Newton iterations before Newton's.")
    max_split_depth = _setting("max_split_depth", lambda n, v: check_count(n, v, minimum=0),
                               "How many times a step may halve where SHAKE misses.")
    position_tolerance = _setting("position_tolerance", check_positive,
                                  "m (~rad): the joint error at which SHAKE stops.")
    projection_tolerance = _setting("projection_tolerance", check_positive,
                                    "m (~rad): the joint error the projection aims under.")
    contact_margin = _setting("contact_margin", _non_negative,
                              "m: the gap below which a contact row is made (speculative).")

    # -- energies and momenta ------------------------------------------------------------
    def _dynamic(self):
        return self._view("_inv_mass") > 0

    def kinetic_energy(self) -> float:
        """J, of all dynamic bodies."""
        return kinetic_energy(self, *(self._view(f) for f in ("_q", "_v", "_w")))

    def potential_energy(self) -> float:
        """Gravitational potential energy, J, zero at the world origin."""
        return potential_energy(self, self._view("_x"))

    def ray_cast(self, origin, direction, max_distance=np.inf, mask=-1, ignore=()):
        """The first body a ray from ``origin`` (3,) m along ``direction`` (3,) (any length
        but zero) meets within ``max_distance`` m, as a RayHit (body, point (3,) m, normal
        (3,), distance m; world frame, the normal outward from the body's surface), or None.
        Only bodies whose ``collision_group`` shares a bit with ``mask`` are met, and none of
        ``ignore`` (a body or its index in ``bodies``, or a list of them: the shooter). Shapes
        are solid: a ray that starts inside a body meets it at distance 0, its normal against
        the ray; one that starts on a body's surface (within 1e-9 m per metre of the
        coordinates) meets it at 0 if it goes in, and not at all if it leaves the surface or
        runs along it (a ray cast on from a hit point goes on to the next body). Reads the
        present poses; moves nothing."""
        # (checked here, so that a bad one is named as given, not as a row of ray_casts')
        origin = check_vector("origin", origin, 3)
        if not check_vector("direction", direction, 3).any():
            raise ValueError(f"direction must not be zero, got {direction!r}")
        hits = self.ray_casts(origin, direction, max_distance, mask, ignore)
        if hits.body[0] < 0:
            return None
        return RayHit(self._handles[hits.body[0] + 1], hits.point[0], hits.normal[0],
                      float(hits.distance[0]))

    def ray_casts(self, origins, directions, max_distance=np.inf, mask=-1, ignore=(),
                  ignore_each=None):
        """R rays at once (``origins``, ``directions`` (R, 3); ``max_distance`` one number or
        (R,)), as ``ray_cast``: a RayHits of arrays, ``body`` (R,) indices into ``bodies``
        (-1: nothing met), ``distance`` (R,) m (inf), ``point`` and ``normal`` (R, 3) (NaN).
        ``ignore`` leaves bodies out for every ray; ``ignore_each`` (R,) one body per ray
        (a Body or its index, -1 or None for none): each character's ground check from its
        own centre leaves out its own capsule."""
        return world_ray_casts(self, origins, directions, max_distance, mask, ignore,
                               ignore_each)

    def overlapping(self, shape, position, orientation=(1.0, 0.0, 0.0, 0.0), mask=-1):
        """The bodies (a list, in ``bodies`` order) that ``shape`` (Sphere, Box, Capsule or
        Cylinder) placed at ``position`` (3,) m with ``orientation`` (4,) (scalar first,
        body to world) would touch or overlap, among those whose ``collision_group`` shares a
        bit with ``mask``: a trigger volume's occupants, whether a spawn point is clear. The
        shape is not added; nothing moves."""
        return [self._handles[i + 1]
                for i in overlapping_bodies(self, shape, position, orientation, mask)]

    def energy(self) -> float:
        """J: kinetic plus gravitational potential energy of all dynamic bodies (potential
        zero at the world origin)."""
        return self.kinetic_energy() + self.potential_energy()

    def linear_momentum(self) -> np.ndarray:
        """Total momentum of the dynamic bodies, kg m/s (3,), world frame."""
        dyn = self._dynamic()
        return (self._view("_mass")[dyn, None] * self._view("_v")[dyn]).sum(axis=0)

    def angular_momentum(self, point=(0, 0, 0)) -> np.ndarray:
        """Total angular momentum about world ``point``, kg m^2/s (3,)."""
        p = check_vector("point", point, 3)
        dyn = self._dynamic()
        m, x, v = self._view("_mass")[dyn], self._view("_x")[dyn], self._view("_v")[dyn]
        R = quat_to_matrix(self._view("_q")[dyn])
        Iw = np.einsum("nij,njk,nlk->nil", R, self._view("_inertia")[dyn], R)
        spin = np.einsum("nij,nj->ni", Iw, self._view("_w")[dyn])
        return (cross(x - p, m[:, None] * v) + spin).sum(axis=0)

    def constraint_error(self) -> float:
        """Largest position-level joint violation now (metres for points, ~radians for
        angular rows)."""
        errors = sleeping.joint_errors(self)
        resting = sleeping.resting_joints(self)
        if resting is not None and self._held_errors is not None:
            # a sleeping island's joints: the errors they had when it fell asleep
            errors = np.where(resting, self._held_errors, errors)
        return float(errors.max(initial=0.0))

    def _joint_values(self, model):
        """The joint rows' values C (m,) now (model.owner: their joints)."""
        k = Kinematics(self._view("_x"), quat_to_matrix(self._view("_q")),
                       self._view("_v"), self._view("_w"), velocity_terms=False)
        return evaluate_tables(model.tables, k, c_only=True)

    # -- state snapshots -----------------------------------------------------------------
    _STATE = ("_x", "_q", "_v", "_w", "_force", "_torque")

    def get_state(self) -> dict:
        """An exact snapshot (copies) of everything that changes during a step, including what
        the next step's contact solve starts from: the last step's contacts with their
        multipliers (the sleeping islands' are in the sleep part), the contact manifolds that
        pairs may keep (``physics.collision.manifolds``), the limits' multipliers and what
        the solver carries from step to step (its norm estimate's vector, whether the last
        solve finished). Restored with ``set_state``, a step replays bit for bit."""
        state = {name[1:]: self._view(name).copy() for name in self._STATE}
        state["time"] = self.time
        # (time is origin + steps dt: the two parts replay the clock to the bit)
        state["clock"] = (self._time_origin, self._steps)
        state["n_bodies"] = self._n - 1
        state["n_joints"] = len(self._joints)
        state["topology"] = self._topology()
        state["joint_errors"] = sleeping.joint_errors(self)
        state["joint_angles"] = self._joint_angle.copy()
        state["energy_reference"] = self._energy_reference
        state["stiffness"] = None if self._stiffness is None else self._stiffness.copy()
        held = self._velocity_metric      # (K, h) the velocities' metric (step._between_metrics)
        state["velocity_metric"] = None if held is None else (held[0].copy(), float(held[1]))
        state["after_euler"] = self._after_euler
        state["joined_since_step"] = self._joined_since_step
        state["carried_velocities"] = self._view("_carried").copy()
        state["to_drift"] = (None if self._to_drift is None
                             else np.concatenate(self._to_drift, axis=1))
        state["drift_only"] = None if self._drift_only is None else self._drift_only.astype(float)
        state["drift_step"] = self._drift_step
        state["velocity_given"] = (None if self._velocity_given is None
                                   else self._velocity_given.astype(float))
        kicked = self._kicked_loads
        state["kicked_loads"] = None if kicked is None else np.concatenate(
            [np.zeros((self._n, 3)) if load is None else load
             for load in (kicked.force, kicked.torque)], axis=1)
        state["kicked_step"] = None if kicked is None else kicked.h
        state["kicked_bodies"] = None if kicked is None else kicked.bodies.astype(float)
        state["contacts"] = (None if self._contacts is None
                             else contact_snapshot(self._contacts, *self._warm))
        shown = self._shown_contacts()
        state["shown_contacts"] = None if shown is None else report_snapshot(shown)
        state["limit_multipliers"] = (None if self._limit_warm is None
                                      else tuple(a.copy() for a in self._limit_warm))
        state["manifolds"] = manifold_snapshot(self._manifolds)
        u = self._solver_memory.u
        state["norm_vector"] = None if u is None else u.copy()
        state["solve_settled"] = self._solver_memory.settled
        state["sleep"] = sleeping.snapshot(self)
        state["joint_wrenches"] = self._joint_wrenches().copy()
        return state

    def set_state(self, state: dict):
        """Restore a snapshot taken with ``get_state`` from this world (same bodies). Every
        part is checked before anything is changed: a bad snapshot leaves the world as it was.
        (A snapshot without the contact solve's part, from an older version, restores the
        bodies and starts the next contact solve cold; one whose limit multipliers name rows
        that the limits' plan no longer has starts the limit rows cold.) Poses edited in the
        snapshot off the joints (further off than when it was taken) are placed on them at the
        next step, as ``Body.position`` places them."""
        if not isinstance(state, dict):
            raise ValueError(f"state must be a dict from World.get_state, got {type(state).__name__}")
        missing = [key for key in ("n_bodies", "n_joints", "x", "q") if key not in state]
        if missing:
            raise ValueError(f"state must be a snapshot from World.get_state; it has no "
                             f"{', '.join(repr(k) for k in missing)}")
        for key in ("n_bodies", "n_joints"):
            # (a "3" compared unequal to 3 and was refused as from a world of 3 bodies)
            count = state[key]
            if isinstance(count, (bool, np.bool_)) or not (
                    isinstance(count, (int, np.integer)) or (isinstance(count, np.ndarray)
                                                             and count.shape == ()
                                                             and count.dtype.kind in "iu")):
                raise ValueError(f"state[{key!r}] must be a whole number (the count "
                                 f"World.get_state wrote), got {count!r} "
                                 f"({type(count).__name__}); pass the snapshot as taken")
        if state["n_bodies"] != self._n - 1 or state["n_joints"] != len(self._joints):
            raise ValueError(f"state was taken from a world of {state['n_bodies']} bodies and "
                             f"{state['n_joints']} joints; this one has {self._n - 1} and "
                             f"{len(self._joints)}. {self._count_remedy(state)}")
        self._check_topology(state.get("topology"))
        arrays = {name: checked_array(state, name[1:], self._view(name).shape, required=True)
                  for name in self._STATE}
        norms = np.linalg.norm(arrays["_q"], axis=1)
        if np.abs(norms - 1.0).max(initial=0.0) > 1e-6:
            row = int(np.abs(norms - 1.0).argmax())
            raise ValueError(f"state['q'][{row}] must be a unit quaternion (w, x, y, z), its norm "
                             f"is {norms[row]:.6g}")
        reference = state.get("energy_reference")
        if reference is not None:
            reference = check_number("state['energy_reference']", reference)
        # the hinges' turn counts (older snapshots lack them), the joints' tension stiffness
        # of the last step, the contact solve's power vector
        angles = checked_array(state, "joint_angles", self._joint_angle.shape)
        joint_errors = checked_array(state, "joint_errors", (len(self._joints),))
        stiffness = checked_array(state, "stiffness", (self._n, 3, 3))
        held = _checked_velocity_metric(state.get("velocity_metric"), self._n, stiffness)
        norm_vector = checked_array(state, "norm_vector", (6 * self._n,))
        clock = _checked_clock(state, self.dt)
        settled = check_flag("state['solve_settled']", state.get("solve_settled", True))
        after_euler = check_flag("state['after_euler']", state.get("after_euler", False))
        joined = check_flag("state['joined_since_step']", state.get("joined_since_step", False))
        carried = checked_array(state, "carried_velocities", (self._n, 6))
        to_drift = checked_array(state, "to_drift", (self._n, 6))
        drift_only = checked_array(state, "drift_only", (self._n,))
        drift_step = _checked_drift_step(state.get("drift_step"))
        given = checked_array(state, "velocity_given", (self._n,))
        kicked = _checked_kicked_loads(state, self._n)
        contacts, warm = checked_contact_snapshot(state.get("contacts"), self._n - 1)
        shown = checked_report(state.get("shown_contacts"), self._n - 1, "state['shown_contacts']")
        impacts = (None if contacts is None     # (what a snapshot before shown_contacts had)
                   else checked_array(state, "impact_forces", (len(contacts),)))
        limit_warm = _checked_limit_multipliers(state.get("limit_multipliers"))
        manifolds = checked_manifolds(state.get("manifolds"), self._n - 1)
        asleep = sleeping.checked_snapshot(state.get("sleep"), self)
        wrenches = checked_wrenches(state, "joint_wrenches", len(self._joints))
        for name, arr in arrays.items():
            getattr(self, name)[: self._n] = arr
        if angles is not None:
            self._joint_angle[:] = angles
        sleeping.restore(self, asleep)
        if limit_warm is not None and limit_warm[0].max(initial=-1) >= self._limit_plan_size():
            # rows of another plan (the limits changed since it was taken): a warm start is
            # only a hint, so the next step starts the limit rows cold
            limit_warm = None
        self._time_origin, self._steps = clock
        self._state_changed()
        self._posed = False
        self._placed[:self._n] = False
        if joint_errors is not None and np.any(sleeping.joint_errors(self) > joint_errors):
            # poses edited off the joints (the snapshot's own errors are its state's): placed
            # on them at the next step as Body.position places them, not snapped back by the
            # step's stabilisation (a rod put 0.3 m off its hinge so left at 4.45 m/s, its
            # energy 9.8 -> 25.1 J; found by an API explorer)
            self._posed = True
            self._placed[:self._n] = np.isfinite(self._mass[:self._n])
        # the energy level a conservative system holds through fallback steps (step.advance)
        self._energy_reference = reference
        self._stiffness = stiffness
        self._velocity_metric = held
        self._after_euler = after_euler
        self._joined_since_step = joined      # (a joint added since: its velocities projected)
        # (a snapshot without them, from an older version: no change measured at the next step)
        self._carried[:self._n] = (carried if carried is not None else
                                   pipeline.kinematic_velocities(self, self._view("_v"),
                                                                 self._view("_w")))
        self._to_drift = None if to_drift is None else (to_drift[:, :3], to_drift[:, 3:])
        self._drift_only = None if drift_only is None else drift_only > 0
        self._drift_step = drift_step
        self._velocity_given = None if given is None else given > 0
        self._kicked_loads = kicked
        self._forget_contacts()
        if contacts is not None:
            self._contacts, self._warm = contacts, warm
            if impacts is not None:
                shown = dataclasses.replace(contacts, normal_force=contacts.normal_force + impacts)
        if shown is not None:
            self._show(shown)
        self._limit_warm = limit_warm
        self._manifolds = manifolds
        self._solver_memory.u = norm_vector
        self._solver_memory.settled = settled
        # the joints report the snapshot's forces until the next step (an older snapshot's
        # only its sleeping joints', which the sleep part holds)
        self._report = None
        self._wrench_cache = wrenches

    def _count_remedy(self, state) -> str:
        """What to do about a snapshot whose body or joint counts are not this world's: a
        snapshot restores the state of the bodies and joints it was taken with and adds or
        removes none."""
        bodies, joints = state["n_bodies"] - (self._n - 1), state["n_joints"] - len(self._joints)
        if bodies > 0:
            return ("Bodies removed since cannot be restored (one added again is another "
                    "body): take a new snapshot (get_state) of the world as it is")
        steps = [f"remove the {what} added since (world.{how})" for what, how, missing in
                 (("joints", "remove_joint", joints), ("bodies", "remove_body", bodies))
                 if missing < 0]
        if joints > 0:
            steps.insert(0, "add back the joints removed since (world.add_joint)")
        return (f"To restore it, {' and '.join(steps)}, or take a new snapshot (get_state) of "
                "the world as it is now")

    def _topology(self) -> dict:
        """What a snapshot must find again to fit: every body (which of the world's bodies it
        is, as added), its shape (kind and size) and whether it is static, and every joint's
        kind and the body rows it joins."""
        return {"body": self._view("_serial")[1:].copy(),
                "kind": self._view("_kind")[1:].copy(),
                "params": self._view("_params")[1:].copy(),
                "static": np.isinf(self._view("_mass")[1:]),
                "joint_kind": np.array([type(j).__name__ for j in self._joints], dtype=str),
                "joint_bodies": sleeping.joint_links(self).copy()}

    def _check_topology(self, saved):
        """ValueError unless a snapshot's topology (None: from an older version, unchecked)
        is this world's: a body removed and another added keep the counts, and a snapshot
        would put one body's state on another."""
        if saved is None:
            return
        mine = self._topology()
        try:
            # (a snapshot from before bodies had serials knows them by their shapes alone)
            other = {key: np.asarray(saved[key] if key in saved or key != "body" else value)
                     for key, value in mine.items()}
            if any(other[key].shape != value.shape for key, value in mine.items()):
                raise ValueError
            respawned = np.flatnonzero(other["body"] != mine["body"])
            bodies = np.flatnonzero((other["kind"] != mine["kind"])
                                    | (other["params"] != mine["params"]).any(axis=1)
                                    | (other["static"] != mine["static"]))
            joints = np.flatnonzero((other["joint_kind"] != mine["joint_kind"])
                                    | (other["joint_bodies"] != mine["joint_bodies"]).any(axis=1))
        except (KeyError, IndexError, TypeError, ValueError):
            raise ValueError("state['topology'] is damaged: it must be World.get_state's "
                             "record of the bodies' shapes and the joints") from None
        if respawned.size and not (bodies.size and bodies[0] <= respawned[0]):
            first = int(respawned[0])
            raise ValueError(f"state was taken from a world with other bodies: body {first} "
                             f"({self._handles[first + 1]!r}) was added since, in place of one "
                             "removed; a snapshot restores only the bodies it was taken from "
                             "(take a new one after removing and adding bodies)")
        if bodies.size:
            first = int(bodies[0])
            raise ValueError(f"state was taken from a world with other bodies: body {first} "
                             f"({self._handles[first + 1]!r}) had another shape then; a "
                             "snapshot restores only the world it was taken from")
        if joints.size:
            first = int(joints[0])
            raise ValueError(f"state was taken from a world with other joints: joint {first} "
                             f"({self._joints[first]!r}) was a {other['joint_kind'][first]} "
                             "between other bodies then")

    def _limit_tables(self):
        """The joints' limit and motor coordinates and their plan of rows
        (limits.CoordinateTables), made once per topology and retuned in place when a
        joint's settings change."""
        retuned, self._retuned = self._retuned, {}
        if self._coordinate_tables is not None and retuned:
            if not self._coordinate_tables.retune(retuned.items()):
                self._coordinate_tables = None
                self._limit_warm = None
        if self._coordinate_tables is None:
            from .limits import build_coordinate_tables
            self._coordinate_tables = build_coordinate_tables(sleeping.joints_with_rows(self))
        return self._coordinate_tables

    def _limit_plan_size(self) -> int:
        """How many rows the plan of the joints' limit and motor rows has (limits.bounded_plan,
        whose row indices the limits' warm start is kept by)."""
        plan = self._limit_tables().plan
        return 0 if plan is None else plan.entry.size

    def _joint_wrenches(self) -> np.ndarray:
        if self._wrench_cache is None:
            self._wrench_cache = self._with_held_wrenches(joint_wrenches(self))
        return self._wrench_cache

    def _with_held_wrenches(self, wrenches):
        """The joints' wrenches (J, WRENCH_WIDTH) of a step, where a sleeping island's
        joints (which make no rows) report the wrenches they had when it fell asleep."""
        resting = sleeping.resting_joints(self)
        if resting is not None and self._held_wrenches is not None:
            wrenches[resting] = self._held_wrenches[resting]
        return wrenches

    def __setattr__(self, name, value):
        if name[0] != "_":          # (the step sets only private attributes: no check)
            check_known_attribute(self, name)
        object.__setattr__(self, name, value)

    def __repr__(self):
        return (f"<World t={self.time:.4g} s, {self._n - 1} bodies, {len(self._joints)} joints, "
                f"dt={self.dt:g}, {self.integrator}>")


def _checked_velocity_metric(held, n, stiffness):
    """A snapshot's velocity_metric, (K (n, 3, 3), h) or None (older snapshots: None, the true
    metric), checked; K is the snapshot's stiffness itself where equal to it, as the step
    that took it held them (step._same_metric compares them by identity)."""
    if held is None:
        return None
    if not (isinstance(held, (tuple, list)) and len(held) == 2):
        raise ValueError(f"state['velocity_metric'] must be None or the pair (K, h) "
                         f"World.get_state wrote, got {held!r}")
    K = checked_array({"velocity_metric": held[0]}, "velocity_metric", (n, 3, 3))
    h = check_positive("state['velocity_metric'][1]", held[1])
    if stiffness is not None and np.array_equal(K, stiffness):
        K = stiffness
    return K, h


def _checked_kicked_loads(state, n):
    """A snapshot's record of the user loads of the last sub-step's second half kick
    (step.KickedLoads), or None (none, or an older snapshot: the next step takes the
    velocities as they are), checked."""
    loads = checked_array(state, "kicked_loads", (n, 6))
    bodies = checked_array(state, "kicked_bodies", (n,))
    step = state.get("kicked_step")
    if loads is None or bodies is None or step is None:
        return None
    force, torque = loads[:, :3], loads[:, 3:]
    return KickedLoads(force if force.any() else None,
                       torque if torque.any() else None,
                       check_positive("state['kicked_step']", step), bodies > 0)


def _checked_drift_step(step):
    """A snapshot's drift_step (s, the sub-step its drift velocities are of) or None (older
    snapshots, or before the first step: taken as the next step's own), checked."""
    return None if step is None else check_positive("state['drift_step']", step)


def _checked_clock(state, dt):
    """(time origin, steps) of a snapshot: its "clock" when that still gives its "time" (a
    user may have set only the time), else (time, 0), as for a snapshot without a clock (from
    an older version); ValueError for a time that is not a finite number or a clock that is
    not (a finite origin in s, a whole number of steps >= 0)."""
    try:
        time = float(state["time"])
    except (KeyError, TypeError, ValueError):
        raise ValueError("state['time'] must be a number (s)") from None
    if not np.isfinite(time) or time < 0:
        raise ValueError(f"state['time'] must be a finite time >= 0 (s), got {time}")
    clock = state.get("clock")
    if clock is None:
        return time, 0
    try:
        origin, steps = clock
        origin, whole = float(origin), int(steps)
    except (TypeError, ValueError, OverflowError):
        origin, whole = np.nan, -1
    if not (np.isfinite(origin) and whole >= 0 and whole == steps):
        raise ValueError("state['clock'] must be (time origin in s, whole steps >= 0), got "
                         f"{clock!r}")
    return (origin, whole) if origin + whole * dt == time else (time, 0)


def _checked_limit_multipliers(saved):
    """(plan rows, multipliers) from a snapshot's "limit_multipliers", or None."""
    if saved is None:
        return None
    try:
        rows, lam = np.array(saved[0], dtype=np.intp), np.array(saved[1], dtype=float)
    except (IndexError, KeyError, TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"state['limit_multipliers'] is malformed: {exc}") from None
    check_integers("state['limit_multipliers'][0] (the plan rows)", saved[0])
    if (rows.ndim != 1 or lam.shape != rows.shape or np.any(rows < 0)
            or not np.all(np.isfinite(lam))):
        raise ValueError("state['limit_multipliers'] must be (rows >= 0, finite multipliers) "
                         "of one length")
    return rows, lam


def _named(items, name, what):
    """The one of ``items`` (bodies or joints) whose name is ``name``."""
    found = [item for item in items if item.name == name]
    if len(found) == 1:
        return found[0]
    if found:
        plural = "bodies" if what == "body" else "joints"
        raise ValueError(f"{len(found)} {plural} are called "
                         f"{name!r} ({found}); give them names of their own, or take one by "
                         "its index")
    names = sorted({item.name for item in items if item.name})
    close = close_names(name, names)
    hint = (f"; did you mean {' or '.join(map(repr, close))}?" if close
            else f"; the names are {listed(map(repr, names))}" if names
            else "; none has a name (add_body/Joint(..., name=...))")
    raise ValueError(f"no {what} is called {name!r}{hint}")
