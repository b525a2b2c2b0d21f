"""When a sub-step with bounded rows splits into smaller ones (``symplectic._split``): by how
far its bodies turn within it (``_turn_pieces``, ``_turns_more_than``), and how many of a
step's sub-steps may miss SHAKE at the deepest split before the step splits no more
(``CONTACT_MISSES``, ``_may_split``, ``_missed``).

Its own module because these thresholds and their measured reasons are read by the driver
(``CONTACT_MISSES``) and the sub-step alike, and are not part of the sub-step's sequence.
"""
from __future__ import annotations

import numpy as np

from .collision.turning import shape_turning
from .math3d import einsum
from .shapes import SPHERE


# Sub-steps of a step with bounded rows that may miss SHAKE at max_split_depth (and have their
# positions projected) before the step splits no more: a mechanism whose joints fight its
# contacts (or each other) misses at every depth, and splitting it to max_split_depth every
# step made it 200 times slower than projecting (63 splits a step of a random heap of jointed
# bodies that SHAKE could not meet at any step size); it now stops after two leaves, about 7
# splits. A budget of splits instead (15 a step) cut short the steps that splitting does
# resolve: a 100 kg ball on 10 links of 0.01 kg resting on the ground at dt 1/60 needs up to
# 28 splits in a step (200 kg: 40), and projected after a SHAKE that missed by 6 cm at h/4,
# its links were kicked from 50 to 274 rad/s and the rope blew up within a few steps.
CONTACT_MISSES = 8


def _may_split(world, depth, uni):
    """Whether this sub-step may split: not at max_split_depth, nor (with bounded rows) after
    CONTACT_MISSES of the step's sub-steps missed SHAKE there."""
    if depth >= world.max_split_depth:
        return False
    return uni is None or world._contact_misses_left > 0


def _missed(world, depth, uni):
    """Count a sub-step with bounded rows that missed SHAKE at max_split_depth against the
    step's CONTACT_MISSES."""
    if uni is not None and depth >= world.max_split_depth:
        world._contact_misses_left -= 1


# rad: a jointed body that the kick of a step with bounded rows sets turning by more than this
# within the step splits it. Such a kick comes whole at the step's start, and the joints'
# rows, linear in the turn, cannot follow a faster one: a 17 g body on a 1 m distance joint
# whose partner hit the ground was kicked to 7850 rad/s (33 rad in the step) and the next
# step exploded. (Without bounded rows, SHAKE's miss splits such a step.)
MAX_KICKED_TURN = 1.0


def _turns_more_than(model, w, h, turn) -> bool:
    """Whether a body with joint rows turns by more than ``turn`` (rad) within h at w (N, 3)."""
    if h * np.abs(w).max(initial=0.0) <= turn / np.sqrt(3.0):
        return False                    # (the common case, without a norm per body)
    spin = w.take(model.jointed, axis=0)
    return bool(h * np.sqrt(einsum("ij,ij->i", spin, spin)).max(initial=0.0) > turn)


# rad: a body with contact rows that turns by more than this within a step splits it (its
# shape's turn; MAX_CONTACT_AXIAL_TURN for its whole turn, a capsule's or cylinder's spin about
# its own axis included). The rows aim the end's gaps at what the step's start says of them,
# each lifted by its own arm's torque; but a body spinning fast turns the tilt that torque
# starts round with its spin before the step ends (the torque-free drift: a flat box at 2 rad
# a step tilted 100 degrees away from where its rows pushed it, at 4 rad 176 degrees), so
# rows meant to lift a sinking corner sank it further, each step about 4 times as far. A
# frictionless flat box resting on a plane spinning at 240 rad/s at dt 1/60 stood 21 steps,
# then left at 42.5 m/s with 224 J more than its 19 J of spin; one at 1 rad a step stood.
MAX_CONTACT_TURN = 1.0
# rad: a spin about a round body's own axis turns no shape, and the drift turns its tilt round
# only by the midpoint rule's error (2 rad a step left a lying capsule resting, 3 rad lifted it
# 0.46 m)
MAX_CONTACT_AXIAL_TURN = 2.0
# (a flat box at 1000 rad/s, dt 1/60, 16.7 rad a step, rests on 16 of them)
MAX_CONTACT_TURN_PIECES = 16


def _turn_pieces(world, model, uni, R, w, h) -> int:
    """Into how many equal sub-steps a sub-step of size h with bounded rows ``uni`` splits for
    the bodies that turn in it at w (N, 3) rad/s further than their rows follow: 2 where a
    jointed body turns by more than MAX_KICKED_TURN, else as many as keep each dynamic body
    with contact rows within MAX_CONTACT_TURN (its shape's turn, ``turning.shape_turning``;
    R (N, 3, 3) its rotation) and MAX_CONTACT_AXIAL_TURN (its whole turn), at most
    MAX_CONTACT_TURN_PIECES; 1 for none (in the common case, in one reduction). Spheres'
    contacts are left out: their normals pass through their centres."""
    # (not '<=': a step gone to NaN splits no further, and fails as it is)
    if not h * np.maximum.reduce(np.abs(w), axis=None, initial=0.0) > \
            min(MAX_KICKED_TURN, MAX_CONTACT_TURN) / np.sqrt(3.0):
        return 1
    if model.m and _turns_more_than(model, w, h, MAX_KICKED_TURN):
        return 2                        # (halves, each looked at again)
    contacts = uni.contacts
    if not len(contacts):
        return 1
    bodies = np.union1d(contacts.body_a, contacts.body_b)
    kind = world._kind.take(bodies)
    keep = (world._inv_mass.take(bodies) > 0.0) & (kind != SPHERE)
    if not keep.any():
        return 1
    spin = w.take(bodies[keep], axis=0)
    turn = shape_turning(kind[keep], R.take(bodies[keep], axis=0), spin)
    over = max(h * np.sqrt(einsum("ij,ij->i", turn, turn)).max() / MAX_CONTACT_TURN,
               h * np.sqrt(einsum("ij,ij->i", spin, spin)).max() / MAX_CONTACT_AXIAL_TURN)
    return min(int(np.ceil(over)), MAX_CONTACT_TURN_PIECES)
