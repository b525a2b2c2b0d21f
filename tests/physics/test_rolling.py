"""Rolling without slipping (physics/rolling.py): rows against finite differences, and the
analytic rolling sphere, rolling coin and sphere on an incline."""
import numpy as np
import pytest

from physics import Box, Cylinder, Hinge, Plane, Rolling, Sphere, World
from physics.math3d import quat_to_matrix, rotate_quat
from physics.rows import Kinematics, evaluate_tables

G = 9.81


def quat_from_z(direction):
    """Quaternion turning the body z axis onto ``direction``."""
    z = np.array([0.0, 0.0, 1.0])
    t = np.asarray(direction, float) / np.linalg.norm(direction)
    axis = np.cross(z, t)
    s = np.linalg.norm(axis)
    if s < 1e-12:
        return np.array([1.0, 0.0, 0.0, 0.0]) if t[2] > 0 else np.array([0.0, 1.0, 0.0, 0.0])
    angle = np.arctan2(s, z @ t)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis / s])


def unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def _rows(world, x, q, v, w):
    return evaluate_tables(world._model().tables, Kinematics(x, quat_to_matrix(q), v, w))


@pytest.mark.parametrize("shape", ["disc", "sphere"])
def test_rows_match_finite_differences_of_the_contact_point(shape):
    rng = np.random.default_rng(3)
    world = World()
    if shape == "disc":
        body = world.add_body(Cylinder(0.1, 0.005), mass=1.0, position=(0.2, -0.1, 0.3),
                              orientation=unit(rng.normal(size=4)))
    else:
        body = world.add_body(Sphere(0.1), mass=1.0, inertia=(0.003, 0.004, 0.006),
                              position=(0.2, -0.1, 0.3), orientation=unit(rng.normal(size=4)))
    body.linear_velocity = rng.normal(size=3)
    body.angular_velocity = 3 * rng.normal(size=3)
    roll = world.add_joint(Rolling(body, plane_normal=unit((0.1, 0.2, 1.0)), plane_offset=0.05))
    x, q, v, w = (world._view(k).copy() for k in ("_x", "_q", "_v", "_w"))
    rows = _rows(world, x, q, v, w)
    assert rows.count == 3
    eps = 1e-6
    moved = lambda s: (x + s * eps * v, rotate_quat(q, s * eps * w))

    # C: the height of the nearest point above the plane; J u is its rate
    r = roll.contact_offset
    assert rows.C[0] == pytest.approx(roll.normal @ (x[1] + r) - 0.05, abs=1e-14)
    np.testing.assert_allclose(rows.C[1:], 0.0)
    fd_C = (_rows(world, *moved(1), v, w).C - _rows(world, *moved(-1), v, w).C) / (2 * eps)
    Ju = rows.velocity(v, w)
    assert Ju[0] == pytest.approx(fd_C[0], rel=1e-7, abs=1e-9)

    # all three rows: the velocity of the material point now at the contact, along n, t1, t2
    R0 = quat_to_matrix(q)[1]

    def material(s):
        xs, qs = moved(s)
        return xs[1] + quat_to_matrix(qs)[1] @ R0.T @ r

    E = np.vstack([roll.normal, roll.tangents])
    np.testing.assert_allclose(Ju, E @ (material(1) - material(-1)) / (2 * eps), rtol=1e-7,
                               atol=1e-9)
    if shape == "disc":          # the contact point does drift through the disc
        assert np.linalg.norm(np.cross(w[1], r) - (r - R0 @ R0.T @ r)) > 0.1

    # Jdot u = d/dt (J(x(t)) u) with u held fixed
    fd_jdu = (_rows(world, *moved(1), v, w).velocity(v, w)
              - _rows(world, *moved(-1), v, w).velocity(v, w)) / (2 * eps)
    np.testing.assert_allclose(rows.Jdu, fd_jdu, rtol=1e-6, atol=1e-8)
    if shape == "disc":
        assert np.abs(rows.Jdu).max() > 1e-2
    else:
        np.testing.assert_allclose(rows.Jdu, 0.0, atol=1e-12)


def test_acceleration_level_equation_holds_along_a_trajectory():
    """With the seed equation's accelerations (rk4, no Baumgarte), J u stays 0: the Jdot u of
    the velocity-only rows is the right one."""
    world = World(integrator="rk4", baumgarte=(0.0, 0.0), dt=1 / 480)
    d = np.array([np.cos(0.2), 0.0, np.sin(0.2)])           # axis 11 degrees above horizontal
    disc = world.add_body(Cylinder(0.1, 0.005), mass=1.0, orientation=quat_from_z(d))
    roll = world.add_joint(Rolling(disc))
    disc.position = -roll.contact_offset
    disc.angular_velocity = 1.5 * np.array([0, 0, 1.0]) - 12.0 * d
    disc.linear_velocity = -np.cross(disc.angular_velocity, roll.contact_offset)
    assert np.linalg.norm(roll.slip_velocity) < 1e-14 and abs(roll.gap) < 1e-14
    E0 = world.energy()
    for _ in range(480):
        world.step()
    assert abs(world.energy() - E0) < 1e-6 * E0
    assert np.linalg.norm(roll.slip_velocity) < 1e-6
    assert abs(roll.gap) < 1e-6


def test_bad_input_is_a_clear_value_error():
    world = World()
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0)
    with pytest.raises(ValueError, match="radius"):
        Rolling(box)
    with pytest.raises(ValueError, match="plane_normal"):
        Rolling(box, plane_normal=(0, 0, 0), radius=0.1)
    flat = world.add_body(Cylinder(0.1, 0.01), mass=1.0, position=(1, 0, 0.01))
    with pytest.raises(ValueError, match="flat"):
        world.add_joint(Rolling(flat))
    with pytest.raises(ValueError, match="plane"):
        Rolling(box, radius=0.1, plane=box)
    ground = world.add_body(Plane((0, 0, 1), 0.5))
    r = Rolling(box, radius=0.1, plane=ground)
    assert r.offset == 0.5 and np.allclose(r.normal, (0, 0, 1))
    # a normal pointing away from the wheel: the step pulled a ball resting on z = 0 through
    # the plane (z 0.1 -> -0.1 in one step)
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(3, 0, 0.1))
    with pytest.raises(ValueError, match=r"plane_normal \(0, 0, -1\) points away from the "
                                         r"wheel \(its centre is 0.1 m behind the plane\)"):
        world.add_joint(Rolling(ball, plane_normal=(0, 0, -1)))
    assert world.add_joint(Rolling(ball, plane_normal=(0, 0, 1))).gap == pytest.approx(0.0)


def test_sphere_rolls_without_slipping_and_keeps_its_energy():
    """A ball with unequal principal moments (Chaplygin's ball: its spin axis wanders, so the
    rolling is not trivial) on flat ground: v = w x (centre - contact) to 1e-6 at every step
    and the energy within 0.1 % over 5 s (the default symplectic step)."""
    world = World()
    a = 0.1
    ball = world.add_body(Sphere(a), mass=1.0, inertia=(0.003, 0.004, 0.006),
                          position=(0, 0, a), angular_velocity=(3.0, -1.0, 2.0))
    ball.linear_velocity = np.cross(ball.angular_velocity, (0, 0, a))
    roll = world.add_joint(Rolling(ball))
    E0 = world.energy()
    w0 = ball.angular_velocity.copy()
    slip = drift = 0.0
    for _ in range(int(5.0 / world.dt)):
        world.step()
        r = ball.position - roll.contact_point
        slip = max(slip, np.linalg.norm(ball.linear_velocity - np.cross(ball.angular_velocity, r)))
        drift = max(drift, abs(world.energy() - E0) / E0)
        assert abs(roll.gap) < 1e-8
    assert slip < 1e-6
    assert drift < 1e-3
    assert np.linalg.norm(ball.angular_velocity - w0) > 0.5       # it did not roll trivially
    assert roll.normal_force == pytest.approx(G, rel=0.05)


@pytest.mark.parametrize("theta_deg", [10.0, 30.0])
def test_sphere_accelerates_down_an_incline_at_five_sevenths_g_sin_theta(theta_deg):
    th = np.radians(theta_deg)
    n = np.array([-np.sin(th), 0.0, np.cos(th)])
    down = np.array([-np.cos(th), 0.0, -np.sin(th)])
    world = World()
    a, m = 0.1, 2.0
    ball = world.add_body(Sphere(a), mass=m, position=a * n)
    roll = world.add_joint(Rolling(ball, plane_normal=n))
    T = 1.0
    world.step(int(round(T / world.dt)))
    expected = 5.0 / 7.0 * G * np.sin(th)
    assert ball.linear_velocity @ down / T == pytest.approx(expected, rel=0.01)
    assert (ball.position - a * n) @ down == pytest.approx(0.5 * expected * T**2, rel=0.01)
    assert np.linalg.norm(roll.slip_velocity) < 1e-6
    # the grip force up the slope is (2/7) m g sin(theta), the normal force m g cos(theta)
    assert roll.normal_force == pytest.approx(m * G * np.cos(th), rel=1e-3)
    assert roll.friction_force @ -down == pytest.approx(2 / 7 * m * G * np.sin(th), rel=1e-3)


def test_upright_coin_rolls_straight_at_constant_speed():
    world = World()
    a, V = 0.1, 1.5
    coin = world.add_body(Cylinder(a, 0.005), mass=0.5, position=(0, 0, a),
                          orientation=quat_from_z((0, 1, 0)), linear_velocity=(V, 0, 0),
                          angular_velocity=(0, V / a, 0))
    roll = world.add_joint(Rolling(coin))
    E0 = world.energy()
    for _ in range(int(3.0 / world.dt)):
        world.step()
        assert np.linalg.norm(roll.slip_velocity) < 1e-6
    np.testing.assert_allclose(coin.linear_velocity, (V, 0, 0), atol=1e-6)
    np.testing.assert_allclose(coin.position, (3.0 * V, 0, a), atol=1e-6)
    assert abs(world.energy() - E0) < 1e-6 * E0


def steady_precession(alpha, Rp, a, m, I1, I3):
    """Precession rate Omega of a disc (radius a, mass m, moments I1 about a diameter and I3
    about its axis) rolling steadily with its contact point on a circle of radius Rp, its
    plane leaning by alpha from the vertical towards the circle's centre (see the test)."""
    return np.sqrt(m * a * G * np.tan(alpha) / (Rp * (I3 / a + m * a)
                                                - (I3 - I1 + m * a * a) * np.sin(alpha)))


@pytest.mark.parametrize("integrator", ["symplectic", "rk4"])
@pytest.mark.parametrize("alpha_deg, Rp", [(15.0, 0.5), (30.0, 0.3)])
def test_tilted_coin_traces_the_steady_precession_circle(alpha_deg, Rp, integrator):
    """Steady rolling of a tilted disc (radius a, mass m, moments I1 about a diameter, I3 about
    the axis). Frame turning at Omega about the vertical e3 through the circle's centre O; e1
    from O to the contact point P = Rp e1, e2 = e3 x e1. The disc leans by alpha towards O:
    centre C = P + a k, k = cos(alpha) e3 - sin(alpha) e1, axis d = sin(alpha) e3 + cos(alpha) e1.

    No slip, v_C + w x (P - C) = 0 with w = Omega e3 + s d, gives the spin s = -Omega Rp / a.
    Angular momentum about C: L = I3 (w . d) d + I1 Omega cos(alpha) k, turning with the frame:
    dL/dt = Omega e3 x L = Omega^2 cos(alpha) [I3 (sin(alpha) - Rp/a) - I1 sin(alpha)] e2.
    Torque about C of the contact force F = m a_C + m g e3, a_C = -Omega^2 (Rp - a sin(alpha)) e1:
    (P - C) x F = a m [Omega^2 (Rp - a sin(alpha)) cos(alpha) - g sin(alpha)] e2. Equating:

        Rp = [(I3 - I1 + m a^2) sin(alpha) + m a g tan(alpha) / Omega^2] / (I3 / a + m a),

    which for a thin disc (I3 = m a^2/2, I1 = m a^2/4) is Rp = 5/6 a sin(alpha) +
    2/3 g tan(alpha) / Omega^2 (for Rp >> a the textbook v^2 = 2/3 g Rp tan(alpha)).

    The coin starts with the tilt alpha, the precession rate Omega of the formula for a chosen
    Rp, and the velocities that no slip allows (they fix the spin and the speed); then it runs
    free for two precession periods. The circle fitted to its contact point path must have
    radius Rp within 2 %, and the tilt stay alpha (a wrong formula would make it nutate).

    Both integrators: rk4, and the default symplectic step, whose drift turns the coin by its
    torque-free motion (before that change it lost about 1 % of its energy per period here
    and its tilt wandered to 27 degrees)."""
    alpha = np.radians(alpha_deg)
    a, m = 0.1, 1.0
    world = World(integrator=integrator, dt=1 / 240)
    e1, e2, e3 = np.eye(3)
    d = np.sin(alpha) * e3 + np.cos(alpha) * e1
    k = np.cos(alpha) * e3 - np.sin(alpha) * e1
    coin = world.add_body(Cylinder(a, 0.004), mass=m, position=Rp * e1 + a * k,
                          orientation=quat_from_z(d))
    I1, I3 = coin.inertia[0, 0], coin.inertia[2, 2]
    omega = steady_precession(alpha, Rp, a, m, I1, I3)
    coin.linear_velocity = omega * (Rp - a * np.sin(alpha)) * e2
    coin.angular_velocity = omega * e3 - omega * Rp / a * d
    roll = world.add_joint(Rolling(coin))
    np.testing.assert_allclose(roll.contact_point, Rp * e1, atol=1e-12)
    assert np.linalg.norm(roll.slip_velocity) < 1e-12
    E0 = world.energy()
    path, tilt = [], []
    for _ in range(int(2 * 2 * np.pi / omega / world.dt)):
        world.step()
        path.append(roll.contact_point)
        tilt.append(np.degrees(np.arcsin(abs(coin.rotation[2, 2]))))   # axis elevation
    path = np.array(path)
    A = np.c_[2 * path[:, :2], np.ones(len(path))]
    cx, cy, c0 = np.linalg.lstsq(A, (path[:, :2] ** 2).sum(1), rcond=None)[0]
    radius = np.sqrt(c0 + cx**2 + cy**2)
    assert radius == pytest.approx(Rp, rel=0.02)
    assert np.abs(np.linalg.norm(path[:, :2] - (cx, cy), axis=1) - Rp).max() < 0.02 * Rp
    # the axis keeps its elevation alpha above the horizontal
    assert np.abs(np.array(tilt) - alpha_deg).max() < 0.5
    assert abs(world.energy() - E0) < 1e-4 * E0
    assert np.abs(path[:, 2]).max() < 1e-6


def test_the_plane_a_wheel_rolls_on_is_not_removed_under_it():
    """Removing the ground a Rolling joint was made on left the ball rolling on a plane that
    no longer was there; it is refused as for a body with joints."""
    world = World()
    ground = world.add_body(Plane())
    ball = world.add_body(Sphere(0.2), mass=1.0, position=(0, 0, 0.2))
    world.add_joint(Rolling(ball, plane=ground))
    with pytest.raises(ValueError, match="still has joints"):
        world.remove_body(ground)
    assert len(world.bodies) == 2


def tricycle(world, steering, radius=6.0, speed=2.0):
    """A 300 kg chassis on two rear wheels (hinged to it) and one front wheel on a steering
    knuckle (a vertical hinge held by ``steering``: "servo", "damper" or "free"), every wheel
    a 15 kg disc of radius 0.3 m on a Rolling joint. The front wheel is placed steered onto a
    circle of ``radius`` about the turning centre (-0.7, radius, 0) beside the rear axle, and
    every body set moving round it at ``speed`` (m/s, the rear axle's centre). Returns the
    chassis and the turning centre."""
    r, wheelbase, track = 0.3, 1.4, 1.14
    centre, rate = np.array([-wheelbase / 2, radius, 0.0]), speed / radius
    chassis = world.add_body(Box((1.0, 0.3, 0.1)), mass=300.0, position=(0, 0, r))
    steer = np.arctan2(wheelbase, radius)
    turn = np.array([np.cos(steer / 2), 0, 0, np.sin(steer / 2)])
    knuckle = world.add_body(None, mass=3.0, inertia=(0.02, 0.02, 0.02),
                             position=(wheelbase / 2, 0, r), orientation=turn)
    knuckle_hinge = world.add_joint(Hinge(chassis, knuckle, anchor=knuckle.position,
                                          axis=(0, 0, 1)))
    if steering != "free":
        knuckle_hinge.set_servo(target=0.0, stiffness=3000.0 if steering == "servo" else 0.0,
                                damping=100.0, max_force=1e4)
    wheels = [(knuckle, (wheelbase / 2, 0, r), steer),
              (chassis, (-wheelbase / 2, track / 2, r), 0.0),
              (chassis, (-wheelbase / 2, -track / 2, r), 0.0)]
    bodies = [chassis, knuckle]
    for mount, at, angle in wheels:
        axle = np.array([-np.sin(angle), np.cos(angle), 0.0])
        wheel = world.add_body(Cylinder(r, 0.1), mass=15.0, position=at,
                               orientation=quat_from_z(axle))
        world.add_joint(Hinge(mount, wheel, anchor=at, axis=axle))
        world.add_joint(Rolling(wheel))
        ground_speed = rate * np.linalg.norm(np.asarray(at)[:2] - centre[:2])
        wheel.angular_velocity = (0, 0, rate) + ground_speed / r * axle   # rolls forwards
        bodies.append(wheel)
    for body in bodies:
        body.linear_velocity = np.cross((0, 0, rate), body.position - centre)
        if body is chassis or body is knuckle:
            body.angular_velocity = (0, 0, rate)
    return chassis, centre


@pytest.mark.parametrize("steering, dt", [("servo", 1 / 240), ("servo", 1 / 60),
                                         ("damper", 1 / 60), ("free", 1 / 60)])
def test_tricycle_coasts_round_its_turning_circle_keeping_its_energy(steering, dt):
    """No load does work on a coasting tricycle whose steering does not turn: it keeps going
    round its circle at its speed. (Rolling rows are workless, the knuckle's servo or damper
    does no work while the steering angle stays put, and nothing turns the steering: the
    knuckle's axis passes through the wheel's contact point.)"""
    world = World(dt=dt)
    chassis, centre = tricycle(world, steering)
    E0 = world.kinetic_energy()
    axle_offset = np.array([-0.7, 0.0, 0.0])
    for _ in range(int(round(2.0 / dt))):
        world.step()
        rear = chassis.position + chassis.rotation @ axle_offset
        assert np.linalg.norm(rear[:2] - centre[:2]) == pytest.approx(6.0, rel=2e-3)
    assert world.kinetic_energy() == pytest.approx(E0, rel=5e-3)
    assert world.constraint_error() < 1e-6
