"""Factorising the symmetric positive definite A = J M^-1 J^T + R.

Two storage layouts, chosen once per sparsity pattern:

- ``BandedCholesky``: rows reordered by reverse Cuthill-McKee, A kept as a band, factorised by
  LAPACK's banded Cholesky (dpbtrf). Chains, trees, ragdolls and small loops have a narrow
  band after reordering, and then this costs O(m b^2) with almost no Python overhead.
- ``SparseLU``: for wide bands (e.g. large contact piles), SuperLU on a compressed sparse
  column matrix whose structure is fixed and whose values are refilled each step.

Both take the values of A in their own flat storage (see ``Pattern``) and solve in the
original row order.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack
from scipy.sparse.csgraph import reverse_cuthill_mckee
from scipy.sparse.linalg import splu

# Above this much band work (m * bandwidth^2) SuperLU's fill-reducing order wins (measured
# with tools/bench on contact piles; chains and ragdolls stay far below it).
BANDED_WORK_LIMIT = 4e6


class SingularSystemError(np.linalg.LinAlgError):
    pass


def make_factorizer(graph: sp.csr_matrix):
    """Pick the storage for the symmetric pattern ``graph`` (m x m, any values)."""
    m = graph.shape[0]
    order = reverse_cuthill_mckee(graph, symmetric_mode=True).astype(np.intp)
    pos = np.empty(m, dtype=np.intp)
    pos[order] = np.arange(m)
    coo = graph.tocoo()
    bandwidth = int(np.max(np.abs(pos[coo.row] - pos[coo.col]), initial=0))
    if m * bandwidth**2 <= BANDED_WORK_LIMIT:
        return BandedCholesky(order, pos, bandwidth)
    return SparseLU(graph)


class BandedCholesky:
    def __init__(self, order: np.ndarray, pos: np.ndarray, bandwidth: int):
        self.order, self.pos, self.bandwidth = order, pos, bandwidth
        self.m = order.shape[0]
        self.size = self.m * (bandwidth + 1)

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
            raise SingularSystemError(f"constraint matrix is not positive definite (row {info})")
        return c

    def solve(self, factor, rhs: np.ndarray) -> np.ndarray:
        # gathers by take (numpy's fancy indexing and scatters are several times slower); the
        # gathered right-hand side is a fresh array, so LAPACK may solve in it
        x, info = lapack.dpbtrs(factor, rhs.take(self.order, axis=0), lower=1, overwrite_b=1)
        return x.take(self.pos, axis=0)            # pos is the inverse of order


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
