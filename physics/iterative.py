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
* S is never formed: ``bodyspace.Reduced`` multiplies by it, a few sparse products and one
  banded back-substitution, linear in the rows (``physics.bodyspace``).
* With friction, |lambda_t| <= mu lambda_n bounds each friction row by its own normal
  force: min 1/2 x^T (S + R) x - b^T x over that box, whose friction bounds are the normal
  forces of the solution (the fixed point of the direct solver's friction rounds), is solved
  by accelerated projected gradients, every projection onto the box of the normal forces it
  has just found (``physics.accelerated_projection``). First, unless the last step's solve
  did not finish (``SolverMemory``), a few MPRGP iterations on the box of the warm start's
  normal forces (``mprgp.held_boxes``): they finish a resting pile, whose box stays put.
* Without friction (impacts, a mechanism's limits and motors alone) the box is fixed: the QP
  min 1/2 x^T (S + R) x - b^T x,  lo <= x <= hi  is solved by Dostal's MPRGP
  (``physics.mprgp``), which converges at the rate of CG: what nearly hard impacts need.
* Rows are scaled by the diagonal of A_BB (Jacobi preconditioning; boxes stay boxes). A
  solve cut short by the budget is never worse than no impulses at all.
* A solve expected to take its whole budget over many rows works on a working set: the
  one-sided rows that start at zero, well beyond their target (speculative contacts that
  are still closing slowly or opening), are left out with their friction rows until a check
  after the solve shows that they would pull in (``_working_set``). 1000 poured spheres:
  a quarter of the rows left out, 8 checks in 433 solves bringing rows in, a step 13.3-13.5
  -> 11.4-11.5 ms. The rows the solve holds at zero (a gliding contact's row across its
  slip: four in five of the poured spheres' contacts) are left out too and never come back:
  the set's rows 7458 -> 5477 in the bench window's first solve, its solves 12 % faster.
* Stopping: every row within VELOCITY_TOLERANCE (m/s; divided by h for forces) plus
  RELATIVE_TOLERANCE of its right-hand side, or MAX_ITERATIONS products. Warm started from the
  last step (contacts by feature key, or position, see ``contact_rows.positional_warm_start``;
  limits and motors by row), a resting pile needs a handful of iterations; violent phases (a
  pile being hit, 1000 spheres poured) use the budget.

Work per iteration: one product and ~20 vector operations (MPRGP: ~30 and one or two
products), no Python loop over rows, bodies or contacts; the operations are plain numpy/scipy
in a fixed order, so the result is bitwise reproducible. How the products and the vector
operations are kept cheap: ``physics.bodyspace`` and ``physics.vectorops``.
"""
from __future__ import annotations

import numpy as np

from .accelerated_projection import (FrictionBox, accelerated_projection, best_multiple,
                                     mprgp_step_length, norm)
from .bodyspace import BodySpace, Reduced
from .bounded import CONTACT_SOFTNESS, friction_rows, softened
from .mprgp import MPRGP, held_boxes

VELOCITY_TOLERANCE = 1e-6   # m/s (rad/s): how far a row may miss its velocity target ...
RELATIVE_TOLERANCE = 1e-3   # ... plus this fraction of its right-hand side
MAX_ITERATIONS = 60       # iterations (products) per solve


def solve_iterative(B: BodySpace, rhs, lo, hi, cfm, *, friction_normal=None, mu=None, lam0=None,
                    E: BodySpace | None = None, rhs_e=None, factorizer=None, factor=None,
                    tolerance, relative_tolerance=None, max_iterations=None,
                    softness=CONTACT_SOFTNESS, memory: SolverMemory | None = None,
                    slack=None, exact=None, hard=None, centre=None):
    """Solve the bounded problem of the module docstring.

    B: the bounded rows; rhs, lo, hi (mb,); cfm scalar or (mb,); friction_normal (mb,) int
    index of the bounding normal row (-1 otherwise; it must follow the contacts' layout that B
    was given, its n_contact_rows) and mu (mb,); lam0 (mb,) warm start, which the softness
    is centred on (or on ``centre`` (mb,), where given: ``bounded.softened``).
    E, rhs_e, factorizer, factor: the equality rows, their right-hand side and the
    factorisation of A_EE + cfm (None when there are none). tolerance: the largest projected
    gradient accepted, in the units of rhs (VELOCITY_TOLERANCE / h for forces over a step h,
    VELOCITY_TOLERANCE for impulses), plus relative_tolerance (default RELATIVE_TOLERANCE)
    times the row's |right-hand side|. softness: the bounded rows' diagonal regularisation
    relative to their own stiffness (bounded.CONTACT_SOFTNESS keeps piles well conditioned;
    impacts, which must pass momentum on whole, use almost none). memory: the World's
    SolverMemory, carried from solve to solve. slack: in the units of rhs, how far beyond its
    target a one-sided row must be at the warm start to be left out of a long solve's
    working set (``_working_set``; None: no working set). exact (mb,) bool: rows whose own
    share of the softness' miss is given back (``bounded.softened``).
    Returns (lambda_E or None, lambda_B, info dict: iterations, residual (largest projected
    gradient / tolerance at the end; <= 1: converged), method, rows: how many rows the solve
    worked on, see ``_working_set``).
    """
    mb = B.m
    max_iterations = MAX_ITERATIONS if max_iterations is None else max_iterations
    is_fric, normal_of, mu = friction_rows(friction_normal, mu, mb)
    b = rhs
    if E is not None:
        # b_B = r_B - A_BE A_EE^-1 r_E
        b = rhs - B.times_J(E.times_W(factorizer.solve(factor, rhs_e)))
    # (the tolerance is of b itself, without the softness' centring)
    stiffness = B.diagonal if hard is None else np.where(hard, 0.0, B.diagonal)
    cfm, b_centred, x = softened(cfm, stiffness, softness, b, lam0, exact, centre)
    # rows that move no dynamic body (both sides static) do nothing: held at zero
    dead = B.diagonal <= 1e-12 * B.diagonal.max(initial=0.0)
    if dead.any():
        lo = np.where(dead, 0.0, lo)
        hi = np.where(dead, 0.0, hi)
        s = 1.0 / np.sqrt(np.where(dead, 1.0, B.diagonal + cfm))  # lambda = s z: unit diagonal
    else:           # (the same, without three selects over all rows: a pile has no dead rows)
        s = 1.0 / np.sqrt(B.diagonal + cfm)
    # a row may miss its target by the absolute tolerance plus a fraction of what it asks for
    rel = RELATIVE_TOLERANCE if relative_tolerance is None else relative_tolerance
    # (a friction row's fraction also counts mu times its normal row's: a friction row asks
    # for zero, and its force is measured against the normal force)
    tol = tolerance + rel * (np.abs(b) + np.where(is_fric, mu * np.abs(b.take(normal_of)), 0.0))
    # (after a solve that did not finish, the next is expected to take its budget too)
    long_solve = memory is not None and not memory.settled
    problem = _Problem(B, E, factorizer, factor, s, cfm, s * b_centred, lo / s, hi / s, tol * s,
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
    return lam_e, x, {"iterations": iterations, "residual": residual, "method": method,
                      "rows": rows.size}


class _Problem:
    """The bounded problem of one solve, scaled (z = lambda / s): what ``solve`` needs to work
    on all of its rows or on a working set of them. c = s b, tol s (the units of the scaled
    gradient), lo / s and hi / s (of z)."""

    def __init__(self, B, E, factorizer, factor, s, cfm, c, lo, hi, tol, is_fric, normal_of,
                 mu, dead, rel, memory, long_solve):
        self.B, self.E, self.factorizer, self.factor = B, E, factorizer, factor
        self.s, self.cfm, self.c, self.lo, self.hi, self.tol = s, cfm, c, lo, hi, tol
        self.is_fric, self.normal_of, self.mu = is_fric, normal_of, mu
        self.dead, self.rel = dead, rel
        self.memory, self.long_solve = memory, long_solve
        from_zero = lo == 0.0
        self.one_sided = from_zero & (hi == np.inf) & ~is_fric
        # rows the solve holds at zero, whose products it never reads (``Reduced``)
        self.held = np.where(is_fric, (mu == 0.0) | dead, from_zero & (hi == 0.0))

    def gradient(self, z):
        """(S + R) z - c on every row: one product without pruned matrices (what a working
        set starts from)."""
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
        zk, *info = _solve_rows(self, rows, z[rows.kept], max_iterations)
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
            self.n_contact_rows, self.tangent_runs = p.B.n_contact_rows, 2
        else:
            self.kept, self.out = np.flatnonzero(~left_out), np.flatnonzero(left_out)
            rows = self.kept
            self.size = rows.shape[0]
            position = np.full(p.B.m, -1)
            position[rows] = np.arange(self.size)
            self.normal_of = np.maximum(position.take(p.normal_of.take(rows)), 0)
            self.n_contact_rows, self.tangent_runs = _kept_contact_rows(p.B.n_contact_rows,
                                                                        left_out)
        self.op = Reduced(p.B, p.cfm[self.kept], p.s[self.kept], p.E, p.factorizer, p.factor,
                           long_solve=p.long_solve, rows=rows, held=p.held[self.kept])
        # (once an operator, if needed; the closure does not hold self: a reference cycle
        # would keep every solve's matrices alive until the garbage collector ran, and a
        # 10-ragdoll pile's step took 5 % longer)
        op, m, memory = self.op, self.size, p.memory
        self.norm = _Once(lambda: norm(op, m, memory))

    def left_out_pulling(self, z):
        """((mb,) bool: the rows left out that would pull in at z (zero on them), beyond
        their tolerance; the worst of their misses over tolerance, 0 if none). One product
        (``_Problem.gradient``; z is zero on the rows left out, so their cfm adds nothing)."""
        p = self.problem
        out = self.out
        pulling = np.zeros(p.B.m, dtype=bool)
        one_sided = p.one_sided.take(out)
        if not one_sided.any():         # (only held rows left out: none can pull)
            return pulling, 0.0
        miss = -p.gradient(z).take(out) / p.tol.take(out)
        pulling_out = one_sided & (miss > 1.0)
        pulling[out] = pulling_out
        return pulling, float(miss.compress(pulling_out).max(initial=0.0))

    def joined_by(self, rows):
        """The set with the one-sided ``rows`` (mb,) bool and their friction rows (but the
        held ones)."""
        p = self.problem
        joins = (rows | (p.is_fric & rows.take(p.normal_of))) & ~p.held
        joins[self.kept] = True
        return _RowSet(p, ~joins)


class _Once:
    """``make()`` called when first asked for, then its answer (functools.cache's wrapper
    cost 10 us to make, a fifth of a small impact solve's setup)."""
    __slots__ = ("make", "answer")

    def __init__(self, make):
        self.make, self.answer = make, None

    def __call__(self):
        if self.make is not None:
            self.answer, self.make = self.make(), None
        return self.answer


def _solve_rows(p: _Problem, rows: _RowSet, z, max_iterations):
    """The solve proper on the ``rows`` of the problem, from their z: (z, iterations,
    residual, method)."""
    kept, op, normal_of, mb = rows.kept, rows.op, rows.normal_of, rows.size
    s, c, tol = p.s[kept], p.c[kept], p.tol[kept]
    lo, hi, is_fric, dead = p.lo[kept], p.hi[kept], p.is_fric[kept], p.dead[kept]
    qp = MPRGP(op, c, lambda: mprgp_step_length(rows.norm()[0]))
    if is_fric.any():
        # |s_t z_t| <= mu s_n z_n: the friction rows' bound per unit of scaled normal force
        ratio = np.where(is_fric & ~dead, p.mu[kept] * s.take(normal_of) / s, 0.0)
        cone = FrictionBox(lo, hi, is_fric, ratio, normal_of, rows.n_contact_rows,
                           rows.tangent_runs)
        z = cone.project(z, np.empty(mb))
        iterations, residual, settled, method = 0, np.inf, False, ""
        if not p.long_solve:             # (else a violent phase: see SolverMemory)
            z, iterations, residual, settled = held_boxes(
                qp, cone, z, tol, p.rel, s, is_fric, max_iterations)
            method = "MPRGP"
        if not settled and iterations < max_iterations:
            # the box moves with the normal forces (a pile landing, being poured) or rounds of
            # held boxes cycle (a ragdoll pile): steps that follow it
            z, more, residual = accelerated_projection(
                op, c, z, cone, tol, max_iterations - iterations, norm_estimate=rows.norm)
            iterations += more
            method = "MPRGP + accelerated projection" if method else "accelerated projection"
        elif not settled:
            residual = np.inf               # (the box moved at the end of the budget)
        if residual > 1.0:          # unfinished: not worse than no impulses all the same
            z = best_multiple(op, c, z)
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
    rows (bounded by mu 0), and the rows held at zero (``_Problem.held``: their products are
    zero and their bounds hold them there; every vector operation would carry them).

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
    out |= p.held
    if np.count_nonzero(out) < WORKING_SET_SHARE * z.shape[0]:
        return None
    return _RowSet(p, out)


def _kept_contact_rows(n_contact_rows, left_out):
    """The rows of the contacts that a working set keeps (all but ``left_out``, (mb,) bool),
    which are then in the contact rows' layout (see ``BodySpace``), and the runs of friction
    rows among them (``accelerated_projection.FrictionBox``'s tangent_runs): (3 kept, 2)
    where it keeps whole contacts; (2 kept, 1) where it keeps some contacts' second friction
    rows alone among their normal and first friction rows (held rows, left out), which then
    follow as rows of their own; (0, 2) where it keeps contacts' rows in part otherwise (a
    friction row left out while its normal row is kept: a dead one, which moves no dynamic
    body)."""
    k = n_contact_rows // 3
    out = left_out[:3 * k].reshape(3, k)
    if (out[1] != out[0]).any():
        return 0, 2
    kept = k - int(np.count_nonzero(out[0]))
    if (out[2] == out[0]).all():
        return 3 * kept, 2
    if (out[2] >= out[0]).all():       # (second friction rows left out, some more)
        return 2 * kept, 1
    return 0, 2


class SolverMemory:
    """What one step's solve leaves the next; the World keeps one (a solve without it starts
    flat, with the held boxes).

    u: the power iteration's vector in body space (6N,). A pile's largest mode barely
    changes in a step, so started from last step's vector two products estimate ||s A s||
    better than six from a flat start (1000 poured spheres: 4.26 against 4.00 of 4.28; a
    ragdoll pile: 4.29 against 3.44 of 4.30, when MPRGP's step, 1.9 / (1.1 est), must stay
    below 2 / ||s A s||: ``accelerated_projection.mprgp_step_length``).

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
