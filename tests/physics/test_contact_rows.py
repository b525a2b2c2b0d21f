"""Contact rows (physics/contact_rows.py): a normal row and two friction rows per contact point."""
from types import SimpleNamespace

import numpy as np

from physics.contact_rows import contact_rows


def _rows_for(centres, a, b, point, normal):
    kin = SimpleNamespace(x=centres)
    k = a.shape[0]
    return contact_rows(kin, a, b, point, normal, np.full(k, 1e-3), np.full(k, 0.5),
                        h=1 / 240, T=0.05).rows


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
