"""MPRGP on a fixed box (physics/mprgp.py)."""
import numpy as np
import pytest

import physics.iterative as iterative
from bounded_helpers import frictionless, operators, random_problem, reduced_qp, solve_iter


@pytest.mark.parametrize("seed", range(20))
def test_an_expansion_step_too_long_for_the_problem_is_halved_not_taken(monkeypatch, seed):
    """MPRGP descends at every step when its expansion step length is below 2 / ||Q||; the
    power iteration estimates ||Q|| from below, and from a cold start it can come out low.
    With the length made 8x too long, box QPs (no friction rounds: one fixed QP) still lower
    their objective with every iteration: an expansion step that would go uphill halves the
    length instead of being taken."""
    # (patched where the solve reads it: physics.iterative's row sets estimate the norm)
    real = iterative.norm
    monkeypatch.setattr(iterative, "norm", lambda op, m, carried=None: (real(op, m)[0] / 8, True))
    p = frictionless(random_problem(seed, n_bodies=30, n_eq=20, n_contacts=60, n_limits=6),
                     bound=1.0)
    ops = E, B, *_ = operators(p)
    Q, c = reduced_qp(p, E, B)
    last = np.inf
    for n in range(1, 60):
        (_, x, _), *_ = solve_iter(p, max_iterations=n, ops=ops)
        f = 0.5 * x @ Q @ x - c @ x
        assert f <= last + 1e-12 * abs(last), (seed, n)
        last = f
