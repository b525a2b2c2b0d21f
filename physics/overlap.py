"""Overlap queries: the bodies a shape placed somewhere would touch (a trigger volume, a
spawn point's check, an explosion's reach), found by the contacts' own broadphase and
narrowphase with the shape as one more body that only the query sees, among the bodies whose
bounding boxes (about their bounding spheres) overlap the shape's."""
from __future__ import annotations

import numpy as np

from .collision.broadphase import _kind_extents
from .collision.detect import find_contacts
from .math3d import quat_to_matrix
from .raycast import world_radii
from .shapes import NO_SHAPE, PLANE, Shape
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
    kind, params, position_all = world._kind[1:n], world._params[1:n], world._x[1:n]
    extent = _kind_extents(shape.KIND, shape.params[None], rotation)[0]
    # (bodies apart from the shape's box by more than their bounding radius on some axis
    # cannot touch it; planes are unbounded)
    reach = world_radii(world, kind, params)[:, None] + extent
    reach = reach + 1e-9 * np.maximum(1.0, np.abs(position).max() + reach)
    apart = np.abs(position_all - position) > reach
    near = np.flatnonzero(((kind == PLANE) | ~(apart[:, 0] | apart[:, 1] | apart[:, 2]))
                          & (kind != NO_SHAPE))
    kind = np.append(kind[near], shape.KIND)
    # the world's bodies all count as static for this call, so only the query's pairs are
    # looked at (two static bodies never collide), and each meets the query by its group alone
    group = np.append(world._group[1:n][near], -1)
    m = near.size
    cs = find_contacts(kind, np.vstack([params[near], shape.params]),
                       np.vstack([position_all[near], position]),
                       np.concatenate([quat_to_matrix(world._q[1:n][near]), rotation]),
                       static=np.append(np.ones(m, dtype=bool), False), group=group,
                       mask=np.append(np.full(m, -1), mask))
    touching = cs.depth >= 0.0
    other = np.where(cs.body_a == m, cs.body_b, cs.body_a)
    return near[np.unique(other[touching & ((cs.body_a == m) | (cs.body_b == m))])]
