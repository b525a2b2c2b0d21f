"""Collision detection: broadphase pairs, then narrowphase contact manifolds.

    contacts = find_contacts(kind, params, position, rotation, *, static, group, mask,
                             excluded_pairs=None, margin=0.0, velocity=None, dt=None)
    contacts = find_contacts_with_cache(pair_cache, position, rotation, *, static, group,
                                        mask, margin=0.0, velocity=None, dt=None)
    contacts, manifolds = find_contacts_keeping(pair_cache, manifolds, position, rotation,
                                                *, static, ...)

(the second for bodies detected again and again: a broadphase.PairCache(kind, params,
excluded_pairs) kept between calls holds their shapes and excluded pairs; the third also
keeps the contacts of pairs that have barely moved against each other, see manifolds) return a
`ContactSet`: world points midway between the surfaces, unit normals from body_a to body_b,
depths (> 0 overlap, < 0 a speculative gap within the margin) and feature ids that stay the
same from step to step for the same contact point of a pair.

Pairs and the points each gives (body a first; planes are always body a):
    plane - sphere      1                  plane - capsule     1 or 2 (end spheres)
    plane - box         1..4 (deepest corners within the margin)
    plane - cylinder    1..10: per cap the lowest rim point and 4 fixed rim samples
                        (standing: 4, lying: 2, tilted: 1)
    sphere/capsule - sphere/capsule   1, or 2 for nearly parallel capsules (overlap ends)
    box - sphere        1                  box - capsule       1, or 2 along a face
    box - box           1..4 (SAT over 15 axes; clipped face manifold) or 1 (edge-edge)
    cylinder - sphere   1 (exact)          cylinder - capsule  1, or 2 on a cap / along the side
    cylinder - box      1..8, cylinder - cylinder 1..8: feature-point approximation
                        (see cylconvex.py)
Modules: broadphase (sweep-and-prune, filters), plane, round (spheres and capsules),
boxround, sat + boxbox, cylround, cylconvex, with sdf / rim / geometry helpers;
internal_faces (static boxes grown across the faces other static boxes cover, so that flush
tiles meet bodies as one box).
"""
from .contacts import ContactSet
from .detect import find_contacts, find_contacts_keeping, find_contacts_with_cache
from .manifolds import Manifolds, checked_manifolds, manifold_snapshot

__all__ = ["ContactSet", "Manifolds", "checked_manifolds", "find_contacts",
           "find_contacts_keeping", "find_contacts_with_cache", "manifold_snapshot"]
