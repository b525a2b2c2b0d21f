"""The iterative bounded solver (physics/iterative.py), beside the direct one (physics/bounded.py).

Small random problems: equality rows (joints) between random bodies, bounded rows (contact
normals lambda >= 0 with a friction pyramid, one-sided limits, bounded motors). The answers
must meet the problem's optimality conditions, checked on the dense system (without friction
the box QP's KKT conditions, for either solver; with friction those of the fixed point whose
friction bounds are mu times the answer's own normal forces). The iterative solver must also
keep the equality rows exact, respect the friction bounds, never leave a solve cut short worse
than no impulses, and be bitwise deterministic.
"""
import numpy as np
import pytest

from physics import Box, Plane, Sphere, World
from physics.assembly import Pattern
from physics.bounded import CONTACT_SOFTNESS, solve_bounded
from physics.iterative import BodySpace, solve_iterative
from physics.math3d import quat_to_matrix
from physics.rotation import world_inverse_inertia
from chain_helpers import hung_chains


def random_problem(seed, n_bodies=6, n_eq=8, n_contacts=5, n_limits=3, chains=0):
    """chains > 0: the equality rows join the bodies into that many separate chains hung from
    the world (three rows a joint) instead of n_eq rows between random bodies."""
    rng = np.random.default_rng(seed)
    n = n_bodies + 1                                  # row 0: the static world
    inv_mass = np.concatenate([[0.0], 1.0 / rng.uniform(0.5, 5.0, n_bodies)])
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    inertia = rng.uniform(0.05, 0.5, (n, 3))
    Iinv = world_inverse_inertia(quat_to_matrix(q), np.einsum("ni,ij->nij", 1 / inertia, np.eye(3)))
    Iinv[0] = 0.0

    def rows(count, allow_world=True):
        a = rng.integers(0 if allow_world else 1, n, count)
        b = (a + rng.integers(1, n, count)) % n
        b = np.where(b == 0, 1 + (a % n_bodies), b)
        a = np.where(a == b, 0, a)
        return a, b, rng.normal(size=(count, 6)), rng.normal(size=(count, 6))

    if chains:
        ea, eb = hung_chains([g.size for g in np.array_split(np.arange(n_bodies), chains)])
        eJa, eJb = rng.normal(size=(ea.size, 6)), rng.normal(size=(ea.size, 6))
    else:
        ea, eb, eJa, eJb = rows(n_eq)
    # contacts: a normal row and two tangent rows on the same bodies
    ca, cb, cJa, cJb = rows(n_contacts)
    ta, tb = np.tile(ca, 3), np.tile(cb, 3)
    tJa = np.concatenate([cJa, rng.normal(size=(2 * n_contacts, 6))])
    tJb = np.concatenate([cJb, rng.normal(size=(2 * n_contacts, 6))])
    la, lb, lJa, lJb = rows(n_limits)
    a = np.concatenate([ta, la])
    b = np.concatenate([tb, lb])
    Ja = np.concatenate([tJa, lJa])
    Jb = np.concatenate([tJb, lJb])
    k = n_contacts
    mb = 3 * k + n_limits
    lo = np.concatenate([np.zeros(k), np.full(2 * k, -np.inf), np.zeros(n_limits - 1), [-2.0]])
    hi = np.concatenate([np.full(3 * k + n_limits - 1, np.inf), [2.0]])
    fn = np.concatenate([np.full(k, -1), np.arange(k), np.arange(k), np.full(n_limits, -1)])
    mu = np.concatenate([np.zeros(k), np.full(2 * k, 0.5), np.zeros(n_limits)])
    rhs_b = rng.normal(size=mb) * 5.0
    rhs_e = rng.normal(size=ea.size)
    return dict(n=n, inv_mass=inv_mass, Iinv=Iinv, eq=(ea, eb, eJa, eJb), b=(a, b, Ja, Jb),
                lo=lo, hi=hi, fn=fn, mu=mu, rhs_b=rhs_b, rhs_e=rhs_e)


CFM = 1e-9


def solve_direct(p, lam0=None):
    ea, eb, eJa, eJb = p["eq"]
    a, b, Ja, Jb = p["b"]
    m_eq = ea.size
    A_a, A_b = np.concatenate([ea, a]), np.concatenate([eb, b])
    pattern = Pattern(A_a, A_b, p["inv_mass"] > 0, p["n"])
    J, JM = pattern.sides(np.concatenate([eJa, Ja]), np.concatenate([eJb, Jb]), p["inv_mass"], p["Iinv"])
    lam, _ = solve_bounded(pattern, J, JM, np.concatenate([p["rhs_e"], p["rhs_b"]]),
                           np.concatenate([np.full(m_eq, -np.inf), p["lo"]]),
                           np.concatenate([np.full(m_eq, np.inf), p["hi"]]), cfm=CFM,
                           friction_normal=np.concatenate([np.full(m_eq, -1),
                                                           np.where(p["fn"] >= 0, p["fn"] + m_eq, -1)]),
                           mu=np.concatenate([np.zeros(m_eq), p["mu"]]),
                           lam0=None if lam0 is None else np.concatenate([np.zeros(m_eq), lam0]),
                           newton_iterations=200, friction_rounds=50)
    return lam[:m_eq], lam[m_eq:]


def operators(p):
    """The iterative solver's operators for problem p: the equality rows E and the bounded rows
    B in body space, and the joints' factorizer with its factorisation of A_EE."""
    ea, eb, eJa, eJb = p["eq"]
    E = BodySpace(ea, eb, eJa, eJb, p["inv_mass"], p["Iinv"], p["n"])
    B = BodySpace(*p["b"], p["inv_mass"], p["Iinv"], p["n"])
    pattern = Pattern(ea, eb, p["inv_mass"] > 0, p["n"])
    fac = pattern.factorizer
    factor = fac.factor(pattern.values(eJa, eJb, p["inv_mass"], p["Iinv"], CFM))
    return E, B, fac, factor


def solve_iter(p, max_iterations=5000, tolerance=1e-10, lam0=None, memory=None, ops=None,
               slack=None):
    """solve_iterative on problem p (with its ``operators``, or ``ops`` already made):
    (its answer, E, B, fac, factor)."""
    E, B, fac, factor = operators(p) if ops is None else ops
    return solve_iterative(B, p["rhs_b"], p["lo"], p["hi"], CFM, friction_normal=p["fn"], mu=p["mu"],
                           E=E, rhs_e=p["rhs_e"], factorizer=fac, factor=factor,
                           tolerance=tolerance, relative_tolerance=0.0, lam0=lam0,
                           max_iterations=max_iterations, memory=memory,
                           slack=slack), E, B, fac, factor


def unsettled_memory():
    """The solver's memory after a solve that did not finish: the next is a long solve."""
    from physics.iterative import SolverMemory
    memory = SolverMemory()
    memory.settled = False
    return memory


def dense_system(p, E, B, softness=CONTACT_SOFTNESS):
    """A = J M^-1 J^T with the solvers' regularisation, dense, equality rows first."""
    JE, JB, WE, WB = (M.toarray() for M in (E.J, B.J, E.W, B.W))
    A = np.block([[JE @ WE, JE @ WB], [JB @ WE, JB @ WB]])
    m_e = JE.shape[0]
    cfm = np.full(A.shape[0], CFM)
    cfm[m_e:] += softness * np.diag(A)[m_e:]
    return A + np.diag(cfm), m_e


def reduced_qp(p, E, B):
    """The bounded rows' problem with the equality rows eliminated: min 1/2 x^T Q x - c^T x,
    Q = A_BB - A_BE A_EE^-1 A_EB (the Schur complement) and c = b_B - A_BE A_EE^-1 b_E, from
    the dense A of ``dense_system``."""
    A, m_e = dense_system(p, E, B)
    solve_e = lambda r: np.linalg.solve(A[:m_e, :m_e], r)
    Q = A[m_e:, m_e:] - A[m_e:, :m_e] @ solve_e(A[:m_e, m_e:])
    c = p["rhs_b"] - A[m_e:, :m_e] @ solve_e(p["rhs_e"])
    return Q, c


def frictionless(p):
    """Problem p made a box QP (in place; returns p): the friction rows lose their friction
    bounds and keep wide finite ones, so that both solvers regularise them as bounded rows."""
    friction = p["fn"] >= 0
    p["lo"] = np.where(friction, -1e9, p["lo"])
    p["hi"] = np.where(friction, 1e9, p["hi"])
    p["mu"] = np.zeros_like(p["mu"])
    p["fn"] = np.full_like(p["fn"], -1)
    return p


def projected_gradient(gb, lam_b, lo, hi):
    """The part of the gradient gb that the box [lo, hi] does not hold back."""
    at_lo = lam_b <= lo + 1e-12 * np.abs(np.where(np.isfinite(lo), lo, 0.0))
    at_hi = lam_b >= hi - 1e-12 * np.abs(np.where(np.isfinite(hi), hi, 0.0))
    return np.where(at_lo & (gb > 0), 0.0, np.where(at_hi & (gb < 0), 0.0, gb))


def assert_optimal(p, E, B, lam_e, lam_b):
    """(lam_e, lam_b) meets the optimality conditions of problem p (with friction, those of the
    friction fixed point; without, the box QP's KKT conditions): within the box whose friction
    bounds are mu times lam_b's own normal forces, the equality rows solved to 1e-9 and the
    projected gradient of the dense system under 1e-8 of the right-hand side."""
    A, m_e = dense_system(p, E, B)
    g = A @ np.concatenate([lam_e, lam_b]) - np.concatenate([p["rhs_e"], p["rhs_b"]])
    fric = p["fn"] >= 0
    limit = p["mu"] * np.maximum(lam_b[np.where(fric, p["fn"], 0)], 0.0)
    lo, hi = np.where(fric, -limit, p["lo"]), np.where(fric, limit, p["hi"])
    scale = np.abs(np.concatenate([p["rhs_e"], p["rhs_b"]])).max()
    assert np.all(lam_b >= lo - 1e-12 * scale) and np.all(lam_b <= hi + 1e-12 * scale)
    assert np.abs(g[:m_e]).max() <= 1e-9 * scale
    assert np.abs(projected_gradient(g[m_e:], lam_b, lo, hi)).max() <= 1e-8 * scale


@pytest.mark.parametrize("seed", range(12))
def test_friction_problems_meet_the_conditions_of_their_fixed_point(seed):
    """With friction the bounded rows minimise 1/2 x^T A x - b^T x over the box whose friction
    bounds are mu times the answer's own normal forces: the answer meets that problem's
    optimality conditions (projected gradient of the dense system) to 1e-8 of the right-hand
    side, and the joint rows are the exact solve given it. (The direct solver's rounds of
    fixed bounds stop where they cycle: on most of these problems ~|b| off these conditions.)"""
    p = random_problem(seed)
    (lam_e, lam_b, info), E, B, *_ = solve_iter(p)
    assert_optimal(p, E, B, lam_e, lam_b)


@pytest.mark.parametrize("solver", ["iterative", "direct"])
@pytest.mark.parametrize("seed", range(8))
def test_box_problems_meet_their_optimality_conditions(seed, solver):
    """Without friction the problem is a convex box QP: either solver's answer meets its KKT
    conditions (projected gradient of the dense system) to 1e-8 of the right-hand side. (The
    former friction rows keep wide finite bounds, so that both solvers regularise them as
    the bounded rows they are.)"""
    p = frictionless(random_problem(seed))
    if solver == "direct":
        E, B, *_ = operators(p)
        lam_e, lam_b = solve_direct(p)
    else:
        (lam_e, lam_b, info), E, B, *_ = solve_iter(p)
    assert_optimal(p, E, B, lam_e, lam_b)


@pytest.mark.parametrize("solver", ["iterative", "direct"])
@pytest.mark.parametrize("seed", range(4))
def test_the_soft_diagonal_is_centred_on_the_warm_start(seed, solver):
    """The bounded rows' softness (CONTACT_SOFTNESS of their own stiffness) regularises the
    step away from the warm start, not away from zero: solved again from its own answer, as
    a resting contact is from step to step, a problem tends to the unregularised one's answer
    (proximal point iterations). From a cold start the answer misses the unregularised
    conditions by 1-5 % of |b| on these problems; every solve from the last answer cuts that
    at least five-fold (about twenty-fold here). Centred on zero, as before, every solve
    would miss by the same amount again."""
    p = frictionless(random_problem(seed + 200))
    scale = np.abs(np.concatenate([p["rhs_e"], p["rhs_b"]])).max()
    E, B, *_ = operators(p)
    A, m_e = dense_system(p, E, B, softness=0.0)

    def miss(lam_e, lam_b):
        g = A @ np.concatenate([lam_e, lam_b]) - np.concatenate([p["rhs_e"], p["rhs_b"]])
        return np.abs(projected_gradient(g[m_e:], lam_b, p["lo"], p["hi"])).max() / scale

    lam_b, misses = None, []
    for _ in range(4):
        if solver == "direct":
            lam_e, lam_b = solve_direct(p, lam0=lam_b)
        else:
            (lam_e, lam_b, _), *_ = solve_iter(p, lam0=lam_b)
        misses.append(miss(lam_e, lam_b))
    assert misses[0] > 1e-3
    assert all(later < 0.2 * earlier for earlier, later in zip(misses, misses[1:]))
    assert misses[-1] < 1e-3 * misses[0]


@pytest.mark.parametrize("seed", range(6))
def test_equality_rows_are_exact_and_friction_bounded(seed):
    p = random_problem(seed + 100)
    # a loose solve: the bounded rows are only approximate, the equality rows still exact
    (lam_e, lam_b, info), E, B, fac, factor = solve_iter(p, max_iterations=6, tolerance=1e-2)
    # A_EE lam_E + A_EB lam_B = r_E, with A = J M^-1 J^T + cfm on the diagonal
    u = E.W @ lam_e + B.W @ lam_b
    residual = E.J @ u + CFM * lam_e - p["rhs_e"]
    assert np.abs(residual).max() <= 1e-9 * max(np.abs(p["rhs_e"]).max(), 1.0)
    fn, mu = p["fn"], p["mu"]
    fric = fn >= 0
    normal = lam_b[fn[fric]]
    assert np.all(normal >= 0)
    assert np.all(np.abs(lam_b[fric]) <= mu[fric] * normal + 1e-12)
    assert np.all(lam_b >= p["lo"]) and np.all(lam_b <= p["hi"])


def test_same_problem_same_bits():
    p = random_problem(7)
    (e1, b1, _), *_ = solve_iter(p, max_iterations=7)
    (e2, b2, _), *_ = solve_iter(p, max_iterations=7)
    assert e1.tobytes() == e2.tobytes() and b1.tobytes() == b2.tobytes()


def pile(solver):
    world = World(contact_solver=solver)
    world.add_body(Plane(), friction=0.5)
    rng = np.random.default_rng(3)
    for i in range(12):          # three columns of four boxes, a sphere on top of each
        column, level = divmod(i, 4)
        world.add_body(Box((0.05, 0.05, 0.05)), mass=1.0 + i % 3,
                       position=(0.3 * column + 0.005 * rng.normal(), 0.005 * rng.normal(),
                                 0.051 + 0.101 * level), friction=0.5, restitution=0.2 * (i % 2))
    for column in range(3):
        world.add_body(Sphere(0.03), mass=0.5, position=(0.3 * column, 0, 0.45), restitution=0.3)
    return world


def test_a_pile_runs_bit_for_bit_the_same_twice():
    runs = []
    for _ in range(2):
        world = pile("iterative")
        world.step(120)
        runs.append(np.concatenate([world._view(k).ravel() for k in ("_x", "_q", "_v", "_w")]))
    assert runs[0].tobytes() == runs[1].tobytes()


def test_the_solver_is_chosen_by_a_checked_keyword():
    assert World().contact_solver == "auto"
    assert World(contact_solver="iterative").contact_solver == "iterative"
    assert World(contact_solver="direct").contact_solver == "direct"
    with pytest.raises(ValueError, match="contact_solver"):
        World(contact_solver="pgs")


def test_a_resting_pile_settles_alike_with_either_solver():
    worlds = [pile(s) for s in ("iterative", "direct")]
    for w in worlds:
        w.step(480)
    speeds = [np.abs(w._view("_v")[1:13]).max() for w in worlds]      # the boxes
    assert max(speeds) < 1e-3
    heights = [np.sort(w._view("_x")[1:, 2]) for w in worlds]
    np.testing.assert_allclose(heights[0], heights[1], atol=5e-3)


def test_the_contact_budget_is_a_checked_keyword_and_attribute():
    assert World().contact_iterations == 60
    world = World(contact_iterations=30)
    assert world.contact_iterations == 30
    for bad in (0, -3, 2.5, "many", True, None):
        with pytest.raises(ValueError, match="contact_iterations"):
            World(contact_iterations=bad)
    with pytest.raises(ValueError, match="contact_iterations"):
        world.contact_iterations = 0
    assert world.contact_iterations == 30


def test_a_small_contact_budget_trades_accuracy_not_stability():
    """125 spheres poured into a bin: with 5 iterations a step (instead of the default 60)
    no solve goes over its budget, and the pile still comes to rest, spheres under 5 mm/s
    and no deeper than 1 mm in the last second."""
    import scenes
    scene = scenes.load("marbles", count=125, half_width=0.2)
    world = scene.world
    world.contact_iterations = 5
    deepest = 0.0
    for i in range(720):
        world.step()
        if i >= 480:
            deepest = max(deepest, world.contacts.depth.max())
    solves, iterations = world.stats["contact_solves"], world.stats["contact_iterations"]
    assert solves > 600 and iterations <= 5 * solves
    assert iterations > 3 * solves          # the budget is used: the pile is not trivial
    assert np.linalg.norm(world._view("_v"), axis=1).max() < 5e-3
    assert deepest < 1e-3


@pytest.mark.parametrize("seed", range(4))
def test_a_carried_power_vector_estimates_the_norm_in_two_products(seed):
    """The step lengths want ||s (S + R) s||: MPRGP's expansion step below 2 / ||.||, the
    accelerated projection's below 1 / ||.||. A power iteration estimates it (from below). A
    solve that carries last solve's vector (a step changes a pile's largest mode little; here
    the same operator) starts the power iteration from it and needs two products, not six,
    for an estimate at least as close."""
    from physics.iterative import COLD_POWER_ITERATIONS, SolverMemory, _norm, _Reduced
    p = random_problem(100 + seed, n_bodies=30, n_eq=20, n_contacts=60, n_limits=6)
    E, B, fac, factor = operators(p)
    S, _ = reduced_qp(p, E, B)
    cfm = CFM + CONTACT_SOFTNESS * B.diagonal
    s = 1.0 / np.sqrt(B.diagonal + cfm)
    largest = np.linalg.eigvalsh(s[:, None] * (S + np.diag(cfm)) * s[None, :]).max()
    op = _Reduced(B, CFM, s, E, fac, factor)
    carried = SolverMemory()
    cold, cold_is_warm = _norm(op, B.m, carried)
    products = op.products
    assert products == COLD_POWER_ITERATIONS
    warm, warm_is_warm = _norm(op, B.m, carried)
    assert op.products - products == 2 and warm_is_warm and not cold_is_warm
    assert largest >= warm >= cold > 0.6 * largest


def test_long_solves_among_many_mechanisms_use_their_blocks_inverses(monkeypatch):
    """Many small mechanisms (six chains of four links): a solve expected to take its whole
    budget (after one that did not finish) applies A_EE^-1 by the inverses of its diagonal
    blocks (linsolve.DiagonalBlocks) instead of the band's back-substitution. It is the same
    reduced operator to rounding, and such a solve meets the same conditions."""
    from physics.iterative import _Reduced
    p = random_problem(2, n_bodies=24, n_contacts=8, n_limits=4, chains=6)
    E, B, fac, factor = operators(p)
    assert fac.blocks is not None and fac.blocks.count == 6
    s = 1.0 / np.sqrt(B.diagonal + CFM)
    band = _Reduced(B, CFM, s, E, fac, factor)
    blocks = _Reduced(B, CFM, s, E, fac, factor, long_solve=True)
    assert band.inverses is None and blocks.inverses is not None
    z = np.random.default_rng(0).normal(size=B.m)
    assert np.abs(blocks(z) - band(z)).max() <= 1e-12 * np.abs(band(z)).max()
    made = []
    inverses = fac.blocks.inverses
    monkeypatch.setattr(fac.blocks, "inverses", lambda f: made.append(f) or inverses(f))
    (lam_e, lam_b, info), *_ = long_solve(p, None, ops=(E, B, fac, factor))
    assert len(made) == 1 and made[0] is factor       # the solve used the blocks' inverses
    assert info["residual"] <= 1.0
    assert_optimal(p, E, B, lam_e, lam_b)


def test_long_solves_of_contacts_alone_skip_their_exact_zeros():
    """Contacts alone (no joints): a solve expected to take its whole budget multiplies by J
    and M^-1 J^T without their exact zeros (a sphere's normal rows have no torque, a static
    body's side moves nothing). Leaving out terms that are exactly zero changes no sum: the
    reduced operator is the same to the last bit, with fewer entries."""
    from physics.iterative import _Reduced
    p = random_problem(5, n_bodies=12, n_eq=0, n_contacts=30, n_limits=1)
    a, b, Ja, Jb = p["b"]
    # the normal rows between two moving bodies push through both centres
    central = np.flatnonzero((a[:30] != 0) & (b[:30] != 0))
    Ja, Jb = Ja.copy(), Jb.copy()
    Ja[central, 3:] = 0.0
    Jb[central, 3:] = 0.0
    B = BodySpace(a, b, Ja, Jb, p["inv_mass"], p["Iinv"], p["n"])
    s = 1.0 / np.sqrt(B.diagonal + CFM)
    plain = _Reduced(B, CFM, s, None, None, None)
    pruned = _Reduced(B, CFM, s, None, None, None, long_solve=True)
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


def test_after_an_unfinished_solve_the_next_skips_the_held_boxes():
    """The solver's memory records whether a solve finished: after one cut short by its
    budget (a violent step) the next goes straight to the accelerated projection, and one
    that finishes brings the held boxes back. Either way the answer meets the same
    conditions (the friction fixed point's, ``assert_optimal``)."""
    from physics.iterative import SolverMemory
    p = random_problem(3)
    ops = E, B, *_ = operators(p)
    memory = SolverMemory()

    def solve(max_iterations):
        return solve_iter(p, max_iterations, memory=memory, ops=ops)[0]
    assert memory.settled
    _, _, cut = solve(1)
    assert cut["residual"] > 1.0 and not memory.settled
    skipped_e, skipped, info = solve(5000)
    assert info["method"] == "accelerated projection" and info["residual"] <= 1.0
    assert memory.settled
    held_e, held, info = solve(5000)
    assert info["method"].startswith("MPRGP") and info["residual"] <= 1.0
    scale = np.abs(np.concatenate([p["rhs_e"], p["rhs_b"]])).max()
    assert np.abs(held - skipped).max() <= 1e-6 * max(np.abs(held).max(), scale)
    assert_optimal(p, E, B, skipped_e, skipped)
    assert_optimal(p, E, B, held_e, held)


@pytest.mark.parametrize("seed", range(20))
def test_an_expansion_step_too_long_for_the_problem_is_halved_not_taken(monkeypatch, seed):
    """MPRGP descends at every step when its expansion step length is below 2 / ||Q||; the
    power iteration estimates ||Q|| from below, and from a cold start it can come out low.
    With the length made 8x too long, box QPs (no friction rounds: one fixed QP) still lower
    their objective with every iteration: an expansion step that would go uphill halves the
    length instead of being taken."""
    import physics.iterative as iterative
    real = iterative._norm
    monkeypatch.setattr(iterative, "_norm", lambda op, m, carried=None: (real(op, m)[0] / 8, True))
    k = 60
    p = random_problem(seed, n_bodies=30, n_eq=20, n_contacts=k, n_limits=6)
    p["fn"][:], p["mu"][:] = -1, 0.0
    p["lo"][k:3 * k], p["hi"][k:3 * k] = -1.0, 1.0
    ops = E, B, *_ = operators(p)
    Q, c = reduced_qp(p, E, B)
    last = np.inf
    for n in range(1, 60):
        (_, x, _), *_ = solve_iter(p, max_iterations=n, ops=ops)
        f = 0.5 * x @ Q @ x - c @ x
        assert f <= last + 1e-12 * abs(last), (seed, n)
        last = f


@pytest.mark.parametrize("seed", range(20))
def test_a_solve_cut_short_is_never_worse_than_no_impulses(seed):
    """Friction is bounded by mu times the normal forces of the round's start; a solve cut
    short ends with its friction clipped to mu times the normal forces it found (Coulomb's law
    holds), and with a warm start far from them that clip alone could leave impulses worse
    than none, f(x) > f(0) = 0: energy put in (a ragdoll pile solved in one round of 25
    iterations blew up within five steps). The solve then returns the best multiple of them."""
    k = 20
    p = random_problem(seed, n_bodies=12, n_eq=10, n_contacts=k, n_limits=4)
    p["mu"][p["mu"] > 0] = 1.0
    E, B, fac, factor = operators(p)
    Q, c = reduced_qp(p, E, B)
    rng = np.random.default_rng(seed)
    warm = np.zeros(B.m)
    warm[:k] = rng.uniform(0.0, 20.0, k)         # normal forces far from the solution's
    warm[k:3 * k] = np.tile(warm[:k], 2) * rng.choice([-1.0, 1.0], 2 * k)
    for budget in (1, 3, 8):
        (_, x, _), *_ = solve_iter(p, budget, lam0=warm, ops=(E, B, fac, factor))
        friction = p["fn"] >= 0
        assert np.all(np.abs(x[friction]) <= p["mu"][friction] * x[p["fn"][friction]] + 1e-12)
        assert 0.5 * x @ Q @ x - c @ x <= 1e-9 * np.abs(c @ x)


def many_contacts(seed):
    """A random problem of 600 contacts (1803 bounded rows, enough for a working set)
    among 400 bodies and 30 joint rows, whose first 300 contacts' targets let their bodies
    part at 50 (rhs units) or more: at zero force those rows are far beyond their target."""
    p = random_problem(seed, n_bodies=400, n_eq=30, n_contacts=600, n_limits=3)
    p["rhs_b"][:300] = -50.0 - np.abs(p["rhs_b"][:300])
    return p


def long_solve(p, slack, max_iterations=5000, ops=None):
    """solve_iter on p as a long solve (the memory of an unfinished one) with ``slack``:
    (its answer, E, B)."""
    answer, E, B, _, _ = solve_iter(p, max_iterations, memory=unsettled_memory(), ops=ops,
                                    slack=slack)
    return answer, E, B


@pytest.mark.parametrize("seed", range(2))
def test_a_long_solve_leaves_out_rows_far_beyond_their_target_and_solves_all_rows(seed):
    """A long solve over many rows works on a working set without the one-sided rows that
    start at zero force beyond their target by more than the slack (and their friction
    rows): the answer meets every row's conditions, as the solve of all rows does."""
    p = many_contacts(seed)
    (lam_e, lam_b, info), E, B = long_solve(p, slack=10.0)
    (all_e, all_b, all_info), _, _ = long_solve(p, slack=None)
    assert info["residual"] <= 1.0 and all_info["residual"] <= 1.0
    assert all_info["rows"] == B.m == 1803
    assert info["rows"] <= B.m - 3 * 250           # most of the far contacts left out
    assert np.all(lam_b[:300] == 0.0)              # (they push nothing)
    assert_optimal(p, E, B, lam_e, lam_b)
    scale = np.abs(all_b).max()
    assert np.abs(lam_b - all_b).max() <= 1e-6 * scale


def test_rows_left_out_that_would_pull_in_join_the_working_set(monkeypatch):
    """With no slack at all (every one-sided row at zero force left out, however close to
    its target) the check after the set's solve finds rows that pull in; they join the set,
    and the solve goes on to meet every row's conditions."""
    import physics.iterative as iterative
    joins = []
    joined_by = iterative._RowSet.joined_by
    monkeypatch.setattr(iterative._RowSet, "joined_by",
                        lambda self, rows: joins.append(rows.sum()) or joined_by(self, rows))
    p = many_contacts(0)
    (lam_e, lam_b, info), E, B = long_solve(p, slack=-np.inf)
    assert joins and joins[0] > 100
    assert info["residual"] <= 1.0
    assert_optimal(p, E, B, lam_e, lam_b)


def test_a_working_set_spent_budget_gives_its_joining_rows_ten_iterations_more():
    """A long solve cut short by its budget: when rows left out would pull in, they join
    for WORKING_SET_ROUND (10) iterations beyond the budget, and whatever the rows left out
    still miss counts in the residual."""
    from physics.iterative import WORKING_SET_ROUND
    p = many_contacts(0)
    (_, _, info), _, _ = long_solve(p, slack=-np.inf, max_iterations=20)
    assert 20 < info["iterations"] <= 20 + WORKING_SET_ROUND
    assert info["residual"] > 1.0


def test_what_rows_left_out_still_miss_counts_in_the_residual(monkeypatch):
    """With no iterations for joining rows, a working set that converges on its own rows
    (here the one two-sided limit row: every one-sided row starts at zero and is left out)
    is not reported converged while rows left out would pull in."""
    import physics.iterative as iterative
    monkeypatch.setattr(iterative, "WORKING_SET_ROUND", 0)
    (_, _, info), _, _ = long_solve(many_contacts(0), slack=-np.inf, max_iterations=1)
    assert info["rows"] == 1 and info["iterations"] == 1
    assert info["residual"] > 1.0


def test_few_rows_keep_every_row():
    """Below WORKING_SET_ROWS rows a solve works on all of its rows: the same bits as a
    solve that was never offered a working set (as short solves and impacts are not)."""
    small = random_problem(4, n_bodies=12, n_contacts=40)
    small["rhs_b"][:20] = -100.0
    (_, plain, _), _, _ = long_solve(small, slack=None)
    (_, offered, info), _, B = long_solve(small, slack=1.0)
    assert info["rows"] == B.m and offered.tobytes() == plain.tobytes()


def test_solves_leave_no_reference_cycles():
    """Every solve's matrices are freed when the step ends (by reference counting): a cycle
    through them kept them alive until the garbage collector ran, and a 10-ragdoll pile's
    step took 5 % longer."""
    import gc
    world = pile("iterative")
    world.step()
    solves = world.stats["contact_solves"]
    gc.collect()
    gc.disable()
    try:
        for _ in range(10):
            world.step()
        assert world.stats["contact_solves"] >= solves + 10
        assert gc.collect() == 0
    finally:
        gc.enable()
