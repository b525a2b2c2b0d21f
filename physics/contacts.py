"""The collision stage of the step: detect contacts, warm start them, report their forces."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .collision import ContactSet, find_contacts_with_cache


@dataclass
class ContactReport:
    """Contacts of the last step, K of them, world frame.

    point (K, 3) m; normal (K, 3) unit, from body_a to body_b; depth (K,) m (negative: a
    speculative contact still separated by that gap); body_a, body_b (K,) indices into
    ``world.bodies``; normal_force (K,) N pushing body_b along +normal; friction_force (K, 3) N
    on body_b; friction_torque (K, 3) N m on body_b, the rolling and spin friction's (zero
    unless a body has ``rolling_friction`` or ``spin_friction``). body_a receives the opposite
    of all three.
    """
    point: np.ndarray
    normal: np.ndarray
    depth: np.ndarray
    body_a: np.ndarray
    body_b: np.ndarray
    normal_force: np.ndarray
    friction_force: np.ndarray
    friction_torque: np.ndarray

    @staticmethod
    def empty() -> "ContactReport":
        z3, z = np.zeros((0, 3)), np.zeros(0)
        i = np.zeros(0, dtype=np.intp)
        return ContactReport(z3, z3, z, i, i, z, z3, z3)

    def __len__(self):
        return self.depth.shape[0]


def excluded_pairs(world) -> np.ndarray:
    """(P, 2) body rows that never collide: jointed pairs (unless allowed) and ignored pairs."""
    pairs = {frozenset((j.body_a, j.body_b)) for j in world._joints if j.body_a is not None}
    pairs -= world._allowed
    pairs |= world._ignored
    rows = [sorted(b.row for b in p) for p in pairs]
    return np.array(rows, dtype=np.intp).reshape(-1, 2)


def detect(world, model, x, R, v, h) -> ContactSet:
    n = world._n
    if not model.collides:
        return ContactSet.empty()
    return find_contacts_with_cache(model.pair_cache, x, R, static=world._inv_mass[:n] == 0,
                                    group=world._group[:n], mask=world._mask[:n],
                                    margin=world.contact_margin, velocity=v, dt=h)


def warm_start(world, keys: np.ndarray):
    """(K, 3) multipliers (normal, tangent 1, tangent 2) of the same contacts last step, or
    (K, 6) with the spin and the two rolling torques when last step had rows for them (zero
    where a contact had none), and (K,) bool which contacts were there last step. keys (K,)
    int64: the contacts' ContactSet.packed_keys (last step's are in world._warm)."""
    old_keys, old_lam = world._warm
    if not (old_keys.size and keys.size):
        return np.zeros((keys.shape[0], 3)), np.zeros(keys.shape[0], dtype=bool)
    order = np.argsort(old_keys)
    sorted_keys = old_keys.take(order)
    pos = np.minimum(np.searchsorted(sorted_keys, keys), old_keys.size - 1)
    hit = sorted_keys.take(pos) == keys
    # every contact takes the multipliers found at its search position, then the misses
    # (usually few) are zeroed by index (a select over the (K, 3) array costs more)
    lam = old_lam.take(order.take(pos), axis=0)
    lam[np.flatnonzero(~hit)] = 0.0
    return lam, hit


def report(cs: ContactSet, lam: np.ndarray, tangents) -> ContactReport:
    """Build the user-facing report from the contact set and its (K, 3) multipliers, or (K, 6)
    with the torque rows' (see ``warm_start``)."""
    t1, t2 = tangents
    torque = np.zeros_like(cs.normal)
    if lam.shape[1] == 6:
        torque = lam[:, 3, None] * cs.normal + lam[:, 4, None] * t1 + lam[:, 5, None] * t2
    return ContactReport(cs.point, cs.normal, cs.depth, cs.body_a - 1, cs.body_b - 1,
                         lam[:, 0], lam[:, 1, None] * t1 + lam[:, 2, None] * t2, torque)
