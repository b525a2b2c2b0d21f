"""The bounded solve without factorising the contact rows: joints eliminated exactly, bounded
rows by accelerated projected gradients (with friction) or a projected conjugate-gradient
method (MPRGP, without), all in body space.

The problem is the one of ``bounded.solve_bounded``: equality rows E (the joints, bounds
infinite) and bounded rows B (contact normals lambda >= 0, friction |lambda_t| <= mu lambda_n,
limits, motors), with A = J M^-1 J^T + cfm. Here:

* The equality rows are eliminated with the joints' own factorisation of A_EE (the banded
  Cholesky that the step computes anyway for the seed equation): lambda_E = A_EE^-1 (r_E -
  A_EB lambda_B). The bounded rows then see the Schur complement S = A_BB - A_BE A_EE^-1 A_EB,
  i.e. the contacts push on the mechanism *with* its joints, and at the end lambda_E is that
  exact solve given lambda_B: the joint rows keep the exactness of a direct solve.
* S is never formed. J (m x 6N) and M^-1 J^T (6N x m) are two sparse matrices with 12 entries
  a row, so S x = J_B (u - W_E A_EE^-1 J_E u), u = M^-1 J_B^T x: a few sparse products and one
  banded back-substitution, linear in the rows. With joints the coupling matrix J_B W_E is
  formed once per solve (without the exact zeros of limit rows and static bodies), so a
  product is three sparse products (W_B x, [J_B; J_E] u, J_B W_E y) and the banded solve.
  Contacts alone, a solve expected to take its whole budget leaves J's and W's exact zeros
  out too (a sphere's normal rows have no torque: a third of 1000 poured spheres' entries).
  Among many small mechanisms (a pile of ragdolls), a solve expected to take its whole budget
  (the last one did not finish) applies A_EE^-1 by the inverses of the band's diagonal blocks
  instead (``linsolve.DiagonalBlocks``): a 10-ragdoll pile's product 21 -> 11 us, for 0.2-0.4 ms
  of inverses a solve.
* With friction, |lambda_t| <= mu lambda_n bounds each friction row by its own normal
  force: min 1/2 x^T (S + R) x - b^T x over that box, whose friction bounds are the normal
  forces of the solution (the fixed point of the direct solver's friction rounds), is solved
  by Nesterov-accelerated projected gradients with gradient restart, every projection onto
  the box of the normal forces it has just found (see ``_accelerated_projection``: it
  converges where rounds of fixed bounds cycle, and keeps friction in step with the normal
  forces throughout). First, unless the last step's solve did not finish (``SolverMemory``),
  a few MPRGP iterations on the box of the warm start's normal forces (``_held_boxes``):
  they finish a resting pile, whose box stays put.
* Without friction (impacts, a mechanism's limits and motors alone) the box is fixed: the QP
  min 1/2 x^T (S + R) x - b^T x,  lo <= x <= hi  is solved by Dostal's
  MPRGP (modified proportioning with reduced gradient projections): conjugate-gradient steps
  on the free rows, proportioning steps that free rows whose gradient points into the box, and
  when CG would cross a bound, the CG step projected onto the box if it lowers the objective
  (in a pile many rows reach their bounds at once), else MPRGP's expansion step. While rows
  keep reaching bounds, the next step is the projected gradient step of Barzilai-Borwein
  length (s^T y / y^T y of the last step) if it descends: one product instead of the
  projected CG step's two; a step that reaches no bound hands back to CG. It converges
  at the rate of CG (sqrt of the condition number, not the condition number as Jacobi/Gauss-
  Seidel do), which is what nearly hard impacts need. Every step is a descent.
* Rows are scaled by the diagonal of A_BB (Jacobi preconditioning; boxes stay boxes). A
  solve cut short by the budget is never worse than no impulses at all.
* A solve expected to take its whole budget over many rows works on a working set: the
  one-sided rows that start at zero, well beyond their target (speculative contacts that
  are still closing slowly or opening), are left out with their friction rows until a check
  after the solve shows that they would pull in (``_working_set``). 1000 poured spheres:
  a quarter of the rows left out, 8 checks in 433 solves bringing rows in, a step 13.3-13.5
  -> 11.4-11.5 ms.
* Stopping: every row within VELOCITY_TOLERANCE (m/s; divided by h for forces) plus
  RELATIVE_TOLERANCE of its right-hand side, or MAX_ITERATIONS products. Warm started from the
  last step (contacts by feature key, or position, see ``contact_rows.positional_warm_start``;
  limits and motors by row), a resting pile needs a handful of iterations; violent phases (a
  pile being hit, 1000 spheres poured) use the budget.

Work per iteration: one product and ~20 vector operations (MPRGP: ~30 and one or two
products), no Python loop over rows,
bodies or contacts; the operations are plain numpy/scipy in a fixed order (dot products
without BLAS threads), so the result is bitwise reproducible. The vector operations are
branch-free (min/max against masks, not np.where: on the scattered masks of a pile np.where
cost several times more), and the products call scipy's CSR/CSC kernels directly: with 10^4
rows the products and the vector operations take about half the time each; with a few hundred
(a ragdoll pile) the per-call overhead and the joints' banded solve dominate. So the vectors of
an iteration are preallocated buffers written by the ufuncs' out, the masks are turned into
0/1 floats once (a bool operand costs a cast in every product), and reductions and dot
products take numpy's cheapest entry points (argmax, count_nonzero, ndarray.dot).
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack

from .assembly import COMPONENT_ROWS, Scatter, row_groups, side_blocks_and_inverse_mass
from .bounded import CONTACT_SOFTNESS
from .linsolve import BandedCholesky
from .math3d import clip as _clip_ufunc


# scipy's own CSR/CSC kernels (as assembly and stiffness use them): without the sparse
# operator's dispatch, a few microseconds a call that the small products of a ragdoll pile notice
from scipy.sparse._sparsetools import csc_matvec as _csc_matvec
from scipy.sparse._sparsetools import csr_matmat as _csr_matmat
from scipy.sparse._sparsetools import csr_matmat_maxnnz as _csr_matmat_maxnnz
from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
from scipy.sparse._sparsetools import csr_tocsc as _csr_tocsc

VELOCITY_TOLERANCE = 1e-6   # m/s (rad/s): how far a row may miss its velocity target ...
RELATIVE_TOLERANCE = 1e-3   # ... plus this fraction of its right-hand side
MAX_ITERATIONS = 60       # iterations (products) per solve
# the accelerated projection's step is 1 / (margin est): est is from below, and a step past
# 2 / ||s A s|| diverges
WARM_NORM_MARGIN = 1.1
COLD_NORM_MARGIN = 1.6
# MPRGP iterations on the box of the current normal forces before it is moved to the normal
# forces found, for at most MPRGP_ROUNDS boxes; if the box still moves (or moves by more than
# MOVING_BOX of the largest multiplier at once), the accelerated projection takes over
ROUND_ITERATIONS = 5
MPRGP_ROUNDS = 2
MOVING_BOX = 1e-2


def _dot(a, b):
    """a . b, single-threaded: OpenBLAS threads its ddot above 10^4 entries, and on a busy
    machine those threads spun for whole seconds (seen on the 1000-sphere bin), so long
    vectors go to BLAS in pieces of 8192 entries (einsum's own loop, used before, took twice
    as long). (A given size always takes the same path: runs stay bitwise reproducible.)"""
    return _dot_short(a, b) if a.shape[0] <= 8192 else _dot_long(a, b)


def _dot_short(a, b):
    """_dot for at most 8192 entries (ndarray.dot: the BLAS call of @ at half its overhead)."""
    return float(a.dot(b))


def _dot_long(a, b):
    """_dot for more than 8192 entries: BLAS on pieces of 8192 (half einsum's time)."""
    total = 0.0
    for i in range(0, a.shape[0], 8192):
        total += float(a[i:i + 8192].dot(b[i:i + 8192]))
    return total


class BodySpace:
    """Rows (a, b, Ja, Jb) as two sparse matrices: J (m x 6N) and W = M^-1 J^T (6N x m).

    Both share the layout of ``assembly.Scatter`` (12 entries a row: body a's six lanes, then
    body b's). ``times_J`` and ``times_W`` run scipy's kernels on the raw arrays, and
    ``operator`` gives the solver's pruned matrices as ``Compressed``. The scipy matrices ``J``
    and ``W`` (to inspect, or to check against dense algebra) are built when first asked for:
    building them checks their arrays, ~100 us for a pyramid's 1200 contact rows."""

    def __init__(self, a, b, Ja, Jb, inv_mass, Iinv, n):
        m = a.shape[0]
        self.m, self.n = m, n
        # a contact block's three rows of a contact share their bodies: gathered once
        group = row_groups(a, b) if m >= COMPONENT_ROWS else 1
        self.layout = Scatter(a, b, n, group)
        Jd, Md = side_blocks_and_inverse_mass(Ja, Jb, a, b, inv_mass, Iinv, group)
        self.diagonal = np.einsum("ij,ij->i", Jd, Md)
        self._J, self._M = Jd, Md
        self._inverse_mass = (inv_mass, Iinv)
        self._sides = np.stack([a, b], axis=1)
        self._matrices = None

    def _sparse(self):
        if self._matrices is None:
            shape = (self.m, 6 * self.n)
            cols, indptr = self.layout.indices, self.layout.indptr
            J = sp.csr_matrix((self._J.ravel(), cols, indptr), shape=shape)
            # W as the transpose of M^-1 J^T's rows: compressed by columns, no conversion
            W = sp.csr_matrix((self._M.ravel(), cols, indptr), shape=shape).T
            self._matrices = (J, W)
        return self._matrices

    @property
    def J(self):
        """J (m x 6N), CSR."""
        return self._sparse()[0]

    @property
    def W(self):
        """M^-1 J^T (6N x m), CSC."""
        return self._sparse()[1]

    def times_J(self, u):
        """J u (m,) for stacked body velocities u (6N,)."""
        return self.layout.times(self._J, u)

    def times_W(self, x):
        """M^-1 J^T x (6N,) for row multipliers x (m,)."""
        return self.layout.transpose_times(self._M, x)

    def operator(self, scale=None, order=None, moves=None):
        """(diag(scale) J, M^-1 J^T diag(scale)) of the rows taken in ``order`` (indices; None:
        all, as they are; ``scale`` is per row taken), without the entries that cannot
        contribute to J M^-1 J^T x (exact zeros, bodies that do not move; ``moves`` (N,) bool,
        when the caller has it): the matrices of the solver's products, as CSR and CSC
        ``Compressed``."""
        Jd, Md, cols = self._J, self._M, self.layout.columns
        if order is not None:
            Jd, Md, cols = Jd.take(order, axis=0), Md.take(order, axis=0), cols.take(order, axis=0)
        if scale is not None:
            Jd = Jd * scale[:, None]
            Md = Md * scale[:, None]
        # a body without inverse mass and inertia (static) has zero rows in W
        if moves is None:
            moves = bodies_that_move(*self._inverse_mass)
        sides = self._sides if order is None else self._sides.take(order, axis=0)
        m = sides.shape[0]
        keep_j = (Jd.reshape(m, 2, 6) != 0) & moves.take(sides)[:, :, None]
        keep_m = Md != 0
        J = _compressed_rows(keep_j.reshape(m, 12), cols, Jd, 6 * self.n)
        Wt = _compressed_rows(keep_m, cols, Md, 6 * self.n)    # W^T in CSR is W in CSC
        return J, Compressed(6 * self.n, m, Wt.indptr, Wt.indices, Wt.data)

    def matrices(self):
        """(J, M^-1 J^T) as CSR and CSC ``Compressed`` on the rows' own layout, exact zeros
        included (no copies: what ``times_J`` and ``times_W`` multiply by)."""
        L, width = self.layout, 6 * self.n
        return (Compressed(self.m, width, L.indptr, L.indices, self._J.reshape(-1)),
                Compressed(width, self.m, L.indptr, L.indices, self._M.reshape(-1)))

    def impulse(self, lam):
        """M^-1 J^T lambda as linear and angular parts (N, 3) each."""
        u = self.times_W(lam).reshape(-1, 6)
        return u[:, :3], u[:, 3:]


class Compressed(NamedTuple):
    """A sparse matrix as the leading arguments of scipy's csr_matvec (CSR: indptr over
    rows) or csc_matvec (CSC: over columns), 32-bit indices. The solver's matrices are used
    only by those kernels: no scipy matrix objects, whose construction checks its arrays
    (five a solve: 0.2 ms of a ragdoll pile's 0.35 ms setup) and whose products dispatch."""
    rows: int
    cols: int
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray


def _csr_times(M: Compressed, x):
    """M x for M in CSR."""
    out = np.zeros(M.rows)
    _csr_matvec(*M, x, out)
    return out


def _csc_times(M: Compressed, x):
    """M x for M in CSC."""
    out = np.zeros(M.rows)
    _csc_matvec(*M, x, out)
    return out


def _csr_csc_product(A: Compressed, B: Compressed) -> Compressed:
    """A B in CSR for A in CSR and B in CSC: B turned to CSR, then scipy's CSR product
    kernels (what ``A @ B`` of scipy matrices runs, without the matrices)."""
    Bp = np.empty(B.rows + 1, dtype=np.int32)
    Bj = np.empty(B.indices.shape[0], dtype=np.int32)
    Bx = np.empty(B.indices.shape[0])
    _csr_tocsc(B.cols, B.rows, B.indptr, B.indices, B.data, Bp, Bj, Bx)
    nnz = _csr_matmat_maxnnz(A.rows, B.cols, A.indptr, A.indices, Bp, Bj)
    Cp = np.empty(A.rows + 1, dtype=np.int32)
    Cj = np.empty(nnz, dtype=np.int32)
    Cx = np.empty(nnz)
    _csr_matmat(A.rows, B.cols, A.indptr, A.indices, A.data, Bp, Bj, Bx, Cp, Cj, Cx)
    nnz = Cp[-1]                         # (the kernel leaves out entries that sum to zero)
    return Compressed(A.rows, B.cols, Cp, Cj[:nnz], Cx[:nnz])


def _compressed_rows(keep, columns, values, width):
    """The CSR matrix (m x width) of the entries ``values`` (m, 12) in ``columns`` (m, 12)
    where ``keep`` (m, 12 bool)."""
    at = np.flatnonzero(keep)
    # the rows' counts by a matrix-vector product: a searchsorted of the row starts, or
    # numpy's count along the short axis, took about four times as long for 10^4 rows
    indptr = np.zeros(keep.shape[0] + 1, dtype=np.int32)
    indptr[1:] = np.cumsum(keep.astype(float) @ _TWELVE_ONES)
    return Compressed(keep.shape[0], width, indptr, columns.reshape(-1).take(at),
                      values.reshape(-1).take(at))


_TWELVE_ONES = np.ones(12)


def bodies_that_move(inv_mass, Iinv):
    """(N,) bool: the bodies with inverse mass or inertia (the static ones have neither)."""
    return (inv_mass > 0) | (Iinv != 0).any(axis=(1, 2))


class _Reduced:
    """z -> diag(s) (S + R) diag(s) z for the bounded rows (Jacobi-scaled), with the equality
    rows eliminated; ``rows`` (indices into B's rows, in order): a working set of them (see
    ``_working_set``, long solves only), None: all. Built once per solve (and row set): J_B
    and W_B (scaled and pruned, but for contacts alone in a short solve), with joints J_E
    and the coupling matrix J_B W_E (three sparse products and one banded solve per product
    instead of four and one; forming A_BB and J_E W_B as well saved a product but cost more in
    the entries of those two and in the sparse matrix product); the banded factorisation's
    row order is folded into J_E and J_B W_E."""

    def __init__(self, B: BodySpace, cfm, s, E: BodySpace | None, factorizer, factor,
                 long_solve=False, rows=None):
        self.products = 0
        self.d = s * cfm * s
        self.E = E
        self.n = B.n                       # bodies: body-space vectors have 6 n entries
        m = B.m if rows is None else rows.shape[0]
        # scratch for the products' vector operations (one product per MPRGP iteration)
        self._diagonal = np.empty(m)
        if E is None:
            # contacts alone: B's own J and W (``matrices``), the scaling on the vectors
            # (folding it into their entries saved ~3 % of an iteration of 1000 marbles, but
            # its round-off alone sent a 55-box pyramid (bench contacts) into a resting state
            # that takes ~50 iterations a step instead of 1). A solve expected to take its
            # whole budget uses them without their exact zeros (``operator``; 1000 poured
            # spheres: a third of the entries, the spheres' normal rows' torques and the
            # walls' sides; a product 123 -> 97 us for 0.6 ms of building); the sums are the
            # same bits either way.
            self.s = s
            self._scaled = np.empty(m)
            self.J, self.W = B.operator(order=rows) if long_solve else B.matrices()
            return
        moves = bodies_that_move(*B._inverse_mass)
        J, W = B.operator(s, order=rows, moves=moves)
        self.banded = isinstance(factorizer, BandedCholesky)
        JE, WE = E.operator(order=factorizer.order if self.banded else None, moves=moves)
        # [A_BB; J_E W_B] z as [J_B; J_E] (W_B z) (the J_E rows in the factorisation's
        # order): two products with fewer entries together than A_BB and J_E W_B have (a
        # ragdoll pile: 8.7k against 11.3k), and no sparse matrix product to form them;
        # R is added on the vectors
        self.W = W
        self.J = J                         # diag(s) J_B, for rows_from_bodies
        self.JJ = Compressed(J.rows + JE.rows, J.cols,
                             np.concatenate([J.indptr, JE.indptr[1:] + J.indptr[-1]]),
                             np.concatenate([J.indices, JE.indices]),
                             np.concatenate([J.data, JE.data]))
        self.D = _csr_csc_product(J, WE)   # J_B W_E ...
        np.negative(self.D.data, out=self.D.data)   # ... negated: added onto A z in place
        self.mb = m
        self.factorizer, self.factor = factorizer, factor
        # a solve expected to take its whole budget (long_solve) among many small mechanisms
        # applies A_EE^-1 by its diagonal blocks' inverses (linsolve.DiagonalBlocks)
        self.blocks = factorizer.blocks if self.banded and long_solve else None
        self.inverses = None if self.blocks is None else self.blocks.inverses(factor)

    def rows_from_bodies(self, u):
        """diag(s) J_B u (mb,) for body velocities u (6N,)."""
        if self.E is None:                 # (contacts alone: the scaling on the vectors)
            return self.s * _csr_times(self.J, u)
        return _csr_times(self.J, u)

    def bodies_from_rows(self, z):
        """M^-1 J_B^T diag(s) z (6N,)."""
        if self.E is None:
            return _csc_times(self.W, self.s * z)
        return _csc_times(self.W, z)

    def __call__(self, z):
        self.products += 1
        if self.E is None:
            y = _csr_times(self.J, _csc_times(self.W, np.multiply(self.s, z, out=self._scaled)))
            y *= self.s
            y += np.multiply(self.d, z, out=self._diagonal)
            return y
        r = _csr_times(self.JJ, _csc_times(self.W, z))
        y = r[self.mb:]
        if self.inverses is not None:
            y = self.blocks.times(self.inverses, y)
        elif self.banded:
            y = lapack.dpbtrs(self.factor, y, lower=1, overwrite_b=1)[0]
        else:
            y = self.factorizer.solve(self.factor, y)
        out = r[:self.mb]
        _csr_matvec(*self.D, y, out)       # out += (-J_B W_E) y by the kernel itself
        out += np.multiply(self.d, z, out=self._diagonal)
        return out


def solve_iterative(B: BodySpace, rhs, lo, hi, cfm, *, friction_normal=None, mu=None, lam0=None,
                    E: BodySpace | None = None, rhs_e=None, factorizer=None, factor=None,
                    tolerance, relative_tolerance=None, max_iterations=None,
                    softness=CONTACT_SOFTNESS, memory: SolverMemory | None = None,
                    slack=None):
    """Solve the bounded problem of the module docstring.

    B: the bounded rows; rhs, lo, hi (mb,); cfm scalar or (mb,); friction_normal (mb,) int
    index of the bounding normal row (-1 otherwise) and mu (mb,); lam0 (mb,) warm start,
    which the softness is centred on.
    E, rhs_e, factorizer, factor: the equality rows, their right-hand side and the
    factorisation of A_EE + cfm (None when there are none). tolerance: the largest projected
    gradient accepted, in the units of rhs (VELOCITY_TOLERANCE / h for forces over a step h,
    VELOCITY_TOLERANCE for impulses), plus relative_tolerance (default RELATIVE_TOLERANCE)
    times the row's |right-hand side|. softness: the bounded rows' diagonal regularisation
    relative to their own stiffness (bounded.CONTACT_SOFTNESS keeps piles well conditioned;
    impacts, which must pass momentum on whole, use almost none). memory: the World's
    SolverMemory, carried from solve to solve. slack: in the units of rhs, how far beyond its
    target a one-sided row must be at the warm start to be left out of a long solve's
    working set (``_working_set``; None: no working set).
    Returns (lambda_E or None, lambda_B, info dict: iterations, products (of S + R),
    residual (largest projected gradient / tolerance at the end; <= 1: converged), method,
    rows: how many rows the solve worked on, see ``_working_set``).
    """
    mb = B.m
    max_iterations = MAX_ITERATIONS if max_iterations is None else max_iterations
    if friction_normal is None:
        friction_normal = np.full(mb, -1)
    is_fric = friction_normal >= 0
    normal_of = np.where(is_fric, friction_normal, 0)
    mu = np.zeros(mb) if mu is None else mu
    soft = softness * B.diagonal
    cfm = np.broadcast_to(np.asarray(cfm, dtype=float), (mb,)) + soft
    b = rhs
    if E is not None:
        # b_B = r_B - A_BE A_EE^-1 r_E
        b = rhs - B.times_J(E.times_W(factorizer.solve(factor, rhs_e)))
    # rows that move no dynamic body (both sides static) do nothing: held at zero
    dead = B.diagonal <= 1e-12 * B.diagonal.max(initial=0.0)
    lo = np.where(dead, 0.0, lo)
    hi = np.where(dead, 0.0, hi)
    s = 1.0 / np.sqrt(np.where(dead, 1.0, B.diagonal + cfm))  # lambda = s z: unit diagonal
    # a row may miss its target by the absolute tolerance plus a fraction of what it asks for
    rel = RELATIVE_TOLERANCE if relative_tolerance is None else relative_tolerance
    # (a friction row's fraction also counts mu times its normal row's: a friction row asks
    # for zero, and its force is measured against the normal force)
    tol = tolerance + rel * (np.abs(b) + np.where(is_fric, mu * np.abs(b.take(normal_of)), 0.0))
    x = np.zeros(mb) if lam0 is None else np.asarray(lam0, dtype=float)
    if lam0 is not None:        # the softness is centred on the warm start (CONTACT_SOFTNESS)
        b = b + soft * x
    # (after a solve that did not finish, the next is expected to take its budget too)
    long_solve = memory is not None and not memory.settled
    problem = _Problem(B, E, factorizer, factor, s, cfm, s * b, lo / s, hi / s, tol * s,
                       is_fric, normal_of, mu, dead, rel, memory, long_solve)
    z = x / s
    working = _working_set(problem, z, slack) if long_solve and slack is not None else None
    rows = _RowSet(problem) if working is None else working
    z, iterations, residual, method = problem.solve(rows, z, max_iterations)
    if working is not None:
        # rows left out that would pull in join the set, for the rest of the budget and
        # WORKING_SET_ROUND iterations more
        limit = max_iterations + min(WORKING_SET_ROUND, max_iterations)
        pulling, miss = rows.left_out_pulling(z)
        while pulling.any() and iterations < limit:
            rows = rows.joined_by(pulling)
            z, more, residual, method = problem.solve(rows, z, limit - iterations)
            iterations += more
            pulling, miss = rows.left_out_pulling(z)
        residual = max(residual, miss)
    x = s * z
    if memory is not None:
        memory.settled = residual <= 1.0
    lam_e = None
    if E is not None:
        lam_e = factorizer.solve(factor, rhs_e - E.times_J(B.times_W(x)))
    return lam_e, x, {"iterations": iterations, "products": problem.products,
                      "residual": residual, "method": method, "rows": rows.size}


class _Problem:
    """The bounded problem of one solve, scaled (z = lambda / s): what ``solve`` needs to work
    on all of its rows or on a working set of them. c = s b, tol s (the units of the scaled
    gradient), lo / s and hi / s (of z)."""

    def __init__(self, B, E, factorizer, factor, s, cfm, c, lo, hi, tol, is_fric, normal_of,
                 mu, dead, rel, memory, long_solve):
        self.B, self.E, self.factorizer, self.factor = B, E, factorizer, factor
        self.s, self.cfm, self.c, self.lo, self.hi, self.tol = s, cfm, c, lo, hi, tol
        self.is_fric, self.normal_of, self.mu, self.dead, self.rel = is_fric, normal_of, mu, dead, rel
        self.memory, self.long_solve = memory, long_solve
        self.one_sided = (lo == 0.0) & (hi == np.inf) & ~is_fric
        self.products = 0

    def gradient(self, z):
        """(S + R) z - c on every row: one product without pruned matrices (what a working
        set starts from)."""
        self.products += 1
        g = self.s * self.B.times_J(self.eliminated(self.B.times_W(self.s * z)))
        g += self.s * self.cfm * self.s * z
        g -= self.c
        return g

    def eliminated(self, u):
        """Body velocities u (6N,) of bounded rows' impulses, with the joints' response to
        them: u - W_E A_EE^-1 J_E u (u itself without joints), in place."""
        if self.E is not None:
            u -= self.E.times_W(self.factorizer.solve(self.factor, self.E.times_J(u)))
        return u

    def solve(self, rows: _RowSet, z, max_iterations):
        """Solve on ``rows`` with the other rows' z held at 0, from z (mb,), for at most
        max_iterations: (z (mb,), iterations, residual, method)."""
        before = rows.op.products
        zk, *info = _solve_rows(self, rows, z[rows.kept], max_iterations)
        self.products += rows.op.products - before
        if rows.size == z.shape[0]:
            return (zk, *info)
        z = np.zeros(z.shape[0])
        z[rows.kept] = zk
        return (z, *info)


class _RowSet:
    """Rows of a _Problem that a solve works on, with their friction rows' normal rows among
    them and their operator: all rows (left_out None), or all but the rows ``left_out``
    ((mb,) bool, a working set)."""

    def __init__(self, p: _Problem, left_out=None):
        self.problem = p
        if left_out is None:
            self.kept, self.normal_of, rows = slice(None), p.normal_of, None
            self.size = p.B.m
        else:
            self.kept, self.out = np.flatnonzero(~left_out), np.flatnonzero(left_out)
            rows = self.kept
            self.size = rows.shape[0]
            position = np.full(p.B.m, -1)
            position[rows] = np.arange(self.size)
            self.normal_of = np.maximum(position.take(p.normal_of.take(rows)), 0)
        self.op = _Reduced(p.B, p.cfm[self.kept], p.s[self.kept], p.E, p.factorizer, p.factor,
                           long_solve=p.long_solve, rows=rows)
        # (once an operator, if needed; the closure does not hold self: a reference cycle
        # would keep every solve's matrices alive until the garbage collector ran, and a
        # 10-ragdoll pile's step took 5 % longer)
        op, m, memory = self.op, self.size, p.memory
        self.norm = functools.cache(lambda: _norm(op, m, memory))

    def left_out_pulling(self, z):
        """((mb,) bool: the rows left out that would pull in at z (zero on them), beyond
        their tolerance; the worst of their misses over tolerance, 0 if none). One product:
        the set's impulses in body space, then the left-out rows' J."""
        p = self.problem
        p.products += 1
        u = p.eliminated(self.op.bodies_from_rows(z.take(self.kept)))
        out = self.out
        g = p.s.take(out) * p.B.times_J(u).take(out) - p.c.take(out)
        miss = -g / p.tol.take(out)
        pulling_out = p.one_sided.take(out) & (miss > 1.0)
        pulling = np.zeros(p.B.m, dtype=bool)
        pulling[out] = pulling_out
        return pulling, float(miss.compress(pulling_out).max(initial=0.0))

    def joined_by(self, rows):
        """The set with the one-sided ``rows`` (mb,) bool and their friction rows."""
        p = self.problem
        joins = rows | (p.is_fric & rows.take(p.normal_of))
        joins[self.kept] = True
        return _RowSet(p, ~joins)


def _solve_rows(p: _Problem, rows: _RowSet, z, max_iterations):
    """The solve proper on the ``rows`` of the problem, from their z: (z, iterations,
    residual, method)."""
    kept, op, normal_of, mb = rows.kept, rows.op, rows.normal_of, rows.size
    s, c, tol = p.s[kept], p.c[kept], p.tol[kept]
    lo, hi, is_fric, dead = p.lo[kept], p.hi[kept], p.is_fric[kept], p.dead[kept]
    qp = _MPRGP(op, c, lambda: 1.9 / (1.1 * rows.norm()[0]))
    if is_fric.any():
        # |s_t z_t| <= mu s_n z_n: the friction rows' bound per unit of scaled normal force
        ratio = np.where(is_fric & ~dead, p.mu[kept] * s.take(normal_of) / s, 0.0)
        cone = _FrictionBox(lo, hi, is_fric, ratio, normal_of)
        z = cone.project(z, np.empty(mb))
        iterations, residual, settled, method = 0, np.inf, False, ""
        if not p.long_solve:             # (else a violent phase: see SolverMemory)
            z, iterations, residual, settled = _held_boxes(
                qp, cone, z, tol, p.rel, s, is_fric, max_iterations)
            method = "MPRGP"
        if not settled and iterations < max_iterations:
            # the box moves with the normal forces (a pile landing, being poured) or rounds of
            # held boxes cycle (a ragdoll pile): steps that follow it
            z, more, residual = _accelerated_projection(
                op, c, z, cone, tol, max_iterations - iterations, rows.norm)
            iterations += more
            method = "MPRGP + accelerated projection" if method else "accelerated projection"
        elif not settled:
            residual = np.inf               # (the box moved at the end of the budget)
        if residual > 1.0:          # unfinished: not worse than no impulses all the same
            z = _best_multiple(op, c, z)
    else:
        z, iterations, residual = qp.solve(lo, hi, z, tol, max_iterations)
        method = "MPRGP"
    return z, iterations, residual, method


# A long solve works on a working set only among at least WORKING_SET_ROWS rows (with fewer,
# numpy's per-call cost outweighs the rows': from the same states of a 10-ragdoll pile, a
# step went 4.0 -> 4.2-4.3 ms) and when it leaves out at least WORKING_SET_SHARE of them (the
# start and the check each cost a product over all rows)
WORKING_SET_ROWS = 1500
WORKING_SET_SHARE = 0.1
WORKING_SET_ROUND = 10     # iterations at least for rows that join a working set at its check


def _working_set(p: _Problem, z, slack):
    """The _RowSet a long solve works on from the warm start z (scaled), or None when it would
    not pay (see WORKING_SET_SHARE): all rows but the dead ones, the one-sided rows (contact
    normals, limits) that start at zero and beyond their target by more than ``slack`` (rhs
    units: they push nothing and would have to be pulled in), and those normals' friction
    rows (bounded by mu 0).

    In a pour many contacts are speculative ones that never push: in 1000 poured spheres,
    half the contacts end a solve at zero force, and every product and vector operation of
    the solve would carry them. After the set's solve the rows left out are checked (one
    product); those that would pull in (gradient < -tol) join the set for the rest of the
    budget and WORKING_SET_ROUND more iterations, and are checked again. What the rows left
    out still miss at the end counts in the residual: a solve that converges solves all
    rows."""
    if z.shape[0] < WORKING_SET_ROWS:
        return None
    g = p.gradient(z)
    out = (p.one_sided & (z == 0.0) & (g > slack * p.s)) | p.dead
    out |= p.is_fric & out.take(p.normal_of)
    if np.count_nonzero(out) < WORKING_SET_SHARE * z.shape[0]:
        return None
    return _RowSet(p, out)


def _held_boxes(qp, cone, z, tol, rel, s, friction, max_iterations):
    """MPRGP on the box of the current normal forces, then on the box of the normal forces it
    found, at most MPRGP_ROUNDS boxes of ROUND_ITERATIONS iterations: a resting pile is
    solved in a few iterations and keeps its box. Returns (z projected onto the box of its
    own normal forces, iterations, residual, settled: the box held within tol plus rel of
    the largest multiplier, as the rows' own tolerance is tol plus rel of what they ask)."""
    iterations, residual = 0, np.inf
    fric_s = s.compress(friction)
    fric_tol = tol.compress(friction)
    for _ in range(MPRGP_ROUNDS):
        limit = cone.limits(z)
        z, used, residual = qp.solve(*cone.bounds(limit), z, tol,
                                     min(ROUND_ITERATIONS, max_iterations - iterations))
        iterations += used
        z = cone.project(z, z)
        change = np.abs(cone.limits(z) - limit).compress(friction)
        largest = np.abs(s * z).max()
        if residual <= 1.0 and np.all(change <= fric_tol + rel * largest / fric_s):
            return z, iterations, residual, True
        if (iterations >= max_iterations or used == 0
                or (fric_s * change).max() > MOVING_BOX * largest):
            break
    return z, iterations, residual, False


# Below this many rows numpy's per-call cost outweighs the per-element cost of its operations:
# short vectors take the fewest calls, long ones the fastest operations
SHORT_ROWS = 1500


class _FrictionBox:
    """lo <= z <= hi for the rows without friction, |z_t| <= ratio_t max(z_n, 0) for the
    friction rows t of normal row n (scaled multipliers): the box that moves with the normal
    forces. ``project`` clips the other rows first, then the friction rows to the bounds of
    the normal forces just clipped."""

    def __init__(self, lo, hi, friction, ratio, normal_of):
        self.lo_first = np.where(friction, -np.inf, lo)
        self.hi_first = np.where(friction, np.inf, hi)
        # second pass: the friction rows' bounds are 0 -/+ ratio z_n; the others' their own
        # (held already: ratio is 0 there)
        self.lo_second = np.where(friction, 0.0, lo)
        self.hi_second = np.where(friction, 0.0, hi)
        self.ratio, self.normal_of = ratio, normal_of
        m = lo.shape[0]
        self._limit, self._lo, self._hi = np.empty(m), np.empty(m), np.empty(m)
        # the contact rows' own layout (contact_rows: k normal rows, then their first and
        # their second friction rows, then rows without friction) lets the second pass work
        # on the friction rows alone, by slices: no gather, and a third of the rows less.
        # It takes more calls, which cost more than they save below SHORT_ROWS (a ragdoll
        # pile's 150 rows: 4.8 against 3.1 us; 1000 spheres' 10^4: 11 against 24)
        k = int(np.count_nonzero(friction)) // 2
        self.contact_layout = (m >= SHORT_ROWS and k > 0
                               and bool(friction[k:3 * k].all())
                               and not friction[:k].any() and not friction[3 * k:].any()
                               and np.array_equal(normal_of[k:3 * k], np.tile(np.arange(k), 2)))
        if self.contact_layout:
            self.k = k
            self._ratio2 = ratio[k:3 * k].reshape(2, k)
            self._normal, self._pair = np.empty(k), np.empty((2, k))
            self._lo2, self._hi2 = np.empty((2, k)), np.empty((2, k))
            # the first pass on the normal rows (lambda_n >= 0; a dead contact's row is held
            # at 0 as well) and on the rows after the contacts: the friction rows' own bounds
            # are infinite
            self._lo_n, self._hi_n = lo[:k], hi[:k]
            self._capped_n = bool(np.isfinite(hi[:k]).any())
            self._lo_rest, self._hi_rest = lo[3 * k:], hi[3 * k:]

    def limits(self, z):
        """The friction rows' bounds for z's normal forces (0 on the other rows)."""
        return self.ratio * np.maximum(z.take(self.normal_of), 0.0)

    def bounds(self, limit):
        """(lo, hi) of the box of the friction rows' bounds ``limit``, held."""
        return self.lo_second - limit, self.hi_second + limit

    def project(self, v, out):
        """The projection of v onto the box of its own normal forces, into out (may be v)."""
        if self.contact_layout:
            k = self.k
            if v is not out:
                np.copyto(out, v)
            normal, rest = out[:k], out[3 * k:]
            np.maximum(normal, self._lo_n, out=normal)
            if self._capped_n:
                np.minimum(normal, self._hi_n, out=normal)
            if rest.size:
                _clip_to(rest, rest, self._lo_rest, self._hi_rest)
            # (the same operations as below on the friction rows: 0 - limit <= z_t <= 0 + limit)
            limit = np.multiply(self._ratio2, np.maximum(out[:k], 0.0, out=self._normal),
                                self._pair)
            pair = out[k:3 * k].reshape(2, k)
            np.maximum(pair, np.subtract(0.0, limit, self._lo2), out=pair)
            np.minimum(pair, np.add(0.0, limit, self._hi2), out=pair)
            return out
        _clip_to(out, v, self.lo_first, self.hi_first)
        limit = np.multiply(self.ratio, np.maximum(out.take(self.normal_of), 0.0), self._limit)
        return _clip_to(out, out, np.subtract(self.lo_second, limit, self._lo),
                        np.add(self.hi_second, limit, self._hi))


def _accelerated_projection(Q, c, z0, box: _FrictionBox, tol, max_iterations, norm):
    """min 1/2 z^T Q z - c^T z over the friction box by accelerated projected gradients
    (Nesterov's momentum, restarted whenever a step goes uphill along the gradient; FISTA
    with O'Donoghue and Candes' gradient restart), every projection onto the box of the
    normal forces it has just found. Returns (z, iterations, residual: the largest gradient
    mapping |y - z_next| / step over tol, <= 1: converged).

    Why not MPRGP with the friction bounds held for rounds: the rounds' fixed point cycles in
    a pile (ragdolls), and friction of normal forces a round old is out of step with the
    normal forces at the end (a contact that started cold slides freely for a step). Every
    step here keeps friction with its own normal forces, and on captured solves of a ragdoll
    pile and 1000 poured spheres this reaches in 20-80 products what MPRGP with rounds
    reached in 120 (contact rows' velocity misses against the self-consistent conditions:
    spheres 20 iterations 0.035 m/s at most against 0.16; ragdolls 80 iterations 0.23
    against 0.47 m/s, friction ten times closer), and it converges where the rounds
    cycle (small random problems: residual 1e-16 against ~1 of |b|)."""
    m = c.shape[0]
    inv_tol = 1.0 / tol
    dot = _dot_short if m <= 8192 else _dot_long
    z = box.project(z0, np.empty(m))
    y = z.copy()
    z_next, d = np.empty(m), np.empty(m)
    theta, step, first = 1.0, None, None
    it = 0
    while True:
        g = Q(y)
        g -= c
        if step is None:
            # a warm start worse than no impulses at all (f > 0) gives way to its best
            # multiple (every box here holds 0 and scales with the normal forces)
            yg, cy = dot(y, g), dot(c, y)
            t = _best_scale(yg + cy, cy)
            if t is not None:
                y *= t
                z[:] = y
                g *= t
                g -= (1.0 - t) * c
            est, warm = norm()
            step = 1.0 / (est * (WARM_NORM_MARGIN if warm else COLD_NORM_MARGIN))
        box.project(np.subtract(y, np.multiply(g, step, d), z_next), z_next)
        if not it & 1 or it >= max_iterations:
            # every other iteration (four passes over the rows, about a tenth of an iteration
            # of 1000 spheres): the gradient mapping (y - z_next) / step, the projected
            # gradient for a step this long
            np.abs(np.subtract(y, z_next, d), d)
            np.multiply(d, inv_tol, d)
            worst = float(d[d.argmax()]) / step if m else 0.0
            if first is None:
                first = worst
            if worst <= 1.0 or it >= max_iterations:
                return z_next, it, worst
            if worst > 1e3 * first:
                # running away: the norm estimate was short (a cold start); halve the step
                # and drop the momentum
                step *= 0.5
                theta = 1.0
                y[:] = z
                it += 1
                continue
        it += 1
        np.subtract(z_next, z, d)
        if dot(g, d) > 0.0:         # uphill along the gradient: restart the momentum
            theta = 1.0
            y[:] = z_next
        else:
            theta_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * theta * theta))
            np.add(z_next, np.multiply(d, (theta - 1.0) / theta_next, y), y)
            theta = theta_next
        z, z_next = z_next, z


class SolverMemory:
    """What one step's solve leaves the next; the World keeps one (a solve without it starts
    flat, with the held boxes).

    u: the power iteration's vector in body space (6N,). A pile's largest mode barely
    changes in a step, so started from last step's vector two products estimate ||s A s||
    better than six from a flat start (1000 poured spheres: 4.26 against 4.00 of 4.28; a
    ragdoll pile: 4.29 against 3.44 of 4.30, when 1.9 / (1.1 est) must stay below
    2 / ||s A s||).

    settled: whether the last solve finished within its tolerance. After one that did not (a
    pile landing, spheres pouring in) the next goes straight to the accelerated projection:
    in such a step the held boxes' first round ends with the box moving anyway, and its
    MPRGP iterations cost about three of the projection's. A solve that finishes brings the
    held boxes back for the next (a pile coming to rest). Measured against always holding
    first, four alternating runs of the contact benchmark: ragdolls_10 4.91 -> 4.59 ms,
    spheres_1000 16.6 -> 15.8 ms; over 3 s of a 10-ragdoll pile, 6 seeds, the mean deepest
    contact 0.70 -> 0.69 mm and steps deeper than 5 mm 54 -> 48. Such a solve (a long solve,
    expected to take its budget) also prepares for it: pruned matrices, the joints' block
    inverses, a working set."""

    def __init__(self):
        self.u = None
        self.settled = True


COLD_POWER_ITERATIONS = 6
WARM_POWER_ITERATIONS = 2


def _best_scale(zQz, cz):
    """The t in [0, 1) of the best multiple t z of a z worse than no impulses at all
    (f(z) = zQz / 2 - cz > 0 = f(0)), or None when z is no worse."""
    if zQz > 0.0 and cz < 0.5 * zQz:
        return max(cz / zQz, 0.0)
    return None


def _best_multiple(op, c, z):
    """z, or its best multiple when z is worse than no impulses at all (one product): a
    solve cut short by its budget must not put energy in (a ragdoll pile whose friction was
    far from its normal forces blew up within five steps when it could)."""
    t = _best_scale(float(z @ op(z)), float(c @ z))
    return z if t is None else t * z


def _norm(op, m, carried=None):
    """(est, warm): a power-iteration estimate of ||s A s|| (from below), and whether it
    started from the carried vector (then within a few per cent; from a flat start six
    products can fall a third short)."""
    if m == 0:
        return 1.9 / 1.1, True
    x, iterations = None, COLD_POWER_ITERATIONS
    if carried is not None and carried.u is not None and carried.u.shape[0] == 6 * op.n:
        x = op.rows_from_bodies(carried.u)
        size = float(np.sqrt(_dot(x, x)))
        x, iterations = (x / size, WARM_POWER_ITERATIONS) if size > 0.0 else (None, iterations)
    warm = x is not None
    if x is None:
        x = np.full(m, 1.0 / np.sqrt(m))
    est = 0.0
    for _ in range(iterations):
        y = op(x)
        est = float(np.sqrt(_dot(y, y)))
        if est == 0.0:
            return 1.9 / 1.1, True
        x = y / est
    if carried is not None:
        carried.u = op.bodies_from_rows(x)
    return est, warm


def _bb_length(step, change, dot=_dot):
    """The Barzilai-Borwein step length s.y / y.y of a step s that changed the gradient by y
    (None when s.y <= 0)."""
    sy = dot(step, change)
    if not sy > 0.0:
        return None
    return sy / dot(change, change)


_BIG = 1e300


def _clip(x, lo, hi):
    """np.clip(x, lo, hi) into a new array (``_clip_to``)."""
    return _clip_to(np.empty_like(x), x, lo, hi)


class _MPRGP:
    """min 1/2 z^T Q z - c^T z on lo <= z <= hi by MPRGP (Dostal and Schoeberl 2005; the box
    version of Kruzik et al. 2020), Gamma = 1."""

    def __init__(self, Q, c, step_length):
        self.Q, self.c, self.step_length = Q, c, step_length
        self.dot = _dot_short if c.shape[0] <= 8192 else _dot_long   # (_dot, chosen once)
        self.alpha = None             # computed when first needed: a converged warm start skips it

    def _alpha(self):
        if self.alpha is None:
            self.alpha = self.step_length()
        return self.alpha

    def solve(self, lo, hi, z0, tol, max_iterations):
        """tol: (m,) per-row bound on the projected gradient. Returns (z, iterations, max
        |projected gradient| / tol)."""
        Q, c = self.Q, self.c
        z = _clip(z0, lo, hi)
        g = Q(z) - c
        # a warm start worse than no impulses at all (f(z) > 0) is replaced by its best
        # multiple t z, 0 <= t < 1 (every box here holds 0, so t z stays in it). A good warm
        # start is kept as it is: scaling it would be an error spread over the whole pile,
        # the slowest mode for CG to remove.
        cz = _dot(c, z)
        t = _best_scale(_dot(z, g) + cz, cz)
        if t is not None:
            z = t * z
            g = t * (g + c) - c
        return self._iterate(lo, hi, z, g, tol, max_iterations)

    def _iterate(self, lo, hi, z, g, tol, max_iterations):
        Q, c, dot = self.Q, self.c, self.dot
        inv_tol = 1.0 / tol
        m = z.shape[0]
        # The vectors of an iteration live in buffers allocated once per solve, written by
        # the ufuncs' out argument (with 10^4 rows a fresh temporary costs about as much as the
        # operation itself). out is passed by position where numpy allows it: the keyword
        # costs ~0.1 us a call, and a ragdoll pile's iteration is ~30 calls of well under a
        # microsecond of work each (np.maximum/np.minimum warn, deprecated, and keep out=).
        # z moves between two buffers, p keeps its own, the others are scratch. The arithmetic
        # is the same as with temporaries, operation by operation.
        z = z.copy()                  # (the caller's z and g stay as they were)
        g = g.copy()                  # updated in place (or replaced by a product's result)
        z_next = np.empty(m)          # the candidate z of a step, swapped with z when taken
        p_buf = np.empty(m)           # the conjugate direction, updated in place
        p = None
        gp = np.empty(m)              # projected gradient
        phi = np.empty(m)             # free gradient
        t1, t2, t3 = np.empty(m), np.empty(m), np.empty(m)
        off_lo = np.empty(m, dtype=bool)                 # not at the lower bound
        off_hi = np.empty(m, dtype=bool)
        # the masks again as 0./1. floats: a bool operand costs a cast in every product with
        # it (twice a plain product's time), one copy costs less
        lo_f, hi_f, free = np.empty(m), np.empty(m), np.empty(m)
        same = np.empty(m, dtype=bool)
        it = 0
        bb_len = None
        fz = None                     # f(z) = 1/2 z^T Q z - c^T z, while known
        lo_a = hi_a = inv_alpha = None   # lo, hi and 1 over the expansion step length
        while True:
            np.copyto(lo_f, np.greater(z, lo, off_lo))
            np.copyto(hi_f, np.less(z, hi, off_hi))
            np.multiply(lo_f, hi_f, free)                # 1. on the free rows, else 0.
            # projected gradient: g on the free rows, its part pointing into the box on the
            # others (a fixed row, lo = hi, sits on both bounds and gets 0)
            # (branch-free: np.where on scattered masks costs several times more)
            np.minimum(g, np.multiply(lo_f, _BIG, t1), out=gp)
            np.maximum(gp, np.multiply(hi_f, -_BIG, t1), out=gp)
            # max |gp| / tol (argmax: the maximum's own reduction costs several times more)
            np.multiply(np.abs(gp, t1), inv_tol, t1)
            worst = float(t1[t1.argmax()]) if m else 0.0
            if worst <= 1.0 or it >= max_iterations:
                return z, it, worst
            it += 1
            np.multiply(g, free, phi)                    # free gradient
            phiphi = dot(phi, phi)
            bb = dot(gp, gp) - phiphi                    # |chopped gradient|^2 (disjoint)
            proportional = bb <= 0.0
            if not proportional and bb <= phiphi:       # (phit . phi <= phi . phi)
                # reduced free gradient: how far a step of alpha may go before a bound
                # (phi > 0: min(phi, (z - lo)/alpha); phi < 0: max(phi, (z - hi)/alpha)),
                # as z/alpha - lo/alpha with the bounds divided once a round: no division
                # in the iteration (3x a product's time) and one pass less
                if lo_a is None:
                    inv_alpha = 1.0 / self._alpha()
                    lo_a, hi_a = lo * inv_alpha, hi * inv_alpha
                z_a = np.multiply(z, inv_alpha, t2)
                phit = np.maximum(phi, np.subtract(z_a, hi_a, t1), out=t1)
                np.minimum(phit, np.subtract(z_a, lo_a, t2), out=phit)
                proportional = bb <= dot(phit, phi)
            if proportional and p is None and bb_len is not None:
                # while rows keep reaching bounds: a projected gradient step of the Barzilai-
                # Borwein length (one product where the projected CG step takes two), kept
                # if it descends
                z_free = np.subtract(z, np.multiply(phi, bb_len, t1), t1)
                z_try = _clip_to(z_next, z_free, lo, hi)
                g_try = Q(z_try)
                g_try -= c
                # f(z + d) - f(z) = g.d + d.Qd/2 with d = z_try - z, Qd = g_try - g (the
                # same two vectors as the next step length)
                d, Qd = np.subtract(z_try, z, t2), np.subtract(g_try, g, t3)
                dQd = dot(d, Qd)
                if dot(g, d) + 0.5 * dQd < 0.0:
                    fz = None
                    # no bound reached: back to conjugate gradients
                    if (np.count_nonzero(np.equal(z_try, z_free, same)) == m
                            or not dQd > 0.0):
                        bb_len = None
                    else:
                        bb_len = dQd / dot(Qd, Qd)
                    z, z_next = z_try, z
                    g = g_try
                    continue
                bb_len = None
            if proportional:
                if p is None:
                    p = _copy_to(p_buf, phi)
                Ap = Q(p)
                pAp = dot(p, Ap)
                if not pAp > 0:
                    return z, it, worst
                a_cg = dot(g, p) / pAp
                z_cg = np.subtract(z, np.multiply(p, a_cg, t1), z_next)
                z_try = _clip_to(t2, z_cg, lo, hi)
                # (count_nonzero: several times cheaper than .all())
                if np.count_nonzero(np.equal(z_try, z_cg, same)) == m:
                    z, z_next = z_cg, z
                    g -= np.multiply(Ap, a_cg, t1)
                    fz = None
                    phi_new = np.multiply(g, free, phi)
                    # p <- phi_new - (phi_new . Ap / pAp) p, in its buffer
                    np.subtract(phi_new, np.multiply(p, dot(phi_new, Ap) / pAp, p), p)
                else:
                    # the CG step would reach bounds: first try it projected onto the box
                    # (many rows reach their bounds at once in a pile); keep it if it descends
                    f = 0.5 * dot(z, np.subtract(g, c, t1)) if fz is None else fz
                    g_try = Q(z_try)
                    g_try -= c
                    f_try = 0.5 * dot(z_try, np.subtract(g_try, c, t1))
                    if f_try < f:
                        fz = f_try
                        bb_len = _bb_length(np.subtract(z_try, z, t1),
                                            np.subtract(g_try, g, t3), dot)
                        z, t2 = z_try, z
                        g = g_try
                    else:                             # expansion step
                        # the longest feasible step along -p (p is zero off the free rows)
                        room = np.divide(z - np.where(p > 0, lo, hi), p,
                                         out=np.full(m, np.inf), where=p != 0)
                        a_f = float(room.min(initial=np.inf))
                        z = _clip(z - a_f * p, lo, hi)
                        g = g - a_f * Ap
                        z_exp = _clip(z - self._alpha() * (g * free), lo, hi)
                        g_exp = Q(z_exp) - c
                        # the power iteration estimates ||Q|| from below: a step that does
                        # not descend was too long (alpha >= 2 / ||Q||), halve it for good
                        f_exp = 0.5 * dot(z_exp, g_exp - c)
                        if f_exp <= 0.5 * dot(z, g - c):
                            z, g = z_exp, g_exp
                        else:
                            self.alpha *= 0.5
                            inv_alpha, lo_a, hi_a = None, None, None
                        fz = None
                    p = None
            else:                                     # proportioning step
                beta = np.subtract(gp, phi, t1)
                Ab = Q(beta)
                a = bb / dot(beta, Ab)
                room = np.divide(z - np.where(beta < 0, hi, lo), beta, out=np.full(m, np.inf),
                                 where=beta != 0)
                a = min(a, float(room.min(initial=np.inf)))
                z = _clip(z - a * beta, lo, hi)
                g -= np.multiply(Ab, a, t2)
                p = None
                fz = None


def _copy_to(buffer, x):
    np.copyto(buffer, x)
    return buffer


def _clip_to(out, x, lo, hi):
    """np.clip(x, lo, hi) into out (x may be out): np.clip's own ufunc on short vectors (a
    third cheaper than maximum and minimum there), maximum and minimum on long ones (which
    they run at twice the ufunc's speed). The same numbers either way."""
    if x.shape[0] < SHORT_ROWS:
        return _clip_ufunc(x, lo, hi, out=out)
    np.maximum(x, lo, out=out)
    return np.minimum(out, hi, out=out)
