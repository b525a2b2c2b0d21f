"""One bounded solve for equality rows and rows that push only one way or only so hard.

Find lambda with  lo <= lambda <= hi  minimising  1/2 lambda^T A lambda - rhs^T lambda,
i.e. the mixed LCP of contacts, friction, limits and motors together with the joints (whose
bounds are infinite). Friction rows have |lambda_t| <= mu * lambda_n of their contact.

Method: block principal pivoting (an active-set method). Each iteration fixes the rows on a
bound and solves the rest *exactly* with one sparse factorisation:
- a row clamped at a constant bound becomes lambda_i = bound;
- a sliding friction row becomes lambda_t = +-mu lambda_n, kept as an equation so the friction
  follows the normal force it depends on within the same solve (the matrix is then no longer
  symmetric and SuperLU factorises it; without sliding rows the symmetric system goes to the
  banded Cholesky / SuperLU of ``linsolve`` with clamped rows as identity rows).
Then every free row that left its box is clamped and every clamped row whose gradient points
into the box is freed, all at once. Warm started from the previous step's active set it
usually ends in one or two factorisations; equality rows keep the exactness of a direct solve.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu


def solve_bounded(pattern, J, JM, rhs, lo, hi, *, cfm, friction_normal=None, mu=None,
                  lam0=None, max_iterations=20):
    """Solve the bounded problem described in the module docstring.

    pattern: an ``assembly.Pattern`` for the rows; J, JM: per-side blocks (2m, 6) of J and
    M^-1 J; rhs, lo, hi (m,); cfm: scalar or (m,) diagonal regularisation;
    friction_normal (m,) int: index of the normal row whose force bounds this friction row
    (-1 for other rows); mu (m,) friction coefficients; lam0 (m,) warm start.
    Returns (lambda, iterations).
    """
    m = rhs.shape[0]
    cfm = np.broadcast_to(np.asarray(cfm, dtype=float), (m,))
    contrib = np.einsum("ij,ij->i", JM[pattern.side_i], J[pattern.side_j])
    ri, rj = pattern.side_i // 2, pattern.side_j // 2
    A = _full_matrix(ri, rj, contrib, m, mirror=pattern.half_stored)
    A_reg = (A + sp.diags(cfm)).tocsr()
    if friction_normal is None:
        friction_normal = np.full(m, -1)
    is_fric = friction_normal >= 0
    normal_of = np.where(is_fric, friction_normal, 0)
    mu = np.zeros(m) if mu is None else mu
    lam = np.zeros(m) if lam0 is None else np.clip(lam0.astype(float), lo, hi)

    def bounds(lam):
        limit = mu * np.maximum(lam[normal_of], 0.0)
        return np.where(is_fric, -limit, lo), np.where(is_fric, limit, hi)

    blo, bhi = bounds(lam)
    scale = max(np.abs(rhs).max(initial=0.0), 1e-12)
    tol = 1e-9 * scale
    at_lo = np.isfinite(blo) & (lam <= blo + tol)
    at_hi = np.isfinite(bhi) & (lam >= bhi - tol) & ~at_lo
    if lam0 is None or not np.any(lam0):
        at_lo = np.isfinite(lo) & ~is_fric & (lo >= 0)      # start with contacts open
        at_hi = np.zeros(m, dtype=bool)
    best = None
    for iteration in range(1, max_iterations + 1):
        lam = _solve_active_set(pattern, A, A_reg, contrib, ri, rj, rhs, lo, hi, cfm, is_fric,
                                normal_of, mu, at_lo, at_hi)
        blo, bhi = bounds(lam)
        gradient = A_reg @ lam - rhs
        slack = tol + 1e-9 * np.abs(blo) + 1e-9 * np.abs(bhi)
        free = ~(at_lo | at_hi)
        new_lo = (free & (lam < blo - slack)) | (at_lo & (gradient >= -tol))
        new_hi = (free & (lam > bhi + slack)) | (at_hi & (gradient <= tol))
        new_hi &= ~new_lo
        violation = np.sum(np.maximum(blo - lam, 0) + np.maximum(lam - bhi, 0))
        if best is None or violation < best[0]:
            best = (violation, lam)
        if np.array_equal(new_lo, at_lo) and np.array_equal(new_hi, at_hi):
            break
        at_lo, at_hi = new_lo, new_hi
    else:
        lam = best[1]
    blo, bhi = bounds(lam)
    return np.clip(lam, blo, bhi), iteration


def _solve_active_set(pattern, A, A_reg, contrib, ri, rj, rhs, lo, hi, cfm, is_fric, normal_of,
                      mu, at_lo, at_hi):
    """lambda for one active set (rows on a bound held there, the rest solved exactly)."""
    m = rhs.shape[0]
    sliding = (at_lo | at_hi) & is_fric
    fixed_rows = (at_lo | at_hi) & ~is_fric
    fixed = np.where(at_lo, lo, np.where(at_hi, hi, 0.0)) * fixed_rows
    if not sliding.any():
        free = ~fixed_rows
        keep = free[ri] & free[rj]
        fac = pattern.factorizer
        data = np.bincount(pattern.target, weights=contrib * keep, minlength=fac.size)
        data[pattern.diagonal] += np.where(free, cfm, 1.0)
        b = np.where(free, rhs - A @ fixed, fixed)
        lam = fac.solve(fac.factor(data), b)
        lam[fixed_rows] = fixed[fixed_rows]
        return lam
    # non-symmetric system: free rows keep A's equations, clamped rows become constraints
    free = ~(fixed_rows | sliding)
    sign = np.where(at_hi, 1.0, -1.0)
    eq_rows = sp.diags(free.astype(float)) @ A_reg
    idx = np.flatnonzero(fixed_rows | sliding)
    s_idx = np.flatnonzero(sliding)
    cons = sp.csr_matrix(
        (np.concatenate([np.ones(idx.size), -sign[s_idx] * mu[s_idx]]),
         (np.concatenate([idx, s_idx]), np.concatenate([idx, normal_of[s_idx]]))),
        shape=(m, m))
    M = (eq_rows + cons).tocsc()
    b = np.where(free, rhs, np.where(fixed_rows, fixed, 0.0))
    try:
        return splu(M).solve(b)
    except RuntimeError:   # singular: a sliding row on a contact that also slides to zero
        return np.linalg.lstsq(M.toarray(), b, rcond=None)[0]


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
