"""Internal faces: the faces of static boxes that another static box covers.

A floor of flush box tiles has a side face at every join, inside the floor. A body crossing
the join meets it: box-box SAT picks the next tile's side face while the body overlaps that
tile by less than it sinks into the top (a frictionless 0.5 m cube slid at 3 m/s over 1 m
tiles tripped on the first join and tipped over), and a ball or capsule is lifted by the
tile's top edge (a ball 4-6 mm, a capsule character 5-91 mm). The union of the boxes has
no such faces.

So for contact purposes a still static box whose face is wholly covered by a face of another
still static box (coincident plane, opposite normal, axes aligned: their misalignment moves
no corner of either by more than COVER_TOL, the other face holding this one within
COVER_TOL) reaches across that face into its neighbour, by the
neighbour's thickness at most (the grown box stays inside the union of the two, so what it
finds there is solid), and by EXTENSION at most. The collision shape of the box is that grown
box (``collision_shapes``: half extents and a centre offset in its own frame, which the
broadphase.PairCache holds for the narrowphases); its contacts are then kept only where they
lie on the true box (``true_contacts``): a point beyond a covered face is its neighbour's, which
finds it too, with its own grown box. A body crossing the join thus meets each tile's top face
alone, and each point once. The true box stays what its mass, ray casts and drawing see.

A face that a larger face covers (a thin tile beside a thick one, tops flush; two 1 m tiles
beside a 2 m one) grows as any covered face, but the larger face, covered only in part, does
not: there the thin box's contacts in the first half of its reach, and the thick box's in
front of it, are the thin box's (PartCover). A face covered by no single box (tiles offset
sideways) is not grown: its join keeps the side face. Boxes turned against each other (not a
signed permutation of axes) are never joined. Kinematic (moving) static bodies neither grow
nor cover.
"""
from __future__ import annotations

import numpy as np

from .broadphase import sweep_and_prune
from .geometry import einsum

# m: how far two faces may be apart (along their normal and at their edges, their boxes'
# misalignment included) and still be one join. Level data kept in float32 rounds positions
# to 3.1e-5 m between 256 and 512 m from the origin and 6.1e-5 m up to 1024 m (two rounded
# tiles: a gap or overlap of one such step; 0.3 m tiles at x = 100 m, 7.6e-6 m, lost their
# joins at 1e-6), and float32 quaternions turn boxes by ~1e-7 rad (a room yawed 30 degrees
# lost its joins at the 1e-9 entry test this replaces). 0.1 mm joins such data up to 1 km
# from the origin and stays 100 times below the default contact margin (1 cm): a step or
# gap of less than that is smoothed over
COVER_TOL = 1e-4
# m: the largest reach of a box across a covered face. It must exceed how deep a body sinks
# into the top (a body just past the grown end meets that end face while it overlaps it less
# than that, and those points lie beyond the true box, dropped; a deeper body's are not), and
# is kept small because every body within it of a join pairs with the neighbour's grown box
# too. Measured on 144 flush 1 m tiles with 120 bodies sliding on them (dt 1/60;
# pairs counted a step): 270, 308, 426 and 1368 candidate pairs a step at 0.05, 0.1,
# 0.25 and 1 m (the whole neighbour: the exact union), 257 growing none; 303 contacts at
# each. The frictionless 0.5 m cube slid at 10 and 20 m/s, and dropped 3 m onto a join,
# kept its speed and stayed flat at 0.05 m already
EXTENSION = 0.1


def covered_reach(half, position, rotation, limit=None, parts=False):
    """(S, 2, 3) m: how far each of S boxes reaches across each of its faces (index [s, 0, k]
    the face on its -k side, [s, 1, k] on its +k side) into the box that covers it: the
    coverer's thickness along k, up to ``limit`` m (None: EXTENSION); 0 where no single box
    covers the face. half (S, 3) m half extents, position (S, 3) m centres, rotation
    (S, 3, 3) body->world. Vectorised over the pairs whose bounding boxes touch
    (broadphase.sweep_and_prune). With ``parts``, also the faces covered by a larger face
    (``PartCover``)."""
    s = half.shape[0]
    reach = np.zeros((s, 2, 3))
    if s < 2:
        return (reach, PartCover.none(s)) if parts else reach
    low, high = _bounds(half, position, rotation)
    i, j = sweep_and_prune(low, high)
    if not len(i):
        return (reach, PartCover.none(s)) if parts else reach
    i, j = np.concatenate([i, j]), np.concatenate([j, i])   # each box against each neighbour
    covers, depth, flush = _pair_covers(half, position, rotation, i, j, limit)
    for side in (0, 1):
        np.maximum.at(reach[:, side], i, np.where(covers[side], depth, 0.0))
    if not parts:
        return reach
    return reach, PartCover.of(_part_pairs(covers, flush), flush, reach, half, i, j)


def _bounds(half, position, rotation):
    """(S, 3), (S, 3) m: the world bounding boxes of S boxes, grown by COVER_TOL."""
    extent = einsum("nij,nj->ni", np.abs(rotation), half) + COVER_TOL
    return position - extent, position + extent


def _pair_covers(half, position, rotation, i, j, limit):
    """Of P pairs of the S boxes (covered_reach's arguments), box i (P,) against box j (P,):
    [(P, 3) bool, (P, 3) bool] which faces of i (on its -k side, on its +k side) j's face
    covers wholly, (P, 3) m how far i may reach into j along each axis, (P, 2, 3) bool
    whether j's extent ends where i's does, on each side along each of i's axes."""
    rot_i = rotation.take(i, axis=0)
    turn = np.abs(einsum("pji,pjk->pik", rot_i, rotation.take(j, axis=0)))  # |R_i^T R_j|
    # aligned: turn is a permutation but for a misalignment that moves the corners of
    # either box (j's along i's axes, i's along j's) by COVER_TOL at most
    off = np.abs(turn - np.round(turn))
    aligned = ((einsum("pik,pk->pi", off, half.take(j, axis=0)) <= COVER_TOL).all(axis=1)
               & (einsum("pki,pk->pi", off, half.take(i, axis=0)) <= COVER_TOL).all(axis=1))
    # j as an axis-aligned box in i's frame: its centre and half extents along i's axes
    centre = einsum("pji,pj->pi", rot_i, position.take(j, axis=0) - position.take(i, axis=0))
    other = einsum("pik,pk->pi", turn, half.take(j, axis=0))
    own = half.take(i, axis=0)
    low, high = centre - other, centre + other
    spans = (low <= -own + COVER_TOL) & (high >= own - COVER_TOL)    # j holds i along k
    across = np.roll(spans, 1, axis=1) & np.roll(spans, 2, axis=1)   # ... along the other two
    across &= aligned[:, None]
    depth = np.minimum(2.0 * other, EXTENSION if limit is None else limit)
    covers = [across & (np.abs(high + own) <= COVER_TOL), across & (np.abs(low - own) <= COVER_TOL)]
    # j's face ends where i's does along an axis, on each side (P, 2, 3)
    flush = np.stack([np.abs(low + own) <= COVER_TOL, np.abs(high - own) <= COVER_TOL], axis=1)
    return covers, depth, flush


def _part_pairs(covers, flush):
    """(P, 2, 3) bool: the faces of i (_pair_covers) that j covers wholly with a larger face."""
    same = flush.all(axis=1)
    same_face = np.roll(same, 1, axis=1) & np.roll(same, 2, axis=1)
    return np.stack(covers, axis=1) & ~same_face[:, None]


# the share of the static boxes changed at once beyond which they are all found again (the
# update sweeps each changed box and each beside it against all boxes, brute force)
UPDATE_SHARE = 0.25


def updated_reach(faces, half, position, rotation, appended=0):
    """covered_reach(half, position, rotation, parts=True) of the S static boxes of the Faces
    ``faces`` (the same rows) after some moved or changed size, then ``appended`` boxes more
    (the last rows), bit for bit, found again only for the boxes that changed and those
    beside them before or after (their pairs with every box beside them); None where more
    than UPDATE_SHARE changed (a full recompute). (A tile of 10,000 teleported each step cost
    the full recompute's sweep over all of them, einsums and np.maximum.at: 99 ms of a 163
    ms step.)"""
    s = half.shape[0]
    had = s - appended
    old_half, old_position, old_rotation = faces.half, faces.position, faces.rotation
    changed = ~((old_position == position[:had]).all(axis=1)
                & (old_rotation == rotation[:had]).all(axis=(1, 2))
                & (old_half == half[:had]).all(axis=1))
    moved = changed.nonzero()[0]
    if moved.size + appended > UPDATE_SHARE * s:
        return None
    low, high = _bounds(half, position, rotation)
    old_low, old_high = _bounds(old_half.take(moved, axis=0), old_position.take(moved, axis=0),
                                old_rotation.take(moved, axis=0))
    new = np.concatenate([moved, np.arange(had, s)])
    near = _touching(old_low, old_high, low, high).any(axis=0)
    reach = np.zeros((s, 2, 3))
    reach[:had] = faces.reach
    return _redo(reach, faces.cover.grown_to(s), half, position, rotation, low, high, near, new)


def _redo(reach, cover, half, position, rotation, low, high, near, new):
    """covered_reach's (reach, PartCover) with the boxes ``near`` (S,) bool and ``new`` (rows)
    and those beside the new ones (their bounds low, high (S, 3) m) found again, from
    ``reach`` and ``cover`` (PartCover) as they were for the others."""
    near = near | _touching(low.take(new, axis=0), high.take(new, axis=0), low, high).any(axis=0)
    near[new] = True
    redo = near.nonzero()[0]
    # their pairs with every box beside them now (each face takes the largest depth of its
    # pairs, whatever their order)
    k, j = _touching(low.take(redo, axis=0), high.take(redo, axis=0), low, high).nonzero()
    i = redo.take(k)
    keep = i != j
    i, j = i.compress(keep), j.compress(keep)
    reach[redo] = 0.0
    covers, depth, flush = _pair_covers(half, position, rotation, i, j, None)
    for side in (0, 1):
        np.maximum.at(reach[:, side], i, np.where(covers[side], depth, 0.0))
    fresh = PartCover.of(_part_pairs(covers, flush), flush, reach, half, i, j)
    part, low_r, high_r = cover.part.copy(), cover.low.copy(), cover.high.copy()
    part[redo], low_r[redo], high_r[redo] = fresh.part[redo], fresh.low[redo], fresh.high[redo]
    kept = ~near.take(cover.claims_a)
    b = np.concatenate([cover.claims_b.compress(kept), fresh.claims_b])
    a = np.concatenate([cover.claims_a.compress(kept), fresh.claims_a])
    face = np.concatenate([cover.claims_face.compress(kept, axis=0), fresh.claims_face])
    order = _claim_order(b, a, face)
    return reach, PartCover(part, low_r, high_r, b.take(order), a.take(order),
                            face.take(order, axis=0))


def _touching(lo_a, hi_a, lo_b, hi_b):
    """(A, B) bool: which of A boxes [lo_a, hi_a] (A, 3) touch which of B [lo_b, hi_b]."""
    return ((lo_a[:, None] <= hi_b[None]) & (lo_b[None] <= hi_a[:, None])).all(axis=2)


def _claim_order(b, a, face):
    """The order of claims (b, a (C,), face (C, 2)) by B, then A, side and axis: one order
    whatever the pairs' (a full recompute's and an update's claims alike)."""
    return np.lexsort((face[:, 1], face[:, 0], a, b))


class PartCover:
    """The faces of S static boxes that a larger face of one neighbour covers (a 1 cm tile
    beside a 50 cm one, tops flush: the thin tile's side face is wholly covered, the thick
    one's only in its top band). The thin box (A) grows across its face into the thick one
    (B) as across any covered face, but B does not grow back (its face holds more than A's),
    so B's face is met in the covered band: a body crossing from A's top to B's met it as it
    met any join (a frictionless cube slid at 3 m/s tripped, 1.72 m travelled of 4.5; a ball
    hopped 7 mm). So the first half of A's reach into B, over A's face (its region), is A's,
    and so is A itself: A keeps its contacts there (its grown box has B's top and sides
    there, flush with its own) and B drops its own (a body about to cross, in front of B's
    face, met it through a speculative contact). The half beyond stays B's (A's grown end
    face, inside B, would push a body just past it that sinks deeper than it overlaps it).
    The region is open along a side where B's face ends where A's does (the tops: a contact
    found just above them is A's); elsewhere it ends at A's face (its sides there are inside
    B). A point in a concave corner of the union, B's face going on beyond A's (a box
    resting on a floor against a wall that stands on it), is B's too: see ``_claimed``.

    part (S, 2, 3) bool the faces covered in part; low, high (S, 2, 3, 3) m the region of
    each such face, in its box's frame (from its far side to half its reach beyond the
    face); claims (C,) B and A of each such face (indices into the S boxes, sorted by B) and
    (C, 2) its (side, axis)."""

    def __init__(self, part, low, high, claims_b, claims_a, claims_face):
        self.part, self.low, self.high = part, low, high
        self.claims_b, self.claims_a, self.claims_face = claims_b, claims_a, claims_face

    @staticmethod
    def none(s):
        e = np.zeros(0, dtype=np.intp)
        return PartCover(np.zeros((s, 2, 3), dtype=bool), np.zeros((s, 2, 3, 3)),
                         np.zeros((s, 2, 3, 3)), e, e, np.zeros((0, 2), dtype=np.intp))

    def grown_to(self, s):
        """These faces of the first boxes of S (the rest covered nowhere)."""
        had = self.part.shape[0]
        if had == s:
            return self
        more = PartCover.none(s)
        more.part[:had], more.low[:had], more.high[:had] = self.part, self.low, self.high
        more.claims_b, more.claims_a = self.claims_b, self.claims_a
        more.claims_face = self.claims_face
        return more

    def without(self, keep):
        """These faces of the boxes ``keep`` (S,) bool alone (claims among them, renumbered)."""
        index = np.cumsum(keep) - 1
        both = keep.take(self.claims_b) & keep.take(self.claims_a)
        return PartCover(self.part[keep], self.low[keep], self.high[keep],
                         index.take(self.claims_b.compress(both)),
                         index.take(self.claims_a.compress(both)),
                         self.claims_face.compress(both, axis=0))

    @staticmethod
    def of(part_pairs, flush, reach, half, i, j):
        """From covered_reach's pairs: part_pairs (P, 2, 3) a face of i covered in part by j,
        flush (P, 2, 3) j's extent ends where i's does, reach (S, 2, 3) and half (S, 3)."""
        s = half.shape[0]
        cover = PartCover.none(s)
        pair, side, axis = part_pairs.nonzero()
        if not pair.size:
            return cover
        a, b = i.take(pair), j.take(pair)
        cover.part[a, side, axis] = True
        h = half.take(a, axis=0) + COVER_TOL
        low, high = -h, h.copy()
        open_low, open_high = flush[pair, 0], flush[pair, 1]
        low[open_low], high[open_high] = -np.inf, np.inf
        k = np.arange(pair.size)
        edge = half[a, axis] + 0.5 * reach[a, side, axis]
        low[k, axis] = np.where(side == 1, -np.inf, -edge)
        high[k, axis] = np.where(side == 1, edge, np.inf)
        cover.low[a, side, axis], cover.high[a, side, axis] = low, high
        order = _claim_order(b, a, np.stack([side, axis], axis=1))
        cover.claims_b, cover.claims_a = b.take(order), a.take(order)
        cover.claims_face = np.stack([side, axis], axis=1).take(order, axis=0)
        return cover


def grown_boxes(half, reach):
    """The boxes grown by ``reach`` (S, 2, 3) (covered_reach): (S, 3) half extents and (S, 3)
    centre offsets, m, in each box's own frame."""
    return half + 0.5 * (reach[:, 0] + reach[:, 1]), 0.5 * (reach[:, 1] - reach[:, 0])


def true_contacts(cs, faces, position, rotation):
    """The contacts of cs (a ContactSet) that lie on the true boxes: those of the grown boxes
    that lie beyond a covered face are dropped (the neighbour behind it has them), but for
    those in the region of a face covered in part, which are theirs, and which the box
    covering it drops (PartCover). faces: the Faces of the shapes cs was found with (its
    arrays by body); position (N, 3) m, rotation (N, 3, 3): the bodies' true poses."""
    if not len(cs):
        return cs
    # (a grown box is static, and two static bodies never meet: at most one side is grown)
    grown = faces.grown
    on_a = grown.take(cs.body_a)
    at = (on_a | grown.take(cs.body_b)).nonzero()[0]
    if not at.size:
        return cs
    rows = np.where(on_a.take(at), cs.body_a.take(at), cs.body_b.take(at))
    local = einsum("pji,pj->pi", rotation.take(rows, axis=0),
                   cs.point.take(at, axis=0) - position.take(rows, axis=0))
    beyond, kept = _beyond(local, faces, rows)
    drop = at.compress(beyond & ~kept)
    if faces.claims_b.size:
        drop = np.concatenate([drop, _claimed(cs, faces, position, rotation)])
    if not drop.size:
        return cs
    keep = np.ones(len(cs), dtype=bool)
    keep[drop] = False
    return cs.take(keep.nonzero()[0])


def _beyond(local, faces, rows):
    """Of P points ``local`` (P, 3) m in the frames of the grown boxes ``rows`` (P,): (P,)
    bool which lie beyond a covered face, and (P,) bool which of those are the box's own all
    the same: beyond one face covered in part alone, in its region (PartCover), and beyond
    no other covered face."""
    out, part = _outside(local, faces, rows)
    beyond = out.any(axis=(1, 2))
    if part is None:
        return beyond, np.zeros_like(beyond)
    part &= out
    one = (part.sum(axis=(1, 2)) == 1) & ~(out & ~part).any(axis=(1, 2))
    return beyond, one & (part & _inside(local, faces, rows)).any(axis=(1, 2))


def _outside(local, faces, rows):
    """(P, 2, 3) bool: which covered faces of the grown boxes ``rows`` (P,) the points
    ``local`` (P, 3) m in their frames lie beyond; and (P, 2, 3) bool which of their faces are
    covered in part (None: no box's is)."""
    h, r = faces.body_half.take(rows, axis=0) + COVER_TOL, faces.body_reach.take(rows, axis=0)
    out = np.stack([local < -h, local > h], axis=1) & (r > 0.0)
    if faces.body_part is None:
        return out, None
    return out, faces.body_part.take(rows, axis=0)


def _inside(local, faces, rows):
    """(P, 2, 3) bool: which regions of the boxes ``rows`` (P,) across their faces covered in
    part (PartCover: from the far side of the box up to half its reach beyond the face) hold
    the points ``local`` (P, 3) m in their frames."""
    low, high = faces.body_low.take(rows, axis=0), faces.body_high.take(rows, axis=0)
    return ((local[:, None, None] >= low) & (local[:, None, None] <= high)).all(axis=3)


def _only(shape, face):
    """(P, 2, 3) bool: True at each point's (side, axis) ``face`` (P, 2) alone."""
    only = np.zeros(shape, dtype=bool)
    only[np.arange(shape[0]), face[:, 0], face[:, 1]] = True
    return only


# the contact normals nearer a face's own than any face at right angles to it: through it
_THROUGH_FACE = np.sqrt(0.5)


def _claimed(cs, faces, position, rotation):
    """Indices of the contacts of cs on boxes (B) whose face another box (A) covers in part
    that lie in A's region across it (PartCover): A has them. Kept all the same (B's): one
    through that face (its normal nearer that face's than any other's) whose point is no
    further from B's face beyond A's (the concave corner of the two) than it is deep."""
    claimed = faces.claimed
    on_a = claimed.take(cs.body_a)
    at = (on_a | claimed.take(cs.body_b)).nonzero()[0]
    if not at.size:
        return at
    on_a = on_a.take(at)
    b_rows = np.where(on_a, cs.body_a.take(at), cs.body_b.take(at))
    # each contact with each face of B covered in part (claims sorted by B)
    first = np.searchsorted(faces.claims_b, b_rows, side="left")
    count = np.searchsorted(faces.claims_b, b_rows, side="right") - first
    contact = np.repeat(np.arange(at.size), count)
    claim = np.repeat(first - np.cumsum(count) + count, count) + np.arange(contact.size)
    a_rows, face = faces.claims_a.take(claim), faces.claims_face.take(claim, axis=0)
    turn = rotation.take(a_rows, axis=0)
    local = einsum("pji,pj->pi", turn,
                   cs.point.take(at.take(contact), axis=0) - position.take(a_rows, axis=0))
    # in the region across that face, and beyond none of A's other covered faces (the box
    # A itself included: a body there is on A's top, or in A)
    out, _ = _outside(local, faces, a_rows)
    only = _only(out.shape, face)
    in_region = (_inside(local, faces, a_rows) & only).any(axis=(1, 2))
    in_region &= ~(out & ~only).any(axis=(1, 2))
    if not in_region.any():
        return at[:0]
    # B's outward normal, and its face's (A's face turned round), in A's frame
    normal = einsum("pji,pj->pi", turn, cs.normal.take(at.take(contact), axis=0))
    normal *= np.where(on_a.take(contact), 1.0, -1.0)[:, None]
    p = np.arange(contact.size)
    through = normal[p, face[:, 1]] * np.where(face[:, 0] == 1, -1.0, 1.0) > _THROUGH_FACE
    # how far the point is from the edges of A's region that lie on B's face (inf: open)
    low = faces.body_low[a_rows, face[:, 0], face[:, 1]]
    high = faces.body_high[a_rows, face[:, 0], face[:, 1]]
    along = face[:, 1]
    low[p, along], high[p, along] = -np.inf, np.inf
    edge = np.minimum(local - low, high - local).min(axis=1)
    corner = through & (edge <= cs.depth.take(at.take(contact)))
    return np.unique(at.take(contact.compress(in_region & ~corner)))


class Faces:
    """The still static boxes a PairCache's shapes were grown for (``collision_shapes``):
    their rows (S,), poses (S, 3) m and (S, 3, 3), half extents (S, 3) m and reach (S, 2, 3)
    m and the faces covered in part (``cover``, a PartCover, by those S boxes); and by body, of
    the cache's N bodies, which are grown (N,) bool (None: none), their true half extents
    (N, 3) m, reach (N, 2, 3) m, faces covered in part (N, 2, 3) bool (None: none) and
    regions across them (N, 2, 3, 3) m, which boxes cover faces in part (N,) bool, and those
    claims as body rows (``true_contacts``)."""

    def __init__(self, rows, position, rotation, half, reach, cover):
        self.rows, self.position, self.rotation = rows, position, rotation
        self.half, self.reach, self.cover = half, reach, cover
        self.grown = self.body_half = self.body_reach = None
        self.body_part = self.body_low = self.body_high = self.claimed = None
        self.claims_b = self.claims_a = np.zeros(0, dtype=np.intp)
        self.claims_face = np.zeros((0, 2), dtype=np.intp)

    def without_rows(self, removed) -> "Faces | None":
        """These faces once the bodies ``removed`` (removal.RemovedRows) are gone: those of the
        static boxes left, in their new rows, found again around the removed ones (as
        covered_reach would find them, bit for bit); None where more than UPDATE_SHARE of them
        went (found again in full). (Removing one of 10,000 tiles each step found every
        join again: 77 ms a step against 19 ms on a floor with gaps, nothing joined.)"""
        gone = removed.among(self.rows)
        if not gone.any():
            faces = Faces(removed.moved_down(self.rows), self.position, self.rotation,
                          self.half, self.reach, self.cover)
            return faces
        if gone.sum() > UPDATE_SHARE * gone.size:
            return None
        keep = ~gone
        half, position = self.half[keep], self.position[keep]
        rotation = self.rotation[keep]
        low, high = _bounds(half, position, rotation)
        old_low, old_high = _bounds(self.half[gone], self.position[gone], self.rotation[gone])
        near = _touching(old_low, old_high, low, high).any(axis=0)
        none = np.zeros(0, dtype=np.intp)
        reach, cover = _redo(self.reach[keep], self.cover.without(keep), half, position,
                             rotation, low, high, near, none)
        return Faces(removed.moved_down(self.rows.compress(keep)), position, rotation, half,
                     reach, cover)

    def made_for(self, rows, position, rotation, half) -> bool:
        """Whether these are the faces of the static boxes ``rows`` (S,) at these poses
        (S, 3) m, (S, 3, 3), with these half extents (S, 3) m."""
        return (self.rows.shape == rows.shape and (self.rows == rows).all()
                and (self.position == position).all() and (self.rotation == rotation).all()
                and (self.half == half).all())


def collision_shapes(cache, kind, params, position, rotation, moving):
    """The centres (N, 3) m of the collision shapes of a broadphase.PairCache's N bodies,
    whose shapes are first made (``PairCache.reshape``) its static boxes
    (``PairCache.static_boxes``) that do not move grown across their covered faces
    (covered_reach), unless they were made for the same still static boxes at the same poses.
    kind (N,), params (N, 4): the bodies' true shapes; position (N, 3) m, rotation (N, 3, 3)
    body->world; moving (N,) bool: the static bodies that move (kinematic), which neither grow
    nor cover. Returns the centres and the cache's Faces (None: fewer than two static
    boxes)."""
    rows = cache.static_boxes
    if rows.shape[0] < 2:
        return position, None
    if moving.any():
        rows = rows.compress(~moving.take(rows))
    at, turn = position.take(rows, axis=0), rotation.take(rows, axis=0)
    half = params.take(rows, axis=0)[:, :3]
    faces = cache.faces
    if faces is None or not faces.made_for(rows, at, turn, half):
        found = None
        had = 0 if faces is None else faces.rows.shape[0]
        if faces is not None and had <= rows.shape[0] and np.array_equal(faces.rows,
                                                                         rows[:had]):
            # (the same boxes, some moved, or boxes added after them)
            found = updated_reach(faces, half, at, turn, rows.shape[0] - had)
        if found is None:
            found = covered_reach(half, at, turn, parts=True)
        faces = Faces(rows, at, turn, half, *found)
        _shaped(cache, kind, params, faces)
    if faces.grown is None:
        return position, faces
    return cache.centres(slice(None), position, rotation), faces


def carry_faces(cache, before, kind, params, faces=None):
    """Start a PairCache of N bodies (kind (N,), params (N, 4)) from the Faces of the cache
    it replaces, ``before``, where both have the same static boxes in the same rows (bodies
    appended to the world, or removed after them): the grown floor is kept, and the sweep
    that ``PairCache.carrying`` carries over was made of its shapes. ``faces``: those Faces
    made for the bodies removed (Faces.without_rows; None: before's; False: none, found
    again in full). Where the static boxes
    differ (some added, or removed), the Faces are kept for ``collision_shapes`` to find
    again around the boxes that changed. (Whether the faces still hold, ``collision_shapes``
    checks at the next detection.)"""
    if faces is None:
        faces = before.faces
    if faces is None or faces is False:
        return
    if np.array_equal(faces.rows, cache.static_boxes):
        _shaped(cache, kind, params, faces)
    else:
        cache.faces = faces


def _shaped(cache, kind, params, faces):
    """Make the cache's shapes (N bodies: kind (N,), params (N, 4) their own) those of
    ``faces`` (their boxes grown by their reach, the others' their own), and its faces."""
    grown = (faces.reach > 0.0).any(axis=(1, 2))
    cache.faces = faces
    faces.grown = faces.body_half = faces.body_reach = None
    if not grown.any():
        if cache.offset is not None:
            cache.reshape(params, None, cache.static_boxes)
        return
    n, rows = kind.shape[0], faces.rows
    faces.body_reach, faces.grown = np.zeros((n, 2, 3)), np.zeros(n, dtype=bool)
    faces.body_reach[rows], faces.grown[rows] = faces.reach, grown
    faces.body_half = params[:, :3]
    faces.body_part = faces.body_low = faces.body_high = faces.claimed = None
    faces.claims_b = faces.claims_a = np.zeros(0, dtype=np.intp)
    cover = faces.cover
    if cover.claims_b.size:
        faces.body_part = np.zeros((n, 2, 3), dtype=bool)
        faces.body_low, faces.body_high = np.zeros((n, 2, 3, 3)), np.zeros((n, 2, 3, 3))
        faces.body_part[rows], faces.body_low[rows] = cover.part, cover.low
        faces.body_high[rows] = cover.high
        faces.claims_b, faces.claims_a = rows.take(cover.claims_b), rows.take(cover.claims_a)
        faces.claims_face = cover.claims_face
        faces.claimed = np.zeros(n, dtype=bool)
        faces.claimed[faces.claims_b] = True
    shape, offset = params.copy(), np.zeros((n, 3))
    shape[rows, :3], offset[rows] = grown_boxes(faces.half, faces.reach)
    # (all static boxes: one grown before may move now, and be grown no more)
    cache.reshape(shape, offset, cache.static_boxes)



# (the mark of manifolds found before any were marked: a snapshot's, set_state's)
_UNMARKED = object()


def kept_manifolds(manifolds, faces):
    """The kept manifolds (collision.manifolds; ``mark_manifolds`` marked them with the Faces
    of the shapes they were found with) that a detection with the shapes of ``faces``
    (collision_shapes') may keep: none where the grown boxes changed since (a box that grew
    no more would keep the contacts found on its grown part, beyond its true face, while its
    pair stays put: a box resting across a join whose neighbour tiles were moved away kept
    contacts 0.1 m beyond the tile for a step). Unmarked ones are kept: a snapshot restored
    with its bodies (and so its static boxes) where they were replays bit for bit."""
    made = getattr(manifolds, "grown_for", _UNMARKED)
    if made is _UNMARKED or made is faces or _same_growth(made, faces):
        return manifolds
    return type(manifolds).empty()


def mark_manifolds(manifolds, faces):
    """Mark ``manifolds`` with the Faces (or None) of the shapes they were found with (see
    kept_manifolds); return them."""
    manifolds.grown_for = faces
    return manifolds


def marked_as(manifolds, source):
    """``manifolds`` marked as ``source`` is (if it is), as manifolds made from it are."""
    made = getattr(source, "grown_for", _UNMARKED)
    return manifolds if made is _UNMARKED else mark_manifolds(manifolds, made)


def _same_growth(a, b):
    """Whether Faces a and b (or None) grow the same boxes by as much."""
    grows_a = a is not None and a.grown is not None
    grows_b = b is not None and b.grown is not None
    if not (grows_a or grows_b):
        return True
    return (grows_a and grows_b and a.rows.shape == b.rows.shape and (a.rows == b.rows).all()
            and (a.reach == b.reach).all() and (a.cover.part == b.cover.part).all()
            and np.array_equal(a.cover.low, b.cover.low)
            and np.array_equal(a.cover.high, b.cover.high))
