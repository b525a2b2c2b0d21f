"""Rows in body space and the products with them (physics/bodyspace.py): J and M^-1 J^T of a
set of rows agree with dense algebra, and the reduced operator S + R of the iterative solve,
made with the joints' block inverses or without exact zeros, is the same operator."""
import numpy as np
import pytest

from physics.assembly import COMPONENT_ROWS
from physics.bodyspace import BodySpace, Reduced
from physics.rows import Rows
from bounded_helpers import (CFM, assert_optimal, body_space, dense,
                             dense_matrices, long_solve, operators, random_bodies,
                             random_problem)


def random_rows(rng, n, count, contacts=0):
    """``contacts`` contacts' rows (a normal, then a first and a second tangent row of each on
    the same bodies, as contact_rows makes them), then ``count`` rows, on random pairs of
    distinct bodies among n: Rows with random blocks."""
    a = rng.integers(0, n, contacts + count)
    b = (a + rng.integers(1, n, a.shape[0])) % n
    a, b = (np.concatenate([np.tile(side[:contacts], 3), side[contacts:]]) for side in (a, b))
    m = a.shape[0]
    return Rows(a, b, np.zeros(m), rng.normal(size=(m, 6)), rng.normal(size=(m, 6)), np.zeros(m))


def dense_rows(rows, inv_mass, Iinv, n):
    """J (m x 6N) and M^-1 J^T (6N x m) of ``rows`` by dense algebra: each row's blocks in its
    bodies' six columns, M^-1 block diagonal (inverse mass, world inverse inertia)."""
    J = np.zeros((rows.count, 6 * n))
    for r, (i, j) in enumerate(zip(rows.a, rows.b)):
        J[r, 6 * i:6 * i + 6] += rows.Ja[r]
        J[r, 6 * j:6 * j + 6] += rows.Jb[r]
    M = np.zeros((6 * n, 6 * n))
    for i in range(n):
        M[6 * i:6 * i + 3, 6 * i:6 * i + 3] = inv_mass[i] * np.eye(3)
        M[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = Iinv[i]
    return J, M @ J.T


def assert_close(x, y):
    """x equals y to 1e-12 of y's largest entry (a sum's rounding depends on its order)."""
    assert x.shape == y.shape
    assert np.abs(x - y).max() <= 1e-12 * np.abs(y).max()


@pytest.mark.parametrize("side_blocks", [False, True])
@pytest.mark.parametrize("contacts, count", [(0, 7), (4, 3), (0, COMPONENT_ROWS + 5),
                                             (COMPONENT_ROWS // 3 + 1, 0),
                                             (COMPONENT_ROWS // 3 + 1, 5)])
def test_products_agree_with_dense_algebra(contacts, count, side_blocks):
    """Random rows on random bodies, two of them static, bodies on side a of some rows and
    side b of others; short blocks (row by row) and long ones (by components), contacts'
    rows among them, the rows with their blocks [Ja | Jb] at hand (``Rows.side_blocks``) or
    not: J's entries are the rows' own, and J u, M^-1 J^T x, the impulse and the diagonal of
    J M^-1 J^T are those of dense algebra, as are the solver's matrices (``matrices``;
    ``operator`` scaled, reordered and without the static bodies' columns)."""
    rng = np.random.default_rng(contacts + count)
    n = 6
    inv_mass, Iinv = random_bodies(rng, n - 1)     # (body 0 static)
    static = np.array([0, 3])
    inv_mass[static], Iinv[static] = 0.0, 0.0
    rows = random_rows(rng, n, count, contacts)
    assert np.isin(static, np.concatenate([rows.a, rows.b])).all()
    assert np.intersect1d(rows.a, rows.b).size >= 3
    if side_blocks:
        rows = Rows(rows.a, rows.b, rows.C, rows.Ja, rows.Jb, rows.Jdu, side_blocks=rows.blocks)
    J, W = dense_rows(rows, inv_mass, Iinv, n)
    B = BodySpace(rows, inv_mass, Iinv, n, n_contact_rows=3 * contacts)

    assert B.m == rows.count and B.n == n
    J_B, W_B = dense_matrices(B)
    assert (J_B == J).all()
    assert_close(W_B, W)
    u, x = rng.normal(size=6 * n), rng.normal(size=rows.count)
    assert_close(B.times_J(u), J @ u)
    assert_close(B.times_W(x), W @ x)
    dv, dw = B.impulse(x)
    assert_close(np.concatenate([dv, dw], axis=1), (W @ x).reshape(n, 6))
    assert_close(B.diagonal, np.diag(J @ W))

    order = rng.permutation(rows.count)[:rows.count - 2]
    scale = rng.uniform(0.5, 2.0, order.size)
    J_op, W_op = B.operator(scale, order)
    moving_columns = np.repeat(inv_mass > 0, 6)
    assert (dense(J_op) == scale[:, None] * J[order] * moving_columns).all()
    assert_close(dense(W_op), W[:, order] * scale)


def test_long_solves_among_many_mechanisms_use_their_blocks_inverses(monkeypatch):
    """Many small mechanisms (six chains of four links): a solve expected to take its whole
    budget (after one that did not finish) applies A_EE^-1 by the inverses of its diagonal
    blocks (linsolve.DiagonalBlocks) instead of the band's back-substitution. It is the same
    reduced operator to rounding, and such a solve meets the same conditions."""
    p = random_problem(2, n_bodies=24, n_contacts=8, n_limits=4, chains=6)
    E, B, fac, factor = operators(p)
    assert fac.blocks is not None and fac.blocks.count == 6
    s = 1.0 / np.sqrt(B.diagonal + CFM)
    band = Reduced(B, CFM, s, E, fac, factor)
    blocks = Reduced(B, CFM, s, E, fac, factor, long_solve=True)
    assert band.inverses is None and blocks.inverses is not None
    z = np.random.default_rng(0).normal(size=B.m)
    assert_close(blocks(z), band(z))
    made = []
    inverses = fac.blocks.inverses
    monkeypatch.setattr(fac.blocks, "inverses",
                        lambda f, *chosen: made.append(f) or inverses(f, *chosen))
    (lam_e, lam_b, info), *_ = long_solve(p, None, ops=(E, B, fac, factor))
    assert len(made) == 1 and made[0] is factor       # the solve used the blocks' inverses
    assert info["residual"] <= 1.0
    assert_optimal(p, E, B, lam_e, lam_b)


def test_long_solves_apply_the_inverses_of_the_mechanisms_their_rows_touch(monkeypatch):
    """Many small mechanisms, few of them touched by the bounded rows (two contacts and a
    limit among six chains): a long solve's operator applies the inverses of those
    mechanisms' blocks alone (the coupling J_B W_E reads A_EE^-1 y on their rows only, and
    A_EE^-1 is block diagonal). It is the operator with every block's inverse, to the last
    bit."""
    from physics.linsolve import DiagonalBlocks
    p = random_problem(4, n_bodies=24, n_contacts=2, n_limits=1, chains=6)
    E, B, fac, factor = operators(p)
    s = 1.0 / np.sqrt(B.diagonal + CFM)
    some = Reduced(B, CFM, s, E, fac, factor, long_solve=True)
    with monkeypatch.context() as patch:
        patch.setattr(DiagonalBlocks, "chosen", lambda self, positions: None)
        every = Reduced(B, CFM, s, E, fac, factor, long_solve=True)
    assert every.blocks.count == 6 and 0 < some.blocks.count < 6
    assert some.JJ.rows < every.JJ.rows and some.D.data.size == every.D.data.size
    rng = np.random.default_rng(3)
    for _ in range(3):
        z = rng.normal(size=B.m)
        assert some(z).tobytes() == every(z).tobytes()


def test_long_solves_of_contacts_alone_skip_their_exact_zeros():
    """Contacts alone (no joints): a solve expected to take its whole budget multiplies by J
    and M^-1 J^T without their exact zeros (a sphere's normal rows have no torque, a static
    body's side moves nothing). Leaving out terms that are exactly zero changes no sum: the
    reduced operator is the same to the last bit, with fewer entries."""
    p = random_problem(5, n_bodies=12, n_eq=0, n_contacts=30, n_limits=1)
    a, b, Ja, Jb = p["b"]
    # the normal rows between two moving bodies push through both centres
    central = np.flatnonzero((a[:30] != 0) & (b[:30] != 0))
    Ja, Jb = Ja.copy(), Jb.copy()
    Ja[central, 3:] = 0.0
    Jb[central, 3:] = 0.0
    B = body_space(p, a, b, Ja, Jb)
    s = 1.0 / np.sqrt(B.diagonal + CFM)
    plain = Reduced(B, CFM, s, None, None, None)
    pruned = Reduced(B, CFM, s, None, None, None, long_solve=True)
    static_sides = int(np.count_nonzero(a == 0) + np.count_nonzero(b == 0))
    assert static_sides > 0 and central.size > 10
    assert pruned.J.data.size == 12 * B.m - 6 * static_sides - 6 * central.size
    assert pruned.W.data.size == pruned.J.data.size
    rng = np.random.default_rng(1)
    for _ in range(3):
        z = rng.normal(size=B.m)
        assert pruned(z).tobytes() == plain(z).tobytes()
        u = rng.normal(size=6 * p["n"])
        u[:6] = 0.0         # (body velocities the solver makes: the static world's stay 0)
        assert pruned.rows_from_bodies(u).tobytes() == plain.rows_from_bodies(u).tobytes()
        assert pruned.bodies_from_rows(z).tobytes() == plain.bodies_from_rows(z).tobytes()


def test_operator_on_a_lasting_layout_keeps_the_same_entries_bit_for_bit():
    """The joints' rows (a layout that lasts from step to step) get the solver's matrices
    from a pattern kept on the layout: the same entries, order and values as made afresh,
    also when exact zeros and still bodies come and go between steps, and in another order."""
    from physics.assembly import Scatter
    rng = np.random.default_rng(3)
    n, m = 7, 40
    rows = random_rows(rng, n, m)
    layout = Scatter(rows.a, rows.b, n)
    inv_mass, Iinv = random_bodies(rng, n - 1)      # body 0: the static world
    for step in range(4):
        Ja, Jb = rng.normal(size=(m, 6)), rng.normal(size=(m, 6))
        Ja[rng.random((m, 6)) < 0.3] = 0.0           # exact zeros that change each step
        Jb[rng.random((m, 6)) < 0.3] = 0.0
        stepped = Rows(rows.a, rows.b, np.zeros(m), Ja, Jb, np.zeros(m))
        moves = rng.random(n) < 0.8
        for order in (None, rng.permutation(m)):
            lasting = BodySpace(stepped, inv_mass, Iinv, n, layout=layout)
            fresh = BodySpace(stepped, inv_mass, Iinv, n)
            for got, made in zip(lasting.operator(order=order, moves=moves),
                                 fresh.operator(order=order, moves=moves)):
                assert (got.rows, got.cols, got.by_columns) == (made.rows, made.cols,
                                                                made.by_columns)
                for x, y in ((got.indptr, made.indptr), (got.indices, made.indices),
                             (got.data, made.data)):
                    assert x.shape == y.shape and np.array_equal(x, y)


def test_rows_taken_on_a_lasting_layout_are_those_taken_afresh_bit_for_bit():
    """The joints' chosen rows of J taken from the pattern kept on their layout (its index
    work kept while J's entries and the rows stay): the same entries, order and values as
    ``_rows_taken`` makes afresh, as values, exact zeros and the rows change between steps."""
    from physics.assembly import Scatter
    from physics.bodyspace import _rows_taken
    rng = np.random.default_rng(4)
    n, m = 7, 40
    rows = random_rows(rng, n, m)
    layout = Scatter(rows.a, rows.b, n)
    inv_mass, Iinv = random_bodies(rng, n - 1)
    taken = np.flatnonzero(rng.random(m) < 0.5)
    for step in range(6):
        Ja, Jb = rng.normal(size=(m, 6)), rng.normal(size=(m, 6))
        if step % 2:                                   # exact zeros every other step
            Ja[rng.random((m, 6)) < 0.3] = 0.0
        if step == 3:
            taken = np.flatnonzero(rng.random(m) < 0.5)   # other rows
        stepped = Rows(rows.a, rows.b, np.zeros(m), Ja, Jb, np.zeros(m))
        lasting = BodySpace(stepped, inv_mass, Iinv, n, layout=layout)
        J, _ = lasting.operator(moves=np.ones(n, dtype=bool))
        got = layout.operator_pattern.rows_taken(J, taken)
        made = _rows_taken(J, taken)
        assert (got.rows, got.cols) == (made.rows, made.cols)
        for x, y in ((got.indptr, made.indptr), (got.indices, made.indices),
                     (got.data, made.data)):
            assert x.shape == y.shape and x.tobytes() == y.tobytes()


@pytest.mark.parametrize("scaled", [False, True])
def test_operator_leaves_held_rows_empty_and_the_others_bit_for_bit(scaled):
    """Rows the solve holds at zero (``held``, per row taken) are empty rows of J and empty
    columns of M^-1 J^T in the solver's matrices, made without taking them; every other
    entry is where, and what, it is in the matrices of the same rows with the held rows'
    blocks zeroed (all their entries then exact zeros, left out), in any order of the rows."""
    rng = np.random.default_rng(5)
    n, contacts, count = 9, 40, 30
    inv_mass, Iinv = random_bodies(rng, n - 1)      # body 0: the static world
    rows = random_rows(rng, n, count, contacts)
    m = rows.count
    for order in (None, rng.permutation(m)[:m - 7]):
        taken = m if order is None else order.size
        held = rng.random(taken) < 0.4
        scale = rng.uniform(0.5, 2.0, taken) if scaled else None
        zeroed = np.zeros(m, dtype=bool)
        zeroed[np.arange(m)[held] if order is None else order[held]] = True
        Ja, Jb = rows.Ja.copy(), rows.Jb.copy()
        Ja[zeroed], Jb[zeroed] = 0.0, 0.0
        plain = BodySpace(Rows(rows.a, rows.b, rows.C, Ja, Jb, rows.Jdu), inv_mass, Iinv, n,
                          n_contact_rows=3 * contacts)
        B = BodySpace(rows, inv_mass, Iinv, n, n_contact_rows=3 * contacts)
        for got, made in zip(B.operator(scale, order, held=held), plain.operator(scale, order)):
            assert (got.rows, got.cols, got.by_columns) == (made.rows, made.cols,
                                                            made.by_columns)
            for x, y in ((got.indptr, made.indptr), (got.indices, made.indices),
                         (got.data, made.data)):
                assert x.shape == y.shape and np.array_equal(x, y)
        J_op, W_op = B.operator(scale, order, held=held)
        assert (np.diff(J_op.indptr)[held] == 0).all() and (dense(W_op)[:, held] == 0).all()
        assert np.count_nonzero(np.diff(J_op.indptr)[~held]) == np.count_nonzero(~held)


@pytest.mark.parametrize("contacts, count", [(5, 4), (COMPONENT_ROWS // 3 + 1, 5)])
def test_rows_taken_from_a_body_space_are_those_made_alone_bit_for_bit(contacts, count):
    """``BodySpace.at`` (an impact pass's bounce and friction rows, taken from the space of
    all its rows: impacts._PassBodies) gives the entries of J and M^-1 J^T, their layout,
    the diagonal and the products that a BodySpace made of those rows alone has, bit for bit,
    also when the whole space was made by components (a long block) and the rows alone row
    by row."""
    rng = np.random.default_rng(11)
    n = 9
    inv_mass, Iinv = random_bodies(rng, n - 1)
    rows = random_rows(rng, n, count, contacts)
    whole = BodySpace(rows, inv_mass, Iinv, n, n_contact_rows=3 * contacts)
    index = np.sort(rng.choice(rows.count, size=min(rows.count - 3, 40), replace=False))
    taken, alone = whole.at(index), BodySpace(rows.at(index), inv_mass, Iinv, n)
    assert (taken.m, taken.n) == (alone.m, alone.n) == (index.size, n)
    assert np.array_equal(taken.layout.columns, alone.layout.columns)
    assert np.array_equal(taken.layout.indptr, alone.layout.indptr)
    for got, made in zip(taken.matrices(), alone.matrices()):
        assert np.array_equal(got.data, made.data) and np.array_equal(got.indices, made.indices)
    assert np.array_equal(taken.diagonal, alone.diagonal)
    u, x = rng.normal(size=6 * n), rng.normal(size=index.size)
    assert np.array_equal(taken.times_J(u), alone.times_J(u))
    assert np.array_equal(taken.times_W(x), alone.times_W(x))
    assert np.array_equal(np.stack(taken._ends, axis=1), alone._sides)
