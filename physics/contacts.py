"""The collision stage of the step: detect contacts, warm start them, report their forces."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, fields

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .collision import ContactSet, Manifolds, find_contacts_keeping
from .collision.contacts import KEY_BITS
from .collision.internal_faces import (collision_shapes, kept_manifolds, mark_manifolds,
                                       marked_as, true_contacts)
from .continuous import fast_bodies, passing_pairs
from .joints import Fixed
from .math3d import nonzero_rows
from .validation import check_integers, read_only


@dataclass
class ContactReport:
    """Contacts of the last step, K of them, world frame.

    point (K, 3) m; normal (K, 3) unit, from body_a to body_b; depth (K,) m (negative: a
    speculative contact still separated by that gap); body_a, body_b (K,) indices into
    ``world.bodies``; normal_force (K,) N pushing body_b along +normal, a bounce's impulse
    over the step included (impulse / dt: restitution's velocity jump comes before the
    step's solve, impacts.resolve_impacts); friction_force (K, 3) N
    on body_b; friction_torque (K, 3) N m on body_b, the rolling and spin friction's (zero
    unless a body has ``rolling_friction`` or ``spin_friction``). body_a receives the opposite
    of all three. sliding (K,) bool: the surfaces slid at the step's start (faster than
    ``contact_rows.SLIP_SPEED``), and the friction rows lay along and across the slip (a
    sticking contact's follow the slip its loads would start, or its roll:
    ``contact_rows.friction_frame``).
    """
    point: np.ndarray
    normal: np.ndarray
    depth: np.ndarray
    body_a: np.ndarray
    body_b: np.ndarray
    normal_force: np.ndarray
    friction_force: np.ndarray
    friction_torque: np.ndarray
    sliding: np.ndarray

    @staticmethod
    def empty() -> "ContactReport":
        z3, z = np.zeros((0, 3)), np.zeros(0)
        i = np.zeros(0, dtype=np.intp)
        return ContactReport(z3, z3, z, i, i, z, z3, z3, np.zeros(0, dtype=bool))

    def __len__(self):
        return self.depth.shape[0]

    def take(self, index) -> "ContactReport":
        """The contacts ``index`` (indices or a (K,) mask), in that order."""
        if index.dtype == bool:
            index = np.flatnonzero(index)
        return ContactReport(*(getattr(self, f).take(index, axis=0) for f in CONTACT_FIELDS))

    def read_only(self) -> "ContactReport":
        """The same contacts as read-only views (what ``world.contacts`` hands out: its
        arrays are the ones the next step reads, and a user's unit conversion done in place
        on them changed that step)."""
        return ContactReport(*(read_only(getattr(self, f)) for f in CONTACT_FIELDS))

    @staticmethod
    def concatenate(reports) -> "ContactReport":
        """One report of ``reports``' contacts, one report after another."""
        return ContactReport(*(np.concatenate([getattr(r, f) for r in reports])
                               for f in CONTACT_FIELDS))


def _contact_fields():
    """Per ContactReport field its shape per contact and dtype, read off an empty report:
    what a snapshot keeps of contacts and what a restored one is checked against."""
    empty = ContactReport.empty()
    return {f.name: (getattr(empty, f.name).shape[1:], getattr(empty, f.name).dtype)
            for f in fields(ContactReport)}


CONTACT_FIELDS = _contact_fields()


def joined_warm_starts(first, second):
    """(keys, multipliers) of two warm starts, one after the other: multipliers (K, 3), or
    (K, 6) when either has the torque rows' (zero for the contacts that had none)."""
    (keys_a, lam_a), (keys_b, lam_b) = first, second
    width = max(lam_a.shape[1], lam_b.shape[1])
    lam = np.zeros((lam_a.shape[0] + lam_b.shape[0], width))
    lam[:lam_a.shape[0], :lam_a.shape[1]] = lam_a
    lam[lam_a.shape[0]:, :lam_b.shape[1]] = lam_b
    return np.concatenate([keys_a, keys_b]), lam


def _renumbered(keys, removed, shift):
    """(keep (K,) bool, the kept keys renumbered) of packed contact or pair keys (K,) int64
    (``collision.pair_keys``, with a feature in the ``shift`` bits below or not) once the
    bodies ``removed`` (a removal.RemovedRows) are gone: theirs are left out, and every body
    after them moves down by as many rows as were removed before it."""
    mask = (1 << KEY_BITS) - 1
    pair = keys >> shift
    a, b = pair >> KEY_BITS, pair & mask
    keep = ~(removed.among(a) | removed.among(b))
    a, b = a[keep], b[keep]
    pair = (removed.moved_down(a) << KEY_BITS) | removed.moved_down(b)
    return keep, (pair << shift) | (keys[keep] & ((1 << shift) - 1))


def without_bodies(report: ContactReport, warm, removed):
    """Contacts (report, (keys, multipliers)) once the bodies ``removed`` (RemovedRows) are
    gone (``World.remove_bodies``): theirs are left out, and the rows after them move down,
    in the report's body indices and in the warm start's keys."""
    keys, lam = warm
    keep, keys = _renumbered(keys, removed, KEY_BITS)
    return _moved_down(report.take(keep), removed), (keys, lam[keep])


def report_without_bodies(report: ContactReport, removed) -> ContactReport:
    """A report's contacts once the bodies ``removed`` are gone, as ``without_bodies``', by
    the report's own body indices (a report shown in place of the live contacts: a step's
    sub-step mean lists contacts the last sub-step no longer had, whose keys are not kept)."""
    gone = removed.among(report.body_a + 1) | removed.among(report.body_b + 1)  # (indices)
    return _moved_down(report.take(~gone), removed)


def _moved_down(kept: ContactReport, removed) -> ContactReport:
    """``kept`` (a report without the contacts of the bodies ``removed``) with the bodies
    after them moved down."""
    kept.body_a = removed.index_moved_down(kept.body_a)
    kept.body_b = removed.index_moved_down(kept.body_b)
    return kept


def manifolds_without_bodies(manifolds: Manifolds, removed) -> Manifolds:
    """The kept manifolds once the bodies ``removed`` are gone (see ``without_bodies``)."""
    keep, keys = _renumbered(manifolds.key, removed, 0)
    kept = manifolds.pairs(np.flatnonzero(keep))
    kept.key = keys
    return marked_as(kept, manifolds)


def report_snapshot(report: ContactReport) -> dict:
    """Copies of a report's arrays, as ``World.get_state`` keeps them."""
    return {f: getattr(report, f).copy() for f in CONTACT_FIELDS}


def contact_snapshot(report: ContactReport, keys, multipliers) -> dict:
    """Copies of contacts with their warm start, as ``World.get_state`` keeps them."""
    return {**report_snapshot(report), "keys": keys.copy(), "multipliers": multipliers.copy()}


def checked_report(saved, n_bodies, where) -> ContactReport | None:
    """The ContactReport of ``report_snapshot``'s dict, or None for None; ValueError naming
    the part (``where``) that is wrong."""
    if saved is None:
        return None
    try:
        k = len(saved["depth"])
        # (a snapshot from before contacts reported friction torques, or sliding, has none)
        saved = {"friction_torque": np.zeros((k, 3)), "sliding": np.zeros(k, dtype=bool),
                 **saved}
        report = ContactReport(*(np.array(saved[f], dtype=dtype)
                                 for f, (_, dtype) in CONTACT_FIELDS.items()))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{where} is malformed: {exc}") from None
    for f in ("body_a", "body_b"):
        check_integers(f"{where}[{f!r}]", saved[f])
    for f, (shape, _) in CONTACT_FIELDS.items():
        value = getattr(report, f)
        if value.shape != (k, *shape) or not np.all(np.isfinite(value)):
            raise ValueError(f"{where}[{f!r}] has the wrong shape or is not finite")
    for f in ("body_a", "body_b"):
        if np.any(getattr(report, f) < -1) or np.any(getattr(report, f) >= n_bodies):
            raise ValueError(f"{where}[{f!r}] names bodies this world does not have")
    return report


def checked_contact_snapshot(saved, n_bodies, where="state['contacts']"):
    """(ContactReport, (keys, multipliers)) from ``contact_snapshot``'s dict, or (None, None)
    for None; ValueError naming the part (``where``) that is wrong."""
    report = checked_report(saved, n_bodies, where)
    if report is None:
        return None, None
    try:
        keys = np.array(saved["keys"], dtype=np.int64)
        multipliers = np.array(saved["multipliers"], dtype=float)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{where} is malformed: {exc}") from None
    check_integers(f"{where}['keys']", saved["keys"])
    k = len(report)
    # (multipliers (k, 6) when the contacts had rolling or spin friction rows)
    if (keys.shape != (k,) or multipliers.shape not in ((k, 3), (k, 6))
            or not np.all(np.isfinite(multipliers))):
        raise ValueError(f"{where} keys and multipliers do not match its contacts")
    return report, (keys, multipliers)


def excluded_pairs(world) -> np.ndarray:
    """(P, 2) body rows that never collide: jointed pairs (unless allowed), where bodies welded
    together (``Fixed``) count as one body, and ignored pairs. A mass welded at a pin would
    otherwise overlap the other link of that pin and jam against it: the contact's force grew
    by 1e8 N a second and the joints reported torques twice the statics'."""
    # (a RotationLock holds no point of its bodies together: they still collide)
    joints = [j for j in world._joints if j.body_a is not None and j._joins_bodies]
    group = _welded_groups(world, [j for j in joints if isinstance(j, Fixed)])
    pairs = {frozenset((a, b)) for j in joints for a in group.get(j.body_a, (j.body_a,))
             for b in group.get(j.body_b, (j.body_b,)) if a is not b}
    pairs -= world._allowed
    pairs |= world._ignored
    rows = [sorted(b.row for b in p) for p in pairs]
    return np.array(rows, dtype=np.intp).reshape(-1, 2)


def _welded_groups(world, welds) -> dict:
    """Each body of the ``welds`` (Fixed joints between bodies): the bodies welded to it,
    directly or through a chain of welds, itself included."""
    if not welds:
        return {}
    rows = np.array([(j.body_a.row, j.body_b.row) for j in welds]).T
    graph = coo_matrix((np.ones(rows.shape[1]), rows), shape=(world._n, world._n))
    _, label = connected_components(graph, directed=False)
    members = defaultdict(list)
    for row in np.unique(rows):
        members[label[row]].append(world._handles[row])
    return {body: tuple(bodies) for bodies in members.values() for body in bodies}


def kinematic(world) -> np.ndarray:
    """(n,) bool: the static bodies that move (the user gave them a velocity or spin: they
    push and carry dynamic bodies, and nothing pushes them)."""
    n = world._n
    return (world._inv_mass[:n] == 0) & ~world._asleep[:n] & (
        nonzero_rows(world._v[:n]) | nonzero_rows(world._w[:n]))


def detect(world, model, x, R, v, h, moving, w=None):
    """This step's contacts, and the manifolds that the next step's may keep (the world's
    are last step's: ``collision.manifolds``). ``moving``: ``kinematic`` bodies, which collide
    with every body, their reach (|v| h) counted as a dynamic body's; their contacts with the
    bodies that do not move (static or asleep) are found too, so that one reaching a
    sleeping island wakes it, and dropped by the caller after that check
    (``live_contacts``). w (N, 3): the angular velocities, rad/s (their turning reaches
    further: ``collision.broadphase.turning_arm``)."""
    n = world._n
    none = np.zeros(0, dtype=np.int64)
    world._passing = (none, none)
    if not model.collides:
        return ContactSet.empty(), Manifolds.empty()
    # a body on joints turns within the step as much by them as by its spin: its contacts
    # are those of the step's start alone (``collision.turning``: a ragdoll's light hands,
    # whipped by their arms, met the ground with the contacts of their own spin's turn and
    # passed their wrists' twist limits by up to 0.35 rad at dt 1/60)
    from .sleeping import jointed_bodies      # (sleeping reads this module's reports)
    still = (world._inv_mass[:n] == 0) & ~moving
    # the still static boxes reach across the faces other still static boxes cover (a
    # floor of flush tiles meets bodies as one box: collision.internal_faces)
    centres, faces = collision_shapes(model.pair_cache, world._kind[:n], world._params[:n],
                                      x, R, moving)
    cs, manifolds = find_contacts_keeping(model.pair_cache,
                                          kept_manifolds(world._manifolds, faces), centres, R,
                                          static=still,
                                          group=world._group[:n], mask=world._mask[:n],
                                          margin=world.contact_margin, velocity=v, dt=h,
                                          spin=w, steered=jointed_bodies(world))
    mark_manifolds(manifolds, faces)
    if faces is not None and faces.grown is not None:
        cs = true_contacts(cs, faces, x, R)
    moving = fast_bodies(world, model, v * h, w, h)
    if moving is not None:
        cs, *world._passing = passing_pairs(cs, moving, world.contact_margin,
                                            model.pair_cache, centres, R, v, h)
    return cs, manifolds


def live_contacts(world, cs: ContactSet) -> ContactSet:
    """The contacts of cs that move some body (a kinematic body's contacts with static or
    sleeping bodies do not)."""
    moves = world._inv_mass[:world._n] > 0
    live = moves.take(cs.body_a) | moves.take(cs.body_b)
    return cs if live.all() else cs.take(np.flatnonzero(live))


def warm_start(world, keys: np.ndarray):
    """(K, 3) multipliers (normal, tangent 1, tangent 2) of the same contacts last step, or
    (K, 6) with the spin and the two rolling torques when last step had rows for them (zero
    where a contact had none), (K,) bool which contacts were there last step, and (K,) where
    each was among them (an index into last step's contacts, world._contacts; meaningless
    where it was not there). keys (K,) int64: the contacts' ContactSet.packed_keys (last
    step's are in world._warm)."""
    old_keys, old_lam = world._warm
    if not (old_keys.size and keys.size):
        k = keys.shape[0]
        return np.zeros((k, 3)), np.zeros(k, dtype=bool), np.zeros(k, dtype=np.intp)
    if old_keys.shape == keys.shape and (old_keys == keys).all():
        # the same contacts in the same order (a resting pile): each is its own source, no
        # sort or search (a settled 55-box pyramid, 401 contacts: 1.6 % of its step)
        k = keys.shape[0]
        return old_lam.copy(), np.ones(k, dtype=bool), np.arange(k)
    order = np.argsort(old_keys)
    sorted_keys = old_keys.take(order)
    pos = np.minimum(np.searchsorted(sorted_keys, keys), old_keys.size - 1)
    hit = sorted_keys.take(pos) == keys
    # every contact takes the multipliers found at its search position, then the misses
    # (usually few) are zeroed by index (a select over the (K, 3) array costs more)
    src = order.take(pos)
    lam = old_lam.take(src, axis=0)
    lam[(~hit).nonzero()[0]] = 0.0
    return lam, hit, src


def report(cs: ContactSet, lam: np.ndarray, frames) -> ContactReport:
    """Build the user-facing report from the contact set and its (K, 3) multipliers, or (K, 6)
    with the torque rows' (see ``warm_start``), along the rows of ``frames``
    (``contact_rows.ContactFrames``)."""
    t1, t2 = frames.tangents
    torque = np.zeros_like(cs.normal)
    if lam.shape[1] == 6:
        r1, r2 = frames.roll_tangents
        torque = lam[:, 3, None] * cs.normal + lam[:, 4, None] * r1 + lam[:, 5, None] * r2
    # the friction force column by column: numpy takes an operation on (K, 3) arrays with
    # a broadcast column 3 numbers at a time (3408 contacts: 49 against 19 us)
    friction = np.empty(cs.normal.shape)
    f1, f2 = lam[:, 1], lam[:, 2]
    for c in range(3):
        np.multiply(f1, t1[:, c], out=friction[:, c])
        friction[:, c] += f2 * t2[:, c]
    return ContactReport(cs.point, cs.normal, cs.depth - cs.lead, cs.body_a - 1, cs.body_b - 1,
                         lam[:, 0], friction, torque, frames.sliding)
