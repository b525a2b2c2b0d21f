"""Torque-free spin: the Dzhanibekov T-handle flipping, and a top on a ball joint."""
import numpy as np

from physics import Ball, Box, Capsule, Cylinder, Fixed, Plane

TITLE = "Gyroscope"
DESCRIPTION = "A T-handle spun about its middle axis flips (Dzhanibekov effect); a spinning top precesses."
PARAMS = {"spin": 6.0, "top_spin": 60.0}
# half sizes (m) of the plate drawn for the T-handle: a 1 kg box of full sides
# sqrt(12 I) for the inertias 0.02 and 0.01 about the other two axes, and thin
PLATE_HALF_SIZE = (0.5 * np.sqrt(12 * 0.02), 0.5 * np.sqrt(12 * 0.01), 0.015)
STEM_RADIUS = 0.008  # m
CAMERA = {"target": (0.5, 0, 1.0), "distance": 4.0, "yaw": 60, "pitch": 20}


def build(world, spin=6.0, top_spin=60.0):
    """A floating flat T-handle (inertia 0.01, 0.02, 0.03 kg m^2, drawn as the thin plate
    that has it; its weight is held up by a force) spun about its unstable middle axis, and
    a 1 kg disc-shaped top on a ball joint at the tip of a post, its disc 0.3 m up its axis
    from there on a 10 g stem, tilted 0.3 rad. At 60 rad/s the top is not fast enough for the gyroscope's rate
    m g l / (I3 w) = 2.45 rad/s: it nutates between 17 and 35 degrees of tilt and precesses at
    3.2 rad/s on average (the slow steady root for this spin is 3.35); at top_spin=300 it
    precesses at 0.50 rad/s against 0.49 (at five times the cost a step).

    Parameters:
        spin (rad/s): the T-handle's start spin about its middle axis (local y), with a
            0.02 rad/s nudge about the other two that sets off the flips.
        top_spin (rad/s): the top's start spin about its own symmetry axis.
    """
    world.add_body(Plane(), name="ground")
    # T-handle: explicit inertia (1, 2, 3) of a flat handle with a cross bar (flat: the
    # largest is the sum of the other two). It is drawn as the plate of 1 kg that has nearly
    # that inertia, 0.49 x 0.35 x 0.03 m (0.0101, 0.0201, 0.0300), so the picture shows the
    # axes in the physics' order: longest along x (least inertia), the middle one along y,
    # thinnest along z; a 0.6 x 0.12 x 0.3 box had its largest inertia about y, the axis
    # spun about as the middle one. It floats (gravity is compensated by the controller)
    # so only its spin matters.
    handle = world.add_body(Box(PLATE_HALF_SIZE), mass=1.0, inertia=(0.01, 0.02, 0.03),
                            position=(0, 0, 1.5), angular_velocity=(0.02, spin, 0.02), name="T-handle")
    tilt = 0.3
    axis = np.array([np.sin(tilt), 0, np.cos(tilt)])
    top = world.add_body(Cylinder(0.2, 0.03), mass=1.0, position=np.array([1.0, 0, 0.2]) + 0.3 * axis,
                         orientation=(np.cos(tilt / 2), 0, np.sin(tilt / 2), 0),
                         angular_velocity=top_spin * axis, name="top")
    pivot = np.array([1.0, 0, 0.2])
    world.add_joint(Ball(None, top, anchor=pivot))
    # the stem the disc sits on, from the pivot up into the disc, welded to it: 10 g, so that
    # the top is nearly the disc alone (it precesses 1 % faster than without it, with m l^2
    # of 2e-4 against the disc's 0.09 kg m^2 about the pivot)
    stem = world.add_body(Capsule(STEM_RADIUS, 0.15 - STEM_RADIUS), mass=0.01,
                          position=pivot + 0.15 * axis, orientation=top.orientation,
                          angular_velocity=top_spin * axis, name="stem")
    world.add_joint(Fixed(top, stem, anchor=top.position))
    # a static post up to the ball joint, so the top is seen to stand on something (it
    # does not touch the disc, whose rim stays over 0.3 m up, above the post's tip; the
    # stem's round end rests on its tip)
    post = world.add_body(Cylinder(0.015, 0.1), static=True, position=(1.0, 0, 0.1), name="post")
    world.ignore_collision(stem, post)
    weight = -handle.mass * world.gravity

    def float_handle(world):
        handle.apply_force(weight)
    return float_handle
