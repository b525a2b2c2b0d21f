"""Small random bounded problems and the iterative solve of them (shared by the tests of the
iterative solver and of its parts): equality rows (joints) between random bodies, bounded rows
(contact normals lambda >= 0 with a friction pyramid, one-sided limits, bounded motors), and
the check of an answer against the problem's optimality conditions on the dense system."""
import numpy as np
import scipy.sparse as sp

from physics.assembly import Pattern
from physics.bodyspace import BodySpace, Compressed
from physics.bounded import CONTACT_SOFTNESS
from physics.iterative import SolverMemory, solve_iterative
from physics.math3d import quat_to_matrix
from physics.rotation import world_inverse_inertia
from physics.rows import Rows
from chain_helpers import hung_chains


def random_bodies(rng, n_bodies):
    """The static world (row 0: no inverse mass or inertia) and n_bodies bodies of random
    mass, inertia and orientation: inverse masses (n_bodies + 1,) and world inverse inertias
    (n_bodies + 1, 3, 3)."""
    n = n_bodies + 1
    inv_mass = np.concatenate([[0.0], 1.0 / rng.uniform(0.5, 5.0, n_bodies)])
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    inertia = rng.uniform(0.05, 0.5, (n, 3))
    Iinv = world_inverse_inertia(quat_to_matrix(q), np.einsum("ni,ij->nij", 1 / inertia, np.eye(3)))
    Iinv[0] = 0.0
    return inv_mass, Iinv


def random_problem(seed, n_bodies=6, n_eq=8, n_contacts=5, n_limits=3, chains=0):
    """chains > 0: the equality rows join the bodies into that many separate chains hung from
    the world (three rows a joint) instead of n_eq rows between random bodies."""
    rng = np.random.default_rng(seed)
    n = n_bodies + 1                                  # row 0: the static world
    inv_mass, Iinv = random_bodies(rng, n_bodies)

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
                n_contact_rows=3 * k, lo=lo, hi=hi, fn=fn, mu=mu, rhs_b=rhs_b, rhs_e=rhs_e)


def frictionless(p, bound=1e9):
    """Problem p made a box QP (in place; returns p): the friction rows lose their friction
    bounds and keep finite ones, -bound and bound (wide by default, so that both solvers
    regularise them as bounded rows)."""
    friction = p["fn"] >= 0
    p["lo"] = np.where(friction, -bound, p["lo"])
    p["hi"] = np.where(friction, bound, p["hi"])
    p["mu"] = np.zeros_like(p["mu"])
    p["fn"] = np.full_like(p["fn"], -1)
    return p


CFM = 1e-9


def body_space(p, a, b, Ja, Jb, n_contact_rows=0):
    """The rows a, b, Ja, Jb of problem p's bodies in body space (``BodySpace``)."""
    rows = Rows(a, b, np.zeros(a.shape[0]), Ja, Jb, np.zeros(a.shape[0]))
    return BodySpace(rows, p["inv_mass"], p["Iinv"], p["n"], n_contact_rows)


def operators(p):
    """The iterative solver's operators for problem p: the equality rows E and the bounded rows
    B in body space, and the joints' factorizer with its factorisation of A_EE."""
    ea, eb, eJa, eJb = p["eq"]
    E = body_space(p, *p["eq"])
    B = body_space(p, *p["b"], p["n_contact_rows"])
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


def dense(M: Compressed):
    """M (``bodyspace.Compressed``, by rows or by columns) as a dense array."""
    layout = sp.csc_matrix if M.by_columns else sp.csr_matrix
    return layout((M.data, M.indices, M.indptr), shape=(M.rows, M.cols)).toarray()


def dense_matrices(B: BodySpace):
    """J (m x 6N) and W = M^-1 J^T (6N x m) of B, dense: the arrays its products multiply by
    (``BodySpace.matrices``), exact zeros included."""
    J, W = B.matrices()
    return dense(J), dense(W)


def dense_system(p, E, B, softness=CONTACT_SOFTNESS):
    """A = J M^-1 J^T with the solvers' regularisation, dense, equality rows first."""
    (JE, WE), (JB, WB) = dense_matrices(E), dense_matrices(B)
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


def projected_gradient(gb, lam_b, lo, hi):
    """The part of the gradient gb that the box [lo, hi] does not hold back."""
    at_lo = lam_b <= lo + 1e-12 * np.abs(np.where(np.isfinite(lo), lo, 0.0))
    at_hi = lam_b >= hi - 1e-12 * np.abs(np.where(np.isfinite(hi), hi, 0.0))
    return np.where(at_lo & (gb > 0), 0.0, np.where(at_hi & (gb < 0), 0.0, gb))


def gradient(p, E, B, lam_e, lam_b, softness=CONTACT_SOFTNESS):
    """A lambda - rhs of problem p on the dense system (``dense_system``), equality rows
    first: (gradient, the number of equality rows). Its first rows are what the equality
    rows miss."""
    A, m_e = dense_system(p, E, B, softness)
    return A @ np.concatenate([lam_e, lam_b]) - np.concatenate([p["rhs_e"], p["rhs_b"]]), m_e


def assert_optimal(p, E, B, lam_e, lam_b):
    """(lam_e, lam_b) meets the optimality conditions of problem p (with friction, those of the
    friction fixed point; without, the box QP's KKT conditions): within the box whose friction
    bounds are mu times lam_b's own normal forces, the equality rows solved to 1e-9 and the
    projected gradient of the dense system under 1e-8 of the right-hand side."""
    g, m_e = gradient(p, E, B, lam_e, lam_b)
    fric = p["fn"] >= 0
    limit = p["mu"] * np.maximum(lam_b[np.where(fric, p["fn"], 0)], 0.0)
    lo, hi = np.where(fric, -limit, p["lo"]), np.where(fric, limit, p["hi"])
    scale = np.abs(np.concatenate([p["rhs_e"], p["rhs_b"]])).max()
    assert np.all(lam_b >= lo - 1e-12 * scale) and np.all(lam_b <= hi + 1e-12 * scale)
    assert np.abs(g[:m_e]).max() <= 1e-9 * scale
    assert np.abs(projected_gradient(g[m_e:], lam_b, lo, hi)).max() <= 1e-8 * scale


def long_solve(p, slack, max_iterations=5000, ops=None):
    """solve_iter on p as a long solve (the memory of an unfinished one) with ``slack``:
    (its answer, E, B)."""
    memory = SolverMemory()
    memory.settled = False               # (the last solve did not finish)
    answer, E, B, _, _ = solve_iter(p, max_iterations, memory=memory, ops=ops, slack=slack)
    return answer, E, B
