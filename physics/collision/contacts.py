"""The contact set produced by collision detection, and how narrowphases build it.

Every narrowphase returns a fixed number C of *candidate* contacts per pair (e.g. 8 box
corners) together with a validity mask; `from_candidates` flattens the valid ones. Keeping the
candidate arrays rectangular is what lets each narrowphase run without a loop over pairs.
"""
from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, fields
from functools import cache, cached_property

import numpy as np

# The bodies on one side of M pairs: pos (M, 3), rot (M, 3, 3) body->world, params (M, 4).
Shapes = namedtuple("Shapes", "pos rot params")


@dataclass
class ContactSet:
    """K contact points, all in world coordinates.

    body_a, body_b : (K,) int64   indices of the two bodies (into the find_contacts inputs)
    point          : (K, 3)       midway between the two surfaces
    normal         : (K, 3)       unit normal pointing from body a towards body b
    depth          : (K,)         penetration, m (> 0 overlapping, < 0 a speculative gap)
    feature        : (K,) int64   id of the contact point within its pair, stable from step to
                                  step, so (body_a, body_b, feature) identifies a contact for
                                  warm starting.
    lead           : (K,)         m of ``depth`` that the bodies' turn within the step adds to
                                  what their velocities at the point would make of the depth at
                                  the step's start, ``depth - lead`` (contacts of a pair that
                                  turns fast: ``turning.with_turned_contacts``); zero for the
                                  others.

    The surface point of a is ``point + normal * depth / 2`` and that of b is
    ``point - normal * depth / 2``.
    """

    body_a: np.ndarray
    body_b: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    depth: np.ndarray
    feature: np.ndarray
    lead: np.ndarray | None = None

    def __post_init__(self):
        if self.lead is None:
            self.lead = np.zeros(self.depth.shape[0])

    @classmethod
    def empty(cls) -> "ContactSet":
        i = np.zeros(0, dtype=np.int64)
        v = np.zeros((0, 3))
        return cls(i, i.copy(), v, v.copy(), np.zeros(0), i.copy())

    def __len__(self) -> int:
        return len(self.depth)

    @classmethod
    def concatenate(cls, sets) -> "ContactSet":
        sets = [s for s in sets if s.depth.shape[0]]
        if not sets:
            return cls.empty()
        if len(sets) == 1:
            return sets[0]
        # (field by field, written out: a generator of getattr calls cost ~25 calls more)
        cat = np.concatenate
        return cls(cat([s.body_a for s in sets]), cat([s.body_b for s in sets]),
                   cat([s.point for s in sets]), cat([s.normal for s in sets]),
                   cat([s.depth for s in sets]), cat([s.feature for s in sets]),
                   cat([s.lead for s in sets]))

    def take(self, index) -> "ContactSet":
        """The contacts ``index`` (indices), in that order."""
        return ContactSet(*(getattr(self, name).take(index, axis=0) for name in _FIELDS))

    @cached_property
    def packed_keys(self) -> np.ndarray:
        """(K,) int64 (pair key << KEY_BITS) | (feature mod 2^KEY_BITS): the warm-starting
        key (body_a, body_b, feature) of each contact packed into one integer (for sorting and
        searching; ``pair_keys``). Kept once computed: the step asks for them more than once."""
        return (pair_keys(self.body_a, self.body_b) << KEY_BITS) \
            | (self.feature.astype(np.int64) & ((1 << KEY_BITS) - 1))

    @property
    def pair_keys(self) -> np.ndarray:
        """(K,) int64: each contact's pair key (``pair_keys``), equal for the contacts of one
        pair of bodies."""
        return self.packed_keys >> KEY_BITS


_FIELDS = tuple(f.name for f in fields(ContactSet))
KEY_BITS = 21      # bits of a body index (and of a feature id) in the keys below


def pair_keys(a, b) -> np.ndarray:
    """(M,) int64 (a << KEY_BITS) | b: one integer for each ordered pair of bodies a, b (M,)
    (body indices below 2^KEY_BITS), as contacts (``ContactSet.packed_keys``) and kept
    manifolds (``manifolds.Manifolds``) are keyed."""
    return (np.asarray(a).astype(np.int64) << KEY_BITS) | np.asarray(b).astype(np.int64)


def from_candidates(body_a, body_b, point, normal, depth, feature, valid,
                    lead=None) -> ContactSet:
    """Flatten the valid candidates of M pairs into a ContactSet.

    body_a, body_b : (M,) body index of each pair
    point, normal  : (M, C, 3) world;  depth, feature, valid (and lead, or None: zero) : (M, C)

    A normal that is the same for all candidates of a pair may be a broadcast view (stride 0
    on that axis), and a feature table that is the same for all pairs one row (1, C) (see
    slot_features): each is then gathered from its one copy, which is cheaper than masking a
    broadcast array.
    """
    valid = np.asarray(valid)
    c = valid.shape[1]
    # index into the (M * C) candidates (np.flatnonzero is this behind two Python layers)
    flat = valid.ravel().nonzero()[0]
    rows = flat // c                        # the pair and the candidate slot of each contact
    cols = flat - rows * c                  # (a 2-d nonzero costs several times more)
    normal, feature = np.asarray(normal, dtype=np.float64), np.asarray(feature, dtype=np.int64)
    # gathers by take (numpy's boolean and fancy indexing of rows is several times slower)
    return ContactSet(
        body_a=np.asarray(body_a, dtype=np.int64).take(rows),
        body_b=np.asarray(body_b, dtype=np.int64).take(rows),
        point=_flat(point).take(flat, axis=0),
        normal=(normal[:, 0].take(rows, axis=0) if normal.strides[1] == 0
                else _flat(normal).take(flat, axis=0)),
        depth=np.asarray(depth, dtype=np.float64).reshape(-1).take(flat),
        feature=(feature[0].take(cols) if feature.shape[0] == 1
                 else feature.reshape(-1).take(flat)),
        lead=None if lead is None else lead.reshape(-1).take(flat),
    )


@cache
def slot_features(c):
    """(1, C) int64 feature ids 0 .. C-1, one row for all pairs (read-only, made once per C):
    the ids of a narrowphase whose candidate slot k is the same feature in every pair (a box
    corner, a rim sample, a segment end)."""
    row = np.arange(c, dtype=np.int64)[None]
    row.flags.writeable = False
    return row


def point_or_ends_features(along):
    """(M, 3) int64 feature ids of a narrowphase whose candidates are one point (slot 0) or
    the two ends (slots 1, 2) of b's segment clipped along a feature of a, numbered by along
    (M,) int (a box face, a cylinder's cap or side): 0, and 1 + 2 along + {0, 1}."""
    ends = 1 + 2 * np.asarray(along, dtype=np.int64)[:, None] + np.arange(2)
    return np.concatenate([np.zeros((len(ends), 1), dtype=np.int64), ends], axis=1)


def single_candidate(point, normal, depth, margin):
    """The candidates (C = 1, feature 0) of M pairs that have one contact each: point,
    normal (M, 3) world, depth and margin (M,), as a narrowphase returns them."""
    return (point[:, None], normal[:, None], depth[:, None], slot_features(1),
            (depth >= -margin)[:, None])


def _flat(x):
    """(M, C, 3) -> (M * C, 3) float64 (a view when x is contiguous)."""
    return np.asarray(x, dtype=np.float64).reshape(-1, 3)


def deepest_candidates(depth, valid):
    """The deepest valid candidate of each of M pairs (depth, valid (M, C)): its slot (M,)
    and its depth (M,), -inf for a pair with none."""
    score = np.where(valid, depth, -np.inf)
    slot = score.argmax(axis=1)
    return slot, np.take_along_axis(score, slot[:, None], axis=1)[:, 0]


def keep_deepest(depth, valid, k):
    """Among C candidates per pair keep at most the k deepest valid ones.

    depth, valid : (M, C). Returns the new (M, C) validity mask.
    """
    # (a bool sum is the count; np.count_nonzero along an axis costs ~10 Python calls more)
    if valid.shape[1] <= k or (valid.sum(axis=1) <= k).all():
        return valid            # (a box resting flat on a plane has exactly 4)
    score = np.where(valid, depth, -np.inf)
    # Rank of each candidate by depth (0 = deepest); ties broken by candidate order so that
    # the choice is repeatable from step to step.
    order = np.argsort(-score, axis=1, kind="stable")
    rank = np.argsort(order, axis=1)                 # inverse permutation: order's rank
    return valid & (rank < k)
