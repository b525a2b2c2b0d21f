"""Sleeping: islands of bodies that have stayed still for a while drop out of the step until
something touches them (``World(sleeping=True)``).

An island is a connected set of dynamic bodies, linked by joints and by the step's contacts
(speculative ones too: bodies about to touch belong together); static bodies and the ground
link nothing. After every step each awake body's still time grows by dt while its speed is
below ``world.sleep_speed`` (m/s) and its spin below ``world.sleep_spin`` (rad/s), or so
slow that it moves the body's mass about its centre slower than ``sleep_speed`` (a 3 cm
marble rolling on at 0.3 rad/s, 9 mm/s, is still), and drops to zero otherwise. An island
whose bodies have all been still for ``world.sleep_time`` (s) falls asleep: its velocities
are zeroed and the step treats its bodies as static (no integration, no rows for its joints,
no contacts among its bodies or with static ones) until it is woken, all of it at once:

- by a contact with an awake body: when a step's collision stage finds one (speculative: the
  contact margin and the closing speed find it before they touch), the step starts again
  with that island awake (``Woken``), so the impact moves both;
- by the user: a sleeping body's position, orientation or velocity set, a force or torque
  applied, ``body.wake()``, a joint's motor, servo, limits or friction changed, a static
  body moved or made to collide into it (``wake_overlapping``), a collision filter changed;
- by the world: gravity changed, a body or joint added or removed, sleeping turned off.

Every stage is a function over the body arrays: the islands are scipy's connected components
of the link graph.
"""
from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .collision.broadphase import excluded_keys, groups_collide, near_one, pair_key
from .contacts import (ContactReport, checked_contact_snapshot, contact_snapshot,
                       excluded_pairs, joined_warm_starts, kinematic)
from .limits import checked_wrenches
from .math3d import quat_to_matrix
from .validation import checked_array

# default thresholds (the World's sleep_speed, sleep_spin, sleep_time)
SLEEP_SPEED = 0.02      # m/s
SLEEP_SPIN = 0.05       # rad/s
SLEEP_TIME = 0.5        # s


class Woken(Exception):
    """Raised by a step's collision stage when awake bodies reach sleeping ones (``rows``:
    those sleeping bodies); World.step wakes their islands and runs the step again."""

    def __init__(self, rows):
        super().__init__(f"awake bodies reached sleeping ones: {rows}")
        self.rows = rows


def check_reached(world, a, b, kinematic):
    """Raise Woken if a contact of body rows a, b (K,) joins an awake or ``kinematic`` ((n,)
    bool: moving static) body to a sleeping one (the only way a contact wakes an island: the
    contacts a step keeps have passed it)."""
    if not world._sleeping:
        return
    asleep = world._asleep[:world._n]
    hit_a, hit_b = asleep.take(a), asleep.take(b)
    if not (hit_a.any() or hit_b.any()):
        return
    # (awake and dynamic: a sleeping body's inverse mass is zero while it sleeps)
    awake = (world._inv_mass[:world._n] > 0) | kinematic
    rows = np.concatenate([a[hit_a & awake.take(b)], b[hit_b & awake.take(a)]])
    if rows.size:
        raise Woken(np.unique(rows))


def movable(world) -> np.ndarray:
    """(n,) bool: the bodies that are not static (finite mass), asleep or not."""
    return np.isfinite(world._mass[:world._n])


def joint_links(world) -> np.ndarray:
    """(J, 2) body rows of every joint (row 0, the world frame, for body_a None), made once
    per topology."""
    if world._links is None:
        world._links = np.array([(j._rows_a, j.body_b.row) for j in world._joints],
                                dtype=np.intp).reshape(-1, 2)
    return world._links


def jointed_bodies(world) -> np.ndarray:
    """(N,) bool, read-only: the bodies on some joint (row 0, the world frame, among them
    when a joint holds a body to it), made once per topology (as ``joint_links``: a step
    asks up to three times a sub-step)."""
    links = joint_links(world)
    made = world._jointed
    if made is None or made[0] is not links or made[1].shape[0] != world._n:
        jointed = np.zeros(world._n, dtype=bool)
        jointed[links.reshape(-1)] = True
        jointed.flags.writeable = False
        world._jointed = made = (links, jointed)
    return made[1]


def resting_joints(world) -> np.ndarray | None:
    """(J,) bool: the joints between two bodies that do not move in the step, one of them
    asleep (they make no rows), or None when no body is asleep."""
    n = world._n
    if not world._asleep[:n].any():
        return None
    links = joint_links(world)
    return ((world._inv_mass[:n].take(links) == 0).all(axis=1)
            & world._asleep[:n].take(links).any(axis=1))


def joints_with_rows(world) -> list:
    """(index, joint) of the world's joints but those between two bodies that do not move in
    the step, one of them asleep (they make no rows while it sleeps)."""
    resting = resting_joints(world)
    return [(i, j) for i, j in enumerate(world._joints) if resting is None or not resting[i]]


def body_links(world) -> np.ndarray:
    """(L, 2) body rows linked by a joint (row 0 for the world frame) or by last step's
    contacts."""
    links = [joint_links(world)]
    report = world._contacts
    if report is not None and len(report):
        # (the report's bodies are indices into world.bodies: rows minus one)
        links.append(np.stack([report.body_a + 1, report.body_b + 1], 1))
    return np.concatenate(links)


def islands(world, moves) -> np.ndarray:
    """Island label (n,) of every body row: dynamic bodies linked by joints or by last step's
    contacts share one; static rows get labels of their own (they link nothing)."""
    n = world._n
    links = body_links(world)
    links = links[moves.take(links[:, 0]) & moves.take(links[:, 1])]
    return linked_labels(links[:, 0], links[:, 1], n)


def linked_labels(a, b, n) -> np.ndarray:
    """(n,) labels of the rows 0..n-1: rows linked, directly or through others, by the pairs
    (a[i], b[i]) share one."""
    graph = coo_matrix((np.ones(a.shape[0]), (a, b)), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def labels_reached(labels, rows) -> np.ndarray:
    """(labels.max() + 1,) bool: which of the labels (``linked_labels``) some of the ``rows``
    carry."""
    reached = np.zeros(labels.max(initial=0) + 1, dtype=bool)
    reached[labels.take(rows)] = True
    return reached


def update_sleep(world):
    """After a step: count still time, put the islands that stayed still long enough to
    sleep. (The islands are only found when some body has been still long enough.)"""
    n = world._n
    moves = movable(world)
    asleep = world._asleep[:n]
    awake = moves & ~asleep
    v, w = world._v[:n], world._w[:n]
    spin = np.einsum("ij,ij->i", w, w)
    still = ((np.einsum("ij,ij->i", v, v) < world.sleep_speed ** 2)
             & ((spin < world.sleep_spin ** 2)
                | (spin * world._model().turning_reach < world.sleep_speed ** 2)))
    still &= ~riding_kinematic(world)
    still_time = world._still_time[:n]
    still_time[:] = np.where(awake & still, still_time + world.dt, 0.0)
    ready = awake & (still_time >= world.sleep_time)
    if not ready.any():
        return
    label = islands(world, moves)
    # an island sleeps when all its bodies are awake and ready (none asleep or moving)
    unready = np.bincount(label, weights=moves & ~ready, minlength=n) > 0
    falling = ready & ~unready.take(label)
    if not falling.any():
        return
    # the joints' wrenches and errors of this step, which the joints that stop making rows
    # keep reporting
    world._held_wrenches = world._joint_wrenches().copy()
    world._held_errors = joint_errors(world)
    hold_contacts(world, falling)
    put_to_sleep(world, falling, label)
    world._wrench_cache = world._held_wrenches.copy()    # (until the next step)


def riding_kinematic(world) -> np.ndarray:
    """(n,) bool: the bodies jointed to or in contact with a kinematic body (a static body
    that moves), which never sleep: the body they hang on or rest on moves, however slowly."""
    riding = np.zeros(world._n, dtype=bool)
    moving = kinematic(world)
    if not moving.any():
        return riding
    a, b = body_links(world).T
    riding[a.compress(moving.take(b))] = True
    riding[b.compress(moving.take(a))] = True
    return riding


def hold_contacts(world, falling):
    """The step's contacts of the bodies ``falling`` (mask (n,)) asleep, among them or with
    static bodies, move from the live contacts to the held ones: ``world.contacts`` goes on
    reporting them, and they warm start the island's solve when it wakes (``release_contacts``)."""
    report = world._contacts
    if report is None or not len(report):
        return
    still = falling | ~movable(world)
    held = _falling_contacts(report, still, falling)
    if not held.any():
        return
    shown = world._shown_contacts()
    mine, world._contacts, world._warm = _split(report, world._warm, held)
    if shown is not None:
        # (what the step showed of the others stays: its impacts, its sub-steps' mean)
        world._show(shown.take(~_falling_contacts(shown, still, falling)))
    if world._held_contacts is not None:
        mine = _joined(world._held_contacts, mine)
    world._held_contacts = mine


def _falling_contacts(report, still, falling):
    """(K,) bool: the contacts of ``report`` among the ``still`` bodies ((n,) mask: falling
    asleep or static) that touch one of the ``falling``."""
    # (the report's bodies are indices into world.bodies: rows minus one)
    a, b = report.body_a + 1, report.body_b + 1
    return still.take(a) & still.take(b) & (falling.take(a) | falling.take(b))


def release_contacts(world, rows):
    """The held contacts of the bodies ``rows`` (mask (n,)) waking go back to the live ones:
    the next step's solve starts from the forces they had."""
    if world._held_contacts is None:
        return
    report, warm = world._held_contacts
    waking = rows.take(report.body_a + 1) | rows.take(report.body_b + 1)
    if not waking.any():
        return
    back, *staying = _split(report, warm, waking)
    shown = world._shown_contacts()
    live = back if world._contacts is None else _joined((world._contacts, world._warm), back)
    world._contacts, world._warm = live
    world._held_contacts = None if waking.all() else tuple(staying)
    if shown is not None:
        # (what the last step showed for the live contacts stays until the next step: a
        # bouncing ball's 2098 N read 0 N when a ball asleep 20 m away was woken)
        world._show(ContactReport.concatenate([shown, back[0]]))


def _split(report, warm, chosen):
    """(the contacts ``chosen`` (K,) bool as (report, (keys, multipliers)), then the others'
    report and (keys, multipliers))."""
    keys, lam = warm
    return ((report.take(chosen), (keys[chosen], lam[chosen])), report.take(~chosen),
            (keys[~chosen], lam[~chosen]))


def _joined(first, second):
    """Two (report, (keys, multipliers)) of contacts, one after the other."""
    return (ContactReport.concatenate([first[0], second[0]]),
            joined_warm_starts(first[1], second[1]))


def joint_added(world):
    """What the sleeping joints report gets a row for a new joint (it makes rows: its bodies
    were woken)."""
    if world._held_wrenches is not None:
        world._held_wrenches = np.concatenate(
            [world._held_wrenches, np.zeros((1, world._held_wrenches.shape[1]))])
        world._held_errors = np.append(world._held_errors, 0.0)


def joint_removed(world, index):
    """What the sleeping joints report loses joint ``index``'s row."""
    if world._held_wrenches is not None:
        world._held_wrenches = np.delete(world._held_wrenches, index, axis=0)
        world._held_errors = np.delete(world._held_errors, index)


def joint_errors(world) -> np.ndarray:
    """(J,) each joint's largest position-level violation now (m, ~rad): 0 for joints that
    make no rows."""
    errors = np.zeros(len(world._joints))
    model = world._model()
    if model.tables:
        c = np.abs(world._joint_values(model))
        np.maximum.at(errors, model.owner, c)
    return errors


def put_to_sleep(world, rows, label):
    """Bodies ``rows`` (mask (n,)) fall asleep, each with the island ``label`` it has now:
    still, and static to the step."""
    world._v[:world._n][rows] = 0.0
    world._w[:world._n][rows] = 0.0
    world._kick_forgotten(rows)
    # island ids that stay unique across sleeps: this step's labels after all used before
    world._island[:world._n][rows] = world._next_island + label[rows]
    world._next_island += world._n
    _freeze(world, rows)


def _freeze(world, rows):
    """Bodies ``rows`` (mask (n,)) asleep: static to the step."""
    world._asleep[:world._n][rows] = True
    world._inv_mass[:world._n][rows] = 0.0
    world._inv_inertia[:world._n][rows] = 0.0
    world._recompile()


def wake(world, rows):
    """Bodies ``rows`` (mask (n,)) wake: dynamic again, their still time reset."""
    # the last step's wrenches and the held, until the next step: read before anything
    # changes (an add_body since the step leaves no compiled model, and one compiled with
    # the woken joints' rows did not match the last step's report: a ValueError)
    wrenches = world._joint_wrenches()
    n = world._n
    world._asleep[:n][rows] = False
    world._still_time[:n][rows] = 0.0
    world._island[:n][rows] = -1
    world._set_inverses(np.flatnonzero(rows))
    release_contacts(world, rows)
    world._recompile()
    world._wrench_cache = wrenches


def wake_islands(world, rows):
    """Wake the islands that body rows ``rows`` (int array) fell asleep with."""
    n = world._n
    asleep = world._asleep[:n]
    rows = np.asarray(rows, dtype=np.intp)
    ids = world._island[:n].take(rows[asleep.take(rows)])
    if ids.size:
        wake(world, asleep & np.isin(world._island[:n], ids))


_SLEEP_ARRAYS = ("_asleep", "_still_time", "_island", "_inv_mass", "_inv_inertia")


def sleep_arrays(world) -> tuple:
    """Copies of the body arrays that waking changes (``wake``), for ``restore_arrays``."""
    return tuple(getattr(world, name)[:world._n].copy() for name in _SLEEP_ARRAYS)


def restore_arrays(world, saved):
    """Put back the body arrays ``sleep_arrays`` copied (the world's other parts that waking
    replaces, its held contacts and compiled step, are the caller's)."""
    for name, values in zip(_SLEEP_ARRAYS, saved):
        getattr(world, name)[:world._n] = values


def wake_touching(world, row):
    """Wake the island body ``row`` (or rows: an int array) fell asleep with, and those of
    the sleeping bodies that rest on it or are jointed to it (a static body moved, made
    slippery or set to collide no more must not leave them hanging in the air)."""
    rows = [np.atleast_1d(np.asarray(row, dtype=np.intp))]
    held = world._held_contacts
    if held is not None:
        a, b = held[0].body_a + 1, held[0].body_b + 1        # (the report's are indices)
        touching = np.isin(a, rows[0]) | np.isin(b, rows[0])
        rows += [a[touching], b[touching]]
    links = joint_links(world)
    if links.size:
        rows.append(links[np.isin(links, rows[0]).any(axis=1)].ravel())
    wake_islands(world, np.concatenate(rows))


def wake_overlapping(world, row):
    """Wake the sleeping islands whose bodies static body ``row`` may now touch (moved or
    orientated onto them, or made to collide with them by its group or mask): no contact
    wakes them, since the step makes none between a static body and a sleeping one, and
    they would sleep on inside it (a wall moved into a sleeping stack, a door made solid
    through a sleeping box). Found by bounding boxes, as the broadphase pairs them, among
    the sleeping bodies whose group and mask let them collide with it and which no joint
    or ``ignore_collision`` keeps from it."""
    n = world._n
    sleepers = np.flatnonzero(world._asleep[:n])
    if not sleepers.size:
        return
    group, mask = world._group[:n], world._mask[:n]
    sleepers = sleepers[groups_collide(np.full(sleepers.size, row), sleepers, group, mask)]
    keys = pair_key(np.full(sleepers.size, row), sleepers, n)
    sleepers = sleepers[~np.isin(keys, excluded_keys(excluded_pairs(world), n))]
    if not sleepers.size:
        return
    near = near_one(world._kind[:n], world._params[:n], world._x[:n],
                    quat_to_matrix(world._q[:n]), row, sleepers, world.contact_margin)
    wake_islands(world, sleepers[near])


def wake_all(world):
    asleep = world._asleep[:world._n]
    if asleep.any():
        wake(world, asleep.copy())


def snapshot(world) -> dict:
    """What ``World.get_state`` keeps of sleeping: who sleeps, with which island, how long
    each awake body has been still, and what the sleeping joints and contacts report."""
    n = world._n
    held, errors, contacts = world._held_wrenches, world._held_errors, world._held_contacts
    return {"asleep": world._asleep[:n].copy(), "still_time": world._still_time[:n].copy(),
            "island": world._island[:n].copy(), "next_island": world._next_island,
            "held_wrenches": None if held is None else held.copy(),
            "held_errors": None if errors is None else errors.copy(),
            "contacts": None if contacts is None else contact_snapshot(contacts[0], *contacts[1])}


def checked_snapshot(saved, world):
    """``snapshot``'s dict checked against this world (None: a snapshot from before sleeping,
    everything awake); ValueError naming the part that does not fit."""
    n, nj = world._n, len(world._joints)
    if saved is None:
        return None
    try:
        asleep = np.array(saved["asleep"])
        still = np.array(saved["still_time"], dtype=float)
        island = np.array(saved["island"])
        next_island = saved["next_island"]
    except (KeyError, TypeError, ValueError):
        raise ValueError("state['sleep'] must be a snapshot's sleep part (asleep, still_time, "
                         "island, next_island, held_wrenches, held_errors)") from None
    if asleep.shape != (n,) or asleep.dtype != bool:
        raise ValueError(f"state['sleep']['asleep'] must be ({n},) booleans")
    if still.shape != (n,) or not np.all(np.isfinite(still)) or np.any(still < 0):
        raise ValueError(f"state['sleep']['still_time'] must be ({n},) times >= 0 (s)")
    if island.shape != (n,) or not np.issubdtype(island.dtype, np.integer):
        raise ValueError(f"state['sleep']['island'] must be ({n},) integers")
    if not isinstance(next_island, (int, np.integer)) or next_island < 0:
        raise ValueError("state['sleep']['next_island'] must be a whole number >= 0")
    if (asleep & ~movable(world)).any():
        raise ValueError("state['sleep']['asleep'] puts a static body to sleep")
    held = checked_wrenches(saved, "held_wrenches", nj, where="state['sleep']")
    errors = checked_array(saved, "held_errors", (nj,), where="state['sleep']")
    # (a snapshot from before sleeping islands kept their contacts has none)
    contacts = checked_contact_snapshot(saved.get("contacts"), n - 1,
                                        "state['sleep']['contacts']")
    return asleep, still, island, int(next_island), held, errors, contacts


def restore(world, checked):
    """Put the bodies to sleep or wake them as the checked snapshot says (all awake for
    None, and in a world that does not sleep)."""
    n = world._n
    if checked is None or not world._sleeping:
        wake_all(world)
        world._still_time[:n] = 0.0
        world._held_contacts = None
        return
    asleep, still, island, next_island, held, errors, (report, warm) = checked
    changed = asleep != world._asleep[:n]
    if changed.any():
        if (changed & ~asleep).any():
            wake(world, changed & ~asleep)
        falling = changed & asleep
        if falling.any():
            _freeze(world, falling)
    world._still_time[:n] = still
    world._island[:n] = island
    world._next_island = next_island
    world._held_wrenches, world._held_errors = held, errors
    world._held_contacts = None if report is None else (report, warm)
