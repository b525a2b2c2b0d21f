import numpy as np

from physics.push_out import FINISHING_PUSH, push_out


def test_push_out_is_its_overrun_over_t_but_finishes_within_the_step():
    h, T, most = 1 / 60, 4 / 60, 3.0
    beyond = np.array([-1e-3, 0.0, 1e-6, 1e-5, 5e-5, 1e-4, 1e-2, 1.0])
    np.testing.assert_allclose(
        push_out(beyond, h, T, most),
        [0.0, 0.0, 1e-6 / h, 1e-5 / h, FINISHING_PUSH, 1e-4 / T, 1e-2 / T, most])
    np.testing.assert_allclose(push_out(beyond, h, T)[-1], 1.0 / T)      # (no bound)
