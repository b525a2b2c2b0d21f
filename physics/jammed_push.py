"""A push out of an overlap (made by positions: ``position_push.push_velocities``) that leaves a
mechanism's pairs no shallower is a jam, and is not made.

The push's rows are one contact a pair where the narrowphase finds one feature (two boxes'
edges across each other), and the push turns a jointed link about its pin: a turn that lifts
one edge out may sink another edge of the same pair, which the rows do not see. Near the
bottom of such a valley (no motion of the mechanism takes the pair out: a 6-link arm's link
made with its root, the pin, 1.2 mm inside a link two along, where the nearest free pose is
1.3 rad away) every push swung the link across it to the other edge: the joints went back
and forth by 0.02 rad a step, the pair at 1.17 and 1.32 mm by turns, and the rest of the arm
crept along (its last joint 0.08 rad a second at dt 1/240). Each pushed pair's deepest
contact is measured again (its narrowphase) where the push would take it; a jointed
mechanism whose pushed pairs would not all come out shallower takes half its push, then a
quarter, an eighth, and else none. Free bodies are not checked: every contact of a pair
pushes with the others in one solve, and no lever carries a push round to another feature.
"""
from __future__ import annotations

import numpy as np

from .collision.contacts import Shapes, deepest_candidates
from .collision.detect import narrowphase, pair_types, ranks_in_order
from .math3d import quat_to_matrix, rotate_quat

# halvings of a jointed mechanism's push tried before it is not made
PUSH_HALVINGS = 3


def progressing_push(world, model, uni, x, q, h, dv, dw):
    """The push's velocities dv, dw (N, 3) each (m/s, rad/s; moving the bodies by h times
    them from x (N, 3), q (N, 4), the drift's end) on each jointed mechanism
    (``model.mechanism``) scaled by the largest of 1, 1/2, ... (PUSH_HALVINGS halvings) with
    which each of its pairs that the push's contacts (``uni.block.push`` > 0) act on comes
    out shallower than at x, q (its deepest contact by its narrowphase), or by 0."""
    k = uni.n_contact_rows // 3
    pushed = np.flatnonzero(uni.block.push[:k] > 0.0)
    if not pushed.size:
        return dv, dw
    n = x.shape[0]
    label = model.mechanism
    jointed = np.zeros(n, dtype=bool)
    jointed[model.jointed] = True
    jointed &= world._inv_mass[:n] > 0.0
    a, b = uni.contacts.body_a.take(pushed), uni.contacts.body_b.take(pushed)
    on = jointed.take(a) | jointed.take(b)
    if not on.any():
        return dv, dw
    kind = world._kind[:n]
    order = ranks_in_order(kind, a[on], b[on])
    a, b = np.where(order, a[on], b[on]), np.where(order, b[on], a[on])
    pairs = np.unique(np.stack([a, b], axis=1), axis=0)
    a, b = pairs[:, 0], pairs[:, 1]
    before = _deepest(world, kind, a, b, x, quat_to_matrix(q))
    scale = np.ones(label.max(initial=0) + 1)
    checked = np.zeros(scale.size, dtype=bool)
    checked[label[jointed]] = True
    for halving in range(PUSH_HALVINGS + 1):
        s = scale.take(label)[:, None]
        after = _deepest(world, kind, a, b, x + h * s * dv,
                         quat_to_matrix(rotate_quat(q, h * s * dw)))
        deeper = after >= before
        if not deeper.any():
            break
        failed = np.zeros(scale.size, dtype=bool)
        failed[label.take(a[deeper])] = failed[label.take(b[deeper])] = True
        failed &= checked
        if not failed.any():
            break
        scale[failed] = 0.0 if halving == PUSH_HALVINGS else 0.5 * scale[failed]
    if (scale == 1.0).all():
        return dv, dw
    s = scale.take(label)[:, None]
    return dv * s, dw * s


def _deepest(world, kind, a, b, x, R):
    """(p,) m: the deepest contact (-inf: none within touch) of each pair (a, b) (p,) (body
    rows, in their narrowphase's order) with the bodies at x (N, 3), R (N, 3, 3)."""
    params = world._params
    deepest = np.full(a.size, -np.inf)
    types = pair_types(kind, a, b)
    for t in np.unique(types).tolist():
        rows = np.flatnonzero(types == t)
        ra, rb = a.take(rows), b.take(rows)
        side_a = Shapes(x.take(ra, axis=0), R.take(ra, axis=0), params.take(ra, axis=0))
        side_b = Shapes(x.take(rb, axis=0), R.take(rb, axis=0), params.take(rb, axis=0))
        _, _, depth, _, valid = narrowphase(t)(side_a, side_b, np.zeros(rows.size))
        deepest[rows] = deepest_candidates(np.asarray(depth, dtype=float), valid)[1]
    return deepest
