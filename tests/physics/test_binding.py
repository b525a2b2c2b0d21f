"""Joints on one pair of bodies whose turning axes are not one line bind, and the world says
so where the joint is added (physics.binding)."""
import warnings

import numpy as np
import pytest

from physics import Ball, Box, Cylindrical, Hinge, World


def _door(tilt: float, second=Hinge):
    """A 20 kg door (0.8 x 2 m) hung from the world on a hinge at 1.9 m and a second joint at
    0.1 m whose axis is tilted by ``tilt`` rad about x, swinging at 1 rad/s."""
    world = World(dt=1 / 240)
    door = world.add_body(Box((0.4, 0.02, 1.0)), mass=20.0, position=(0.4, 0, 1.0))
    top = world.add_joint(Hinge(None, door, anchor=(0, 0, 1.9), axis=(0, 0, 1)))
    world.add_joint(second(None, door, anchor=(0, 0, 0.1),
                           axis=(np.sin(tilt), 0, -np.cos(tilt))))
    door.angular_velocity = (0, 0, 1.0)
    door.linear_velocity = (0, 0.4, 0)
    return world, top


@pytest.mark.parametrize("second", [Hinge, Cylindrical])
def test_two_joints_on_one_axis_line_let_a_door_swing_without_a_warning(second):
    """The second axis reversed is the same line: the door swings 1 rad in 1 s, each joint
    carrying its share of the weight."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        world, top = _door(0.0, second)
    world.step(240)
    assert top.angle == pytest.approx(1.0, abs=1e-5)
    assert abs(top.force[2]) < 20.0 * 9.81


@pytest.mark.parametrize("tilt", [1e-9, 1e-7, 9e-7])
def test_a_second_axis_within_a_micro_radian_is_put_on_the_first_ones_line(tilt):
    """An axis made from measured numbers is meant to be the line already there: within
    SHARED_LINE (1e-6) it is taken as that line exactly, and the door swings freely with no
    warning (tilted 1e-7 rad and left so, it lost 5 % of its swing in 2 s with 118 kN in its
    hinges)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        world, top = _door(tilt)
    largest = 0.0
    for _ in range(240):
        world.step()
        largest = max(largest, np.abs(top.force).max())
    assert top.angle == pytest.approx(1.0, abs=1e-5)
    assert largest < 20.0 * 9.81


def test_a_hinge_added_mid_run_on_the_line_of_one_holding_a_swinging_door_is_not_warned_of():
    """After a second of swinging at dt 1/60 the first hinge's anchor is 1.5e-9 m off its
    line in the door (its own error, within the position tolerance): a second hinge given the
    same world line holds the door's line, the door swings on with its energy, and nothing
    is said (it was warned of as bound)."""
    world = World(dt=1 / 60, gravity=(3.0, 0.0, -9.81))
    door = world.add_body(Box((0.02, 0.5, 1.0)), mass=20.0, position=(0.5, 0, 0))
    world.add_joint(Hinge(None, door, anchor=(0, 0, -0.9), axis=(0, 0, 1)))
    door.angular_velocity = (0, 0, 2.0)
    door.linear_velocity = (0, 1.0, 0)
    world.step(60)
    assert world.constraint_error() > 1e-10          # (the first hinge's own error)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = world.add_joint(Hinge(None, door, anchor=(0, 0, 0.9), axis=(0, 0, 1)))
    energy = world.energy()
    largest = 0.0
    for _ in range(60):
        world.step()
        largest = max(largest, np.abs(second.force).max())
    assert world.energy() == pytest.approx(energy, abs=1e-3)
    assert largest < 20.0 * 10.3


def test_two_hinges_tilted_apart_bind_and_are_warned_of():
    """Rigid bodies cannot turn about two lines: tilted 1e-5 rad, the door stops within a
    second with hinge forces hundreds of times its weight, and the warning says why."""
    with pytest.warns(UserWarning, match=r"^joint 1 <Hinge world -> <Body #0 Box>> and joint 0 "
                      r"<Hinge world -> <Body #0 Box>> join the same two bodies on axes 1e-05 "
                      r"rad apart, .* so they bind"):
        world, top = _door(1e-5)
    largest = 0.0
    for _ in range(240):
        world.step()
        largest = max(largest, np.abs(top.force).max())
    assert abs(top.angle) < 0.1 and abs(top.rate) < 0.01
    assert largest > 100 * 20.0 * 9.81


def test_a_ball_joint_off_a_hinges_axis_is_warned_of_and_one_on_it_is_not():
    world = World()
    door = world.add_body(Box((0.4, 0.02, 1.0)), mass=20.0, position=(0.4, 0, 1.0))
    world.add_joint(Hinge(None, door, anchor=(0, 0, 1.9), axis=(0, 0, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        world.add_joint(Ball(None, door, anchor=(0, 0, 0.1)))
    with pytest.warns(UserWarning, match=r"ball joint's anchor 0\.01 m off the axis"):
        world.add_joint(Ball(None, door, anchor=(0.01, 0, 0.5)))
