"""Sample points on the rims of cylinder caps, used for cylinder manifolds."""
from __future__ import annotations

import numpy as np

from .geometry import rotate

# Local directions of the fixed rim samples of a cap: 4 at right angles are enough for an
# upright cylinder to stand, and their ids are stable because they are fixed in the body.
RIM_SAMPLES = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
PER_CAP = 1 + len(RIM_SAMPLES)


def rim_candidates(pos, rot, params, direction):
    """Rim points of both caps of M cylinders: (M, 10, 3) world, and a (M, 10) usable mask.

    pos (M, 3), rot (M, 3, 3), params (M, 4) = (radius, half_length, ...); direction (M, 3)
    world. Per cap (z = -half_length, then +half_length) 5 points: first the rim point furthest
    along `direction` (unusable when the direction is along the axis: then every rim point is
    as far and the samples cover it), then the 4 fixed RIM_SAMPLES. A sample coinciding with
    the furthest point is unusable, so a cylinder lying on its side is not reported twice.
    """
    m = len(pos)
    radius, hl = params[:, 0], params[:, 1]
    perp = np.einsum("mji,mj->mi", rot, direction)[:, :2]
    perp_len = np.hypot(perp[:, 0], perp[:, 1])
    has_far = perp_len > 1e-9
    far = perp / np.maximum(perp_len, 1e-300)[:, None]
    duplicate = has_far[:, None] & (far @ RIM_SAMPLES.T > 1.0 - 1e-9)
    usable = np.concatenate([has_far[:, None], ~duplicate], axis=1)

    xy = np.concatenate([far[:, None, :], np.broadcast_to(RIM_SAMPLES, (m, 4, 2))], axis=1)
    xy = xy * radius[:, None, None]
    caps = [np.concatenate([xy, np.broadcast_to((s * hl)[:, None, None], (m, PER_CAP, 1))], 2)
            for s in (-1.0, 1.0)]
    world = pos[:, None, :] + rotate(rot, np.concatenate(caps, axis=1))
    return world, np.concatenate([usable, usable], axis=1)
