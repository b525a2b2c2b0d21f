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
  turn that takes a body deep into the other finds the other's far side the nearer;
- and only where the turned pose finds it no deeper than the start's deepest by what the
  turn moves the surfaces (their turning arms): deeper is another feature's answer, not the
  turn's (``_carried_back``).
A pair apart at the start (its deepest contact a speculative one) is also looked at where
its turn first brings it to touch, sampled every SAMPLED_SWEEP of its farthest surface's
sweep: the turn's end may have taken a thin body past what it met (a bar turning 0.5 rad a
step found a ball it met late in the step behind its face, and passed through it), and the
contacts of the touch, carried back as above and facing the start's way, meet it there.
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
FIRST_TOUCH_FEATURES = 2 << 16
# m: a pair apart at the step's start, turning, is looked at where it is after this much of
# its farthest surface's sweep within the step (the thinnest things met, a 4 cm flipper and
# a 10 cm ball, are not passed over), but at no more than MAX_TOUCH_SAMPLES points
SAMPLED_SWEEP = 0.03
MAX_TOUCH_SAMPLES = 16


def shape_turning(kind, rot, spin):
    """The part of angular velocities spin (N, 3) that turns the shapes of kinds kind (N,)
    with rotations rot (N, 3, 3): none of a sphere's, and not a cylinder's or capsule's spin
    about its own axis (a wheel rolling on the ground meets it at its axle's foot whatever its
    spin: its contacts are found where the step's start has them)."""
    axial = (kind == CYLINDER) | (kind == CAPSULE)
    if axial.any():     # (else spin less zeros is spin, bit for bit: a pile of boxes)
        axis = rot[:, :, 2]
        spin = spin - np.where(axial[:, None], dot(spin, axis)[:, None] * axis, 0.0)
    return np.where((kind == SPHERE)[:, None], 0.0, spin)


def with_turned_contacts(narrowphase, a: Shapes, b: Shapes, margin, motion_a, motion_b,
                         dt: float):
    """narrowphase(a, b, margin)'s candidates (see contacts.from_candidates) for M pairs;
    for the pairs whose shapes turn against each other by more than TURNING (rad) within dt,
    with those found where the step's turn takes them (see the module's docstring) and their
    lead. motion_a, motion_b: each side's (angular velocity (M, 3) rad/s, the part of it that
    turns its shape (``shape_turning``), world frame, zero for static bodies; how far its
    surface moves a turn (M,) m/rad, ``broadphase.turning_arm``)."""
    (w_a, turn_a, arm_a), (w_b, turn_b, arm_b) = motion_a, motion_b
    turns = row_norms(turn_b - turn_a) * dt > TURNING
    at_start = narrowphase(a, b, margin)
    if not turns.any():
        return at_start
    keep = turns[:, None]
    w_a, turn_a, w_b, turn_b = (np.where(keep, x, 0.0) for x in (w_a, turn_a, w_b, turn_b))
    s_point, s_normal, s_depth, s_feature, s_valid = at_start
    deepest, start_depth = deepest_candidates(s_depth, s_valid)
    moved = (w_a, turn_a, w_b, turn_b)
    # what the turn adds: the depth beyond the pair's deepest at the start (or beyond touching
    # for a pair apart then), which a row must meet within the step, not push out over time
    floor = np.maximum(start_depth, 0.0)[:, None]
    sweep = _sweep(turn_a, arm_a, turn_b, arm_b, dt)[:, None]
    point, normal, depth, feature, valid = _carried_back(narrowphase, a, b, margin, moved, dt,
                                                         1.0, floor + sweep)
    # only where the pair has a contact at the start, and along its deepest one's side: a
    # turn that takes a body deep into the other finds the other's far side the nearer (a
    # pole's end swung past a wall's middle was pushed out through the far face)
    start_normal = np.take_along_axis(s_normal, deepest[:, None, None], axis=1)
    facing = dot(normal, start_normal) > 0.0
    m = point.shape[0]
    sets = [(s_point, s_normal, s_depth, s_feature, s_valid, np.zeros_like(s_depth)),
            (point, normal, depth, feature + TURNED_FEATURES,
             valid & keep & facing & np.isfinite(start_depth)[:, None],
             depth - np.minimum(depth, floor))]
    # and a pair apart at the start where its turn first brings it to touch: a bar turning
    # 0.5 rad a step met a ball late in the step, whose turn's end found the ball behind its
    # face, and passed through it
    apart = turns & (start_depth < 0.0)
    part = _first_touch(narrowphase, a, b, margin, (turn_a, arm_a), (turn_b, arm_b), dt, apart)
    touched = part < 1.0
    if touched.any():
        point, normal, depth, feature, valid = _carried_back(narrowphase, a, b, margin, moved,
                                                             dt, part[:, None],
                                                             floor + part[:, None] * sweep)
        # (facing the start's way too: sampled, the touch of a thin stick turning into a 2 cm
        # wall lay with its end past the wall's middle, and the far face's contacts, 22 and
        # 15 kN, pushed against the near face's, out through the far face at 3.7 m/s)
        facing = dot(normal, start_normal) > 0.0
        sets.append((point, normal, depth, feature + FIRST_TOUCH_FEATURES,
                     valid & touched[:, None] & facing, depth - np.minimum(depth, floor)))
    return tuple(np.concatenate([np.broadcast_to(x, (m,) + x.shape[1:]) for x in parts], axis=1)
                 for parts in zip(*sets))


def _carried_back(narrowphase, a: Shapes, b: Shapes, margin, moved, dt, part, reach):
    """The candidates of the pairs turned about their centres by ``part`` (M, 1) (or a
    number) of the step's turn, their depths less the closing their points' turning makes
    over that part of the step (contacts of the step's start: see the module); valid only
    where no deeper at the turned pose than ``reach`` (M, 1) m, the start's deepest and what
    that much of the turn moves the surfaces by (``_sweep``). (Deeper is not the turn's
    doing but the narrowphase's answer for other features: a cylinder made inside a box with
    its caps through the box's faces, 2.5 mm deep at the start, was 250 mm deep by the
    pierced box's separating axes 0.024 rad later, and the row that met that within the step
    aimed at 59 m/s against a cap held 9 mm open on the far face: the jammed pair's solve
    gained 997 J in a step.)"""
    w_a, turn_a, w_b, turn_b = moved
    point, normal, depth, feature, valid = narrowphase(_turned(a, turn_a * part, dt),
                                                       _turned(b, turn_b * part, dt), margin)
    closing = dot(normal, cross(w_b[:, None, :], point - b.pos[:, None, :])
                  - cross(w_a[:, None, :], point - a.pos[:, None, :]))
    return point, normal, depth + part * dt * closing, feature, valid & (depth <= reach)


def _sweep(turn_a, arm_a, turn_b, arm_b, dt):
    """(M,) m: the farthest the turns (M, 3) rad/s of a pair's shapes move their surfaces
    within dt, by their turning arms (M,) m/rad (``broadphase.turning_arm``)."""
    return (row_norms(turn_a) * arm_a + row_norms(turn_b) * arm_b) * dt


def _first_touch(narrowphase, a: Shapes, b: Shapes, margin, turning_a, turning_b, dt, apart):
    """The part (M,) of the step (0, 1] at which each of the ``apart`` pairs' turns first
    bring them to touch, sampled at least every SAMPLED_SWEEP of their surfaces' sweep
    (turning_a, turning_b: each side's turn (M, 3) rad/s and turning arm (M,) m/rad; 1 where
    they do not touch within the step or are not ``apart``)."""
    (turn_a, arm_a), (turn_b, arm_b) = turning_a, turning_b
    part = np.ones(apart.shape[0])
    if not apart.any():
        return part
    sweep = _sweep(turn_a, arm_a, turn_b, arm_b, dt)
    samples = int(min(MAX_TOUCH_SAMPLES, np.ceil((sweep * apart).max() / SAMPLED_SWEEP)))
    found = ~apart
    for k in range(1, samples):
        s = k / samples
        depth, valid = narrowphase(_turned(a, turn_a * s, dt), _turned(b, turn_b * s, dt),
                                   margin)[2:5:2]
        touch = ~found & (np.where(valid, depth, -np.inf).max(axis=1) >= 0.0)
        part[touch] = s
        found |= touch
        if found.all():
            break
    return part


def _turned(side: Shapes, w, dt):
    """The shapes turned about their centres as far as w (M, 3) takes them within dt."""
    turn = quat_to_matrix(rotation_vector_to_quat(w * dt))
    return Shapes(side.pos, einsum("mij,mjk->mik", turn, side.rot), side.params)
