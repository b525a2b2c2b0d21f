"""The multipliers the step reports are the seed equation's (003_*), solved exactly."""
import numpy as np

from physics import Ball, Box, Capsule, Hinge, Slider, World
from physics.math3d import quat_to_matrix
from physics.rows import Kinematics, evaluate_tables
from physics.rotation import world_inverse_inertia
from physics.seed import applied_wrench


def test_lambda_equals_a_dense_solve_of_the_seed_equation_at_a_random_state():
    rng = np.random.default_rng(5)
    world = World(gyroscopic="explicit", cfm=0.0)
    # small shapes, well apart, so that no contact joins the joints' rows
    bodies = [world.add_body(Capsule(0.02, 0.1), mass=1 + rng.random(), position=(0.5 * i, 0, 1))
              for i in range(4)]
    bodies.append(world.add_body(Box((0.1, 0.05, 0.05)), mass=3.0, position=(2.0, 0, 1)))
    world.add_joint(Ball(None, bodies[0], anchor=(-0.25, 0, 1)))
    world.add_joint(Hinge(bodies[0], bodies[1], anchor=(0.25, 0, 1), axis=(0, 1, 0)))
    world.add_joint(Ball(bodies[1], bodies[2], anchor=(0.75, 0, 1)))
    world.add_joint(Slider(bodies[2], bodies[3], anchor=(1.25, 0, 1), axis=(1, 0, 0)))
    world.add_joint(Hinge(bodies[3], bodies[4], anchor=(1.75, 0, 1), axis=(0, 0, 1)))
    for b in bodies:   # a random state, off the constraint manifold
        b.position = b.position + 0.01 * rng.normal(size=3)
        b.linear_velocity = rng.normal(size=3)
        b.angular_velocity = rng.normal(size=3)
        q = np.array([1, *(0.1 * rng.normal(size=3))])
        b.orientation = q / np.linalg.norm(q)
        b.apply_force(rng.normal(size=3), point=b.position + rng.normal(size=3) * 0.1)
    # bodies placed off their joints are put on them at the next step; a snapshot restores a
    # state as it is
    world.set_state(world.get_state())

    def dense_seed_solve(d, last_loads=None):
        """lambda of the seed equation at the world's state, dense, with damping d; with
        ``last_loads`` (forces, torques (N, 3) and the step h of the last step's second half
        kick) at the velocities a step starts from: that half kick exchanged for one of the
        loads now, projected onto the joints (kicks.loads_caught_up)."""
        n = world._n
        x, q, v, w = (world._view(k).copy() for k in ("_x", "_q", "_v", "_w"))
        R = quat_to_matrix(q)
        rows = evaluate_tables(world._model().tables, Kinematics(x, R, v, w))
        m = rows.count
        J = np.zeros((m, 6 * n))
        for r in range(m):   # dense reference, written out plainly
            J[r, 6 * rows.a[r]: 6 * rows.a[r] + 6] += rows.Ja[r]
            J[r, 6 * rows.b[r]: 6 * rows.b[r] + 6] += rows.Jb[r]
        Minv = np.zeros((6 * n, 6 * n))
        Iinv = world_inverse_inertia(R, world._inv_inertia[:n])
        for i in range(n):
            Minv[6 * i: 6 * i + 3, 6 * i: 6 * i + 3] = np.eye(3) * world._inv_mass[i]
            Minv[6 * i + 3: 6 * i + 6, 6 * i + 3: 6 * i + 6] = Iinv[i]
        if last_loads is not None:
            force, torque, h = last_loads
            change = np.concatenate([world._force[:n] - force, world._torque[:n] - torque],
                                    axis=1).reshape(-1)
            du = 0.5 * h * Minv @ change
            du -= Minv @ J.T @ np.linalg.solve(J @ Minv @ J.T, J @ du)
            v, w = v + du.reshape(n, 6)[:, :3], w + du.reshape(n, 6)[:, 3:]
            rows = evaluate_tables(world._model().tables, Kinematics(x, R, v, w))
        F, T, _ = applied_wrench(world, world._model(), R, v, w)
        phi = np.concatenate([F, T], axis=1).reshape(-1)
        u = np.concatenate([v, w], axis=1).reshape(-1)
        k = world.baumgarte[0]
        # -J M^-1 J^T lambda = Jdot u + J M^-1 Phi + k C + d Cdot
        return np.linalg.solve(-J @ Minv @ J.T, rows.Jdu + J @ Minv @ phi + k * rows.C
                               + d * (J @ u))

    # the velocities were set by the user: the J u they open is met within the step (1/h for
    # d, as a kinematic carrier's change is: the joints' share of a blow is its impulse / h)
    expected = dense_seed_solve(1 / world.dt)
    last_loads = (world._force[:world._n].copy(), world._torque[:world._n].copy(), world.dt)
    world.step()
    np.testing.assert_allclose(world.last_lambda, expected, rtol=1e-8,
                               atol=1e-8 * np.abs(expected).max())
    # and from a step's own end, the seed equation's Baumgarte damping d (its velocities the
    # state's with the last half kick of the loads exchanged for the new loads')
    for b in bodies:
        b.apply_force(rng.normal(size=3), point=b.position + rng.normal(size=3) * 0.1)
    expected = dense_seed_solve(world.baumgarte[1], last_loads)
    world.step()
    np.testing.assert_allclose(world.last_lambda, expected, rtol=1e-8,
                               atol=1e-8 * np.abs(expected).max())
