"""Couplings between joint coordinates (Featherstone's gamma_q example q2 = 2 sin q1), gears,
point on plane."""
import numpy as np
import pytest

from physics import Ball, Box, Coupling, Cylinder, Gear, Hinge, PointOnPlane, Slider, Sphere, World
from physics.math3d import quat_to_matrix, rotate_quat
from physics.rows import Kinematics


def planar2g(integrator):
    """Seed 002's planar2g: a two-link planar arm whose second joint follows q2 = 2 sin q1."""
    world = World(gravity=(0, 0, 0), integrator=integrator)
    link1 = world.add_body(Box((0.5, 0.05, 0.05)), mass=1.0, position=(0.5, 0, 0))
    link2 = world.add_body(Box((0.5, 0.05, 0.05)), mass=1.0, position=(1.5, 0, 0))
    j1 = world.add_joint(Hinge(None, link1, anchor=(0, 0, 0), axis=(0, 0, 1)))
    j2 = world.add_joint(Hinge(link1, link2, anchor=(1, 0, 0), axis=(0, 0, 1)))
    coupling = world.add_joint(Coupling(
        [j1, j2], phi=lambda q: q[1] - 2 * np.sin(q[0]),
        grad=lambda q: np.array([-2 * np.cos(q[0]), 1.0]),
        hessian=lambda q: np.array([[2 * np.sin(q[0]), 0.0], [0.0, 0.0]])))
    return world, link1, j1, j2, coupling


@pytest.mark.parametrize("integrator", ["rk4", "symplectic"])
def test_planar2g_work_of_a_constant_torque_equals_kinetic_energy(integrator):
    world, link1, j1, j2, coupling = planar2g(integrator)
    for _ in range(480):
        link1.apply_torque((0, 0, 1.0))      # tau = [1, 0]: joint 1 only
        world.step()
    work = 1.0 * j1.angle                    # constant torque times the angle turned
    assert world.kinetic_energy() == pytest.approx(work, rel=0.01)
    assert abs(j2.angle - 2 * np.sin(j1.angle)) < 1e-6
    assert j1.angle > 0.2                    # it did turn


def test_coupling_row_matches_finite_differences():
    world, link1, j1, j2, coupling = planar2g("symplectic")
    rng = np.random.default_rng(2)
    for b in world.bodies:
        b.angular_velocity = (0, 0, rng.normal())
        b.linear_velocity = rng.normal(size=3) * 0.1
    table = [t for t in world._model().tables if t.kind == "coupling"]
    x, q, v, w = (world._view(k).copy() for k in ("_x", "_q", "_v", "_w"))

    def row(x, q):
        return table[0].evaluate(Kinematics(x, quat_to_matrix(q), v, w))

    r = row(x, q)
    eps = 1e-6
    moved = lambda s: row(x + s * eps * v, rotate_quat(q, s * eps * w))
    fd_rate = (moved(1).C - moved(-1).C) / (2 * eps)
    np.testing.assert_allclose(r.velocity(v, w), fd_rate, rtol=1e-6, atol=1e-8)
    fd_jdu = (moved(1).velocity(v, w) - moved(-1).velocity(v, w)) / (2 * eps)
    np.testing.assert_allclose(r.Jdu, fd_jdu, rtol=1e-5, atol=1e-7)


def test_rows_of_many_couplings_evaluated_together_match_finite_differences():
    """One world, one table: a gear whose driving hinge moves both of its bodies, a rack
    and pinion (hinge and slider), a nonlinear coupling of a hinge and a slider with no
    hessian (curvature by differences of grad): every row's rate and Jdot u against finite
    differences of its value."""
    world = World(gravity=(0, 0, 0))
    g1 = world.add_body(Box((0.2, 0.2, 0.05)), mass=1.0, position=(0, 0, 0))
    g2 = world.add_body(Box((0.1, 0.1, 0.05)), mass=0.5, position=(0.3, 0, 0))
    h1 = world.add_joint(Hinge(None, g1, anchor=(0, 0, 0), axis=(0, 0, 1)))
    h2 = world.add_joint(Hinge(g1, g2, anchor=(0.3, 0, 0), axis=(0, 0, 1)))
    pinion = world.add_body(Box((0.1, 0.1, 0.05)), mass=0.5, position=(2, 0, 0))
    rack = world.add_body(Box((0.5, 0.05, 0.05)), mass=1.0, position=(2, 0.2, 0))
    h3 = world.add_joint(Hinge(None, pinion, anchor=(2, 0, 0), axis=(0, 0, 1)))
    s3 = world.add_joint(Slider(None, rack, anchor=(2, 0.2, 0), axis=(1, 0, 0)))
    crank = world.add_body(Box((0.2, 0.05, 0.05)), mass=1.0, position=(4, 0, 0))
    slide = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(4, 1, 0))
    h4 = world.add_joint(Hinge(None, crank, anchor=(4, 0, 0), axis=(0, 0, 1)))
    s4 = world.add_joint(Slider(None, slide, anchor=(4, 1, 0), axis=(0, 1, 0)))
    world.add_joint(Gear(h1, h2, ratio=-2.0))
    world.add_joint(Gear(h3, s3, ratio=0.1))
    world.add_joint(Coupling([h4, s4], phi=lambda q: q[1] - 0.3 * np.sin(q[0]) ** 2,
                             grad=lambda q: np.array([-0.6 * np.sin(q[0]) * np.cos(q[0]), 1.0])))
    rng = np.random.default_rng(5)
    for b in world.bodies:
        b.angular_velocity = rng.normal(size=3)
        b.linear_velocity = rng.normal(size=3) * 0.3
    world.step(3)                          # turned off zero; the couplings hold
    table, = [t for t in world._model().tables if t.kind == "coupling"]
    x, q, v, w = (world._view(k).copy() for k in ("_x", "_q", "_v", "_w"))

    def rows(x, q):
        return table.evaluate(Kinematics(x, quat_to_matrix(q), v, w))

    r = rows(x, q)
    assert r.C.shape == (3,) and np.abs(r.C).max() < 1e-9
    eps = 1e-6
    moved = lambda s: rows(x + s * eps * v, rotate_quat(q, s * eps * w))
    np.testing.assert_allclose(r.velocity(v, w), (moved(1).C - moved(-1).C) / (2 * eps),
                               rtol=1e-6, atol=1e-8)
    fd_jdu = (moved(1).velocity(v, w) - moved(-1).velocity(v, w)) / (2 * eps)
    np.testing.assert_allclose(r.Jdu, fd_jdu, rtol=1e-5, atol=1e-6)


def test_a_train_of_twenty_gears_keeps_every_ratio():
    """20 disks on hinges, each meshing with the next (ratio -1.5 and -1 / 1.5 in turn),
    the first driven by a motor: every ratio holds and the last turns as the product says."""
    world = World(gravity=(0, 0, -9.81))
    hinges = []
    for i in range(20):
        disk = world.add_body(Box((0.1, 0.1, 0.02)), mass=1.0, position=(0.25 * i, 0, 0))
        hinges.append(world.add_joint(Hinge(None, disk, anchor=(0.25 * i, 0, 0),
                                            axis=(0, 0, 1))))
    ratios = [-1.5 if i % 2 == 0 else -1 / 1.5 for i in range(19)]
    for i, r in enumerate(ratios):
        world.add_joint(Gear(hinges[i], hinges[i + 1], ratio=r))
    hinges[0].set_motor(velocity=2.0, max_force=50.0)
    world.step(240)
    for i, r in enumerate(ratios):
        assert hinges[i + 1].angle == pytest.approx(r * hinges[i].angle, abs=1e-9)
    assert hinges[0].rate == pytest.approx(2.0, rel=1e-6)
    assert hinges[-1].rate == pytest.approx(2.0 * np.prod(ratios), rel=1e-6)


def test_gear_keeps_its_ratio_under_load():
    world = World(gravity=(0, 0, 0))
    a = world.add_body(Box((0.2, 0.2, 0.05)), mass=1.0, position=(0, 0, 0))
    b = world.add_body(Box((0.1, 0.1, 0.05)), mass=0.5, position=(1, 0, 0))
    ja = world.add_joint(Hinge(None, a, anchor=(0, 0, 0), axis=(0, 0, 1)))
    jb = world.add_joint(Hinge(None, b, anchor=(1, 0, 0), axis=(0, 0, 1)))
    world.add_joint(Gear(ja, jb, ratio=-3.0))
    for _ in range(240):
        a.apply_torque((0, 0, 5.0))
        world.step()
    assert jb.angle == pytest.approx(-3.0 * ja.angle, abs=1e-6)
    assert abs(ja.angle) > 0.1


def test_point_on_plane_holds_a_pen_on_the_paper():
    world = World()
    pen = world.add_body(Sphere(0.05), mass=1.0, position=(0, 0, 0.05), linear_velocity=(1, 0.5, 0))
    tip = world.add_joint(PointOnPlane(None, pen, point=(0, 0, 0), normal=(0, 0, 1)))
    world.step(240)
    assert abs(tip.distance) < 1e-8
    assert pen.position[0] == pytest.approx(1.0, abs=1e-6)   # free to slide in the plane
    assert tip.force[2] == pytest.approx(9.81, rel=1e-6)      # and it carries the weight


def test_gear_driven_by_a_motor_keeps_its_ratio_across_the_half_turn():
    """Regression: the coupling used the wrapped hinge angle, so at t ~ 1.6 s (angle pi)
    phi jumped by 2 pi and the gear snapped. The angles are continuous now."""
    world = World(gravity=(0, 0, 0))
    a = world.add_body(Box((0.2, 0.2, 0.05)), mass=1.0, position=(0, 0, 0))
    b = world.add_body(Box((0.1, 0.1, 0.05)), mass=0.5, position=(1, 0, 0))
    ja = world.add_joint(Hinge(None, a, anchor=(0, 0, 0), axis=(0, 0, 1)))
    jb = world.add_joint(Hinge(None, b, anchor=(1, 0, 0), axis=(0, 0, 1)))
    gear = world.add_joint(Gear(ja, jb, ratio=-0.5))
    ja.set_motor(velocity=2.0, max_force=10.0)
    worst = jump = 0.0
    for _ in range(5 * 240):
        qb = b.orientation
        world.step()
        worst = max(worst, abs(jb.angle - gear.ratio * ja.angle))
        # b turns at 1 rad/s: 0.0042 rad per step, unless the gear snaps
        jump = max(jump, 2 * np.arccos(min(1.0, abs(qb @ b.orientation))))
    assert jump < 0.01
    assert worst < 1e-4
    assert ja.angle == pytest.approx(10.0, abs=0.1)           # over 1.5 turns, continuous
    assert ja.rate == pytest.approx(2.0, rel=1e-3)
    assert jb.rate == pytest.approx(-1.0, rel=1e-3)
    assert abs(gear.error) < 1e-4                    # (phi is the rows' own relation)
    with pytest.raises(AttributeError):
        gear.ratio = 3.0                             # fixed at creation
    # the geometric angle of b agrees with its continuous angle modulo 2 pi
    ang = np.arctan2(b.rotation[1, 0], b.rotation[0, 0])
    assert np.cos(ang - jb.angle) == pytest.approx(1.0, abs=1e-9)


def test_coupling_q2_equals_2_sin_q1_holds_while_q1_turns_past_pi():
    world, link1, j1, j2, coupling = planar2g("symplectic")
    j1.set_motor(velocity=2.0, max_force=50.0)
    worst = 0.0
    for _ in range(4 * 240):
        world.step()
        worst = max(worst, abs(j2.angle - 2 * np.sin(j1.angle)))
    assert j1.angle > 2 * np.pi + 0.5                        # past pi and a full turn
    assert worst < 1e-4


@pytest.mark.parametrize("speed, dt", [(250.0, 1 / 60), (1000.0, 1 / 240)])
def test_a_gear_between_discs_turning_past_pi_a_step_keeps_them_on_their_turns(speed, dt):
    """Disc 1 at 4.2 rad a step on a 2:1 gear: each disc turns at its rate, neither moved.
    Its angle at the step's end was unwrapped against the step's start, a turn off, and
    the gear put the discs 1.26 and 2.51 rad off their turns every step (found by a
    mechanisms explorer)."""
    world = World(gravity=(0, 0, 0), dt=dt)
    discs = [world.add_body(Cylinder(0.1, 0.02), mass=1.0, position=(x, 0, 0),
                            angular_velocity=(0, 0, w)) for x, w in ((0, speed), (1, speed / 2))]
    hinges = [world.add_joint(Hinge(None, d, anchor=d.position, axis=(0, 0, 1))) for d in discs]
    world.add_joint(Gear(hinges[0], hinges[1], 0.5))
    steps = 12
    world.step(steps)
    for disc, hinge, w in zip(discs, hinges, (speed, speed / 2)):
        turned = w * steps * dt
        assert hinge.angle == pytest.approx(turned, rel=1e-9)
        yaw = np.arctan2(disc.rotation[1, 0], disc.rotation[0, 0])
        assert np.cos(yaw - turned) == pytest.approx(1.0, abs=1e-9)


def test_a_coupling_refuses_a_joint_twice_and_functions_that_constrain_nothing():
    """Gear(j, j, 1) constrained nothing and Gear(j, j, 2) locked j; a gradient of zeros, of
    the wrong length or a phi of NaN went on to the step. Each is refused when it is made
    or added, naming what is wrong."""
    world, link1, j1, j2, _ = planar2g("symplectic")
    with pytest.raises(ValueError, match="joint1 and joint2 must be different joints"):
        Gear(j1, j1, 2.0)
    with pytest.raises(ValueError, match="ratio must not be 0"):      # (locked j2 silently)
        Gear(j1, j2, 0.0)
    with pytest.raises(ValueError, match="joints must be different joints"):
        Coupling([j1, j1], phi=lambda q: q[1] - q[0], grad=lambda q: np.array([-1.0, 1.0]))
    for phi, grad, message in (
            (lambda q: q[1] - q[0], lambda q: np.zeros(2), r"grad\(q\) is zero"),
            (lambda q: q[1] - q[0], lambda q: np.ones(3), r"grad\(q\) must be 2 finite numbers"),
            (lambda q: np.nan, lambda q: np.ones(2), r"phi\(q\) must be one finite number"),
            # (taken as it was, it held q2' = -q1' for phi = q2 - 2 q1, which drifted to -0.89)
            (lambda q: q[1] - 2 * q[0], lambda q: np.ones(2),
             r"grad\(q\) = \(1, 1\) .* is not the derivative of phi, which its central "
             r"differences give as \(-2, 1\): check grad")):
        with pytest.raises(ValueError, match=message):
            world.add_joint(Coupling([j1, j2], phi=phi, grad=grad))
    with pytest.raises(ValueError, match=r"hessian\(q\) .* is not the derivative of grad"):
        world.add_joint(Coupling([j1, j2], phi=lambda q: q[1] - np.sin(q[0]),
                                 grad=lambda q: np.array([-np.cos(q[0]), 1.0]),
                                 hessian=lambda q: np.zeros((2, 2)) + 1.0))
    assert len(world.joints) == 3


def test_a_gear_of_a_joint_without_one_coordinate_names_the_parameter():
    """Gear(hinge, ball) said "joints must be a non-empty list of Hinge and Slider joints",
    naming neither of Gear's parameters nor which one was wrong."""
    world, link1, j1, j2, _ = planar2g("symplectic")
    ball = world.add_joint(Ball(link1, world.add_body(Sphere(0.1), mass=1.0,
                                                      position=(1.0, 0.0, 0.5)),
                                anchor=(1.0, 0.0, 0.6)))
    with pytest.raises(ValueError, match=r"^joint2 must be a Hinge or a Slider joint .*got <Ball"):
        Gear(j1, ball, 2.0)
    with pytest.raises(ValueError, match=r"^joint1 must be a Hinge or a Slider joint .*got None"):
        Gear(None, j2, 2.0)
    with pytest.raises(ValueError, match=r"^joints\[1\] must be a Hinge or a Slider joint"):
        Coupling([j1, ball], phi=lambda q: q[0], grad=lambda q: np.ones(2))
    with pytest.raises(ValueError, match="joints must list at least one"):
        Coupling([], phi=lambda q: 0.0, grad=lambda q: np.ones(0))


def test_a_coupling_names_a_joint_not_in_a_list_and_functions_that_give_no_numbers():
    """Coupling(j1, phi, grad) raised "TypeError: 'Hinge' object is not iterable", a phi
    giving a string "could not convert string to float: 'x'", and hessian=5 was taken (the
    step would call it); a hessian that gives no (k, k) numbers failed in the step."""
    world, link1, j1, j2, _ = planar2g("symplectic")
    phi, grad = (lambda q: q[1] - q[0]), (lambda q: np.array([-1.0, 1.0]))
    with pytest.raises(ValueError, match=r"^joints must be a list of the Hinge or Slider "
                                         r"joints to couple \(e.g. \[hinge1, hinge2\]\)"):
        Coupling(j1, phi, grad)
    with pytest.raises(ValueError, match=r"^hessian must be a function of the coordinates q "
                                         r"\(or None.*got 5"):
        Coupling([j1, j2], phi, grad, hessian=5)
    for kwargs, message in (
            (dict(phi=lambda q: "x", grad=grad), r"phi\(q\) must be one finite number, got 'x'"),
            (dict(phi=phi, grad=lambda q: ["a", "b"]), r"grad\(q\) must be 2 finite numbers"),
            (dict(phi=phi, grad=lambda q: [1j, 1.0]), r"grad\(q\) must be 2 finite numbers"),
            (dict(phi=phi, grad=grad, hessian=lambda q: "bad"),
             r"hessian\(q\) must be a 2x2 array of finite numbers, got 'bad'")):
        with pytest.raises(ValueError, match=message):
            world.add_joint(Coupling([j1, j2], **kwargs))
    assert len(world.joints) == 3
    world.add_joint(Coupling([j1, j2], phi, grad, hessian=lambda q: np.zeros((2, 2))))


@pytest.mark.parametrize("late, words", [
    ("grad", r"grad\(q\) must be 2 finite numbers"),
    ("phi", r"phi\(q\) must be one finite number"),
])
def test_a_coupling_function_that_goes_wrong_later_is_named_and_the_world_kept(late, words):
    """Checked when the coupling was made, its functions were taken on trust in the step: a
    grad giving 3 numbers later raised numpy's broadcast error, a phi giving NaN the generic
    StepError. Now the step names the coupling and the function, and leaves the world as it
    was before that step."""
    world = World(gravity=(0, 0, 0))
    d1 = world.add_body(Cylinder(0.2, 0.02), mass=1.0)
    d2 = world.add_body(Cylinder(0.2, 0.02), mass=1.0, position=(1, 0, 0))
    h1 = world.add_joint(Hinge(None, d1, axis=(0, 0, 1)))
    h2 = world.add_joint(Hinge(None, d2, axis=(0, 0, 1)))

    def phi(q):
        return np.nan if late == "phi" and q[0] > 0.1 else q[1] - q[0]

    def grad(q):
        return np.array([-1.0, 1.0, 0.0]) if late == "grad" and q[0] > 0.1 else np.array([-1.0, 1.0])

    world.add_joint(Coupling([h1, h2], phi, grad))
    d1.angular_velocity = (0, 0, 2.0)
    with pytest.raises(ValueError, match=words):
        for _ in range(60):
            before = world.get_state()
            world.step()
    from snapshot_helpers import assert_same_state
    assert_same_state(world.get_state(), before)


def test_a_gear_reports_its_wrench_on_joint2s_body_whichever_joint_moves_it():
    """A yo-yo as a carriage (10 g) on a vertical Slider to the world, a disc (0.2 kg,
    r 5 cm) on a Hinge to the carriage, Gear(hinge, slider, r) for the string: the gear
    reports its wrench on joint2's body_b, the carriage, whose string tension is
    (m + mc)(g - a), a = (m + mc) g / (m + mc + I / r^2) (0.66455 N), with joint1's share,
    T r about the axle (its hinge's body_a is the carriage too). Its body_b was the last
    moving body met among the joints' bodies, the disc: the gear read no force and -T r."""
    m, mc, r, g = 0.2, 0.01, 0.05, 9.81
    world = World(dt=1 / 240)
    car = world.add_body(Box((0.01, 0.01, 0.01)), mass=mc, position=(0, 0, 1))
    disc = world.add_body(Cylinder(r, 0.01), mass=m, position=(0, 0, 1),
                          orientation=(np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0))
    world.ignore_collision(car, disc)
    slider = world.add_joint(Slider(None, car, axis=(0, 0, 1)))
    hinge = world.add_joint(Hinge(car, disc, axis=(0, 1, 0)))
    gear = world.add_joint(Gear(hinge, slider, ratio=r))
    assert gear.body_b is car and gear.body_a is disc
    world.step(10)
    a = (m + mc) * g / (m + mc + 0.5 * m)
    tension = (m + mc) * (g - a)
    np.testing.assert_allclose(gear.force, [0, 0, tension], atol=1e-6 * tension)
    np.testing.assert_allclose(gear.torque, [0, tension * r, 0], atol=1e-6 * tension * r)
    # the carriage's balance: gravity, the gear's pull and the hinge's load of the disc
    assert -mc * g + gear.force[2] - hinge.force[2] == pytest.approx(-mc * a, rel=1e-6)
    # joint2 on the world: its body_b as before (an Atwood machine's mass, the rack)
    wheel = world.add_body(Cylinder(0.1, 0.02), mass=0.5, position=(2, 0, 2),
                           orientation=(np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0))
    weight = world.add_body(Box((0.05,) * 3), mass=3.0, position=(2.1, 0, 1))
    pulley = world.add_joint(Hinge(None, wheel, anchor=(2, 0, 2), axis=(0, 1, 0)))
    rope = world.add_joint(Slider(None, weight, axis=(0, 0, 1)))
    assert world.add_joint(Gear(pulley, rope, ratio=0.1)).body_b is weight
