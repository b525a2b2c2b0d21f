"""Rows for contacts: one normal row (lambda >= 0) and two friction rows (|lambda| <= mu lambda_n,
a pyramid) per contact point, all contacts in one vectorised call; and, for the contacts of
bodies with rolling or spin friction, three torque rows bounded the same way
(``with_torque_rows``).

These rows are velocity-level: each carries the normal velocity it aims for by the end of the
step (``target``): a push-out of the penetration beyond a small slop or, for a speculative
contact still separated by a gap g, the approach speed g / h that just closes it (this is what
stops fast bodies tunnelling). Bounces are resolved before the step
(``impacts.resolve_impacts``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .math3d import cross_components, dot, einsum, nonzero_rows
from .push_out import push_out
from .rows import Rows

RESTITUTION_THRESHOLD = 0.2   # m/s: slower impacts do not bounce (resting contact stays put)
SLOP = 3e-4                   # m of penetration left alone, so resting contacts do not jitter
SPECULATIVE_TOUCH = 5e-4      # m: a gap this small counts as touching for impacts
# m/s: the fastest a penetration is pushed out (Box2D's contact push-out speed). Beyond the
# slop a contact is pushed out at its depth over the stabilisation time T; bodies made
# overlapping by centimetres (dropped into one another, or jammed together) would otherwise
# fly apart at tens of m/s and, among light bodies squeezed between heavy ones, feed each other
# that speed step after step (a heap of 20 overlapping bodies reached 1e16 J in 6 steps).
MAX_PUSH_OUT = 3.0
# m/s: of the push-out, what the bodies keep as speed after the step; the rest moves them
# without (``BoundedRows.push``; Bullet's split impulse, Box2D v3's relax). Kept whole, the
# push was the energy of the overlap: a box put 0.4 m into the floor jumped 0.41 m out of it,
# two spheres made to overlap by 0.8 m flew apart at 1.5 m/s each. A push that fades below
# this leaves at most this speed (a hop of half a millimetre); resting contacts, within the
# slop, never push.
KEPT_PUSH = 0.1
# m/s: a contact whose surfaces slide faster than this at the step's start takes its first
# friction row along the slip and its second across it, so that sliding friction opposes the
# slip with mu times the normal force in every direction (a pyramid fixed in the world frame
# drags a box sliding at 45 degrees with sqrt(2) mu N, and one at 22.5 degrees sideways);
# slower ones (resting, sticking) take it along the slip the applied loads would add in the
# step (``friction_frame``) where that is faster, or else keep the frame of their normal alone
SLIP_SPEED = 1e-3
# sticking contacts whose friction held with this times mu N or more last step, along no axis
# of the pyramid they have now (their normal's own, or their load's: its diagonals hold up to
# sqrt(2) mu N, beyond Coulomb's cone), take their first friction rows along that force
# (``gripping_friction``): the loads that pushed them there came through other contacts or
# joints, which ``friction_frame``'s load leaves out. Rows so turned that hold with mu N stay
# turned. (Along an axis the pyramid holds mu N: turning it there changed how a settling
# pyramid of boxes was solved, and it took 1902 iterations over 48 steps, not 82.)
GRIP = 0.99
ON_AXIS = 1.0 - 1e-4      # cos of the angle (0.8 degrees) within which a force is on an axis
# m/s: a contact sliding faster than this will still slide at the step's end (friction takes
# about mu g h = 2 cm/s a step off a slide at mu 0.5, 240 Hz), so its friction is mu N along
# the slip alone: the row across it is free (held at zero), or a box sliding across an incline
# would be held from drifting downhill by up to mu N more (sqrt(2) mu N in all)
GLIDE_SPEED = 0.02
# rad/s: a contact with rolling friction that rolls faster than this (the tangential part of
# w_b - w_a) lays its rolling rows' first tangent along the way it rolls (``rolling_frame``),
# so that they resist the roll and the tip across it; rolling faster than ROLL_GLIDE_RATE it
# has no rolling resistance across its roll (a pyramid fixed by the normal slowed a ball
# rolling at 45 degrees with sqrt(2) times its rolling resistance, and one at 22.5 sideways).
# ROLL_GLIDE_RATE is about what a rolling resistance of 0.005 m takes off a 0.1 m ball in a
# step at 240 Hz (5 g h / (7 r^2) = 0.015 rad/s), ten times over
ROLL_RATE = 0.01
ROLL_GLIDE_RATE = 0.2

# a normal row whose torque arm |r x n| is at most this fraction of the offset |r| has a
# normal through the body's centre (a sphere's): its arm is round-off and is made exactly 0
# (over 2 s of every contact scene such arms were at most 5e-15 |r|, all others 8e-5 |r| or more)
CENTRAL_ARM = 1e-12


@dataclass
class BoundedRows:
    """Rows with bounds lo <= lambda <= hi and a velocity target (m/s or rad/s)."""
    rows: Rows
    lo: np.ndarray
    hi: np.ndarray
    target: np.ndarray
    friction_normal: np.ndarray   # index (within this block) of the bounding normal row, or -1
    mu: np.ndarray
    cfm: np.ndarray               # per-row compliance (soft rows, e.g. servos); 0 = hard
    body_space: object = None     # bodyspace.BodySpace of these rows, once the solve built it
    # rows without the bounded rows' softness (bounded.CONTACT_SOFTNESS), or None for none:
    # a limit that a motor drives into (limits._limits_under_motors)
    hard: np.ndarray | None = None
    # (mb,) the part of each target, >= 0 (m/s or rad/s), that pushes a penetration or a
    # limit's overshoot back and that the step moves the bodies by without keeping it as speed
    # (step.without_push), or None for none
    push: np.ndarray | None = None

    def head(self, k: int) -> "BoundedRows":
        """The first k rows (a friction row's normal comes before it)."""
        part = slice(0, k)
        return BoundedRows(self.rows.at(part), self.lo[part], self.hi[part], self.target[part],
                           self.friction_normal[part], self.mu[part], self.cfm[part],
                           hard=None if self.hard is None else self.hard[part],
                           push=None if self.push is None else self.push[part])

    @staticmethod
    def concatenate(blocks):
        blocks = [b for b in blocks if b is not None and b.rows.count]
        if len(blocks) <= 1:
            return blocks[0] if blocks else None
        offsets = np.cumsum([0] + [b.rows.count for b in blocks[:-1]])
        fn = [np.where(b.friction_normal >= 0, b.friction_normal + o, -1)
              for b, o in zip(blocks, offsets)]
        return BoundedRows(Rows.concatenate([b.rows for b in blocks]),
                           *(np.concatenate([getattr(b, f) for b in blocks])
                             for f in ("lo", "hi", "target")),
                           np.concatenate(fn),
                           *(np.concatenate([getattr(b, f) for b in blocks]) for f in ("mu", "cfm")),
                           hard=_concatenated(blocks, "hard", bool),
                           push=_concatenated(blocks, "push", float))


def _concatenated(blocks, field, dtype):
    """A field that blocks may leave None, concatenated with zeros (False) for those, or None
    where all do."""
    if all(getattr(b, field) is None for b in blocks):
        return None
    return np.concatenate([np.zeros(b.rows.count, dtype=dtype) if getattr(b, field) is None
                           else getattr(b, field) for b in blocks])


@dataclass
class ContactFrames:
    """The directions of K contacts' rows, as ``contact_rows`` laid them: what the report and
    the warm start read them by."""
    tangents: tuple       # (t1, t2) (K, 3) each: the friction rows' directions
    roll_tangents: tuple  # (r1, r2) (K, 3) each: the rolling rows' (rolling_frame)
    sliding: np.ndarray   # (K,) bool: t1 follows the slip (friction_frame)
    rolling: np.ndarray   # (K,) bool: rolls faster than ROLL_GLIDE_RATE
    turned: np.ndarray    # (K,) bool: the friction or rolling rows left the normal's frame

    @staticmethod
    def empty() -> "ContactFrames":
        none, no = np.zeros((0, 3)), np.zeros(0, dtype=bool)
        return ContactFrames((none, none), (none, none), no, no, no)


def _frame(normal):
    """(3 components, 3 directions, k): each normal n (k, 3) and two unit tangents completing
    it to a right-handed frame, by components: t1 = n x helper / |.| with helper (1, 0, 0),
    or (0, 1, 0) where n is near x; t2 = n x t1. (Whole contiguous components: numpy's
    operations on the columns of (k, 3) arrays cost several times more.)"""
    D = np.empty((3, 3, normal.shape[0]))
    np.copyto(D[:, 0], normal.T)
    h0 = (np.abs(D[0, 0]) < 0.9).astype(float)       # helper (1, 0, 0) or (0, 1, 0)
    cross_components(D[:, 0], (h0, 1.0 - h0, 0.0), D[:, 1])
    sq = D[:, 1] * D[:, 1]
    D[:, 1] /= np.sqrt((sq[0] + sq[1]) + sq[2])     # = np.linalg.norm
    cross_components(D[:, 0], D[:, 1], D[:, 2])
    return D


def surface_points(point, normal, depth):
    """(2, k, 3) world, m: where b's and a's surfaces are at k contacts (b's side first;
    ``point`` itself, (k, 3), where no contact has a gap), each body's own surface point
    across a gap (depth (k,) < 0: ``point`` is midway, the
    surfaces ``normal`` (k, 3) times the gap / 2 on either side of it), ``point`` (k, 3)
    itself where they touch or overlap. Those are the points that meet, so the rows' arms
    go to them: from the midway point, a ball meeting the ground at 3 m/s sideways and
    10 m/s down from a gap of 0.1 m (r 0.15 m, e 1, mu 0.5, dt 1/60) was turned about a
    point 5 cm below its surface by its impact's friction, and left at 2.52 m/s with
    w r = 1.74 m/s where it rolls at 15/7 = 2.14 (and at 2.30 rolling with e 0)."""
    half_gap = np.minimum(depth, 0.0)
    if not half_gap.any():
        return point            # (broadcasts as both bodies': no stacked copy to make)
    half_gap *= 0.5
    shift = half_gap[:, None] * normal            # (0 where they touch)
    points = np.empty((2,) + point.shape)
    np.subtract(point, shift, out=points[0])
    np.add(point, shift, out=points[1])
    return points


def friction_frame(kin, a, b, point, normal, h=0.0, load=None, rolls=None, grip=None,
                   depth=None):
    """(D, speed, r, rolling, turned): each contact's frame (3 components, 3 directions, k) as
    ``_frame`` makes it from the normal, but with the first tangent along the surfaces' slip
    (the tangential velocity of b's point relative to a's) where that is faster than
    SLIP_SPEED, or else along the slip at the step's end without contact forces, the slip
    plus h times the tangential part of the relative ``load`` (n, 3) (the bodies'
    accelerations by the applied loads, m/s^2), where that is faster than SLIP_SPEED; the
    slip speeds (k,) m/s; the points' offsets from b's and a's centres (3 components, 2, k),
    as ``contact_rows`` takes them (each body's own ``surface_points`` across a gap, with
    the contacts' depth (k,) m; None: ``point`` for both); ``rolling_frame``'s (frame,
    rates, rolling) for the contacts that ``rolls`` (k,) bool (those with rolling friction;
    None if none); and which contacts' friction rows left the frame of the normal alone
    (k,) bool. A contact that does not slide takes its first tangent along ``grip`` (k, 3)
    where that is not zero and lies along neither tangent of the frame it would have (its
    normal's, or its load's): the friction force that held its pair, or it, with all mu N
    last step (``gripping_friction``).

    Why a sticking contact follows its load: the pyramid |f_1|, |f_2| <= mu N holds up to
    sqrt(2) mu N along its diagonals. A box whose downhill lay 45 degrees from its contacts'
    frames stuck on a 30 degree incline at mu = 0.5, where it slides from 26.6 degrees; with
    t1 downhill, mu N holds it along the slope whichever way the box and the slope turn.
    Loads that come through other contacts or through joints are not in ``load`` (a box on
    a box on a slope: both fall alike), but they leave a sticking contact's pyramid holding
    more than mu N along a diagonal; ``grip`` turns it along that force the next step,
    where it holds mu N, and slides if it needs more. Also where the load turned the
    pyramid: a marble leaning on a wall, its pyramid turned down the wall by gravity and
    its neighbours pushing it along the wall, held up to 1.34 mu N on a diagonal for good
    while the grip gave way to the load."""
    D = _frame(normal)
    k = normal.shape[0]
    both = np.concatenate((b, a))
    # by components (3, 2, k), b's side then a's: the points' velocities v + w x r, now and,
    # with the load, at the step's end without contact forces (3, 2, 2, k)
    points = point if depth is None else surface_points(point, normal, depth)
    r = (points - kin.x.take(both, axis=0).reshape(2, k, 3)).transpose(2, 0, 1).copy()
    w = kin.w.take(both, axis=0).reshape(2, k, 3).transpose(2, 0, 1)
    v = kin.v if load is None else np.concatenate((kin.v, kin.v + h * load), axis=1)
    u = v.take(both, axis=0).reshape(2, k, -1, 3).transpose(3, 2, 0, 1).copy()
    spin = np.empty((3, 2, k))
    cross_components(w, r, spin)
    u += spin[:, None]
    rel = u[:, :, 0] - u[:, :, 1]                  # (3, 1 or 2, k): now, ahead
    speeds = _tangential(rel, D[:, 0, None])
    speed = speeds[0]
    sliding = speed > SLIP_SPEED
    turned = sliding
    if load is not None:
        turned = speeds[1] > SLIP_SPEED
        turned |= sliding
    if turned.any():
        # the slip where it is faster than SLIP_SPEED, else the slip ahead (on whole
        # components: in a pour nine contacts in ten slide, and gathering them cost more)
        way = rel[:, 0] if load is None else np.where(sliding, rel[:, 0], rel[:, 1])
        way /= np.maximum(np.where(sliding, speed, speeds[-1]), SLIP_SPEED)
        np.copyto(D[:, 1], way, where=turned)
        cross_components(D[:, 0], D[:, 1], D[:, 2])
    if grip is not None:
        # (the contacts with a grip alone, the rest having none to turn to: 20 of 3408 in a
        # pour of 1000 marbles)
        at = np.flatnonzero(nonzero_rows(grip))
        held = grip.take(at, axis=0).T.copy()   # (3 components, m), made tangential
        frame = D.take(at, axis=2)              # (3 components, 3 directions, m)
        held_size = _tangential(held, frame[:, 0])
        # (along an axis of the pyramid the contact has now, the normal's own or its load's,
        # it held no more than mu N: left so)
        along = np.maximum(np.abs(_dot(held, frame[:, 1])), np.abs(_dot(held, frame[:, 2])))
        gripped = (held_size > 0.0) & (along < ON_AXIS * held_size) & ~sliding.take(at)
        if gripped.any():
            np.divide(held, held_size, out=frame[:, 1], where=gripped)
            cross_components(frame[:, 0], frame[:, 1], frame[:, 2])
            D[:, 1:, at] = frame[:, 1:]
            turned = turned.copy()
            turned[at] |= gripped
    rolling = None if rolls is None or not rolls.any() else rolling_frame(D, w, rolls)
    return D, speed, r, rolling, turned


def _dot(x, y):
    """x . y of vectors by components (3 components, ...): (x0 y0 + x1 y1) + x2 y2, the
    three products in one operation."""
    p = x * y
    return (p[0] + p[1]) + p[2]


def _tangential(x, n):
    """|x_t|: x (3 components, ...) made its part x_t across the normals n (3 components,
    ...) in place, and that part's length."""
    x -= _dot(x, n) * n
    return np.sqrt(_dot(x, x))


def rolling_frame(D, w, rolls):
    """(R, rates, rolling): the rolling rows' frame (3 components, 3 directions, k): the
    friction rows' frame D, but with its first tangent along the way b rolls on a, w_t x n
    (w_t the tangential part of w_b - w_a; w (3 components, 2, k), b's side then a's), where
    |w_t| is more than ROLL_RATE; the rates |w_t| (k,) rad/s, 0 where not ``rolls``; which
    contacts roll so (k,) bool.

    A frame of its own: a ball rolling at 45 degrees to the frame of its normal was braked
    with sqrt(2) times its rolling resistance, and one at 22.5 degrees pulled sideways; and
    the friction rows must keep following the slip the load would start (a ball rolling 45
    degrees off downhill on a slope gripped with up to sqrt(2) mu N before it slipped,
    when its friction rows followed the roll)."""
    n = D[:, 0]
    spin_rel = w[:, 0] - w[:, 1]
    rate = np.where(rolls, _tangential(spin_rel, n), 0.0)
    rolling = rate > ROLL_RATE
    if not rolling.any():
        return D, rate, rolling
    way = np.empty_like(n)
    cross_components(spin_rel, n, way)
    R = D.copy()
    np.copyto(R[:, 1], way / np.maximum(rate, ROLL_RATE), where=rolling)
    cross_components(R[:, 0], R[:, 1], R[:, 2])
    return R, rate, rolling


def _fill(J, r, D):
    """J (2, 3k, 6) <- [d, r x d] for the offsets r (3 components, 2, k) of both sides and
    the directions d of the frame D (3, 3, k): made by components, for both sides at once,
    in a (6 columns, 2, 3, k) block whose rows are whole contiguous arrays, then copied into
    J's rows in one pass. (Written into J's strided columns directly, a column at a time,
    each of the seven passes went over all of J: 3408 contacts, 1 MB, 230 against 200 us;
    401 contacts 41 against 37.)"""
    k = D.shape[2]
    block = np.empty((6, 2, 3, k))
    np.copyto(block[:3], D[:, None])
    cross_components(r[:, :, None], D, block[3:])
    # (exact zeros, which the solver's long solves leave out of their sparse products: a
    # third of the entries of 1000 spheres)
    normal_arm = block[3:, :, 0]                                  # (3, 2, k)
    arm_sq = (normal_arm[0] * normal_arm[0] + normal_arm[1] * normal_arm[1]) \
        + normal_arm[2] * normal_arm[2]
    offset_sq = (r[0] * r[0] + r[1] * r[1]) + r[2] * r[2]
    np.copyto(normal_arm, 0.0, where=arm_sq <= (CENTRAL_ARM * CENTRAL_ARM) * offset_sq)
    np.copyto(J.reshape(2, 3, k, 6), block.transpose(1, 2, 3, 0))


def glide_speeds(friction, gravity, h):
    """(K,) m/s: the slip a contact must beat to glide (its row across the slip free):
    GLIDE_SPEED, or what friction takes off a slide held down by its weight in a step, mu |g|
    h, where that is more. Freed on a slower slide, the row along the slip, turned by the
    slip of the step's start, overshoots: a 2 kg slab pushed at 1.02 mu m g with mu 2 at dt
    1/60 (mu g h = 0.33 m/s) swung its yaw and its slip across back and forth, five times
    more each step. (Measured by the bodies' normal loads instead, the loads of bodies
    jammed into one another kept their rows across from gliding, and their friction flung
    them: an overlapping heap reached 49 m/s.)"""
    # (|g| as np.linalg.norm makes it, the same bits, without its Python layers)
    return np.maximum(GLIDE_SPEED, friction * (np.sqrt(gravity.dot(gravity)) * h))


class RowEnds(NamedTuple):
    """What K contacts' rows take from their bodies a, b (K,) alone, as ``contact_rows`` lays
    them: each row's bodies (3K,) each (the contacts' own first), the bounds lo, hi (3K,)
    (normal rows >= 0, friction rows free: their bound is mu times their normal's), each
    friction row's normal row (3K,), and zeros (3K,) for the rows' compliance and Jdu.
    Read-only: kept from step to step while the contacts are on the same bodies
    (``row_ends``)."""
    rows_a: np.ndarray
    rows_b: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    friction_normal: np.ndarray
    zeros: np.ndarray


def row_ends(a, b, last=None) -> RowEnds:
    """The RowEnds of contacts on bodies a, b (K,), or ``last`` (a RowEnds or None) where it
    was made for the same bodies (a resting pile's contacts step after step: 55 boxes, 401
    contacts, ~10 numpy calls a step saved)."""
    k = a.shape[0]
    if (last is not None and last.rows_a.shape[0] == 3 * k
            and bool((last.rows_a[:k] == a).all()) and bool((last.rows_b[:k] == b).all())):
        return last
    # (filled in place: np.full's Python layer costs ~1 us a call)
    lo, hi = np.empty(3 * k), np.empty(3 * k)
    lo[:k] = 0.0
    lo[k:] = -np.inf
    hi.fill(np.inf)
    friction_normal = np.empty((3, k), dtype=np.int64)
    friction_normal[0] = -1
    friction_normal[1:] = np.arange(k)
    ends = RowEnds(np.concatenate((a, a, a)), np.concatenate((b, b, b)), lo, hi,
                   friction_normal.reshape(-1), np.zeros(3 * k))
    for x in ends:
        x.flags.writeable = False
    return ends


def contact_rows(kin, a, b, point, normal, depth, friction, h, T, load=None,
                 rolls=None, grip=None, glide=GLIDE_SPEED,
                 lead=None, ends=None, kept=KEPT_PUSH) -> tuple[BoundedRows, ContactFrames]:
    """Rows for K contacts between bodies a and b (rows of the world arrays).

    point (K, 3) world, normal (K, 3) from a to b, depth (K,) m (negative: a gap);
    friction (K,) combined coefficients; h the step, T the stabilisation time; load (n, 3)
    the bodies' accelerations by the applied loads (m/s^2); rolls (K,) bool: the contacts
    with rolling friction; grip (K, 3) or None: ``gripping_friction``. The friction rows
    lie along and across the slip of a sliding contact, or the slip its load would start,
    or the friction that held it with all mu N last step (``friction_frame``), and the row
    across the slip is free where the contact glides, faster than ``glide`` (m/s, scalar
    or (K,): ``glide_speeds``); the ContactFrames
    returned with the block say so, and give the rolling rows' tangents
    (``rolling_frame``). A touching contact's normal row aims at pushing out its depth
    beyond the slop in T, a gap's at closing no more than the gap in h (speculative); lead
    (K,) m or None: of each depth, what a turn within the step adds (``ContactSet.lead``),
    which the row meets within h. kept (m/s, scalar or (K,)): of each push-out, what the
    bodies keep as speed (KEPT_PUSH; 0 where velocity motors hold them,
    ``unilateral.held_contacts_kept_push``); the rest is the block's ``push``, made by
    positions.
    Bounces are not a target here: impacts are resolved before the step's solve
    (``impacts.resolve_impacts``).

    Rows are ordered all normals, then all first tangents, then all second tangents; each
    row of b is [d, r_b x d] and of a -[d, r_a x d] for its direction d, r_b and r_a the
    offsets of each body's own surface point across a gap (``surface_points``). The blocks
    are written in place (a few numpy calls on whole components, no tiling or
    concatenation).
    ends: the contacts' ``row_ends`` (read-only arrays the rows share), or None to make them.
    """
    k = a.shape[0]
    ends = row_ends(a, b) if ends is None else ends
    # the offsets of the points from b's and a's centres by components, (3, 2, k)
    # (x.take(rows, axis=0) is x[rows]: numpy's fancy indexing of rows is several times slower)
    D, slip, r, rolling, turned = friction_frame(kin, a, b, point, normal, h, load, rolls, grip,
                                                 depth)
    # the row across the slip is free only where the contact glides. A slow slide's, bounded
    # by mu N, may hold up to sqrt(2) mu N with the row along (a box on a box on a slope
    # facing 15 degrees off its sides slid 8 % too slowly until it glided); but freed, its
    # friction turns the body about the normal with all mu N by the directions of the step's
    # start, a torque that overshoots (a box landing on a box at 2.4 cm/s, at 0.98 of the
    # friction angle, rocked its yaw back and forth, 1.5 times more each step, and slid on
    # for 4 cm instead of stopping within 5 mm)
    free = slip > glide
    if rolling is not None:
        R, rate, rolls_so = rolling
        turned = turned | rolls_so
        rolls_fast = rate > ROLL_GLIDE_RATE
    else:
        R, rolls_fast = D, np.zeros(k, dtype=bool)
    J = np.empty((2, 3 * k, 6))                 # b's rows and a's, one block for both
    _fill(J, r, D)
    Jb, Ja = J
    np.negative(Ja, out=Ja)
    C = np.zeros(3 * k)
    np.negative(depth, out=C[:k])
    rows = Rows(ends.rows_a, ends.rows_b, C, Ja, Jb, ends.zeros)
    target = np.zeros(3 * k)
    start = depth if lead is None else depth - lead
    out = push_out(start - SLOP, h, T, MAX_PUSH_OUT)
    target[:k] = np.where(start >= 0, out, start / h)
    if lead is not None:
        target[:k] += lead / h
    push = np.zeros(3 * k)
    push[:k] = np.maximum(out - kept, 0.0)
    block = BoundedRows(
        rows,
        lo=ends.lo,
        hi=ends.hi,
        target=target,
        friction_normal=ends.friction_normal,
        mu=np.concatenate((friction, friction, np.where(free, 0.0, friction))),
        cfm=ends.zeros,
        push=push,
    )
    return block, ContactFrames((Jb[k:2 * k, :3], Jb[2 * k:, :3]), (R[:, 1].T, R[:, 2].T),
                                slip > SLIP_SPEED, rolls_fast, turned)


def with_torque_rows(block: BoundedRows, frames: ContactFrames, spin, rolling):
    """The contact block of ``contact_rows`` followed by the rows of the spin and rolling
    friction of the contacts that have any, and, per run of those rows (spin, first rolling,
    second rolling), its contacts (indices, in order).

    A contact c with spin friction has a spin row about its normal n, one with rolling
    friction two rolling rows about the tangents r1, r2 of its rolling frame
    (``frames.roll_tangents``), each on the relative angular velocity w_b - w_a along its
    direction d ([0, d] for b, -[0, d] for a), aiming at zero and bounded by |tau| <=
    spin_c lambda_n (the spin row) or rolling_c lambda_n (the others, a pyramid) of c's
    normal row; the first, across the roll, only where the contact is not ``frames.rolling``
    (rolling, it is free). The new rows are ordered all spin rows, then all first and all
    second rolling rows, as the block's. spin, rolling (k,) m. The block itself when no
    contact has either. (Rows that would be held at zero are not made: spin rows of 1000
    marbles with rolling friction alone were a fifth of their rows, and while they pour most
    roll.)"""
    spins, rolls = spin > 0, rolling > 0
    if not (spins.any() or rolls.any()):        # (a box pile: 35 calls a step saved)
        none = np.zeros(0, dtype=np.intp)
        return block, (none, none, none)
    runs = (spins.nonzero()[0], (rolls & ~frames.rolling).nonzero()[0], rolls.nonzero()[0])
    has = np.concatenate(runs)
    k = block.rows.count // 3
    a, b = block.rows.a[:k].take(has), block.rows.b[:k].take(has)
    Jb = np.zeros((has.size, 6))
    start = 0
    for contacts, d in zip(runs, (block.rows.Jb[:k, :3], *frames.roll_tangents)):
        Jb[start:start + contacts.size, 3:] = d.take(contacts, axis=0)
        start += contacts.size
    torque = Rows(a, b, np.zeros(has.size), -Jb, Jb, np.zeros(has.size))
    unbounded = np.full(has.size, np.inf)
    return BoundedRows(
        Rows.concatenate([block.rows, torque]),
        lo=np.concatenate((block.lo, -unbounded)),
        hi=np.concatenate((block.hi, unbounded)),
        target=np.concatenate((block.target, np.zeros(has.size))),
        friction_normal=np.concatenate((block.friction_normal, has)),
        mu=np.concatenate((block.mu, spin.take(runs[0]), rolling.take(runs[1]),
                           rolling.take(runs[2]))),
        cfm=np.concatenate((block.cfm, np.zeros(has.size))),
        push=np.concatenate((block.push, np.zeros(has.size))),
    ), runs


def gripping_friction(previous, src, found, slid, mu, pair):
    """(K, 3) the friction force that ``friction_frame`` lays a sticking contact's first
    friction row along (zero for the others), or None where no contact's friction held with
    GRIP times mu times its normal force or more last step. previous: last step's
    ContactReport; src, found: ``contacts.warm_start``'s; slid (K,) bool: found and sliding
    last step (``previous.sliding``); mu (K,) the contacts' friction; pair (K,) int: which
    contacts share a pair of bodies (equal numbers).

    Where a contact stuck and held with all mu N, all contacts of its pair grip along the
    pair's friction force if that held with all the pair's mu N; else those contacts grip
    along their own (the pair's forces turned about one another: a torsion).
    ``friction_frame`` only turns the contacts that stick now so (a sliding one follows its
    slip). By pairs first: each of the four contacts of a box on a box may hold more than
    mu N of its own in torsion while the box creeps (a pyramid of its own each, turned each
    its own way, held the box on a slope 1.08 times too steep); with the four first rows
    along the pair's force, their sum holds mu N. Rows so turned that hold with all mu N
    stay turned; where they need more, the contact slides."""
    if not found.any():
        return None
    force = previous.friction_force
    limit = GRIP * mu * previous.normal_force.take(src)
    full = einsum("ij,ij->i", force, force).take(src) >= limit * limit
    full &= found
    full &= limit > 0.0
    # (one that slid held with mu N along its slip: it stopped, the pyramid did not hold it)
    full &= ~slid
    if not full.any():
        return None
    # a pair's force over its normal forces is at most its contacts' largest ratio: only the
    # pairs with a contact at GRIP are summed (a pile has few)
    pairs = np.unique(pair[full])
    place = np.minimum(np.searchsorted(pairs, pair), pairs.size - 1)
    in_pairs = pairs.take(place) == pair
    near = np.flatnonzero(in_pairs & found)
    member = place.take(near)
    total = np.stack([np.bincount(member, c, pairs.size)
                      for c in force.take(src.take(near), axis=0).T], 1)
    held = np.bincount(member, limit.take(near), pairs.size)
    gripping = einsum("ij,ij->i", total, total) >= held * held
    # every contact of a gripping pair, found last step or not, takes the pair's force
    by_pair = in_pairs & gripping.take(place)
    chosen = np.flatnonzero(by_pair)
    grip = np.zeros((pair.shape[0], 3))
    grip[chosen] = total.take(place.take(chosen), axis=0)
    alone = np.flatnonzero(full & ~by_pair)
    grip[alone] = force.take(src.take(alone), axis=0)
    return grip


def positional_warm_start(previous, body_a, body_b, point, frame, warm, found, reach=2e-3):
    """Fill the warm start (K, 3) or (K, 6) (``contacts.warm_start``) of contacts not
    ``found`` (K,) under their feature key last step with the forces of last step's contact
    of the same two bodies nearest to their point (within ``reach`` m), along their rows. Box
    manifolds can renumber their features from step to step while the points stay where they
    were; a cold row in a resting stack costs the iterative solver many iterations.
    ``previous`` is last step's ``ContactReport`` (user indices), body_a, body_b (K,) body
    rows, frame (normal, t1, t2, r1, r2) (K, 3) each (``projected_warm_start``). Returns the
    warm start."""
    cold = (~found).nonzero()[0]
    if previous is None or len(previous) == 0 or cold.size == 0:
        return warm
    pkey = ((previous.body_a.astype(np.int64) + 1) << 32) | (previous.body_b.astype(np.int64) + 1)
    order = np.argsort(pkey, kind="stable")
    pkey = pkey[order]
    key = (body_a.take(cold).astype(np.int64) << 32) | body_b.take(cold).astype(np.int64)
    start = np.searchsorted(pkey, key, side="left")
    count = np.searchsorted(pkey, key, side="right") - start
    width = int(count.max(initial=0))
    if width == 0:
        return warm
    slot = np.arange(width)
    cand = order[np.minimum(start[:, None] + slot, len(pkey) - 1)]       # (c, width)
    gap = previous.point.take(cand, axis=0) - point.take(cold, axis=0)[:, None]
    sq = gap * gap
    dist = np.sqrt((sq[..., 0] + sq[..., 1]) + sq[..., 2])     # np.linalg.norm(gap, axis=2)
    dist = np.where(slot < count[:, None], dist, np.inf)
    best = np.argmin(dist, axis=1)
    near = dist[np.arange(cold.size), best] <= reach
    src = cand[np.arange(cold.size), best][near]
    dst = cold[near]
    return projected_warm_start(previous, src, dst, frame, warm)


def projected_warm_start(previous, src, dst, frame, warm):
    """The warm start (K, 3) or (K, 6) with the contacts ``dst`` given the forces of last
    step's contacts ``src`` (indices into ``previous``, its ContactReport) in their own frame
    (normal, t1, t2, r1, r2) (K, 3) each: the normal force, the friction force's components
    along the tangents t1, t2, and (K, 6) the friction torque's along the normal and the
    rolling rows' tangents r1, r2."""
    warm = warm.copy()
    warm[dst, 0] = previous.normal_force[src]
    f = previous.friction_force.take(src, axis=0)
    for i in (1, 2):
        warm[dst, i] = dot(f, frame[i].take(dst, axis=0))
    if warm.shape[1] == 6:                 # (last step had rolling or spin friction rows)
        tau = previous.friction_torque.take(src, axis=0)
        for i, d in enumerate((frame[0], *frame[3:])):
            warm[dst, 3 + i] = dot(tau, d.take(dst, axis=0))
    return warm
