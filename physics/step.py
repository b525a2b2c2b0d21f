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

This module is the driver (``advance``): the sub-steps, the checks that refuse a blown-up
step, and the commit. The pieces live by concept in their own modules: ``model`` (the
compiled Model), ``seed`` (stages 1 and 4: the applied wrench and the seed equation),
``symplectic`` (the sub-step in order) and ``rk4``, ``manifold`` (SHAKE and the projections),
``kicks`` (which velocity each body starts from: the drift's or the state's),
``velocity_metric`` (velocities under a tension stiffness), ``splits`` (when a sub-step
splits) and ``reporting`` (the StepReport, joint wrenches and contacts kept).
"""
from __future__ import annotations

import numpy as np

from .blas_threads import one_blas_thread
from .contacts import kinematic
from .continuous import stopped_at_first_touch
from .energy import dissipative_bound, restore_energy, state_energy
from .errors import StepError
from .kicks import loads_caught_up
from .linsolve import SingularSystemError
from .manifold import project_velocities
from .math3d import einsum, quat_to_matrix
from .placement import placed_on_joints
from .reporting import _store_contacts, _substep_done, substep_mean
from .rk4 import rk4_substep
from .rows import Kinematics, evaluate_tables
from .splits import CONTACT_MISSES
from .symplectic import symplectic_substep
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
