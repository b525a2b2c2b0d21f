"""The bounded rows' QP with friction, min 1/2 z^T Q z - c^T z over the box whose friction bounds
are mu times the normal forces (Q = s (S + R) s of ``iterative.solve_iterative``,
Jacobi-scaled), by accelerated projected gradients (``accelerated_projection``), and the
estimate of ||Q|| that sets the step lengths of both methods (``norm``).

|lambda_t| <= mu lambda_n bounds each friction row by its own normal force: min 1/2 x^T
(S + R) x - b^T x over that box, whose friction bounds are the normal forces of the solution
(the fixed point of the direct solver's friction rounds), is solved by Nesterov-accelerated
projected gradients with gradient restart, every projection onto the box of the normal forces
it has just found (``FrictionBox``): it converges where rounds of fixed bounds cycle, and keeps
friction in step with the normal forces throughout. A solve cut short by its budget is never
worse than no impulses at all (``best_multiple``).
"""
import math

import numpy as np

from .vectorops import SHORT_ROWS, best_scale, clip_to, dot, dot_for

# the accelerated projection's step is 1 / (margin est): est is from below, and a step past
# 2 / ||s A s|| diverges
WARM_NORM_MARGIN = 1.1
COLD_NORM_MARGIN = 1.6
# MPRGP's expansion step is MPRGP_STEP / (WARM_NORM_MARGIN est) (``mprgp_step_length``), which
# must stay below 2 / ||s A s||
MPRGP_STEP = 1.9
# what ``norm`` gives without an estimate (no rows, or an operator that gives zero): the
# estimate for which MPRGP's step is 1
NO_ESTIMATE = MPRGP_STEP / WARM_NORM_MARGIN
# products of the power iteration (``norm``): from a flat start, from the carried vector
COLD_POWER_ITERATIONS = 6
WARM_POWER_ITERATIONS = 2


class FrictionBox:
    """lo <= z <= hi for the rows without friction, |z_t| <= ratio_t max(z_n, 0) for the
    friction rows t of normal row n (scaled multipliers): the box that moves with the normal
    forces. ``project`` clips the other rows first, then the friction rows to the bounds of
    the normal forces just clipped. ``n_contact_rows``: the rows begin with contacts' rows as
    ``contact_rows`` makes them (k normal rows, then their first and their second friction
    rows, those of normal row i i-th in each run), or with ``tangent_runs`` 1 their normal
    rows and their first friction rows alone (a working set without the rows across a glide,
    ``iterative._working_set``); the fast path of that layout takes the friction rows right
    after them (rolling and spin friction's, such a set's second friction rows) by a gather
    of their normal forces, and needs the rows after those to have no friction rows."""

    def __init__(self, lo, hi, friction, ratio, normal_of, n_contact_rows=0, tangent_runs=2):
        self.lo_first = np.where(friction, -np.inf, lo)
        self.hi_first = np.where(friction, np.inf, hi)
        # second pass: the friction rows' bounds are 0 -/+ ratio z_n; the others' their own
        # (held already: ratio is 0 there)
        self.lo_second = np.where(friction, 0.0, lo)
        self.hi_second = np.where(friction, 0.0, hi)
        self.ratio, self.normal_of = ratio, normal_of
        # the friction rows' normal rows (those bounding any) all bounded by [0, inf): then
        # max(z_n, 0) of z_n clipped to its own bounds is max(z_n, 0) of z_n as it is, and the
        # general path clips once, where it clipped the other rows first and all again (the
        # same bounds, the same numbers; a ragdoll pile's 160 rows: one call of the seven)
        bounding = normal_of.compress(ratio != 0.0)
        self._normals_from_zero = bool((lo.take(bounding) == 0.0).all()
                                       and (hi.take(bounding) == np.inf).all())
        m = lo.shape[0]
        self._limit, self._lo, self._hi = np.empty(m), np.empty(m), np.empty(m)
        # max(z_n, 0) against an array of zeros: numpy's maximum with a scalar operand runs
        # an unvectorised loop, twice as long on 10^3-10^4 rows (the same numbers)
        self._zeros = np.zeros(m)
        # the contact rows' own layout lets the second pass work on the friction rows alone,
        # by slices: no gather, and a third of the rows less. It takes more calls, which
        # cost more than they save below SHORT_ROWS (a ragdoll pile's 150 rows: 4.8 against
        # 3.1 us; 1000 spheres' 10^4: 11 against 24)
        runs = tangent_runs
        k = n_contact_rows // (1 + runs)
        end = (1 + runs) * k                   # the contacts' rows end
        after = friction[end:]
        t = after.size if after.all() else int(after.argmin())   # friction rows right after
        # (friction rows after other rows take the general path)
        self.contact_layout = m >= SHORT_ROWS and k > 0 and not after[t:].any()
        if self.contact_layout:
            self.k, self.t, self.end = k, t, end
            torque = slice(end, end + t)
            self._torque_normal, self._torque_ratio = normal_of[torque], ratio[torque]
            self._torque_limit = np.empty(t)
            self._ratio2 = ratio[k:end].reshape(runs, k)
            self._normal, self._pair = np.empty(k), np.empty((runs, k))
            self._lo2, self._hi2 = np.empty((runs, k)), np.empty((runs, k))
            # the first pass on the normal rows (lambda_n >= 0; a dead contact's row is held
            # at 0 as well) and on the rows after the contacts: the friction rows' own bounds
            # are infinite
            self._lo_n, self._hi_n = lo[:k], hi[:k]
            self._capped_n = bool(np.isfinite(hi[:k]).any())
            self._lo_rest, self._hi_rest = lo[end + t:], hi[end + t:]

    def limits(self, z):
        """The friction rows' bounds for z's normal forces (0 on the other rows)."""
        return self.ratio * np.maximum(z.take(self.normal_of), self._zeros)

    def bounds(self, limit):
        """(lo, hi) of the box of the friction rows' bounds ``limit``, held."""
        return self.lo_second - limit, self.hi_second + limit

    def project(self, v, out):
        """The projection of v onto the box of its own normal forces, into out (may be v)."""
        if self.contact_layout:
            k, t, end = self.k, self.t, self.end
            if v is not out:
                np.copyto(out, v)
            normal, rest = out[:k], out[end + t:]
            np.maximum(normal, self._lo_n, out=normal)
            if self._capped_n:
                np.minimum(normal, self._hi_n, out=normal)
            if rest.size:
                clip_to(rest, rest, self._lo_rest, self._hi_rest)
            # (the same operations as below on the friction rows: 0 - limit <= z_t <= 0 + limit)
            positive = np.maximum(out[:k], self._zeros[:k], out=self._normal)
            limit = np.multiply(self._ratio2, positive, self._pair)
            pair = out[k:end].reshape(self._pair.shape)
            np.maximum(pair, np.subtract(0.0, limit, self._lo2), out=pair)
            np.minimum(pair, np.add(0.0, limit, self._hi2), out=pair)
            if t:
                torque = out[end:end + t]
                limit = np.multiply(self._torque_ratio, self._normal.take(self._torque_normal),
                                    self._torque_limit)
                np.maximum(torque, np.subtract(0.0, limit), out=torque)
                np.minimum(torque, limit, out=torque)
            return out
        if self._normals_from_zero:
            limit = np.multiply(self.ratio, np.maximum(v.take(self.normal_of), self._zeros),
                                self._limit)
            return clip_to(out, v, np.subtract(self.lo_second, limit, self._lo),
                           np.add(self.hi_second, limit, self._hi))
        clip_to(out, v, self.lo_first, self.hi_first)
        limit = np.multiply(self.ratio, np.maximum(out.take(self.normal_of), self._zeros),
                            self._limit)
        return clip_to(out, out, np.subtract(self.lo_second, limit, self._lo),
                        np.add(self.hi_second, limit, self._hi))


def accelerated_projection(Q, c, z0, box: FrictionBox, tol, max_iterations, norm_estimate):
    """min 1/2 z^T Q z - c^T z over the friction box by accelerated projected gradients
    (Nesterov's momentum, restarted whenever a step goes uphill along the gradient; FISTA
    with O'Donoghue and Candes' gradient restart), every projection onto the box of the
    normal forces it has just found. norm_estimate: called once, for the first step's
    length, gives (est, warm) as ``norm`` does for Q. Returns (z, iterations, residual: the
    largest gradient mapping |y - z_next| / step over tol, <= 1: converged).

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
    dot = dot_for(m)
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
            t = best_scale(yg + cy, cy)
            if t is not None:
                y *= t
                z[:] = y
                g *= t
                g -= (1.0 - t) * c
            est, warm = norm_estimate()
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


def best_multiple(op, c, z):
    """z, or its best multiple when z is worse than no impulses at all (one product): a
    solve cut short by its budget must not put energy in (a ragdoll pile whose friction was
    far from its normal forces blew up within five steps when it could)."""
    t = best_scale(dot(z, op(z)), dot(c, z))
    return z if t is None else t * z


def mprgp_step_length(est):
    """MPRGP's expansion step length for the estimate est of ||s A s|| (``norm``)."""
    return MPRGP_STEP / (WARM_NORM_MARGIN * est)


def norm(op, m, carried=None):
    """(est, warm): a power-iteration estimate of ||s A s|| (from below), and whether it
    started from the carried vector (then within a few per cent; from a flat start six
    products can fall a third short)."""
    if m == 0:
        return NO_ESTIMATE, True
    x, iterations = None, COLD_POWER_ITERATIONS
    if carried is not None and carried.u is not None and carried.u.shape[0] == 6 * op.n:
        x = op.rows_from_bodies(carried.u)
        size = float(np.sqrt(dot(x, x)))
        x, iterations = (x / size, WARM_POWER_ITERATIONS) if size > 0.0 else (None, iterations)
    warm = x is not None
    if x is None:
        x = np.full(m, 1.0 / np.sqrt(m))
    est = 0.0
    for _ in range(iterations):
        y = op(x)
        est = float(np.sqrt(dot(y, y)))
        if est == 0.0:
            return NO_ESTIMATE, True
        x = y / est
    if carried is not None:
        carried.u = op.bodies_from_rows(x)
    return est, warm
