"""One bounded solve for equality rows and rows that push only one way or only so hard.

Find lambda with  lo <= lambda <= hi  minimising  1/2 lambda^T A lambda - rhs^T lambda,
i.e. the mixed LCP of contacts, friction, limits and motors together with the joints (whose
bounds are infinite). Friction rows have hi = -lo = mu * lambda_normal of their contact.

Method: block principal pivoting (an active-set method). Each iteration fixes the clamped
rows at their bounds and solves the free rows *exactly* with one sparse factorisation of A in
which the clamped rows are replaced by identity rows (same sparsity, still SPD, so the banded
Cholesky / SuperLU of ``linsolve`` apply). Then every free row that left its box is clamped
and every clamped row whose gradient points into the box is freed, all at once. Warm started
from the previous step's active set, it usually ends in one or two factorisations; the
equality rows keep the exactness of a direct solve (no Gauss-Seidel sweep).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def solve_bounded(pattern, J, JM, rhs, lo, hi, *, cfm, friction_normal=None, mu=None,
                  lam0=None, max_iterations=16):
    """Solve the bounded problem described in the module docstring.

    pattern: an ``assembly.Pattern`` for the rows; J, JM: per-side blocks (2m, 6) of J and
    M^-1 J; rhs, lo, hi (m,); cfm: scalar or (m,) diagonal regularisation;
    friction_normal (m,) int: index of the normal row whose force bounds this friction row
    (-1 for other rows); mu (m,) friction coefficients; lam0 (m,) warm start.
    Returns (lambda, iterations).
    """
    m = rhs.shape[0]
    contrib = np.einsum("ij,ij->i", JM[pattern.side_i], J[pattern.side_j])
    ri, rj = pattern.side_i // 2, pattern.side_j // 2
    A = _full_matrix(ri, rj, contrib, m, mirror=pattern.half_stored)
    diag = A.diagonal() + cfm
    if friction_normal is None:
        friction_normal = np.full(m, -1)
    fric = np.flatnonzero(friction_normal >= 0)
    lo, hi = lo.astype(float).copy(), hi.astype(float).copy()
    lam = np.zeros(m) if lam0 is None else lam0.astype(float).copy()

    def refresh_friction_bounds(lam):
        if fric.size:
            limit = mu[fric] * np.maximum(lam[friction_normal[fric]], 0.0)
            lo[fric], hi[fric] = -limit, limit

    refresh_friction_bounds(lam)
    at_lo = np.isfinite(lo) & (lam <= lo)
    at_hi = np.isfinite(hi) & (lam >= hi) & ~at_lo
    scale = max(np.abs(rhs).max(initial=0.0), 1e-12)
    tol = 1e-9 * scale
    fac = pattern.factorizer
    for iteration in range(1, max_iterations + 1):
        clamped = at_lo | at_hi
        fixed = np.where(at_lo, lo, np.where(at_hi, hi, 0.0))
        free = ~clamped
        keep = free[ri] & free[rj]
        data = np.bincount(pattern.target, weights=contrib * keep, minlength=fac.size)
        data[pattern.diagonal] += np.where(free, cfm, 1.0)
        b = np.where(free, rhs - A @ fixed, fixed)
        lam = fac.solve(fac.factor(data), b)
        lam[clamped] = fixed[clamped]
        refresh_friction_bounds(lam)
        gradient = A @ lam + cfm * lam - rhs
        new_lo = (free & (lam < lo - tol)) | (at_lo & (gradient >= -tol))
        new_hi = (free & (lam > hi + tol)) | (at_hi & (gradient <= tol))
        new_hi &= ~new_lo
        # friction bounds move with the normal force: a clamped friction row stays on its bound
        if np.array_equal(new_lo, at_lo) and np.array_equal(new_hi, at_hi):
            break
        at_lo, at_hi = new_lo, new_hi
    lam = np.clip(lam, lo, hi)
    return lam, iteration


def _full_matrix(ri, rj, values, m, mirror: bool) -> sp.csr_matrix:
    """Symmetric A (CSR) from contributions (ri, rj, value); with ``mirror`` they hold each
    off-diagonal pair once (half storage) and are mirrored."""
    if not mirror:
        return sp.csr_matrix((values, (ri, rj)), shape=(m, m))
    off = ri != rj
    rows = np.concatenate([ri, rj[off]])
    cols = np.concatenate([rj, ri[off]])
    vals = np.concatenate([values, values[off]])
    return sp.csr_matrix((vals, (rows, cols)), shape=(m, m))
