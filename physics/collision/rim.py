"""Sample points on the rims of cylinder caps, used for cylinder manifolds."""
from __future__ import annotations

import numpy as np

from .geometry import einsum, rotate

# Local directions of the fixed rim samples of a cap: 4 at right angles are enough for an
# upright cylinder to stand, and their ids are stable because they are fixed in the body.
RIM_SAMPLES = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
PER_CAP = 1 + len(RIM_SAMPLES)
# A sample within 45 deg (about the axis) of the furthest rim point is dropped: the furthest
# point stands in for it. Such a sample is almost as deep but lies on the rim's curve, and as
# a speculative contact (a velocity-level row, linear in time) a sample rolling down towards
# the touching line looks as if it went through the other surface within the step: its row
# kicked a rolling cylinder up and braked it (5 m/s -> 3.3 m/s in 2 s). From 45 deg on, a
# sample's gap r sin(tilt) (1 - cos phi) outruns its linear approach h w r sin(tilt) sin(phi)
# unless the rim turns by w h > tan(phi / 2) = 0.41 rad (24 deg) in one step. The kept
# samples stay within 135 deg of each other and of the furthest point, so a cap resting flat
# keeps a support polygon around its centre.
NEAR_FAR_COS = np.cos(np.pi / 4)
# A sample whose cap is tilted from facing the other surface by so much that it lies further
# behind the furthest point than FLAT_REACH times the radius is dropped too: it reaches the
# surface only by the cylinder tipping onto that cap, and as a speculative contact the spin
# about the axis sends it down (linear in time) while the rim only turns into itself. A
# wheel lying on its side whose rim turned more than 0.41 rad a step (dt 1/60 at 8 m/s on a
# 0.3 m wheel) had its front and back samples, at the height of its axis, met as contacts
# that kicked it up and braked it: it hopped 1.24 m at 20 m/s and was down to 7.6 m/s in
# 3 s (the car scene at 15 m/s topped out at 9.3 m/s). A cap within a few degrees of facing
# the surface (FLAT_REACH: 5.7 degrees for the samples at right angles to the furthest
# point, 2.9 for the one opposite) keeps its samples: it rests, or lands, on them.
FLAT_REACH = 0.1
# which cap each of the 2 x PER_CAP rim points lies on (-1: z = -half_length), as a column
_CAP_SIGN = np.repeat([-1.0, 1.0], PER_CAP)[:, None]


def rim_candidates(pos, rot, params, direction, faces_in=None):
    """Rim points of both caps of M cylinders: (M, 10, 3) world, and a (M, 10) usable mask;
    with faces_in (M, 3, 3), another body's rotation, also the outward unit normals of the
    two faces that meet at each rim point in that body's frame: (side, cap), each (M, 10, 3).

    pos (M, 3), rot (M, 3, 3), params (M, 4) = (radius, half_length, ...); direction (M, 3)
    world. Per cap (z = -half_length, then +half_length) 5 points: first the rim point furthest
    along `direction` (unusable when the direction is along the axis: then every rim point is
    as far and the samples cover it), then the 4 fixed RIM_SAMPLES. A sample within 45 deg of
    the furthest point is unusable (see NEAR_FAR_COS), so a cylinder lying on its side is not
    reported twice and a rolling one is not braked by the samples passing under it; so is one
    of a cap tilted from facing ``direction`` (FLAT_REACH), which only tipping brings down.
    """
    m = len(pos)
    radius, hl = params[:, 0], params[:, 1]
    perp = einsum("mji,mj->mi", rot, direction)[:, :2]
    perp_len = np.hypot(perp[:, 0], perp[:, 1])
    has_far = perp_len > 1e-9
    far = perp / np.maximum(perp_len, 1e-300)[:, None]
    along = far @ RIM_SAMPLES.T
    # (behind the furthest point by radius x perp_len x (1 - along))
    duplicate = has_far[:, None] & ((along > NEAR_FAR_COS + 1e-12) |
                                    (perp_len[:, None] * (1.0 - along) > FLAT_REACH))
    usable = np.concatenate([has_far[:, None], ~duplicate], axis=1)

    xy = np.concatenate([far[:, None, :], np.broadcast_to(RIM_SAMPLES, (m, 4, 2))], axis=1)
    xy = xy * radius[:, None, None]
    caps = [np.concatenate([xy, np.broadcast_to((s * hl)[:, None, None], (m, PER_CAP, 1))], 2)
            for s in (-1.0, 1.0)]
    world = pos[:, None, :] + rotate(rot, np.concatenate(caps, axis=1))
    usable = np.concatenate([usable, usable], axis=1)
    if faces_in is None:
        return world, usable
    # the cylinder's axes in the other frame; its side's normal at a rim point is the point's
    # local (x, y) direction, its cap's -z or +z (by columns: no einsum over the points)
    axes = einsum("mji,mjk->mik", faces_in, rot)[:, None]
    u = np.concatenate([xy, xy], axis=1) / radius[:, None, None]
    side = axes[..., 0] * u[..., :1] + axes[..., 1] * u[..., 1:]
    cap = axes[..., 2] * _CAP_SIGN
    return world, usable, (side, cap)


def buried(depth):
    """(M, 1) bool: whether every one of the 10 rim points of each of M cylinders lies under
    the other surface, depth (M, 10) (the depths of ``rim_candidates``' points): then all are
    contacts, usable or not. The samples dropped for resting and rolling (NEAR_FAR_COS,
    FLAT_REACH) leave the contacts on the lowest side of the rim alone, and a cylinder buried
    deeper than its own tilt raises there was pushed out by turning about its centre: a coin
    (r 1 cm, 1 mm thick, 2 g) tossed onto the ground at dt 1/60 sank 16 mm in and stayed
    there, its push-out at the low rim turning it 0.5 rad a step, so that the other rim came
    down as deep, period-2, for ever. Spread over the whole rim the push lifts it."""
    return (depth > 0.0).all(axis=1, keepdims=True)
