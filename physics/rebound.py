"""When an impact's contacts meet within the step and how fast they leave: the meeting time
of a contact closing its gap under the loads (``meeting_time``, ``_meeting``), the speed it
rebounds at for its restitution (``rebound_speed``), and the resting contacts through which
struck bodies carry their blow to what holds them (``_supports``, ``_held_by_contacts``).
Distances in m, times in s into the step, velocities in m/s.

Its own module because these are the impacts' kinematics, plain functions of gaps, speeds
and times that the impact passes (``impacts``) and the solve's stops (``bounded_solve``)
both read.
"""
from __future__ import annotations

import numpy as np

from .contact_rows import SPECULATIVE_TOUCH
from .sleeping import linked_labels


def _held_by_contacts(world, inv_mass):
    """(n, 3) m/s^2: the accelerations that last step's contact forces gave the bodies, so
    that with the loads' they tell how fast a body resting on something falls (it does not:
    a ball dropped onto a crate on the floor meets a crate that stays, and its rebound is
    carried back across the gap under g, not under nothing)."""
    n = world._n
    report = world._contacts
    if report is None or not len(report):
        return np.zeros((n, 3))
    force = report.normal_force[:, None] * report.normal + report.friction_force
    # (the report's bodies are indices into world.bodies: rows less one)
    on_b, on_a = report.body_b + 1, report.body_a + 1
    out = np.stack([np.bincount(on_b, force[:, k], n) - np.bincount(on_a, force[:, k], n)
                    for k in range(3)], axis=1)
    return out * inv_mass[:, None]


def _supports(normal, depth, hit, restitution, inv_mass, n, when):
    """(the touching contacts (s,) of restitution 0 through which the bodies of this impact
    pass's ``hit`` contacts (K,) bool rest on something (a crate on the floor, a stack of
    them), the time (s,) s into the step each takes its blow at: the latest of the hits'
    ``when`` (their meeting times, (hits,)) among the bodies it links). They take part in the
    pass, pushing only to keep from closing, so the impact meets the floor through the
    crate. Left out, a ball with e = 0.8 dropped 1 m onto a 20 kg
    crate on the floor rose to 0.566 m (0.544 at dt 1/60), as off a crate floating free,
    instead of 0.64; the crate's blow into the floor was lost. (Touching contacts that
    bounce stay out, so a Newton's cradle passes its momentum ball by ball.)"""
    resting = ~hit & (restitution == 0) & (depth > -SPECULATIVE_TOUCH)
    if not resting.any():
        return np.zeros(0, dtype=np.intp), np.zeros(0)
    a, b = normal.a, normal.b
    dynamic = inv_mass > 0
    # bodies linked through resting contacts between dynamic bodies (a static floor links
    # nothing: it does not carry a blow from one crate to the next)
    linked = resting & dynamic.take(a) & dynamic.take(b)
    label = linked_labels(a[linked], b[linked], n)
    ends = np.concatenate([a[hit], b[hit]])
    struck = np.zeros(n, dtype=bool)
    struck[label[ends]] = True
    reached = struck.take(label) & dynamic
    held = np.flatnonzero(resting & (reached.take(a) | reached.take(b)))
    if not held.size:
        return held, np.zeros(0)
    # (the struck dynamic bodies' labels keep the latest time they are struck at)
    at = np.zeros(n)
    struck_ends = dynamic.take(ends)
    np.maximum.at(at, label[ends[struck_ends]], np.tile(when, 2)[struck_ends])
    at_label = np.where(dynamic, at.take(label), 0.0)
    return held, np.maximum(at_label.take(a.take(held)), at_label.take(b.take(held)))


def meeting_time(vn, gap, acceleration, h):
    """(k,) s: when within the step h contacts approaching at vn (k,) (m/s, negative; drift
    velocities, see rebound_speed) across a gap (k,) (m; negative: overlapping, taken as
    touching) meet, where the loads accelerate them apart at ``acceleration`` (k,) (m/s^2;
    None: no loads); NaN for those that do not meet within it (the loads part them, or a
    touching one's gap outlasts the step)."""
    gap = np.maximum(gap, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        if acceleration is None:
            when = np.where(gap > 0.0, gap / -vn, 0.0)
            return np.where(when <= h, when, np.nan)
        start = vn + 0.5 * h * acceleration     # the normal velocity at the step's start
        speed = np.sqrt(np.maximum(start * start - 2.0 * gap * acceleration, 0.0))
        # (gap + start t + acceleration t^2 / 2 = 0, in the form that keeps its digits)
        closes = speed - start
        when = np.where(gap > 0.0, 2.0 * gap / closes, 0.0)
    met = (closes > 0.0) & (when <= h * (1.0 + 1e-9))
    return np.where(met, np.minimum(when, h), np.nan)


def rebound_speed(e, vn, gap, acceleration, h, when):
    """The normal velocities (k,) m/s that contacts approaching at vn (k,) (m/s, negative)
    across a gap (k,) (m; negative: overlapping, taken as touching) leave at, for
    restitution e (k,), their jump made ``when`` (k,) s into the step h (at or before they
    meet: ``meeting_time``), where the loads accelerate them apart at ``acceleration`` (k,)
    (m/s^2; gravity pulls a ball onto the ground at -g; None: no loads). vn and the result
    are drift velocities (a step with bounded rows takes the whole kick first): the velocity
    at the step's start is h / 2 of the loads' kick further on; and the result is the
    velocity the bodies leave with carried back from ``when`` to the step's start under the
    loads (``resolve_impacts`` moves them by the jump times -when at the drift's end, so
    that with the step's kick they end it where the motion after the jump puts them).

    The rebound is e times the speed s they meet at; made where they meet, they leave the
    surface at e s, and a ball rises to e^2 of its drop. Made earlier, at a gap (the later
    contacts of a body's blow, made when its first meets), it is e s carried back across
    that gap under the loads (a rebound too slow to cross back leaves at rest). (Made at the
    step's start as e times vn, a ball dropped onto the ground rose above e^2 of its drop by
    its gap's (1 - e^2): by 0.3-3.7 % over five bounces from 1 m at dt 1/240, up to 7 % at
    1/60, by where in a step it landed.)"""
    if acceleration is None:
        return -e * vn
    gap = np.maximum(gap, 0.0)
    lead = 0.5 * h * acceleration
    start = vn + lead                       # the normal velocity at the step's start
    at = start + acceleration * when        # ... at the jump
    left = np.maximum(gap + (start + 0.5 * acceleration * when) * when, 0.0)   # its gap then
    reach = left * acceleration
    met = at * at - 2.0 * reach
    return np.sqrt(np.maximum(e * e * met + 2.0 * reach, 0.0)) - acceleration * when - lead


def _meeting(depth, vn, h):
    """(K,) bool: the contacts touching, or closing their gap within the step h (depth (K,)
    m, negative apart; vn (K,) m/s, their normal velocities)."""
    return (depth > -SPECULATIVE_TOUCH) | (vn * h < depth)
