"""Static half-space (plane) against spheres, capsules, boxes and cylinders.

A plane is body a: the contact normal is the plane normal n, and the plane's params hold
(nx, ny, nz, offset) in world coordinates (points x with n . x == offset); its pose is ignored.
Each function takes the plane a and the other body b as `Shapes` (only a.params is used) and
the per-pair margins (M,), and returns candidate arrays
(point (M, C, 3), normal (M, C, 3), depth (M, C), feature (1, C), valid (M, C)): the
feature ids are the candidate slots, the same for every pair (contacts.slot_features).
"""
from __future__ import annotations

from .contacts import keep_deepest, slot_features
from .geometry import BOX_CORNERS, dot, rotate, segment_ends
from .rim import buried, rim_candidates


def _points_below(plane, x, margin, radius=0.0):
    """Candidates for world points x (M, C, 3) (sphere centres of `radius`) against the plane."""
    n = plane[:, None, :3]
    depth = radius - (dot(x, n) - plane[:, 3:4])
    # b's surface point is x - n r; a's (on the plane) is that plus n depth; midway is the contact.
    point = x - n * (radius - depth / 2.0)[..., None]
    normal = n.repeat(x.shape[1], axis=1)       # (a copy is cheaper than np.broadcast_to)
    return point, normal, depth, depth >= -margin[:, None]


def plane_round(a, b, margin):
    """Sphere (half_length 0) or capsule: one candidate per end sphere (feature 0 / 1)."""
    plane, pos, rot, params = a.params, b.pos, b.rot, b.params
    r, hl = params[:, 0], params[:, 1]
    ends = segment_ends(pos, rot, hl)
    point, normal, depth, valid = _points_below(plane, ends, margin, r[:, None])
    valid[:, 1] &= hl > 0.0  # a sphere's two "ends" coincide: report it once
    return point, normal, depth, slot_features(2), valid


def plane_box(a, b, margin):
    """Box corners within the margin, at most the 4 deepest (feature = corner index 0..7)."""
    plane, pos, rot, params = a.params, b.pos, b.rot, b.params
    corners = pos[:, None, :] + rotate(rot, BOX_CORNERS[None] * params[:, None, :3])
    point, normal, depth, valid = _points_below(plane, corners, margin)
    valid = keep_deepest(depth, valid, 4)
    return point, normal, depth, slot_features(8), valid


def plane_cylinder(a, b, margin):
    """Rim points within the margin (features 0..9, see rim.rim_candidates).

    A cylinder resting on a cap gives the 4 rim samples, lying on its side the furthest rim
    point of each cap (2 points), tilted on its rim the single furthest point; buried whole
    (rim.buried: a coin sunk deeper than its tilt raises its rim), all 10.
    """
    plane = a.params
    rim, usable = rim_candidates(b.pos, b.rot, b.params, -plane[:, :3])
    point, normal, depth, valid = _points_below(plane, rim, margin)
    return point, normal, depth, slot_features(10), valid & (usable | buried(depth))
