"""Factorising the symmetric positive definite A = J M^-1 J^T + R.

Two storage layouts, chosen once per sparsity pattern:

- ``BandedCholesky``: rows reordered by reverse Cuthill-McKee, A kept as a band, factorised by
  LAPACK's banded Cholesky (dpbtrf). Chains, trees, ragdolls and small loops have a narrow
  band after reordering, and then this costs O(m b^2) with almost no Python overhead.
- ``SparseLU``: for wide bands (e.g. large contact piles), SuperLU on a compressed sparse
  column matrix whose structure is fixed and whose values are refilled each step.

Both take the values of A in their own flat storage (see ``Pattern``) and solve in the
original row order. When the band falls apart into many small mechanisms, ``DiagonalBlocks``
gives the inverses of its diagonal blocks, for solves that apply A^-1 many times (``Chosen``:
some of them, where a product reads A^-1 y on their rows alone).
"""
from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack
from scipy.sparse.csgraph import connected_components, reverse_cuthill_mckee
from scipy.sparse.linalg import splu

# Above this much band work (m * bandwidth^2) SuperLU's fill-reducing order wins (measured
# with tools/bench on contact piles; chains and ragdolls stay far below it).
BANDED_WORK_LIMIT = 4e6


class SingularSystemError(np.linalg.LinAlgError):
    """A factorisation that broke down. ``row``: the row (in the original order) where it did,
    when the factoriser knows; ``pattern`` and ``bodies``: the ``assembly.Pattern`` whose
    matrix it was and the two body rows of that row, when it was one (set there), so that the
    step can name the joint or the bodies rather than a row number of a matrix nobody sees."""

    def __init__(self, message, row=None):
        super().__init__(message)
        self.row, self.pattern, self.bodies = row, None, None


def make_factorizer(graph: sp.csr_matrix):
    """Pick the storage for the symmetric pattern ``graph`` (m x m, any values)."""
    m = graph.shape[0]
    order = reverse_cuthill_mckee(graph, symmetric_mode=True).astype(np.intp)
    pos = np.empty(m, dtype=np.intp)
    pos[order] = np.arange(m)
    coo = graph.tocoo()
    bandwidth = int(np.max(np.abs(pos[coo.row] - pos[coo.col]), initial=0))
    if m * bandwidth**2 <= BANDED_WORK_LIMIT:
        return BandedCholesky(order, pos, bandwidth, graph)
    return SparseLU(graph)


class BandedCholesky:
    def __init__(self, order: np.ndarray, pos: np.ndarray, bandwidth: int,
                 graph: sp.csr_matrix | None = None):
        """``graph``: the symmetric pattern (m x m) that ``order`` numbers, for ``blocks``."""
        self.order, self.pos, self.bandwidth = order, pos, bandwidth
        self.m = order.shape[0]
        self.size = self.m * (bandwidth + 1)
        self._graph = graph

    @functools.cached_property
    def blocks(self) -> DiagonalBlocks | None:
        """The band's ``DiagonalBlocks``, or None (no graph, or they would not pay). Found
        when first asked: only the joints' factorizer in long solves uses them, and finding
        them (connected components, ~50 us) would otherwise cost every pattern made, e.g.
        every direct impact pass."""
        graph, self._graph = self._graph, None
        return None if graph is None else DiagonalBlocks.find(graph, self.order, self.bandwidth)

    def slots(self, ri, rj):
        si, sj = self.pos[ri], self.pos[rj]
        return si, sj, si >= sj          # lower triangle only

    def flat_index(self, si, sj):
        # LAPACK lower band storage ab[i - j, j], Fortran order with leading dimension b + 1
        return sj * (self.bandwidth + 1) + (si - sj)

    def diagonal_index(self):
        """Storage index of each row's diagonal entry, in the original row order."""
        return self.pos * (self.bandwidth + 1)

    def factor(self, data: np.ndarray):
        ab = data.reshape(self.m, self.bandwidth + 1).T
        c, info = lapack.dpbtrf(ab, lower=1, overwrite_ab=1)
        if info != 0:
            # (info > 0: the leading minor of that order, in the band's order, is not positive)
            raise SingularSystemError("constraint matrix is not positive definite",
                                      row=int(self.order[info - 1]) if info > 0 else None)
        return c

    def solve(self, factor, rhs: np.ndarray) -> np.ndarray:
        # gathers by take (numpy's fancy indexing and scatters are several times slower); the
        # gathered right-hand side is a fresh array, so LAPACK may solve in it
        x, info = lapack.dpbtrs(factor, rhs.take(self.order, axis=0), lower=1, overwrite_b=1)
        return x.take(self.pos, axis=0)            # pos is the inverse of order


# Many small mechanisms (a pile of ragdolls): their diagonal blocks' inverses, applied by one
# batched matrix product, stand in for the band's back-substitution where a solve takes many
# products with A^-1. LAPACK's band solve runs short loops of the band's width (10 ragdolls,
# 540 rows of width 15: 14 us); the product of ten 54 x 54 inverses streams (3.6 us), and
# forming them (from the factor, see ``inverses``) costs about 15-30 products' worth (0.2-0.4 ms).
# (On a machine about three times slower at numpy's small calls: 23 us, 10 us and 0.46 ms, by
# ``TriangularInverses``; 0.82 ms by the recursive halves it replaced.)
BLOCK_ROWS = 64          # largest block (rows)
BLOCK_WORK = 4.0         # blocks' product work (entries) at most this times the band's
MIN_BLOCKS = 4           # fewer blocks: the band's solve is short already


class DiagonalBlocks:
    """The band's diagonal blocks when its graph falls apart into components (mechanisms)
    of at most BLOCK_ROWS rows: reverse Cuthill-McKee numbers one component after another,
    so each is a contiguous run of the band order. Blocks are padded to the largest (the
    padding is identity). ``inverses(factor)`` makes the blocks' inverses from the band's
    Cholesky factor; ``times`` applies them to a vector in band order."""

    def __init__(self, starts: np.ndarray, sizes: np.ndarray, bandwidth: int):
        m = int(sizes.sum())
        self.count, self.rows = starts.shape[0], int(sizes.max())
        self.starts, self.sizes = starts, sizes
        self.block_of = np.repeat(np.arange(self.count), sizes)     # (m,) band position's block
        # L's blocks padded further, to a power of two, for ``TriangularInverses``
        p, w = _power_of_two(self.rows), bandwidth + 1
        i, j = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
        inside = (i - j >= 0) & (i - j < w) & (i[None] < sizes[:, None, None]) \
            & (j[None] < sizes[:, None, None])
        # L's block c entry (i, j) sits at factor[i - j, start_c + j] (flat, Fortran order);
        # outside the band: a 0, and on the padding's diagonal a 1, both after the factor
        flat = (i - j)[None] + (starts[:, None, None] + j[None]) * w
        pad_diagonal = (i == j)[None] & ~inside
        self.triangular = TriangularInverses(
            np.where(inside, flat, np.where(pad_diagonal, m * w + 1, m * w)))
        # band position of each padded slot (None: no padding, a reshape will do)
        self.slots = _padded_slots(starts, sizes, self.rows)
        self._made = (None, None, None)    # (factor, chosen, their inverses): the last made
        self._last_chosen = None           # the last ``chosen``

    @classmethod
    def find(cls, graph: sp.csr_matrix, order: np.ndarray, bandwidth: int):
        """DiagonalBlocks of the symmetric pattern ``graph`` in the band order ``order``, or
        None when they would not pay (see BLOCK_ROWS, BLOCK_WORK, MIN_BLOCKS)."""
        m = graph.shape[0]
        count, label = connected_components(graph, directed=False)
        if count < MIN_BLOCKS:
            return None
        label = label.take(order)
        first = np.flatnonzero(np.concatenate([[True], label[1:] != label[:-1]]))
        if first.shape[0] != count:          # not contiguous (never seen with RCM)
            return None
        sizes = np.diff(np.append(first, m))
        b = int(sizes.max())
        if b > BLOCK_ROWS or count * b * b > BLOCK_WORK * m * (bandwidth + 1):
            return None
        return cls(first, sizes, bandwidth)

    def inverses(self, factor: np.ndarray, chosen: Chosen | None = None) -> np.ndarray:
        """(count, rows, rows): the blocks' inverses L^-T L^-1, from the band's factor L
        (dpbtrf's); of the ``chosen`` blocks only ((k, rows, rows), in their order) when
        given. The last made are kept: a step's solves again with the same factor
        (limits overrun, a cold solve, a push) ask again (a 10-ragdoll pile: 14 of 134 in
        120 steps, 0.2-0.3 ms each); the caller must not change them."""
        which = None if chosen is None else chosen.which
        made_factor, made_which, made = self._made
        if factor is made_factor and (made_which is which or (
                which is not None and made_which is not None
                and np.array_equal(made_which, which))):
            return made
        values = np.concatenate([factor.ravel(order="F"), [0.0, 1.0]])
        X = np.ascontiguousarray(self.triangular.of(values, which)[:, :self.rows, :self.rows])
        inverses = np.matmul(X.transpose(0, 2, 1), X)
        self._made = (factor, which, inverses)
        return inverses

    def chosen(self, positions: np.ndarray) -> Chosen | None:
        """The blocks that hold any of the band ``positions`` (int array), as ``Chosen``, or
        None when that is all of them."""
        touched = np.zeros(self.count, dtype=bool)
        touched[self.block_of.take(positions)] = True
        if touched.all():
            return None
        # the same blocks as last asked: the same Chosen (a pile's contacts touch the same
        # mechanisms step after step; making one took 20 us)
        last = self._last_chosen
        if last is not None and np.array_equal(last.touched, touched):
            return last
        self._last_chosen = Chosen(self, touched)
        return self._last_chosen

    def times(self, inverses: np.ndarray, y: np.ndarray) -> np.ndarray:
        """A^-1 y for y (m,) in band order, by the blocks' ``inverses``."""
        return _blocks_times(inverses, y, self.count, self.rows, self.slots)


class Chosen:
    """Some of a band's ``DiagonalBlocks`` (``which``: their numbers, ascending), for a
    product that reads A^-1 y only on their rows: the joints' rows in their blocks, one
    block after another (``positions``: their band positions, in that order; ``renumbered``
    (m,) int32: each band position's place among them, -1 outside), and A^-1 y on them
    for y given on them alone (``times``). The chosen blocks' entries are the band's own:
    the same inverses, the same products, the same bits on the rows read. A pile of 10
    ragdolls whose contacts and limits touched 6-7 of them: a product's blocks 10 -> 6-7,
    and their inverses as many."""

    def __init__(self, blocks: DiagonalBlocks, touched: np.ndarray):
        """``touched`` (count,) bool: the blocks chosen."""
        self.blocks, self.touched, self.which = blocks, touched, np.flatnonzero(touched)
        self.count, self.rows = self.which.shape[0], blocks.rows
        sizes = blocks.sizes.take(self.which)
        # (each block is a run of band positions: theirs, in order)
        self.positions = np.flatnonzero(touched.take(blocks.block_of))
        self.renumbered = np.full(blocks.block_of.shape[0], -1, dtype=np.int32)
        self.renumbered[self.positions] = np.arange(self.positions.shape[0], dtype=np.int32)
        self.slots = _padded_slots(np.cumsum(sizes) - sizes, sizes, self.rows)

    def inverses(self, factor: np.ndarray) -> np.ndarray:
        """(count, rows, rows): the chosen blocks' inverses (``DiagonalBlocks.inverses``)."""
        return self.blocks.inverses(factor, self)

    def times(self, inverses: np.ndarray, y: np.ndarray) -> np.ndarray:
        """A^-1 y on the chosen blocks' rows, for y (len(positions),) on them alone."""
        return _blocks_times(inverses, y, self.count, self.rows, self.slots)


def _padded_slots(starts, sizes, b):
    """(positions, padded slots) of the real rows of blocks at ``starts`` of ``sizes``,
    padded to b rows each, or None when none is padded (a reshape will do)."""
    slots = (starts[:, None] + np.arange(b)[None]).ravel()
    real = (np.arange(b)[None] < sizes[:, None]).ravel()
    return None if real.all() else (slots.compress(real), np.flatnonzero(real))


def _blocks_times(inverses, y, c, b, slots):
    """The c blocks' ``inverses`` (c, b, b) times y, whose real rows are ``slots``
    (``_padded_slots``)."""
    if slots is None:
        return np.matmul(inverses, y.reshape(c, b, 1)).reshape(-1)
    band, padded = slots
    yp = np.zeros(c * b)
    yp[padded] = y.take(band)
    out = np.empty_like(y)
    out[band] = np.matmul(inverses, yp.reshape(c, b, 1)).reshape(-1).take(padded)
    return out


def _power_of_two(n: int) -> int:
    """The least power of two >= n (n >= 1)."""
    return 1 << (n - 1).bit_length()


class TriangularInverses:
    """The inverses of a batch of lower triangular matrices (count, b, b), b a power of two,
    whose entries are gathered from a flat array of values by ``source`` (count, b, b) int:
    by doubling. The inverses of the 1 x 1 diagonal blocks are reciprocals, and each level
    joins pairs of the last level's blocks, [[L11, 0], [L21, L22]]^-1 = [[X11, 0], [-X22 L21
    X11, X22]], all pairs of all matrices in one batched product: log2(b) levels of a few
    numpy calls each. The gathers of the diagonal and of each level's L21 blocks are made
    once, here. (Before: halves by recursion down to 16 x 16 leaves inverted by numpy's
    batched inverse, an LU's that knows nothing of the triangle, at 15 us a 13 x 13 matrix
    on a machine whose numpy calls cost ~0.5 us; a 10-ragdoll pile's ten 54 x 54 blocks
    took 0.82 ms that way, 0.46 ms this way. LAPACK's triangular inverse takes one matrix a
    call.)"""

    def __init__(self, source: np.ndarray):
        count, b, _ = source.shape
        self.count, self.size = count, b
        at = np.arange(b)
        self.diagonal = np.ascontiguousarray(source[:, at, at])
        self.corners = []                  # (count, k, h, h) sources of the L21 blocks
        h = 1
        while h < b:
            k = b // (2 * h)
            pairs = np.diagonal(source.reshape(count, k, 2 * h, k, 2 * h), axis1=1, axis2=3)
            self.corners.append(np.ascontiguousarray(np.moveaxis(pairs[:, h:, :h], 3, 1)))
            h *= 2
        self.levels = len(self.corners)
        # the sources of all levels' L21 blocks of the matrices ``which``, one level after
        # another, for one gather: (which, sources), the last made (a pile's contacts touch
        # the same mechanisms step after step: the same ``which``, linsolve.Chosen's)
        self._sources = (None, self._level_sources(None))
        # each level's joined blocks, by the number of matrices made: their upper right
        # blocks are zero once and for all (made when first asked, then written over)
        self._joined = {}

    def of(self, values: np.ndarray, which: np.ndarray | None = None) -> np.ndarray:
        """(count, b, b): the inverses of the matrices whose entries ``values`` holds; of
        the matrices ``which`` (their numbers) alone when given (each made as among all).
        The answer is a buffer of this object's, written over by the next call."""
        diagonal = self.diagonal if which is None else self.diagonal.take(which, axis=0)
        made_for, sources = self._sources
        if made_for is not which:
            sources = self._level_sources(which)
            self._sources = (which, sources)
        c, b = diagonal.shape[0], self.size
        X = np.reciprocal(values.take(diagonal)).reshape(c, b, 1, 1)
        # (the negated L21 blocks of every level in one gather, each level's contiguous)
        L21 = np.negative(values).take(sources)
        joined = self._joined.get(c)
        if joined is None:
            joined = self._joined[c] = [np.zeros((c, b // (2 * h), 2 * h, 2 * h))
                                        for h in (1 << level for level in range(self.levels))]
        start, h = 0, 1
        for Y in joined:
            k = b // (2 * h)
            Y[:, :, :h, :h] = X[:, 0::2]
            Y[:, :, h:, h:] = X[:, 1::2]
            corner = L21[start:start + c * k * h * h].reshape(c, k, h, h)
            # (into a contiguous product first: matmul into the strided corner took longer)
            Y[:, :, h:, :h] = np.matmul(np.matmul(X[:, 1::2], corner), X[:, 0::2])
            X, start, h = Y, start + c * k * h * h, 2 * h
        return X.reshape(c, b, b)

    def _level_sources(self, which):
        """The L21 sources of the matrices ``which`` (None: all), flat, level after level."""
        if not self.corners:
            return np.zeros(0, dtype=np.intp)
        return np.concatenate([(corner if which is None else corner.take(which, axis=0)).ravel()
                               for corner in self.corners])


class SparseLU:
    def __init__(self, graph: sp.csr_matrix):
        coo = graph.tocoo()
        self.m = graph.shape[0]
        keys = np.sort(coo.col.astype(np.int64) * self.m + coo.row)     # column-major order
        keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
        self.keys = keys
        self.indices = (keys % self.m).astype(np.int32)
        cols = keys // self.m
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(cols, minlength=self.m))])
        self.indptr = self.indptr.astype(np.int32)
        self.size = keys.shape[0]

    def slots(self, ri, rj):
        return ri, rj, np.ones(ri.shape[0], dtype=bool)

    def flat_index(self, si, sj):
        return np.searchsorted(self.keys, sj.astype(np.int64) * self.m + si)

    def diagonal_index(self):
        d = np.arange(self.m, dtype=np.int64)
        return np.searchsorted(self.keys, d * self.m + d)

    def factor(self, data: np.ndarray):
        a = sp.csc_matrix((data, self.indices, self.indptr), shape=(self.m, self.m))
        try:
            return splu(a, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                        options={"SymmetricMode": True})
        except RuntimeError as exc:
            raise SingularSystemError(f"constraint matrix is singular: {exc}") from None

    def solve(self, factor, rhs: np.ndarray) -> np.ndarray:
        return factor.solve(rhs)
