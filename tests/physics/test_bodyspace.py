"""Rows in body space and the products with them (physics/bodyspace.py): the reduced operator
S + R of the iterative solve, made with the joints' block inverses or without exact zeros, is
the same operator."""
import numpy as np

from physics.bodyspace import Reduced
from bounded_helpers import CFM, assert_optimal, body_space, long_solve, operators, random_problem


def test_long_solves_among_many_mechanisms_use_their_blocks_inverses(monkeypatch):
    """Many small mechanisms (six chains of four links): a solve expected to take its whole
    budget (after one that did not finish) applies A_EE^-1 by the inverses of its diagonal
    blocks (linsolve.DiagonalBlocks) instead of the band's back-substitution. It is the same
    reduced operator to rounding, and such a solve meets the same conditions."""
    p = random_problem(2, n_bodies=24, n_contacts=8, n_limits=4, chains=6)
    E, B, fac, factor = operators(p)
    assert fac.blocks is not None and fac.blocks.count == 6
    s = 1.0 / np.sqrt(B.diagonal + CFM)
    band = Reduced(B, CFM, s, E, fac, factor)
    blocks = Reduced(B, CFM, s, E, fac, factor, long_solve=True)
    assert band.inverses is None and blocks.inverses is not None
    z = np.random.default_rng(0).normal(size=B.m)
    assert np.abs(blocks(z) - band(z)).max() <= 1e-12 * np.abs(band(z)).max()
    made = []
    inverses = fac.blocks.inverses
    monkeypatch.setattr(fac.blocks, "inverses", lambda f: made.append(f) or inverses(f))
    (lam_e, lam_b, info), *_ = long_solve(p, None, ops=(E, B, fac, factor))
    assert len(made) == 1 and made[0] is factor       # the solve used the blocks' inverses
    assert info["residual"] <= 1.0
    assert_optimal(p, E, B, lam_e, lam_b)


def test_long_solves_of_contacts_alone_skip_their_exact_zeros():
    """Contacts alone (no joints): a solve expected to take its whole budget multiplies by J
    and M^-1 J^T without their exact zeros (a sphere's normal rows have no torque, a static
    body's side moves nothing). Leaving out terms that are exactly zero changes no sum: the
    reduced operator is the same to the last bit, with fewer entries."""
    p = random_problem(5, n_bodies=12, n_eq=0, n_contacts=30, n_limits=1)
    a, b, Ja, Jb = p["b"]
    # the normal rows between two moving bodies push through both centres
    central = np.flatnonzero((a[:30] != 0) & (b[:30] != 0))
    Ja, Jb = Ja.copy(), Jb.copy()
    Ja[central, 3:] = 0.0
    Jb[central, 3:] = 0.0
    B = body_space(p, a, b, Ja, Jb)
    s = 1.0 / np.sqrt(B.diagonal + CFM)
    plain = Reduced(B, CFM, s, None, None, None)
    pruned = Reduced(B, CFM, s, None, None, None, long_solve=True)
    static_sides = int(np.count_nonzero(a == 0) + np.count_nonzero(b == 0))
    assert static_sides > 0 and central.size > 10
    assert pruned.J.data.size == 12 * B.m - 6 * static_sides - 6 * central.size
    assert pruned.W.data.size == pruned.J.data.size
    rng = np.random.default_rng(1)
    for _ in range(3):
        z = rng.normal(size=B.m)
        assert pruned(z).tobytes() == plain(z).tobytes()
        u = rng.normal(size=6 * p["n"])
        u[:6] = 0.0         # (body velocities the solver makes: the static world's stay 0)
        assert pruned.rows_from_bodies(u).tobytes() == plain.rows_from_bodies(u).tobytes()
        assert pruned.bodies_from_rows(z).tobytes() == plain.bodies_from_rows(z).tobytes()
