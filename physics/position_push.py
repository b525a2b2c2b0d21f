"""The push out of overlaps that the bodies do not keep as speed (``BoundedRows.push``): the
rows' targets without it (``kept_targets``), and the velocities that move the bodies by it
within the drift and are taken back after (``push_velocities``, capped by
``within_push_cap``), as Bullet's split impulse. Velocities in m/s and rad/s, world frame.

Its own module because the push is made by positions after the step's solve (``manifold``
puts the pushed bodies back onto the joints), apart from the rows and their solve.
"""
from __future__ import annotations

import numpy as np

from .bounded import CONTACT_SOFTNESS
from .contact_rows import MAX_PUSH_OUT
from .impacts import IMPACT_TOLERANCE, _velocity_jump
from .limits import UPPER
from .math3d import einsum
from .sleeping import labels_reached


def kept_targets(uni):
    """The bounded rows' velocity targets (mb,) without the push the bodies do not keep
    (``BoundedRows.push``), or None when no row has any."""
    push = uni.block.push
    if push is None or not push.max(initial=0.0) > 0.0:
        return None
    return uni.block.target - push


def push_velocities(world, model, rows, uni, inv_mass, Iinv, factor):
    """The velocities (N, 3) each that the drift adds to move the bodies by the push they do
    not keep (``BoundedRows.push``: of a contact's push-out beyond contact_rows.KEPT_PUSH, of
    a limit's beyond limits.KEPT_LIMIT_PUSH) and takes back after: from rest, the pushing rows
    reach their push with the joints kept, and the limits that are rows this step (near
    their bounds) are not turned towards them (the other bounded rows take no part). As
    Bullet's split impulse, Box2D v2's position iterations: the bodies are moved out without
    the speed, and the step's solve aims the rows at their targets without the push. A solve
    of those few rows alone, as an impact pass's, but as soft as the step's
    (CONTACT_SOFTNESS): a push that the joints nearly forbid then moves little. (With an
    impact's softness, a rod hanging from a ball joint, its tip 2 cm into the ground, was
    swung out by 1.5 m within a step to lift the tip those 2 cm, and left at 163 m/s with
    18 kJ. Without the limits, a ragdoll's hand pushed out of the ground at dt 1/60 was
    turned 0.25 rad past its wrist's twist limit.)"""
    push = uni.block.push
    idx = np.flatnonzero(push)
    first = uni.first_limit_row
    if uni.limit_plan is not None and first < push.size:
        # (the limits on the bodies pushed: the others stay out of its solve)
        limits = first + np.flatnonzero(uni.limit_plan.group.take(uni.limit_rows) <= UPPER)
        rows_b = uni.block.rows
        pushed = np.zeros(world._n, dtype=bool)
        pushed[rows_b.a.take(idx)] = pushed[rows_b.b.take(idx)] = True
        pushed[world._inv_mass[:world._n] == 0.0] = False
        on = pushed.take(rows_b.a.take(limits)) | pushed.take(rows_b.b.take(limits))
        idx = np.union1d(idx, limits[on])
    zero = np.zeros((world._n, 3))
    dv, dw = _velocity_jump(world, model, rows, uni, uni.block.rows.at(idx), push.take(idx),
                            zero, zero, inv_mass, Iinv, factor, CONTACT_SOFTNESS,
                            IMPACT_TOLERANCE)[:2]
    contacts = idx[idx < uni.n_contact_rows // 3]
    touched = np.concatenate([uni.block.rows.a.take(contacts), uni.block.rows.b.take(contacts)])
    return within_push_cap(model, dv, dw, touched)


def within_push_cap(model, dv, dw, touched):
    """The push's velocities dv, dw (N, 3) each (m/s, rad/s), scaled down on each mechanism
    (``model.mechanism``) of the bodies ``touched`` (rows) by pushing contacts whose fastest
    point (|dv| + |dw| times the body's bounding radius) would move faster than
    contact_rows.MAX_PUSH_OUT: no body is pushed out of an overlap faster than that (a
    limit's push back, uncapped, turns a mechanism that no contact pushes as fast as its
    own rule asks). The cap on the rows' push (m/s along a contact's normal) bounds the
    bodies' speed where they are free; through joints a lever multiplies it: two links of a
    6-link arm
    made 10 mm into one another 2 cm from a pin were pushed apart at 0.5 m/s along the
    normal at dt 1/240 (2.4 m/s at 1/1000, the same 2.5 mm a step) by turning the links at
    40 rad/s (170), and the last link's centre moved 15 mm a step (17 m/s at 1/1000). The
    scaled push keeps to the joints as the whole one does (the rows' solve is linear in it)."""
    n = dv.shape[0]
    speed = (np.sqrt(einsum("ni,ni->n", dv, dv))
             + np.sqrt(einsum("ni,ni->n", dw, dw)) * model.pair_cache.own_radius[:n])
    if not speed.max(initial=0.0) > MAX_PUSH_OUT:
        return dv, dw
    label = model.mechanism
    fastest = np.zeros(label.max(initial=0) + 1)
    np.maximum.at(fastest, label, speed)
    scale = MAX_PUSH_OUT / np.maximum(fastest, MAX_PUSH_OUT)
    scale[~labels_reached(label, touched)[:scale.size]] = 1.0
    if (scale == 1.0).all():
        return dv, dw
    scale = scale.take(label)[:, None]
    return dv * scale, dw * scale
