"""Contacts of turning bodies, found where the step's turn takes them as well.

A contact row holds the point it was made for, on a straight path at its velocity. A body
that turns fast meets the other with points that no row of the step's start holds, or that
a straight path puts elsewhere: a cylinder's rim has no corners (which rim point is deepest
depends on its orientation), and a box keeps only its four deepest corners. Dropped tumbling
at 20 rad/s at dt 1/60, a cylinder sank up to 75 mm into the ground and a box up to 33 mm.

Where a pair's shapes turn against each other by more than TURNING within a step, its
narrowphase runs again with the bodies turned about their centres as far as their spins take
them within the step (their travel is left to the rows, which are exact for it). Each
contact found there is added to the step's start's (not put in their place: those hold what
is deep now), as a contact of the step's start:
- its lever arms are the turned pose's, which the derivative of the end's gap asks for;
- its depth loses the closing its point's turning makes within the step, so a row made from
  it reaches the turned pose's depth, less the travel's closing, at the step's end;
- the depth beyond the pair's deepest at the start (beyond touching, for a pair then apart) is
  its lead (``ContactSet.lead``), which the row meets within the step, where a depth it
  started with would be pushed out over the stabilisation time;
- it is kept only where the pair has a contact at the start, facing the deepest one's way: a
  turn that takes a body deep into the other finds the other's far side the nearer.
A spin about a cylinder's or capsule's own axis turns no shape (``shape_turning``): a wheel
rolling on the ground keeps the contacts of the step's start; and the caller leaves out
bodies whose turn something else sets as much as their spin (``contacts.detect``: bodies on
joints).
"""
from __future__ import annotations

import numpy as np

from ..math3d import cross, quat_to_matrix, rotation_vector_to_quat
from ..shapes import CAPSULE, CYLINDER, SPHERE
from .contacts import Shapes, deepest_candidates
from .geometry import dot, einsum, row_norms

# A pair that turns against itself by less than this in a step (rad) keeps the start's
# contacts: the deepest rim point then moves by radius x turn^2 / 2 at most along the normal
# within the step (0.06 mm for a 0.3 m cylinder), under the contacts' slop.
TURNING = 0.02
# added to the feature ids of the contacts found at the turned poses, so that they warm start
# from their own kind
TURNED_FEATURES = 1 << 16


def shape_turning(kind, rot, spin):
    """The part of angular velocities spin (N, 3) that turns the shapes of kinds kind (N,)
    with rotations rot (N, 3, 3): none of a sphere's, and not a cylinder's or capsule's spin
    about its own axis (a wheel rolling on the ground meets it at its axle's foot whatever its
    spin: its contacts are found where the step's start has them)."""
    axis = rot[:, :, 2]
    about_axis = np.where(((kind == CYLINDER) | (kind == CAPSULE))[:, None],
                          dot(spin, axis)[:, None] * axis, 0.0)
    return np.where((kind == SPHERE)[:, None], 0.0, spin - about_axis)


def with_turned_contacts(narrowphase, a: Shapes, b: Shapes, margin, motion_a, motion_b,
                         dt: float):
    """narrowphase(a, b, margin)'s candidates (see contacts.from_candidates) for M pairs;
    for the pairs whose shapes turn against each other by more than TURNING (rad) within dt,
    with those found where the step's turn takes them (see the module's docstring) and their
    lead. motion_a, motion_b: each side's (angular velocity (M, 3) rad/s, the part of it that
    turns its shape (``shape_turning``)), world frame, zero for static bodies."""
    (w_a, turn_a), (w_b, turn_b) = motion_a, motion_b
    turns = row_norms(turn_b - turn_a) * dt > TURNING
    at_start = narrowphase(a, b, margin)
    if not turns.any():
        return at_start
    keep = turns[:, None]
    w_a, turn_a, w_b, turn_b = (np.where(keep, x, 0.0) for x in (w_a, turn_a, w_b, turn_b))
    point, normal, depth, feature, valid = narrowphase(_turned(a, turn_a, dt),
                                                       _turned(b, turn_b, dt), margin)
    closing = dot(normal, cross(w_b[:, None, :], point - b.pos[:, None, :])
                  - cross(w_a[:, None, :], point - a.pos[:, None, :]))
    depth = depth + dt * closing
    # what the turn adds: the depth beyond the pair's deepest at the start (or beyond touching
    # for a pair apart then), which a row must meet within the step, not push out over time
    s_point, s_normal, s_depth, s_feature, s_valid = at_start
    deepest, start_depth = deepest_candidates(s_depth, s_valid)
    lead = depth - np.minimum(depth, np.maximum(start_depth, 0.0)[:, None])
    # only where the pair has a contact at the start, and along its deepest one's side: a
    # turn that takes a body deep into the other finds the other's far side the nearer (a
    # pole's end swung past a wall's middle was pushed out through the far face)
    facing = dot(normal, np.take_along_axis(s_normal, deepest[:, None, None], axis=1)) > 0.0
    m = point.shape[0]
    both = lambda x, y: np.concatenate([np.broadcast_to(z, (m,) + z.shape[1:]) for z in (x, y)],
                                       axis=1)
    return (both(s_point, point), both(s_normal, normal), both(s_depth, depth),
            both(s_feature, feature + TURNED_FEATURES),
            both(s_valid, valid & keep & facing & np.isfinite(start_depth)[:, None]),
            both(np.zeros_like(s_depth), lead))


def _turned(side: Shapes, w, dt):
    """The shapes turned about their centres as far as w (M, 3) takes them within dt."""
    turn = quat_to_matrix(rotation_vector_to_quat(w * dt))
    return Shapes(side.pos, einsum("mij,mjk->mik", turn, side.rot), side.params)
