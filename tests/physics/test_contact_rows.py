"""Contact rows (physics/contact_rows.py): a normal row and two friction rows per contact point,
and the rows of rolling and spin friction."""
from types import SimpleNamespace

import numpy as np
import pytest

from physics import Box, Plane, Sphere, World
from physics.contact_rows import contact_rows
from snapshot_helpers import assert_same_state, replay_from_snapshot


def _rows_for(centres, a, b, point, normal):
    still = np.zeros_like(centres)                   # (at rest: the frames of the normals)
    kin = SimpleNamespace(x=centres, v=still, w=still)
    k = a.shape[0]
    return contact_rows(kin, a, b, point, normal, np.full(k, 1e-3), np.full(k, 0.5),
                        h=1 / 240, T=0.05)[0].rows


def test_a_normal_through_the_centres_has_no_torque_and_friction_keeps_its_arm():
    """Spheres touching: the normal passes through both centres, so the normal row's angular
    parts are exactly zero (not the round-off of r x n, which the solver would carry through
    every product), while the friction rows push at the arm's full length r x t."""
    rng = np.random.default_rng(0)
    k = 50
    ca, cb = rng.uniform(-5, 5, (k, 3)), rng.uniform(-5, 5, (k, 3))
    radius = rng.uniform(0.02, 0.5, k)
    n = cb - ca
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    point = ca + radius[:, None] * n
    centres = np.concatenate([ca, cb])
    rows = _rows_for(centres, np.arange(k), np.arange(k, 2 * k), point, n)
    assert np.count_nonzero(rows.Ja[:k, 3:]) == 0 and np.count_nonzero(rows.Jb[:k, 3:]) == 0
    np.testing.assert_allclose(rows.Ja[:k, :3], -n)
    arm_a = np.linalg.norm(rows.Ja[k:, 3:], axis=1)
    np.testing.assert_allclose(arm_a, np.tile(radius, 2), rtol=1e-12)


def test_a_normal_just_off_the_centre_keeps_its_torque():
    """A contact whose normal misses the centre by a millionth of the offset (far above
    round-off) keeps its torque r x n."""
    centres = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    point = np.array([[1e-6, 0.0, 1.0]])
    n = np.array([[0.0, 0.0, 1.0]])
    rows = _rows_for(centres, np.array([0]), np.array([1]), point, n)
    np.testing.assert_allclose(rows.Ja[0, 3:], -np.cross(point[0] - centres[0], n[0]), rtol=1e-12)
    np.testing.assert_allclose(rows.Jb[0, 3:], np.cross(point[0] - centres[1], n[0]), rtol=1e-12)


def test_across_a_gap_each_body_takes_its_own_surface_point_for_its_arm():
    """Two spheres (radii 0.3 and 0.2) 0.1 m apart: the contact's point is midway across
    the gap, but the surfaces meet where each body's own surface point is, so the friction
    rows' arms are the radii (not the radii + 0.05 of the midway point); the normal rows
    still pass through the centres. Touching (depth >= 0), both take the point itself."""
    n = np.array([[0.0, 0.0, 1.0]])
    for depth, arm_a, arm_b in ((-0.1, 0.3, 0.2), (2e-3, 0.3 - 1e-3, 0.2 - 1e-3)):
        centres = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.5 - depth]])
        point = np.array([[0.0, 0.0, 0.3 - depth / 2]])
        still = np.zeros_like(centres)
        rows = contact_rows(SimpleNamespace(x=centres, v=still, w=still), np.array([0]),
                            np.array([1]), point, n, np.array([depth]), np.array([0.5]),
                            h=1 / 60, T=4 / 60)[0].rows
        assert not rows.Ja[0, 3:].any() and not rows.Jb[0, 3:].any()
        np.testing.assert_allclose(np.linalg.norm(rows.Ja[1:, 3:], axis=1), arm_a, rtol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(rows.Jb[1:, 3:], axis=1), arm_b, rtol=1e-12)


@pytest.mark.parametrize("e", [1.0, 0.0])
@pytest.mark.parametrize("dt", [1 / 60, 1 / 240])
@pytest.mark.parametrize("down", [3.0, 10.0])
def test_a_ball_meeting_the_ground_obliquely_leaves_rolling_wherever_in_the_step_it_lands(
        down, dt, e):
    """A ball (r 0.15 m, mu 0.5, no gravity) meeting the ground at 3 m/s sideways and
    ``down`` m/s leaves rolling at 5/7 of 3 m/s (mu (1 + e) >= 2/7: the friction stops the
    slip), vx = w r = 15/7, wherever within a step it touches (five phases, from touching at
    the step's end to a step's travel before). The friction's rows took their arm from the
    speculative contact's point, midway across the gap, up to half a step's travel below the
    ball's surface: at 10 m/s, dt 1/60, e 1, it left at vx 2.52 with w r 1.74 (at e 0,
    rolling at 2.30). (Bouncing, within 2.2e-7 m/s over ten phases; stopped by the step's
    solve, e 0, within 3.0e-3: its softness leaves 0.1 % of the stop.)"""
    r = 0.15
    tolerance = 1e-6 if e > 0 else 5e-3
    for phase in np.linspace(0.0, 1.0, 5, endpoint=False):
        world = World(dt=dt, gravity=(0, 0, 0))
        world.add_body(Plane(), restitution=e, friction=0.5)
        ball = world.add_body(Sphere(r), mass=1.0, position=(0, 0, r + 0.5 + phase * down * dt),
                              restitution=e, friction=0.5, linear_velocity=(3.0, 0, -down))
        world.step(int(0.5 / down / dt) + 4)
        assert ball.linear_velocity[2] == pytest.approx(e * down, abs=0.02)
        assert ball.linear_velocity[0] == pytest.approx(15 / 7, abs=tolerance), phase
        assert ball.angular_velocity[1] * r == pytest.approx(15 / 7, abs=tolerance), phase


@pytest.mark.parametrize("dt", [1 / 60, 1 / 240])
def test_a_paddle_moving_sideways_sends_a_ball_off_sticking_to_it(dt):
    """A ball (r 0.1 m, 0.1 kg, e 1, mu 0.5, no gravity) at 10 m/s meets a static box paddle
    moving across at 5 m/s. The friction of the impact (up to mu (1 + e) m 10) stops the
    slip of the ball's point on the paddle: it leaves with vy = 5 / (1 + m r^2 / I) =
    5 x 2/7 = 1.43 m/s, the point at the paddle's 5 m/s. It left at 0.63 (dt 1/60) and 1.35
    (1/240) m/s: turned about the speculative contact's midway point, in the gap."""
    world = World(dt=dt, gravity=(0, 0, 0))
    world.add_body(Box((0.1, 1.0, 1.0)), static=True, position=(0, -1.4, 0),
                   linear_velocity=(0, 5.0, 0), restitution=1.0, friction=0.5)
    ball = world.add_body(Sphere(0.1), mass=0.1, position=(3, 0, 0), restitution=1.0,
                          friction=0.5, linear_velocity=(-10.0, 0, 0))
    world.step(int(0.6 / dt))
    assert ball.linear_velocity[0] == pytest.approx(10.0, rel=1e-6)
    assert ball.linear_velocity[1] == pytest.approx(5 * 2 / 7, rel=5e-3)
    # (the point that touched, on the ball's -x side, moves with the paddle)
    point = ball.linear_velocity + np.cross(ball.angular_velocity, (-0.1, 0, 0))
    assert point[1] == pytest.approx(5.0, rel=5e-3)


# -- rolling and spin friction: a contact resists rolling, and turning about its normal, with
# a torque of up to a length (m) times its normal force. Analytic cases for a solid ball of
# radius R (I = 2/5 m R^2) on the ground, with both contact solvers.
G = 9.81
R = 0.1
SOLVERS = ("direct", "iterative")


def _ball(solver, ground=None, slope_deg=0.0, **ball):
    """A 1 kg ball of radius R resting on a plane tilted by slope_deg about y (friction 0.8)."""
    th = np.radians(slope_deg)
    n = np.array([-np.sin(th), 0.0, np.cos(th)])
    world = World(contact_solver=solver)
    world.add_body(Plane(normal=n), friction=0.8, **(ground or {}))
    body = world.add_body(Sphere(R), mass=1.0, position=R * n, friction=0.8, **ball)
    return world, body, n


def _rate(world, read, steps=120):
    """d(read())/dt over ``steps`` steps."""
    start, t0 = read(), world.time
    world.step(steps)
    return (read() - start) / (world.time - t0)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_rolling_ball_slows_at_five_sevenths_of_mu_r_g_over_r(solver):
    """Rolling without slipping, the torque mu_r m g about the contact brakes the ball at
    a = mu_r m g r / (I + m r^2) = 5 mu_r g / (7 r); the contact reports that torque."""
    mu_r = 0.01
    world, ball, _ = _ball(solver, rolling_friction=mu_r, linear_velocity=(2.0, 0, 0),
                           angular_velocity=(0, 2.0 / R, 0))
    world.step(24)
    a = _rate(world, lambda: ball.linear_velocity[0])
    assert a == pytest.approx(-5 * mu_r * G / (7 * R), rel=1e-3)
    assert ball.angular_velocity[1] * R == pytest.approx(ball.linear_velocity[0], abs=1e-4)
    torque = world.contacts.friction_torque[0]
    assert torque == pytest.approx([0.0, -mu_r * world.contacts.normal_force[0], 0.0], abs=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("heading_deg", [22.5, 45.0, 150.0])
def test_a_ball_rolling_any_way_slows_at_the_same_rate_straight_back(solver, heading_deg):
    """The rolling rows turn with the roll: a pyramid fixed by the normal braked a ball
    rolling at 45 degrees with sqrt(2) mu_r N (0.495 m/s^2 for 0.350), and pulled one at
    22.5 degrees sideways at 0.19 m/s^2."""
    mu_r, heading = 0.005, np.radians(heading_deg)
    way = np.array([np.cos(heading), np.sin(heading), 0.0])
    world, ball, _ = _ball(solver, rolling_friction=mu_r, linear_velocity=2.0 * way,
                           angular_velocity=np.cross((0, 0, 1.0), way) * 2.0 / R)
    world.step(24)
    a = _rate(world, lambda: ball.linear_velocity)
    assert a @ way == pytest.approx(-5 * mu_r * G / (7 * R), rel=1e-3)
    assert abs(a @ np.cross((0, 0, 1.0), way)) < 1e-4
    torque = world.contacts.friction_torque[0]
    assert np.linalg.norm(torque) == pytest.approx(mu_r * world.contacts.normal_force[0],
                                                   rel=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_rolling_ball_slips_at_mu_n_whichever_way_it_rolls(solver):
    """Rolling without slipping down a 22 degree slope needs |f| = 2/7 m g sin(theta),
    0.115 N per newton of normal force, more than mu = 0.1: the ball slips at once and its
    friction is mu N, whichever way it rolls. (Its friction rows followed the roll for a
    while: rolling 45 degrees off downhill, it gripped with 0.1155 N per N for 54 steps.)"""
    th = np.radians(22.0)
    world = World(contact_solver=solver)
    n = np.array([-np.sin(th), 0.0, np.cos(th)])
    world.add_body(Plane(normal=n), friction=0.1)
    way = np.array([-np.cos(th), 1.0, -np.sin(th)]) / np.sqrt(2.0)   # 45 degrees off downhill
    world.add_body(Sphere(R), mass=1.0, position=R * n, friction=0.1,
                          rolling_friction=1e-4, linear_velocity=way,
                          angular_velocity=np.cross(n, way) / R)
    for _ in range(3):
        world.step()
        c = world.contacts
        # (within the solvers' tolerance, 1e-3 of the right-hand side)
        assert np.linalg.norm(c.friction_force[0]) <= 0.1 * c.normal_force[0] * (1 + 1e-3)
    assert c.sliding[0]


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_ball_without_rolling_friction_keeps_rolling(solver):
    world, ball, _ = _ball(solver, linear_velocity=(2.0, 0, 0), angular_velocity=(0, 2.0 / R, 0))
    world.step(24)
    # (the iterative solve's tolerance: 1e-4 is 1/7000 of the braking above)
    assert abs(_rate(world, lambda: ball.linear_velocity[0])) < 1e-4
    assert np.all(world.contacts.friction_torque == 0.0)


def test_the_pair_takes_the_larger_rolling_friction():
    """A ball without rolling friction slows on a ground that has it as one with it does."""
    rates = []
    for ground, ball in (({"rolling_friction": 0.01}, {}), ({}, {"rolling_friction": 0.01})):
        world, body, _ = _ball("iterative", ground, linear_velocity=(2.0, 0, 0),
                               angular_velocity=(0, 2.0 / R, 0), **ball)
        world.step(24)
        rates.append(_rate(world, lambda: body.linear_velocity[0]))
    assert rates[0] == rates[1] == pytest.approx(-5 * 0.01 * G / (7 * R), rel=1e-3)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_rolling_ball_comes_to_rest_and_stays(solver):
    """From v0 it stops after v0^2 / (2 a) and does not roll back or creep."""
    mu_r, v0 = 0.01, 0.3
    world, ball, _ = _ball(solver, rolling_friction=mu_r, linear_velocity=(v0, 0, 0),
                           angular_velocity=(0, v0 / R, 0))
    world.step(240)
    stop = ball.position[0]
    assert stop == pytest.approx(v0 ** 2 / (2 * 5 * mu_r * G / (7 * R)), rel=0.02)
    world.step(480)
    assert abs(ball.position[0] - stop) < 1e-6
    assert np.linalg.norm(ball.angular_velocity) < 1e-5


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_ball_on_a_slope_holds_below_tan_theta_of_mu_r_over_r_and_rolls_above(solver):
    """Gravity's torque about the contact, m g r sin(theta), against mu_r m g cos(theta):
    mu_r = 0.02 on r = 0.1 holds up to tan(theta) = 0.2 (11.3 degrees); above, the ball rolls
    down at 5/7 g (sin(theta) - mu_r cos(theta) / r)."""
    mu_r = 0.02
    world, ball, _ = _ball(solver, slope_deg=8.0, rolling_friction=mu_r)
    start = ball.position
    world.step(2 * 240)
    assert np.linalg.norm(ball.position - start) < 1e-3
    th = np.radians(20.0)
    world, ball, n = _ball(solver, slope_deg=20.0, rolling_friction=mu_r)
    downhill = np.array([-np.cos(th), 0.0, -np.sin(th)])
    world.step(24)
    a = _rate(world, lambda: ball.linear_velocity @ downhill)
    assert a == pytest.approx(5 / 7 * G * (np.sin(th) - mu_r * np.cos(th) / R), rel=0.02)


@pytest.mark.parametrize("solver", SOLVERS)
def test_spin_friction_stops_a_spinning_ball_at_mu_s_m_g_over_i(solver):
    """A ball spinning about the vertical on one point of contact: without spin friction
    nothing brakes it; with mu_s the torque mu_s m g slows it at mu_s m g / I, to a stop."""
    world, ball, _ = _ball(solver, angular_velocity=(0, 0, 20.0))
    world.step(24)
    assert abs(_rate(world, lambda: ball.angular_velocity[2])) < 1e-6
    mu_s = 0.005
    world, ball, _ = _ball(solver, spin_friction=mu_s, angular_velocity=(0, 0, 20.0))
    world.step(24)
    alpha = _rate(world, lambda: ball.angular_velocity[2])
    assert alpha == pytest.approx(-mu_s * G / (0.4 * R * R), rel=1e-3)
    assert world.contacts.friction_torque[0, 2] == pytest.approx(
        -mu_s * world.contacts.normal_force[0], rel=1e-6)
    world.step(2 * 240)                   # 20 rad/s stops within 1.7 s
    assert np.linalg.norm(ball.angular_velocity) < 1e-5


def test_a_pile_with_rolling_friction_replays_bit_for_bit():
    """The torque rows are warm started with the contacts (and kept in snapshots)."""
    world = World(contact_solver="iterative")
    world.add_body(Plane(), friction=0.6)
    rng = np.random.default_rng(0)
    for i in range(12):
        world.add_body(Sphere(0.05), mass=0.2, rolling_friction=0.002, spin_friction=0.001,
                       position=(*rng.uniform(-0.08, 0.08, 2), 0.06 + 0.1 * i))
    first, again = replay_from_snapshot(world, 200, 60)
    assert_same_state(first, again)
    assert np.any(world.contacts.friction_torque != 0.0)


@pytest.mark.parametrize("name", ["rolling_friction", "spin_friction"])
@pytest.mark.parametrize("value", [-0.01, float("nan"), "grippy"])
def test_bad_rolling_or_spin_friction_is_refused_by_name(name, value):
    world = World()
    with pytest.raises(ValueError, match=name):
        world.add_body(Sphere(R), mass=1.0, **{name: value})
    ball = world.add_body(Sphere(R), mass=1.0)
    with pytest.raises(ValueError, match=name):
        setattr(ball, name, value)
    assert getattr(ball, name) == 0.0


def test_a_penetration_beyond_the_slop_is_pushed_out_in_finite_time():
    """A 0.4 m box (1 kg) made 1 mm into the ground at dt 1/60: pushed out over the
    stabilisation time alone, the 0.7 mm beyond the slop faded by e^(-h/T) a step and was
    still 2.2 um beyond it after 20 steps, the box rising at 3.4e-5 m/s (0.17 um after 30).
    With the finishing push (``physics.push_out``) it is out by the 15th step and
    rests at the slop, still."""
    from physics.contact_rows import SLOP
    world = World(dt=1 / 60)
    world.add_body(Plane())
    box = world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0.2 - 1e-3))
    world.step(20)
    assert world.contacts.depth.max() - SLOP < 1e-9
    assert abs(box.linear_velocity[2]) < 1e-8
    assert box.position[2] == pytest.approx(0.2 - SLOP, abs=1e-9)
