"""The joints' factorisation: the band's diagonal blocks (one per mechanism) and their inverses
stand in for the band's solve."""
import numpy as np
import pytest
from scipy.linalg import lapack

from physics import linsolve
from physics.assembly import Pattern
from physics.linsolve import BLOCK_ROWS, BandedCholesky
from chain_helpers import hung_chains


def chains(lengths, seed=0):
    """Separate chains of bodies hung from the static world (body 0), ``lengths`` links each,
    three random joint rows per link: (pattern, values of A + cfm)."""
    rng = np.random.default_rng(seed)
    n = 1 + sum(lengths)
    inv_mass = np.concatenate([[0.0], rng.uniform(0.2, 2.0, n - 1)])
    Iinv = np.zeros((n, 3, 3))
    Iinv[1:] = np.einsum("ni,ij->nij", rng.uniform(1.0, 20.0, (n - 1, 3)), np.eye(3))
    a, b = hung_chains(lengths)
    Ja, Jb = rng.normal(size=(a.size, 6)), rng.normal(size=(a.size, 6))
    pattern = Pattern(a, b, inv_mass > 0, n)
    return pattern, pattern.values(Ja, Jb, inv_mass, Iinv, 1e-9)


@pytest.mark.parametrize("lengths", [[4] * 6, [4, 5, 3, 5, 4, 5], [6] * 5, [1] * 4],
                         ids=["equal", "padded", "power of two", "one link"])
def test_block_inverses_solve_as_the_band_does(lengths):
    """Mechanisms that share no body are blocks of A: the inverses of those blocks, made
    from the band's Cholesky factor (padded to the largest with identity where their sizes
    differ, and to a power of two for the triangular inverses), give A^-1 y as the band's
    back-substitution does, to rounding."""
    pattern, values = chains(lengths)
    fac = pattern.factorizer
    assert isinstance(fac, BandedCholesky) and fac.blocks is not None
    assert fac.blocks.count == len(lengths) and fac.blocks.rows == 3 * max(lengths)
    factor = fac.factor(values)
    y = np.random.default_rng(1).normal(size=fac.m)          # band order
    band = lapack.dpbtrs(factor, y, lower=1)[0]
    blocks = fac.blocks.times(fac.blocks.inverses(factor), y)
    assert np.abs(blocks - band).max() <= 1e-12 * np.abs(band).max()


def test_block_inverses_of_a_new_factor_are_its_own():
    """The blocks' inverses of the last factor are kept for the step's next solve with it;
    a new factor (the next step's, whatever its values) gets its own."""
    pattern, values = chains([4] * 6)
    fac = pattern.factorizer
    first = fac.factor(values.copy())
    kept = fac.blocks.inverses(first)
    assert fac.blocks.inverses(first) is kept
    second = fac.factor(2.0 * values)            # A doubled: its inverses halved
    halved = fac.blocks.inverses(second)
    assert np.abs(2.0 * halved - kept).max() <= 1e-12 * np.abs(kept).max()


@pytest.mark.parametrize("lengths", [[4] * 6, [4, 5, 3, 5, 4, 5]], ids=["equal", "padded"])
def test_chosen_blocks_are_the_bands_own(lengths):
    """The blocks that hold some band positions (those a product reads, ``chosen``): their
    rows one block after another, and A^-1 y on those rows from y on them alone, by their
    inverses alone, is the whole band's blocks' product there to the last bit (each block's
    product is its own); with every block chosen, None (the blocks themselves)."""
    pattern, values = chains(lengths)
    blocks = pattern.factorizer.blocks
    factor = pattern.factorizer.factor(values)
    y = np.random.default_rng(2).normal(size=pattern.factorizer.m)
    whole = blocks.times(blocks.inverses(factor), y)
    starts = np.concatenate([[0], np.cumsum(blocks.sizes)[:-1]])
    touched = starts[[1, 4]] + 1                    # a row in the second and the fifth block
    chosen = blocks.chosen(touched)
    assert list(chosen.which) == [1, 4]
    rows = np.concatenate([np.arange(starts[i], starts[i] + blocks.sizes[i]) for i in (1, 4)])
    assert (chosen.positions == rows).all()
    assert (chosen.renumbered.take(rows) == np.arange(rows.size)).all()
    assert (np.delete(chosen.renumbered, rows) == -1).all()
    inverses = chosen.inverses(factor)
    assert inverses.shape[0] == 2
    assert chosen.times(inverses, y.take(rows)).tobytes() == whole.take(rows).tobytes()
    assert blocks.chosen(starts) is None


def test_the_same_blocks_chosen_again_are_the_same_chosen():
    """Asked again for positions in the same blocks (a pile's contacts step after step),
    ``chosen`` gives the Chosen it made last, whose rows are those of one made afresh;
    other blocks get one of their own, and the first ones again one equal to a fresh one."""
    pattern, values = chains([4, 5, 3, 5, 4, 5])
    blocks = pattern.factorizer.blocks
    starts = np.concatenate([[0], np.cumsum(blocks.sizes)[:-1]])
    first = blocks.chosen(starts[[1, 4]] + 1)
    assert blocks.chosen(starts[[4, 1]] + 2) is first     # other rows of the same blocks
    other = blocks.chosen(starts[[2]])
    assert other is not first and list(other.which) == [2]
    again = blocks.chosen(starts[[1, 4]])
    fresh = linsolve.Chosen(blocks, np.isin(np.arange(blocks.count), [1, 4]))
    for got in (first, again):
        assert list(got.which) == [1, 4]
        assert np.array_equal(got.positions, fresh.positions)
        assert np.array_equal(got.renumbered, fresh.renumbered)


@pytest.mark.parametrize("lengths, rule", [
    ([4] * 3, "MIN_BLOCKS"), ([4] * 5 + [BLOCK_ROWS // 3 + 1], "BLOCK_ROWS"),
    ([4] * 5 + [9], "BLOCK_WORK")], ids=["few mechanisms", "one too large", "too much padding"])
def test_no_blocks_where_they_would_not_pay(lengths, rule, monkeypatch):
    """Fewer than MIN_BLOCKS mechanisms (the band is short already), one with more than
    BLOCK_ROWS rows (its dense inverse would cost more than the band's solves), or blocks
    whose products (padded to the largest) would do BLOCK_WORK times the band's work: the
    band alone. Each case is refused by its own rule, the others relaxed."""
    relaxed = {"MIN_BLOCKS": 1, "BLOCK_ROWS": 10 ** 9, "BLOCK_WORK": 1e9}
    for name, value in relaxed.items():
        if name != rule:
            monkeypatch.setattr(linsolve, name, value)
    pattern, _ = chains(lengths)
    assert pattern.factorizer.blocks is None
    monkeypatch.setattr(linsolve, rule, relaxed[rule])
    assert chains(lengths)[0].factorizer.blocks is not None


@pytest.mark.parametrize("n", [1, 2, 16, 64])
def test_triangular_inverses_by_doubling(n):
    """L^-1 of a batch of lower triangular matrices (sizes a power of two; DiagonalBlocks pads
    its blocks to one), their entries gathered from a flat array by index: lower triangular
    itself (exact zeros above the diagonal), and L X = I to rounding."""
    rng = np.random.default_rng(n)
    L = np.tril(rng.normal(size=(3, n, n))) + np.einsum("c,ij->cij", rng.uniform(2, 5, 3), np.eye(n))
    X = linsolve.TriangularInverses(np.arange(L.size).reshape(L.shape)).of(L.ravel())
    assert not np.triu(X, 1).any()
    assert np.abs(L @ X - np.eye(n)).max() <= 1e-12
