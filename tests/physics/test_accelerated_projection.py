"""The accelerated projection's box and norm estimate (physics/accelerated_projection.py)."""
import numpy as np
import pytest

from physics.accelerated_projection import COLD_POWER_ITERATIONS, FrictionBox, norm
from physics.bodyspace import Reduced
from physics.bounded import CONTACT_SOFTNESS
from physics.iterative import SolverMemory
from physics.vectorops import SHORT_ROWS
from bounded_helpers import CFM, operators, random_problem, reduced_qp


def contact_then_limit_rows(rng, k, rest):
    """(m, lo, hi, friction, ratio, normal_of) of k contacts' rows as contact_rows makes them
    (k normal rows bounded by [0, inf), then their first and second friction rows, ratios
    random) followed by ``rest`` limit rows of random two-sided bounds."""
    m = 3 * k + rest
    friction = np.zeros(m, dtype=bool)
    friction[k:3 * k] = True
    normal_of = np.zeros(m, dtype=np.intp)
    normal_of[k:3 * k] = np.tile(np.arange(k), 2)
    lo = np.concatenate([np.zeros(k), np.full(2 * k, -np.inf), -rng.uniform(0.5, 1.0, rest)])
    hi = np.concatenate([np.full(3 * k, np.inf), rng.uniform(0.5, 1.0, rest)])
    ratio = np.where(friction, rng.uniform(0.0, 1.0, m), 0.0)
    return m, lo, hi, friction, ratio, normal_of


class CountedReduced(Reduced):
    """The solver's operator, counting its products."""
    products = 0

    def __call__(self, z):
        self.products += 1
        return super().__call__(z)


@pytest.mark.parametrize("seed", range(4))
def test_a_carried_power_vector_estimates_the_norm_in_two_products(seed):
    """The step lengths want ||s (S + R) s||: MPRGP's expansion step below 2 / ||.||, the
    accelerated projection's below 1 / ||.||. A power iteration estimates it (from below). A
    solve that carries last solve's vector (a step changes a pile's largest mode little; here
    the same operator) starts the power iteration from it and needs two products, not six,
    for an estimate at least as close."""
    p = random_problem(100 + seed, n_bodies=30, n_eq=20, n_contacts=60, n_limits=6)
    E, B, fac, factor = operators(p)
    Q, _ = reduced_qp(p, E, B)              # (S + R: the softness and cfm included)
    cfm = CFM + CONTACT_SOFTNESS * B.diagonal     # (as the solver regularises the rows)
    s = 1.0 / np.sqrt(B.diagonal + cfm)
    largest = np.linalg.eigvalsh(s[:, None] * Q * s[None, :]).max()
    op = CountedReduced(B, cfm, s, E, fac, factor)
    carried = SolverMemory()
    cold, cold_is_warm = norm(op, B.m, carried)
    products = op.products
    assert products == COLD_POWER_ITERATIONS
    warm, warm_is_warm = norm(op, B.m, carried)
    assert op.products - products == 2 and warm_is_warm and not cold_is_warm
    assert largest >= warm >= cold > 0.6 * largest


def test_contact_rows_project_by_slices_as_the_general_box():
    """Many rows that begin with contacts' rows as contact_rows makes them (k normal rows, a
    few capped, then their first and second friction rows), then limit rows: told so
    (n_contact_rows), the box projects the contacts' rows by slices, without gathers. It is
    the projection of the box not told, bit for bit."""
    rng = np.random.default_rng(3)
    k, rest = SHORT_ROWS // 3 + 1, 5
    m, lo, hi, friction, ratio, normal_of = contact_then_limit_rows(rng, k, rest)
    hi[:k:7] = 0.5
    told = FrictionBox(lo, hi, friction, ratio, normal_of, n_contact_rows=3 * k)
    plain = FrictionBox(lo, hi, friction, ratio, normal_of)
    assert told.contact_layout and not plain.contact_layout
    for _ in range(3):
        v = rng.normal(size=m)
        projected = plain.project(v, np.empty(m))
        assert told.project(v, np.empty(m)).tobytes() == projected.tobytes()
        assert np.all(np.abs(projected[k:3 * k])
                      <= ratio[k:3 * k] * np.tile(np.maximum(projected[:k], 0.0), 2))


def test_friction_rows_after_the_contacts_rows_are_bounded_by_their_normal_forces():
    """Rolling and spin friction rows follow the contacts' rows, bounded by the contacts'
    normal forces, then limit rows: the box projects them by the contacts' slices and a
    gather of the torque rows' normal forces, bit for bit as the box not told. Friction rows
    after a limit row take the general path."""
    rng = np.random.default_rng(4)
    k, torque, rest = SHORT_ROWS // 3 + 1, 30, 4
    m = 3 * k + torque + rest
    friction = np.zeros(m, dtype=bool)
    friction[k:3 * k + torque] = True
    normal_of = np.zeros(m, dtype=np.intp)
    normal_of[k:3 * k] = np.tile(np.arange(k), 2)
    normal_of[3 * k:3 * k + torque] = rng.integers(0, k, torque)
    lo = np.concatenate([np.zeros(k), np.full(2 * k + torque, -np.inf),
                         -rng.uniform(0.5, 1.0, rest)])
    hi = np.concatenate([np.full(3 * k + torque, np.inf), rng.uniform(0.5, 1.0, rest)])
    ratio = np.where(friction, rng.uniform(0.0, 1.0, m), 0.0)
    ratio[3 * k::5] = 0.0                              # (held: no such friction)
    box = FrictionBox(lo, hi, friction, ratio, normal_of, n_contact_rows=3 * k)
    plain = FrictionBox(lo, hi, friction, ratio, normal_of)
    assert box.contact_layout
    for _ in range(3):
        v = rng.normal(size=m)
        projected = box.project(v, np.empty(m))
        assert projected.tobytes() == plain.project(v, np.empty(m)).tobytes()
        assert np.all(projected[:k] >= 0.0)
        bounded = slice(k, 3 * k + torque)
        assert np.all(np.abs(projected[bounded])
                      <= ratio[bounded] * projected.take(normal_of[bounded]))
        assert np.any(projected[3 * k:3 * k + torque] != 0.0)
    first = 3 * k + torque                     # a limit row before the torque rows' end
    late = np.r_[:3 * k + 10, first, 3 * k + 10:first, first + 1:m]
    shuffled = FrictionBox(lo[late], hi[late], friction[late], ratio[late], normal_of[late],
                           n_contact_rows=3 * k)
    assert not shuffled.contact_layout


def test_a_box_of_normal_forces_from_zero_clips_once():
    """Few rows (the general path): contacts' normal rows bounded by [0, inf) and their
    friction rows, then limit rows. The friction rows' bounds from the normal forces as they
    are (max(z_n, 0)) are those from the normal forces clipped first, so the box clips all
    rows once: bit for bit the two passes, negative normal forces and signed zeros
    included. A capped normal row takes the two passes."""
    rng = np.random.default_rng(5)
    k, rest = 20, 6
    m, lo, hi, friction, ratio, normal_of = contact_then_limit_rows(rng, k, rest)
    box = FrictionBox(lo, hi, friction, ratio, normal_of)
    assert box._normals_from_zero and not box.contact_layout
    two_passes = FrictionBox(lo, hi, friction, ratio, normal_of)
    two_passes._normals_from_zero = False
    for _ in range(3):
        v = rng.normal(size=m)
        v[:k:4], v[1:k:4], v[k::7] = -0.0, 0.0, -0.0
        once = box.project(v, np.empty(m))
        assert once.tobytes() == two_passes.project(v, np.empty(m)).tobytes()
        assert np.all(np.abs(once[k:3 * k]) <= ratio[k:3 * k] * np.tile(once[:k], 2))
        assert box.project(v.copy(), v).tobytes() == once.tobytes()       # (in place)
    capped = hi.copy()
    capped[3] = 0.5
    assert not FrictionBox(lo, capped, friction, ratio, normal_of)._normals_from_zero


def test_contacts_with_one_run_of_friction_rows_and_second_rows_after_them():
    """A working set without the rows held across a glide (iterative._working_set): k
    normal rows, their first friction rows, then the second friction rows of some of the
    contacts, then limit rows. Told so (tangent_runs 1), the box projects the first friction
    rows by slices and the second ones by a gather of their normal forces, bit for bit as the
    box not told."""
    rng = np.random.default_rng(6)
    k, rest = SHORT_ROWS // 2 + 1, 3
    second = np.flatnonzero(rng.random(k) < 0.3)         # contacts whose second row is kept
    t = second.size
    m = 2 * k + t + rest
    friction = np.zeros(m, dtype=bool)
    friction[k:2 * k + t] = True
    normal_of = np.zeros(m, dtype=np.intp)
    normal_of[k:2 * k] = np.arange(k)
    normal_of[2 * k:2 * k + t] = second
    lo = np.concatenate([np.zeros(k), np.full(k + t, -np.inf), -rng.uniform(0.5, 1.0, rest)])
    hi = np.concatenate([np.full(2 * k + t, np.inf), rng.uniform(0.5, 1.0, rest)])
    ratio = np.where(friction, rng.uniform(0.0, 1.0, m), 0.0)
    box = FrictionBox(lo, hi, friction, ratio, normal_of, 2 * k, 1)
    plain = FrictionBox(lo, hi, friction, ratio, normal_of)
    assert box.contact_layout and (box.k, box.t) == (k, t)
    for _ in range(3):
        v = rng.normal(size=m)
        projected = box.project(v, np.empty(m))
        assert projected.tobytes() == plain.project(v, np.empty(m)).tobytes()
        bounded = slice(k, 2 * k + t)
        assert np.all(np.abs(projected[bounded])
                      <= ratio[bounded] * np.maximum(projected.take(normal_of[bounded]), 0.0))
