"""Contacts, friction and restitution: analytic cases with real numbers."""
import numpy as np
import pytest

from physics import Box, Plane, Sphere, World


def test_sphere_and_box_rest_on_the_ground():
    world = World()
    world.add_body(Plane())
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 0.1))
    box = world.add_body(Box((0.2, 0.1, 0.15)), mass=3.0, position=(1, 0, 0.15))
    worst_depth = worst_speed = 0.0
    for _ in range(100):
        world.step(24)
        worst_depth = max(worst_depth, 0.1 - ball.position[2], 0.15 - box.position[2])
        worst_speed = max(worst_speed, *(np.linalg.norm(b.linear_velocity) for b in (ball, box)))
    assert worst_depth < 1e-3
    assert worst_speed < 1e-3
    assert world.contacts.normal_force.sum() == pytest.approx(4.0 * 9.81, rel=1e-3)


def _box_on_incline(angle_deg, mu=0.5):
    th = np.radians(angle_deg)
    n = np.array([-np.sin(th), 0, np.cos(th)])
    world = World()
    world.add_body(Plane(normal=n), friction=mu)
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=0.1 * n, friction=mu,
                         orientation=(np.cos(th / 2), 0, -np.sin(th / 2), 0))
    return world, box, th


def test_box_sticks_on_an_incline_below_the_friction_angle():
    world, box, _ = _box_on_incline(20)
    start = box.position
    world.step(5 * 240)
    assert np.linalg.norm(box.position - start) < 1e-3


def test_box_slides_on_an_incline_above_the_friction_angle():
    world, box, th = _box_on_incline(30)
    world.step(24)
    v0, t0 = np.linalg.norm(box.linear_velocity), world.time
    world.step(240)
    a = (np.linalg.norm(box.linear_velocity) - v0) / (world.time - t0)
    expected = 9.81 * (np.sin(th) - 0.5 * np.cos(th))
    assert a == pytest.approx(expected, rel=0.02)


def test_sliding_box_decelerates_at_mu_g():
    world = World()
    world.add_body(Plane(), friction=0.5)
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=2.0, position=(0, 0, 0.1),
                         linear_velocity=(4, 0, 0), friction=0.5)
    world.step(2)
    v0, t0 = box.linear_velocity[0], world.time
    world.step(120)
    a = (v0 - box.linear_velocity[0]) / (world.time - t0)
    assert a == pytest.approx(0.5 * 9.81, rel=0.02)


def test_ball_with_restitution_rebounds_to_e_squared_height():
    world = World()
    world.add_body(Plane())
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 1.1), restitution=0.8)
    rising, apex = False, None
    for _ in range(3 * 240):
        world.step()
        vz = ball.linear_velocity[2]
        if vz > 0:
            rising = True
        elif rising:
            apex = ball.position[2] - 0.1
            break
    assert apex == pytest.approx(0.64, rel=0.02)


def test_fast_small_sphere_does_not_tunnel_through_a_thin_wall():
    world = World(gravity=(0, 0, 0))
    world.add_body(Box((0.05, 1.0, 1.0)), static=True, position=(1.0, 0, 0))
    ball = world.add_body(Sphere(0.025), mass=0.1, position=(0, 0, 0), linear_velocity=(50, 0, 0))
    for _ in range(60):
        world.step()
        assert ball.position[0] < 0.95 - 0.025 + 1e-3
    assert ball.linear_velocity[0] <= 1e-6


def test_same_scene_twice_is_bitwise_identical():
    def run():
        world = World()
        world.add_body(Plane(), friction=0.6)
        rng = np.random.default_rng(1)
        for i in range(20):
            world.add_body(Box((0.1, 0.1, 0.1)) if i % 2 else Sphere(0.1), mass=1.0,
                           position=(rng.normal() * 0.3, rng.normal() * 0.3, 0.3 + 0.25 * i))
        world.step(240)
        return world.get_state()

    a, b = run(), run()
    for key in ("x", "q", "v", "w"):
        assert np.array_equal(a[key], b[key])
