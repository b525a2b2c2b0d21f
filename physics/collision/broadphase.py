"""Broadphase: which pairs of bodies may be in contact.

Bounded shapes (sphere, box, capsule, cylinder) are paired by a vectorised sweep-and-prune on
world axis-aligned bounding boxes; planes, being unbounded, are tested against every movable
body by the body's support distance. Then the pair filters: two static bodies never collide,
group/mask bits, excluded pairs.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..shapes import BOX, CAPSULE, CYLINDER, PLANE, SPHERE
from .geometry import einsum


BOUNDED_KINDS = (SPHERE, BOX, CAPSULE, CYLINDER)


def kind_groups(kind, bodies):
    """[(k, rows)]: the rows of ``bodies`` (an index array) whose shape is of bounded kind k,
    for the kinds present. The per-kind formulas below run on each group alone (computing
    every formula for every body and picking with np.where/np.select cost more than the
    work for a few dozen bodies)."""
    kb = kind.take(bodies)
    groups = [(k, (kb == k).nonzero()[0]) for k in BOUNDED_KINDS]
    return [(k, rows) for k, rows in groups if len(rows)]


def _kind_extents(k, params, rotation):
    """(M, 3) world AABB half sizes of M shapes of one bounded kind k."""
    if k == BOX:
        return einsum("nij,nj->ni", np.abs(rotation), params[:, :3])
    r = params[:, 0:1]
    if k == SPHERE:
        return np.broadcast_to(r, (len(r), 3))
    hl, axis = params[:, 1:2], np.abs(rotation[:, :, 2])      # the local z axis, world
    if k == CAPSULE:
        return r + hl * axis
    # A disc of radius r perpendicular to unit a spans r sqrt(1 - a_k^2) along axis k.
    return hl * axis + r * np.sqrt(np.maximum(0.0, 1.0 - axis**2))


def _kind_radius(k, params):
    """(M,) radius of a sphere about the centre that holds each of M shapes of kind k."""
    r, hl = params[:, 0], params[:, 1]
    if k == SPHERE:
        return r
    if k == BOX:
        return np.sqrt(einsum("ni,ni->n", params[:, :3], params[:, :3]))
    if k == CAPSULE:
        return r + hl
    return np.sqrt(r * r + hl * hl)


def _grouped(kind_fn, groups, shape, *per_body):
    """kind_fn (_kind_extents, _kind_support or _kind_radius) of grouped bodies (a
    PairCache's paired_groups or plane_groups, or _body_groups: kind, rows, bodies, params,
    then kind_fn's further arguments), into an array of ``shape`` (0 in rows of no group).
    per_body: (N, ...) arrays (the rotations) whose bodies' rows kind_fn takes after params.
    With a single group of all rows, kind_fn's result as it is (it may be a view)."""
    if len(groups) == 1 and len(groups[0][1]) == shape[0]:     # one kind (a pile of capsules)
        k, _, bodies, params, *extra = groups[0]
        return kind_fn(k, params, *(a.take(bodies, axis=0) for a in per_body), *extra)
    out = np.zeros(shape)
    for k, rows, bodies, params, *extra in groups:
        out[rows] = kind_fn(k, params, *(a.take(bodies, axis=0) for a in per_body), *extra)
    return out


def _groups(kind, bodies, params, *per_row):
    """The groups (see _grouped) of ``bodies`` (M,) by bounded kind: kind, rows among
    ``bodies``, their bodies, those bodies' params, and each of ``per_row`` (M, ...) at rows."""
    out = []
    for k, rows in kind_groups(kind, bodies):
        at = bodies.take(rows)
        out.append((k, rows, at, params.take(at, axis=0),
                    *(x.take(rows, axis=0) for x in per_row)))
    return out


def _body_groups(kind, params):
    """The groups (see _grouped) of all N bodies by bounded kind."""
    return _groups(kind, np.arange(len(kind)), params)


def bounding_radius(kind, params):
    """(N,) radius of a sphere about each body's centre that holds its shape (0: unbounded)."""
    return _grouped(_kind_radius, _body_groups(kind, params), (len(kind),))


def _kind_turning_arm(k, params):
    """(M,) how fast (m/s per rad/s) turning can move M shapes of kind k towards another
    body: the farthest reach of their surface that turning about the centre moves (a
    sphere's none, a capsule's segment end, a box's corner, a cylinder's rim)."""
    if k == SPHERE:
        return np.zeros(params.shape[0])
    if k == CAPSULE:
        return params[:, 1].copy()
    return _kind_radius(k, params)


def turning_arm(kind, params):
    """(N,) m: ``_kind_turning_arm`` of each body (0 for planes and bodies without shape)."""
    return _grouped(_kind_turning_arm, _body_groups(kind, params), (len(kind),))


def _kind_core_radius(k, params):
    """(M,) m: the radius of the largest sphere about the centre of M shapes of kind k
    inside them (a box's smallest half extent, a cylinder's smaller of radius and half
    length)."""
    if k == BOX:
        return params[:, :3].min(axis=1)
    if k == CYLINDER:
        return np.minimum(params[:, 0], params[:, 1])
    return params[:, 0].copy()


def core_radius(kind, params):
    """(N,) m: ``_kind_core_radius`` of each body (infinite for planes and bodies without
    shape: they never count as having moved far for their size)."""
    out = np.full(len(kind), np.inf)
    for k, rows, _, group_params in _body_groups(kind, params):
        out[rows] = _kind_core_radius(k, group_params)
    return out


def _kind_support(k, params, rotation, n):
    """(M,) how far M shapes of one bounded kind k reach from their centres along -n."""
    if k == BOX:
        return einsum("nk,nk->n", np.abs(einsum("ni,nik->nk", n, rotation)),
                         params[:, :3])
    r = params[:, 0]
    if k == SPHERE:
        return r
    hl, na = params[:, 1], np.abs(einsum("ni,ni->n", rotation[:, :, 2], n))
    if k == CAPSULE:
        return r + hl * na
    return hl * na + r * np.sqrt(np.maximum(0, 1 - na**2))


# From this many first-axis overlaps a sweep tests them as one dense block; below, the lists
# of pairs stay under the size at which their temporaries are page-faulted in afresh and cost
# less than the block's setup (random crowds: 16k overlaps 112 us by lists, 137 us by block;
# 25k 427 against 153 us).
BLOCK_SWEEP_PAIRS = 16384
# What a first-axis overlap left to the per-pair lists costs against a cell of the dense block
# (measured on the 1000-sphere bin: ~8 ns a pair through the lists' gathers, ~2 ns a cell).
LONG_ROW_COST = 4.0


def sweep_and_prune(lo, hi, ids=None):
    """All pairs (i, j) (i != j, each pair once) of boxes [lo, hi] (n, 3) that overlap.

    Sort by the lower bound on the axis where the centres spread most; a box's partners further
    along the sort are the contiguous run whose lower bound is <= its upper bound, found with
    one searchsorted. Those runs are then tested on the other two axes: few, as lists of pairs
    (_sweep_lists); many, as a dense block (_sweep_block). ids: the boxes' numbers in the
    pairs (default: rows).
    """
    n = len(lo)
    # the axis of largest variance of the centres, n^2 var = n sum c^2 - (sum c)^2 (np.var's
    # Python layers cost more than this whole sweep for a hundred bodies)
    s = lo + hi
    axis = int((n * np.add.reduce(s * s, axis=0) - np.add.reduce(s, axis=0) ** 2).argmax())
    order = np.argsort(lo[:, axis], kind="stable")
    slo, shi = lo[order], hi[order]
    end = np.searchsorted(slo[:, axis], shi[:, axis], side="right")
    count = np.maximum(end - np.arange(1, n + 1), 0)
    others = [k for k in (0, 1, 2) if k != axis]
    if count.sum() <= BLOCK_SWEEP_PAIRS:
        first, second = _sweep_lists(slo, shi, np.arange(n), count, 1, others)
    else:
        first, second = _sweep_block(slo, shi, count, others)
    if ids is not None:
        order = ids.take(order)
    return order.take(first), order.take(second)


def _sweep_lists(slo, shi, owner, count, skip, others):
    """The overlapping pairs (first, second) of sorted boxes slo, shi among the runs: box
    owner[m] against boxes owner[m] + skip ... owner[m] + skip + count[m] - 1.

    The runs are expanded to pairs with repeat/cumsum and filtered on the other two axes, one
    axis at a time on 1-d columns (much faster than (K, 3) gathers), with take and compress
    (numpy's fancy and boolean indexing are several to 10x slower on these long index arrays).
    """
    first = np.repeat(owner, count)
    # second = first + skip + (position within the run of `first`)
    second = np.arange(len(first)) - np.repeat(np.cumsum(count) - count - owner - skip, count)
    for k in others:
        lo_k, hi_k = np.ascontiguousarray(slo[:, k]), np.ascontiguousarray(shi[:, k])
        keep = (lo_k.take(first) <= hi_k.take(second)) & (lo_k.take(second) <= hi_k.take(first))
        first, second = first.compress(keep), second.compress(keep)
    return first, second


def _block_width(count):
    """The width w of the dense block: each run's first w partners go in the block (n * w
    cells), the rest of longer runs (a few wide bodies, such as a bin's walls) to the lists;
    the w of least cost by LONG_ROW_COST."""
    ranked = np.sort(count)
    # beyond[t]: sum of max(count - ranked[t], 0)
    beyond = np.cumsum(ranked[::-1])[::-1] - ranked * np.arange(len(ranked), 0, -1)
    return int(ranked[int((len(ranked) * ranked + LONG_ROW_COST * beyond).argmin())])


def _sweep_block(slo, shi, count, others):
    """_sweep_lists of every run, as an (n, w) block: row r holds box r against boxes
    r + 1 ... r + w, read through strided windows on the sorted columns (no index arrays, no
    gathers), cells past the run masked out; the runs longer than w go on in _sweep_lists.
    The same comparisons of the same numbers as _sweep_lists, so the same pairs."""
    n = len(slo)
    w = _block_width(count)
    long_rows = (count > w).nonzero()[0]
    f, s = _sweep_lists(slo, shi, long_rows, count.take(long_rows) - w, 1 + w, others)
    if not w:
        return f, s
    # each row's cells within its run (16-bit columns compare 4x faster than 64-bit ones)
    column = np.int16 if w < 2**15 else np.int64
    keep = np.arange(w, dtype=column)[None] < np.minimum(count, w).astype(column)[:, None]
    test = np.empty((n, w), bool)
    # lo and hi of the other two axes in sort order, padded so that every row's window
    # of w lies inside (the padding is masked out)
    cols = np.zeros((4, n + w))
    for m, k in enumerate(others):
        cols[2 * m, :n], cols[2 * m + 1, :n] = slo[:, k], shi[:, k]
    step = cols.itemsize
    for m in range(2):
        lo_k, hi_k = cols[2 * m, :n, None], cols[2 * m + 1, :n, None]
        window = np.ndarray((n, w), float, buffer=cols, strides=(step, step),
                            offset=step * ((2 * m + 1) * (n + w) + 1))
        np.less_equal(lo_k, window, out=test)
        keep &= test
        window = np.ndarray((n, w), float, buffer=cols, strides=(step, step),
                            offset=step * (2 * m * (n + w) + 1))
        np.less_equal(window, hi_k, out=test)
        keep &= test
    # cell (r, c) is the pair (r, r + 1 + c); the long rows' pairs follow
    cell = np.flatnonzero(keep)
    first = cell // w
    second = cell - first * (w - 1) + 1
    return np.concatenate((first, f)), np.concatenate((second, s))


def _equal(a, b):
    """np.array_equal of two arrays, without its Python layers (a few microseconds)."""
    return a.shape == b.shape and bool((a == b).all())


def groups_collide(i, j, group, mask):
    """(M,) bool: the pairs (i, j) whose collision group and mask bits let them collide."""
    return ((group.take(i) & mask.take(j)) != 0) & ((group.take(j) & mask.take(i)) != 0)


def pair_key(i, j, n, dtype=np.int64):
    """(M,) order-free keys min(i, j) * n + max(i, j) of pairs of rows i, j (M,) among n
    bodies: one key per unordered pair, and divmod(key, n) gives (min, max) back. dtype:
    int64, or int32 where n * n fits (sorted_pairs: numpy sorts those twice as fast)."""
    key = np.minimum(i, j).astype(dtype, copy=False)
    key *= n
    key += np.maximum(i, j).astype(dtype, copy=False)
    return key


def _not_excluded(keys, excluded_keys):
    """(M,) bool: the pairs, by their pair_key, that are not among the (sorted) excluded_keys:
    a binary search per pair."""
    if not len(excluded_keys):
        return np.ones(len(keys), dtype=bool)
    pos = np.minimum(np.searchsorted(excluded_keys, keys), len(excluded_keys) - 1)
    return excluded_keys[pos] != keys


def excluded_keys(excluded_pairs, n):
    """The sorted int64 pair_key of each excluded pair (P, 2) of rows among n bodies."""
    if excluded_pairs is None:
        return np.zeros(0, dtype=np.int64)
    e = np.asarray(excluded_pairs, dtype=np.int64).reshape(-1, 2)
    return np.unique(pair_key(e[:, 0], e[:, 1], n))


# A PairCache's skin: a fifth of the body's bounding radius, the contact margin and SKIN_STEPS
# times its reach |v| dt, so a body moving steadily keeps its candidates for about SKIN_STEPS - 1
# steps. Measured on 10 falling ragdolls (steps 120-168): 2 swept 21 times in 48 steps (0.28 ms
# a step in the broadphase), 8 swept 6 times (0.18 ms); more saved little (16: 4 times, 0.17).
SKIN_RADIUS = 0.2
SKIN_STEPS = 8.0


class Sweep(NamedTuple):
    """A PairCache's last sweep: the positions (N, 3) m it was made at, the skins (N,) m,
    the contact margin m, which bodies were static (N,) bool, and the candidates (i, j, plane,
    body) (see PairCache.candidates)."""
    anchor: np.ndarray
    skin: np.ndarray
    margin: float
    static: np.ndarray
    pairs: tuple

    def without_rows(self, removed) -> "Sweep":
        """This sweep once the bodies ``removed`` (removal.RemovedRows) are gone and the
        bodies after them have moved down (their pairs dropped, the others renumbered: their
        order stays sorted)."""
        removed = removed.before(len(self.anchor))
        if removed is None:
            return self
        pairs = []
        for first, second in (self.pairs[:2], self.pairs[2:]):
            keep = ~(removed.among(first) | removed.among(second))
            first, second = first.compress(keep), second.compress(keep)
            pairs += [removed.moved_down(first), removed.moved_down(second)]
        rows = removed.rows
        return Sweep(np.delete(self.anchor, rows, axis=0), np.delete(self.skin, rows),
                     self.margin, np.delete(self.static, rows), tuple(pairs))


# Up to this many (appended body, body) cells a PairCache carried over appended bodies tests
# them against every body (PairCache.carrying); beyond (many bodies added at once), it sweeps.
APPENDED_SWEEP_CELLS = 1 << 18


class PairCache:
    """Candidate pairs of one set of bodies that stay valid while the bodies stay near where
    they were found.

    The pairs are swept once with each body's bounding sphere grown by a skin (see SKIN_STEPS);
    until some body has moved (plus its reach |v| dt) more than its skin, every pair the exact
    sweep would find is among them, so a step only re-tests those (the Verlet-list idea of
    molecular dynamics). Static bodies have no skin: a static body that is moved (by the user
    or a scene) brings a new sweep, as do a new contact margin and a change of which bodies
    are static (a static body given a velocity is not: it is kinematic). The result is the same as a
    fresh sweep and in the same (sorted) order, so replays stay bitwise exact.

    Made for N bodies whose shapes and excluded pairs are fixed for the cache's lifetime:
    kind (N,) int shape kinds and params (N, 4) (physics.shapes; kept, not copied, so they
    must not be changed in place), excluded_pairs (P, 2) rows that never collide, in either
    order (or None). The one change of shape it takes is ``reshape``'s (static boxes grown
    across internal faces, centred off their bodies' centres: ``centres``; see
    internal_faces), which starts it from no sweep. What follows from them alone (bounding
    radii, the bounded bodies, the planes, the excluded pairs' keys) is computed here once.
    The step's cache is made with the
    compiled Model, which is made anew when bodies are added or removed or a pair is ignored
    or allowed (a new cache carries the old one's sweep over bodies on no joint added or
    removed: ``carrying``). Along with the pairs it keeps what the per-step re-test needs
    and what does not change until the next sweep: the bodies in body pairs grouped by kind,
    and the plane pairs' normals, offsets and bodies grouped by kind."""

    def __init__(self, kind, params, excluded_pairs=None):
        self.kind = np.asarray(kind)
        self.excluded_keys = excluded_keys(excluded_pairs, len(self.kind))
        # the rows of the static boxes (set by the step's model: which bodies are static is
        # fixed while the cache lives), and the internal faces they were grown across
        # (internal_faces.collision_shapes)
        self.static_boxes = np.zeros(0, dtype=np.intp)
        self.faces = None
        self.reshape(params, None)
        self.own_radius = self.radius     # m: the bodies' own shapes' (ray casts cull by it)

    def reshape(self, params, offset, boxes=None):
        """Make the cache's shapes params (N, 4), with centres offset (N, 3) m in their
        bodies' frames (or None: none), and start from no sweep (static boxes grown across
        the faces other static boxes cover: ``internal_faces``). boxes: the rows whose shapes
        changed, all boxes (None: any may have)."""
        self.params = np.asarray(params, dtype=float)
        self.offset = offset
        if boxes is None:
            self.radius = bounding_radius(self.kind, self.params)   # m, 0 for unbounded kinds
            self.turning_arm = turning_arm(self.kind, self.params)  # m (detect's reach)
            self.core_radius = core_radius(self.kind, self.params)  # m (continuous collision)
        else:
            # (a spawned body's new cache grows the floor it carries without every body's
            # radii made twice: ~60 numpy calls)
            half = self.params.take(boxes, axis=0)
            self.radius, self.turning_arm, self.core_radius = (
                x.copy() for x in (self.radius, self.turning_arm, self.core_radius))
            self.radius[boxes] = self.turning_arm[boxes] = _kind_radius(BOX, half)
            self.core_radius[boxes] = _kind_core_radius(BOX, half)
        self.bounded = np.flatnonzero((self.kind >= SPHERE) & (self.kind < PLANE))
        self.planes = np.flatnonzero(self.kind == PLANE)
        self.anchor = None          # the positions (N, 3) of the last sweep; None before it
        self.paired = None          # the bodies in its candidate pairs (_keep_pairs)
        # find_pairs' last answer: (the candidates it re-tested, which of the body pairs and
        # of the plane pairs it kept, the pairs (i, j, pp, pb)); None before the first
        self.found = None
        self.typed = None           # detect's TypedPairs of those pairs (detect._typed_pairs)

    def centres(self, rows, position, rotation):
        """(M, 3) m: the centres of the shapes of bodies ``rows`` (M,) (or a slice) whose
        centres of mass are ``position`` (M, 3) m, turned by ``rotation`` (M, 3, 3) (see
        ``reshape``)."""
        if self.offset is None:
            return position
        return position + einsum("nij,nj->ni", rotation, self.offset[rows])

    def candidates(self, position, static, margin, reach):
        """(i, j, plane, body) candidates containing every pair within reach this step.
        position (N, 3) m world centres; static (N,) bool (planes included); margin m; reach
        (N,) m, see find_pairs."""
        # (a static body that starts or stops moving, kinematic, changes which pairs count)
        swept = 0 if self.anchor is None else len(self.anchor)
        if (swept and margin == self.margin
                and _equal(static[:swept], self.static)):
            moved = position[:swept] - self.anchor
            moved = np.sqrt(einsum("ni,ni->n", moved, moved))
            if (moved + reach[:swept] <= self.skin).all():
                if swept == len(self.kind):
                    # (a sweep carried over removed bodies: what the re-tests need is made
                    # on first use)
                    return (self.pairs if self.paired is not None
                            else self._keep_pairs(*self.pairs))
                return self._appended_swept(position, static, margin, reach)
        radius, n = self.radius, len(self.kind)
        self.skin = np.where(static, 0.0, SKIN_RADIUS * radius + margin + SKIN_STEPS * reach)
        self.margin, self.static = margin, static.copy()
        grow = radius + self.skin + 0.5 * margin     # (the skin is 0 on static bodies)
        c, g = position.take(self.bounded, axis=0), grow.take(self.bounded)[:, None]
        i, j = sweep_and_prune(c - g, c + g, self.bounded)
        # the excluded pairs (jointed bodies) are fixed with the cache: dropped now
        keys = self.excluded_keys
        i, j, pp, pb = sorted_pairs(i, j, self.bounded, self.planes, static, keys, n)
        pp, pb = self._near_planes(pp, pb, position, margin)
        self.anchor = position.copy()
        return self._keep_pairs(i, j, pp, pb)

    @property
    def sweep(self) -> "Sweep | None":
        """The last sweep (None before the first), to carry to the cache of the same bodies
        with others appended or some removed (``carrying``)."""
        if self.anchor is None:
            return None
        return Sweep(self.anchor, self.skin, self.margin, self.static, self.pairs)

    def carrying(self, sweep: "Sweep | None") -> "PairCache":
        """This cache (returned) starts from ``sweep``, the sweep of its first bodies (see
        ``Sweep``), the rest appended after them with no excluded pairs and no planes among
        them: while the swept bodies stay within their skins, its candidates stand and the
        appended bodies are swept alone against them (``_appended_swept``). (Sweeping all
        again cost the step after a spawned bullet 1.3-1.8 ms for 100-1600 spheres.)"""
        if sweep is None:
            return self
        appended = self.kind[len(sweep.anchor):]
        cells = len(appended) * len(self.kind)
        if not (appended == PLANE).any() and cells <= APPENDED_SWEEP_CELLS:
            self.anchor, self.skin, self.margin, self.static, self.pairs = sweep
        return self

    def _appended_swept(self, position, static, margin, reach):
        """The candidates, the last sweep's (of the bodies before ``self.anchor`` ends) with
        the appended bodies' pairs added: each appended bounded body against every bounded
        body before it, by the boxes the sweep grows (at the anchor for the swept bodies),
        and against the planes. Arguments as ``candidates``."""
        swept, n, radius = len(self.anchor), len(self.kind), self.radius
        skin = SKIN_RADIUS * radius[swept:] + margin + SKIN_STEPS * reach[swept:]
        self.skin = np.concatenate([self.skin, np.where(static[swept:], 0.0, skin)])
        self.static = static.copy()
        self.anchor = np.concatenate([self.anchor, position[swept:]])
        grow = (radius + self.skin + 0.5 * margin)[:, None]
        lo, hi = self.anchor - grow, self.anchor + grow
        bounded = self.bounded
        new = bounded.compress(bounded >= swept)
        # (k, B): appended body against bounded body, each pair once (the other before it)
        lo_b, hi_b = lo.take(bounded, axis=0)[None], hi.take(bounded, axis=0)[None]
        overlap = ((lo.take(new, axis=0)[:, None] <= hi_b)
                   & (lo_b <= hi.take(new, axis=0)[:, None])).all(axis=2)
        overlap &= bounded[None] < new[:, None]
        at, other = overlap.nonzero()                    # (sorted by appended body, other)
        q, p = new.take(at), bounded.take(other)
        moving = ~(static.take(p) & static.take(q))
        keys = self.excluded_keys
        moving &= _not_excluded(pair_key(p, q, n), keys)
        p, q = p.compress(moving), q.compress(moving)
        i, j, pp, pb = self.pairs
        # pairs (min, max) sorted by min then max: an appended body is the max of its pairs,
        # after every pair of the same min
        order = np.lexsort((q, p))
        p, q = p.take(order), q.take(order)
        at = np.searchsorted(i, p, side="right")
        i, j = np.insert(i, at, p), np.insert(j, at, q)
        movers = new.compress(~static.take(new))
        planes = self.planes
        npp, npb = self._near_planes(planes[None].repeat(len(movers), axis=0).ravel(),
                                     movers.repeat(len(planes)), position, margin)
        return self._keep_pairs(i, j, np.concatenate([pp, npp]), np.concatenate([pb, npb]))

    def _near_planes(self, pp, pb, position, margin):
        """The plane pairs (plane pp, body pb) whose body's skin may reach the plane, and
        that are not excluded."""
        if not len(pp):
            return pp, pb
        params, radius = self.params, self.radius
        gap = einsum("mi,mi->m", params[pp, :3], position[pb]) - params[pp, 3] - radius[pb]
        near = ((gap <= margin + 2.0 * self.skin[pb])
                & _not_excluded(pair_key(pp, pb, len(self.kind)), self.excluded_keys))
        return pp[near], pb[near]

    def _keep_pairs(self, i, j, pp, pb):
        """Keep the candidates (i, j, pp, pb) and what the re-tests need of them; return
        them."""
        kind, params, n = self.kind, self.params, len(self.kind)
        self.pairs = (i, j, pp, pb)
        in_pairs = np.zeros(n, dtype=bool)
        in_pairs[i] = in_pairs[j] = True
        self.paired = np.flatnonzero(in_pairs)             # sorted, as np.unique would give
        # the pairs by rows of paired: i (sorted) is paired.repeat(first_runs), j is
        # paired.take(second_near)
        near = np.cumsum(in_pairs) - 1
        self.first_runs = np.bincount(near.take(i), minlength=len(self.paired))
        self.second_near = near.take(j)
        # per kind: its rows among paired, their bodies and their (fixed) params
        self.paired_groups = _groups(kind, self.paired, params)
        self.plane_normal = params[pp, :3]
        self.plane_offset = params[pp, 3]
        # per kind of the plane pairs' bodies: its rows among the plane pairs, their bodies,
        # params and plane normals
        self.plane_groups = _groups(kind, pb, params, self.plane_normal)
        self.group_mask = None          # the candidates' group/mask filter, made on first use
        return self.pairs

    def group_filter(self, group, mask):
        """(body pairs, plane pairs) (M,) bool: which candidates the group/mask bits let
        collide, or None where all of them do. Bodies' bits can change at any time, so they
        are compared with those the filter was made for (two array comparisons instead of
        eight gathers and a dozen operations per step)."""
        made = self.group_mask
        if made is None or not (_equal(made[0], group) and _equal(made[1], mask)):
            (i, j, pp, pb), filters = self.pairs, []
            for a, b in ((i, j), (pp, pb)):
                ok = groups_collide(a, b, group, mask)
                filters.append(None if ok.all() else ok)
            made = self.group_mask = (group.copy(), mask.copy(), *filters)
        return made[2], made[3]


# Up to this many pairs _boxes_overlap gathers both boxes of all pairs as (6, K) arrays in two
# calls; above, each axis on its own (measured on 1000 bodies: 2700 pairs 18 us vs 25 us, 5500
# pairs 28-29 vs 34-35 us, 10000 pairs 49 vs 50 us, 20000 pairs 92-95 vs 85-86 us; and
# without physics.keep_freed_memory() the (6, K) temporaries of 20000 pairs are faulted in
# afresh on every call: 780 vs 84 us).
JOINT_GATHER_PAIRS = 8192


def _boxes_overlap(box, first_runs, second_near):
    """(K,) bool: whether the boxes of each pair overlap. box (6, M) rows lo x, y, z, hi x, y, z
    of M bodies; the pairs' first bodies are arange(M).repeat(first_runs) (sorted, so their
    gathers are repeats, cheaper than take) and their second bodies second_near."""
    if len(second_near) <= JOINT_GATHER_PAIRS:
        box_i, box_j = box.repeat(first_runs, axis=1), box.take(second_near, axis=1)
        overlap = box_i[:3] <= box_j[3:]
        overlap &= box_j[:3] <= box_i[3:]
        keep = overlap[0] & overlap[1]
        keep &= overlap[2]
        return keep
    keep = None
    for k in range(3):
        lo, hi = box[k], box[3 + k]
        overlap = ((lo.repeat(first_runs) <= hi.take(second_near))
                   & (lo.take(second_near) <= hi.repeat(first_runs)))
        keep = overlap if keep is None else keep & overlap
    return keep


def find_pairs(cache: PairCache, position, rotation, static, group, mask, margin, reach):
    """Candidate pairs of the cache's bodies, (i, j) int64 arrays sorted by (min, max) body,
    and plane pairs (plane, body) sorted by body then plane: the cache's candidates (static
    and excluded pairs already left out) re-tested with this step's exact boxes and plane
    distances.

    position (N, 3) m world centres; rotation (N, 3, 3) body->world; static (N,) bool, planes
    included (two static bodies never collide); group, mask (N,) int bits (see
    groups_collide); margin m; reach (N,) m extra distance per body (|v| dt for fast dynamic
    bodies, 0 otherwise): a pair is returned if its shapes may be within margin + reach_i +
    reach_j of each other. A cache kept between steps sweeps only when a body has left its
    skin (see PairCache); a fresh one sweeps.
    """
    candidates = i, j, pp, pb = cache.candidates(position, static, margin, reach)
    group_ok, plane_group_ok = cache.group_filter(np.asarray(group, np.int64),
                                                  np.asarray(mask, np.int64))
    keep_pairs = keep_planes = None
    if len(i):      # the exact boxes of the bodies in candidate pairs only
        near = cache.paired
        ext = (_grouped(_kind_extents, cache.paired_groups, (len(near), 3), rotation)
               + (0.5 * margin + reach.take(near))[:, None]).T
        # the boxes by axis, (6, M) rows lo x, y, z, hi x, y, z over the paired bodies
        centre = position.take(near, axis=0).T
        box = np.empty((6, len(near)))
        np.subtract(centre, ext, out=box[:3])
        np.add(centre, ext, out=box[3:])
        keep = _boxes_overlap(box, cache.first_runs, cache.second_near)
        if group_ok is not None:
            keep &= group_ok
        keep_pairs = keep
    if len(pp):
        nrm = cache.plane_normal
        gap = (einsum("mi,mi->m", nrm, position.take(pb, axis=0)) - cache.plane_offset
               - _grouped(_kind_support, cache.plane_groups, (len(pb),), rotation))
        keep = gap <= margin + reach.take(pb)
        if plane_group_ok is not None:
            keep &= plane_group_ok
        keep_planes = keep
    # the same candidates kept as last step (a resting pile): last step's pairs, the same
    # objects, so that detect keeps what it made of them (``detect._typed_pairs``)
    last = cache.found
    if (last is not None and last[0] is candidates and _same_mask(last[1], keep_pairs)
            and _same_mask(last[2], keep_planes)):
        return last[3]
    if keep_pairs is not None:
        i, j = i.compress(keep_pairs), j.compress(keep_pairs)
    if keep_planes is not None:
        pp, pb = pp.compress(keep_planes), pb.compress(keep_planes)
    pairs = i, j, pp, pb
    for x in pairs:             # (handed out again while the same: not to be written to)
        x.flags.writeable = False
    cache.found = (candidates, keep_pairs, keep_planes, pairs)
    return pairs


def _same_mask(a, b):
    """Whether two masks of find_pairs' re-test (bool arrays, or None where there were no
    candidates) are equal."""
    return a is b or (a is not None and b is not None and _equal(a, b))


def near_one(kind, params, position, rotation, row, others, margin):
    """(M,) bool: which bodies ``others`` (M,) rows may touch body ``row`` now: a bounded
    body's world bounding box, grown by margin / 2 (m) on each body as ``find_pairs`` grows
    them, overlaps theirs; a plane reaches within ``margin`` of their shapes. kind (N,),
    params (N, 4), position (N, 3) m, rotation (N, 3, 3): every body's. A body without a
    shape touches nothing, and planes touch no plane. (For an edit between steps, which
    builds no PairCache: a static body moved into sleeping ones.)"""
    near = np.zeros(len(others), dtype=bool)
    if not (SPHERE <= kind[row] <= PLANE):
        return near
    bounded = np.flatnonzero((kind.take(others) >= SPHERE) & (kind.take(others) < PLANE))
    if kind[row] == PLANE:
        normal, offset = params[row, :3], params[row, 3]
        groups = _groups(kind, others, params, np.broadcast_to(normal, (len(others), 3)))
        reach = _grouped(_kind_support, groups, (len(others),), rotation)
        gap = position.take(others, axis=0) @ normal - offset - reach
        near[bounded] = gap.take(bounded) <= margin
        return near
    extent = _kind_extents(kind[row], params[row:row + 1], rotation[row:row + 1])[0] + margin
    theirs = _grouped(_kind_extents, _groups(kind, others, params), (len(others), 3), rotation)
    apart = np.abs(position.take(others, axis=0) - position[row]) > extent + theirs
    near[bounded] = ~apart.take(bounded, axis=0).any(axis=1)
    return near


def sorted_pairs(i, j, bounded, planes, static, excluded_keys, n):
    """The body pairs (i, j) that are neither both static nor excluded, as (min, max) sorted
    by their pair_key, and every plane with every movable body among ``bounded``, sorted by
    body then plane."""
    # 32-bit keys where they fit: numpy's SIMD sort takes half the time on them (40k keys:
    # 66 against 123 us)
    key = pair_key(i, j, n, np.int32 if n * n < 2**31 else np.int64)
    key = key.compress(~(static.take(i) & static.take(j)) & _not_excluded(key, excluded_keys))
    # each pair occurs once, so the keys are distinct: a plain sort of the keys gives the
    # order (numpy's SIMD sort; a stable argsort and two gathers cost 20x more)
    key.sort()
    # (divmod by hand: np.divmod into int64 took 40 us for 20k int32 keys, this 19)
    i = np.floor_divide(key, n, dtype=np.int64)
    j = np.multiply(i, n)
    np.subtract(key, j, out=j)
    movers = bounded.compress(~static.take(bounded))
    # (np.tile's Python layers cost more than this repeat of the planes' row)
    return i, j, planes[None].repeat(len(movers), axis=0).ravel(), movers.repeat(len(planes))
