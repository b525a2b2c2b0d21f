"""Overlaps pushed out of jointed, motor-held mechanisms: two links of one arm made inside one
another, a motor-held rod made inside a static block, a driven wheel made inside the floor."""
import numpy as np
import pytest

from physics import Box, Hinge, Sphere, World
from physics.contact_rows import KEPT_PUSH, MAX_PUSH_OUT, SLOP

ARM_AXES = [(0, 0, 1), (0, 1, 0), (0, 1, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]


def _along(u):
    """The unit quaternion (w, x, y, z) that turns x onto the unit vector u."""
    v, c = np.cross((1.0, 0.0, 0.0), u), u[0]
    q = np.array([1.0 + c, *v])
    return tuple(q / np.linalg.norm(q))


def folded_arm(dt):
    """A 6-link arm of 4 x 4 cm box links (0.3 m, 2 kg down to 0.15 m, 0.75 kg) along random
    directions (seed 3) from a base 0.5 m up, on hinges about z, y, y, x, y, z, each held by a
    velocity motor at speed 0 (max 1e4 N m). It folds back on itself: link 4's root, its pin
    with link 3, is made 10.25 mm inside link 2 (an explorer's arm). No pose near it is free of
    the overlap: the nearest is about 1.3 rad of joints 3 and 4 away, and locally the overlap
    comes to 1.16 mm at the least (the root's two edges across link 2's edge, one deepening
    as the other lifts). Returns (world, joints)."""
    rng = np.random.default_rng(3)
    world = World(dt=dt)
    pin, previous, joints = np.array([0.0, 0.0, 0.5]), None, []
    for k, axis in enumerate(ARM_AXES):
        d = rng.normal(size=3)
        d[2] = abs(d[2]) * 0.3
        d /= np.linalg.norm(d)
        length = 0.3 - 0.03 * k
        link = world.add_body(Box((length / 2, 0.02, 0.02)), mass=2.0 - 0.25 * k,
                              position=pin + d * length / 2, orientation=_along(d))
        joint = world.add_joint(Hinge(previous, link, anchor=pin, axis=axis))
        joint.set_motor(0.0, 1e4)
        joints.append(joint)
        previous, pin = link, pin + d * length
    return world, joints


@pytest.mark.parametrize("dt", [1 / 240, 1 / 1000])
def test_links_of_a_motor_held_arm_made_overlapping_are_pushed_apart_within_the_cap(dt):
    """Link 4's root made 10.25 mm into link 2 is pushed out by positions within the push's
    cap: no body's centre moves faster than contact_rows.MAX_PUSH_OUT (3 m/s; 1.57-1.91 m/s
    now). The rows' push is capped along the contact's normal, and 2 cm from the pin the
    joints multiplied it: the last link's centre moved 15.05 mm in the first step at dt 1/240
    (3.6 m/s) and 17.15 mm at 1/1000 (17 m/s). Within 0.1 s the overlap is down to the
    least it comes to nearby (1.4 mm, from 10.25)."""
    world, joints = folded_arm(dt)
    fastest = 0.0
    for _ in range(round(0.1 / dt)):
        start = world.positions.copy()
        world.step()
        fastest = max(fastest, np.linalg.norm(world.positions - start, axis=1).max() / dt)
    assert fastest <= MAX_PUSH_OUT
    assert fastest > 0.5 * MAX_PUSH_OUT            # (as fast as the cap lets it)
    assert world.contacts.depth.max() < 1.5e-3


@pytest.mark.parametrize("dt", [1 / 240, 1 / 1000])
def test_a_motor_held_arm_pushed_out_of_itself_is_not_fought_by_its_motors_and_rests(dt):
    """The motors at speed 0 hold their joints' speed while the push moves the links apart by
    positions: the contact pushes with no force and no joint keeps a speed, and once the
    overlap is as small as it gets nearby (1.4 mm: a jam) the arm stays where it is. Before,
    the push kept as speed (0.1 m/s) set the contact against the motors: 7.8 kN at dt 1/240,
    33 kN at 1/1000 on 1-2 kg links (the softness' force for the speed missed, over h), joints
    turning at up to 1.1 rad/s; then the push swung link 4 across the jam's two edges every
    step and the joints crept on (the last one 0.08 rad between 1 and 2 s at 1/240)."""
    world, joints = folded_arm(dt)
    force = rate = 0.0
    for _ in range(round(1.0 / dt)):
        world.step()
        if len(world.contacts):
            force = max(force, world.contacts.normal_force.max())
        rate = max(rate, max(abs(j.rate) for j in joints))
    held = np.array([j.angle for j in joints])
    for _ in range(round(1.0 / dt)):
        world.step()
    assert force < 50.0 and rate < 0.01
    np.testing.assert_allclose([j.angle for j in joints], held, rtol=0, atol=1e-7)
    assert world.contacts.depth.max() < 1.5e-3
    assert world.constraint_error() < 1e-6


@pytest.mark.parametrize("dt", [1 / 240, 1 / 1000])
def test_a_motor_held_rod_pushed_out_of_a_static_block_is_not_fought_by_its_motor(dt):
    """A 1 m, 2 kg rod on a hinge at one end (axis y), held level by a velocity motor at speed
    0 (max 1e4 N m), its tip made 10 mm into a static block under gravity. The push would
    turn the motor's joint, so it is made by positions alone: the contacts push with no
    force, the motor holds the rod's weight (9.81 N m) alone, and the rod turns up out of
    the block to the slop (0.0108 rad) and rests there. Before, the push kept as speed
    (0.1 m/s) set the contacts against the motor: 4.2 kN (summed) against 3.8 kN m at dt
    1/240, 11 kN against the motor's whole 1e4 N m at 1/1000 (still there at 0.5 s)."""
    world = World(dt=dt, gravity=(0, 0, -9.81))
    rod = world.add_body(Box((0.5, 0.02, 0.02)), mass=2.0, position=(0.5, 0, 1))
    world.add_body(Box((0.05, 0.2, 0.2)), static=True, position=(0.95, 0, 0.99 - 0.2))
    joint = world.add_joint(Hinge(None, rod, anchor=(0, 0, 1), axis=(0, 1, 0)))
    joint.set_motor(0.0, 1e4)
    force = effort = 0.0
    for _ in range(round(0.5 / dt)):
        world.step()
        if len(world.contacts):
            force = max(force, world.contacts.normal_force.sum())
        effort = max(effort, abs(joint.motor_effort))
    assert force < 1.0
    assert effort == pytest.approx(2.0 * 9.81 * 0.5, rel=1e-3)
    assert joint.angle == pytest.approx(-0.01078, abs=1e-4)
    assert abs(joint.rate) < 1e-6
    assert world.contacts.depth.max() == pytest.approx(SLOP, rel=1e-5)


@pytest.mark.parametrize("dt", [1 / 240, 1 / 1000])
def test_a_driven_wheel_pushed_out_of_the_floor_keeps_the_kept_push(dt):
    """A round wheel (0.12 m, 1 kg sphere) on a hinge to a free 3 kg box, its motor at speed
    0, made 2 cm into a static floor without gravity: its push passes through the axle and
    turns no motor, so it keeps contact_rows.KEPT_PUSH as speed like any body's (it leaves
    at 0.1013 m/s at dt 1/240, 0.1016 at 1/1000) and turns not."""
    world = World(dt=dt, gravity=(0, 0, 0))
    world.add_body(Box((2, 2, 0.1)), static=True, position=(0, 0, -0.1))
    body = world.add_body(Box((0.2, 0.1, 0.05)), mass=3.0, position=(0, 0, 0.3))
    wheel = world.add_body(Sphere(0.12), mass=1.0, position=(0, 0.15, 0.1))
    joint = world.add_joint(Hinge(body, wheel, anchor=(0, 0.15, 0.1), axis=(0, 1, 0)))
    joint.set_motor(0.0, 1e4)
    fastest = 0.0
    for _ in range(round(0.3 / dt)):
        world.step()
        fastest = max(fastest, wheel.linear_velocity[2])
    assert fastest == pytest.approx(KEPT_PUSH, rel=0.02)
    assert abs(joint.rate) < 1e-9
