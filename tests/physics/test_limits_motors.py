"""Joint limits, motors, servos and ragdoll cone limits, solved with the joints."""
import numpy as np
import pytest

from physics import Ball, Box, Capsule, Hinge, Slider, World


def swinging_door(limits):
    world = World()
    door = world.add_body(Box((0.4, 0.02, 0.5)), mass=5.0, position=(0.4, 0, 1.0))
    hinge = world.add_joint(Hinge(None, door, anchor=(0, 0, 1.0), axis=(0, 0, 1), limits=limits))
    return world, door, hinge


def test_hinge_limit_holds_and_reports_the_limit_torque():
    world = World(gravity=(0, 0, 0))
    arm = world.add_body(Box((0.4, 0.05, 0.05)), mass=2.0, position=(0.4, 0, 0),
                         angular_velocity=(0, 0, 3.0))
    hinge = world.add_joint(Hinge(None, arm, anchor=(0, 0, 0), axis=(0, 0, 1),
                                  limits=(-np.pi / 4, np.pi / 4)))
    worst = 0.0
    for _ in range(480):
        world.step()
        worst = max(worst, hinge.angle - np.pi / 4, -np.pi / 4 - hinge.angle)
    assert worst < 0.01
    # now push it against the upper limit with a steady torque: the limit answers it
    for _ in range(120):
        arm.apply_torque((0, 0, 5.0))
        world.step()
    assert hinge.angle == pytest.approx(np.pi / 4, abs=0.01)
    assert hinge.torque[2] == pytest.approx(-5.0, rel=0.01)


def test_motor_reaches_its_speed_and_saturates_at_max_torque():
    world = World(gravity=(0, 0, 0))
    wheel = world.add_body(Box((0.3, 0.3, 0.05)), mass=4.0)
    hinge = world.add_joint(Hinge(None, wheel, anchor=(0, 0, 0), axis=(0, 0, 1)))
    hinge.set_motor(velocity=2.0, max_force=1.0)
    I = wheel.inertia[2, 2]
    world.step(24)
    # saturated: it accelerates at max torque / I
    assert hinge.rate == pytest.approx(1.0 / I * world.time, rel=0.01)
    assert hinge.torque[2] == pytest.approx(1.0, rel=1e-6)
    world.step(480)
    assert hinge.rate == pytest.approx(2.0, rel=0.01)


def test_servo_settles_at_its_target():
    world, door, hinge = swinging_door(None)
    hinge.set_servo(target=0.7, stiffness=200.0, damping=20.0, max_force=100.0)
    world.step(5 * 240)
    assert hinge.angle == pytest.approx(0.7, abs=1e-3)


def test_slider_limits_stop_a_falling_carriage():
    world = World()
    cart = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 1.0))
    slider = world.add_joint(Slider(None, cart, axis=(0, 0, 1), limits=(-0.3, 0.3)))
    worst = 0.0
    for _ in range(240):
        world.step()
        worst = max(worst, -0.3 - slider.position)
    assert worst < 1e-3
    assert slider.position == pytest.approx(-0.3, abs=1e-3)
    assert slider.force[2] == pytest.approx(9.81, rel=1e-3)


def test_ball_cone_limit_is_never_exceeded_by_more_than_002_rad():
    world = World()
    upper = world.add_body(Capsule(0.05, 0.2), mass=1.0, position=(0, 0, -0.25))
    world.add_joint(Ball(None, upper, anchor=(0, 0, 0), swing_limit=0.5, twist_limits=(-0.2, 0.2),
                         twist_axis=(0, 0, -1)))
    upper.angular_velocity = (15.0, 6.0, 4.0)   # kick it hard sideways and around its axis
    worst, reached = 0.0, 0.0
    for _ in range(480):
        world.step()
        axis = upper.rotation[:, 2]
        swing = np.arccos(np.clip(axis[2], -1, 1))   # twist axis -z in both frames
        worst = max(worst, swing - 0.5)
        reached = max(reached, swing)
    assert reached > 0.45          # the kick did carry it to the cone
    assert worst < 0.02
