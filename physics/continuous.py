"""Continuous collision: a fast free body stops where it first touches what it hits.

A fast free body is a dynamic body on no joint that moves further than FAST_FRACTION of its
core radius (the largest sphere about its centre inside its shape) within a sub-step. Its
speculative contacts with a body that moves less than half as far, not yet touching, are
made at the step's start with the normal of the features nearest then. Where that is not the
normal of what it hits, or where the row, which stops the body only at the step's end, would
let it slide off the face first, the contacts are left out of the step (``passing_pairs``):
a 1 cm bullet at 300 m/s, 60 degrees from a wall's normal, met the wall's near edge that
way, was turned aside and flew past the wall; a 5 cm ball rolling at 40 m/s over a 2 cm seam
between two slabs met the far slab's corner 4 mm ahead and was launched 8 m up; and a 5 cm
ball at 40 m/s aimed 0.3 m inside a wall's edge slid past the edge before the row stopped
it. The step moves the body on through, and after the sub-step it is followed along its
straight path against those bodies and the bodies of its contacts: where going on would take
it deeper than the slop into one, it is put back along its path where it first touched, its
velocity kept (it reads the velocity it flew with, though it moved less), and the next step's
contact there, with the normal of the face it hit, stops it (``stopped_at_first_touch``;
Box2D's continuous step does the same). One that meets none of them where they end, but met
one that moved on out of its path within the sub-step, is put back where it met that one and
carried on with its move, so that it ends touching it. Bodies on joints,
and pairs of bodies both moving about as fast, keep their speculative contacts: moving a
jointed body back would pull its joints apart, and two bodies each put back where it met the
other's end would start the next step apart again. So does a pair whose paths do not reach
each other, within reach by its turn alone: the paths followed here are straight and do
not turn, and its contacts of the turn (``collision.turning``) meet it.
"""
from __future__ import annotations

import numpy as np

from .collision.detect import pair_types
from .collision.first_touch import first_touch, gap_and_slope
from .collision.geometry import row_norms
from .collision.turning import TURNED_FEATURES
from .contact_rows import SLOP, SPECULATIVE_TOUCH
from .math3d import einsum, quat_to_matrix

FAST_FRACTION = 0.5     # of a body's core radius moved within a sub-step: fast
# A speculative contact not yet touching whose normal turns by more than this (rad) on the
# way to the touch, or at where its row would leave the body, is left out. One that keeps its
# normal (a ball falling onto the ground, a box onto a face head-on) stays and stops the body
# within the step, where its impact is resolved exactly (a ball with e = 0.8 put back where
# it touched instead rose 3-9 % above e^2 of its last height by the fifth bounce at dt 1/60)
TURNED_NORMAL = 1e-3


def fast_bodies(world, model, moved, spin, h):
    """The fast free bodies (N,) bool and how far all bodies' surfaces move (N,) m (moved
    (N, 3) m within the sub-step h s, and the sweep of their farthest surface by their spin
    (N, 3) rad/s), or None where no body is fast and free. (By its path alone, a bar turning
    0.5 rad a step about its centre moved less than half as far as a ball it struck, and the
    ball was put back where its path met the bar's end pose: behind the bar, which passed
    through it.)"""
    distance = row_norms(moved)
    fast = (distance > FAST_FRACTION * model.pair_cache.core_radius)
    fast &= world._inv_mass[:world._n] > 0.0
    if not fast.any():
        return None
    from .sleeping import jointed_bodies     # (sleeping reads the contacts' reports)
    fast &= ~jointed_bodies(world)
    if not fast.any():
        return None
    # (the spin's sweep only where some body is fast: twice a step, every step, otherwise)
    if spin is not None:
        distance = distance + row_norms(spin) * model.pair_cache.turning_arm * h
    return fast, distance


def _leading(moving, a, b):
    """(P,) bool each: whether a, and whether b, of the pairs (a, b) (P,) is a fast free body
    that moves more than twice as far as the other (moving: ``fast_bodies``)."""
    fast, distance = moving
    far_a, far_b = distance.take(a), distance.take(b)
    return fast.take(a) & (far_a > 2.0 * far_b), fast.take(b) & (far_b > 2.0 * far_a)


def _lone_fast(moving, a, b):
    """(P,) bool: the pairs (a, b) (P,) each with a fast free body that moves more than twice
    as far as the other body (moving: ``fast_bodies``)."""
    lead_a, lead_b = _leading(moving, a, b)
    return lead_a | lead_b


def _pairs_of(cs, contacts):
    """The pairs (a, b) (P,) each of the ``contacts`` (K,) bool of ContactSet cs, once each,
    and the first of those contacts of each (P,)."""
    _, first = np.unique(cs.pair_keys.compress(contacts), return_index=True)
    at = np.flatnonzero(contacts).take(first)
    return cs.body_a.take(at), cs.body_b.take(at), at


def passing_pairs(cs, moving, margin, cache, x, R, v, h):
    """The contacts of ContactSet cs but those it leaves out (see the module), and the pairs
    left out, (P,) a and (P,) b: the pairs of a fast free body and a body moving less than
    half as far (moving: ``fast_bodies``) whose contacts are all further apart than
    ``contact_rows.SPECULATIVE_TOUCH`` and whose row would not stop the body on the feature
    it hits within h s (TURNED_NORMAL). margin: the contact margin, m; x (N, 3) m,
    R (N, 3, 3), v (N, 3) m/s: the bodies' positions, orientations and velocities; cache:
    the broadphase.PairCache of their shapes."""
    none = np.zeros(0, dtype=np.int64)
    lone = _lone_fast(moving, cs.body_a, cs.body_b)
    if not lone.any():
        return cs, none, none
    keys, pair = np.unique(cs.pair_keys, return_inverse=True)
    nearest = np.full(keys.size, -np.inf)
    np.maximum.at(nearest, pair, cs.depth)
    apart = lone & (cs.depth == nearest.take(pair)) & (cs.depth < -SPECULATIVE_TOUCH)
    if not apart.any():
        return cs, none, none
    a, b, at = _pairs_of(cs, apart)               # (at: the nearest contact of each pair)
    normal, gap = cs.normal.take(at, axis=0), -cs.depth.take(at)
    (x_a, move_a, R_a), (x_b, move_b, R_b) = [
        (x.take(i, axis=0), v.take(i, axis=0) * h, R.take(i, axis=0)) for i in (a, b)]
    touched = first_touch(cache.kind, cache.params, a, b, x_a + move_a, x_b + move_b, move_a,
                          move_b, R_a, R_b, 0.0)[1]
    # where the row leaves b against a: its approach along the normal cut to the gap
    relative = move_b - move_a
    closing = einsum("pi,pi->p", relative, normal) + gap
    arrived = x_b + move_a + relative - np.minimum(closing, 0.0)[:, None] * normal
    reach = np.sqrt(einsum("pi,pi->p", relative, relative)) + margin
    stays = gap_and_slope(cache.kind, cache.params, pair_types(cache.kind, a, b), a, b,
                          x_a + move_a, arrived, R_a, R_b, relative, reach)[2]
    kept = np.cos(TURNED_NORMAL)
    turned = ((einsum("pi,pi->p", touched, normal) < kept)
              | (einsum("pi,pi->p", stays, normal) < kept))
    # but not a pair whose paths do not reach each other (first_touch's normal zero) and
    # that has contacts of where the step's turn takes it (``collision.turning``): it is
    # within reach by its turn alone, which these straight paths, and those followed after
    # the sub-step, leave out (a thin stick turning 0.27 rad a step, whose path fell 14 mm
    # short of a 5 cm wall, was left out and turned into the wall across its middle, out of
    # its far face)
    of_turn = np.zeros(keys.size, dtype=bool)
    of_turn[pair.compress(cs.feature >= TURNED_FEATURES)] = True
    turned &= ~(of_turn.take(pair.take(at)) & ~touched.any(axis=1))
    if not turned.any():
        return cs, none, none
    left_out = np.zeros(keys.size, dtype=bool)
    left_out[pair.take(at.compress(turned))] = True
    return (cs.take(np.flatnonzero(~left_out.take(pair))), a.compress(turned),
            b.compress(turned))


def stopped_at_first_touch(world, model, start_x, state, contacts, passing, h):
    """The sub-step's end state (x, q, v, w) with its fast free bodies put back where they
    first touched a body moving less than half as far (see the module). start_x (N, 3) m:
    the positions at the sub-step's start, h s its length; contacts: the sub-step's
    ContactSet (or None);
    passing: the pairs (a, b) (P,) each that its contacts left out (``passing_pairs``)."""
    if passing[0].size == 0 and (contacts is None or not len(contacts)):
        return state
    x, q, v, w = state
    moved = x - start_x
    moving = fast_bodies(world, model, moved, w, h)
    if moving is None:
        return state
    a, b = passing
    if contacts is not None and len(contacts):
        lone = _lone_fast(moving, contacts.body_a, contacts.body_b)
        if lone.any():
            more_a, more_b, _ = _pairs_of(contacts, lone)
            a, b = np.concatenate([a, more_a]), np.concatenate([b, more_b])
    # the body of each pair that moved more than twice as far is followed against where the
    # other ended (put back where it touched the other's path, it would start the next step
    # apart from it again; a 1 kg box struck by a bullet moved 0.10 m, as fast for its size,
    # and the two, both put back, ended the step 6 mm into each other)
    lead_a, lead_b = _leading(moving, a, b)
    led = np.flatnonzero(lead_a | lead_b)
    if led.size == 0:
        return state
    a, b, lead_a, lead_b = a.take(led), b.take(led), lead_a.take(led), lead_b.take(led)
    bodies = np.concatenate([a, b])
    R = quat_to_matrix(q.take(bodies, axis=0))
    p = a.size
    move_a, move_b = moved.take(a, axis=0), moved.take(b, axis=0)
    own_a = np.where(lead_a[:, None], move_a, 0.0)
    own_b = np.where(lead_b[:, None], move_b, 0.0)
    cache = model.pair_cache
    # (the centres of the shapes the cache holds: a static box grown across internal faces
    # is centred off its centre of mass, see collision.internal_faces)
    x_a = cache.centres(a, x.take(a, axis=0), R[:p])
    x_b = cache.centres(b, x.take(b, axis=0), R[p:])
    t = first_touch(cache.kind, cache.params, a, b, x_a, x_b, own_a, own_b, R[:p], R[p:],
                    SLOP)[0]
    led_body = np.where(lead_a, a, b)
    along = np.ones(world._n)
    np.minimum.at(along, led_body, t)
    x = x - (1.0 - along)[:, None] * moved
    # A led body that met none where it ended may have met one on the way, which then moved
    # out of its path: a bullet 3 cm from a box it had knocked spinning, the box 0.24 m on
    # and turned 0.5 rad by the step's end, went through where the box had been, and on
    # through the wall behind it at 110 m/s. It is followed against the other moving too,
    # put back where it first touched it, and carried on with the other's move over the rest
    # of the sub-step, to end touching the other where that ends
    other_move = np.where(lead_a[:, None], move_b, move_a)
    missed = np.flatnonzero((along.take(led_body) == 1.0)
                            & (einsum("pi,pi->p", other_move, other_move) > SLOP * SLOP))
    if missed.size:
        a, b, lead_a = a.take(missed), b.take(missed), lead_a.take(missed)
        move_a, move_b = move_a.take(missed, axis=0), move_b.take(missed, axis=0)
        t_on = first_touch(cache.kind, cache.params, a, b, x_a.take(missed, axis=0),
                           x_b.take(missed, axis=0), move_a, move_b,
                           R[:p].take(missed, axis=0), R[p:].take(missed, axis=0), SLOP)[0]
        led_body = led_body.take(missed)
        back = (1.0 - t_on)[:, None] * np.where(lead_a[:, None], move_a - move_b,
                                                move_b - move_a)
        order = np.lexsort((t_on, led_body))           # (each body's earliest touch first)
        first = order.take(np.unique(led_body.take(order), return_index=True)[1])
        first = first.compress(t_on.take(first) < 1.0)
        x[led_body.take(first)] -= back.take(first, axis=0)
        touches = np.count_nonzero(along < 1.0) + first.size
    else:
        touches = np.count_nonzero(along < 1.0)
    if not touches:
        return state
    world.stats["first_touches"] += int(touches)
    return x, q, v, w
