"""Every joint's rows: the Jacobian equals finite differences of C, and Jdot u likewise."""
import numpy as np
import pytest

from physics import (Ball, Box, Capsule, Cylindrical, Distance, Fixed, Hinge, RotationLock, Slider,
                     Universal, World)
from physics.math3d import quat_to_matrix, rotate_quat
from physics.rows import Kinematics, evaluate_tables

JOINTS = {
    "ball": lambda a, b: Ball(a, b, anchor=(0.1, 0.2, 0.3)),
    "hinge": lambda a, b: Hinge(a, b, anchor=(0.1, 0.2, 0.3), axis=(1, 2, 0.5)),
    "slider": lambda a, b: Slider(a, b, anchor=(0.3, -0.1, 0.2), axis=(0.2, 1, -0.3)),
    "fixed": lambda a, b: Fixed(a, b, anchor=(0.0, 0.1, 0.4)),
    "universal": lambda a, b: Universal(a, b, anchor=(0.1, 0.0, 0.2), axis_a=(1, 0, 0),
                                        axis_b=(0, 0.6, 0.8)),
    "cylindrical": lambda a, b: Cylindrical(a, b, anchor=(0.2, 0.1, 0.0), axis=(0, 1, 1)),
    "distance": lambda a, b: Distance(a, b, anchor_a=(0.0, 0.0, 0.5), anchor_b=(0.6, 0.2, 0.9)),
    "rotation_lock": lambda a, b: RotationLock(a, b),
    "rotation_lock_axis": lambda a, b: RotationLock(a, b, axis=(0.3, -1, 0.6)),
}


def random_pair(rng, joint_name, world_anchor):
    world = World(gravity=(0, 0, 0))
    a = None if world_anchor else world.add_body(
        Box((0.2, 0.1, 0.3)), mass=2.0, position=rng.normal(size=3) * 0.3)
    b = world.add_body(Capsule(0.1, 0.3), mass=1.5, position=rng.normal(size=3) * 0.3)
    world.add_joint(JOINTS[joint_name](a, b))
    # move both bodies off the constraint manifold and give them velocities
    for body in world.bodies:
        q = rng.normal(size=4)
        body.orientation = q / np.linalg.norm(q)
        body.position = body.position + rng.normal(size=3) * 0.05
        body.linear_velocity = rng.normal(size=3)
        body.angular_velocity = rng.normal(size=3) * 2
    return world


def rows_at(world, x, q, v, w):
    return evaluate_tables(world._model().tables, Kinematics(x, quat_to_matrix(q), v, w))


def state(world):
    return [world._view(n).copy() for n in ("_x", "_q", "_v", "_w")]


def moved(x, q, v, w, eps, dx, dtheta):
    return x + eps * dx, rotate_quat(q, eps * dtheta), v, w


@pytest.mark.parametrize("world_anchor", [False, True])
@pytest.mark.parametrize("joint_name", sorted(JOINTS))
def test_jacobian_matches_finite_differences_of_C(joint_name, world_anchor):
    rng = np.random.default_rng(7)
    world = random_pair(rng, joint_name, world_anchor)
    x, q, v, w = state(world)
    rows = rows_at(world, x, q, v, w)
    eps = 1e-6
    n = x.shape[0]
    for body in range(1, n):
        for k in range(6):
            dx, dth = np.zeros((n, 3)), np.zeros((n, 3))
            (dx if k < 3 else dth)[body, k % 3] = 1.0
            cp = rows_at(world, *moved(x, q, v, w, eps, dx, dth)).C
            cm = rows_at(world, *moved(x, q, v, w, -eps, dx, dth)).C
            fd = (cp - cm) / (2 * eps)
            analytic = (np.where(rows.a == body, rows.Ja[:, k], 0.0)
                        + np.where(rows.b == body, rows.Jb[:, k], 0.0))
            np.testing.assert_allclose(analytic, fd, atol=1e-7, rtol=1e-6,
                                       err_msg=f"{joint_name}: body {body}, coordinate {k}")


@pytest.mark.parametrize("world_anchor", [False, True])
@pytest.mark.parametrize("joint_name", sorted(JOINTS))
def test_jdot_u_matches_finite_differences_along_the_motion(joint_name, world_anchor):
    """Jdot u = d/dt (J(x(t)) u) with u held fixed while the bodies move with u."""
    rng = np.random.default_rng(11)
    world = random_pair(rng, joint_name, world_anchor)
    x, q, v, w = state(world)
    rows = rows_at(world, x, q, v, w)
    eps = 1e-6

    def cdot(sign):
        r = rows_at(world, *moved(x, q, v, w, sign * eps, v, w))
        return r.velocity(v, w)

    fd = (cdot(1) - cdot(-1)) / (2 * eps)
    np.testing.assert_allclose(rows.Jdu, fd, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("joint_name", sorted(JOINTS))
def test_position_only_values_equal_the_full_rows(joint_name):
    """SHAKE measures C alone (faster paths per kind); it must be the rows' C exactly, and
    rows evaluated without their velocity terms must keep J and C."""
    world = random_pair(np.random.default_rng(3), joint_name, world_anchor=False)
    x, q, v, w = state(world)
    k = Kinematics(x, quat_to_matrix(q), v, w)
    full = evaluate_tables(world._model().tables, k)
    np.testing.assert_allclose(evaluate_tables(world._model().tables, k, c_only=True), full.C,
                               rtol=0, atol=1e-15)
    lean = evaluate_tables(world._model().tables, Kinematics(x, k.R, v, w, velocity_terms=False))
    for field in ("C", "Ja", "Jb"):
        np.testing.assert_array_equal(getattr(lean, field), getattr(full, field))


@pytest.mark.parametrize("joint_name", sorted(JOINTS))
def test_velocity_products_equal_a_fresh_evaluation_bit_for_bit(joint_name):
    """The step redoes only Jdu at new velocities (point and perpendicular rows from their
    kept rotated vectors, the other kinds evaluated again): the same bits as evaluating the
    rows at those velocities."""
    from physics.rows import velocity_products
    rng = np.random.default_rng(5)
    world = random_pair(rng, joint_name, world_anchor=False)
    x, q, v, w = state(world)
    tables = world._model().tables
    R = quat_to_matrix(q)
    lean = evaluate_tables(tables, Kinematics(x, R, v, w, velocity_terms=False))
    v2, w2 = rng.normal(size=v.shape), rng.normal(size=w.shape) * 3
    fresh = evaluate_tables(tables, Kinematics(x, R, v2, w2)).Jdu
    jdu = velocity_products(tables, lean, Kinematics(x, R, v2, w2))
    assert jdu.tobytes() == fresh.tobytes()
