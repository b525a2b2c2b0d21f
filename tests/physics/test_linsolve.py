"""The joints' factorisation: the band's diagonal blocks (one per mechanism) and their inverses
stand in for the band's solve."""
import numpy as np
import pytest
from scipy.linalg import lapack

from physics.assembly import Pattern
from physics.linsolve import BLOCK_ROWS, BandedCholesky


def chains(lengths, seed=0):
    """Separate chains of bodies hung from the static world (body 0), ``lengths`` links each,
    three random joint rows per link: (pattern, values of A + cfm)."""
    rng = np.random.default_rng(seed)
    n = 1 + sum(lengths)
    inv_mass = np.concatenate([[0.0], rng.uniform(0.2, 2.0, n - 1)])
    Iinv = np.zeros((n, 3, 3))
    Iinv[1:] = np.einsum("ni,ij->nij", rng.uniform(1.0, 20.0, (n - 1, 3)), np.eye(3))
    a, b, first = [], [], 1
    for length in lengths:
        bodies = np.arange(first, first + length)
        a += [0] + list(bodies[:-1])
        b += list(bodies)
        first += length
    a, b = np.repeat(a, 3), np.repeat(b, 3)
    Ja, Jb = rng.normal(size=(a.size, 6)), rng.normal(size=(a.size, 6))
    pattern = Pattern(a, b, inv_mass > 0, n)
    return pattern, pattern.values(Ja, Jb, inv_mass, Iinv, 1e-9)


@pytest.mark.parametrize("lengths", [[4] * 6, [4, 5, 3, 5, 4, 5]], ids=["equal", "padded"])
def test_block_inverses_solve_as_the_band_does(lengths):
    """Mechanisms that share no body are blocks of A: the inverses of those blocks, made
    from the band's Cholesky factor (padded to the largest with identity where their sizes
    differ), give A^-1 y as the band's back-substitution does, to rounding."""
    pattern, values = chains(lengths)
    fac = pattern.factorizer
    assert isinstance(fac, BandedCholesky) and fac.blocks is not None
    assert fac.blocks.count == len(lengths) and fac.blocks.rows == 3 * max(lengths)
    factor = fac.factor(values)
    y = np.random.default_rng(1).normal(size=fac.m)          # band order
    band = lapack.dpbtrs(factor, y, lower=1)[0]
    blocks = fac.blocks.times(fac.blocks.inverses(factor), y)
    assert np.abs(blocks - band).max() <= 1e-12 * np.abs(band).max()


@pytest.mark.parametrize("lengths", [[4] * 3, [4] * 5 + [BLOCK_ROWS // 3 + 1]],
                         ids=["few mechanisms", "one too large"])
def test_no_blocks_where_they_would_not_pay(lengths):
    """Fewer than MIN_BLOCKS mechanisms (the band is short already), or one with more than
    BLOCK_ROWS rows (its dense inverse would cost more than the band's solves): the band
    alone."""
    pattern, _ = chains(lengths)
    assert pattern.factorizer.blocks is None
