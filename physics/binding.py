"""Joints on one pair of bodies that bind: turning axes that are not one line.

Two hinges (or a hinge and a ball joint) on the same two bodies leave them a turn only about
a line both keep. Rigid bodies on two axes apart by any angle cannot turn at all: a 20 kg
door on two hinges 1.8 m apart, one axis tilted by 1e-7 rad (an axis made from measured
points), lost 5 % of its swing in 2 s with 118 kN in its hinges (its weight: 98 N); tilted
1e-5 rad it stopped dead. Nothing in the step is wrong there, and no split or error tells
the user, so the joint is met with a warning where it is added.
"""
from __future__ import annotations

import numpy as np

from .joints import Ball, Cylindrical, Hinge
from .math3d import cross

# (rad, and m of an anchor off the other's axis) within which two axes are one line: a
# double's rounding of an axis from points a metre apart is 1e-16; the door above swung as
# if on one hinge at a tilt of 1e-10 rad, but its hinges carried 121 N for 98 (1273 N at
# 1e-9)
SAME_LINE = 1e-11


def binding_message(joint, others) -> str | None:
    """Why ``joint`` binds with one of ``others`` (joints of its world), or None: for a Hinge,
    Cylindrical or Ball, the first of those kinds on the same two bodies whose turning axis is
    not the same line within SAME_LINE (two axes), or does not pass through the ball's anchor
    (an axis and a ball; two balls leave the line through them)."""
    turning, looked = (Hinge, Cylindrical), (Hinge, Cylindrical, Ball)
    if not isinstance(joint, looked):
        return None
    for other in others:
        if (other is joint or not isinstance(other, looked)
                or {other.body_a, other.body_b} != {joint.body_a, joint.body_b}):
            continue
        axes = [j for j in (joint, other) if isinstance(j, turning)]
        if not axes:
            continue
        a, p = axes[0].axis, axes[0].anchor
        if len(axes) == 1:
            ball = other if axes[0] is joint else joint
            off = float(np.linalg.norm(cross(ball.anchor - p, a)))
            if off > SAME_LINE:
                return (f"{_named(joint)} and {_named(other)} join the same two bodies "
                        f"with the ball joint's anchor {off:.3g} m off the axis: rigid bodies "
                        "cannot turn about the axis and the ball at once, so they bind (they "
                        "do not turn, and the joints carry forces of any size). Put the ball's "
                        "anchor on the axis, or join the bodies by one joint")
            continue
        b, q = axes[1].axis, axes[1].anchor
        tilt = float(np.arcsin(min(1.0, np.linalg.norm(cross(a, b)))))
        off = float(np.linalg.norm(cross(p - q, b)))
        if tilt > SAME_LINE or off > SAME_LINE:
            return (f"{_named(joint)} and {_named(other)} join the same two bodies on "
                    f"axes {tilt:.3g} rad apart, its anchor {off:.3g} m off the other's axis: "
                    "rigid bodies cannot turn about two lines, so they bind (a door on two "
                    "hinges tilted by 1e-7 rad lost 5 % of its swing in 2 s, its hinges "
                    "carrying 1000 times its weight; at 1e-5 rad it stopped dead). Give both "
                    "the same axis and anchors on its line, or join the bodies by one joint")
    return None


def _named(joint) -> str:
    """A joint told apart from another of the same kind and bodies: its index too."""
    return f"joint {joint.index} {joint!r}"
