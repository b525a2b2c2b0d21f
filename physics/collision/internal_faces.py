"""Internal faces: the faces of static boxes that another static box covers.

A floor of flush box tiles has a side face at every join, inside the floor. A body crossing
the join meets it: box-box SAT picks the next tile's side face while the body overlaps that
tile by less than it sinks into the top (a frictionless 0.5 m cube slid at 3 m/s over 1 m
tiles tripped on the first join and tipped over), and a ball or capsule is lifted by the
tile's top edge (a ball 4-6 mm, a capsule character 5-91 mm). The union of the boxes has
no such faces.

So for contact purposes a still static box whose face is wholly covered by a face of another
still static box (coincident plane, opposite normal, axes aligned within ALIGN_TOL, the other
face holding this one within COVER_TOL) reaches across that face into its neighbour, by the
neighbour's thickness at most (the grown box stays inside the union of the two, so what it
finds there is solid), and by EXTENSION at most. The collision shape of the box is that grown
box (``collision_shapes``: half extents and a centre offset in its own frame, which the
broadphase.PairCache holds for the narrowphases); its contacts are then kept only where they
lie on the true box (``true_contacts``): a point beyond a covered face is its neighbour's, which
finds it too, with its own grown box. A body crossing the join thus meets each tile's top face
alone, and each point once. The true box stays what its mass, ray casts and drawing see.

A face covered in part (tiles offset sideways, a 2 m tile beside two 1 m ones) is not grown:
its join keeps the side face. Boxes turned against each other (not a signed permutation of
axes) are never joined. Kinematic (moving) static bodies neither grow nor cover.
"""
from __future__ import annotations

import numpy as np

from ..shapes import BOX
from .broadphase import sweep_and_prune
from .geometry import einsum

# m: how far two faces may be apart (along their normal and at their edges) and still be
# one join: float placement (0.1 * 3 != 0.3) leaves ~1e-16 m; 1 um is far below any contact
# margin and far above rounding on worlds of kilometres
COVER_TOL = 1e-6
# how far from a signed permutation R_a^T R_b may be (entry by entry) for two boxes' axes to
# be aligned
ALIGN_TOL = 1e-9
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


def covered_reach(half, position, rotation, limit=None):
    """(S, 2, 3) m: how far each of S boxes reaches across each of its faces (index [s, 0, k]
    the face on its -k side, [s, 1, k] on its +k side) into the box that covers it: the
    coverer's thickness along k, up to ``limit`` m (None: EXTENSION); 0 where no single box
    covers the face. half (S, 3) m half extents, position (S, 3) m centres, rotation
    (S, 3, 3) body->world. Vectorised over the pairs whose bounding boxes touch
    (broadphase.sweep_and_prune)."""
    s = half.shape[0]
    reach = np.zeros((s, 2, 3))
    if s < 2:
        return reach
    extent = einsum("nij,nj->ni", np.abs(rotation), half) + COVER_TOL
    i, j = sweep_and_prune(position - extent, position + extent)
    if not len(i):
        return reach
    i, j = np.concatenate([i, j]), np.concatenate([j, i])   # each box against each neighbour
    rot_i = rotation.take(i, axis=0)
    turn = np.abs(einsum("pji,pjk->pik", rot_i, rotation.take(j, axis=0)))  # |R_i^T R_j|
    aligned = (np.abs(turn - np.round(turn)) <= ALIGN_TOL).all(axis=(1, 2))
    # j as an axis-aligned box in i's frame: its centre and half extents along i's axes
    centre = einsum("pji,pj->pi", rot_i, position.take(j, axis=0) - position.take(i, axis=0))
    other = einsum("pik,pk->pi", turn, half.take(j, axis=0))
    own = half.take(i, axis=0)
    low, high = centre - other, centre + other
    spans = (low <= -own + COVER_TOL) & (high >= own - COVER_TOL)    # j holds i along k
    across = np.roll(spans, 1, axis=1) & np.roll(spans, 2, axis=1)   # ... along the other two
    across &= aligned[:, None]
    depth = np.minimum(2.0 * other, EXTENSION if limit is None else limit)
    for side, face in ((0, np.abs(high + own) <= COVER_TOL), (1, np.abs(low - own) <= COVER_TOL)):
        np.maximum.at(reach[:, side], i, np.where(across & face, depth, 0.0))
    return reach


def grown_boxes(half, reach):
    """The boxes grown by ``reach`` (S, 2, 3) (covered_reach): (S, 3) half extents and (S, 3)
    centre offsets, m, in each box's own frame."""
    return half + 0.5 * (reach[:, 0] + reach[:, 1]), 0.5 * (reach[:, 1] - reach[:, 0])


def true_contacts(cs, grown, half, reach, position, rotation):
    """The contacts of cs (a ContactSet) that lie on the true boxes: those of the grown boxes
    (``grown`` (N,) bool by body; half (N, 3) m their true half extents, reach (N, 2, 3)
    m theirs, see covered_reach) that lie beyond a covered face are dropped (the neighbour
    behind it has them). position (N, 3) m, rotation (N, 3, 3): the bodies' true poses."""
    if not len(cs):
        return cs
    # (a grown box is static, and two static bodies never meet: at most one side is grown)
    on_a = grown.take(cs.body_a)
    at = (on_a | grown.take(cs.body_b)).nonzero()[0]
    if not at.size:
        return cs
    rows = np.where(on_a.take(at), cs.body_a.take(at), cs.body_b.take(at))
    local = einsum("pji,pj->pi", rotation.take(rows, axis=0),
                   cs.point.take(at, axis=0) - position.take(rows, axis=0))
    h, r = half.take(rows, axis=0) + COVER_TOL, reach.take(rows, axis=0)
    beyond = (((local > h) & (r[:, 1] > 0.0)) | ((local < -h) & (r[:, 0] > 0.0))).any(axis=1)
    if not beyond.any():
        return cs
    keep = np.ones(len(cs), dtype=bool)
    keep[at.compress(beyond)] = False
    return cs.take(keep.nonzero()[0])


class Faces:
    """The still static boxes a PairCache's shapes were grown for (``collision_shapes``):
    their rows (S,), poses (S, 3) m and (S, 3, 3), half extents (S, 3) m and reach (S, 2, 3)
    m (covered_reach); and by body, of the cache's N bodies, which are grown (N,) bool (None:
    none), their true half extents (N, 3) m and reach (N, 2, 3) m (``true_contacts``)."""

    def __init__(self, rows, position, rotation, half, reach):
        self.rows, self.position, self.rotation = rows, position, rotation
        self.half, self.reach = half, reach
        self.grown = self.body_half = self.body_reach = None

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
        faces = Faces(rows, at, turn, half, covered_reach(half, at, turn))
        _shaped(cache, kind, params, faces)
    if faces.grown is None:
        return position, faces
    return cache.centres(slice(None), position, rotation), faces


def carry_faces(cache, before, kind, params):
    """Start a PairCache of N bodies (kind (N,), params (N, 4)) from the Faces of the cache
    it replaces, ``before``, where both have the same static boxes in the same rows (bodies
    appended to the world, or removed after them): the grown floor is kept, and the sweep
    that ``PairCache.carrying`` carries over was made of its shapes. (Whether the faces still
    hold, ``collision_shapes`` checks at the next detection.)"""
    faces = before.faces
    if faces is not None and np.array_equal(before.static_boxes, cache.static_boxes):
        _shaped(cache, kind, params, faces)


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
            and (a.reach == b.reach).all())
