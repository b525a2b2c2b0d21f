"""Assembling A = J M^-1 J^T + R from rows whose Jacobians touch at most two bodies.

Every row has a 6-vector block for body a and one for body b ("sides"). Two rows couple in A
only through a dynamic body they share, so the sparsity pattern of A is fixed by which
bodies each row touches. ``Pattern`` finds those (side, side) pairs once per topology and
maps each to a slot of the solver's storage; ``Pattern.values`` then refills A with a few
array operations per step.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse._sparsetools import csc_matvec as _csc_matvec, csr_matvec as _csr_matvec
from scipy.sparse._sparsetools import csr_matvecs as _csr_matvecs

from .linsolve import SingularSystemError, make_factorizer
from .math3d import einsum


class Pattern:
    """Fixed sparsity of A for rows touching bodies ``a`` (m,), ``b`` (m,).

    ``dynamic`` (N,) marks bodies with non-zero inverse mass; rows only couple through those.
    """

    def __init__(self, a: np.ndarray, b: np.ndarray, dynamic: np.ndarray, n_bodies: int):
        m = a.shape[0]
        self.m = m
        self.n_sides = 2 * m
        side_body = np.stack([a, b], axis=1).reshape(-1)          # side s -> body
        live = np.flatnonzero(dynamic[side_body])
        order = live[np.argsort(side_body[live], kind="stable")]
        bodies = side_body[order]
        counts = np.bincount(bodies, minlength=n_bodies)[bodies]  # group size of each side
        group_start = np.searchsorted(bodies, bodies, side="left")
        # every side pairs with every side of its body's group (including itself)
        si = np.repeat(order, counts)
        offsets = np.arange(si.shape[0]) - np.repeat(np.cumsum(counts) - counts, counts)
        sj = order[np.repeat(group_start, counts) + offsets]
        ri, rj = si // 2, sj // 2
        self._group_layout(order, bodies, counts, group_start, si, sj)

        # solver layout, chosen from the row graph (see linsolve)
        graph = sp.coo_matrix((np.ones(ri.shape[0]), (ri, rj)), shape=(m, m)).tocsr()
        self.factorizer = make_factorizer(graph)
        slot_i, slot_j, keep = self.factorizer.slots(ri, rj)
        self.side_i, self.side_j = si[keep], sj[keep]
        self.target = self.factorizer.flat_index(slot_i[keep], slot_j[keep])
        self.diagonal = self.factorizer.diagonal_index()
        self.half_stored = not keep.all()
        self.side_body = side_body
        self._all_pairs = (si, sj, ri, rj)
        if self.grouped is not None:
            self.grouped = self.grouped[0], self.grouped[1], self.grouped[2][keep]

    def _group_layout(self, order, bodies, counts, group_start, si, sj):
        """Sides grouped by body, padded to k per body: A's entries are then the Gram
        matrices S M^-1 S^T (k x k) of each body's sides, one batched product. ``grouped`` is
        (bodies, padded side index (B, k), flat index into the Grams of each (si, sj) pair),
        or None when padding would waste more than it saves (a few bodies with many rows)."""
        self.grouped = None
        if not order.size:
            return
        k = int(counts.max())
        group_bodies = np.unique(bodies)
        if group_bodies.size * k * k > 8 * si.size:
            return
        group_of = np.empty(self.n_sides, dtype=np.intp)
        slot_of = np.empty(self.n_sides, dtype=np.intp)
        group_of[order] = np.searchsorted(group_bodies, bodies)
        slot_of[order] = np.arange(order.size) - group_start
        # short groups are padded with side 0: the Gram entries of padding are never read
        padded = np.zeros((group_bodies.size, k), dtype=np.intp)
        padded[group_of[order], slot_of[order]] = order
        flat = (group_of[si] * k + slot_of[si]) * k + slot_of[sj]
        self.grouped = (group_bodies, padded, flat)

    def cross_matrix(self, J_left: np.ndarray, JM_right: np.ndarray, cfm: float) -> sp.csc_matrix:
        """The non-symmetric J_left M^-1 J_right^T (m x m, CSC) from per-side blocks
        J_left (2m, 6) and M^-1 J_right^T (2m, 6): the exact Newton matrix of SHAKE."""
        si, sj, ri, rj = self._all_pairs
        vals = einsum("ij,ij->i", J_left[si], JM_right[sj])
        out = sp.coo_matrix((vals, (ri, rj)), shape=(self.m, self.m)).tocsc()
        return out + cfm * sp.identity(self.m, format="csc")

    def sides(self, Ja, Jb, inv_mass, inv_inertia):
        """Per-side Jacobian blocks J (2m, 6) and M^-1 J (2m, 6)."""
        J = np.stack([Ja, Jb], axis=1).reshape(-1, 6)
        return J, apply_inverse_mass(J, self.side_body, inv_mass, inv_inertia)

    def values(self, Ja: np.ndarray, Jb: np.ndarray, inv_mass: np.ndarray,
               inv_inertia: np.ndarray, cfm: float | np.ndarray,
               blocks: np.ndarray | None = None) -> np.ndarray:
        """Entries of A in the factorizer's storage for Jacobian blocks Ja, Jb (m, 6).

        inv_mass (N,), inv_inertia (N, 3, 3) world frame (zero for static bodies); ``blocks``
        (m, 12): [Ja | Jb] if at hand (``Rows.blocks``).
        """
        if self.grouped is not None:
            if blocks is None:
                blocks = np.concatenate([Ja, Jb], axis=1)
            contrib = self._gram_contributions(blocks.reshape(-1, 6), inv_mass, inv_inertia)
        else:
            J = np.stack([Ja, Jb], axis=1).reshape(-1, 6)
            JM = apply_inverse_mass(J, self.side_body, inv_mass, inv_inertia)
            contrib = einsum("ij,ij->i", JM[self.side_i], J[self.side_j])
        data = np.bincount(self.target, weights=contrib, minlength=self.factorizer.size)
        data[self.diagonal] += cfm
        return data

    def factor(self, rows, inv_mass: np.ndarray, inv_inertia: np.ndarray, cfm: float):
        """The factorisation of A = J M^-1 J^T + cfm for these rows (``rows.Rows``)."""
        try:
            return self.factorizer.factor(self.values(rows.Ja, rows.Jb, inv_mass, inv_inertia,
                                                      cfm, blocks=rows.blocks))
        except SingularSystemError as exc:
            if exc.row is not None and exc.pattern is None:
                exc.pattern = self
                exc.bodies = tuple(int(r) for r in self.side_body[2 * exc.row:2 * exc.row + 2])
            raise

    def _gram_contributions(self, sides, inv_mass, inv_inertia):
        """The kept pairs' S M^-1 S^T entries from the per-side blocks ``sides`` (2m, 6) (side
        2i of row i on body a, 2i + 1 on body b). M^-1 of each body as one 6x6 block, so
        that the Grams are two batched products (np.take: a faster gather than indexing)."""
        bodies, padded, flat = self.grouped
        S = np.take(sides, padded, axis=0)          # (B, k, 6)
        inverse_mass = np.zeros((bodies.size, 6, 6))
        inverse_mass.reshape(-1, 36)[:, _LINEAR_DIAGONAL] = inv_mass.take(bodies)[:, None]
        inverse_mass[:, 3:, 3:] = np.take(inv_inertia, bodies, axis=0)
        return np.matmul(S @ inverse_mass, S.transpose(0, 2, 1)).reshape(-1).take(flat)


_LINEAR_DIAGONAL = np.array([0, 7, 14])     # flat indices of (0, 0), (1, 1), (2, 2) in a 6x6


def apply_inverse_mass(J: np.ndarray, body: np.ndarray, inv_mass: np.ndarray,
                       inv_inertia: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """M^-1 applied to 6-vectors J (k, 6) [linear; angular] belonging to bodies ``body`` (k,),
    into ``out`` (k, 6) if given. (take: several times faster than fancy indexing for these
    gathers; the 3 x 3 products as three broadcast products, cheaper than einsum's loop.)"""
    out = np.empty_like(J) if out is None else out
    if J.shape[0] >= COMPONENT_ROWS:
        # products on (m, 3) columns loop three at a time: on long blocks, transposing to
        # and from whole components costs less than that (the same products, the same bits)
        MT = np.empty((6, J.shape[0]))
        inverse_mass_components(np.ascontiguousarray(J.T), body, inv_mass, inv_inertia, MT)
        out[...] = MT.T
        return out
    np.multiply(J[:, :3], inv_mass.take(body)[:, None], out=out[:, :3])
    Ib = inv_inertia.take(body, axis=0)
    out[:, 3:] = Ib[:, :, 0] * J[:, 3:4] + Ib[:, :, 1] * J[:, 4:5] + Ib[:, :, 2] * J[:, 5:6]
    return out


# from this many rows on, apply_inverse_mass works on whole components (measured crossover)
COMPONENT_ROWS = 256


def inverse_mass_components(JT: np.ndarray, body: np.ndarray, inv_mass: np.ndarray,
                            inv_inertia: np.ndarray, out: np.ndarray, group: int = 1) -> None:
    """``apply_inverse_mass`` by components: JT (6, m) the rows' 6-vectors [linear; angular]
    by component, each component contiguous; out (6, m) likewise (both are reshaped to (6, g,
    m / g) views: a copy would lose the results). ``group`` g: the rows are g runs of m / g
    rows on the same bodies (3: contacts' normal rows, then their first and second tangent
    rows, as ``contact_rows`` makes them), so each body is gathered once for its g rows. Sums
    in the order of the row-wise products (the same bits)."""
    m = JT.shape[1]
    k = m // group
    if group > 1:
        body = body[:k]
        JT, out = JT.reshape(6, group, k), out.reshape(6, group, k)
    np.multiply(JT[:3], inv_mass.take(body), out=out[:3])
    I = np.ascontiguousarray(inv_inertia.reshape(-1, 9).take(body, axis=0).T)   # (9, k)
    tmp = np.empty(out.shape[1:])
    for r in range(3):
        o = out[3 + r]
        np.multiply(I[3 * r], JT[3], out=o)
        np.multiply(I[3 * r + 1], JT[4], out=tmp)
        o += tmp
        np.multiply(I[3 * r + 2], JT[5], out=tmp)
        o += tmp


def side_blocks_and_inverse_mass(rows, inv_mass: np.ndarray, inv_inertia: np.ndarray,
                                 n_contact_rows: int):
    """[Ja | Jb] and M^-1 applied to both sides, [M_a^-1 Ja | M_b^-1 Jb], (m, 12) each and
    C-contiguous, of ``rows`` (``rows.Rows``): [Ja | Jb] is the rows' own ``Rows.side_blocks``
    where they have them (not copied). ``n_contact_rows``: the rows begin with contacts'
    rows, in three runs on the same bodies (see ``inverse_mass_components``). Long blocks go
    by whole components (transposing to (12, m) and back costs less than the products on (m,
    3) columns), short ones row by row: the products of ``apply_inverse_mass``, the same
    bits."""
    a, b, J = rows.a, rows.b, rows.side_blocks
    m = a.shape[0]
    if m < COMPONENT_ROWS:
        J = rows.blocks
        M = np.empty((m, 12))
        apply_inverse_mass(J[:, :6], a, inv_mass, inv_inertia, out=M[:, :6])
        apply_inverse_mass(J[:, 6:], b, inv_mass, inv_inertia, out=M[:, 6:])
        return J, M
    JT = np.empty((12, m))
    if J is None:
        # (two transposed copies in and one back cost less than concatenating (m, 6) sides:
        # 10^4 contact rows 125 against 230 us)
        JT[:6], JT[6:] = rows.Ja.T, rows.Jb.T
        J = np.ascontiguousarray(JT.T)
    else:
        JT[...] = J.T
    MT = np.empty((12, m))
    c = n_contact_rows
    for lanes, body in ((slice(0, 6), a), (slice(6, 12), b)):
        if c:
            inverse_mass_components(JT[lanes, :c], body[:c], inv_mass, inv_inertia,
                                    MT[lanes, :c], group=3)
        if c < m:
            inverse_mass_components(JT[lanes, c:], body[c:], inv_mass, inv_inertia,
                                    MT[lanes, c:])
    return J, np.ascontiguousarray(MT.T)


def inverse_mass_times(inv_mass: np.ndarray, inv_inertia: np.ndarray, F: np.ndarray,
                       T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """M^-1 applied to per-body forces F and torques T (N, 3) (N, N m; or impulses): linear
    and angular accelerations (or velocity changes) (N, 3) each, world frame; inv_inertia
    (N, 3, 3) world frame."""
    return inv_mass[:, None] * F, einsum("nij,nj->ni", inv_inertia, T)


_LANES12 = np.tile(np.arange(6, dtype=np.int32), 2)


def onto_rows(pattern, scatter, factor, blocks, v, w, inv_mass, inv_inertia):
    """Velocities v, w (N, 3) each, less what the rows (side blocks ``blocks`` in ``scatter``'s
    layout) forbid, taken out M-orthogonally: v + M^-1 J^T nu with (J M^-1 J^T + cfm) nu =
    -J v, ``factor`` being ``pattern``'s factorisation of that matrix at these inverse masses
    and inertias (inv_mass (N,), inv_inertia (N, 3, 3) world frame). RATTLE's velocity
    projection; given a change of velocity, the change made to meet the rows."""
    nu = pattern.factorizer.solve(factor, scatter.velocity_of(blocks, v, w))
    dv, dw = scatter.response(blocks, -nu, inv_mass, inv_inertia)
    return v + dv, w + dw


def _kept(x: np.ndarray) -> np.ndarray:
    """x, or a copy of it where it may change (it is writeable, or a view of an array that
    is)."""
    return x if not x.flags.writeable and x.base is None else x.copy()


def _columns(a, b, out):
    """out (k, 12) <- the columns in J (m x 6N) of rows on bodies a, b (k,): body a's six
    lanes, then body b's."""
    out[:, :6] = 6 * a[:, None]
    out[:, 6:] = 6 * b[:, None]
    out += _LANES12


class Scatter:
    """Products with the Jacobian J (m x 6N) of rows that touch bodies ``a`` and ``b`` (m,):
    J^T lambda per body and J u per row. J is held as the rows' two 6-blocks side by side,
    ``Rows.blocks`` (m, 12), with a fixed column pattern: that is J in CSR form and J^T in CSC
    form, so both products are one call of scipy's sparse kernels (no sparse matrix objects,
    no operator dispatch). J^T lambda sums each body's terms in row order, as a sparse
    scatter of the rows' forces would."""

    def __init__(self, a: np.ndarray, b: np.ndarray, n_bodies: int, n_contact_rows: int = 0):
        """``n_contact_rows``: the rows begin with contacts' rows, in three runs on the same
        bodies (see ``inverse_mass_components``): the first run's columns are copied to the
        others."""
        m = a.shape[0]
        self.m, self.n_bodies = m, n_bodies
        self.indptr = np.arange(0, 12 * m + 1, 12, dtype=np.int32)
        columns = np.empty((m, 12), dtype=np.int32)
        k = n_contact_rows // 3
        if k:
            _columns(a[:k], b[:k], columns[:k])
            columns[k:3 * k].reshape(2, k, 12)[:] = columns[:k]
        if 3 * k < m:
            _columns(a[3 * k:], b[3 * k:], columns[3 * k:])
        self.columns = columns                            # (m, 12)
        self.indices = columns.reshape(-1)
        # the solver's matrices' pattern on these rows (``bodyspace.BodySpace.operator``)
        self.operator_pattern = None
        # what it was made for (``made_for``); copies where the caller's arrays may change
        # (read-only ones are kept as they are: contact_rows.RowEnds, a pile's step after step)
        self._made_for = (_kept(a), _kept(b), n_contact_rows)

    def made_for(self, a: np.ndarray, b: np.ndarray, n_bodies: int,
                 n_contact_rows: int = 0) -> bool:
        """Whether this is the layout Scatter(a, b, n_bodies, n_contact_rows) makes (the same
        rows on the same bodies: a resting pile's contacts step after step)."""
        made_a, made_b, made_contacts = self._made_for
        if n_bodies != self.n_bodies or n_contact_rows != made_contacts:
            return False
        if a is made_a and b is made_b:     # (the same read-only arrays: see _kept)
            return True
        return (a.shape == made_a.shape and bool((a == made_a).all())
                and bool((b == made_b).all()))

    def at(self, index: np.ndarray) -> "Scatter":
        """The layout of the rows ``index`` (row numbers) of these, on the same bodies: their
        columns taken, not made again."""
        out = Scatter.__new__(Scatter)
        m = index.shape[0]
        out.m, out.n_bodies = m, self.n_bodies
        out.indptr = np.arange(0, 12 * m + 1, 12, dtype=np.int32)
        out.columns = self.columns.take(index, axis=0)
        out.indices = out.columns.reshape(-1)
        out.operator_pattern = None
        out._made_for = (np.zeros(0, dtype=np.int64),) * 2 + (-1,)      # (never made for rows)
        return out

    def forces_of(self, blocks: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """J^T lambda per body (N, 6); ``blocks`` (m, 12) is [Ja | Jb], C-contiguous."""
        return self.transpose_times(blocks, np.ascontiguousarray(lam, dtype=float)).reshape(-1, 6)

    def response(self, blocks: np.ndarray, lam: np.ndarray, inv_mass: np.ndarray,
                 inv_inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """M^-1 J^T lambda: the linear and angular accelerations (N, 3) each (velocity
        changes for impulses) that row multipliers lam (m,) give the bodies; ``blocks`` as
        in ``forces_of``, inv_inertia (N, 3, 3) world frame."""
        G = self.forces_of(blocks, lam)
        return inverse_mass_times(inv_mass, inv_inertia, G[:, :3], G[:, 3:])

    def velocity_of(self, blocks: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
        """J u per row (m,) for body velocities v, w (N, 3)."""
        return self.times(blocks, np.concatenate([v, w], axis=1).reshape(-1))

    def times(self, blocks: np.ndarray, u: np.ndarray) -> np.ndarray:
        """J u (m,) for stacked body velocities u (6N,); ``blocks`` (m, 12) C-contiguous (J,
        or any matrix of the same pattern)."""
        out = np.zeros(self.m)
        _csr_matvec(self.m, 6 * self.n_bodies, self.indptr, self.indices, blocks.reshape(-1), u, out)
        return out

    def times_columns(self, blocks: np.ndarray, G: np.ndarray) -> np.ndarray:
        """J G (m, k) for a dense G (6N, k) (``times`` of each column at once)."""
        out = np.zeros((self.m, G.shape[1]))
        _csr_matvecs(self.m, 6 * self.n_bodies, G.shape[1], self.indptr, self.indices,
                     np.ascontiguousarray(blocks).reshape(-1), G, out)
        return out

    def transpose_times(self, blocks: np.ndarray, x: np.ndarray) -> np.ndarray:
        """blocks^T x (6N,) for row values x (m,), contiguous floats (J^T lambda, or M^-1 J^T
        lambda with the blocks of M^-1 J^T)."""
        out = np.zeros(6 * self.n_bodies)
        _csc_matvec(6 * self.n_bodies, self.m, self.indptr, self.indices, blocks.reshape(-1), x, out)
        return out
