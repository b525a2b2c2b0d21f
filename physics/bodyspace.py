"""Rows as sparse matrices in body space and the products with them: J (m x 6N) and
W = M^-1 J^T (6N x m) of a set of rows (``BodySpace``), and the operator that
``iterative.solve_iterative`` multiplies by, S + R of the bounded rows with the equality rows
eliminated (``Reduced``, see the ``iterative`` module docstring for S).

S is never formed. J and M^-1 J^T are two sparse matrices with 12 entries a row, so S x =
J_B (u - W_E A_EE^-1 J_E u), u = M^-1 J_B^T x: a few sparse products and one banded
back-substitution, linear in the rows. With joints the coupling matrix J_B W_E is formed once
per solve (without the exact zeros of limit rows and static bodies), so a product is three
sparse products (W_B x, [J_B; J_E] u, J_B W_E y) and the banded solve. Contacts alone, a solve
expected to take its whole budget leaves J's and W's exact zeros out too (a sphere's normal
rows have no torque: a third of 1000 poured spheres' entries). Among many small mechanisms (a
pile of ragdolls), a solve expected to take its whole budget (the last one did not finish)
applies A_EE^-1 by the inverses of the band's diagonal blocks instead
(``linsolve.DiagonalBlocks``): a 10-ragdoll pile's product 21 -> 11 us, for 0.2-0.4 ms of
inverses a solve; and only those of the mechanisms the bounded rows touch
(``linsolve.Chosen``).

The products call scipy's CSR/CSC kernels directly on the raw arrays (``Compressed``): with
10^4 rows they take about half of an iteration's time (the vector operations, ``vectorops``,
the other half); with a few hundred (a ragdoll pile) the per-call overhead and the joints'
banded solve dominate.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from scipy.linalg import lapack

from .assembly import COMPONENT_ROWS, Scatter, side_blocks_and_inverse_mass
from .linsolve import BandedCholesky
from .rows import Rows


# scipy's own CSR/CSC kernels (as assembly and stiffness use them): without the sparse
# operator's dispatch, a few microseconds a call that the small products of a ragdoll pile notice
from scipy.sparse._sparsetools import csc_matvec as _csc_matvec
from scipy.sparse._sparsetools import csr_matmat as _csr_matmat
from scipy.sparse._sparsetools import csr_matmat_maxnnz as _csr_matmat_maxnnz
from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
from scipy.sparse._sparsetools import csr_tocsc as _csr_tocsc


class BodySpace:
    """Rows (``rows.Rows``) as two sparse matrices: J (m x 6N) and W = M^-1 J^T (6N x m).

    Both share the layout of ``assembly.Scatter`` (12 entries a row: body a's six lanes, then
    body b's). J's entries are the rows' own blocks [Ja | Jb] where they have them
    (``Rows.side_blocks``: point, perpendicular and limit rows; not copied), and only M^-1
    applied to them is computed. ``times_J`` and ``times_W`` run scipy's kernels on the raw
    arrays; ``matrices`` gives J and W as ``Compressed``, and ``operator`` the solver's pruned
    matrices."""

    def __init__(self, rows: Rows, inv_mass, Iinv, n, n_contact_rows=0,
                 layout: Scatter | None = None, last_layout: Scatter | None = None):
        """``n_contact_rows``: the rows begin with contacts' rows as ``contact_rows`` makes
        them (k normal rows, then their first and their second friction rows, those of normal
        row i i-th in each run), and the rows after them have no friction rows
        (``unilateral.Unilateral``'s block). ``layout``: the rows' ``assembly.Scatter`` (of
        their a, b and n), when the caller has it (the joints' rows: the step's Model holds
        theirs); else it is made here, or taken from ``last_layout`` (a Scatter made for
        other rows, or None) where that was made for the same rows (``Scatter.made_for``:
        a resting pile's contact rows step after step; 55 boxes' 1203 rows: 4 against 25 us)."""
        m = rows.a.shape[0]
        self.m, self.n = m, n
        self.n_contact_rows = n_contact_rows
        self._ends = (rows.a, rows.b)
        # the three rows of a contact share their bodies: gathered once (on long blocks: on
        # short ones the calls cost more than they save)
        contacts = n_contact_rows if m >= COMPONENT_ROWS else 0
        if layout is None:
            layout = (last_layout if last_layout is not None
                      and last_layout.made_for(rows.a, rows.b, n, contacts)
                      else Scatter(rows.a, rows.b, n, contacts))
            self._lasting_layout = False
        else:
            self._lasting_layout = True
        self.layout = layout
        # a layout given by the caller outlives this step (the joints': the Model's), and so
        # may the pattern of the solver's matrices made on it (``_OperatorPattern``; not
        # kept on a last_layout, which the solver's matrices of a working set may not fit)
        self._J, self._M = side_blocks_and_inverse_mass(rows, inv_mass, Iinv, n_contact_rows)
        self._inverse_mass = (inv_mass, Iinv)

    def at(self, index: np.ndarray) -> "BodySpace":
        """The rows ``index`` (row numbers) of these as a BodySpace of their own, on the same
        bodies: their entries of J and M^-1 J^T and their columns taken, not made again (the
        same values as made for those rows alone: M^-1 is applied row by row either way)."""
        out = BodySpace.__new__(BodySpace)
        out.m, out.n, out.n_contact_rows = index.shape[0], self.n, 0
        out._ends = tuple(side.take(index) for side in self._ends)
        out.layout = self.layout.at(index)
        out._lasting_layout = False
        out._J, out._M = self._J.take(index, axis=0), self._M.take(index, axis=0)
        out._inverse_mass = self._inverse_mass
        return out

    @functools.cached_property
    def diagonal(self):
        """(m,): J M^-1 J^T's diagonal (made when first asked: the joints' is not)."""
        return np.einsum("ij,ij->i", self._J, self._M)

    @functools.cached_property
    def _sides(self):
        """(m, 2): the rows' bodies a and b (for ``operator``)."""
        return np.stack(self._ends, axis=1)

    def times_J(self, u):
        """J u (m,) for stacked body velocities u (6N,)."""
        return self.layout.times(self._J, u)

    def times_W(self, x):
        """M^-1 J^T x (6N,) for row multipliers x (m,)."""
        return self.layout.transpose_times(self._M, x)

    def operator(self, scale=None, order=None, moves=None, held=None):
        """(diag(scale) J, M^-1 J^T diag(scale)) of the rows taken in ``order`` (indices; None:
        all, as they are; ``scale`` is per row taken), without the entries that cannot
        contribute to J M^-1 J^T x (exact zeros, bodies that do not move; ``moves`` (N,) bool,
        when the caller has it; the rows ``held`` (bool, per row taken) whose multipliers the
        solve holds at zero, whose products it never reads): the matrices of the solver's
        products, both by rows (CSR ``Compressed``). W by rows costs a transposition of its
        entries, made up for in a few products: a product with it gathers, where by columns
        it scatters (1000 poured spheres' W, 55k entries: 114 against 143 us a product, 310 us
        the transposition; the same sums in the same order)."""
        if self._lasting_layout and scale is None and held is None:
            return self._lasting_operator(order, moves)
        Jd, Md, cols = self._J, self._M, self.layout.columns
        m = self.m if order is None else order.shape[0]
        # the held rows' entries are all left out: their rows are made empty without being
        # taken (1000 poured spheres: four in five contacts glide, their row across the slip
        # held; the matrices of a 7.5k-row working set 0.90 -> 0.65 ms, the same arrays)
        live = np.flatnonzero(~held) if held is not None and held.any() else None
        if live is not None:
            order = live if order is None else order.take(live)
            if scale is not None:
                scale = scale.take(live)
        if order is not None:
            Jd, Md, cols = Jd.take(order, axis=0), Md.take(order, axis=0), cols.take(order, axis=0)
        if scale is not None:
            Jd = Jd * scale[:, None]
            Md = Md * scale[:, None]
        # a body without inverse mass (static, or asleep: its inertia is zeroed with it) has
        # zero rows in W
        if moves is None:
            moves = self._inverse_mass[0] > 0
        sides = self._sides if order is None else self._sides.take(order, axis=0)
        k = sides.shape[0]
        keep_j = (Jd.reshape(k, 2, 6) != 0) & moves.take(sides)[:, :, None]
        keep_m = Md != 0
        J = _compressed_rows(keep_j.reshape(k, 12), cols, Jd, 6 * self.n, m, live)
        Wt = _compressed_rows(keep_m, cols, Md, 6 * self.n, m, live)
        return J, _by_rows(Compressed(6 * self.n, m, Wt.indptr, Wt.indices, Wt.data, True))

    def _lasting_operator(self, order, moves):
        """``operator(order=order, moves=moves)`` on a lasting layout (the joints' rows), from
        the pattern kept on it (``_OperatorPattern``): the same entries in the same places,
        with fewer calls (a 10-ragdoll pile's 540 joint rows: no reordering of the blocks,
        J's indices kept while its kept entries stay, W by rows without a transposition)."""
        if moves is None:
            moves = self._inverse_mass[0] > 0
        pattern = self.layout.operator_pattern
        if pattern is None or pattern.order is not order:
            pattern = self.layout.operator_pattern = _OperatorPattern(
                order, self.layout.columns, self._sides, 6 * self.n)
        return pattern.J(self._J, moves), pattern.W(self._M)

    def matrices(self):
        """(J, M^-1 J^T) as ``Compressed`` on the rows' own layout (J by rows, W by columns),
        exact zeros included (no copies: what ``times_J`` and ``times_W`` multiply by)."""
        L, width = self.layout, 6 * self.n
        return (Compressed(self.m, width, L.indptr, L.indices, self._J.reshape(-1)),
                Compressed(width, self.m, L.indptr, L.indices, self._M.reshape(-1), True))

    def impulse(self, lam):
        """M^-1 J^T lambda as linear and angular parts (N, 3) each."""
        u = self.times_W(lam).reshape(-1, 6)
        return u[:, :3], u[:, 3:]


class Compressed(NamedTuple):
    """A sparse matrix as the arguments of scipy's csr_matvec (by rows, CSR: indptr over
    rows) or csc_matvec (``by_columns``, CSC), 32-bit indices. The solver's matrices are used
    only by those kernels: no scipy matrix objects, whose construction checks its arrays
    (five a solve: 0.2 ms of a ragdoll pile's 0.35 ms setup) and whose products dispatch."""
    rows: int
    cols: int
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    by_columns: bool = False


def times(M: Compressed, x, out=None):
    """M x, or out + M x into ``out`` when given."""
    if out is None:
        out = np.zeros(M.rows)
    kernel = _csc_matvec if M.by_columns else _csr_matvec
    kernel(M.rows, M.cols, M.indptr, M.indices, M.data, x, out)
    return out


def _by_rows(M: Compressed) -> Compressed:
    """M (by columns) by rows: the same entries, transposed in memory."""
    nnz = M.indices.shape[0]
    p, i, x = np.empty(M.rows + 1, dtype=np.int32), np.empty(nnz, dtype=np.int32), np.empty(nnz)
    _csr_tocsc(M.cols, M.rows, M.indptr, M.indices, M.data, p, i, x)
    return Compressed(M.rows, M.cols, p, i, x)


def _sparse_product(A: Compressed, B: Compressed) -> Compressed:
    """A B by rows for A and B by rows: scipy's CSR product kernels (what ``A @ B`` of scipy
    matrices runs, without the matrices)."""
    nnz = _csr_matmat_maxnnz(A.rows, B.cols, A.indptr, A.indices, B.indptr, B.indices)
    Cp = np.empty(A.rows + 1, dtype=np.int32)
    Cj = np.empty(nnz, dtype=np.int32)
    Cx = np.empty(nnz)
    _csr_matmat(A.rows, B.cols, A.indptr, A.indices, A.data, B.indptr, B.indices, B.data,
                Cp, Cj, Cx)
    nnz = Cp[-1]                         # (the kernel leaves out entries that sum to zero)
    return Compressed(A.rows, B.cols, Cp, Cj[:nnz], Cx[:nnz])


def _rows_taken(M: Compressed, rows: np.ndarray) -> Compressed:
    """The ``rows`` (ascending) of M (by rows): their entries as they are, in order."""
    taken, at = _rows_structure(M, rows)
    return taken._replace(data=M.data.take(at))


def _rows_structure(M: Compressed, rows: np.ndarray):
    """``_rows_taken(M, rows)`` without its values (data None), and the places ``at`` of its
    entries among M's: its values are M.data.take(at)."""
    starts, ends = M.indptr[:-1].take(rows), M.indptr[1:].take(rows)
    counts = ends - starts
    indptr = np.zeros(rows.shape[0] + 1, dtype=np.int32)
    np.cumsum(counts, out=indptr[1:])
    # each kept entry's place in M: its row's start plus its place in the row
    at = np.arange(indptr[-1]) + np.repeat(starts - indptr[:-1], counts)
    return Compressed(rows.shape[0], M.cols, indptr, M.indices.take(at), None), at


def _compressed_rows(keep, columns, values, width, rows=None, at_rows=None):
    """The CSR matrix (rows x width) of the entries ``values`` (k, 12) in ``columns`` (k, 12)
    where ``keep`` (k, 12 bool): the k rows are the matrix's rows ``at_rows`` (k,) ascending,
    the others empty (None: all of them, rows = k)."""
    at = np.flatnonzero(keep)
    # the rows' counts by a matrix-vector product: a searchsorted of the row starts, or
    # numpy's count along the short axis, took about four times as long for 10^4 rows
    counts = keep.astype(float) @ _TWELVE_ONES
    if at_rows is not None:
        placed = np.zeros(rows)
        placed[at_rows] = counts
        counts = placed
    indptr = np.zeros(counts.shape[0] + 1, dtype=np.int32)
    indptr[1:] = np.cumsum(counts)
    return Compressed(counts.shape[0], width, indptr, columns.reshape(-1).take(at),
                      values.reshape(-1).take(at))


_TWELVE_ONES = np.ones(12)


class _OperatorPattern:
    """``BodySpace.operator``'s matrices of rows taken in ``order`` (None: as they are) on a
    lasting layout (``columns``, ``sides``: the rows' (m, 12) columns and (m, 2) bodies),
    made by gathers from the rows' (m, 12) blocks: J by rows with its indices kept while its
    kept entries stay (a joint's exact zeros and bodies stay from step to step), W by rows
    from all its possible entries by rows (W's exact zeros come and go), both gathered once
    per pattern here. The entries kept, their order and their values are ``operator``'s."""

    def __init__(self, order, columns, sides, width):
        m = columns.shape[0]
        self.order, self.m, self.width = order, m, width
        slots = np.arange(12 * m).reshape(m, 12)               # each entry's flat place
        body = np.repeat(sides, 6, axis=1)
        if order is not None:
            columns, slots, body = (x.take(order, axis=0) for x in (columns, slots, body))
        self._j_slots, self._j_columns, self._j_body = slots, columns, body
        self._j_keep = self._j = None
        self._taken = None                 # ``rows_taken``'s last: (J's pattern, rows, ...)
        # all of W's possible entries by rows: the transposition of all (m, 12) slots
        full = _by_rows(Compressed(width, m, np.arange(0, 12 * m + 1, 12, dtype=np.int32),
                                   columns.reshape(-1), slots.reshape(-1).astype(float), True))
        self._w_indptr, self._w_columns = full.indptr, full.indices
        self._w_slots = full.data.astype(np.intp)
        self._w_counts = np.zeros(self._w_slots.shape[0] + 1, dtype=np.int32)

    def J(self, Jd, moves) -> Compressed:
        """J (m x width, by rows) without its exact zeros and the entries of bodies that
        do not move (``moves`` (N,) bool)."""
        values = Jd.reshape(-1).take(self._j_slots)              # (m, 12) in order
        keep = (values != 0) & moves.take(self._j_body)
        if self._j is None or not np.array_equal(keep, self._j_keep):
            self._j_keep, self._j = keep, _compressed_rows(keep, self._j_columns,
                                                           np.arange(12 * self.m), self.width)
        return self._j._replace(data=values.reshape(-1).take(self._j.data))

    def rows_taken(self, J: Compressed, rows: np.ndarray) -> Compressed:
        """``_rows_taken(J, rows)`` for the J that ``self.J`` gave last: its index work kept
        while J's kept entries and the ``rows`` array (the same object) stay (a 10-ragdoll
        pile's chosen blocks step after step: 15 -> 3 us)."""
        taken = self._taken
        if taken is None or taken[0] is not self._j or taken[1] is not rows:
            taken = self._taken = (self._j, rows, *_rows_structure(self._j, rows))
        return taken[2]._replace(data=J.data.take(taken[3]))

    def W(self, Md) -> Compressed:
        """M^-1 J^T (width x m, by rows) without its exact zeros."""
        values = Md.reshape(-1).take(self._w_slots)
        keep = values != 0
        at = np.flatnonzero(keep)
        counts = self._w_counts
        np.cumsum(keep, out=counts[1:])
        return Compressed(self.width, self.m, counts.take(self._w_indptr),
                          self._w_columns.take(at), values.take(at))


class Reduced:
    """z -> diag(s) (S + R) diag(s) z for the bounded rows (Jacobi-scaled), with the equality
    rows eliminated; ``rows`` (indices into B's rows, in order): a working set of them (see
    ``iterative._working_set``, long solves only), None: all. Built once per solve (and row
    set). With joints: J_B and W_B scaled and pruned (``BodySpace.operator``), J_E and the
    coupling matrix J_B W_E (three sparse products and one banded solve per product instead
    of four and one; forming A_BB and J_E W_B as well saved a product but cost more in the
    entries of those two and in the sparse matrix product); the banded factorisation's row
    order is folded into J_E and J_B W_E. Contacts alone: J_B and W_B unscaled (the scaling
    is on the vectors), pruned only in a long solve. ``held`` (bool, per row taken): rows
    the solve holds at zero (a gliding contact's friction row across its slip, frictionless
    contacts' friction rows), left out of pruned matrices: the product is 0 on them and they
    add nothing to the others."""

    def __init__(self, B: BodySpace, cfm, s, E: BodySpace | None, factorizer, factor,
                 long_solve=False, rows=None, held=None):
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
            # (a working set, rows, comes only with a long solve; either prunes)
            self.J, self.W = (B.operator(order=rows, held=held) if long_solve or rows is not None
                              else B.matrices())
            return
        moves = B._inverse_mass[0] > 0
        J, W = B.operator(s, order=rows, moves=moves, held=held)
        self.banded = isinstance(factorizer, BandedCholesky)
        JE, WE = E.operator(order=factorizer.order if self.banded else None, moves=moves)
        self.D = _sparse_product(J, WE)    # J_B W_E ...
        np.negative(self.D.data, out=self.D.data)   # ... negated: added onto A z in place
        # a solve expected to take its whole budget (long_solve) among many small mechanisms
        # applies A_EE^-1 by its diagonal blocks' inverses (linsolve.DiagonalBlocks), and
        # only those of the mechanisms that the bounded rows touch: J_B W_E reads A_EE^-1 y
        # on their rows alone (D's columns), and A_EE^-1 is block diagonal, so those need
        # y = J_E W_B z on the same rows alone (a 10-ragdoll pile: 6-7 of 10 blocks; a
        # product 13 -> 10 us, the inverses 0.3 -> 0.2 ms; the same bits)
        blocks = factorizer.blocks if self.banded and long_solve else None
        chosen = None if blocks is None else blocks.chosen(self.D.indices)
        if chosen is not None:
            pattern = E.layout.operator_pattern if E._lasting_layout else None
            JE = (_rows_taken(JE, chosen.positions) if pattern is None
                  else pattern.rows_taken(JE, chosen.positions))
            self.D = self.D._replace(cols=JE.rows, indices=chosen.renumbered.take(self.D.indices))
            blocks = chosen
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
        self.mb = m
        self.factorizer, self.factor = factorizer, factor
        self.blocks = blocks
        self.inverses = None if blocks is None else blocks.inverses(factor)
        # with blocks none of which is padded, a product is three kernel calls and one
        # batched product, their arguments unpacked once here (``times``' own call and its
        # lookups were a fifth of a ragdoll pile's product)
        self._kernels = None
        if blocks is not None and blocks.slots is None:
            # (the blocks' product goes into a buffer of its own, read flat by the last kernel)
            solved = np.empty((blocks.count, blocks.rows, 1))
            self._kernels = (tuple(W)[:5], tuple(self.JJ)[:5], tuple(self.D)[:5],
                             (blocks.count, blocks.rows, 1), solved, solved.reshape(-1))

    def rows_from_bodies(self, u):
        """diag(s) J_B u (mb,) for body velocities u (6N,)."""
        if self.E is None:                 # (contacts alone: the scaling on the vectors)
            return self.s * times(self.J, u)
        return times(self.J, u)

    def bodies_from_rows(self, z):
        """M^-1 J_B^T diag(s) z (6N,)."""
        if self.E is None:
            return times(self.W, self.s * z)
        return times(self.W, z)

    def __call__(self, z):
        if self.E is None:
            y = times(self.J, times(self.W, np.multiply(self.s, z, out=self._scaled)))
            y *= self.s
            y += np.multiply(self.d, z, out=self._diagonal)
            return y
        if self._kernels is not None:
            W, JJ, D, blocks, solved, y = self._kernels
            u = np.zeros(W[0])
            _csr_matvec(*W, z, u)
            r = np.zeros(JJ[0])
            _csr_matvec(*JJ, u, r)
            np.matmul(self.inverses, r[self.mb:].reshape(blocks), solved)
            out = r[:self.mb]
            _csr_matvec(*D, y, out)
            out += np.multiply(self.d, z, out=self._diagonal)
            return out
        r = times(self.JJ, times(self.W, z))
        y = r[self.mb:]
        if self.inverses is not None:
            y = self.blocks.times(self.inverses, y)
        elif self.banded:
            y = lapack.dpbtrs(self.factor, y, lower=1, overwrite_b=1)[0]
        else:
            y = self.factorizer.solve(self.factor, y)
        out = r[:self.mb]
        times(self.D, y, out)              # out += (-J_B W_E) y by the kernel itself
        out += np.multiply(self.d, z, out=self._diagonal)
        return out
