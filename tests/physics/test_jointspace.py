"""Joint-space views (the null-space projection, Featherstone's gamma_q and Gauss's principle)
against the engine's maximal-coordinate seed equation: the same mechanism, four
formulations, the same accelerations and forces."""
import numpy as np
import pytest

from physics import (Ball, Box, Cylindrical, Fixed, Hinge, Joint, RotationLock, Slider,
                     Universal, World)
from physics.jointspace import (ArticulatedView, apply_joint_torques, constraint_gamma,
                                joint_rows, least_constraint_accelerations,
                                maximal_accelerations, simulate_gq, trivial_gamma_q,
                                whiteboard_torques)


# -- builders ----------------------------------------------------------------------------------
def unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def random_inertia(rng, scale=0.05):
    """A random SPD body inertia with principal moments that satisfy the triangle rule."""
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return Q @ np.diag(rng.uniform(0.6, 1.4, 3) * scale) @ Q.T


def random_box(world, rng, position):
    return world.add_body(Box((0.05, 0.05, 0.15)), mass=rng.uniform(0.5, 2.0),
                          inertia=random_inertia(rng), position=position,
                          orientation=unit(rng.normal(size=4)))


def six_joint_arm(rng, **world_args):
    """Hinges about different axes and a slider (third joint), random masses and inertias."""
    world = World(**{"baumgarte": (0, 0), "cfm": 0.0, **world_args})
    axes = [(0, 0, 1), (0, 1, 0), (1, 0, 0.3), (1, 0, 0), (0, 1, 1), (1, 1, 0)]
    kinds = [Hinge, Hinge, Slider, Hinge, Hinge, Hinge]
    parent, anchor, joints = None, np.zeros(3), []
    for kind, axis in zip(kinds, axes):
        step = np.array([0.0, 0.0, -0.3]) + rng.normal(size=3) * 0.1
        body = random_box(world, rng, anchor + 0.5 * step + rng.normal(size=3) * 0.03)
        joints.append(world.add_joint(kind(parent, body, anchor=anchor, axis=axis)))
        parent, anchor = body, anchor + step
    return world, joints, anchor            # anchor: the arm's tip (on the last body)


def mixed_tree(rng):
    """Ball, universal (body_a is the child), hinge, cylindrical, slider (reversed), fixed;
    a branch at the first body."""
    world = World(baumgarte=(0, 0), cfm=0.0)
    b = [random_box(world, rng, p) for p in
         [(0, 0, -0.3), (0.1, 0, -0.7), (0.3, 0.1, -0.9), (-0.2, 0.1, -0.8), (-0.3, 0.2, -1.2),
          (-0.4, 0.2, -1.5)]]
    joints = [Ball(None, b[0], anchor=(0, 0, 0)),
              Universal(b[1], b[0], anchor=(0.05, 0, -0.5), axis_a=(1, 0, 0), axis_b=(0, 0.6, 0.8)),
              Hinge(b[1], b[2], anchor=(0.2, 0.05, -0.8), axis=(0.3, 1, 0.2)),
              Cylindrical(b[0], b[3], anchor=(-0.1, 0.05, -0.6), axis=(0, 0.3, 1)),
              Slider(b[4], b[3], anchor=(-0.25, 0.15, -1.0), axis=(1, 0.2, 0.1)),
              Fixed(b[4], b[5], anchor=(-0.35, 0.2, -1.35))]
    for j in joints:
        world.add_joint(j)
    return world, joints


def four_bar(rng):
    """A planar four-bar (crank, coupler, rocker) closed by four world hinges about y."""
    world = World(baumgarte=(0, 0), cfm=1e-10)
    A, B, C, D = (np.array(p, float) for p in [(0, 0, 0), (0.1, 0, 0.4), (1.1, 0, 0.6), (1, 0, 0)])
    crank, coupler, rocker = (random_box(world, rng, 0.5 * (p + q)) for p, q in
                              [(A, B), (B, C), (C, D)])
    y = (0, 1, 0)
    joints = [world.add_joint(Hinge(None, crank, anchor=A, axis=y)),
              world.add_joint(Hinge(crank, coupler, anchor=B, axis=y)),
              world.add_joint(Hinge(coupler, rocker, anchor=C, axis=y)),
              world.add_joint(Hinge(None, rocker, anchor=D, axis=y))]
    return world, joints


class PointOnPlane(Joint):
    """Test-only engine joint: a point of body_b stays on a world plane (the engine's ``line``
    row with the world as side a), so the maximal formulation is the engine's own pipeline."""

    def __init__(self, body, point, normal):
        super().__init__(None, body, anchor=point)
        self._normal = unit(normal)

    def _instances(self, owner):
        return [("line", (owner, self._rows_a, self.body_b.row, self._la, self._lb, self._normal))]


def close(actual, expected, rel=1e-6):
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    scale = max(np.abs(expected).max(initial=0.0), 1e-12)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rel * scale)


def maximal_qdd(view, tau):
    """(a): the engine's seed equation at the current state with the joint torques applied as
    body loads, body accelerations mapped to qdd through the view's Jacobians."""
    world = view.world
    world._force[:] = 0.0
    world._torque[:] = 0.0
    apply_joint_torques(view, tau)
    acc_lin, acc_ang, lam = maximal_accelerations(world)
    qdd = view.qdd_from_body_accelerations(acc_lin, acc_ang)
    lin, ang = view.body_accelerations(qdd)          # the least squares fit is exact
    close(np.concatenate([lin, ang]), np.concatenate([acc_lin, acc_ang]), 1e-8)
    world._force[:] = 0.0
    world._torque[:] = 0.0
    return qdd, lam


# -- coordinates and kinematics ------------------------------------------------------------------
def _coordinates_after(view, q, qd, t, steps=20):
    """The coordinates t s after q when the velocity variables stay qd (RK4 on q_rate)."""
    y, h = q.copy(), t / steps
    for _ in range(steps):
        k1 = view.q_rate(y, qd)
        k2 = view.q_rate(y + h / 2 * k1, qd)
        k3 = view.q_rate(y + h / 2 * k2, qd)
        k4 = view.q_rate(y + h * k3, qd)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def test_arm_coordinates_read_and_write_match_the_joints():
    rng = np.random.default_rng(0)
    world, joints, _ = six_joint_arm(rng)
    view = ArticulatedView(world)
    assert view.n == 6 and view.joints == joints
    np.testing.assert_allclose(view.q, 0, atol=1e-12)     # zero at creation
    for _ in range(3):
        q, qd = rng.normal(size=6), rng.normal(size=6)
        view.q, view.qd = q, qd
        np.testing.assert_allclose(view.q, q, atol=1e-12)
        np.testing.assert_allclose(view.qd, qd, atol=1e-12)
        coords = [j.angle if isinstance(j, Hinge) else j.position for j in joints]
        np.testing.assert_allclose(coords, q, atol=1e-12)
        np.testing.assert_allclose([j.rate for j in joints], qd, atol=1e-12)
        assert world.constraint_error() < 1e-12
        # setting q keeps qd
        view.q = q + 0.1
        np.testing.assert_allclose(view.qd, qd, atol=1e-12)


def test_mixed_tree_coordinates_and_jacobians():
    rng = np.random.default_rng(1)
    world, joints = mixed_tree(rng)
    view = ArticulatedView(world)
    assert [tj.kind for tj in view.tree] == ["ball", "universal", "hinge", "cylindrical",
                                              "slider", "fixed"]
    assert [tj.forward for tj in view.tree] == [True, False, True, True, False, True]
    assert view.n == 3 + 2 + 1 + 2 + 1
    q, qd = rng.normal(size=view.n) * 0.7, rng.normal(size=view.n)
    view.set_state(q, qd)
    np.testing.assert_allclose(view.q, q, atol=1e-12)
    np.testing.assert_allclose(view.qd, qd, atol=1e-12)
    assert world.constraint_error() < 1e-12
    # engine's own joint coordinates where it has them
    np.testing.assert_allclose(joints[2].angle, q[view.coordinate_slice(joints[2])], atol=1e-12)
    np.testing.assert_allclose(joints[4].position, q[view.coordinate_slice(joints[4])], atol=1e-12)
    # ball: qd is the relative angular velocity in body_a's frame
    np.testing.assert_allclose(world.bodies[0].angular_velocity, qd[:3], atol=1e-12)
    # J qd is the bodies' velocity; Jdot qd against a central difference along qdd = 0
    J = {b: view.jacobian(b) for b in world.bodies}
    Jdqd = {b: view.jacobian_dot_qd(b) for b in world.bodies}
    for b in world.bodies:
        np.testing.assert_allclose(J[b] @ qd, np.r_[b.linear_velocity, b.angular_velocity],
                                   atol=1e-12)
    point = world.bodies[2].position + (0.05, -0.1, 0.2)
    Jp = view.point_jacobian(world.bodies[2], point)
    np.testing.assert_allclose(Jp @ qd, world.bodies[2].point_velocity(point), atol=1e-12)

    h = 1e-4
    u = []
    for t in (-h, h):
        view.set_state(_coordinates_after(view, q, qd, t), qd)
        u.append({b: np.r_[b.linear_velocity, b.angular_velocity] for b in world.bodies})
    for b in world.bodies:
        np.testing.assert_allclose((u[1][b] - u[0][b]) / (2 * h), Jdqd[b], atol=1e-6)


def test_joint_torques_as_body_loads_are_the_generalised_forces():
    rng = np.random.default_rng(2)
    world, _ = mixed_tree(rng)
    view = ArticulatedView(world)
    view.set_state(rng.normal(size=view.n), rng.normal(size=view.n))
    tau = rng.normal(size=view.n)
    apply_joint_torques(view, tau)
    np.testing.assert_allclose(view.applied_forces(), tau, atol=1e-12)


# -- unconstrained dynamics: four formulations ---------------------------------------------------
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_arm_four_formulations_agree(seed):
    rng = np.random.default_rng(seed)
    world, _, _ = six_joint_arm(rng)
    view = ArticulatedView(world)
    view.q, view.qd = rng.normal(size=6), 2 * rng.normal(size=6)
    tau = 3 * rng.normal(size=6)
    qdd_a, _ = maximal_qdd(view, tau)
    qdd_b = view.forward_dynamics(tau)
    qdd_c = view.forward_dynamics_gq(tau, trivial_gamma_q)
    M, bias = view.mass_matrix(), view.bias_forces()
    qdd_d, f = least_constraint_accelerations(M, tau - bias, np.zeros((0, 6)), np.zeros(0))
    assert f.shape == (0,)
    for qdd in (qdd_a, qdd_c, qdd_d):
        close(qdd, qdd_b)
    # M is the Jacobian sum and symmetric positive definite
    assert np.all(np.linalg.eigvalsh(M) > 0)


def test_mixed_tree_matches_the_engine():
    rng = np.random.default_rng(6)
    world, _ = mixed_tree(rng)
    view = ArticulatedView(world)
    for _ in range(2):
        view.set_state(rng.normal(size=view.n), 2 * rng.normal(size=view.n))
        tau = rng.normal(size=view.n)
        close(maximal_qdd(view, tau)[0], view.forward_dynamics(tau))


def test_inverse_then_forward_dynamics_round_trip():
    rng = np.random.default_rng(7)
    world, _ = mixed_tree(rng)
    view = ArticulatedView(world)
    view.set_state(rng.normal(size=view.n), rng.normal(size=view.n))
    qdd = rng.normal(size=view.n)
    close(view.forward_dynamics(view.inverse_dynamics(qdd)), qdd, 1e-10)
    # bias = inverse dynamics at rest acceleration; gravity part alone at rest
    close(view.inverse_dynamics(np.zeros(view.n)), view.bias_forces(), 1e-12)
    view.qd = np.zeros(view.n)
    close(view.bias_forces(), view.gravity_forces(), 1e-10)


def test_joint_space_simulation_follows_the_engine_rk4():
    """A short swing under gravity: the engine's RK4 on the seed equation (no Baumgarte) vs
    RK4 of FDgq with q = y."""
    rng = np.random.default_rng(8)
    world, _, _ = six_joint_arm(rng, integrator="rk4", dt=2e-3)
    view = ArticulatedView(world)
    view.q, view.qd = rng.normal(size=6) * 0.5, rng.normal(size=6)
    q0, qd0 = view.q, view.qd
    world.step(50)
    _, Q, QD = simulate_gq(view, trivial_gamma_q, np.zeros(6), 0.1, 2e-3, q0, qd0)
    np.testing.assert_allclose(view.q, Q[-1], atol=1e-7)
    np.testing.assert_allclose(view.qd, QD[-1], atol=1e-6)


# -- constrained dynamics ------------------------------------------------------------------------
def test_four_bar_formulations_agree():
    rng = np.random.default_rng(9)
    world, joints = four_bar(rng)
    view = ArticulatedView(world)
    assert view.joints == joints[:3] and [c.source for c in view.constraints] == [joints[3]]
    gamma = constraint_gamma([0])                       # y = crank angle, Newton for the rest
    for _ in range(2):
        q, qd, _, _ = gamma(view, view.q + rng.uniform(-0.5, 0.5) * np.array([1, 0, 0]),
                            rng.normal(size=3))
        view.set_state(q, qd)
        assert np.abs(view.constraint_values()).max() < 1e-12
        A, Adot_qd = view.constraint_rows()
        assert A.shape == (5, 3) and np.abs(A @ qd).max() < 1e-12
        tau = rng.normal(size=3)
        qdd_a, lam_world = maximal_qdd(view, tau)
        qdd_b, lam_b = view.constrained_forward_dynamics(tau)
        qdd_c = view.forward_dynamics_gq(tau, gamma)
        M, bias = view.mass_matrix(), view.bias_forces()
        qdd_d, f = least_constraint_accelerations(M, tau - bias, A, Adot_qd)
        for qdd in (qdd_a, qdd_c, qdd_d):
            close(qdd, qdd_b)
        # lambda: the loop hinge's in-plane point rows (x, z) are statically determinate;
        # its out-of-plane rows are redundant (zero rows of A, minimum-norm lambda = 0)
        lam_a = lam_world[joint_rows(world, joints[3])]
        lam_c = np.linalg.lstsq(A.T, M @ qdd_c + bias - tau, rcond=1e-10)[0]
        for lam in (lam_c, f):
            close(lam, lam_b)
        close(lam_a[[0, 2]], lam_b[[0, 2]])
        close(A.T @ lam_b, M @ qdd_b + bias - tau, 1e-10)
        P = view.projection()
        assert np.linalg.matrix_rank(P, tol=1e-8) == view.n - np.linalg.matrix_rank(A, tol=1e-8) == 1


def test_slider_crank_on_a_static_base():
    """Crank, rod and block on hinges from a static base; a world Slider under the block
    closes the loop (its rows are the engine's perpendicular and line primitives)."""
    rng = np.random.default_rng(17)
    world = World(baumgarte=(0, 0), cfm=1e-10)
    base = world.add_body(Box((0.1, 0.1, 0.1)), static=True, position=(0, 0, 0))
    crank = random_box(world, rng, (0.0, 0, 0.15))
    rod = random_box(world, rng, (0.4, 0, 0.15))
    block = random_box(world, rng, (0.8, 0, 0.0))
    y = (0, 1, 0)
    world.add_joint(Hinge(base, crank, anchor=(0, 0, 0), axis=y))
    world.add_joint(Hinge(crank, rod, anchor=(0, 0, 0.3), axis=y))
    world.add_joint(Hinge(rod, block, anchor=(0.8, 0, 0), axis=y))
    guide = world.add_joint(Slider(None, block, anchor=(0.8, 0, 0), axis=(1, 0, 0)))
    view = ArticulatedView(world)
    assert view.n == 3 and view.bodies == [crank, rod, block]
    assert [c.source for c in view.constraints] == [guide]
    gamma = constraint_gamma([0])
    q, qd, _, _ = gamma(view, np.array([0.7, 0, 0]), np.array([2.0, 0, 0]))
    view.set_state(q, qd)
    assert np.abs(view.constraint_values()).max() < 1e-12 and world.constraint_error() < 1e-12
    assert abs(guide.rate - view.point_jacobian(block, guide.anchor)[0] @ qd) < 1e-12
    A, _ = view.constraint_rows()
    assert np.linalg.matrix_rank(A, tol=1e-8) == 2
    tau = np.array([1.5, -0.3, 0.2])
    qdd_a, _ = maximal_qdd(view, tau)
    qdd_b, lam = view.constrained_forward_dynamics(tau)
    qdd_d, f = view.least_constraint_accelerations(tau)
    for qdd in (qdd_a, view.forward_dynamics_gq(tau, gamma), qdd_d):
        close(qdd, qdd_b)
    close(f, lam)


def _arm_on_plane(seed):
    rng = np.random.default_rng(seed)
    world, _, tip = six_joint_arm(rng, cfm=1e-12)
    tip_body = world.bodies[-1]
    normal = unit(rng.normal(size=3))
    plane = world.add_joint(PointOnPlane(tip_body, tip, normal))
    view = ArticulatedView(world)                       # the plane joint is a loop constraint
    declared = ArticulatedView(world, loop_joints=[])
    declared.add_point_on_plane(tip_body, tip, tip, normal)
    A, _ = view.constraint_rows()
    dependent = int(np.argmax(np.abs(A[0])))           # the joint that moves the tip most
    gamma = constraint_gamma([i for i in range(6) if i != dependent])
    q, qd, _, _ = gamma(view, rng.normal(size=6) * 0.15, rng.normal(size=6))
    view.set_state(q, qd)
    return rng, world, view, declared, plane, gamma


@pytest.mark.parametrize("seed", [10, 11])
def test_arm_tip_on_plane_formulations_agree(seed):
    rng, world, view, declared, plane, gamma = _arm_on_plane(seed)
    assert abs(view.constraint_values()[0]) < 1e-12
    tau = 3 * rng.normal(size=6)
    qdd_a, lam_world = maximal_qdd(view, tau)
    qdd_b, lam_b = view.constrained_forward_dynamics(tau)
    qdd_b2, lam_b2 = declared.constrained_forward_dynamics(tau)
    qdd_c = view.forward_dynamics_gq(tau, gamma)
    A, Adot_qd = view.constraint_rows()
    M, bias = view.mass_matrix(), view.bias_forces()
    qdd_d, f = least_constraint_accelerations(M, tau - bias, A, Adot_qd)
    lam_c = np.linalg.lstsq(A.T, M @ qdd_c + bias - tau, rcond=None)[0]
    for qdd in (qdd_a, qdd_b2, qdd_c, qdd_d):
        close(qdd, qdd_b)
    for lam in (lam_world[joint_rows(world, plane)], lam_b2, lam_c, f):
        close(lam, lam_b)
    assert np.linalg.matrix_rank(view.projection(), tol=1e-8) == 5


def test_point_contact_matches_a_world_ball_joint():
    rng = np.random.default_rng(12)
    world, _, tip = six_joint_arm(rng, cfm=1e-12)
    tip_body = world.bodies[-1]
    view = ArticulatedView(world)
    view.q = rng.normal(size=6) * 0.4
    tip = tip_body.position + 0.1 * tip_body.rotation[:, 2]
    contact = world.add_joint(Ball(None, tip_body, anchor=tip))
    view = ArticulatedView(world, loop_joints=[])
    view.add_point_contact(tip_body, tip)
    A, _ = view.constraint_rows()
    N = np.linalg.svd(A)[2][3:]                        # velocities that keep the point fixed
    view.qd = N.T @ rng.normal(size=3)
    tau = rng.normal(size=6)
    qdd_a, lam_world = maximal_qdd(view, tau)
    qdd_b, lam_b = view.constrained_forward_dynamics(tau)
    close(qdd_a, qdd_b)
    close(lam_world[joint_rows(world, contact)], lam_b)    # the force on the tip body
    close(ArticulatedView(world).constrained_forward_dynamics(tau)[1], lam_b)  # as a loop joint
    assert np.linalg.matrix_rank(view.projection(), tol=1e-8) == 3


def test_constrained_inverse_dynamics_plus_any_AT_lambda_gives_the_same_motion():
    rng, world, view, _, _, _ = _arm_on_plane(13)
    qdd, _ = view.constrained_forward_dynamics(rng.normal(size=6))
    A, _ = view.constraint_rows()
    tau = view.constrained_inverse_dynamics(qdd)
    np.testing.assert_allclose(A @ np.linalg.solve(view.mass_matrix(), tau), 0, atol=1e-10)
    for mu in (0.0, 5.0, -12.0):
        close(view.constrained_forward_dynamics(tau + A.T @ [mu])[0], qdd)
    # with lambda given: the same motion, and the constraint pushes back with exactly lambda
    qdd2, lam2 = view.constrained_forward_dynamics(view.constrained_inverse_dynamics(qdd, lam=[7.5]))
    close(qdd2, qdd)
    close(lam2, [7.5])
    with pytest.raises(ValueError, match="qdd"):
        view.constrained_inverse_dynamics(qdd + 1.0)

    world4, joints4 = four_bar(np.random.default_rng(14))
    bar = ArticulatedView(world4)
    qdd4, _ = bar.constrained_forward_dynamics(np.array([1.0, -0.5, 0.2]))
    A4, _ = bar.constraint_rows()
    tau4 = bar.constrained_inverse_dynamics(qdd4)
    close(bar.constrained_forward_dynamics(tau4 + A4.T @ rng.normal(size=5))[0], qdd4)


def test_whiteboard_torques_press_and_follow():
    rng, world, _, view, _, _ = _arm_on_plane(15)       # the view with add_point_on_plane
    c = view.constraints[0]
    # a path acceleration inside the plane
    normal = c.tables[0].args[2][0]
    pdd = rng.normal(size=3)
    pdd -= (pdd @ normal) * normal
    A, Adot_qd = view.constraint_rows()
    tau = whiteboard_torques(view, lambda t: (None, None, pdd), 4.0, 0.0)
    qdd, lam = view.constrained_forward_dynamics(tau)
    close(lam, [4.0])
    body = world.bodies[-1]
    tip = body.position + body.rotation @ c.tables[0].args[1][0]
    acc = view.point_jacobian(body, tip) @ qdd + view.jacobian_dot_qd(body, tip)[:3]
    close(acc - (acc @ normal) * normal, pdd, 1e-8)


# -- Featherstone's gamma_q example: planar2g ----------------------------------------------------
def test_planar2g_work_equals_kinetic_energy_and_coupling_holds():
    world = World()                                    # hinge axes vertical: gravity does no work
    link1 = world.add_body(Box((0.5, 0.05, 0.05)), mass=1.0, position=(0.5, 0, 0))
    link2 = world.add_body(Box((0.5, 0.05, 0.05)), mass=1.0, position=(1.5, 0, 0))
    world.add_joint(Hinge(None, link1, anchor=(0, 0, 0), axis=(0, 0, 1)))
    world.add_joint(Hinge(link1, link2, anchor=(1, 0, 0), axis=(0, 0, 1)))
    view = ArticulatedView(world)

    def gamma_q(view, qo, qdo):                        # Featherstone's example, line for line
        y = qo[0]
        q = np.array([y, 2 * np.sin(y)])
        G = np.array([[1.0], [2 * np.cos(y)]])
        yd = qdo[0]
        qd = np.array([yd, 2 * np.cos(y) * yd])
        g = np.array([0.0, -2 * np.sin(y) * yd**2])
        Tstab = 0.1
        gstab = 2 / Tstab * (qd - qdo) + 1 / Tstab**2 * (q - qo)
        return q, qd, G, g + gstab

    times, Q, QD = simulate_gq(view, gamma_q, np.array([1.0, 0.0]), 2.0, 0.02)
    np.testing.assert_allclose(view.q, 0.0, atol=1e-15)   # the world was left as it was
    work = Q[-1, 0]                                    # tau = [1, 0] constant from q = 0
    with view.posed(Q[-1], QD[-1]):
        energy = view.kinetic_energy()
    assert work > 0.2
    assert abs(energy - work) < 0.01 * work
    assert np.abs(Q[:, 1] - 2 * np.sin(Q[:, 0])).max() < 1e-4


def locked_tree(rng):
    """A body yaw-locked to the world, a hinge from it, a body locked whole to it (body_a the
    child) and one locked about an axis to the hinged body: translations as coordinates."""
    world = World(baumgarte=(0, 0), cfm=0.0)
    b = [random_box(world, rng, p) for p in [(0, 0, 0.5), (0.3, 0.1, 0.2), (-0.2, 0.4, 0.9),
                                             (0.5, 0.5, 0.5)]]
    joints = [RotationLock(None, b[0], axis=(0.2, 0.1, 1)),
              Hinge(b[0], b[1], anchor=(0.15, 0.05, 0.35), axis=(0.3, 1, 0.2)),
              RotationLock(b[2], b[0]),
              RotationLock(b[1], b[3], axis=(1, 0, 0.3))]
    for j in joints:
        world.add_joint(j)
    return world, joints


def test_rotation_locks_as_tree_joints_match_the_engine():
    """A RotationLock leaves translations (and the turn about its axis): as a tree joint its
    coordinates are those, (x, y, z) of body_b's centre in body_a's frame after the angle.
    They read back as set with the locks exact, J qd is every body's velocity, Jdot qd the
    central difference along the motion, and forward dynamics the engine's."""
    rng = np.random.default_rng(21)
    world, joints = locked_tree(rng)
    view = ArticulatedView(world)
    assert [tj.kind for tj in view.tree] == ["axis_lock", "hinge", "lock", "axis_lock"]
    assert [tj.forward for tj in view.tree] == [True, True, False, True]
    assert view.n == 4 + 1 + 3 + 4
    np.testing.assert_allclose(view.q, 0, atol=1e-12)
    character = world.bodies[0]
    view.q = view.q + np.r_[0.4, 1.0, -2.0, 0.5, np.zeros(8)]
    np.testing.assert_allclose(character.position, (1.0, -2.0, 1.0), atol=1e-12)
    assert world.constraint_error() < 1e-12
    q, qd = rng.normal(size=view.n) * 0.7, rng.normal(size=view.n)
    view.set_state(q, qd)
    np.testing.assert_allclose(view.q, q, atol=1e-12)
    np.testing.assert_allclose(view.qd, qd, atol=1e-12)
    assert world.constraint_error() < 1e-12
    for b in world.bodies:
        np.testing.assert_allclose(view.jacobian(b) @ qd,
                                   np.r_[b.linear_velocity, b.angular_velocity], atol=1e-12)
    Jdqd = {b: view.jacobian_dot_qd(b) for b in world.bodies}
    h, u = 1e-5, []
    for t in (-h, h):
        view.set_state(q + t * qd, qd)             # (q_rate is qd for these joints)
        u.append({b: np.r_[b.linear_velocity, b.angular_velocity] for b in world.bodies})
    for b in world.bodies:
        np.testing.assert_allclose((u[1][b] - u[0][b]) / (2 * h), Jdqd[b], atol=1e-6)
    for _ in range(2):
        view.set_state(rng.normal(size=view.n) * 0.7, 2 * rng.normal(size=view.n))
        tau = rng.normal(size=view.n)
        close(maximal_qdd(view, tau)[0], view.forward_dynamics(tau))


# -- bad input -----------------------------------------------------------------------------------
def test_bad_input_is_a_clear_value_error():
    rng = np.random.default_rng(16)
    world, joints, _ = six_joint_arm(rng)
    view = ArticulatedView(world)
    with pytest.raises(ValueError, match="q"):
        view.q = np.zeros(5)
    with pytest.raises(ValueError, match="tau"):
        view.forward_dynamics(np.full(6, np.nan))
    other = World()
    stray = other.add_body(Box((0.1, 0.1, 0.1)), mass=1.0)
    with pytest.raises(ValueError, match="body"):
        view.jacobian(stray)
    with pytest.raises(ValueError, match="normal"):
        view.add_point_on_plane(world.bodies[-1], (0, 0, 0), (0, 0, 0), (0, 0, 0))
    with pytest.raises(ValueError, match="joints"):
        ArticulatedView(world, joints=joints[1:])          # does not reach the world
    loose = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(3, 0, 0))
    with pytest.raises(ValueError, match="changed"):
        view.q
    world.add_joint(Ball(world.bodies[2], loose, anchor=(3, 0, 0.2)))
    world.add_joint(Ball(loose, world.bodies[3], anchor=(3, 0, 0.1)))
    assert len(ArticulatedView(world).bodies) == 7        # the ball reaches it: in the tree
    free = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(5, 0, 0))
    from physics import Distance
    world.add_joint(Distance(world.bodies[1], free, anchor_a=world.bodies[1].position,
                             anchor_b=(5, 0, 0)))
    with pytest.raises(ValueError, match="outside"):
        ArticulatedView(world)


def test_hinge_coordinates_are_continuous_through_several_turns():
    """q of a hinge counts whole turns, as Hinge.angle does (not wrapped into (-pi, pi])."""
    world = World(gravity=(0, 0, 0))
    wheel = world.add_body(Box((0.2, 0.05, 0.02)), mass=1.0)
    arm = world.add_body(Box((0.05, 0.05, 0.2)), mass=1.0, position=(0.2, 0, 0.2))
    spin = world.add_joint(Hinge(None, wheel, anchor=(0, 0, 0), axis=(0, 0, 1)))
    # body_a is the child here: the tree runs from the wheel to the arm through body_b
    flap = world.add_joint(Hinge(arm, wheel, anchor=(0.2, 0, 0), axis=(1, 0, 0)))
    view = ArticulatedView(world)
    view.qd = [12.0, -7.0]
    angles = []
    for _ in range(16):                  # 4 s: over 3 turns of the wheel, 4 of the flap
        world.step(60)
        angles.append((view.q, [spin.angle, flap.angle]))
    for q, joint_angles in angles:
        np.testing.assert_allclose(q, joint_angles, atol=1e-9)
    assert angles[-1][0][0] > 3 * 2 * np.pi and angles[-1][0][1] < -4 * 2 * np.pi
    for i in range(2):                   # no jump by 2 pi between samples (both run one way)
        assert np.all(np.sign(np.diff([q[i] for q, _ in angles])) == (1, -1)[i])

    # writing multi-turn coordinates: read back as written, by the view and by the joints
    qd = view.qd
    view.q = [20.0, -15.0]
    np.testing.assert_allclose(view.q, [20.0, -15.0], atol=1e-9)
    np.testing.assert_allclose([spin.angle, flap.angle], [20.0, -15.0], atol=1e-9)
    np.testing.assert_allclose(view.qd, qd, atol=1e-9)
    with view.posed([-9.0, 30.0]):
        np.testing.assert_allclose(view.q, [-9.0, 30.0], atol=1e-9)
    np.testing.assert_allclose(view.q, [20.0, -15.0], atol=1e-9)   # restored with its turns
    world.step(1)
    assert view.q[0] == pytest.approx(20.0 + qd[0] * world.dt, abs=0.05)


def test_cylindrical_coordinates_are_continuous_and_match_the_joint():
    """A cylindrical joint's q = (angle, position) reads as Cylindrical.angle and .position:
    the angle through whole turns, both rates as the joint's."""
    world = World(gravity=(0, 0, 0))
    rod = world.add_body(Box((0.05, 0.3, 0.1)), mass=1.0)
    joint = world.add_joint(Cylindrical(None, rod, anchor=(0, 0, 0), axis=(1, 0, 0)))
    view = ArticulatedView(world)
    view.qd = [9.0, 0.05]                 # spin about and drift along the x axis
    samples = []
    for _ in range(12):                   # 3 s: over 4 turns
        world.step(60)
        samples.append((view.q, view.qd, [joint.angle, joint.position],
                        [joint.angle_rate, joint.position_rate]))
    for q, qd, coords, rates in samples:
        np.testing.assert_allclose(q, coords, atol=1e-9)
        np.testing.assert_allclose(qd, rates, atol=1e-9)
    assert samples[-1][0][0] == pytest.approx(9.0 * world.time, rel=1e-6)     # 27 rad, not wrapped
    assert samples[-1][0][1] == pytest.approx(0.05 * world.time, rel=1e-6)
    view.q = [-20.0, 0.1]
    assert joint.angle == pytest.approx(-20.0, abs=1e-9) and joint.position == pytest.approx(0.1, abs=1e-9)


def test_a_view_of_something_not_a_world_is_refused_by_name():
    """ArticulatedView('x') raised AttributeError: 'str' object has no attribute 'joints'."""
    with pytest.raises(ValueError, match="^world must be the World whose joints to view, "
                                         "got 'x'"):
        ArticulatedView("x")


def test_joint_torques_load_only_the_dynamic_bodies_of_a_joint_pointing_to_its_static_root():
    """A hinge whose body_b is the static base: the arm takes the torque, the base none (it
    took -tau, which did nothing and which apply_torque now refuses on a static body)."""
    world = World()
    base = world.add_body(Box((0.1, 0.1, 0.1)), static=True)
    arm = world.add_body(Box((0.1, 0.1, 0.3)), mass=1.0, position=(0, 0, -0.4))
    world.add_joint(Hinge(arm, base, anchor=(0, 0, -0.1), axis=(0, 1, 0)))
    view = ArticulatedView(world)
    apply_joint_torques(view, [1.0])
    assert not world._force[base.row].any() and not world._torque[base.row].any()
    np.testing.assert_allclose(world._torque[arm.row], [0, -1.0, 0])


def test_a_view_refuses_a_world_whose_bodies_changed_and_posing_through_it_wakes_the_tree():
    """A view outlived remove_body then add_body (the same count) and moved the new body;
    posing an asleep pendulum through a view left it asleep, frozen in mid-air."""
    from physics import Sphere, World
    world = World(sleeping=True)
    arm = world.add_body(Box((0.4, 0.05, 0.05)), mass=1.0, position=(0, 0, 0.6))
    world.add_joint(Hinge(None, arm, anchor=(0, 0, 1.0), axis=(1, 0, 0)))
    marker = world.add_body(Sphere(0.1), static=True, position=(5, 5, 0))
    view = ArticulatedView(world)
    world.step(600)
    assert arm.asleep
    view.q = [1.0]
    assert not arm.asleep
    world.step(24)
    assert view.q[0] < 1.0 - 1e-3          # it falls back
    world.remove_body(marker)
    world.add_body(Sphere(0.1), mass=1.0, position=(9, 9, 9))
    with pytest.raises(ValueError, match="make a new ArticulatedView"):
        view.q = [0.5]


# -- floating bases ------------------------------------------------------------------------------
def floating_arm(rng, **world_args):
    """A free base box with a hinged arm (then a ball-jointed link) and a universal-jointed
    tail: no joint to the world (a mobile manipulator in the air)."""
    world = World(**{"baumgarte": (0, 0), "cfm": 0.0, **world_args})
    b = [random_box(world, rng, p) for p in [(0, 0, 1.0), (0.3, 0, 1.1), (0.6, 0.1, 1.2),
                                             (-0.3, 0.1, 0.9)]]
    joints = [Hinge(b[0], b[1], anchor=(0.15, 0, 1.05), axis=(0, 1, 0.2)),
              Ball(b[2], b[1], anchor=(0.45, 0.05, 1.15)),
              Universal(b[0], b[3], anchor=(-0.15, 0.05, 0.95), axis_a=(1, 0, 0),
                        axis_b=(0, 0.6, 0.8))]
    for j in joints:
        world.add_joint(j)
    return world, b, joints


def test_a_robot_on_a_free_base_is_viewed_on_a_floating_base_by_default():
    """A base box on the ground with a two-hinge arm and no joint to the world: the view was
    empty (n = 0, no warning) and passing its joints was refused; it is now the base's 6
    coordinates (centre of mass, rotation vector, world frame) then the two hinge angles."""
    from physics import Plane
    from physics.jointspace import FloatingBase
    world = World()
    ground = world.add_body(Plane((0, 0, 1), 0.0))
    base = world.add_body(Box((0.3, 0.3, 0.1)), mass=10.0, position=(0, 0, 0.1))
    l1 = world.add_body(Box((0.2, 0.02, 0.02)), mass=2.0, position=(0.2, 0, 0.5))
    l2 = world.add_body(Box((0.2, 0.02, 0.02)), mass=1.0, position=(0.6, 0, 0.5))
    shoulder = world.add_joint(Hinge(base, l1, anchor=(0, 0, 0.5), axis=(0, 1, 0)))
    elbow = world.add_joint(Hinge(l1, l2, anchor=(0.4, 0, 0.5), axis=(0, 1, 0)))
    for view in (ArticulatedView(world), ArticulatedView(world, joints=[shoulder, elbow]),
                 ArticulatedView(world, base=base)):
        assert view.n == 8 and view.bases == [base] and view.bodies == [base, l1, l2]
        assert isinstance(view.joints[0], FloatingBase) and view.joints[1:] == [shoulder, elbow]
        assert view.coordinate_slice(base) == slice(0, 6) == view.coordinate_slice(view.joints[0])
        np.testing.assert_allclose(view.q, [0, 0, 0.1, 0, 0, 0, 0, 0], atol=1e-15)
        # (gravity_forces is minus gravity's generalised force) the whole robot's weight,
        # 13 kg, on the base's height; the arm's moment about the base's y axis, gravity
        # pulling the arm at x > 0 down turns it about +y by (2 kg 0.2 m + 1 kg 0.6 m) g
        np.testing.assert_allclose(view.gravity_forces()[[2, 4]], [13 * 9.81, -1.0 * 9.81],
                                   rtol=1e-14)
    assert ArticulatedView(world, base=()).n == 0          # no floating base asked for
    assert "1 floating base" in repr(view)
    world.step(120)                                        # it lands on the ground and settles
    np.testing.assert_allclose(view.q[:3], base.position, atol=1e-15)
    np.testing.assert_allclose(view.q[6:], [shoulder.angle, elbow.angle], atol=1e-12)
    assert ground.static


def test_floating_base_coordinates_and_jacobians():
    """q = (centre of mass, rotation vector since the view was made) of the base, qd = its
    (v, w), world frame: set and read back, J qd is every body's velocity, Jdot qd the
    central difference along the motion (dphi/dt = J_l(phi)^-1 w)."""
    rng = np.random.default_rng(30)
    world, b, joints = floating_arm(rng)
    R0 = b[0].rotation.copy()
    view = ArticulatedView(world)
    assert [tj.kind for tj in view.tree] == ["free", "hinge", "ball", "universal"]
    assert [tj.forward for tj in view.tree] == [True, True, False, True] and view.n == 12
    np.testing.assert_allclose(view.q, np.r_[b[0].position, np.zeros(9)], atol=1e-15)
    q, qd = rng.normal(size=view.n), rng.normal(size=view.n)
    view.set_state(q, qd)
    np.testing.assert_allclose(view.q, q, atol=1e-12)
    np.testing.assert_allclose(view.qd, qd, atol=1e-12)
    assert world.constraint_error() < 1e-12
    np.testing.assert_allclose(b[0].position, q[:3], atol=1e-15)
    from scipy.spatial.transform import Rotation
    np.testing.assert_allclose(b[0].rotation, Rotation.from_rotvec(q[3:6]).as_matrix() @ R0,
                               atol=1e-12)
    np.testing.assert_allclose(np.r_[b[0].linear_velocity, b[0].angular_velocity], qd[:6],
                               atol=1e-15)
    np.testing.assert_allclose(joints[0].angle, q[6], atol=1e-12)
    Jdqd = {body: view.jacobian_dot_qd(body) for body in b}
    for body in b:
        np.testing.assert_allclose(view.jacobian(body) @ qd,
                                   np.r_[body.linear_velocity, body.angular_velocity], atol=1e-12)

    h, u = 1e-4, []
    for t in (-h, h):
        view.set_state(_coordinates_after(view, q, qd, t), qd)
        u.append({body: np.r_[body.linear_velocity, body.angular_velocity] for body in b})
    for body in b:
        np.testing.assert_allclose((u[1][body] - u[0][body]) / (2 * h), Jdqd[body], atol=1e-6)


def test_floating_base_dynamics_match_the_engine():
    """Forward dynamics of the view (a force and torque on the base, joint torques) against
    the engine's accelerations; inverse then forward; with no load in zero gravity the
    momentum rate is zero."""
    rng = np.random.default_rng(31)
    world, b, _ = floating_arm(rng)
    view = ArticulatedView(world)
    for _ in range(3):
        view.set_state(rng.normal(size=view.n), 2 * rng.normal(size=view.n))
        tau = rng.normal(size=view.n)
        apply_joint_torques(view, tau)
        np.testing.assert_allclose(view.applied_forces(), tau, atol=1e-12)
        world.clear_forces()
        close(maximal_qdd(view, tau)[0], view.forward_dynamics(tau))
        qdd = rng.normal(size=view.n)
        close(view.forward_dynamics(view.inverse_dynamics(qdd)), qdd, 1e-10)
        assert np.all(np.linalg.eigvalsh(view.mass_matrix()) > 0)
    # the base's coordinates' generalised forces are the external wrench on the whole tree
    # (force, and moment about the base's centre): gravity's is (0, 0, m g) and r x m g
    m = world.masses
    x = world.positions
    np.testing.assert_allclose(view.gravity_forces()[:3], [0, 0, 9.81 * m.sum()], rtol=1e-14)
    np.testing.assert_allclose(view.gravity_forces()[3:6],
                               -np.cross(x - x[0], m[:, None] * world.gravity).sum(0), atol=1e-13)
    world.gravity = (0, 0, 0)
    lin, ang = view.body_accelerations(view.forward_dynamics(np.zeros(view.n)))
    np.testing.assert_allclose((m[:, None] * lin).sum(0), 0, atol=1e-12)


def _momentum(world):
    """(linear, angular about the origin) momentum of the world's bodies (kg m/s, kg m^2/s)."""
    m, x, v = world.masses, world.positions, world.linear_velocities
    L = np.cross(x, m[:, None] * v).sum(0)
    for body in world.bodies:
        L += body.rotation @ body.inertia @ body.rotation.T @ body.angular_velocity
    return (m[:, None] * v).sum(0), L


@pytest.mark.parametrize("dt", [2e-3, 1e-3])
def test_a_free_two_link_arm_tumbles_alike_in_the_engine_and_the_view(dt):
    """Zero gravity, no joint to the world, spun up through the view: 0.6 s of the engine's
    RK4 on the seed equation and of RK4 on the view's forward dynamics end in the same pose
    (fourth order: 1.4e-10 m at dt 2e-3, 8.7e-12 at 1e-3), both keep the momentum, and the
    centre of mass moves in a straight line at P / m."""
    world = World(gravity=(0, 0, 0), integrator="rk4", baumgarte=(0, 0), cfm=0.0, dt=dt)
    l1 = world.add_body(Box((0.3, 0.05, 0.05)), mass=2.0, position=(0, 0, 1))
    l2 = world.add_body(Box((0.2, 0.04, 0.04)), mass=1.0, position=(0.5, 0, 1))
    world.add_joint(Hinge(l1, l2, anchor=(0.3, 0, 1), axis=(0, 0.6, 0.8)))
    view = ArticulatedView(world)
    assert view.bases == [l1] and view.n == 7
    view.qd = [0.3, -0.2, 0.1, 1.5, -2.0, 0.7, 6.0]
    P0, L0 = _momentum(world)
    np.testing.assert_allclose(P0, [0.9, 0.71, 0.58], atol=1e-15)
    q0, qd0 = view.q, view.qd
    steps = round(0.6 / dt)
    world.step(steps)
    P1, L1 = _momentum(world)
    engine_pose = world.positions.copy(), world.orientations.copy()
    com = (world.masses[:, None] * world.positions).sum(0) / 3.0
    np.testing.assert_allclose(com, np.r_[0.5 / 3, 0, 1] + P0 / 3.0 * steps * dt, atol=1e-14)
    times, Q, QD = simulate_gq(view, trivial_gamma_q, np.zeros(7), steps * dt, dt, q0, qd0)
    assert np.linalg.norm(Q[-1, 3:6]) > 1.7                # it turned 1.73 rad
    tol = (dt / 2e-3) ** 4
    np.testing.assert_allclose(P1, P0, atol=1e-14)
    np.testing.assert_allclose(L1, L0, atol=6e-11 * tol)
    for i in range(0, len(times), steps // 10):
        with view.posed(Q[i], QD[i]):
            P, L = _momentum(world)
        np.testing.assert_allclose(P, P0, atol=6e-10 * tol)
        np.testing.assert_allclose(L, L0, atol=6e-10 * tol)
    with view.posed(Q[-1], QD[-1]):
        np.testing.assert_allclose(world.positions, engine_pose[0], atol=4e-10 * tol)
        np.testing.assert_allclose(world.orientations, engine_pose[1], atol=4e-10 * tol)


def quadruped(world, legs_at=((1, 1), (1, -1), (-1, 1), (-1, -1))):
    """A 8 kg box base on legs of a 1 kg thigh (ball hip) and a 0.5 kg shin (knee hinge),
    each foot on the ground (z = 0), standing as built."""
    base = world.add_body(Box((0.3, 0.15, 0.05)), mass=8.0, position=(0.02, -0.01, 0.5))
    legs, feet = [], []
    for sx, sy in legs_at:
        hip = np.array([0.25 * sx, 0.12 * sy, 0.48])
        knee = hip + (0.05 * sx, 0.03 * sy, -0.22)
        foot = np.array([hip[0] - 0.02 * sx, hip[1] + 0.04 * sy, 0.0])
        thigh = world.add_body(Box((0.03, 0.03, 0.11)), mass=1.0, position=0.5 * (hip + knee))
        shin = world.add_body(Box((0.02, 0.02, 0.12)), mass=0.5, position=0.5 * (knee + foot))
        legs += [world.add_joint(Ball(base, thigh, anchor=hip)),
                 world.add_joint(Hinge(thigh, shin, anchor=knee, axis=(-sy, sx, 0)))]
        feet.append((shin, foot))
    return base, legs, feet


def _engine_accelerations_and_foot_forces(view, tau, holds):
    world = view.world
    world.clear_forces()
    apply_joint_torques(view, tau)
    acc_lin, acc_ang, lam = maximal_accelerations(world)
    world.clear_forces()
    return acc_lin, acc_ang, np.concatenate([lam[joint_rows(world, h)] for h in holds])


def test_inverse_dynamics_of_a_legged_base_standing_on_point_contacts():
    """A quadruped on four point feet: the joint torques of the view's inverse dynamics leave
    the floating base's coordinates without force (nothing drives it), stand it still in the
    engine (its feet held by world ball joints), and the feet carry its 14 kg as the engine
    says; moving, the feet's forces are m (a_com - g) and the engine's."""
    world = World(baumgarte=(0, 0), cfm=0.0)
    base, legs, feet = quadruped(world)
    view = ArticulatedView(world)
    assert view.bases == [base] and view.n == 6 + 4 * 4
    for shin, foot in feet:
        view.add_point_contact(shin, foot)
    holds = [world.add_joint(Ball(None, shin, anchor=foot)) for shin, foot in feet]
    looped = ArticulatedView(world, base=base)          # the holds as loop joints
    assert looped.n == view.n and [c.source for c in looped.constraints] == holds
    tau = view.constrained_inverse_dynamics(np.zeros(view.n))
    np.testing.assert_allclose(tau[:6], 0, atol=1e-13)
    assert np.abs(tau[6:]).max() > 1.0                  # the legs do work: up to 1.3 N m
    qdd, lam = view.constrained_forward_dynamics(tau)
    np.testing.assert_allclose(qdd, 0, atol=1e-11)
    close(looped.constrained_forward_dynamics(tau)[1], lam, 1e-12)
    np.testing.assert_allclose(lam.reshape(4, 3).sum(0), [0, 0, 14 * 9.81], atol=1e-12)
    acc_lin, acc_ang, lam_engine = _engine_accelerations_and_foot_forces(view, tau, holds)
    np.testing.assert_allclose(acc_lin, 0, atol=1e-12)
    np.testing.assert_allclose(acc_ang, 0, atol=1e-11)
    close(lam_engine, lam, 1e-12)
    # moving on its fixed feet: qd and qdd that keep them there
    rng = np.random.default_rng(32)
    A, _ = view.constraint_rows()
    N = np.linalg.svd(A)[2][12:]
    view.qd = N.T @ rng.normal(size=view.n - 12)
    A, Adot_qd = view.constraint_rows()
    qdd = N.T @ rng.normal(size=view.n - 12) - np.linalg.pinv(A) @ Adot_qd
    tau = view.constrained_inverse_dynamics(qdd)
    np.testing.assert_allclose(tau[:6], 0, atol=1e-12)
    qdd_b, lam = view.constrained_forward_dynamics(tau)
    close(qdd_b, qdd, 1e-11)
    acc_lin, acc_ang, lam_engine = _engine_accelerations_and_foot_forces(view, tau, holds)
    close(view.qdd_from_body_accelerations(acc_lin, acc_ang), qdd, 1e-11)
    close(lam_engine, lam, 1e-11)
    lin, _ = view.body_accelerations(qdd)
    close(lam.reshape(4, 3).sum(0), (world.masses[:, None] * (lin - world.gravity)).sum(0), 1e-12)


def test_a_floating_base_its_feet_cannot_carry_is_a_clear_value_error():
    """Two front feet cannot hold the base still (its centre of mass is behind the line
    between them): no joint torques do it, and inverse dynamics says so."""
    world = World(baumgarte=(0, 0), cfm=0.0)
    base, _, feet = quadruped(world, legs_at=((1, 1), (1, -1)))
    view = ArticulatedView(world)
    for shin, foot in feet:
        view.add_point_contact(shin, foot)
    with pytest.raises(ValueError, match="floating base"):
        view.constrained_inverse_dynamics(np.zeros(view.n))
    # with no constraint the base needs the whole weight from outside
    free = ArticulatedView(world)
    with pytest.raises(ValueError, match="floating base"):
        free.constrained_inverse_dynamics(np.zeros(free.n))
    np.testing.assert_allclose(free.inverse_dynamics(np.zeros(free.n))[2], 11 * 9.81, rtol=1e-14)


def test_floating_base_bad_input_and_bodies_left_out_are_clear_value_errors():
    """A static or foreign base, and jointed bodies tied to the world by a distance joint
    alone (the default view would leave them out without a word), name what to pass."""
    from physics import Distance
    rng = np.random.default_rng(33)
    world, b, _ = floating_arm(rng)
    wall = world.add_body(Box((0.1, 0.1, 0.1)), static=True, position=(3, 0, 0))
    with pytest.raises(ValueError, match="base: .* is static"):
        ArticulatedView(world, base=wall)
    with pytest.raises(ValueError, match="base: .* not a body of this world"):
        ArticulatedView(world, base=World().add_body(Box((0.1, 0.1, 0.1)), mass=1.0))
    with pytest.raises(ValueError, match="base must be"):
        ArticulatedView(world, base=3)
    rope = world.add_joint(Distance(None, b[2], anchor_a=(0.6, 0.1, 2.0),
                                    anchor_b=b[2].position))
    with pytest.raises(ValueError, match="tied to the world only by .*Distance.*base="):
        ArticulatedView(world)
    view = ArticulatedView(world, base=b[2])            # the rope closes a loop
    assert view.bases == [b[2]] and [c.source for c in view.constraints] == [rope]
    assert view.n == 6 + 1 + 3 + 2
    lone = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(5, 0, 0))
    assert lone not in ArticulatedView(world, base=b[2]).bodies   # a lone body stays out
