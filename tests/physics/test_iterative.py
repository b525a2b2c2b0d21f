"""The iterative bounded solver (physics/iterative.py), beside the direct one (physics/bounded.py).

Small random problems (``bounded_helpers``): equality rows (joints) between random bodies,
bounded rows (contact normals lambda >= 0 with a friction pyramid, one-sided limits, bounded
motors). The answers must meet the problem's optimality conditions, checked on the dense
system (without friction the box QP's KKT conditions, for either solver; with friction those
of the fixed point whose friction bounds are mu times the answer's own normal forces). The
iterative solver must also keep the equality rows exact, respect the friction bounds, never
leave a solve cut short worse than no impulses, and be bitwise deterministic. Its parts have
their own tests: the reduced operator (test_bodyspace), MPRGP (test_mprgp), the norm estimate
(test_accelerated_projection).
"""
import numpy as np
import pytest

from physics import Box, Plane, Sphere, World
from physics.assembly import Pattern
from physics.bounded import solve_bounded
from bounded_helpers import (CFM, assert_optimal, frictionless, gradient, long_solve, operators,
                             projected_gradient, random_problem, reduced_qp, solve_iter)
from snapshot_helpers import assert_same_state


def solve_direct(p, lam0=None, newton_iterations=200, friction_rounds=50):
    ea, eb, eJa, eJb = p["eq"]
    a, b, Ja, Jb = p["b"]
    m_eq = ea.size
    A_a, A_b = np.concatenate([ea, a]), np.concatenate([eb, b])
    pattern = Pattern(A_a, A_b, p["inv_mass"] > 0, p["n"])
    J, JM = pattern.sides(np.concatenate([eJa, Ja]), np.concatenate([eJb, Jb]), p["inv_mass"], p["Iinv"])
    lam = solve_bounded(pattern, J, JM, np.concatenate([p["rhs_e"], p["rhs_b"]]),
                        np.concatenate([np.full(m_eq, -np.inf), p["lo"]]),
                        np.concatenate([np.full(m_eq, np.inf), p["hi"]]), cfm=CFM,
                        friction_normal=np.concatenate([np.full(m_eq, -1),
                                                        np.where(p["fn"] >= 0, p["fn"] + m_eq, -1)]),
                        mu=np.concatenate([np.zeros(m_eq), p["mu"]]),
                        lam0=None if lam0 is None else np.concatenate([np.zeros(m_eq), lam0]),
                        newton_iterations=newton_iterations, friction_rounds=friction_rounds)[0]
    return lam[:m_eq], lam[m_eq:]


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


@pytest.mark.parametrize("seed", range(16))
def test_direct_solves_within_the_steps_budget_keep_the_joint_rows_exact(seed):
    """With the budget the step gives it (four friction rounds, 32 projected Newton steps a
    round), the direct solver's equality rows are the exact solve given its bounded rows as
    they end, to 1e-9 of the right-hand side: also when a round stops unfinished (its Newton
    steps shortened by their line search) and when its friction rows are clipped to the
    bounds of its final normal forces. Before, 7 of these 16 problems ended with the equality
    rows off their equation by 1e-3 to 1e-1 of |b| (and a 10-ragdoll pile solved directly
    drifted its joints up to 0.5 m apart within a step, which SHAKE had to pull back)."""
    p = random_problem(seed)
    E, B, *_ = operators(p)
    lam_e, lam_b = solve_direct(p, newton_iterations=32, friction_rounds=4)
    g, m_e = gradient(p, E, B, lam_e, lam_b)
    scale = np.abs(np.concatenate([p["rhs_e"], p["rhs_b"]])).max()
    assert np.abs(g[:m_e]).max() <= 1e-9 * scale


@pytest.mark.parametrize("seed", range(6))
def test_the_direct_solver_answers_alike_with_a_dense_or_a_sparse_matrix(seed, monkeypatch):
    """Small systems keep A dense (bounded.DENSE_ROWS), large ones sparse: the same problem
    solved both ways gives the same multipliers to 1e-9 of their size (the sums of the
    products differ in order only)."""
    from physics import bounded
    p = random_problem(seed)
    dense = np.concatenate(solve_direct(p, newton_iterations=32, friction_rounds=4))
    monkeypatch.setattr(bounded, "DENSE_ROWS", 0)
    sparse = np.concatenate(solve_direct(p, newton_iterations=32, friction_rounds=4))
    assert np.abs(dense - sparse).max() <= 1e-9 * np.abs(sparse).max()


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

    def miss(lam_e, lam_b):
        g, m_e = gradient(p, E, B, lam_e, lam_b, softness=0.0)
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
    g, m_e = gradient(p, E, B, lam_e, lam_b)
    assert np.abs(g[:m_e]).max() <= 1e-9 * max(np.abs(p["rhs_e"]).max(), 1.0)
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
        runs.append(world.get_state())
    assert_same_state(*runs)


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


def test_a_pile_come_to_rest_finishes_its_solves_within_a_few_iterations():
    """30 boxes (0.3 m, 1 kg) dropped in a loose pile at dt 1/60 (417 bounded rows: the
    iterative solve) are still by 3.3 s (by 2.2 s before contacts across a gap turned each
    body about its own surface point: on the path they take now a box still tumbles at
    2.3 s, and the pile rests from 3.0 s). Their penetrations beyond the slop were pushed out
    at speeds that faded by e^(-h/T) a step and never ended, which the solves had to meet to
    1e-6 m/s: they took their whole budget, 60 iterations, on 18 of the 30 steps from 2.5 s
    to 3 s (37 a step), until the push fell to about that at 2.8 s. With the finishing push
    (``physics.push_out``) they take 2 a step."""
    rng = np.random.default_rng(0)
    world = World(dt=1 / 60)
    world.add_body(Plane())
    for i in range(30):
        world.add_body(Box((0.15, 0.15, 0.15)), mass=1.0,
                       position=(rng.uniform(-1, 1), rng.uniform(-1, 1), 0.2 + 0.3 * i / 4))
    world.step(200)
    solves, iterations = world.stats["contact_solves"], world.stats["contact_iterations"]
    world.step(30)
    solves = world.stats["contact_solves"] - solves
    iterations = world.stats["contact_iterations"] - iterations
    assert solves == 30
    assert iterations <= 5 * solves
    assert np.linalg.norm(world._view("_v"), axis=1).max() < 1e-4


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
    no solve goes over its budget, and the pile still comes to rest, spheres under 1 cm/s
    and no deeper than 1 mm in the last second. (A marble left rolling on the floor keeps
    rolling: nothing brakes a roll without rolling friction. Over seeds 1-6 the fastest
    marble at 3 s moved at 0.004-6.8 mm/s.)"""
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
    assert np.linalg.norm(world._view("_v"), axis=1).max() < 1e-2
    assert deepest < 1e-3


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


@pytest.mark.parametrize("seed", range(2))
def test_a_long_solve_leaves_out_the_rows_it_holds_at_zero(seed, monkeypatch):
    """The second friction rows of gliding contacts (mu 0: held at zero) are left out of a
    long solve's working set too, with the contacts' rows kept in their layout (normal and
    first friction rows, then the second ones kept), and never join it: the answer meets
    every row's conditions, as the solve of all rows does, with the held rows at zero."""
    import physics.accelerated_projection as ap
    import physics.iterative as iterative
    layouts = []

    class Recorded(ap.FrictionBox):
        def __init__(self, *args):
            super().__init__(*args)
            layouts.append((self.contact_layout, args[-1]))     # (tangent_runs)

    monkeypatch.setattr(iterative, "FrictionBox", Recorded)
    sets = []
    working_set = iterative._working_set
    monkeypatch.setattr(iterative, "_working_set",
                        lambda *args: sets.append(working_set(*args)) or sets[-1])
    p = many_contacts(seed)
    k = 600
    glide = np.random.default_rng(seed).random(k) < 0.5      # their second rows held
    p["mu"][2 * k:3 * k][glide] = 0.0
    (lam_e, lam_b, info), E, B = long_solve(p, slack=10.0)
    (all_e, all_b, all_info), _, _ = long_solve(p, slack=None)
    assert info["residual"] <= 1.0 and all_info["residual"] <= 1.0
    held = 2 * k + np.flatnonzero(glide)
    assert len(sets) == 1 and not np.isin(held, sets[0].kept).any()
    assert info["rows"] <= B.m - 3 * 250 - np.count_nonzero(glide[300:])
    assert 1 in [runs for _, runs in layouts]     # the contacts' layout, one run of friction
    assert np.all(lam_b[2 * k:3 * k][glide] == 0.0)
    assert_optimal(p, E, B, lam_e, lam_b)
    assert np.abs(lam_b - all_b).max() <= 1e-6 * np.abs(all_b).max()


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
    for WORKING_SET_ROUND (10) iterations beyond the budget, and a solve still unfinished
    then is reported so (residual over 1). (That the rows left out count in the residual:
    the next test.)"""
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
