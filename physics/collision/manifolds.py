"""Contact manifolds kept from step to step: a pair of bodies that has barely moved against
each other since its narrowphase ran keeps that narrowphase's contacts instead of running it
again (the persistent contact manifolds of game engines).

Each kept contact is carried with the two bodies: its surface point on a fixed in a, its
surface point on b fixed in b, its normal fixed in a. Its depth is measured again between the
two points along the normal, so it follows the bodies exactly; only the choice of points (the
clipping of one face against another, a cylinder's rim samples) is the old one. A pair
keeps its manifold while its relative pose (b's position and orientation in a's frame) stays
within KEEP_DISTANCE and KEEP_TURN of the pose its narrowphase saw, and its margin (the
contact margin plus its closing speed times the step) within the one it was found with. A
settled 55-box pyramid moves by ~1e-8 m a step: its boxes are not clipped again until they
move by a thousand times that.

Only the pair types whose narrowphase costs many numpy calls keep manifolds (``detect``'s
``KEPT_TYPES``: box-box, cylinder-box, cylinder-cylinder), and a type some of whose pairs must
be found again keeps the others' only when they are many (``detect.PARTLY_KEPT_PAIRS``). What
is kept is in ``World.get_state``, so a snapshot replays bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property

import numpy as np

from ..math3d import einsum
from .contacts import KEY_BITS, ContactSet, pair_keys

KEEP_DISTANCE = 1e-5    # m: b's centre in a's frame
KEEP_TURN = 1e-5        # largest change of an entry of b's rotation in a's frame (~rad)


@dataclass
class Manifolds:
    """P pairs' manifolds, C contacts in all, sorted by pair key.

    key (P,) int64: the pair's ``contacts.pair_keys``; turn (P, 3, 3): b's rotation in a's
    frame when the narrowphase ran, R_a^T R_b; offset (P, 3) m: b's centre in a's frame then;
    margin (P,) m: the margin the narrowphase was given; count (P,): the pair's contacts (0: none
    within its margin), those of pair p after those of the pairs before it.
    point_a (C, 3) m: the contact's surface point on a, in a's frame; point_b (C, 3): on b, in
    b's frame; normal (C, 3): from a to b, in a's frame; feature (C,) int64."""
    key: np.ndarray
    turn: np.ndarray
    offset: np.ndarray
    margin: np.ndarray
    count: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray
    feature: np.ndarray

    @staticmethod
    def empty() -> "Manifolds":
        i, z3 = np.zeros(0, dtype=np.int64), np.zeros((0, 3))
        return Manifolds(i, np.zeros((0, 3, 3)), z3, np.zeros(0), i, z3, z3, z3, i)

    def __len__(self):
        return self.key.shape[0]

    @cached_property
    def contact_ends(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(C,) each: the pair (its index) of each contact and that pair's bodies a and b (by
        its key), read-only: made once for manifolds kept step after step (a settled pile's
        are the same object while all its pairs keep theirs)."""
        pair = np.repeat(np.arange(self.key.shape[0]), self.count)
        a, b = self.key >> KEY_BITS, self.key & ((1 << KEY_BITS) - 1)
        ends = pair, a.take(pair), b.take(pair)
        for x in ends:
            x.flags.writeable = False
        return ends

    def pairs(self, index) -> "Manifolds":
        """The manifolds of the pairs ``index`` (indices), in that order."""
        start = np.cumsum(self.count) - self.count
        count = self.count.take(index)
        contacts = _ranges(start.take(index), count)
        return Manifolds(self.key.take(index), self.turn.take(index, axis=0),
                         self.offset.take(index, axis=0), self.margin.take(index), count,
                         *(x.take(contacts, axis=0) for x in
                           (self.point_a, self.point_b, self.normal, self.feature)))

    @staticmethod
    def concatenate(parts) -> "Manifolds":
        """One set of all ``parts``' pairs, sorted by key."""
        parts = [p for p in parts if len(p)]
        if not parts:
            return Manifolds.empty()
        joined = (parts[0] if len(parts) == 1 else
                  Manifolds(*(np.concatenate([getattr(p, f) for p in parts]) for f in FIELDS)))
        key = joined.key
        return joined if (key[1:] > key[:-1]).all() else joined.pairs(np.argsort(key))


FIELDS = tuple(f.name for f in fields(Manifolds))
# per field: its shape per pair (or per contact) and dtype, as a snapshot keeps it
_PER_PAIR = {"key": ((), np.int64), "turn": ((3, 3), float), "offset": ((3,), float),
             "margin": ((), float), "count": ((), np.int64)}
_PER_CONTACT = {"point_a": ((3,), float), "point_b": ((3,), float), "normal": ((3,), float),
                "feature": ((), np.int64)}


def manifold_snapshot(manifolds: Manifolds) -> dict:
    """Copies of the manifolds' arrays by field name, as ``World.get_state`` keeps them."""
    return {f: getattr(manifolds, f).copy() for f in FIELDS}


def checked_manifolds(saved, n_bodies, where="state['manifolds']") -> Manifolds:
    """Manifolds from ``manifold_snapshot``'s dict (None: none kept, as in a snapshot from
    before they were kept), for a world of n_bodies bodies (rows 0 .. n_bodies, the world's
    fixed frame being row 0); ValueError naming the part that is wrong."""
    if saved is None:
        return Manifolds.empty()
    try:
        arrays = {f: np.array(saved[f], dtype=dtype)
                  for f, (_, dtype) in {**_PER_PAIR, **_PER_CONTACT}.items()}
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{where} is malformed: {exc}") from None
    p, c = arrays["key"].shape[0], arrays["feature"].shape[0]
    for table, size in ((_PER_PAIR, p), (_PER_CONTACT, c)):
        for f, (shape, _) in table.items():
            value = arrays[f]
            if value.shape != (size, *shape) or not np.all(np.isfinite(value)):
                raise ValueError(f"{where}[{f!r}] has the wrong shape or is not finite")
    key, count = arrays["key"], arrays["count"]
    if (np.any(count < 0) or count.sum() != c or np.any(np.diff(key) <= 0)
            or np.any(key < 0) or np.any(key >> KEY_BITS > n_bodies)
            or np.any(key & ((1 << KEY_BITS) - 1) > n_bodies)):
        raise ValueError(f"{where} keys and counts do not match its contacts or this world's "
                         f"bodies")
    return Manifolds(**arrays)


def relative_pose(pos_a, rot_a, pos_b, rot_b):
    """b's rotation (M, 3, 3) and centre (M, 3) in a's frame."""
    # R_a^T R_b as the sum of its three outer products, in einsum's order (the same bits):
    # einsum("mji,mjk->mik") takes a general loop, 13 us for a settled pyramid's 90 pairs
    # against 4 here (1000 pairs: 740 against 430 us)
    turn = rot_a[:, 0, :, None] * rot_b[:, 0, None, :]
    turn += rot_a[:, 1, :, None] * rot_b[:, 1, None, :]
    turn += rot_a[:, 2, :, None] * rot_b[:, 2, None, :]
    return turn, einsum("mji,mj->mi", rot_a, pos_b - pos_a)


def kept_pairs(manifolds: Manifolds, key, turn, offset, margin):
    """Which of M pairs (keys (M,), their relative poses (``relative_pose``) and margins (M,))
    keep their manifolds: (M,) bool, and (M,) where each is in ``manifolds`` (meaningless
    where not kept), or None where each is the pair of ``manifolds`` at its own place (the
    same keys in the same order)."""
    m = key.shape[0]
    if not len(manifolds) or not m:
        return np.zeros(m, dtype=bool), np.zeros(m, dtype=np.intp)
    if key.shape == manifolds.key.shape and bool((key == manifolds.key).all()):
        # the same pairs in the same order (a resting pile): each pair is its own, no search
        # or gathers (55 boxes: 5 calls a step saved)
        at, found = None, True
        last = manifolds.turn, manifolds.offset, manifolds.margin
    else:
        at = np.minimum(np.searchsorted(manifolds.key, key), len(manifolds) - 1)
        found = manifolds.key.take(at) == key
        last = (x.take(at, axis=0) for x in (manifolds.turn, manifolds.offset, manifolds.margin))
    last_turn, last_offset, last_margin = last
    if at is None and (np.abs(turn - last_turn).max() <= KEEP_TURN
                       and np.abs(offset - last_offset).max() <= KEEP_DISTANCE
                       and (margin <= last_margin).all()):
        # (all kept, a settled pile: the largest changes over all pairs tell, without the
        # pair by pair maxima over their short rows; 90 pairs: 11 against 17 us)
        return np.ones(m, dtype=bool), at
    moved = np.abs(turn - last_turn).reshape(m, 9).max(axis=1)
    shifted = np.abs(offset - last_offset).max(axis=1)
    kept = found & (moved <= KEEP_TURN) & (shifted <= KEEP_DISTANCE) & (margin <= last_margin)
    return kept, at


def carried_contacts(kept: Manifolds, a, b, pos_a, rot_a, pos_b, rot_b) -> ContactSet:
    """The contacts of the ``kept`` manifolds of pairs (a, b) (M,) at the bodies' poses now:
    pos (M, 3), rot (M, 3, 3) of each side."""
    pair, body_a, body_b = kept.contact_ends      # (a, b: the pairs' keys' bodies)
    ra, rb = rot_a.take(pair, axis=0), rot_b.take(pair, axis=0)
    on_a = pos_a.take(pair, axis=0) + einsum("kij,kj->ki", ra, kept.point_a)
    on_b = pos_b.take(pair, axis=0) + einsum("kij,kj->ki", rb, kept.point_b)
    normal = einsum("kij,kj->ki", ra, kept.normal)
    depth = einsum("ki,ki->k", on_a - on_b, normal)
    return ContactSet(body_a, body_b, 0.5 * (on_a + on_b), normal, depth, kept.feature)


def found_manifolds(cs: ContactSet, count, a, b, pos_a, rot_a, pos_b, rot_b, turn, offset,
                    margin):
    """Manifolds of pairs (a, b) (M,) whose narrowphase just found ``cs`` (their contacts,
    ``count`` (M,) of each pair, pair by pair) at these poses (and relative poses, as
    ``relative_pose`` gives them) with these margins (M,)."""
    pair = np.repeat(np.arange(a.shape[0]), count)
    ra, rb = rot_a.take(pair, axis=0), rot_b.take(pair, axis=0)
    half = 0.5 * cs.depth[:, None] * cs.normal
    point_a = einsum("kji,kj->ki", ra, cs.point + half - pos_a.take(pair, axis=0))
    point_b = einsum("kji,kj->ki", rb, cs.point - half - pos_b.take(pair, axis=0))
    return Manifolds(pair_keys(a, b), turn, offset, margin, count, point_a, point_b,
                     einsum("kji,kj->ki", ra, cs.normal), cs.feature)


def _ranges(start, count):
    """The indices start[i] .. start[i] + count[i] - 1, range after range."""
    total = int(count.sum())
    if not total:
        return np.zeros(0, dtype=np.intp)
    ends = np.cumsum(count)
    return np.arange(total) - np.repeat(ends - count - start, count)
