"""The vectorised 3-vector and 3x3 kernels agree with numpy's general routines."""
import numpy as np
import pytest

from physics.math3d import (cross, inverse3, quat_multiply, rotation_vector_to_quat, skew,
                            solve3)


@pytest.mark.parametrize("n", [1, 100, 5000])      # both of cross's paths (gathers, columns)
def test_cross_matches_numpy_also_broadcast_and_into_a_view(n):
    rng = np.random.default_rng(n)
    a, b = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    np.testing.assert_array_equal(cross(a, b), np.cross(a, b))
    single = rng.normal(size=3)
    np.testing.assert_allclose(cross(single, b), np.cross(single, b), rtol=0, atol=1e-15)
    stacked = rng.normal(size=(2, n, 3))                # r x d for two directions per row
    out = np.empty((2 * n, 6))[:, 3:].reshape(2, n, 3)
    cross(a, stacked, out=out)
    np.testing.assert_allclose(out, np.cross(a, stacked), rtol=0, atol=1e-15)


def test_skew_inverse_and_solve_match_numpy():
    rng = np.random.default_rng(4)
    r, v = rng.normal(size=(50, 3)), rng.normal(size=(50, 3))
    np.testing.assert_allclose(np.einsum("nij,nj->ni", skew(r), v), np.cross(r, v), atol=1e-15)
    m = rng.normal(size=(50, 3, 3)) + 3 * np.eye(3)
    np.testing.assert_allclose(inverse3(m), np.linalg.inv(m), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(solve3(m, v), np.linalg.solve(m, v[..., None])[..., 0],
                               rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("n", [1, 5, 3000])
def test_quaternion_product_and_exponential_match_the_textbook_bit_for_bit(n):
    """quat_multiply sums the four terms in the textbook order, and the exponential map's
    1/2 at zero is its series' value below 1e-8 rad: the same bits as the formulas."""
    rng = np.random.default_rng(n)
    a, b = rng.normal(size=(n, 4)), rng.normal(size=(n, 4))
    (aw, ax, ay, az), (bw, bx, by, bz) = a.T, b.T
    textbook = np.stack([aw * bw - ax * bx - ay * by - az * bz,
                         aw * bx + ax * bw + ay * bz - az * by,
                         aw * by - ax * bz + ay * bw + az * bx,
                         aw * bz + ax * by - ay * bx + az * bw], axis=1)
    np.testing.assert_array_equal(quat_multiply(a, b), textbook)
    phi = rng.normal(size=(n, 3)) * np.logspace(-14, 0.5, n)[:, None]
    phi[::4] = 0.0
    angle = np.sqrt(np.einsum("ij,ij->i", phi, phi))
    small = angle < 1e-8
    k = np.where(small, 0.5 - angle * angle / 48.0, np.sin(0.5 * angle) / np.where(small, 1.0, angle))
    expected = np.concatenate([np.cos(0.5 * angle)[:, None], phi * k[:, None]], axis=1)
    np.testing.assert_array_equal(rotation_vector_to_quat(phi), expected)


def test_quaternion_product_of_single_quaternions_is_the_batched_one():
    """(4,) quaternions multiply as (1, 4) ones do, to the bit, and a (4,) one multiplies
    each row of an (n, 4) batch (on either side)."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        a, b = rng.normal(size=4), rng.normal(size=4)
        single = quat_multiply(a, b)
        assert single.shape == (4,)
        assert single.tobytes() == quat_multiply(a[None], b[None])[0].tobytes()
    batch = rng.normal(size=(6, 4))
    np.testing.assert_array_equal(quat_multiply(a, batch), quat_multiply(np.tile(a, (6, 1)), batch))
    np.testing.assert_array_equal(quat_multiply(batch, b), quat_multiply(batch, np.tile(b, (6, 1))))
