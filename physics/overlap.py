"""Overlap queries: the bodies a shape placed somewhere would touch (a trigger volume, a
spawn point's check, an explosion's reach), found by the contacts' own broadphase and
narrowphase with the shape as one more body that only the query sees."""
from __future__ import annotations

import numpy as np

from .collision.detect import find_contacts
from .math3d import quat_to_matrix
from .shapes import PLANE, Shape
from .validation import check_bits, check_quaternion, check_vector


def overlapping_bodies(world, shape, position, orientation, mask) -> np.ndarray:
    """The indices into ``world.bodies`` (sorted) of the bodies whose shapes ``shape`` at
    ``position`` (3,) m and ``orientation`` (4,) (scalar first, body to world) would touch
    or overlap, among those whose ``collision_group`` shares a bit with ``mask``."""
    if not isinstance(shape, Shape) or shape.KIND == PLANE:
        raise ValueError(f"shape must be a Sphere, Box, Capsule or Cylinder, got {shape!r}")
    position = check_vector("position", position, 3)
    rotation = quat_to_matrix(check_quaternion("orientation", orientation)[None])
    mask = check_bits("mask", mask)
    n = world._n
    kind = np.append(world._kind[1:n], shape.KIND)
    # the world's bodies all count as static for this call, so only the query's pairs are
    # looked at (two static bodies never collide), and each meets the query by its group alone
    group = np.append(world._group[1:n], -1)
    cs = find_contacts(kind, np.vstack([world._params[1:n], shape.params]),
                       np.vstack([world._x[1:n], position]),
                       np.concatenate([quat_to_matrix(world._q[1:n]), rotation]),
                       static=np.append(np.ones(n - 1, dtype=bool), False), group=group,
                       mask=np.append(np.full(n - 1, -1), mask))
    query = n - 1
    touching = cs.depth >= 0.0
    other = np.where(cs.body_a == query, cs.body_b, cs.body_a)
    return np.unique(other[touching & ((cs.body_a == query) | (cs.body_b == query))])
