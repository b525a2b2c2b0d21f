"""The vectorised 3-vector and 3x3 kernels agree with numpy's general routines; the quaternion
kernels with their textbook formulas (to the bit) and with scipy's rotations."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from physics.math3d import (cross, inverse3, quat_multiply, quat_to_matrix,
                            rotation_vector_to_quat, skew, solve3)


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


def unit(q):
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def scalar_first(xyzw):
    """scipy's (x, y, z, w) quaternions in our order, scalar first (w, x, y, z)."""
    return xyzw[:, [3, 0, 1, 2]]


def scalar_last(wxyz):
    return wxyz[:, [1, 2, 3, 0]]


@pytest.mark.parametrize("n", [1, 5, 3000])
def test_quaternion_product_matches_the_textbook_bit_for_bit_and_composes_rotations(n):
    """quat_multiply sums the four terms in the textbook order: the same bits as the formula.
    On unit quaternions it is the composition of rotations: R(a b) = R(a) R(b), and scipy's
    product of the same rotations is the same quaternion (sign included)."""
    rng = np.random.default_rng(n)
    a, b = rng.normal(size=(n, 4)), rng.normal(size=(n, 4))
    (aw, ax, ay, az), (bw, bx, by, bz) = a.T, b.T
    textbook = np.stack([aw * bw - ax * bx - ay * by - az * bz,
                         aw * bx + ax * bw + ay * bz - az * by,
                         aw * by - ax * bz + ay * bw + az * bx,
                         aw * bz + ax * by - ay * bx + az * bw], axis=1)
    np.testing.assert_array_equal(quat_multiply(a, b), textbook)
    a, b = unit(a), unit(b)
    product = quat_multiply(a, b)
    np.testing.assert_allclose(quat_to_matrix(product), quat_to_matrix(a) @ quat_to_matrix(b),
                               rtol=0, atol=1e-14)
    composed = Rotation.from_quat(scalar_last(a)) * Rotation.from_quat(scalar_last(b))
    np.testing.assert_allclose(product, scalar_first(composed.as_quat()), rtol=0, atol=1e-14)


@pytest.mark.parametrize("n", [1, 5, 3000])
def test_exponential_map_matches_the_textbook_bit_for_bit_and_scipy(n):
    """The exponential map's 1/2 at zero is its series' value below 1e-8 rad: the same bits as
    the formula. Independently, it is scipy's rotation of the same rotation vector: the same
    quaternion (scalar first here, last in scipy) and the same matrix (body to world)."""
    rng = np.random.default_rng(n)
    # from 1e-14 rad (below 1e-8: the series' branch) to a few radians (past 2 pi for the
    # largest), every fourth zero
    phi = rng.normal(size=(n, 3)) * np.logspace(-14, 0.5, n)[:, None]
    phi[::4] = 0.0
    angle = np.sqrt(np.einsum("ij,ij->i", phi, phi))
    small = angle < 1e-8
    k = np.where(small, 0.5 - angle * angle / 48.0, np.sin(0.5 * angle) / np.where(small, 1.0, angle))
    expected = np.concatenate([np.cos(0.5 * angle)[:, None], phi * k[:, None]], axis=1)
    q = rotation_vector_to_quat(phi)
    np.testing.assert_array_equal(q, expected)
    scipy_rotation = Rotation.from_rotvec(phi)
    np.testing.assert_allclose(q, scalar_first(scipy_rotation.as_quat()), rtol=0, atol=1e-15)
    np.testing.assert_allclose(quat_to_matrix(q), scipy_rotation.as_matrix(), rtol=0, atol=1e-14)


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
