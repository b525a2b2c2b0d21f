"""The step pipeline: plain functions over the world's arrays.

One symplectic sub-step of size h (``symplectic_substep``, RATTLE form):
  1. applied_wrench     gravity, user loads and damping (N, N m, world frame)
  2. rows               every joint primitive table writes C, Ja, Jb, Jdot u (one call a kind)
  3. bounded rows       contacts, limits and motors, impacts resolved first (``unilateral``)
  4. multipliers        the seed equation of 003_* for the joints alone (``seed_multipliers``),
                        or joints and bounded rows in one bounded solve
  5. kick, drift        half kick; SHAKE puts the new positions on the joints
                        (``correct_to_manifold``); each body turns by its torque-free motion
                        (``rotation``); half kick
  6. project, report    velocities onto J u = 0; lambda and its rows kept for joint forces

"rk4" instead integrates udot = M^-1 (Phi + J^T lambda(x, u)) with classical Runge-Kutta.
No stage loops over bodies or joints in Python.
"""
from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .assembly import Pattern, Scatter, inverse_mass_times, onto_rows
from .blas_threads import one_blas_thread
from .collision.broadphase import PairCache
from .collision.internal_faces import carry_faces
from .collision.turning import shape_turning
from .shapes import BOX, SPHERE
from .contacts import ContactReport, detect, excluded_pairs, kinematic, report as contact_report
from .contact_rows import MAX_PUSH_OUT
from .jammed_push import progressing_push
from .continuous import stopped_at_first_touch
from .energy import dissipative_bound, kinetic_energy, restore_energy, state_energy
from .errors import StepError
from .linsolve import SingularSystemError
from .placement import SHAKE_TRUST, Alignments, held_at_limits, newton_move, placed_on_joints
from .limits import AXIS_SLOT, DRIVE, UPPER, WRENCH_WIDTH
from .motor_hold import held_motors, held_positions, held_velocities
from .math3d import (cross, einsum, nonzero_rows, quat_multiply, quat_to_matrix, rotate_quat,
                     turn_quat)
from .rotation import (FreeFlows, body_inertia, body_inverse_inertia, end_spin, free_rotation,
                       inertia_times, gyroscopic_torque_explicit, midpoint_rotation,
                       world_inverse_inertia)
from .sleeping import joint_links, joints_with_rows, labels_reached, linked_labels
from .rows import (Kinematics, PrimitiveTable, Rows, build_tables, evaluate_tables,
                   velocity_products)
from .stiffness import (STIFFNESS_DRIFT, anchor_sides, augmented_inverse_inertia,
                        stiffness_carries, unresolved_stiffness)
from .top_contacts import midway_targets
from .unilateral import (Unilateral, bounded_impulse, bounded_multipliers, kept_targets,
                         push_velocities, resolve_impacts, unilateral_rows, with_overrun_limits)
from .validation import shown


def _queued(world) -> str:
    """The end of a StepError's message: the forces and torques applied for the failed step
    are part of the world left unchanged, and the next step would fail again with them (said
    only when there are some: a velocity set by hand has none to drop)."""
    n = world._n
    if not (world._force[:n].any() or world._torque[:n].any()):
        return ""
    return "; the forces applied for it stay queued: world.clear_forces() drops them"


def _where_singular(world, model, exc) -> str:
    """Whom the row where a factorisation broke down belongs to: the joint, for the joints'
    own matrix (its rows are the model's), else the two bodies the row acts on; "" when the
    factoriser did not say (SuperLU)."""
    if not isinstance(exc, SingularSystemError) or exc.bodies is None:
        return ""
    if exc.pattern is model.pattern:
        return f" at a row of {world._joints[int(model.owner[exc.row])]!r}"
    a, b = (world._handles[r] for r in exc.bodies)
    return f" at a row between {'the world' if a is None else repr(a)} and {b!r}"


class StartCache(NamedTuple):
    """What the velocity projection at the end of a sub-step computed at its positions, which
    are where the next sub-step starts: rotations, inverse inertias, the factorised A (with the
    inverse inertias it was made with), the joint rows."""
    x: np.ndarray
    q: np.ndarray
    R: np.ndarray
    Iinv: np.ndarray
    factor: object
    cfm: float
    stiffness: object = None  # the tension stiffness in the factorised A, if any
    metric: object = None     # the inverse inertias of the factorised A (with that stiffness)
    h: float = 0.0            # the sub-step that stiffness was weighed for
    rows: object = None       # the joint rows there (C and J; Jdu is for other velocities)


@dataclass
class Model:
    """What a step needs that only changes with the topology."""
    tables: list[PrimitiveTable]
    a: np.ndarray            # (m,) body row of each constraint row's side a
    b: np.ndarray
    owner: np.ndarray        # (m,) joint index of each row
    pattern: Pattern | None
    scatter: Scatter | None
    dynamic: np.ndarray | slice  # rows of bodies with finite mass (a slice when contiguous)
    joint_b: np.ndarray      # (nj,) body row of each joint's body_b
    joint_lb: np.ndarray     # (nj, 3) anchor on body_b, body_b frame
    collides: bool           # at least two bodies have shapes
    anchor_sides: tuple | None  # see anchor_sides()
    principal: np.ndarray | None  # (N, 3) body-frame inertia diagonals, if all are diagonal
    principal_inv: np.ndarray | None  # (N, 3) and those of the inverse inertias
    spinning: np.ndarray | slice  # dynamic bodies with an anisotropic inertia (see _spinning)
    tumbling: np.ndarray | slice  # those of them without joints (rotation.midpoint_rotation)
    flows: FreeFlows         # how each of them turns in the drift (rotation.free_rotation)
    pair_cache: PairCache    # the broadphase candidates of these bodies, kept between steps
    jointed: np.ndarray      # the body rows that joint rows act on
    mechanism: np.ndarray    # (N,) label: dynamic bodies linked by joint rows share one
    turning_reach: np.ndarray  # (N,) m^2: largest principal moment over mass (sleeping)
    alignments: Alignments | None  # the axes and frames the joints hold (placement)
    # what the step reads of the masses every step, made once with them (every change of a
    # mass, inertia, sleep or body compiles the model again): gravity's kg and the
    # kinetic energy bound's (``_energy_overflows``). From a 55-box pyramid's steps these
    # took a dozen numpy calls each, the same numbers every step.
    dynamic_mass: np.ndarray | None = None   # (N,) kg, 0 for static (and sleeping) bodies
    dynamic_mass_sum: float = 0.0            # kg, their sum (``unilateral._weight``)
    spin_weight: np.ndarray | None = None    # (dynamic,) kg m^2: tr(I) of the dynamic bodies
    # kg + kg m^2: the sums of both (inf: not known), by which the bound is known to be far
    # from overflowing without taking it (``_energy_overflows``)
    energy_weight: float = np.inf

    @functools.cached_property
    def m(self) -> int:
        """Joint rows (made once: a step asks about ten times)."""
        return self.a.shape[0]


class Kept(NamedTuple):
    """What holds of a compiled Model after bodies on no joint were appended to its world or
    removed from it, no joint's body changing row (``World._body_appended``,
    ``World.remove_body``): the joints' part of ``model`` (its tables, their rows' bodies and
    sparsity), the broadphase's last ``sweep`` (collision.broadphase.Sweep, or None) and the
    ``mechanism`` labels of the bodies it had, as their rows are now, and the internal
    ``faces`` of its static boxes once bodies were removed (collision.internal_faces.Faces,
    found again around the removed ones; None: the model's own; False: to be found again in
    full)."""
    model: Model
    sweep: object
    mechanism: np.ndarray
    faces: object = None

    @staticmethod
    def of(model: Model) -> "Kept":
        return Kept(model, model.pair_cache.sweep, model.mechanism)

    def without_rows(self, removed) -> "Kept":
        """What is kept once the bodies ``removed`` (removal.RemovedRows; on no joint) are
        gone and the bodies after them have moved down."""
        mechanism = self.mechanism
        had = removed.before(mechanism.shape[0])
        if had is not None:
            # (each one's label is its own; linked_labels numbers the groups by their first
            # row, so the others' close up over the gaps)
            labels = np.sort(mechanism.take(had.rows))
            mechanism = np.delete(mechanism, had.rows)
            mechanism -= labels.searchsorted(mechanism)
        faces = self.model.pair_cache.faces if self.faces is None else self.faces
        if faces is not None and faces is not False:
            faces = faces.without_rows(removed)
            faces = False if faces is None else faces
        return Kept(self.model, None if self.sweep is None else self.sweep.without_rows(removed),
                    mechanism, faces)


def compile_model(world, kept: Kept | None = None) -> Model:
    """Flatten the joints into primitive tables and cache the sparsity of A.

    kept: what holds of the model before bodies on no joint were appended or removed (see
    ``Kept``): the joints' part is taken from it and only what is per body is made again (a
    bullet spawned each step no longer rebuilt every joint table, the bodies' mechanism
    labels and the broadphase's sweep of all pairs)."""
    n = world._n
    pair_cache = PairCache(world._kind[:n], world._params[:n], excluded_pairs(world))
    pair_cache.static_boxes = np.flatnonzero((world._kind[:n] == BOX)
                                             & (world._inv_mass[:n] == 0))
    if kept is None:
        tables, a, b, owner, pattern, alignments = _joint_part(world)
        joint_b = joint_links(world)[:, 1].copy()
        joint_lb = np.array([j._lb for j in world._joints]).reshape(-1, 3)
        jointed = np.union1d(a, b)
        mechanism = _mechanisms(a, b, world._inv_mass[:n])
    else:
        before = kept.model
        tables, a, b, owner, pattern = (before.tables, before.a, before.b, before.owner,
                                        before.pattern)
        alignments, joint_b, joint_lb = before.alignments, before.joint_b, before.joint_lb
        jointed = before.jointed
        # (the static boxes grown across internal faces, then the sweep made of them)
        carry_faces(pair_cache, before.pair_cache, world._kind[:n], world._params[:n],
                    kept.faces)
        pair_cache.carrying(kept.sweep)
        # (an appended body is linked to none: a label of its own after the others')
        known = kept.mechanism
        mechanism = np.concatenate([known, known.max(initial=-1) + 1
                                    + np.arange(n - known.shape[0], dtype=known.dtype)])
    inv_mass = world._inv_mass[:n]
    scatter = Scatter(a, b, n) if a.size else None
    shaped = int(np.count_nonzero(world._kind[:n] >= 0))
    dynamic = _slice_if_contiguous(np.flatnonzero(inv_mass > 0))
    spinning = _spinning(world._inertia[:n], inv_mass > 0)
    tumbling = _tumbling(spinning, jointed, n)
    principal = principal_inv = None
    if _is_diagonal(world._inertia[:n]) and _is_diagonal(world._inv_inertia[:n]):
        principal = einsum("nii->ni", world._inertia[:n]).copy()
        principal_inv = einsum("nii->ni", world._inv_inertia[:n]).copy()
    # (an anchor beyond 1e154 m, accepted as finite, overflows its length here, and that
    # times the world frame's zero reach is a NaN; the step fails on that anchor with its
    # own StepError, without numpy's warnings first)
    with np.errstate(over="ignore", invalid="ignore"):
        sides = anchor_sides(tables, world._inv_inertia[:n])
    mass, moves = world._mass[:n], inv_mass > 0
    mass_sum = float(mass.sum(where=moves))
    spin_weight = np.trace(world._inertia[:n][dynamic], axis1=1, axis2=2)
    return Model(tables, a, b, owner, pattern, scatter, dynamic, joint_b, joint_lb,
                 shaped >= 2, sides,
                 principal, principal_inv, spinning, tumbling,
                 FreeFlows(principal if principal is not None else world._inertia[:n],
                           spinning, tumbling),
                 pair_cache, jointed, mechanism,
                 (principal if principal is not None
                  else np.linalg.eigvalsh(world._inertia[:n])).max(axis=1) * inv_mass,
                 alignments,
                 np.where(moves, mass, 0.0), mass_sum, spin_weight,
                 mass_sum + float(spin_weight.sum()))


def _joint_part(world):
    """The joints' primitive tables, the body rows (a, b) and joint (owner) of each of their
    rows, the sparsity of their A (None without rows) and their Alignments."""
    instances = defaultdict(list)
    made = world._joint_instances     # joint: ((index, row a, row b), its instances)
    with_rows = joints_with_rows(world)
    for index, joint in with_rows:
        key = (index, joint._rows_a, joint.body_b.row)
        known = made.get(joint)
        if known is None or known[0] != key:
            known = made[joint] = (key, joint._instances(index))
        for kind, inst in known[1]:
            instances[kind].append(inst)
    tables = build_tables(instances)
    n = world._n
    a, b = tables.a, tables.b           # the bodies of each row (built with the tables)
    owner = np.concatenate([t.row_owner for t in tables] or [[]]).astype(np.intp)
    pattern = Pattern(a, b, world._inv_mass[:n] > 0, n) if a.size else None
    return tables, a, b, owner, pattern, Alignments.of(with_rows)


def _slice_if_contiguous(rows):
    """Row indices (k,) as a slice when they are non-empty and contiguous (indexing with it
    gives views instead of copies), else as they are."""
    if rows.size and rows[-1] - rows[0] + 1 == rows.size:
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


_OFF_DIAGONAL = [1, 2, 3, 5, 6, 7]      # the off-diagonal entries of a flattened 3x3


def _is_diagonal(matrices):
    return not np.any(matrices.reshape(-1, 9)[:, _OFF_DIAGONAL])


def _spinning(inertia, dynamic):
    """The dynamic bodies whose body-frame inertia (N, 3, 3) is not a multiple of the identity
    (a slice when contiguous). Only their torque-free motion turns the angular velocity and
    only they feel a gyroscopic torque; for the others (isotropic bodies: spheres, cubes)
    both are exactly zero, and the step leaves them out of that work."""
    flat = inertia.reshape(-1, 9)
    isotropic = ((flat[:, 0] == flat[:, 4]) & (flat[:, 0] == flat[:, 8])
                 & ~np.any(flat[:, _OFF_DIAGONAL], axis=1))
    rows = np.flatnonzero(dynamic & ~isotropic)
    return _slice_if_contiguous(rows) if rows.size else slice(0, 0)


def _mechanisms(a, b, inv_mass):
    """(N,) labels: dynamic bodies linked by joint rows (their body rows a, b (m,)) share
    one; every other body has one of its own."""
    linked = (inv_mass.take(a) > 0) & (inv_mass.take(b) > 0)
    return linked_labels(a[linked], b[linked], inv_mass.shape[0])


def _tumbling(spinning, jointed, n):
    """The bodies of ``spinning`` (slice or rows) that no joint row acts on (``jointed``, rows),
    as a slice when contiguous."""
    free = np.zeros(n, dtype=bool)
    free[spinning] = True
    free[jointed] = False
    rows = np.flatnonzero(free)
    return _slice_if_contiguous(rows) if rows.size else slice(0, 0)


# -- stage 1: applied wrench ---------------------------------------------------------------
def applied_wrench(world, model, R, v, w, damped=False):
    """External force (N, 3) and torque (N, 3), world frame: gravity, user loads and the
    gyroscopic torque -w x I w, with ``damped`` the bodies' viscous damping too (the
    acceleration-level equation; the symplectic step damps the velocities it ends with,
    ``damped_velocities``); and the torque the kicks take when the gyroscopic torque is left
    to the drift (``world.gyroscopic == "implicit"``): the loads'."""
    n = world._n
    F = world._force[:n] + model.dynamic_mass[:, None] * world._gravity
    T_loads = world._torque[:n]
    damping = _damping(world) if damped else None
    if damping is not None:
        c, c_spin = damping
        spin = einsum("nij,nj->ni", R, inertia_times(body_inertia(world, model),
                                                      einsum("nji,nj->ni", R, w)))
        F = F - (c * model.dynamic_mass)[:, None] * v
        T_loads = T_loads - c_spin[:, None] * spin
    return (F, *_with_gyroscopic(world, model, R, w, T_loads))


def _with_gyroscopic(world, model, R, w, T_loads):
    """The torque (N, 3) of the loads T_loads with the gyroscopic torque -w x I w at
    angular velocities w, and what the kicks take of it (``applied_wrench``)."""
    T = T_loads + gyroscopic_torque_explicit(R, body_inertia(world, model), w, model.spinning)
    return T, (T_loads if world.gyroscopic == "implicit" else T)


def _damping(world):
    """The dynamic bodies' linear and angular damping (n,) each, 1/s (0 for the others), or
    None when no body has any."""
    n = world._n
    c, c_spin = world._linear_damping[:n], world._angular_damping[:n]
    if not (c.any() or c_spin.any()):
        return None
    dynamic = world._inv_mass[:n] > 0
    return np.where(dynamic, c, 0.0), np.where(dynamic, c_spin, 0.0)


def damped_velocities(world, v, w, h):
    """The velocities (N, 3) the drift moves the bodies with, damped: v / (1 + c h) and
    w / (1 + c' h) (c, c' each body's linear and angular damping, 1/s), the step of
    dv/dt = -c v taken implicitly after the kick of the loads, contacts and joints (SHAKE and
    the velocity projection then keep the joints). Stable for any c h; a body at rest feels
    nothing, so the forces that hold it are its weight's (damping the velocity the loads
    alone would give took part of the weight off the contacts and joints: a box resting on
    the ground with c = 10 at dt 1/60 pressed with 16.8 N of its 19.6). A body falling freely
    ends at g (1 + c h / 2) / c (its kick is split around the drift), one touching something
    at g / c."""
    damping = _damping(world)
    if damping is None:
        return v, w
    c, c_spin = damping
    return v / (1.0 + c * h)[:, None], w / (1.0 + c_spin * h)[:, None]


class _Kick(NamedTuple):
    """The metric a step with bounded rows kicks in, and the velocities it kicks from: inverse
    masses (N,), world inverse inertias (N, 3, 3), the joints' factorisation of A with them
    (None without joints), v and w (N, 3); ``damped``: the bodies' viscous damping is in them
    (``_damped_kick``), so the velocities after the kick are not damped again."""
    inv_mass: np.ndarray
    Iinv: np.ndarray
    factor: object
    v: np.ndarray
    w: np.ndarray
    damped: bool


def _damped_kick(world, model, rows, inv_mass, Iinv, factor, v, w, h, rescaled=False):
    """The kick of a step with bounded rows with the bodies' viscous damping in it (_Kick):
    dv/dt = -c v taken implicitly with the loads, joints and bounded rows,
    (1 + c h) M v+ = M v + h (Phi + J^T lambda), which is a kick from v / (1 + c h) with the
    masses and inertias (1 + c h) M (c, c' each body's linear and angular damping, 1/s).

    So the rows meet their targets with the velocities the bodies end with: a velocity motor
    holds its speed against its own body's damping, pushing c I w (damped after the solve,
    a wheel with c' = 20 driven at 2 rad/s ran at 2 / (1 + c' h): 1.85 rad/s at dt 1/240,
    1.50 at 1/60). A resting body feels no damping, so what holds it still carries its
    weight, and a body sliding on the ground ends at g sin(slope) / c, as before. The cost:
    one factorisation of the joints' A more in steps where a damped body has joints.
    rescaled: inv_mass and Iinv are not those ``factor`` was made with (``_retimed_kick``),
    which is then made again with them."""
    damping = _damping(world)
    if damping is None:
        if rescaled and factor is not None:
            factor = model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
        return _Kick(inv_mass, Iinv, factor, v, w, damped=False)
    c, c_spin = damping
    lin, spin = 1.0 / (1.0 + c * h), 1.0 / (1.0 + c_spin * h)
    inv_mass, Iinv = inv_mass * lin, Iinv * spin[:, None, None]
    if factor is not None:
        factor = model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
    return _Kick(inv_mass, Iinv, factor, v * lin[:, None], w * spin[:, None], damped=True)


# -- stage 3: the seed equation --------------------------------------------------------------
def seed_rhs(world, model, rows: Rows, free, v, w, opened=None):
    """The seed equation's right-hand side -(Jdot u + J M^-1 Phi + k C + d J u) (m,) of the
    joint rows: what J M^-1 J^T lambda must equal (m/s^2, rad/s^2). free: M^-1 Phi
    (``assembly.inverse_mass_times`` of the applied loads).

    The part of J u that kinematic bodies' velocities, changed by the user since the last
    step (``World._carrier_change``), open up is met within this sub-step (1/h for d): it
    is the acceleration they carry their joints with. (Stabilised as a drift, half of it
    came in the velocity projection the report leaves out: a 2 kg load on a lift set
    accelerating at 2 m/s^2 reported 21.62 N, not m (g + a) = 23.62 N.) So is the J u of
    the rows ``opened`` ((m,) bool, or None: ``_opened_rows``) that the user's velocities
    set on their bodies open (a strike: the joint's share of it is its impulse over h; it
    was reported as half of it on a free hinge, -0.2497 N s for -0.4994, and as twice it
    with a motor holding the hinge, +1.998 N s for +1.0)."""
    k, d = world.baumgarte
    J, velocity = rows.blocks, model.scatter.velocity_of
    Ju = velocity(J, v, w)
    rhs = -(rows.Jdu + velocity(J, *free) + k * rows.C + d * Ju)
    if opened is not None:
        rhs -= (world.substeps / world.dt - d) * np.where(opened, Ju, 0.0)
    change = world._carrier_change
    if change is not None:
        rhs -= (world.substeps / world.dt - d) * velocity(J, *change)
    return rhs


def _aimed_torque(model, T, T_kick):
    """The torques (N, 3) the bounded rows of a step aim with: the seed's T, but the kick's
    T_kick for the bodies without joints (``model.tumbling``), which the drift's
    torque-free flow turns by the gyroscopic torque that T_kick leaves out
    (``gyroscopic="implicit"``); so they aim at the velocities those bodies move with. (No
    joint row acts on them: the joints' right-hand side takes the same accelerations.)

    With the explicit gyroscopic torque in their aim, a thin stick (r 1 cm, 0.6 m) lying
    along a wall, spinning about its own axis at 75 rad/s and tilting at 9 rad/s, its end
    8 mm into the wall and closing at 1.7 m/s, was seen by its contact's row as leaving at
    0.7 m/s: the torque turned the tilt's velocity by h w_axial = 1.26 rad a step, which the
    flow does not (it keeps the tilt's momentum). The row pushed nothing, and the end went
    on into the wall and out of its far side (3 of 27 sticks thrown at a 5 cm wall at
    dt 1/60 went through it). Jointed bodies keep the seed's torque, with which their
    joints' rows aim in the same solve: aimed with the kick's, the whip of two spinning
    cylinders on a long rod struck by the ground (test_dynamics, seed 3) failed with a
    StepError at 0.41 s instead of holding for its 140 steps. (The contacts of free tops of
    revolution also aim at the drift's midpoint: ``top_contacts.midway_targets``.)"""
    aimed = T.copy()
    aimed[model.tumbling] = T_kick[model.tumbling]
    return aimed


def seed_multipliers(world, model, rows: Rows, factor, inv_mass, Iinv, F, T, v, w,
                     opened=None):
    """Solve -J M^-1 J^T lambda = Jdot u + J M^-1 Phi + k C + d J u for lambda (m,), N or N m,
    given the factorisation of J M^-1 J^T + cfm (``opened``: see seed_rhs)."""
    free = inverse_mass_times(inv_mass, Iinv, F, T)
    return model.pattern.factorizer.solve(factor, seed_rhs(world, model, rows, free, v, w,
                                                           opened))


def _opened_rows(rows, given, inv_mass):
    """(m,) bool, or None for none: the joint rows on a dynamic body whose velocity the user
    set since the last step (``given`` (N,) bool or None: World._velocity_set's record)."""
    if rows is None or given is None or given.shape[0] != inv_mass.shape[0]:
        return None
    set_here = given & (inv_mass > 0)
    if not set_here.any():
        return None
    opened = set_here.take(rows.a) | set_here.take(rows.b)
    return opened if opened.any() else None


def generalized_acceleration(model, rows, lam, inv_mass, Iinv, F, T):
    """M^-1 (Phi + J^T lambda): linear (N, 3) and angular (N, 3) accelerations."""
    if rows is not None:
        G = model.scatter.forces_of(rows.blocks, lam)
        F = F + G[:, :3]
        T = T + G[:, 3:]
    return inverse_mass_times(inv_mass, Iinv, F, T)


# -- stage 5: post-stabilisation -------------------------------------------------------------
def correct_to_manifold(world, model, rows, factor, x1, q1, v_half, w_half, inv_mass, Iinv, h,
                        drift=None):
    """SHAKE: correct lambda so that the positions reached after the half kick and the drift
    satisfy C = 0. A correction dlambda moves the new positions by h^2/2 M^-1 J(x)^T dlambda
    (rotations applied on the left), so C(x+) changes by h^2/2 J(x+) M^-1 J(x)^T dlambda.
    The first iterations approximate that matrix by the seed's factorised J M^-1 J^T; if they
    stall, the rest are exact Newton steps with SuperLU. The half-step velocities are read
    back from the final positions. x1, q1 are the positions of the plain drift; ``drift``,
    if given, makes the orientations of a sum of rotational corrections (N, 3) from the
    drift of the spin they give (see _corrected_drift), instead of turning q1 by them.
    Returns (best |C|, x+, q+, v half, w half)."""
    fac = model.pattern.factorizer
    total = untouched = (0.0, 0.0)    # sum of the corrections, linear and angular
    best, restart, JM_start = None, None, None
    newton = world.shake_quasi_iterations == 0
    direction, fraction = None, 1.0
    for _ in range(world.shake_iterations):
        # (Newton's steps take C and J; neither wants Jdot u)
        k1 = Kinematics(x1, quat_to_matrix(q1), v_half, w_half, velocity_terms=False)
        rows1 = evaluate_tables(model.tables, k1) if newton else None
        C = rows1.C if newton else evaluate_tables(model.tables, k1, c_only=True)
        err = np.abs(C).max()
        if world._debug is not None:
            world._debug.append((err, newton, fraction))
        if best is None or err < best[0]:
            best, fraction = (err, x1, q1, total), 1.0
            if err <= world.position_tolerance:
                break
        else:                                   # no progress: backtrack along the last step
            fraction *= 0.25
            if fraction < 0.01:
                if newton or not world.shake_newton:
                    break
                newton, fraction = True, 1.0    # quasi-Newton stalled: exact Newton
                x1, q1, total = best[1], best[2], best[3]
                restart, best = best, None
                continue
            x1 = best[1] + fraction * direction[0]
            total = (best[3][0] + fraction * direction[0], best[3][1] + fraction * direction[1])
            q1 = (rotate_quat(best[2], fraction * direction[1]) if drift is None
                  else drift(total[1]))
            continue
        if newton:
            if JM_start is None:
                _, JM_start = model.pattern.sides(rows.Ja, rows.Jb, inv_mass, Iinv)
            J1 = np.stack([rows1.Ja, rows1.Jb], axis=1).reshape(-1, 6)
            lu = splu_or_none(model.pattern.cross_matrix(J1, JM_start, world.cfm))
            if lu is None:
                break
            dlam = -lu.solve(C)
        else:
            dlam = -fac.solve(factor, C)
        direction = model.scatter.response(rows.blocks, dlam, inv_mass, Iinv)
        total = (total[0] + direction[0], total[1] + direction[1])
        x1 = x1 + direction[0]
        q1 = rotate_quat(q1, direction[1]) if drift is None else drift(total[1])
        if not newton and err <= SHAKE_TRUST * world.position_tolerance:
            # one more quasi-Newton step from this close contracts the error by the turn
            # within h (~0.01): take it without measuring it again
            best = (err, x1, q1, total)
            break
    err, x1, q1, total = best if best is not None else restart
    if total is untouched:          # the drift already met the joints: nothing to correct
        return err, x1, q1, v_half, w_half
    # the velocities change by exactly M^-1 J^T (sum of corrections) / h, so internal forces
    # keep linear and angular momentum
    spin = w_half + total[1] / h if drift is None else drift.spin(total[1])
    return err, x1, q1, v_half + total[0] / h, spin


# A jointed body turning more than this in a step (rad) has SHAKE's corrections taken into
# its drift (_corrected_drift).
FAST_TURN = 0.05


def _corrected_drift(world, model, q, R, inertia, w_half, rotation, h):
    """The orientations (N, 4) at the end of the drift of the spin w_half + theta / h, as a
    function of SHAKE's summed rotational corrections theta (N, 3) (``_CorrectedDrift``).

    Turning the drift's orientations by the corrections, exp(theta) exp(h w) q, differs from
    the drift of the corrected spin at second order (their commutator), and for a body that
    turns fast within a step the difference acts as a torque that no load applies: a top
    spinning at 60 rad/s on a ball joint at dt 1/240 gained 0.06 J in 4 s (+2.2 % in 30 s)
    and its nutation fell 3.5 degrees behind. Slower bodies keep the cheaper turn."""
    if rotation is None:                     # (explicit gyroscopic torque: a plain turn)
        return _CorrectedDrift(q, R, inertia, w_half, None, h, None)
    return _CorrectedDrift(q, R, inertia, w_half, rotation, h, model.flows)


class _CorrectedDrift:
    """``_corrected_drift``'s function theta -> orientations (N, 4), which keeps the last
    drift's correction, spin and flow (``free_rotation``'s): the correction SHAKE keeps is
    most often the last it drifted with, and the step then wants that spin (``spin``) and its
    flow (``flow_of``) again, the same arrays (a 10-ragdoll pile: one free_rotation of the
    ~7 a step less)."""

    def __init__(self, q, R, inertia, w_half, rotation, h, flows):
        self.q, self.R, self.inertia, self.w_half, self.h = q, R, inertia, w_half, h
        self.rotation, self.flows = rotation, flows     # (rotation None: a plain turn)
        self._last = None                   # (theta, spin, flow) of the last drift

    def __call__(self, theta):
        if self.rotation is None:
            return rotate_quat(self.q, self.h * self.w_half + theta)
        w = self.w_half + theta / self.h
        flow = free_rotation(self.R, self.inertia, w, self.h, self.flows, near=self.rotation)
        self._last = (theta, w, flow)
        return turn_quat(self.q, midpoint_rotation(self.R, w, flow, self.h, self.inertia,
                                                   self.flows))

    def spin(self, theta):
        """w_half + theta / h (N, 3): the last drift's own array when theta is its
        correction (the same object)."""
        last = self._last
        if last is not None and last[0] is theta:
            return last[1]
        return self.w_half + theta / self.h

    def flow_of(self, w):
        """The flow (``free_rotation``'s, near the plain drift's) of the spin w when w is the
        last drift's own array (``spin``), else None."""
        last = self._last
        return last[2] if last is not None and last[1] is w else None


def splu_or_none(matrix):
    from scipy.sparse.linalg import splu
    try:
        return splu(matrix)
    except RuntimeError:
        return None


def project_positions(world, model, x, q, v, w):
    """Newton projection of positions onto C = 0 along J M^-1 J^T at the current iterate
    (the M-closest point on the constraint manifold; Cline and Pai's post-stabilisation).
    Stops when the error stops falling; returns (largest |C|, x, q)."""
    n = world._n
    inv_mass = world._inv_mass[:n]
    best = (np.inf, x, q)
    for _ in range(world.position_iterations):
        R = quat_to_matrix(q)
        rows = evaluate_tables(model.tables, Kinematics(x, R, v, w, velocity_terms=False))
        err = np.max(np.abs(rows.C))
        if not err < best[0]:
            break
        best = (err, x, q)
        if err <= world.position_tolerance:
            break
        dx, dtheta = newton_move(world, model, R, rows, inv_mass)
        x, q = x + dx, rotate_quat(q, dtheta)
    return best


def inverse_inertia_at(world, model, R, stiffness=None, h=0.0):
    """The world inverse inertias (N, 3, 3) at the rotations R: the true ones (stiffness
    None), or in the metric of the joints' ``stiffness`` over a step of h (the kick's
    augmented inertia, ``augmented_inverse_inertia``); static bodies' zero."""
    if stiffness is None:
        return world_inverse_inertia(R, body_inverse_inertia(world, model), model.dynamic)
    return augmented_inverse_inertia(R, body_inertia(world, model), stiffness, h,
                                     model.dynamic)


def project_velocities(world, model, x, q, v, w, stiffness=None, h=0.0, R=None,
                       Iinv_true=None, Iinv_stiff=None):
    """RATTLE's second half: the M-orthogonal projection of u onto J(x) u = 0 (removes only
    the velocity that violates the joints, so it never adds kinetic energy). With the joints'
    ``stiffness`` the metric is the kick's augmented inertia (see augmented_inverse_inertia).
    R: the rotations of q, if already at hand; Iinv_true: the world inverse inertias at R
    (world_inverse_inertia), if already at hand (used without stiffness only); Iinv_stiff:
    the augmented ones at R with this stiffness, if already at hand."""
    n = world._n
    inv_mass = world._inv_mass[:n]
    R = quat_to_matrix(q) if R is None else R
    if stiffness is None:
        if Iinv_true is None:
            Iinv_true = inverse_inertia_at(world, model, R)
        Iinv = Iinv_true
    else:       # the next sub-step makes the true ones only if it is no longer stiff
        Iinv = (inverse_inertia_at(world, model, R, stiffness, h) if Iinv_stiff is None
                else Iinv_stiff)
        Iinv_true = None
    rows = evaluate_tables(model.tables, Kinematics(x, R, v, w, velocity_terms=False))
    factor = model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
    # the next sub-step starts here: it may reuse R, I^-1 and (with this stiffness) the factor
    world._start_cache = StartCache(x, q, R, Iinv_true, factor, world.cfm, stiffness, Iinv, h, rows)
    return onto_rows(model.pattern, model.scatter, factor, rows.blocks, v, w, inv_mass, Iinv)


def carry_with_bodies(R0, R1, vectors):
    """World vectors (N, 3) that are fixed in each body, moved from orientation R0 to R1."""
    return einsum("nij,nkj,nk->ni", R1, R0, vectors)


# -- one sub-step ----------------------------------------------------------------------------
def symplectic_substep(world, model, x, q, v, w, h, depth=0):
    """One sub-step of size h in velocity-Verlet (RATTLE) form, split for rigid bodies.

    Joints: half kick with the seed's lambda, corrected so that the new positions meet the
    joints (SHAKE), drift, half kick, then the velocities projected onto the joints. The drift
    moves each body along its velocity and turns it by its own torque-free motion (Euler's
    equations by the implicit midpoint rule, see ``free_rotation``), so a spinning body's
    gyroscopic coupling acts on the velocity it has after the kick. Bounded rows (contacts,
    limits, motors) are solved together with the joints and act as one impulse at the start
    of the step. When the joints cannot be met the step is split in two (up to
    ``world.max_split_depth`` times), and only then are positions projected."""
    n = world._n
    inv_mass = world._inv_mass[:n]
    inertia = body_inertia(world, model)     # (N, 3) principal moments if all diagonal
    cache, world._start_cache = world._start_cache, None
    # the last velocity projection may have been made at exactly these positions
    reuse = cache is not None and cache.x is x and cache.q is q and cache.cfm == world.cfm
    R = cache.R if reuse else quat_to_matrix(q)
    Iinv_true = cache.Iinv if reuse else None       # None: not made yet

    def true_inverse_inertia():
        """R I^-1 R^T (N, 3, 3), made when first needed (a stiff step may not need it)."""
        nonlocal Iinv_true
        if Iinv_true is None:
            Iinv_true = inverse_inertia_at(world, model, R)
        return Iinv_true

    retimed = None          # the lead a changed step size put in the drift's velocities
    if depth == 0:
        v, w, retimed = _retimed_velocities(world, model, R, v, w, h, true_inverse_inertia)
    # a step with bounded rows (symplectic Euler) starts from the last drift's velocities:
    # the state's, less what the last step added after its drift (see _to_drift)
    state_v, state_w, drift_only = v, w, world._drift_only
    given, world._velocity_given = world._velocity_given, None     # (see World._velocity_set)
    after_euler, to_drift = world._after_euler, _to_drift(world)
    if to_drift is not None and after_euler:
        v, w = _back_to_drift(world, v, w, to_drift)
    # Phi for the multipliers includes the gyroscopic torque; with the torque-free flow in the
    # drift the kicks carry only the applied loads
    F, T, T_kick = applied_wrench(world, model, R, v, w)
    flow = world.gyroscopic == "implicit"
    kin = Kinematics(x, R, v, w)
    rows = lam = factor = None
    clock = world._clock
    clock.lap("other")
    uni = (unilateral_rows(world, model, kin, h, inv_mass[:, None] * F)
           if depth == 0 or world._uni_each_split else None)
    if to_drift is not None and (uni is None) == after_euler:
        if uni is None:         # no bounded rows after all: Verlet, from the state's velocities
            v, w = state_v, state_w
            world._to_drift, world._drift_only = to_drift, drift_only
            F, T, T_kick = applied_wrench(world, model, R, v, w)
        else:                   # bounded rows begin (found at the state's velocities)
            v, w = _back_to_drift(world, v, w, to_drift)
        kin = Kinematics(x, R, v, w)
    world._after_euler = uni is not None
    # (the split's halves start from the drift's velocities, as the step found them)
    v_start, w_start, first = v, w, 1.0
    unbounded = None
    if uni is not None:
        unbounded, first, v, w = _verlet_where_unbounded(uni, model, inv_mass, v, w, state_v,
                                                         state_w, drift_only)
        if to_drift is not None and given is not None:
            v, w, resting = _resting_where_given(world, model, uni, given, unbounded, inv_mass,
                                                 v, w, state_v, state_w, h)
            if retimed is not None and resting is not None:
                # (their state's velocities hold no lead unless they were a drift's)
                retimed = retimed._replace(carried=retimed.carried
                                           & (~resting | retimed.in_state))
        if v is not v_start:
            kin = Kinematics(x, R, v, w)
            # (of the loads, only the gyroscopic torque depends on the velocities)
            T, T_kick = _with_gyroscopic(world, model, R, w, world._torque[:n])
    # the tension stiffness the last sub-step found (see unresolved_stiffness) carries this one
    K = world._stiffness if depth == 0 and model.m else None
    world._stiffness = None
    Iinv = true_inverse_inertia() if K is None else None     # the stiff metric follows
    if model.m:
        if reuse and cache.rows is not None:    # the same C and J; Jdu for these velocities
            rows = cache.rows.with_velocity_products(velocity_products(model.tables, cache.rows, kin))
        else:
            rows = evaluate_tables(model.tables, kin)
        # the projection that ended the last sub-step may have factorised A with this stiffness
        same_metric = reuse and cache.stiffness is K and (K is None or cache.h == h)
        if K is not None:
            Iinv = (cache.metric if same_metric
                    else augmented_inverse_inertia(R, inertia, K, h, model.dynamic))
        factor = cache.factor if same_metric else model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
    kick_lin = kick_ang = 0.0
    lam_b = K_found = impact = None
    kick_length = h         # s: what the bounded rows' impulses are forces over (_retimed_kick)
    opened = _opened_rows(rows, given, inv_mass)
    stabilize = model.m and world.post_stabilization
    # the metric the velocities are in (the last projection's) and the one this step kicks in
    # (kept as the world's: a split's halves start from the same velocities)
    held = world._velocity_metric = _velocity_metric(world, n, given)
    metric = _metric(K, h)
    stiff_rows = None       # the rows at the velocities of a stiff metric taken into the true
    if stabilize and not _same_metric(held, metric):
        # (a split's halves, a step after one, a changed dt, a velocity set by the user, a
        # stiffness the last step did not hand on: see _between_metrics)
        endpoint = _at_endpoint(_verlet_first_kick(world, n) if uni is None else first, n)
        if metric is None and held is not None and world.geometric_stiffness:
            stiff_rows = rows
        v, w, kin, rows = _between_metrics(world, model, kin, rows, factor, Iinv, held, metric,
                                           endpoint)
        T, T_kick = _with_gyroscopic(world, model, R, w, world._torque[:n])
    clock.lap("rows")
    kick = None
    if uni is not None:
        v, w, impulses = resolve_impacts(world, model, rows, uni, inv_mass, Iinv, v, w, h, factor,
                                         load=inv_mass[:, None] * F)
        if impulses is not None:
            impact = tuple(None if p is None else p / h for p in impulses)
        clock.lap("impacts")
        # the kick's metric: in the first step after a change of step size, over the two
        # half steps where bounded rows act (see _retimed_kick); with viscous damping, the
        # damped one (see _damped_kick)
        kick_inv_mass, kick_Iinv, kick_v, kick_w = _retimed_kick(retimed, unbounded, inv_mass,
                                                                 Iinv, v, w)
        kick = _damped_kick(world, model, rows, kick_inv_mass, kick_Iinv, factor, kick_v,
                            kick_w, h, rescaled=kick_inv_mass is not inv_mass)
        if kick_inv_mass is not inv_mass:
            kick_length = h * retimed.scale
        # (the call made only where a body without joints spins: a scene without one pays no
        # call a step for it)
        aimed = T if T_kick is T or T[model.tumbling].size == 0 else _aimed_torque(model, T,
                                                                                  T_kick)
        free = inverse_mass_times(kick.inv_mass, kick.Iinv, F, aimed)
        rhs_e = (seed_rhs(world, model, rows, free, kick.v, kick.w, opened) if model.m
                 else None)
        target = kept_targets(uni)
        # (a free top's contacts aim midway through the drift that its torque-free flow turns)
        aim = target if T_kick is T else midway_targets(world, model, uni, target, x, R,
                                                        kick.w, T, T_kick, h)
        lam, lam_b = bounded_multipliers(world, model, rows, rhs_e, uni, kick.inv_mass, kick.Iinv,
                                         free, kick.v, kick.w, h, kick.factor, target=aim)
        kick_lin, kick_ang = bounded_impulse(uni, lam_b, kick.inv_mass, kick.Iinv, n)
    elif model.m:
        lam = seed_multipliers(world, model, rows, factor, inv_mass, Iinv, F, T, v, w, opened)
        endpoint = _at_endpoint(_verlet_first_kick(world, n), n)
        if world.geometric_stiffness:
            tension = (_tension_at_own_spins(world, model, kin, rows, factor, lam, metric,
                                             endpoint, true_inverse_inertia)
                       if stiff_rows is None
                       else _pull_bounded(model, rows, factor, lam, stiff_rows))
            K_found = unresolved_stiffness(model, kin, tension, h)
        if not stiffness_carries(K, K_found):
            # newly stiff, no longer stiff, or the stiffness moved: take the one found here,
            # and the velocities into its metric (one more solve with the new factor)
            K, before = K_found, metric
            metric = _metric(K, h)
            Iinv = (true_inverse_inertia() if K is None
                    else augmented_inverse_inertia(R, inertia, K, h, model.dynamic))
            factor = model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
            if stabilize:
                v, w, kin, rows = _between_metrics(world, model, kin, rows, factor, Iinv,
                                                   before, metric, endpoint)
                T, T_kick = _with_gyroscopic(world, model, R, w, world._torque[:n])
            lam = seed_multipliers(world, model, rows, factor, inv_mass, Iinv, F, T, v, w,
                                   opened)
        if K is not None:
            world.stats["stiff_steps"] += 1
    if kick is None:
        kick = _Kick(inv_mass, Iinv, factor, v, w, damped=False)
    clock.lap("solve")
    acc_lin, acc_ang = generalized_acceleration(model, rows, lam, kick.inv_mass, kick.Iinv, F,
                                                T_kick)
    # With bounded rows in play the whole kick comes first (symplectic Euler), so that the
    # velocity the contacts aim at is the one the bodies move with. Without, half of it
    # (velocity Verlet), but all of it where the velocities are still the last drift's.
    if uni is None:
        first = _verlet_first_kick(world, n)
    v_half = kick.v + first * h * acc_lin + h * kick_lin
    w_half = kick.w + first * h * acc_ang + h * kick_ang

    def solved_again(cold=False):
        """The bounded rows (``uni`` and ``target`` as they are now) and the joints solved
        again: lam, lam_b and the velocities after the kick."""
        lam, lam_b = bounded_multipliers(world, model, rows, rhs_e, uni, kick.inv_mass,
                                         kick.Iinv, free, kick.v, kick.w, h, kick.factor,
                                         cold=cold, target=aim)
        kick_lin, kick_ang = bounded_impulse(uni, lam_b, kick.inv_mass, kick.Iinv, n)
        acc_lin, acc_ang = generalized_acceleration(model, rows, lam, kick.inv_mass, kick.Iinv,
                                                    F, T_kick)
        return (lam, lam_b, kick.v + first * h * acc_lin + h * kick_lin,
                kick.w + first * h * acc_ang + h * kick_ang)

    for _ in range(MAX_OVERRUN_SOLVES if uni is not None else 0):
        wider = with_overrun_limits(world, uni, v_half, w_half, h, unbounded)
        if wider is None:
            break
        # limits the solve turned joints past: solved again with them
        world.stats["overrun_solves"] += 1
        uni, target = wider, kept_targets(wider)
        aim = target if T_kick is T else midway_targets(world, model, uni, target, x, R,
                                                        kick.w, T, T_kick, h)
        lam, lam_b, v_half, w_half = solved_again()
    if uni is not None and _gains_too_much(world, model, q, R, v, w, v_half, w_half, h):
        world.stats["cold_solves"] += 1
        lam, lam_b, v_half, w_half = solved_again(cold=True)
    if not kick.damped:
        v_half, w_half = damped_velocities(world, v_half, w_half, h)
    # (a split's halves with bounded rows kick in the true metric, the stiffness being handed
    # on between whole steps only, and so will the next half: they project in it too.
    # Projected in a stiffness found here, their bodies' velocities, a drift's never carried
    # between metrics, were taken on by the next half's true kick as they were: after the
    # 10 kg ball on 10 light links landed, 50 degrees out at dt 1/60, each such half put
    # energy into the links whipping on the ground, and a StepError followed at 1.35 s)
    if uni is not None and depth == 0 and world.geometric_stiffness and lam.size:
        K_found = unresolved_stiffness(
            model, kin, _tension_at_own_spins(world, model, kin, rows, factor, lam, metric,
                                              _at_endpoint(first, n), true_inverse_inertia), h)
    if uni is not None and (pieces := _turn_pieces(world, model, uni, R, w_half, h)) > 1 and \
            _may_split(world, depth, uni):
        end = _split(world, model, x, q, v_start, w_start, h, depth, pieces)
        return end, StepReport(rows, lam, x, R, uni, lam_b, impact)

    if flow:
        rotation = free_rotation(R, inertia, w_half, h, model.flows)
        q1 = turn_quat(q, midpoint_rotation(R, w_half, rotation, h, inertia, model.flows))
    else:
        rotation, q1 = None, rotate_quat(q, h * w_half)
    drifted = w_half
    carry_angle_reference(world, q1, w_half, h)
    x1 = x + h * v_half
    shaken = q1                              # (the orientations before SHAKE)
    drift = None
    if stabilize:
        drift = (_corrected_drift(world, model, q, R, inertia, w_half, rotation, h)
                 if _turns_more_than(model, w_half, h, FAST_TURN) else None)
        err, x1, q1, v_half, w_half = correct_to_manifold(
            world, model, rows, factor, x1, q1, v_half, w_half, inv_mass, Iinv, h, drift)
        # SHAKE aims at position_tolerance; only a miss beyond projection_tolerance (a link
        # turning too far within h) splits the step. With contacts too: each half detects and
        # solves its own (the step reports the whole step's, as it reports its joints' lambda
        # at x). Projecting positions instead left such a whip's velocities as they were, and
        # two light bodies on a long distance joint hitting the ground went from 100 to
        # 10^6 rad/s in three steps.
        if not err <= world.projection_tolerance and _may_split(world, depth, uni):
            clock.lap("integrate")
            end = _split(world, model, x, q, v_start, w_start, h, depth)
            return end, StepReport(rows, lam, x, R, uni, lam_b, impact)   # the seed's lambda at x
        if err > world.projection_tolerance and np.isfinite(err):
            world.stats["projections"] += 1
            _missed(world, depth, uni)
            err, x1, q1 = project_positions(world, model, x1, q1, v_half, w_half)
    # unsaturated velocity motors: SHAKE turned their joints off h w (see motor_hold)
    motors_held = held_motors(world, model, uni, lam_b) if stabilize else None
    if motors_held is not None:
        x1, q1, v_half, w_half, motors_held, motor_move = held_positions(
            world, model, rows, factor, uni, motors_held, x1, q1, v_half, w_half, inv_mass, Iinv,
            h, lam_b, kick_length)
    if stabilize and uni is not None and uni.limit_found is not None:
        x1, q1 = held_at_limits(world, model, uni.limit_found.C, x1, q1, v_half, w_half,
                                shaken)
    if uni is not None and (target is not None or uni.impact_shift is not None):
        unpushed = q1
        x1, q1 = _pushed(world, model, rows, uni, inv_mass, Iinv, factor, x1, q1, v_half,
                         w_half, h, target is not None)
        if stabilize and uni.limit_found is not None and q1 is not unpushed:
            # the push's own projection onto the joints turns a light body as SHAKE does
            x1, q1 = held_at_limits(world, model, uni.limit_found.C, x1, q1, v_half, w_half,
                                    unpushed)
    R1 = quat_to_matrix(q1)
    if flow and w_half is not drifted:   # velocities at the end of the drift SHAKE corrected
        # (SHAKE's last corrected drift may have made this flow already)
        kept = None if drift is None else drift.flow_of(w_half)
        rotation = (free_rotation(R, inertia, w_half, h, model.flows, near=rotation)
                    if kept is None else kept)
    w_drift = (end_spin(R1, w_half, rotation, model.spinning) if flow
               else carry_with_bodies(R, R1, w_half))
    w_moved = w_drift                       # the spins the bodies turned with
    Iinv_end = Iinv_stiff = None            # the true (stiff) I^-1 at R1, if made here
    # the bodies that end the step at a state's velocity (Verlet's) rather than a drift's
    ending = None if uni is None else unbounded
    ends_in = _metric(K_found, h)           # the metric of the projection below
    if stabilize and not _same_metric(metric, ends_in) and (ending is None or ending.any()):
        # from this step's metric into the projection's, each body keeping its angular
        # momentum (the projection then takes it onto the joints there: _between_metrics)
        if K_found is None:
            Iinv_end = inverse_inertia_at(world, model, R1)
        else:
            Iinv_stiff = augmented_inverse_inertia(R1, inertia, K_found, h, model.dynamic)
        change = _metric_change(metric, ends_in, ending)
        w_drift = w_drift + einsum("nij,nj->ni", Iinv_stiff if Iinv_end is None else Iinv_end,
                                   _stiff_moment(R1, change, w_drift))
    # second half kick with the applied loads (the velocity projection supplies the joints');
    # with bounded rows, for the mechanisms they do not act on (see _to_drift)
    if uni is None:
        second, kicks = 0.5, True
    else:
        world._drift_only = ~unbounded
        kicks = bool(unbounded.any())
        second = 0.5 * unbounded[:, None] if kicks else 0.0
    kick_v = second * h * inv_mass[:, None] * F if kicks else 0.0
    kick_w = 0.0
    if kicks and np.any(T_kick):    # user torques (and the explicit gyroscopic term)
        if stabilize and K_found is not None:
            # in the projection's metric: it keeps the impulse I_aug dw, so a kick made with
            # the true inertia came out I_aug / I times too strong (a 2 N m torque on a small
            # sphere on a 1 m hinge put in 23.7 J for 8.8 J of work)
            if Iinv_stiff is None:
                Iinv_stiff = augmented_inverse_inertia(R1, inertia, K_found, h, model.dynamic)
            Iinv_kick = Iinv_stiff
        elif flow or (stabilize and K is not None):
            if Iinv_end is None:
                Iinv_end = inverse_inertia_at(world, model, R1)
            Iinv_kick = Iinv_end
        else:
            Iinv_kick = Iinv
        kick_w = second * h * einsum("nij,nj->ni", Iinv_kick, T_kick)
    v1, w1 = v_half + kick_v, w_drift + kick_w
    if stabilize:
        # the projection already takes the stiffness found here, which the next sub-step
        # kicks with: its factorisation is then the next one's (the stiffness lags one step)
        v1, w1 = project_velocities(world, model, x1, q1, v1, w1, K_found, h, R1, Iinv_end,
                                    Iinv_stiff)
        if motors_held is not None:
            # and onto the held motors' speeds; their efforts take both corrections
            lam_b = lam_b.copy()
            lam_b[motors_held.block_rows] += motor_move
            v1, w1, motor_push = held_velocities(world, model, motors_held, x1, R1, v1, w1,
                                                 lam_b.take(motors_held.block_rows),
                                                 kick_length)
            if motor_push is not None:
                lam_b[motors_held.block_rows] += motor_push
        if depth == 0:
            world._stiffness = K_found
    # the metric the velocities are in now
    world._velocity_metric = ends_in if stabilize else None
    # (the user loads of the second half kick, which the next step exchanges for its own)
    world._kicked_loads = _kicked_loads(world, h, inv_mass > 0 if uni is None else unbounded)
    if uni is None:
        world._to_drift = (v1 - v_half, w1 - w_moved)
        world._drift_only = None
    elif not unbounded.any():
        world._to_drift = None        # (nothing added: every body ends at its drift's velocity)
    else:
        # (and, where the metric changed, the spins' change into the projection's)
        kick_w = kick_w + (w_drift - w_moved) + np.zeros_like(w1)
        # the projection is linear: the next step's start, P(drift velocities), is the end
        # less the projected kick
        world._to_drift = (_projected(world, model, kick_v, kick_w) if stabilize
                           else (kick_v, kick_w))
    clock.lap("integrate")
    return (x1, q1, v1, w1), StepReport(rows, lam, x, R, uni, lam_b, impact)


# rad a body may turn within a step before the joints' angles are taken again at its drift
REFERENCED_TURN = 1.0


def carry_angle_reference(world, q1, w, h):
    """Where the bodies turn far within the step (w (N, 3) rad/s over h s, to orientations
    q1 (N, 4)), the turning joints' angles at q1, each taken nearest to where its rate
    carried the last one (``limits.continuous_angle``): the angles the rows evaluated there
    (SHAKE, the velocity projection, the limits and couplings of the next sub-step) and the
    step's end unwrap against. Unwrapped against the step's start instead, a disc turning
    4.2 rad a step on a 2:1 gear was put 1.26 rad off its turn every step. (A world without
    such joints has no angle to carry, and no turn to count: World._track_angles resets it.)"""
    table = world._turning_angles()
    if not table.owner.size:
        return
    world._turned_unreferenced += h * float(np.sqrt(einsum("ni,ni->n", w, w).max(initial=0.0)))
    if world._turned_unreferenced <= REFERENCED_TURN:
        return
    last = (world._angle_reference if world._angle_reference is not None
            else world._joint_angle)
    reference = last.copy()
    reference[table.owner] = table.at(quat_to_matrix(q1), w=w, h=h)[0]
    world._angle_reference = reference
    world._turned_unreferenced = 0.0


def kinematic_velocities(world, v, w):
    """(N, 6) the static bodies' velocities and spins (zero for dynamic ones): what a step
    ends with, from which the next measures the user's change (``_carrier_change``)."""
    static = (world._inv_mass[:world._n] == 0.0)[:, None]
    return np.where(static, np.concatenate([v, w], axis=1), 0.0)


def _carrier_change(world, model, v, w):
    """(dv, dw) (N, 3) each: how the user changed kinematic bodies' velocities since the last
    step (``World._carried``; before the first, since they were made), or None where none
    changed, the world has no joints, or it is not stepped by the symplectic integrator."""
    if not model.m or world.integrator != "symplectic":
        return None
    # (before the first step, from the velocities the static bodies were made with: a lift
    # made at rest and set moving for the first step carried its load with half the change,
    # 24.42 N where m (g + a) is 29.22; found by an API explorer)
    change = kinematic_velocities(world, v, w) - world._view("_carried")
    if not change.any():
        return None
    return change[:, :3], change[:, 3:]


def _pushed(world, model, rows, uni, inv_mass, Iinv, factor, x1, q1, v, w, h, pushing=True):
    """The drift's end x1 (N, 3), q1 (N, 4) moved by the push the bodies do not keep
    (unilateral.push_velocities, over the step; pushing False: none) and by the impacts'
    moves to their meeting times (``Unilateral.impact_shift``), then put back onto the
    joints by positions alone (project_positions): they keep no speed of it. (Added to the
    drift's velocities and taken back after it, SHAKE's correction of the pushed drift
    stayed in them: a 5-link chain laid 5 cm into the ground left it at 2.8 m/s with 25 J. Not put back, the
    joints missed by the push's second order until the next step: 9.5e-4 m in the ragdoll
    pile.) The push meets the joints to first order, so the projection moves the bodies
    less than the push did; one that would move them further, or fails, is not taken, and
    the next step's SHAKE takes what the push missed."""
    if pushing:
        dv, dw = push_velocities(world, model, rows, uni, inv_mass, Iinv, factor)
        dv, dw = progressing_push(world, model, uni, x1, q1, h, dv, dw)
        dx, dq = h * dv, h * dw
    else:
        dx = dq = np.zeros_like(x1)
    if uni.impact_shift is not None:
        dx, dq = dx + uni.impact_shift[0], dq + uni.impact_shift[1]
    pushed_x, pushed_q = x1 + dx, rotate_quat(q1, dq)
    if not (model.m and world.post_stabilization):
        return pushed_x, pushed_q
    _, x2, q2 = project_positions(world, model, pushed_x, pushed_q, v, w)
    moved = np.abs(x2 - pushed_x).max(initial=0.0)     # (NaN where it failed: not taken)
    if moved <= np.abs(dx).max(initial=0.0) and np.isfinite(q2).all():
        return x2, q2
    return pushed_x, pushed_q


def _projected(world, model, dv, dw):
    """The velocity changes dv, dw (N, 3) each projected onto the joints as the last
    project_velocities projected (its rows, factorisation and metric)."""
    cache = world._start_cache
    return onto_rows(model.pattern, model.scatter, cache.factor, cache.rows.blocks, dv, dw,
                     world._inv_mass[:world._n], cache.metric)


def _to_drift(world):
    """What the last sub-step added to the velocities after its drift, (N, 3) each, linear
    and angular (None for nothing, before the first step, or after bodies were added or
    removed): a step without bounded rows, its second half kick and the velocity
    projection; a step with them, the loads' second half kick on the mechanisms they do not
    act on, projected.

    A step with bounded rows (contacts, limits, motors) takes the whole kick first
    (symplectic Euler) and moves the bodies with the velocities it ends with; a step without
    them takes half before its drift and half after (velocity Verlet), and its state's
    velocity is the end's. Taking one's end for the other's start put the velocities half a
    kick off their positions each time contacts began or ended: a ball dropped onto the
    ground met it g dt / 2 faster, and a ball with e = 0.8 bounced 0.6-6 % short of e^2 of
    its last height by its fifth bounce at dt 1/60. And with a contact anywhere, a pendulum
    swinging free kept the drift's velocity, whose energy is off by m g v_z dt / 2 (0.63 %
    of its swing's at dt 1/240). So the mechanisms that no bounded row acts on step as
    Verlet's in a step with bounded rows too (_verlet_where_unbounded), ending it with their
    state's velocity; a step that finds bounded rows acting on them takes their second half
    kick back, and a Verlet step kicks in full the bodies whose velocities are still the
    drift's (_verlet_first_kick)."""
    to_drift = world._to_drift
    if to_drift is None or to_drift[0].shape[0] != world._n:
        return None
    return to_drift


class Retimed(NamedTuple):
    """What ``_retimed_velocities`` moved the drift's velocities on by: ``lead_v``,
    ``lead_w`` (N, 3) each (m/s, rad/s), the loads' kick over (last - h) / 2; ``in_state``
    (N,) bool the bodies whose state's velocity holds it (left at a drift's velocity),
    ``carried`` (N,) bool those whose velocities for a step with bounded rows hold it (in
    their state's velocity, or in what the step takes back from it); ``scale``, the kick
    between the two drifts over h: (last + h) / 2h."""
    lead_v: np.ndarray
    lead_w: np.ndarray
    in_state: np.ndarray
    carried: np.ndarray
    scale: float


def _retimed_velocities(world, model, R, v, w, h, true_inverse_inertia):
    """The state's velocities v, w (N, 3) for a sub-step of h that follows one of another
    size (``world.dt`` or ``substeps`` changed; ``world._drift_step``: the last whole
    sub-step's), with what the world keeps about them (``_to_drift``) made this h's.

    A step with bounded rows starts from a drift's velocity, which it takes for the velocity
    h / 2 before the step's start; a drift's velocity of the last sub-step is the velocity
    last / 2 before its end. So each body's drift velocity is moved on by (last - h) / 2 of
    its loads' kick: a body left with a drift's velocity (``world._drift_only``) by that in
    its state's velocity, the others by that less in what the step takes back from their
    state's velocity (``_to_drift``, the last sub-step's second half kick). Left as they
    were, the next drift's velocity was off by (last - h) g / 2: a ball with e = 0.8 dropped
    1 m whose dt went from 1/60 to 1/600 in the step after its bounce rose to 0.6657 m, not
    0.64, and to 0.6219 m when the switch came just before it. Where bounded rows act, the
    kick takes the rows' forces over (last + h) / 2 as well (``_retimed_kick``). Returns the
    velocities and what they were moved on by (Retimed, or None for nothing); sets
    ``world._drift_step``."""
    last, world._drift_step = world._drift_step, h
    if last is None or last == h:
        return v, w, None
    to_drift, drift_only = _to_drift(world), world._drift_only
    if drift_only is not None and drift_only.shape[0] != world._n:
        drift_only = None
    if to_drift is None and (drift_only is None or not drift_only.any()):
        return v, w, None
    F, _, T_kick = applied_wrench(world, model, R, v, w)
    lead = 0.5 * (last - h)
    lead_v = lead * world._inv_mass[:world._n, None] * F
    lead_w = (lead * einsum("nij,nj->ni", true_inverse_inertia(), T_kick) if np.any(T_kick)
              else np.zeros_like(lead_v))
    at_drift = np.zeros((world._n, 1), dtype=bool) if drift_only is None else drift_only[:, None]
    if to_drift is not None:
        world._to_drift = (to_drift[0] - np.where(at_drift, 0.0, lead_v),
                           to_drift[1] - np.where(at_drift, 0.0, lead_w))
    if at_drift.any():
        v, w = v + np.where(at_drift, lead_v, 0.0), w + np.where(at_drift, lead_w, 0.0)
    in_state = at_drift[:, 0]
    return v, w, Retimed(lead_v, lead_w, in_state, in_state | (to_drift is not None),
                         0.5 * (last + h) / h)


def _retimed_kick(retimed, unbounded, inv_mass, Iinv, v, w):
    """The metric and velocities (inverse masses (N,), inverse inertias (N, 3, 3), v, w
    (N, 3)) the first kick after a change of step size takes the bodies that bounded rows act
    on with (``unbounded`` (N,) bool: the others): from their drift's velocity as the last
    step left it (the lead ``retimed`` moved it on by taken out where they hold it), with
    inertias h / tau times their own, tau = (last + h) / 2 (``Retimed.scale`` = tau / h),
    so that the kick from the last drift to this one is tau (Phi + J^T lambda), every row's
    lambda a force (the new step's, as a steady step reads it) and every bound, servo and
    motor law the rows' own. The inputs as they are (the same objects) where there is
    nothing to retime (``retimed`` None, or no such body).

    Taking the lead as the velocity the kick starts from instead, the rows took it up (a
    box at rest on the ground, a rod held by a velocity motor) or let it through (a servo):
    they read (1 + last / h) / 2 times their load for a step (a 3 kg box 259.7 N after dt
    1/60 -> 1/1000, 18.4 N after 1/240 -> 1/60; the motor -86.66 N m for -9.81), a motor
    with 12 N m to hold 9.81 gave way (1.96e-3 rad after 1/60 -> 1/1000), and a rod held by
    a servo (k 1e4 N m/rad, d 100) swung 4.7e-4 rad off its rest (0.48 times its sag), its
    effort -20.8 .. -8.8 N m for -9.81; from 1/240 to 1/60, 8.7e-4 rad up. Free motion is
    the same: h (scale M^-1 Phi) is the lead and h M^-1 Phi."""
    if retimed is None:
        return inv_mass, Iinv, v, w
    kicked = ~unbounded & (inv_mass > 0.0)
    if not kicked.any():
        return inv_mass, Iinv, v, w
    scale = np.where(kicked, retimed.scale, 1.0)
    at = (kicked & retimed.carried)[:, None]
    return (inv_mass * scale, Iinv * scale[:, None, None],
            v - np.where(at, retimed.lead_v, 0.0), w - np.where(at, retimed.lead_w, 0.0))


class KickedLoads(NamedTuple):
    """The user loads a sub-step's second half kick gave (velocity Verlet), which the next
    step exchanges for its own (``loads_caught_up``): ``force`` and ``torque`` (N, 3) each,
    N and N m world frame (None for none), ``h`` that sub-step's size (s), ``bodies`` (N,)
    bool those whose velocity holds that half kick (not those that ended at a drift's
    velocity, nor those the user set a velocity or pose of since: World._kick_forgotten)."""
    force: np.ndarray | None
    torque: np.ndarray | None
    h: float
    bodies: np.ndarray


def _kicked_loads(world, h, bodies):
    """What the world keeps of the user loads a sub-step of h kicked ``bodies`` ((N,) bool)
    with after its drift (KickedLoads), or None when there were none: the next step has
    nothing to exchange (``loads_caught_up`` returns at once; a KickedLoads of no force and
    no torque exchanged nothing either, through two more calls and the tuple's making)."""
    n = world._n
    force, torque = world._force[:n], world._torque[:n]
    force_given, torque_given = force.any(), torque.any()
    if not (force_given or torque_given):
        return None
    return KickedLoads(force.copy() if force_given else None,
                       torque.copy() if torque_given else None, h, bodies)


def loads_caught_up(world, model, x, q, v, w):
    """The state (x, q, v, w) a step starts from, its velocities v, w (N, 3) with the last
    sub-step's second half kick of the user loads (``world._kicked_loads``) exchanged for
    one of the loads given for this step; the drift's velocities the world keeps
    (``_to_drift``) stay as they were.

    A step without bounded rows is velocity Verlet, and ended its bodies at v = u + h/2 a_n,
    u the drift's velocity and a_n the acceleration of its loads, taken at its start. For a
    load that depends on the positions (a spring the user writes with apply_force) that
    second half kick is Verlet's only with a_{n+1}, at the new positions, which only the
    next step's loads give. Taking a_n for it, the map x_{n+1} = x_n + h v_n + h^2/2 a(x_n),
    v_{n+1} = v_n + h a(x_n) has determinant 1 + (omega h)^2 / 2: a 1 kg mass on a 100 N/m
    spring in zero g gained energy x4099 in 10 s at dt 1/60 (x8.1 at 1/240, x1.65 at 1/1000),
    while the same on a frictionless floor (a contact: symplectic Euler, from the drift's
    velocity) stayed within 9 %. So the step starts from u + h/2 a_{n+1} (leapfrog over the
    drift's velocities: the kick between two drifts is h a_{n+1}, of the loads at the
    positions in between), and reports v = u' + h/2 a_{n+1} at its own end: over 10 s that
    spring kept its energy within 2.1 % at dt 1/60 (0.13 % at 1/240), a user torque spring
    on a hinged rod within 3.7 %. A load that stays the same changes nothing (a constant
    thrust's path is as it was, to the bit); one that begins or ends is not exchanged
    (_exchanged). On a mechanism the exchange is projected onto the joints, as the
    projection that ended the last sub-step took that half kick. Gravity is the same every
    step and left out; so is the
    explicit gyroscopic torque, which depends on the velocities, not the positions; viscous
    damping acts on the velocities the drift moves with, not in these kicks."""
    kicked = world._kicked_loads
    n = world._n
    if kicked is None or kicked.bodies.shape[0] != n:
        return x, q, v, w
    dF = _exchanged(kicked.bodies, kicked.force, world._force[:n])
    dT = _exchanged(kicked.bodies, kicked.torque, world._torque[:n])
    if dF is None and dT is None:
        return x, q, v, w
    turned = dT is not None
    half = 0.5 * kicked.h
    dv = (np.zeros((n, 3)) if dF is None
          else half * world._inv_mass[:n, None] * dF)
    projected = bool(model.m) and world.post_stabilization
    cache = world._start_cache
    if not (projected and cache is not None and cache.x is x and cache.q is q
            and cache.cfm == world.cfm):
        cache = None
    # the metric the last projection took the velocities in (see _between_metrics)
    held = _velocity_metric(world, n, None) if projected else None
    dw = np.zeros_like(dv)
    Iinv = None
    if cache is not None:
        Iinv = cache.metric
    elif turned or projected:
        R = quat_to_matrix(q)
        Iinv = inverse_inertia_at(world, model, R, *(() if held is None else held))
    if turned:
        dw = half * einsum("nij,nj->ni", Iinv, dT)
    if cache is not None:
        dv, dw = _projected(world, model, dv, dw)
    elif projected:
        # (as the projection that ended the last sub-step made it: the step reuses it)
        dv, dw = (project_velocities(world, model, x, q, dv, dw, R=R, Iinv_true=Iinv)
                  if held is None else
                  project_velocities(world, model, x, q, dv, dw, held[0], held[1], R=R,
                                     Iinv_stiff=Iinv))
    to_drift = _to_drift(world)
    if to_drift is not None:
        world._to_drift = (to_drift[0] + dv, to_drift[1] + dw)
    return x, q, v + dv, w + dw


def _exchanged(bodies, last, now):
    """now - last (N, 3), the change of a user load (forces or torques) from the last
    sub-step's second half kick to this step, on the bodies whose velocity holds that half
    kick (``bodies`` (N,) bool) and that have the load in both (zero elsewhere); None where
    there is none. A load that begins or ends acts over its whole step as before, its
    impulse h F: a force given for one step only, on a body just made or set moving, moved
    it at half its dt F / m had the step that dropped it taken its half kick back (a body
    is made at the state's velocity, so its first step kicks half before its drift), and
    a thrust switched on in flight acted from half a step before it was given."""
    if last is None:
        return None
    both = bodies & nonzero_rows(last) & nonzero_rows(now)
    if not both.any():
        return None
    change = np.where(both[:, None], now - last, 0.0)
    return change if change.any() else None     # (a steady load: nothing to exchange)


def _back_to_drift(world, v, w, to_drift):
    """The last drift's velocities (N, 3) each from the state's; the world then holds that
    there is nothing to take back and that every velocity is a drift's (a split's halves
    start from them as they are)."""
    world._to_drift = (np.zeros_like(v), np.zeros_like(w))
    world._drift_only = np.ones(v.shape[0], dtype=bool)
    return v - to_drift[0], w - to_drift[1]


def _verlet_first_kick(world, n):
    """The share of the kick a step without bounded rows takes before its drift: half
    (velocity Verlet), or (N, 1) with the whole kick for the bodies whose velocities are
    still a drift's (those a step with bounded rows before it acted on)."""
    drift_only = world._drift_only
    if drift_only is None or drift_only.shape[0] != n or not drift_only.any():
        return 0.5
    return np.where(drift_only, 1.0, 0.5)[:, None]


def _verlet_where_unbounded(uni, model, inv_mass, v, w, state_v, state_w, drift_only):
    """In a step with bounded rows, the mechanisms no bounded row acts on (``_free_of``) step
    as Verlet's (see _to_drift): from their state's velocities state_v, state_w (N, 3), with
    half the kick before the drift, or all of it where their velocity is still a drift's
    (``drift_only`` (N,) bool, None for none). Returns (that mask (N,), the share of the kick
    before the drift (N, 1) or 1.0, the velocities v, w (N, 3) to start from). They started
    from the drift's velocities less gravity's half kick, with the whole kick, so that a ball
    falling beside a box at rest at the first step (or thrown from the ground, or after
    ``world.dt`` changed) flew g dt / 2 too slowly ever after (163 mm low after 2 s at
    dt 1/60)."""
    unbounded = _free_of(uni, model, inv_mass)
    if not unbounded.any():
        return unbounded, 1.0, v, w
    n = unbounded.shape[0]
    at_drift = drift_only if drift_only is not None and drift_only.shape[0] == n else False
    first = np.where(unbounded & ~at_drift, 0.5, 1.0)[:, None]
    keep = unbounded[:, None]
    return unbounded, first, np.where(keep, state_v, v), np.where(keep, state_w, w)


def _resting_where_given(world, model, uni, given, unbounded, inv_mass, v, w, state_v,
                         state_w, h):
    """The velocities (N, 3) each a step with bounded rows starts from, where the user set a
    body's velocity (``given`` (N,) bool, World._velocity_set) and bounded rows hold it
    (``_held_by_rows``): its state's, its acceleration being nil (a box set sliding, or
    stopped, on the ground; a rod resting on its hinge's limit or motor; a robot standing
    on its feet, held through its joints). Elsewhere, as the step found them: a body given a
    velocity is taken back by gravity's half kick (a ball thrown up from the ground, a
    ragdoll thrown up with its limits holding its joints). Returns them and the (N,) bool
    bodies started from their state's velocities (None for none)."""
    if given.shape[0] != v.shape[0]:
        return v, w, None
    held = _held_by_rows(world, model, uni, inv_mass, state_v, state_w, h)
    if held is None:
        return v, w, None
    keep = given & held & ~unbounded
    if not keep.any():
        return v, w, None
    at = keep[:, None]
    return np.where(at, state_v, v), np.where(at, state_w, w), keep


def _held_by_rows(world, model, uni, inv_mass, v, w, h):
    """(N,) bool, or None for none: the dynamic bodies that bounded rows hold up at the
    velocities v, w (N, 3): those a chain of holding rows and joints ties to a static body
    (a box on a box on the ground; a robot standing on its feet, its joints passing the
    ground's forces on), or that a joint ties to a static body with a holding row among
    them (an arm bolted to the world, its motors holding it). A row holds unless it parts
    faster than gravity's kick over the step h: a contact's normal row, a limit's row (its
    rate in m/s, or rad/s as at a 1 m lever); a motor's, servo's or joint friction's row,
    two-sided, always does. Rows among bodies in the air hold them to each other, not up: a
    ragdoll thrown tumbling, its own capsules touching, falls as thrown. (Given back to
    bodies a contact held alone, the half kick was still taken from a rod resting on its
    hinge's limit whose velocity was set to what it had: it was lifted off by
    alpha dt^2 / 4, -1.03e-3 rad at dt 1/60, and the limit read -4.42, -2.96, -7.31 N m for
    -5.886; a standing robot's feet bore -22.9 %, -43.5 %, +16.5 % of its weight in the
    steps after.)"""
    rows = uni.block.rows
    if not rows.count:
        return None
    parting = rows.velocity(v, w) >= h * np.linalg.norm(world._gravity)
    k, first = uni.n_contact_rows // 3, uni.first_limit_row
    holding = np.zeros(rows.count, dtype=bool)
    holding[:k] = ~parting[:k]
    if uni.limit_plan is not None and first < rows.count:
        limit = uni.limit_plan.group.take(uni.limit_rows) <= UPPER
        holding[first:] = ~(limit & parting[first:])
    a, b = rows.a[holding], rows.b[holding]
    if not a.size:
        return None
    dynamic = inv_mass > 0
    # the mechanisms, linked again by the holding rows between them
    mechanism = model.mechanism
    on_a, on_b = dynamic.take(a), dynamic.take(b)
    both = on_a & on_b
    linked = linked_labels(mechanism.take(a[both]), mechanism.take(b[both]),
                           mechanism.max(initial=0) + 1).take(mechanism)
    held = labels_reached(linked, np.concatenate([b[on_b & ~on_a], a[on_a & ~on_b]]))
    # and those a joint ties to a static body that a holding row acts in: an arm on a base
    # bolted to the world (a Fixed joint), its motors holding its links to the base
    # (holding only rows on a static body, its motor read -2.943 N m for -5.886)
    joint_a, joint_b = dynamic.take(model.a), dynamic.take(model.b)
    bolted = np.concatenate([model.b[joint_b & ~joint_a], model.a[joint_a & ~joint_b]])
    if bolted.size:
        held |= (labels_reached(linked, bolted)
                 & labels_reached(linked, np.concatenate([a[on_a], b[on_b]])))
    return held.take(linked) & dynamic


def _free_of(uni, model, inv_mass):
    """(N,) bool: the dynamic bodies of mechanisms (bodies linked by joints) that no bounded
    row acts on: in a step with bounded rows they step as Verlet's, and end it with their
    state's velocity (see _to_drift). (A body a row acts on keeps its drift's velocity: a
    box stopped on the ground is at rest, not falling at g dt / 2; so does the rest of its
    mechanism, whose joints share the rows' forces.)"""
    rows = uni.block.rows
    # (a contact's friction rows act on the bodies of its normal row: those and the limits')
    k, contact_rows = uni.n_contact_rows // 3, uni.n_contact_rows
    hit = labels_reached(model.mechanism, np.concatenate([rows.a[:k], rows.b[:k],
                                                          rows.a[contact_rows:],
                                                          rows.b[contact_rows:]]))
    return ~hit.take(model.mechanism) & (inv_mass > 0)


# The bounded rows' softness is centred on last step's multipliers (bounded.CONTACT_SOFTNESS),
# a proximal step: where their targets conflict (bodies made overlapping and jammed, each
# contact pushing out at up to contact_rows.MAX_PUSH_OUT against the others), the multipliers
# grow from step to step without bound, balanced until they are not: a heap of 30 bodies
# dropped into one another had contact forces of 10^6 N on 1 kg boxes, then one box at
# 1.4 km/s. So a kick of the bounded rows that gives the bodies more than KICK_GAIN times
# the kinetic energy they had, plus KICK_GAIN times what every body pushed out at
# MAX_PUSH_OUT (and falling for the step) would have, is solved again from zero, centred on
# zero. Ordinary steps stay far below it (impacts, kinematic bodies' too, are resolved before
# the kick): none of the ready scenes solves cold.
KICK_GAIN = 2.0


def _gains_too_much(world, model, q, R, v, w, v_kicked, w_kicked, h):
    """Whether the kick of a step with bounded rows (theirs, the joints' and the applied
    loads'), from velocities (v, w) to (v_kicked, w_kicked) (N, 3), raises the kinetic energy
    beyond the bound of KICK_GAIN."""
    if np.abs(v_kicked - v).max(initial=0.0) <= MAX_PUSH_OUT and \
            h * np.abs(w_kicked - w).max(initial=0.0) <= 0.1:
        return False     # (a kick too small to matter: a resting stack's, without two energies)
    before = kinetic_energy(world, q, v, w, R)
    after = kinetic_energy(world, q, v_kicked, w_kicked, R)
    if after <= KICK_GAIN * before:
        return False
    speed = MAX_PUSH_OUT + np.linalg.norm(world._gravity) * h
    pushed = 0.5 * world._mass[:world._n][model.dynamic].sum() * speed * speed
    return after > KICK_GAIN * (before + pushed)


# Sub-steps of a step with bounded rows that may miss SHAKE at max_split_depth (and have their
# positions projected) before the step splits no more: a mechanism whose joints fight its
# contacts (or each other) misses at every depth, and splitting it to max_split_depth every
# step made it 200 times slower than projecting (63 splits a step of a random heap of jointed
# bodies that SHAKE could not meet at any step size); it now stops after two leaves, about 7
# splits. A budget of splits instead (15 a step) cut short the steps that splitting does
# resolve: a 100 kg ball on 10 links of 0.01 kg resting on the ground at dt 1/60 needs up to
# 28 splits in a step (200 kg: 40), and projected after a SHAKE that missed by 6 cm at h/4,
# its links were kicked from 50 to 274 rad/s and the rope blew up within a few steps.
CONTACT_MISSES = 8


def _may_split(world, depth, uni):
    """Whether this sub-step may split: not at max_split_depth, nor (with bounded rows) after
    CONTACT_MISSES of the step's sub-steps missed SHAKE there."""
    if depth >= world.max_split_depth:
        return False
    return uni is None or world._contact_misses_left > 0


def _missed(world, depth, uni):
    """Count a sub-step with bounded rows that missed SHAKE at max_split_depth against the
    step's CONTACT_MISSES."""
    if uni is not None and depth >= world.max_split_depth:
        world._contact_misses_left -= 1


def _at_endpoint(first, n):
    """(N,) bool: the bodies whose velocities at a sub-step's start are a state's (Verlet's,
    at the step's instant) rather than the last drift's, by the share of the kick they take
    before the drift (``first``: 0.5, 1.0 or (N, 1) of those; see _verlet_first_kick and
    _verlet_where_unbounded)."""
    return np.broadcast_to(np.asarray(first).reshape(-1) == 0.5, (n,))


def _metric(K, h):
    """The metric a sub-step of size h kicks in with the tension stiffness K (N, 3, 3), body
    frame (inertias I + h^2 K / 4): (K, h), or None for the true one (K None)."""
    return None if K is None else (K, h)


def _same_metric(a, b) -> bool:
    """Whether two metrics (see _metric) are one (the same stiffness array and h)."""
    if a is None or b is None:
        return a is b
    return a[0] is b[0] and a[1] == b[1]


def _velocity_metric(world, n, given):
    """The metric the world's velocities are in (see _metric): the last velocity
    projection's, but the true one for the bodies whose velocity the user set since
    (``given`` (N,) bool or None: World._velocity_set's record)."""
    held = world._velocity_metric
    if held is None or held[0].shape[0] != n:
        return None
    if given is None or given.shape[0] != n or not given.any():
        return held
    return held[0] * ~given[:, None, None], held[1]


def _metric_change(source, target, only=None):
    """(N, 3, 3) body frame: the inertia of metric ``source`` less that of ``target`` (the
    true inertia cancels: h_s^2 K_s / 4 - h_t^2 K_t / 4), zero outside ``only`` ((N,) bool,
    None for every body)."""
    change = 0.0
    if source is not None:
        change = (0.25 * source[1] * source[1]) * source[0]
    if target is not None:
        change = change - (0.25 * target[1] * target[1]) * target[0]
    if only is not None:
        change = change * only[:, None, None]
    return change


def _stiff_moment(R, change, w):
    """R change R^T w (N, 3): the angular momentum that the inertia ``change`` (N, 3, 3), body
    frame, adds to the spins w (N, 3) at orientations R."""
    return einsum("nij,nj->ni", R, _body_moment(R, change, w))


def _body_moment(R, change, w):
    """change R^T w (N, 3): _stiff_moment in the body frame."""
    # (three products: one einsum of four was 1.5 ms)
    return einsum("nij,njk->nik", change, einsum("nji,nj->ni", R, w)[:, :, None])[:, :, 0]


def _between_metrics(world, model, kin, rows, factor, Iinv, source, target, endpoint):
    """The velocities of ``kin`` (Kinematics), in metric ``source``, taken into metric
    ``target`` (see _metric; inverse inertias Iinv, A factorised with them as ``factor``):
    each body keeps its angular momentum, and the change is projected onto the joints in the
    target metric. That is the one velocity there whose momentum differs from the source's
    by joint impulses alone; the velocities being on the joints already, only the change is
    projected. Returns (v, w, their Kinematics, the rows with their velocity products).

    Verlet's step with the inertia I + h^2 K / 4 is the trapezoidal rule (exactly, on a
    linear system) where its velocity stands for momentum over that inertia: a stiff step's
    velocities are not the bodies' own. Kept as they were from one metric to another (a step
    stiff or not, K taken anew, h halved by a split), each change scaled a stiff mode's
    energy by up to 1 + h^2 K / 4 I or its inverse, depending on its phase, and the changes
    did not cancel: a 10 kg ball swung at 2 m/s on 10 links of 0.01 kg (0.1 m), whose steps
    stiffened and split at random, folded its links to 60 degrees at dt 1/1000 (rk4 at
    1/4000: 11.4), and to 172 degrees at dt 1/240 before a StepError at 1.53 s. The
    velocities stay in the metric the last step ended in and are carried straight from one
    metric to the next where it changes (going through the true one gives the same, at the
    same positions, for one more factorisation a step).

    Only the bodies ``endpoint`` (N,) bool: those whose velocities are a state's (Verlet's,
    at the step's instant). A velocity a step with bounded rows left a mechanism at is its
    drift's, the turn over that step, which leapfrog's kicks carry on in either metric: it is
    no momentum over an inertia. Converted all the same (through the true metric), a
    tumbling ragdoll's hand landing at dt 1/60 had its spin scaled at each contact step with
    the stiffness, was turned against its forearm, and went 0.194 rad past its wrist's cone
    (0.079 before any conversion)."""
    change = _metric_change(source, target, endpoint)
    if not np.any(change):
        return kin.v, kin.w, kin, rows
    dw = einsum("nij,nj->ni", Iinv, _stiff_moment(kin.R, change, kin.w))
    dv, dw = onto_rows(model.pattern, model.scatter, factor, rows.blocks, np.zeros_like(kin.v),
                       dw, world._inv_mass[:world._n], Iinv)
    v, w = kin.v + dv, kin.w + dw
    kin = Kinematics(kin.x, kin.R, v, w)
    return v, w, kin, rows.with_velocity_products(velocity_products(model.tables, rows, kin))


# The share of the largest joint multiplier by which the tension at the bodies' own spins may
# differ from the stiff metric's before it is found exactly (see _tension_at_own_spins): the
# share by which a carried stiffness may drift (stiffness.STIFFNESS_DRIFT). The 1000-link
# hanging chain of the benchmark, pushed at 0.05 m/s, sits at 0.02.
OWN_SPIN_TENSION = STIFFNESS_DRIFT

# The most by which the own spins' pull may add to the largest joint multiplier, a share of it
# (see _tension_at_own_spins). Whips measured add up to 1.75 of it (a 200 kg ball landing on
# 10 links of 0.01 kg; 1.31 for the 10 kg ball on them kicked to 2 m/s). Beyond, the pull is
# the stiff metric's own loop: its added inertia h^2 K / 4 on the rope's slow common turn,
# read as spin, which a bent rope's joints cannot take off in the true metric, pulls in
# proportion to K squared, and sets the next step's K (the 10 kg ball released 70 degrees out
# at dt 1/60, swinging up clear of the ground: 66 N read as 706, K 1.2 times larger a step to
# 5e13 N m/rad, the rope frozen in mid-air 40 degrees out, then a StepError at 2.7 s).
OWN_SPIN_PULL = 2.0


def _tension_at_own_spins(world, model, kin, rows, factor, lam, metric, endpoint,
                          true_inverse_inertia):
    """The joints' multipliers lam (m,), solved at the velocities of ``kin`` in ``metric``
    (see _metric; A factorised in it as ``factor``), with the velocity products (Jdot u)
    taken at the bodies' own velocities instead: the true metric's (true_inverse_inertia()
    (N, 3, 3)) that carry the same momenta up to joint impulses (_between_metrics). The
    tension the stiffness is found from. A light link's spin in a stiff metric is a fraction
    of its own, and a straight rope's links whipping pull on its load by their own spins'
    centripetal terms: at dt 1/240 the rope of _between_metrics's note pulled with 242 N
    where the stiff metric's spins (7 rad/s for 13) gave 161; found from those, the
    stiffness came out too low where the rope whipped, and its steps split 770 times in 3 s.

    The own velocities cost a factorisation in the true metric, made only where they
    matter: where the spins the momenta give each body alone (an upper bound of the own
    ones, in energy) change some multiplier by more than OWN_SPIN_TENSION of the largest
    (not a hanging chain's swaying, whose links barely turn: 2 % of its tension).

    Only the bodies ``endpoint`` (N,) bool have their spins in the metric (see
    _between_metrics); the others' are a drift's, the turn they made over the last step,
    their own already. Taken as the metric's all the same, the 10 kg ball of that note,
    landing on the ground on its 10 links (every body then at its drift's velocity), had
    its links' spins scaled up by their I_aug / I, the tension by its square and the next
    step's stiffness with it, step after step (its largest K 14 -> 83 -> 2e3 -> 3e5 ->
    2e9 N m/rad in four contact steps at dt 1/60, then a StepError).

    The pull the own spins add is at most OWN_SPIN_PULL times the largest multiplier: I_aug /
    I applies to every turn, the rope's slow common one too, and that stiffness loop has no
    other bound (see there)."""
    if metric is None or not lam.size or not endpoint.any():
        return lam
    # R I^-1 (h^2 K / 4) R^T w, the change of spin, made in the body frame
    R, change = kin.R, _metric_change(metric, None, endpoint)
    alone = einsum("nij,nj->ni", R, inertia_times(body_inverse_inertia(world, model),
                                                  _body_moment(R, change, kin.w)))
    jdu = velocity_products(model.tables, rows, Kinematics(kin.x, kin.R, kin.v, kin.w + alone))
    solve = model.pattern.factorizer.solve
    shift = solve(factor, jdu - rows.Jdu)
    if np.abs(shift).max() <= OWN_SPIN_TENSION * np.abs(lam).max():
        return lam
    inv_mass = world._inv_mass[:world._n]
    Iinv_true = true_inverse_inertia()
    true_factor = model.pattern.factor(rows, inv_mass, Iinv_true, world.cfm)
    dv, dw = onto_rows(model.pattern, model.scatter, true_factor, rows.blocks,
                       np.zeros_like(kin.v), alone, inv_mass, Iinv_true)
    own = Kinematics(kin.x, kin.R, kin.v + dv, kin.w + dw)
    shift = solve(factor, velocity_products(model.tables, rows, own) - rows.Jdu)
    # (bounded: see OWN_SPIN_PULL)
    largest, limit = np.abs(shift).max(), OWN_SPIN_PULL * np.abs(lam).max()
    return lam - (shift * (limit / largest) if largest > limit else shift)


def _pull_bounded(model, rows, factor, lam, stiff_rows):
    """The joints' multipliers lam (m,), solved in the true metric (A factorised as
    ``factor``) at velocities taken into it from a stiff metric (``rows``' velocity products
    at those, ``stiff_rows``' at the velocities before: _between_metrics), with the pull the
    taking added bounded as the own spins' is (OWN_SPIN_PULL times the largest multiplier
    before it). Each body keeps its angular momentum, so the rope's slow common turn in a
    stiff metric becomes spins I_aug / I times its own in the true one: the 10 kg ball on its
    10 light links 70 degrees out at dt 1/60, swinging up clear of the ground, alternated
    stiff steps with split ones (whose halves are true), and each true step read its 98 N of
    tension as 3e6-1.5e7 N, found a stiffness 1.3-1.6 times the last (3e5 to 4e8 N m/rad
    in 23 steps), froze the ball in mid-air 33 degrees out and ended in NaN at 2.67 s."""
    shift = model.pattern.factorizer.solve(factor, rows.Jdu - stiff_rows.Jdu)
    before = lam + shift
    largest, limit = np.abs(shift).max(initial=0.0), OWN_SPIN_PULL * np.abs(before).max()
    return lam if largest <= limit else before - shift * (limit / largest)


def _split(world, model, x, q, v, w, h, depth, pieces=2):
    """The sub-step from (x, q, v, w) as ``pieces`` of h / pieces: the end state."""
    world.stats["splits"] += pieces - 1
    state = (x, q, v, w)
    for _ in range(pieces):
        state, _ = symplectic_substep(world, model, *state, h / pieces, depth + 1)
    return state


# How many times a step with bounded rows solves again with the limits its solve turned
# joints past (unilateral.with_overrun_limits): each time the swing rows so met are made
# about the turn the last solve gave, a Newton step on the cone.
MAX_OVERRUN_SOLVES = 2

# rad: a jointed body that the kick of a step with bounded rows sets turning by more than this
# within the step splits it. Such a kick comes whole at the step's start, and the joints'
# rows, linear in the turn, cannot follow a faster one: a 17 g body on a 1 m distance joint
# whose partner hit the ground was kicked to 7850 rad/s (33 rad in the step) and the next
# step exploded. (Without bounded rows, SHAKE's miss splits such a step.)
MAX_KICKED_TURN = 1.0


def _turns_more_than(model, w, h, turn) -> bool:
    """Whether a body with joint rows turns by more than ``turn`` (rad) within h at w (N, 3)."""
    if h * np.abs(w).max(initial=0.0) <= turn / np.sqrt(3.0):
        return False                    # (the common case, without a norm per body)
    spin = w.take(model.jointed, axis=0)
    return bool(h * np.sqrt(einsum("ij,ij->i", spin, spin)).max(initial=0.0) > turn)


# rad: a body with contact rows that turns by more than this within a step splits it (its
# shape's turn; MAX_CONTACT_AXIAL_TURN for its whole turn, a capsule's or cylinder's spin about
# its own axis included). The rows aim the end's gaps at what the step's start says of them,
# each lifted by its own arm's torque; but a body spinning fast turns the tilt that torque
# starts round with its spin before the step ends (the torque-free drift: a flat box at 2 rad
# a step tilted 100 degrees away from where its rows pushed it, at 4 rad 176 degrees), so
# rows meant to lift a sinking corner sank it further, each step about 4 times as far. A
# frictionless flat box resting on a plane spinning at 240 rad/s at dt 1/60 stood 21 steps,
# then left at 42.5 m/s with 224 J more than its 19 J of spin; one at 1 rad a step stood.
MAX_CONTACT_TURN = 1.0
# rad: a spin about a round body's own axis turns no shape, and the drift turns its tilt round
# only by the midpoint rule's error (2 rad a step left a lying capsule resting, 3 rad lifted it
# 0.46 m)
MAX_CONTACT_AXIAL_TURN = 2.0
# (a flat box at 1000 rad/s, dt 1/60, 16.7 rad a step, rests on 16 of them)
MAX_CONTACT_TURN_PIECES = 16


def _turn_pieces(world, model, uni, R, w, h) -> int:
    """Into how many equal sub-steps a sub-step of size h with bounded rows ``uni`` splits for
    the bodies that turn in it at w (N, 3) rad/s further than their rows follow: 2 where a
    jointed body turns by more than MAX_KICKED_TURN, else as many as keep each dynamic body
    with contact rows within MAX_CONTACT_TURN (its shape's turn, ``turning.shape_turning``;
    R (N, 3, 3) its rotation) and MAX_CONTACT_AXIAL_TURN (its whole turn), at most
    MAX_CONTACT_TURN_PIECES; 1 for none (in the common case, in one reduction). Spheres'
    contacts are left out: their normals pass through their centres."""
    # (not '<=': a step gone to NaN splits no further, and fails as it is)
    if not h * np.maximum.reduce(np.abs(w), axis=None, initial=0.0) > \
            min(MAX_KICKED_TURN, MAX_CONTACT_TURN) / np.sqrt(3.0):
        return 1
    if model.m and _turns_more_than(model, w, h, MAX_KICKED_TURN):
        return 2                        # (halves, each looked at again)
    contacts = uni.contacts
    if not len(contacts):
        return 1
    bodies = np.union1d(contacts.body_a, contacts.body_b)
    kind = world._kind.take(bodies)
    keep = (world._inv_mass.take(bodies) > 0.0) & (kind != SPHERE)
    if not keep.any():
        return 1
    spin = w.take(bodies[keep], axis=0)
    turn = shape_turning(kind[keep], R.take(bodies[keep], axis=0), spin)
    over = max(h * np.sqrt(einsum("ij,ij->i", turn, turn)).max() / MAX_CONTACT_TURN,
               h * np.sqrt(einsum("ij,ij->i", spin, spin)).max() / MAX_CONTACT_AXIAL_TURN)
    return min(int(np.ceil(over)), MAX_CONTACT_TURN_PIECES)


@dataclass
class StepReport:
    """What the last sub-step solved, kept for reporting forces."""
    rows: Rows | None
    lam: np.ndarray | None
    x: np.ndarray
    R: np.ndarray
    uni: Unilateral | None = None
    lam_b: np.ndarray | None = None
    # the impacts' forces over the sub-step (their impulses / h, unilateral.resolve_impacts):
    # (K, 3) on the contacts' rows (normal, then the two friction rows) and (m,) on the joint
    # rows (None without joints), or None
    impact: tuple | None = None


def rk4_refusal(bounded, touching) -> str:
    """Why rk4 cannot step a world with ``bounded`` rows (limits, motors, joint friction)
    or bodies ``touching``."""
    has = " and ".join(what for what, found in (("limits, motors or joint friction", bounded),
                                                 ("bodies touching", touching)) if found)
    return ("the rk4 integrator is for contact-free mechanisms without limits, motors or "
            f"joint friction, and this world has {has}")


def rk4_substep(world, model, x, q, v, w, h):
    """One classical Runge-Kutta step of the joints' acceleration-level equation. A world with
    limits, motors or friction in its joints is refused at once, one with bodies touching
    when they touch. (A contact is refused only once it touches: a speculative one, a rod's
    reach towards the ground at dt 1/20, refused the double pendulum 1.1 m above it; and a
    limit was refused only when the joint came near it, a quarter of a second in.)"""
    n = world._n
    touching = detect(world, model, x, quat_to_matrix(q), np.zeros_like(v), h,
                      kinematic(world))[0].depth >= 0.0
    bounded = world._limit_tables().plan is not None
    if bounded or touching.any():
        # (contacts come and go, so the integrator setter cannot refuse them all: the
        # message says how to go on, since every step with rk4 fails as this one)
        raise ValueError(f"{rk4_refusal(bounded, touching.any())}; use integrator="
                         "'symplectic' for this world (set world.integrator = 'symplectic', "
                         "or make it with World(integrator='symplectic'): each step with "
                         "rk4 fails as this one did, leaving the world as it was)")
    inv_mass = world._inv_mass[:n]

    def derivative(x, q, v, w):
        qn = q / np.linalg.norm(q, axis=1, keepdims=True)
        R = quat_to_matrix(qn)
        Iinv = inverse_inertia_at(world, model, R)
        F, T, _ = applied_wrench(world, model, R, v, w, damped=True)
        rows = lam = None
        if model.m:
            rows = evaluate_tables(model.tables, Kinematics(x, R, v, w))
            factor = model.pattern.factor(rows, inv_mass, Iinv, world.cfm)
            lam = seed_multipliers(world, model, rows, factor, inv_mass, Iinv, F, T, v, w)
        acc_lin, acc_ang = generalized_acceleration(model, rows, lam, inv_mass, Iinv, F, T)
        wq = np.concatenate([np.zeros((n, 1)), w], axis=1)
        qdot = 0.5 * quat_multiply(wq, qn)
        return (v, qdot, acc_lin, acc_ang), StepReport(rows, lam, x, R)

    y = (x, q, v, w)
    k1, report = derivative(*y)
    k2, _ = derivative(*(s + 0.5 * h * d for s, d in zip(y, k1)))
    k3, _ = derivative(*(s + 0.5 * h * d for s, d in zip(y, k2)))
    k4, _ = derivative(*(s + h * d for s, d in zip(y, k3)))
    x1, q1, v1, w1 = (s + h / 6.0 * (d1 + 2 * d2 + 2 * d3 + d4)
                      for s, d1, d2, d3, d4 in zip(y, k1, k2, k3, k4))
    q1 = q1 / np.linalg.norm(q1, axis=1, keepdims=True)
    world._clock.lap("integrate")     # (its four evaluations of rows and multipliers too)
    return (x1, q1, v1, w1), report


SUBSTEPS = {"symplectic": symplectic_substep, "rk4": rk4_substep}


@one_blas_thread
def advance(world):
    """One step of world.dt: sub-steps, then a finiteness check, then commit."""
    # (all of it, not only the sub-steps: the model's anchors, the placement and the new
    # joints' projection work on the state as the user left it, and a body placed or an
    # anchor put at 1e300 m overflows there; the step then raises its own StepError, and
    # numpy's RuntimeWarnings before it said nothing more)
    with np.errstate(all=world._errstate):
        _advance(world)


def _advance(world):
    model = world._model()
    n = world._n
    h = world._dt / world._substeps
    state = (world._x[:n], world._q[:n], world._v[:n], world._w[:n])
    if world._posed and model.m:
        state = placed_on_joints(world, model, *state)
    if world._joined_since_step and model.m and world._integrator == "symplectic":
        # a joint added between moving bodies takes the velocities it forbids at once, M-
        # orthogonally (an inelastic event: momentum kept, energy lost), and the energy the
        # step keeps to is the one after it. (The step's own rows took them over the step
        # and gained energy, 0.56 to 0.90 J for two spinning bodies welded, 19.2 to 32.4 J
        # for a double pendulum's elbow welded mid-swing; restored to the level before,
        # the bodies' angular momentum turned by 0.15 N m s.)
        x, q, v, w = state
        state = (x, q, *project_velocities(world, model, x, q, v, w))
        world._energy_reference = None
        world._velocity_metric = None     # (projected in the true metric: taken as true ones)
    if world._integrator != "symplectic":
        world._velocity_metric = None     # (rk4 takes them as true ones)
        world._kicked_loads = None        # (nor does it kick in halves)
    else:
        # the last step's second half kick of the user loads, made this step's
        state = loads_caught_up(world, model, *state)
    world._carrier_change = _carrier_change(world, model, state[2], state[3])
    substep = SUBSTEPS[world._integrator]
    world._contact_misses_left = CONTACT_MISSES
    start, reference, stiffness = state, world._energy_reference, world._stiffness
    metric = world._velocity_metric
    if world._start_cache is not None:  # left by the last step; a user's change drops it
        world._start_cache = world._start_cache._replace(x=state[0], q=state[1])
    fallbacks = world.stats["projections"] + world.stats["splits"] + world.stats["stiff_steps"]
    projections = world.stats["projections"]
    parts = [] if world._substeps > 1 else None
    passive = world._integrator == "symplectic"
    try:
        # (under the errstate that advance() set for the whole step)
        for _ in range(world._substeps):
            start_x = state[0]
            state, report = substep(world, model, *state, h)
            passive = passive and _passive(world, report)
            state = stopped_at_first_touch(
                world, model, start_x, state,
                None if report.uni is None else report.uni.contacts, world._passing, h)
            world._carrier_change = None        # (the first sub-step meets it)
            if parts is not None:
                parts.append(_substep_done(world, report))
        fell_back = (world.stats["projections"] + world.stats["splits"]
                     + world.stats["stiff_steps"] > fallbacks)
        conservative = world._integrator == "symplectic" and _conservative(world, report)
        if conservative:
            if reference is None:
                reference = state_energy(world, start)
            # back to the level after a fallback; a plain step (whose own energy error is
            # bounded, of order h^2) is only pulled down when it rose well above it
            cache = world._start_cache
            R = cache.R if cache is not None and cache.q is state[1] else None
            if fell_back:
                state = restore_energy(world, reference, state, R=R)
            else:
                state = restore_energy(world, reference, state, most=1.0, slack=1e-3, R=R)
        elif passive and fell_back:
            # (see energy.dissipative_bound: split steps with contacts pumped a light
            # rope's whips, 10-20 J in 2 s into a 10 kg ball resting on the ground)
            cache = world._start_cache
            R = cache.R if cache is not None and cache.q is state[1] else None
            state = dissipative_bound(world, start, state, R=R)
    except (SingularSystemError, np.linalg.LinAlgError, ZeroDivisionError, OverflowError) as exc:
        # (the last two: Python's own float arithmetic in a solver, where numpy's would
        # have given an infinity or a NaN)
        world._stiffness, world._start_cache = stiffness, None
        world._velocity_metric = metric
        raise StepError(f"step at t={world.time:.6g} s failed: {exc}"
                        f"{_where_singular(world, model, exc)}; the world is unchanged "
                        f"({_too_fast(world, model, start) or _CHECK_JOINTS}){_queued(world)}"
                        ) from None
    x, q, v, w = state
    finite = bool(np.isfinite(x).all() and np.isfinite(q).all() and np.isfinite(v).all()
                  and np.isfinite(w).all())
    apart = (_blown_apart(world, model, start, state)
             if finite and world.stats["projections"] > projections else None)
    if not finite or apart is not None or _energy_overflows(world, model, state):
        world._stiffness, world._start_cache = stiffness, None
        world._velocity_metric = metric
        produced = ("NaN or infinity" if not finite
                    else f"joints {apart[1]:.3g} m (or rad) apart, from {apart[0]:.3g}"
                    if apart is not None
                    else "speeds so large that their kinetic energy overflows to infinity")
        cause = _too_fast(world, model, start) or ("forces too large for dt, or an unstable "
                                                   "configuration")
        raise StepError(f"step at t={world.time:.6g} s produced {produced}; the world is "
                        f"unchanged ({cause}){_queued(world)}")
    world._x[:n], world._q[:n], world._v[:n], world._w[:n] = state
    world._force[:n] = 0.0
    world._torque[:n] = 0.0
    world._steps += 1
    # the step's own state (a user's change resets all of it, see World._state_changed): the
    # start of the next step, the stiffness it carries (already set) and, for a conservative
    # system, the energy it had when it was last touched (by the user, a contact, a motor, a
    # load): the level that fallback steps return to
    cache = world._start_cache
    if cache is None or cache.x is not state[0] or cache.q is not state[1]:
        world._start_cache = None
    world._energy_reference = reference if conservative else None
    world._joined_since_step = False
    world._carried[:n] = kinematic_velocities(world, state[2], state[3])
    world._posed = False
    world._placed[:n] = False
    world._wrench_cache = None
    world._report = report
    world.last_lambda = report.lam if report.lam is not None else np.zeros(0)
    if parts is None:
        _store_contacts(world, report)
    else:
        substep_mean(world, parts)


_CHECK_JOINTS = ("check for conflicting joints, bodies of wildly different mass, or forces "
                 "too large for dt")


def _too_fast(world, model, state) -> str:
    """Why a step from ``state`` fails when its own velocities are the cause: the fastest
    dynamic body's speeds, whose kinetic energy is beyond a float before any force acts
    (a velocity of 1e200 m/s set by hand); "" when they are not."""
    if not _energy_overflows(world, model, state):
        return ""
    dynamic = np.arange(world._n)[model.dynamic]       # (a slice or a mask of rows)
    # (the fastest by its largest component: a norm of 1e200 m/s overflows)
    fastest = np.maximum(np.abs(state[2][dynamic]).max(axis=1),
                         np.abs(state[3][dynamic]).max(axis=1))
    worst = dynamic[np.argmax(fastest)]
    return (f"the velocities it started from are too large for their kinetic energy to be a "
            f"float: {world._handles[worst]!r} has linear_velocity {shown(state[2][worst])} "
            f"m/s, angular_velocity {shown(state[3][worst])} rad/s; set smaller velocities")


# A step that projected positions and ended with its joints more than BLOWN_APART_MISS times
# world.projection_tolerance apart (1 cm at the default 1e-6 m), BLOWN_APART_GROWTH times
# further apart than it started, has blown up: the sub-steps could not meet the joints and
# the projection diverged. A 100 kg ball on 10 links of 0.01 kg landing at dt 1/60 went from
# 0.15 to 4e41 m in one step, with 5e87 J and 6e45 rad/s, all finite, and from 5e-8 to 0.15
# m in the step before; with max_split_depth 0, 0.17 -> 13.4 m and -227 -> 2.3e7 J. A step
# that meets its joints ends within projection_tolerance, a projection that stalls leaves a
# miss of the order of the last step's (1e-6 to 1e-4 in the landing ropes that run), and
# joints that cannot all hold keep theirs (a Ball at a point and a rigid Distance joint
# from 1 m above asking for 0.5 m: 0.25-0.4 m, within 10 % step to step).
BLOWN_APART_MISS = 1e4
BLOWN_APART_GROWTH = 10.0


def _blown_apart(world, model, start, end):
    """(miss at the start, miss at the end) (m, or ~rad for angular rows) of a step that blew
    its joints apart (see BLOWN_APART_MISS), else None. Asked only of steps that projected
    positions: the others met their joints. Keeps the miss at the end in
    ``world._projected_miss`` (World._warn_unheld_joints reads it)."""
    def miss(state):
        kin = Kinematics(state[0], quat_to_matrix(state[1]), state[2], state[3],
                         velocity_terms=False)
        return float(np.abs(evaluate_tables(model.tables, kin, c_only=True)).max(initial=0.0))
    after = world._projected_miss = miss(end)
    if not after > BLOWN_APART_MISS * world.projection_tolerance:
        return None
    before = miss(start)
    return (before, after) if after > BLOWN_APART_GROWTH * before else None


def _energy_overflows(world, model, state) -> bool:
    """Whether the kinetic energy of ``state`` is beyond a float: finite velocities of 1e297
    m/s square to infinity, and a world that took them reported an infinite energy from then
    on. One bound, no rotations: sum of m v.v + tr(I) w.w over dynamic bodies (tr(I) is at
    least the largest principal moment), at least twice the kinetic energy."""
    n = world._n
    v, w = state[2], state[3]
    # (no component of any body's velocities reaching 1e100 and weights summing to less
    # than 1e100 keep the bound below 3e300: a 55-box pyramid's step took 15 us for the
    # bound, and this asks 4 numpy calls)
    if max(np.abs(v).max(), np.abs(w).max()) < 1e100 and model.energy_weight < 1e100:
        return False
    v, w = v[model.dynamic], w[model.dynamic]
    mass = world._mass[:n][model.dynamic]
    with np.errstate(over="ignore", invalid="ignore"):   # (the overflow is what is asked)
        bound = ((mass * einsum("ij,ij->i", v, v)).sum()
                 + (model.spin_weight * einsum("ij,ij->i", w, w)).sum())
    return not np.isfinite(bound)


def _conservative(world, report) -> bool:
    """No contacts, limits, motors, user loads, damping or kinematic bodies acted in this
    step: energy must not rise."""
    n = world._n
    return report.uni is None and not (world._linear_damping[:n].any()
                                       or world._angular_damping[:n].any()
                                       or _driven(world))


def _passive(world, report) -> bool:
    """Contacts acted in this sub-step, and of the bounded rows only they (no limit, motor or
    spring rows), without user loads or kinematic bodies: the contacts (inelastic or at most
    elastic, with friction) and the viscous damping can only take energy out, the joints
    none, so the energy must not rise but by what the positions' corrections lift."""
    uni = report.uni
    return uni is not None and not uni.limit_rows.size and not _driven(world, uni.moving)


def _driven(world, moving=None) -> bool:
    """User forces or torques, or kinematic bodies, act on the step: they do work. moving:
    the kinematic bodies (N,) bool where already found this step (``contacts.kinematic``:
    the user sets their velocities between steps only)."""
    n = world._n
    return bool(world._force[:n].any() or world._torque[:n].any()
                or (kinematic(world) if moving is None else moving).any())


def _store_contacts(world, report):
    """Keep what the next step's bounded solve starts from: the contacts' multipliers (by
    feature key; the report that ``world.contacts`` shows, with the impacts' forces) and the
    limit and motor rows' (by plan row). A contact or a limit this step's solve stopped from
    approaching keeps the multipliers it started from: its force was an impact's, and the
    next step's solve, whose softness is centred on where it starts
    (``bounded.CONTACT_SOFTNESS``), would push with a thousandth of it (restitution 0
    bounced at 0.1-0.4 % of the impact speed, and a rod slammed into a hinge limit at
    100 rad/s left it at 0.34 rad/s)."""
    uni = report.uni
    if uni is None or uni.n_contact_rows == 0:
        world._forget_contacts()
    else:           # (what _forget_contacts would clear that is not set again below)
        world._shown = world._limit_warm = None
    if uni is not None:
        world._manifolds = uni.manifolds
    if uni is not None and report.lam_b is not None and uni.limit_rows.size:
        lam = report.lam_b[uni.first_limit_row:]
        if uni.limit_stopped is not None and uni.limit_stopped.any():
            lam = np.where(uni.limit_stopped, uni.limit_start, lam)    # (as contacts below)
        world._limit_warm = (uni.limit_rows, lam)
    if uni is None or uni.n_contact_rows == 0:
        return
    lam = uni.contact_multipliers(report.lam_b)
    world._contacts = contact_report(uni.contacts, lam, uni.frames)
    if report.impact is not None:          # (shown, not kept for the next step)
        with_impact = lam.copy()
        with_impact[:, :3] += report.impact[0]
        # (made when first asked for: 1000 poured marbles have impacts every step, and their
        # report took 77 us a step that nothing read)
        contacts, frames = uni.contacts, uni.frames
        world._show(lambda: contact_report(contacts, with_impact, frames))
    if uni.stopped is not None and uni.stopped.any():
        stopped = np.flatnonzero(uni.stopped)
        lam = lam.copy()
        lam[stopped] = 0.0
        width = min(lam.shape[1], uni.warm.shape[1])
        lam[stopped, :width] = uni.warm[stopped, :width]
    world._warm = (uni.contacts.packed_keys, lam)


def _substep_done(world, report):
    """What one of several sub-steps leaves: its contacts kept for the next sub-step's warm
    start, as a step's are (``_store_contacts``), and what it reports: (the joints' wrenches
    (nj, WRENCH_WIDTH), its contacts' keys (K,) and their ContactReport, impacts' forces
    included, or None and None without contacts)."""
    world._report, world._wrench_cache = report, None
    wrenches = joint_wrenches(world)
    _store_contacts(world, report)
    if world._contacts is None:
        return wrenches, None, None
    shown = world._shown_contacts()
    return wrenches, world._warm[0], world._contacts if shown is None else shown


def substep_mean(world, parts):
    """Report a step of several sub-steps (``_substep_done``'s ``parts``, in order) as its
    impulses over dt: the joints' wrenches and the contacts' forces are their means over the
    sub-steps (zero where a contact was not). The contacts shown are every contact of the
    step, the last sub-step's first and in its order, each where it last was. (Reporting the
    last sub-step's alone, a box dropped on the ground at dt 1/60 with 4 sub-steps showed its
    weight in the step it landed in and never its impact.)"""
    count = len(parts)
    world._wrench_cache = world._with_held_wrenches(np.mean([part[0] for part in parts], axis=0))
    latest = [(keys, report) for _, keys, report in reversed(parts) if keys is not None]
    if not latest:
        return
    keys = np.concatenate([k for k, _ in latest])
    every = ContactReport.concatenate([r for _, r in latest])
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    contact = rank.take(inverse)
    shown = every.take(first.take(order))

    def mean(values):
        if values.ndim == 1:
            return np.bincount(contact, values, order.size) / count
        return np.stack([np.bincount(contact, c, order.size) for c in values.T], 1) / count

    shown.normal_force = mean(every.normal_force)
    shown.friction_force = mean(every.friction_force)
    shown.friction_torque = mean(every.friction_torque)
    world._show(shown)


def joint_wrenches(world) -> np.ndarray:
    """(nj, limits.WRENCH_WIDTH): the force and torque about the anchor on body_b, world
    frame, from the last step (joint rows plus their limits and motors), then the efforts
    (``efforts``)."""
    model = world._model()
    nj = len(world._joints)
    out = np.zeros((nj, WRENCH_WIDTH))
    r = world._report
    if r is None or nj == 0:
        return out
    wrench = out[:, :6]
    if r.rows is not None:
        lam = r.lam if r.impact is None or r.impact[1] is None else r.lam + r.impact[1]
        np.add.at(wrench, model.owner, r.rows.Jb * lam[:, None])
    if r.uni is not None:
        mine = r.uni.owner >= 0
        if mine.any():
            np.add.at(wrench, r.uni.owner[mine], r.uni.block.rows.Jb[mine] * r.lam_b[mine, None])
    rb = einsum("nij,nj->ni", r.R[model.joint_b], model.joint_lb)
    wrench[:, 3:] -= cross(rb, wrench[:, :3])
    if r.uni is not None:
        efforts(r.uni, r.lam_b, out)
    return out


def efforts(uni, lam_b, out):
    """Add to ``out`` (nj, WRENCH_WIDTH) each actuated coordinate's limit, drive (motor or
    servo) and friction efforts from the bounded rows' multipliers lam_b: the generalised
    force along the coordinate on body_b (N m for an angle, N for a position), with the
    coordinate's sign (a limit holding an angle down is negative)."""
    plan, rows = uni.limit_plan, uni.limit_rows
    if plan is None or not rows.size:
        return
    slot = plan.slot.take(rows)
    axis = slot == AXIS_SLOT
    keep = (slot >= 0) & ~axis
    group = plan.group.take(rows)
    column = 6 + 3 * slot + np.where(group <= UPPER, 0, np.where(group == DRIVE, 1, 2))
    lam = lam_b[uni.first_limit_row:]
    force = plan.sign.take(rows) * lam
    np.add.at(out, (plan.owner.take(rows)[keep], column[keep]), force[keep])
    if axis.any():
        # a Ball's friction: the torque of its rows about body_a's axes on body_b (world)
        Jb = uni.block.rows.Jb[uni.first_limit_row:][axis, 3:]
        start = 6 + 3 * AXIS_SLOT
        np.add.at(out[:, start:start + 3], plan.owner.take(rows)[axis], Jb * lam[axis, None])
