"""Which velocity each body starts a sub-step from, and the kicks between them. A step with
bounded rows is symplectic Euler and starts from the last drift's velocity; one without is
velocity Verlet and starts from the state's (``_to_drift``: what the last sub-step added after
its drift). Here: the velocities taken back to the drift's or kept (``_back_to_drift``, the
share of the kick before the drift, the bodies bounded rows hold or leave free), moved on
after the step size changed (``_retimed_velocities``, ``_retimed_kick``), and the last second
half kick of the user loads exchanged for this step's (``loads_caught_up``).

Its own module because this bookkeeping of half kicks is one thread through every sub-step,
apart from the sub-step's own order of stages (``symplectic``).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .limits import UPPER
from .manifold import _projected, inverse_inertia_at, project_velocities
from .math3d import einsum, nonzero_rows, quat_to_matrix
from .seed import applied_wrench
from .sleeping import labels_reached, linked_labels
from .velocity_metric import _velocity_metric


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


def _at_endpoint(first, n):
    """(N,) bool: the bodies whose velocities at a sub-step's start are a state's (Verlet's,
    at the step's instant) rather than the last drift's, by the share of the kick they take
    before the drift (``first``: 0.5, 1.0 or (N, 1) of those; see _verlet_first_kick and
    _verlet_where_unbounded)."""
    return np.broadcast_to(np.asarray(first).reshape(-1) == 0.5, (n,))
