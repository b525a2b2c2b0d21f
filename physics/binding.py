"""Joints on one pair of bodies that bind: turning axes that are not one line.

Two hinges (or a hinge and a ball joint) on the same two bodies leave them a turn only about
a line both keep. Rigid bodies on two axes apart by any angle cannot turn at all: a 20 kg
door on two hinges 1.8 m apart, one axis tilted by 1e-7 rad (an axis made from measured
points), lost 5 % of its swing in 2 s with 118 kN in its hinges (its weight: 98 N); tilted
1e-5 rad it stopped dead. Nothing in the step is wrong there, and no split or error tells
the user, so the joint is met with a warning where it is added.

A joint added within SHARED_LINE of the line that one already there holds takes that line
exactly (``share_lines``): an axis made from measured or typed numbers, or taken from bodies
that have moved, is meant to be that line, and any other binds. A hinge added mid-run on the
line of one holding a swinging door was 1.5e-9 m off it in the door (the first hinge's own
error after a second at dt 1/60, within the position tolerance), and was warned of; a door
on two hinges 1e-8 m apart carried 12 times its weight.
"""
from __future__ import annotations

import numpy as np

from .joints import Ball, Cylindrical, Hinge
from .math3d import cross, quat_to_matrix, rotation_vector_to_quat

# (rad, and m of an anchor off the other's axis) within which two axes are one line: a
# double's rounding of an axis from points a metre apart is 1e-16; the door above swung as
# if on one hinge at a tilt of 1e-10 rad, but its hinges carried 121 N for 98 (1273 N at
# 1e-9)
SAME_LINE = 1e-11
# (rad, and m) within which a joint added is put on the line of one already there: well
# beyond the joints' own error (position tolerance 1e-8 m) and a double's rounding, well
# within what a user means by two lines
SHARED_LINE = 1e-6
# the joints that turn about an axis, and those looked at with them
TURNING = (Hinge, Cylindrical)
LOOKED = (Hinge, Cylindrical, Ball)


def binding_message(joint, others) -> str | None:
    """Why ``joint`` binds with one of ``others`` (joints of its world), or None: for a Hinge,
    Cylindrical or Ball, the first of those kinds on the same two bodies whose turning axis is
    not the same line within SAME_LINE (two axes), or does not pass through the ball's anchor
    (an axis and a ball; two balls leave the line through them).

    The lines are compared where the joints hold them, fixed in each body (the world frame
    for body None), after ``share_lines`` has put a joint near one line onto it."""
    for other in _on_the_same_bodies(joint, others):
        axes = [j for j in (joint, other) if isinstance(j, TURNING)]
        if not axes:
            continue
        if len(axes) == 1:
            ball = other if axes[0] is joint else joint
            off = max(_off_line(_held_point(ball, body), *_held_line(axes[0], body))
                      for body in (joint.body_a, joint.body_b))
            if off > SAME_LINE:
                return (f"{_named(joint)} and {_named(other)} join the same two bodies "
                        f"with the ball joint's anchor {off:.3g} m off the axis: rigid bodies "
                        "cannot turn about the axis and the ball at once, so they bind (they "
                        "do not turn, and the joints carry forces of any size). Put the ball's "
                        "anchor on the axis, or join the bodies by one joint")
            continue
        tilt = off = 0.0
        for body in (joint.body_a, joint.body_b):
            p, a = _held_line(axes[0], body)
            q, b = _held_line(axes[1], body)
            tilt = max(tilt, _tilt(a, b))
            off = max(off, _off_line(p, q, b))
        if tilt > SAME_LINE or off > SAME_LINE:
            return (f"{_named(joint)} and {_named(other)} join the same two bodies on "
                    f"axes {tilt:.3g} rad apart, its anchor {off:.3g} m off the other's axis: "
                    "rigid bodies cannot turn about two lines, so they bind (a door on two "
                    "hinges tilted by 1e-7 rad lost 5 % of its swing in 2 s, its hinges "
                    "carrying 1000 times its weight; at 1e-5 rad it stopped dead). Give both "
                    "the same axis and anchors on its line, or join the bodies by one joint")
    return None


def share_lines(joint, others) -> None:
    """Put ``joint`` (a Hinge, Cylindrical or Ball just bound) on the line that one of
    ``others`` on the same two bodies holds, where in each body it is within SHARED_LINE of
    it: an axis joint's axis and anchor onto the other's axis line, a ball's anchor onto an
    axis joint's line, an axis joint's line through a ball's anchor. Each body keeps its own
    frame of the joint (the angle's reference turns with the axis by at most SHARED_LINE)."""
    bodies = (joint.body_a, joint.body_b)
    for other in _on_the_same_bodies(joint, others):
        if isinstance(joint, TURNING) and isinstance(other, TURNING):
            lines = [(_held_line(other, body), _held_line(joint, body)) for body in bodies]
            if all(_tilt(a, b) <= SHARED_LINE and _off_line(p, q, b) <= SHARED_LINE
                   for (q, b), (p, a) in lines):
                for body, ((q, b), (p, a)) in zip(bodies, lines):
                    _hold_line(joint, body, q + np.dot(p - q, b) * b, np.sign(a @ b) * b)
                return
        elif isinstance(other, TURNING) and isinstance(joint, Ball):
            lines = [(_held_line(other, body), _held_point(joint, body)) for body in bodies]
            if all(_off_line(p, q, b) <= SHARED_LINE for (q, b), p in lines):
                for body, ((q, b), p) in zip(bodies, lines):
                    _hold_point(joint, body, q + np.dot(p - q, b) * b)
                return
        elif isinstance(joint, TURNING) and isinstance(other, Ball):
            lines = [(_held_line(joint, body), _held_point(other, body)) for body in bodies]
            if all(_off_line(p, q, a) <= SHARED_LINE for (q, a), p in lines):
                for body, ((q, a), p) in zip(bodies, lines):
                    foot = q + np.dot(p - q, a) * a
                    _hold_line(joint, body, q + (p - foot), a)
                return


def _on_the_same_bodies(joint, others):
    """The joints of ``others`` besides ``joint`` that turn about an axis or a point (Hinge,
    Cylindrical, Ball) on the same two bodies as ``joint``, where it is one of those."""
    if not isinstance(joint, LOOKED):
        return
    bodies = {joint.body_a, joint.body_b}
    for other in others:
        if other is not joint and isinstance(other, LOOKED) and \
                {other.body_a, other.body_b} == bodies:
            yield other


def _tilt(a, b) -> float:
    """Angle (rad) between the lines along unit vectors a and b (either way round)."""
    return float(np.arcsin(min(1.0, np.linalg.norm(cross(a, b)))))


def _hold_point(joint, body, point) -> None:
    """Fix the joint's anchor at ``point`` (3,) in ``body``'s frame."""
    if body is joint.body_a:
        joint._la = point
    else:
        joint._lb = point


def _hold_line(joint, body, point, direction) -> None:
    """Fix an axis joint's line in ``body``'s frame through ``point`` along the unit
    ``direction``, its directions across the axis in that body turned with it."""
    _hold_point(joint, body, point)
    old = _held_line(joint, body)[1]
    across = cross(old, direction)
    turn = quat_to_matrix(rotation_vector_to_quat(
        (across / max(np.linalg.norm(across), 1e-300) * _tilt(old, direction))[None]))[0]
    if body is joint.body_a:
        joint._axis_a = direction
        joint._perp_a = [turn @ p for p in joint._perp_a]
    else:
        joint._perp_b = [turn @ p for p in joint._perp_b]


def _held_point(joint, body) -> np.ndarray:
    """The joint's anchor (3,) as fixed in ``body`` (its local frame; world for None)."""
    return joint._la if body is joint.body_a else joint._lb


def _held_line(joint, body) -> tuple[np.ndarray, np.ndarray]:
    """(a point, the unit direction) of an axis joint's axis as fixed in ``body``: body_a
    keeps the axis itself, body_b the directions across it."""
    if body is joint.body_a:
        return joint._la, joint._axis_a
    across = np.cross(*joint._perp_b)
    return joint._lb, across / np.linalg.norm(across)


def _off_line(p, q, direction) -> float:
    """Distance (m) of point p from the line through q along the unit ``direction``."""
    return float(np.linalg.norm(cross(p - q, direction)))


def _named(joint) -> str:
    """A joint told apart from another of the same kind and bodies: its index too."""
    return f"joint {joint.index} {joint!r}"
