"""The accelerated projection's norm estimate (physics/accelerated_projection.py)."""
import numpy as np
import pytest

from physics.accelerated_projection import COLD_POWER_ITERATIONS, norm
from physics.bodyspace import Reduced
from physics.bounded import CONTACT_SOFTNESS
from physics.iterative import SolverMemory
from bounded_helpers import CFM, operators, random_problem, reduced_qp


@pytest.mark.parametrize("seed", range(4))
def test_a_carried_power_vector_estimates_the_norm_in_two_products(seed):
    """The step lengths want ||s (S + R) s||: MPRGP's expansion step below 2 / ||.||, the
    accelerated projection's below 1 / ||.||. A power iteration estimates it (from below). A
    solve that carries last solve's vector (a step changes a pile's largest mode little; here
    the same operator) starts the power iteration from it and needs two products, not six,
    for an estimate at least as close."""
    p = random_problem(100 + seed, n_bodies=30, n_eq=20, n_contacts=60, n_limits=6)
    E, B, fac, factor = operators(p)
    S, _ = reduced_qp(p, E, B)
    cfm = CFM + CONTACT_SOFTNESS * B.diagonal
    s = 1.0 / np.sqrt(B.diagonal + cfm)
    largest = np.linalg.eigvalsh(s[:, None] * (S + np.diag(cfm)) * s[None, :]).max()
    op = Reduced(B, CFM, s, E, fac, factor)
    carried = SolverMemory()
    cold, cold_is_warm = norm(op, B.m, carried)
    products = op.products
    assert products == COLD_POWER_ITERATIONS
    warm, warm_is_warm = norm(op, B.m, carried)
    assert op.products - products == 2 and warm_is_warm and not cold_is_warm
    assert largest >= warm >= cold > 0.6 * largest
