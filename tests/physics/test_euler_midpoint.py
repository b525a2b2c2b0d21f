"""The torque-free midpoint rule's fast path for principal moments (rotation.euler_midpoint,
which the symplectic drift runs several times a step) against the straightforward batched
arithmetic it stands for: the same numbers to the last bit, zeros of either sign included."""
import numpy as np

from physics.math3d import cross, skew, solve3
from physics.rotation import euler_midpoint


def _reference_midpoint(inertia, omega, h, iterations=2, guess=None):
    """The principal-moment midpoint rule as (N, 3, 3) Jacobians and solve3 (the arithmetic
    the fast path must keep)."""
    w1 = omega.copy() if guess is None else guess
    for _ in range(iterations):
        wm = 0.5 * (omega + w1)
        Iwm = inertia * wm
        residual = inertia * (w1 - omega) + h * cross(wm, Iwm)
        jac = skew(wm) * inertia[:, None, :] - skew(Iwm)
        jac *= 0.5 * h
        jac.reshape(-1, 9)[:, ::4] += inertia
        w1 = w1 - solve3(jac, residual)
    return w1


def test_principal_midpoint_is_the_batched_arithmetic_bit_for_bit():
    rng = np.random.default_rng(0)
    for trial in range(300):
        n = int(rng.integers(1, 200))
        inertia = rng.uniform(1e-3, 0.2, (n, 3)) * 10.0 ** rng.integers(-3, 3, (n, 1))
        if trial % 3 == 0:
            inertia[:, 1] = inertia[:, 0]            # tops
        omega = rng.normal(size=(n, 3)) * 10.0 ** rng.uniform(-3, 3, (n, 1))
        omega[rng.random((n, 3)) < 0.3] = 0.0        # planar motion: exact zeros
        omega[rng.random((n, 3)) < 0.1] = -0.0
        h = (1 / 240, 1 / 60, 1e-3)[trial % 3]
        guess = None
        if trial % 2:                                # SHAKE's one iteration from nearby
            guess = omega + 1e-4 * rng.normal(size=(n, 3)) * (rng.random((n, 3)) < 0.7)
        iterations = 2 if guess is None else 1
        fast = euler_midpoint(inertia, omega, h, iterations, guess)
        assert fast.tobytes() == _reference_midpoint(inertia, omega, h, iterations,
                                                     guess).tobytes()


def test_principal_midpoint_keeps_a_free_bodys_energy_and_momentum():
    inertia = np.array([[0.02, 0.05, 0.07]])
    omega = np.array([[3.0, -20.0, 0.5]])
    w = omega
    for _ in range(240):
        w = euler_midpoint(inertia, w, 1 / 60, iterations=8)
    energy = lambda v: float(np.sum(inertia * v * v))
    momentum = lambda v: float(np.linalg.norm(inertia * v))
    assert abs(energy(w) / energy(omega) - 1.0) < 1e-12
    assert abs(momentum(w) / momentum(omega) - 1.0) < 1e-12
    assert np.abs(w - omega).max() > 0.5             # it did tumble (0.88 rad/s)
