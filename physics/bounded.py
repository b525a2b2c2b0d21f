"""One bounded solve for equality rows and rows that push only one way or only so hard.

Find lambda with  lo <= lambda <= hi  minimising  1/2 lambda^T A lambda - rhs^T lambda,
i.e. the mixed LCP of contacts, friction, limits and motors together with the joints (whose
bounds are infinite). Friction rows have |lambda_t| <= mu * lambda_n of their contact.

Method: an outer loop holds the friction bounds at mu times the current normal forces, which
makes each inner problem a convex box-constrained QP. The inner solver starts with a few
rounds of block principal pivoting (an active-set method): rows on a bound are held there
(identity rows in the same sparsity, so the banded Cholesky / SuperLU of ``linsolve`` apply
unchanged) and the rest are solved *exactly* with one factorisation; then every free row that
left its box is clamped and every clamped row whose gradient points into the box is freed,
all at once. Warm started from the previous step this usually ends in one or two
factorisations. Pivoting can cycle on the degenerate systems of piles (many redundant
contacts), so after ``PIVOT_BUDGET`` rounds Bertsekas' projected Newton method takes over:
it never raises the QP's objective, so an unfinished solve is still an improvement on the
warm start and never a wild guess. Either way the equality rows keep the exactness of a
direct solve: when the answer is not a converged round's as it stands (a round left
unfinished, or friction rows clipped to the bounds of the final normal forces), the equality
rows are solved once more with the bounded rows held where they end (one factorisation).

This is ``World(contact_solver="direct")``: exact, but each factorisation of the full system
costs milliseconds once there are hundreds of contacts, and piles need dozens; the default
"auto" uses it for small systems (``bounded_solve.DIRECT_BELOW``, ``DIRECT_ALL_BELOW``) and
``physics.iterative``, which factorises only the joints' rows, beyond.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .accelerated_projection import FrictionBox

# Relative diagonal regularisation of the bounded rows. It bounds the split of force between
# redundant contacts (the four corners of a box on the ground) and keeps the QP's condition
# number near 1e3, which the solvers need. It is centred on the warm start (last step's
# multipliers; a contact that last step's solve stopped from approaching starts from those it
# had before the impact, see reporting._store_contacts), not on zero: the term R (lambda -
# lambda_0) rather than R lambda, i.e. b + R lambda_0 on the right-hand side (a proximal
# point step). A contact that carries the same load from step to step then meets its
# velocity target exactly. Centred on zero, every
# resting contact fell short of its target by 0.1 % of its own load each step: a 55-box
# pyramid sank into the penetration slop within a second, and where its contacts crossed
# the slop the push-out switched on and off among a face's corners, which kept the stack
# jittering (~1e-4 m/s) and its solves at the full budget from then on.
CONTACT_SOFTNESS = 1e-3
PIVOT_BUDGET = 4          # pivoting rounds before the projected Newton method takes over
FRICTION_ROUND_TOLERANCE = 1e-3   # friction bounds settled: change below this x max |lambda|
# An answer whose friction bounds did not settle is still taken where no one-sided row it
# leaves on its bound asks to come off it by more than this share of the right-hand side's
# scale; else the caller solves otherwise (``bounded_solve.bounded_multipliers``)
NORMALS_MISS = 0.1


def solve_bounded(pattern, J, JM, rhs, lo, hi, *, cfm, friction_normal=None, mu=None,
                  lam0=None, newton_iterations=32, friction_rounds=4,
                  softness=CONTACT_SOFTNESS, exact=None, hard=None, centre=None,
                  missed=np.inf):
    """Solve the bounded problem described in the module docstring.

    pattern: an ``assembly.Pattern`` for the rows; J, JM: per-side blocks (2m, 6) of J and
    M^-1 J; rhs, lo, hi (m,); cfm: scalar or (m,) diagonal regularisation;
    friction_normal (m,) int: index of the normal row whose force bounds this friction row
    (-1 for other rows); mu (m,) friction coefficients; lam0 (m,) warm start, which the
    softness is centred on (or on ``centre`` (m,), where given); softness: the bounded rows'
    diagonal regularisation relative to their own stiffness (CONTACT_SOFTNESS keeps piles
    well conditioned; impacts use almost none); exact (m,) bool: rows whose own share of the
    softness' miss is given back (``softened``); hard (m,) bool or None: rows that take no
    softness; missed: how far short of its right-hand side (in its units) a one-sided row
    below its upper bound may be left in an unsettled answer.
    Returns (lambda, factorisations used, settled: the last round converged with the friction
    bounds of its own normal forces, or, where not, no one-sided row the answer leaves on its
    bound asks to come off it by more than NORMALS_MISS, and none falls short by ``missed``).
    """
    m = rhs.shape[0]
    is_fric, normal_of, mu = friction_rows(friction_normal, mu, m)
    contrib = np.einsum("ij,ij->i", JM[pattern.side_i], J[pattern.side_j])
    ri, rj = pattern.side_i // 2, pattern.side_j // 2
    A = _full_matrix(ri, rj, contrib, m, mirror=pattern.half_stored)
    # Redundant contact rows (four corners of a box on the ground) make A singular; a soft
    # diagonal relative to each row's own stiffness keeps the split between them bounded.
    bounded = np.isfinite(lo) | np.isfinite(hi) | is_fric
    if hard is not None:
        bounded &= ~hard
    cfm, rhs, lam = softened(cfm, bounded * A.diagonal(), softness, rhs, lam0, exact, centre)
    A_reg = _plus_diagonal(A, cfm)

    # the friction rows' bounds follow the normal forces (the iterative solve's box)
    box = FrictionBox(lo, hi, is_fric, np.where(is_fric, mu, 0.0), normal_of)

    def bounds(lam):
        return box.bounds(box.limits(lam))

    solver = _BoxQP(pattern, A, A_reg, contrib, ri, rj, cfm, rhs)
    used, settled, converged, bounds_settled = 0, None, False, not is_fric.any()
    for round_ in range(friction_rounds):
        blo, bhi = bounds(lam)
        previous = lam
        # later rounds start next to the answer (only the friction bounds moved): descend
        lam, n, converged = solver.solve(blo, bhi, lam, PIVOT_BUDGET if round_ == 0 else 0,
                                         newton_iterations)
        used += n
        if not converged:
            # an unfinished round is still a descent from its start; later rounds would only
            # spend more factorisations on the same hard problem
            if settled is not None:
                lam = settled        # keep the last round that converged
            break
        settled = lam
        if not is_fric.any():
            break
        change = np.abs(bounds(lam)[1][is_fric] - bhi[is_fric]).max()
        bounds_settled = change <= FRICTION_ROUND_TOLERANCE * max(np.abs(lam).max(), 1e-12) or \
            np.array_equal(lam, previous)
        if bounds_settled:
            break
    blo, bhi = bounds(lam)
    clipped = np.clip(lam, blo, bhi)
    if not (np.array_equal(clipped, lam) and converged) and bounded.any() and not bounded.all():
        # an unfinished round (projected Newton's steps are cut short by its line search) or
        # the friction rows clipped to their final normal forces leave the equality rows off
        # their own equation: solved again with the bounded rows held where they end
        clipped = solver._clamped_solution(clipped, clipped, bounded, np.zeros(m, dtype=bool))
        used += 1
    if converged and bounds_settled:
        return clipped, used, True
    # unsettled: still an answer where no one-sided row (a contact's normal, a limit) that
    # it leaves at its bound asks to come off it by more than NORMALS_MISS of the right-hand
    # side's scale, and none that pushes falls ``missed`` short of its target. (The friction
    # clipped to the normal forces of a last round that swung between a bullet's two contacts
    # with a spinning box left them 6.5 m/s short, under a tenth of the 71 m/s it hit at,
    # and the bullet 16 mm into the box at dt 1/60)
    gradient = solver.A_reg @ clipped - solver.rhs
    one_sided = bounded & ~is_fric
    at_bound = one_sided & (clipped <= blo)
    short = one_sided & (clipped < bhi) & (gradient < -missed)
    return clipped, used, not (np.any(gradient[at_bound] < -NORMALS_MISS * solver.scale)
                               or short.any())


def friction_rows(friction_normal, mu, m):
    """The friction rows among m rows, from the bounded solvers' arguments friction_normal
    and mu (None: none): (is_fric (m,) bool, normal_of (m,) int: each friction row's normal
    row, 0 on the others, mu (m,))."""
    if friction_normal is None:
        friction_normal = np.full(m, -1)
    is_fric = friction_normal >= 0
    return is_fric, np.where(is_fric, friction_normal, 0), np.zeros(m) if mu is None else mu


def softened(cfm, stiffness, softness, rhs, lam0, exact=None, centre=None):
    """The bounded rows' softness (see CONTACT_SOFTNESS), softness times each row's own
    ``stiffness`` (m,; 0 on a row that takes none) on the diagonal, centred on the warm start
    lam0 (None: cold), or on ``centre`` (m,) where given (``bounded_solve.softness_centre``):
    (cfm + the softness (m,), the right-hand side centred, lam0 as floats (zeros when
    cold)). Rows where ``exact`` (m,) bool is set also get back the share of their
    target that the softness would miss on their own diagonal: a speculative contact that
    closes its gap within the step must stop at the surface, not 0.1 % of its speed beyond
    it (a 1 cm ball at 1000 m/s, dt 1/60, stopped 16 mm beyond a wall's face, and beyond a
    2 mm wall's middle, so it came out of the far side)."""
    soft = softness * stiffness
    m = soft.shape[0]
    # (cfm scalar or (m,): broadcast by the sum itself, np.broadcast_to's call cost 5 us)
    cfm = np.add(cfm, soft)
    lam = np.zeros(m) if lam0 is None else np.asarray(lam0, dtype=float)
    centred = rhs if lam0 is None else rhs + soft * (lam if centre is None else centre)
    if exact is not None and exact.any():
        # (a + s a) lambda = rhs + s a lambda0 + s (rhs - a lambda0) has lambda = lambda0 +
        # (rhs - a lambda0) / a: the row's own unsoftened answer
        centred = centred + np.where(exact, softness * (rhs - stiffness * lam), 0.0)
    return cfm, centred, lam


class _BoxQP:
    """min 1/2 x^T A x - rhs^T x on a box: block principal pivoting, then projected Newton."""

    def __init__(self, pattern, A, A_reg, contrib, ri, rj, cfm, rhs):
        self.pattern, self.A, self.A_reg = pattern, A, A_reg
        self.contrib, self.ri, self.rj, self.cfm, self.rhs = contrib, ri, rj, cfm, rhs
        self.scale = max(np.abs(rhs).max(initial=0.0), 1e-12)
        self.tol = 1e-7 * self.scale

    def solve(self, lo, hi, start, pivots, newton_iterations):
        """Up to ``pivots`` rounds of block pivoting (with Judice and Pires' safeguard: when
        swapping every infeasible row at once stops reducing their number, swap only the last
        few), then projected Newton. Returns (x, factorisations, converged)."""
        tol = self.tol
        at_lo = np.isfinite(lo) & (start <= lo + tol)
        at_hi = np.isfinite(hi) & (start >= hi - tol) & ~at_lo
        fewest, stalled = np.inf, 0
        lam = start
        iteration = 0
        for iteration in range(1, pivots + 1):
            lam = self._clamped_solution(lo, hi, at_lo, at_hi)
            gradient = self.A_reg @ lam - self.rhs
            free = ~(at_lo | at_hi)
            below = free & (lam < lo - tol)
            above = free & (lam > hi + tol)
            leave_lo = at_lo & (gradient < -tol) & (lo < hi)
            leave_hi = at_hi & (gradient > tol)
            wrong = below | above | leave_lo | leave_hi
            count = int(np.count_nonzero(wrong))
            if count == 0:
                return lam, iteration, True
            if count < fewest:
                fewest, stalled = count, 0
            else:
                stalled += 1
            if stalled >= 3:     # swap only the last few infeasible rows (one, once few are left)
                keep = np.zeros_like(wrong)
                keep[np.flatnonzero(wrong)[-(1 if count <= 8 else count // 2):]] = True
                below, above, leave_lo, leave_hi = (below & keep, above & keep,
                                                    leave_lo & keep, leave_hi & keep)
            at_lo = (at_lo & ~leave_lo) | below
            at_hi = (at_hi & ~leave_hi) | above
        # pivoting is cycling: descend from the better of the warm start and the last pivot
        begin = min((np.clip(start, lo, hi), np.clip(lam, lo, hi)), key=self.objective)
        x, used, converged = self.projected_newton(lo, hi, begin, newton_iterations)
        return x, iteration + used, converged

    def objective(self, x):
        return 0.5 * x @ (self.A_reg @ x) - self.rhs @ x

    def projected_newton(self, lo, hi, start, max_iterations):
        """Bertsekas' projected Newton method: never raises f, so it cannot cycle.

        Each iteration holds the rows that sit on a bound (or within eps of it) with the
        gradient pushing outward, takes the exact Newton step of the others with one
        factorisation, and backtracks along the projection of that step onto the box until f
        falls enough (Armijo). Once the right rows are held the full step is exact.
        Returns (x, factorisations, converged)."""
        inv_diag = 1.0 / self.A_reg.diagonal()
        x = np.clip(start, lo, hi)
        f = self.objective(x)
        for iteration in range(1, max_iterations + 1):
            g = self.A_reg @ x - self.rhs
            move = x - np.clip(x - inv_diag * g, lo, hi)      # scaled projected gradient
            if np.all(np.abs(move) <= self.tol * inv_diag):
                return x, iteration - 1, True
            eps = min(1e-3, float(np.linalg.norm(move)))
            held = ((x <= lo + eps) & (g > 0)) | ((x >= hi - eps) & (g < 0))
            d = self._solve_active_set(held, np.where(held, 0.0, -g))
            d[held] = -inv_diag[held] * g[held]
            alpha = 1.0
            while True:
                x_new = np.clip(x + alpha * d, lo, hi)
                f_new = self.objective(x_new)
                if f_new <= f + 1e-4 * (g @ (x_new - x)) or alpha < 1e-8:
                    break
                alpha *= 0.5
            if not f_new < f:                        # no descent left at this precision
                return x, iteration, False
            x, f = x_new, f_new
        return x, max_iterations, False

    def _clamped_solution(self, lo, hi, at_lo, at_hi):
        """The minimiser over the free rows with the clamped rows held on their bounds."""
        clamped = at_lo | at_hi
        fixed = np.where(at_lo, lo, np.where(at_hi, hi, 0.0))
        lam = self._solve_active_set(clamped, np.where(clamped, fixed, self.rhs - self.A @ fixed))
        lam[clamped] = fixed[clamped]
        return lam

    def _solve_active_set(self, clamped, b):
        """Solve with A_reg restricted to the free rows and identity rows for the clamped
        ones (the same sparsity, so the cached factorizer applies)."""
        free = ~clamped
        keep = free[self.ri] & free[self.rj]
        fac = self.pattern.factorizer
        data = np.bincount(self.pattern.target, weights=self.contrib * keep, minlength=fac.size)
        data[self.pattern.diagonal] += np.where(free, self.cfm, 1.0)
        return fac.solve(fac.factor(data), b)


# Up to this many rows A is a dense array: the direct solve's systems are small by default
# (``bounded_solve.DIRECT_ALL_BELOW``), and building scipy's sparse matrices for them (a COO's
# checks and sort, a sum with the regularising diagonal) cost about 1.3 ms a step on a
# machine where the ragdoll on the stairs or the gears scene took 5-7 ms. Building A and
# taking 10 / 40 products, dense against CSR, on that machine: 200 rows 0.15 / 0.41 against
# 1.16 / 1.23 ms, 300 rows 0.35 / 0.83 against 1.08 / 1.57 ms, 400 rows 1.03 / 2.80 against
# 1.43 / 2.33 ms; and in a process that does not keep freed memory (physics.allocator),
# whose every large array costs its page faults, 300 rows 2.24 against 1.93 ms already
DENSE_ROWS = 250


def _full_matrix(ri, rj, values, m, mirror: bool):
    """Symmetric A from contributions (ri, rj, value), an (m, m) array up to DENSE_ROWS rows,
    CSR beyond; with ``mirror`` they hold each off-diagonal pair once (half storage) and are
    mirrored."""
    if mirror:
        off = ri != rj
        ri, rj = np.concatenate([ri, rj[off]]), np.concatenate([rj, ri[off]])
        values = np.concatenate([values, values[off]])
    if m <= DENSE_ROWS:
        return np.bincount(ri * m + rj, weights=values, minlength=m * m).reshape(m, m)
    return sp.csr_matrix((values, (ri, rj)), shape=(m, m))


def _plus_diagonal(A, d):
    """A + diag(d), a new matrix of A's kind (dense or CSR)."""
    if isinstance(A, np.ndarray):
        out = A.copy()
        out.reshape(-1)[::A.shape[0] + 1] += d
        return out
    return (A + sp.diags(d)).tocsr()
