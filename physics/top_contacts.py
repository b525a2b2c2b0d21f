"""Contacts of free tops (bodies without joints symmetric about their axis,
``Model.flows.tops``) aimed at the velocities their points have midway through the step's
drift.

A top's drift follows its exact torque-free flow (``rotation.top_rotation``), in which its
world angular velocity turns by h dw/dt = h I^-1 (-w x I w) within the step while its kick
carries no gyroscopic torque (``gyroscopic="implicit"``). A contact row is aimed with the
velocities at the drift's start, which its point keeps only to first order; on a rounded
tip the two parts of the change are both of the order of the spin and nearly cancel:

- the spin's turn with the axis, dw/dt x r, changes the velocity of the material under the
  tip (r: the point from the centre of mass);
- the point is not material: it stays where the shape meets the ground, and moves with the
  shape's centre of curvature c (for a shape of revolution on its axis, its own spin does not
  move it), w x (w x (c - x)).

Aimed at the start (with neither), the tip of a capsule top (r 3 cm, half length 10 cm,
0.2 kg, spinning 100 rad/s, tilted 5 degrees, mu 0.5) slid back against its roll a little
every step at dt 1/240, its friction tipped it over in 3.5 s and it lay flat; aimed with the
first alone (the seed's explicit gyroscopic torque), its friction stood it up to 0.35 degrees
within 1.5 s. The fine steps' answer (dt 1/3840) stays near 5.5 degrees. Aimed at the
velocity midway through the drift, start + h/2 (dw/dt x r + w x (w x (c - x))), the slip
averages zero over the drift. Only the friction rows: the normal rows keep the start's
aim, with which the tip above was held as well (tilt within 0.01 degrees of this), and
shifted too, a heap of bodies made overlapping (test_contacts, seed 4) flung one at
6.4 m/s from its jam."""
from __future__ import annotations

import numpy as np

from .math3d import cross, dot, einsum
from .rotation import body_inverse_inertia, inertia_times
from .shapes import CAPSULE, CYLINDER, SPHERE

# A top whose spin across its axis is below this share of its spin turns about its axis
# alone, to rounding: its flow moves none of its contacts, and its rows keep their targets
# exactly. (Shifted by the rounding of their midway change, 1e-14 m/s, the two contacts of a
# barrel landing from a ledge, symmetric about its middle, were met unequally by the solve:
# it rolled on turning 0.0033 rad/s, 3 mm off its line in 4 s.)
ALONG_AXIS = 1e-9


def midway_targets(world, model, uni, target, x, R, w, T, T_kick, h):
    """The bounded rows' velocity targets (mb,) m/s (``target``, or the block's where None),
    less h/2 times the rate at which the drift's torque-free flow changes the velocity of each
    friction row of a contact on a free top of revolution (capsule, cylinder; a sphere shape
    given an inertia symmetric about its z axis) from positions x (N, 3) m, rotations R
    (N, 3, 3) and angular velocities w (N, 3) rad/s, world frame: see the module.
    ``T - T_kick`` (N, 3), N m: the explicit gyroscopic torque the kick leaves to the drift.
    ``target`` itself (None or not) where no contact touches such a top."""
    contacts = uni.contacts
    k = len(contacts)
    if not k or not model.flows.tops.size:
        return target
    # (shapes of revolution about their z axis, with inertias symmetric about it)
    rows = model.flows.tops.rows[model.flows.tops.axes == 2]
    kind = world._kind[rows]
    tops = rows[(kind == CAPSULE) | (kind == CYLINDER) | (kind == SPHERE)]
    sides = (contacts.body_a, contacts.body_b)
    touching = [np.isin(body, tops) for body in sides]
    if not any(t.any() for t in touching):
        return target
    block = uni.block.rows
    J = (block.Ja[:3 * k], block.Jb[:3 * k])
    change = np.zeros(3 * k)
    inverse = body_inverse_inertia(world, model)    # (N, 3) principal, or (N, 3, 3)
    for body, on, Js in zip(sides, touching, J):
        contact = np.flatnonzero(on)
        i = body[contact]
        Ri, wi = R[i], w[i]
        axis = Ri[:, :, 2]
        across = wi - dot(wi, axis)[:, None] * axis
        turning = dot(across, across) > ALONG_AXIS ** 2 * dot(wi, wi)
        if not turning.any():
            continue
        contact, i, Ri, wi, axis = (a[turning] for a in (contact, i, Ri, wi, axis))
        # the centre of curvature under the contact: the nearest point of the axis segment
        arm = contacts.point[contact] - x[i]
        half = np.where(world._kind[i] == SPHERE, 0.0, world._params[i, 1])
        centre = np.clip(dot(axis, arm), -half, half)[:, None] * axis
        # dw/dt of the torque-free flow: I^-1 of the gyroscopic torque, in the body frame
        rate = einsum("nij,nj->ni", Ri, inertia_times(inverse[i], einsum(
            "nji,nj->ni", Ri, T[i] - T_kick[i])))
        moving = cross(wi, cross(wi, centre))
        # each contact's two friction rows (its normal row keeps the drift's start)
        r = (contact + k * np.arange(1, 3)[:, None]).ravel()
        change[r] += (dot(Js[r, 3:], np.tile(rate, (2, 1)))
                      + dot(Js[r, :3], np.tile(moving, (2, 1))))
    if not change.any():
        return target
    aimed = (uni.block.target if target is None else target).copy()
    aimed[:3 * k] -= 0.5 * h * change
    return aimed
