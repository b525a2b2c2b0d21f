"""What a step leaves for reporting forces: its ``StepReport``, the contacts' and limit rows'
multipliers kept for the next step's warm start and shown (``_store_contacts``), the mean over
several sub-steps (``substep_mean``), and the joints' wrenches and efforts
(``joint_wrenches``).

Its own module because it turns what a sub-step solved into what the world reports; both
integrators make a StepReport, and the world asks for joint_wrenches between steps.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .contacts import ContactReport, report as contact_report
from .limits import AXIS_SLOT, DRIVE, UPPER, WRENCH_WIDTH
from .math3d import cross, einsum
from .rows import Rows
from .unilateral import Unilateral


@dataclass
class StepReport:
    """What the last sub-step solved, kept for reporting forces."""
    rows: Rows | None
    lam: np.ndarray | None
    x: np.ndarray
    R: np.ndarray
    uni: Unilateral | None = None
    lam_b: np.ndarray | None = None
    # the impacts' forces over the sub-step (their impulses / h, impacts.resolve_impacts):
    # (K, 3) on the contacts' rows (normal, then the two friction rows) and (m,) on the joint
    # rows (None without joints), or None
    impact: tuple | None = None


def _store_contacts(world, report):
    """Keep what the next step's bounded solve starts from: the contacts' multipliers (by
    feature key; the report that ``world.contacts`` shows, with the impacts' forces) and the
    limit and motor rows' (by plan row). A contact or a limit this step's solve stopped from
    approaching keeps the multipliers it started from: its force was an impact's, and the
    next step's solve, whose softness is centred on where it starts
    (``bounded.CONTACT_SOFTNESS``), would push with a thousandth of it (restitution 0
    bounced at 0.1-0.4 % of the impact speed, and a rod slammed into a hinge limit at
    100 rad/s left it at 0.34 rad/s)."""
    uni = report.uni
    if uni is None or uni.n_contact_rows == 0:
        world._forget_contacts()
    else:           # (what _forget_contacts would clear that is not set again below)
        world._shown = world._limit_warm = None
    if uni is not None:
        world._manifolds = uni.manifolds
    if uni is not None and report.lam_b is not None and uni.limit_rows.size:
        lam = report.lam_b[uni.first_limit_row:]
        if uni.limit_stopped is not None and uni.limit_stopped.any():
            lam = np.where(uni.limit_stopped, uni.limit_start, lam)    # (as contacts below)
        world._limit_warm = (uni.limit_rows, lam)
    if uni is None or uni.n_contact_rows == 0:
        return
    lam = uni.contact_multipliers(report.lam_b)
    world._contacts = contact_report(uni.contacts, lam, uni.frames)
    if report.impact is not None:          # (shown, not kept for the next step)
        with_impact = lam.copy()
        with_impact[:, :3] += report.impact[0]
        # (made when first asked for: 1000 poured marbles have impacts every step, and their
        # report took 77 us a step that nothing read)
        contacts, frames = uni.contacts, uni.frames
        world._show(lambda: contact_report(contacts, with_impact, frames))
    if uni.stopped is not None and uni.stopped.any():
        stopped = np.flatnonzero(uni.stopped)
        lam = lam.copy()
        lam[stopped] = 0.0
        width = min(lam.shape[1], uni.warm.shape[1])
        lam[stopped, :width] = uni.warm[stopped, :width]
    world._warm = (uni.contacts.packed_keys, lam)


def _substep_done(world, report):
    """What one of several sub-steps leaves: its contacts kept for the next sub-step's warm
    start, as a step's are (``_store_contacts``), and what it reports: (the joints' wrenches
    (nj, WRENCH_WIDTH), its contacts' keys (K,) and their ContactReport, impacts' forces
    included, or None and None without contacts)."""
    world._report, world._wrench_cache = report, None
    wrenches = joint_wrenches(world)
    _store_contacts(world, report)
    if world._contacts is None:
        return wrenches, None, None
    shown = world._shown_contacts()
    return wrenches, world._warm[0], world._contacts if shown is None else shown


def substep_mean(world, parts):
    """Report a step of several sub-steps (``_substep_done``'s ``parts``, in order) as its
    impulses over dt: the joints' wrenches and the contacts' forces are their means over the
    sub-steps (zero where a contact was not). The contacts shown are every contact of the
    step, the last sub-step's first and in its order, each where it last was. (Reporting the
    last sub-step's alone, a box dropped on the ground at dt 1/60 with 4 sub-steps showed its
    weight in the step it landed in and never its impact.)"""
    count = len(parts)
    world._wrench_cache = world._with_held_wrenches(np.mean([part[0] for part in parts], axis=0))
    latest = [(keys, report) for _, keys, report in reversed(parts) if keys is not None]
    if not latest:
        return
    keys = np.concatenate([k for k, _ in latest])
    every = ContactReport.concatenate([r for _, r in latest])
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    contact = rank.take(inverse)
    shown = every.take(first.take(order))

    def mean(values):
        if values.ndim == 1:
            return np.bincount(contact, values, order.size) / count
        return np.stack([np.bincount(contact, c, order.size) for c in values.T], 1) / count

    shown.normal_force = mean(every.normal_force)
    shown.friction_force = mean(every.friction_force)
    shown.friction_torque = mean(every.friction_torque)
    world._show(shown)


def joint_wrenches(world) -> np.ndarray:
    """(nj, limits.WRENCH_WIDTH): the force and torque about the anchor on body_b, world
    frame, from the last step (joint rows plus their limits and motors), then the efforts
    (``efforts``)."""
    model = world._model()
    nj = len(world._joints)
    out = np.zeros((nj, WRENCH_WIDTH))
    r = world._report
    if r is None or nj == 0:
        return out
    wrench = out[:, :6]
    if r.rows is not None:
        lam = r.lam if r.impact is None or r.impact[1] is None else r.lam + r.impact[1]
        np.add.at(wrench, model.owner, r.rows.Jb * lam[:, None])
    if r.uni is not None:
        mine = r.uni.owner >= 0
        if mine.any():
            np.add.at(wrench, r.uni.owner[mine], r.uni.block.rows.Jb[mine] * r.lam_b[mine, None])
    rb = einsum("nij,nj->ni", r.R[model.joint_b], model.joint_lb)
    wrench[:, 3:] -= cross(rb, wrench[:, :3])
    if r.uni is not None:
        efforts(r.uni, r.lam_b, out)
    return out


def efforts(uni, lam_b, out):
    """Add to ``out`` (nj, WRENCH_WIDTH) each actuated coordinate's limit, drive (motor or
    servo) and friction efforts from the bounded rows' multipliers lam_b: the generalised
    force along the coordinate on body_b (N m for an angle, N for a position), with the
    coordinate's sign (a limit holding an angle down is negative)."""
    plan, rows = uni.limit_plan, uni.limit_rows
    if plan is None or not rows.size:
        return
    slot = plan.slot.take(rows)
    axis = slot == AXIS_SLOT
    keep = (slot >= 0) & ~axis
    group = plan.group.take(rows)
    column = 6 + 3 * slot + np.where(group <= UPPER, 0, np.where(group == DRIVE, 1, 2))
    lam = lam_b[uni.first_limit_row:]
    force = plan.sign.take(rows) * lam
    np.add.at(out, (plan.owner.take(rows)[keep], column[keep]), force[keep])
    if axis.any():
        # a Ball's friction: the torque of its rows about body_a's axes on body_b (world)
        Jb = uni.block.rows.Jb[uni.first_limit_row:][axis, 3:]
        start = 6 + 3 * AXIS_SLOT
        np.add.at(out[:, start:start + 3], plan.owner.take(rows)[axis], Jb * lam[axis, None])
