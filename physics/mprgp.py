"""The bounded rows' QP on a fixed box, min 1/2 z^T Q z - c^T z,  lo <= z <= hi (Q = s (S + R) s
of ``iterative.solve_iterative``, Jacobi-scaled), by Dostal's MPRGP (modified proportioning
with reduced gradient projections; ``MPRGP``), and its use with friction on held boxes
(``held_boxes``).

Without friction (impacts, a mechanism's limits and motors alone) the box is fixed. MPRGP
takes conjugate-gradient steps on the free rows, proportioning steps that free rows whose
gradient points into the box, and when CG would cross a bound, the CG step projected onto the
box if it lowers the objective (in a pile many rows reach their bounds at once), else MPRGP's
expansion step. While rows keep reaching bounds, the next step is the projected gradient step
of Barzilai-Borwein length (s^T y / y^T y of the last step) if it descends: one product
instead of the projected CG step's two; a step that reaches no bound hands back to CG. It
converges at the rate of CG (sqrt of the condition number, not the condition number as
Jacobi/Gauss-Seidel do), which is what nearly hard impacts need. Every step is a descent.

With friction, unless the last step's solve did not finish (``iterative.SolverMemory``), a few
MPRGP iterations on the box of the warm start's normal forces come first (``held_boxes``): they
finish a resting pile, whose box stays put; a box that keeps moving is left to
``accelerated_projection``.
"""
import numpy as np

from .vectorops import best_scale, clip, clip_to, dot_for

# MPRGP iterations on the box of the current normal forces before it is moved to the normal
# forces found, for at most MPRGP_ROUNDS boxes; if the box still moves (or moves by more than
# MOVING_BOX of the largest multiplier at once), the accelerated projection takes over
ROUND_ITERATIONS = 5
MPRGP_ROUNDS = 2
MOVING_BOX = 1e-2
_BIG = 1e300


class MPRGP:
    """min 1/2 z^T Q z - c^T z on lo <= z <= hi by MPRGP (Dostal and Schoeberl 2005; the box
    version of Kruzik et al. 2020), Gamma = 1."""

    def __init__(self, Q, c, step_length):
        self.Q, self.c, self.step_length = Q, c, step_length
        self.dot = dot_for(c.shape[0])
        self.alpha = None             # computed when first needed: a converged warm start skips it

    def _alpha(self):
        if self.alpha is None:
            self.alpha = self.step_length()
        return self.alpha

    def solve(self, lo, hi, z0, tol, max_iterations):
        """tol: (m,) per-row bound on the projected gradient. Returns (z, iterations, max
        |projected gradient| / tol)."""
        Q, c, dot = self.Q, self.c, self.dot
        z = clip(z0, lo, hi)
        g = Q(z) - c
        # a warm start worse than no impulses at all (f(z) > 0) is replaced by its best
        # multiple t z, 0 <= t < 1 (every box here holds 0, so t z stays in it). A good warm
        # start is kept as it is: scaling it would be an error spread over the whole pile,
        # the slowest mode for CG to remove.
        cz = dot(c, z)
        t = best_scale(dot(z, g) + cz, cz)
        if t is not None:
            z = t * z
            g = t * (g + c) - c
        inv_tol = 1.0 / tol
        m = z.shape[0]
        # The vectors of an iteration live in buffers allocated once per solve, written by
        # the ufuncs' out argument (with 10^4 rows a fresh temporary costs about as much as the
        # operation itself). out is passed by position where numpy allows it: the keyword
        # costs ~0.1 us a call, and a ragdoll pile's iteration is ~30 calls of well under a
        # microsecond of work each (np.maximum/np.minimum warn, deprecated, and keep out=).
        # z moves between two buffers, p keeps its own, the others are scratch. The arithmetic
        # is the same as with temporaries, operation by operation. (z and g are this solve's
        # own arrays: g is updated in place or replaced by a product's result.)
        z_next = np.empty(m)          # the candidate z of a step, swapped with z when taken
        p_buf = np.empty(m)           # the conjugate direction, updated in place
        p = None
        gp = np.empty(m)              # projected gradient
        phi = np.empty(m)             # free gradient
        t1, t2, t3 = np.empty(m), np.empty(m), np.empty(m)
        off_lo = np.empty(m, dtype=bool)                 # not at the lower bound
        off_hi = np.empty(m, dtype=bool)
        # the masks again as 0./1. floats: a bool operand costs a cast in every product with
        # it (twice a plain product's time), one copy costs less
        lo_f, hi_f, free = np.empty(m), np.empty(m), np.empty(m)
        same = np.empty(m, dtype=bool)
        it = 0
        bb_len = None
        fz = None                     # f(z) = 1/2 z^T Q z - c^T z, while known
        lo_a = hi_a = inv_alpha = None   # lo, hi and 1 over the expansion step length
        while True:
            np.copyto(lo_f, np.greater(z, lo, off_lo))
            np.copyto(hi_f, np.less(z, hi, off_hi))
            np.multiply(lo_f, hi_f, free)                # 1. on the free rows, else 0.
            # projected gradient: g on the free rows, its part pointing into the box on the
            # others (a fixed row, lo = hi, sits on both bounds and gets 0)
            # (branch-free: np.where on scattered masks costs several times more)
            np.minimum(g, np.multiply(lo_f, _BIG, t1), out=gp)
            np.maximum(gp, np.multiply(hi_f, -_BIG, t1), out=gp)
            # max |gp| / tol (argmax: the maximum's own reduction costs several times more)
            np.multiply(np.abs(gp, t1), inv_tol, t1)
            worst = float(t1[t1.argmax()]) if m else 0.0
            if worst <= 1.0 or it >= max_iterations:
                return z, it, worst
            it += 1
            np.multiply(g, free, phi)                    # free gradient
            phiphi = dot(phi, phi)
            bb = dot(gp, gp) - phiphi                    # |chopped gradient|^2 (disjoint)
            proportional = bb <= 0.0
            if not proportional and bb <= phiphi:       # (phit . phi <= phi . phi)
                # reduced free gradient: how far a step of alpha may go before a bound
                # (phi > 0: min(phi, (z - lo)/alpha); phi < 0: max(phi, (z - hi)/alpha)),
                # as z/alpha - lo/alpha with the bounds divided once a round: no division
                # in the iteration (3x a product's time) and one pass less
                if lo_a is None:
                    inv_alpha = 1.0 / self._alpha()
                    lo_a, hi_a = lo * inv_alpha, hi * inv_alpha
                z_a = np.multiply(z, inv_alpha, t2)
                phit = np.maximum(phi, np.subtract(z_a, hi_a, t1), out=t1)
                np.minimum(phit, np.subtract(z_a, lo_a, t2), out=phit)
                proportional = bb <= dot(phit, phi)
            if proportional and p is None and bb_len is not None:
                # while rows keep reaching bounds: a projected gradient step of the Barzilai-
                # Borwein length (one product where the projected CG step takes two), kept
                # if it descends
                z_free = np.subtract(z, np.multiply(phi, bb_len, t1), t1)
                z_try = clip_to(z_next, z_free, lo, hi)
                g_try = Q(z_try)
                g_try -= c
                # f(z + d) - f(z) = g.d + d.Qd/2 with d = z_try - z, Qd = g_try - g (the
                # same two vectors as the next step length)
                d, Qd = np.subtract(z_try, z, t2), np.subtract(g_try, g, t3)
                dQd = dot(d, Qd)
                if dot(g, d) + 0.5 * dQd < 0.0:
                    fz = None
                    # no bound reached: back to conjugate gradients
                    if (np.count_nonzero(np.equal(z_try, z_free, same)) == m
                            or not dQd > 0.0):
                        bb_len = None
                    else:
                        bb_len = dQd / dot(Qd, Qd)
                    z, z_next = z_try, z
                    g = g_try
                    continue
                bb_len = None
            if proportional:
                if p is None:
                    p = p_buf
                    np.copyto(p, phi)
                Ap = Q(p)
                pAp = dot(p, Ap)
                if not pAp > 0:
                    return z, it, worst
                a_cg = dot(g, p) / pAp
                z_cg = np.subtract(z, np.multiply(p, a_cg, t1), z_next)
                z_try = clip_to(t2, z_cg, lo, hi)
                # (count_nonzero: several times cheaper than .all())
                if np.count_nonzero(np.equal(z_try, z_cg, same)) == m:
                    z, z_next = z_cg, z
                    g -= np.multiply(Ap, a_cg, t1)
                    fz = None
                    phi_new = np.multiply(g, free, phi)
                    # p <- phi_new - (phi_new . Ap / pAp) p, in its buffer
                    np.subtract(phi_new, np.multiply(p, dot(phi_new, Ap) / pAp, p), p)
                else:
                    # the CG step would reach bounds: first try it projected onto the box
                    # (many rows reach their bounds at once in a pile); keep it if it descends
                    f = 0.5 * dot(z, np.subtract(g, c, t1)) if fz is None else fz
                    g_try = Q(z_try)
                    g_try -= c
                    f_try = 0.5 * dot(z_try, np.subtract(g_try, c, t1))
                    if f_try < f:
                        fz = f_try
                        bb_len = _bb_length(np.subtract(z_try, z, t1),
                                            np.subtract(g_try, g, t3), dot)
                        z, t2 = z_try, z
                        g = g_try
                    else:                             # expansion step
                        # the longest feasible step along -p (p is zero off the free rows)
                        a_f = _longest_step(z, p, lo, hi)
                        z = clip(z - a_f * p, lo, hi)
                        g = g - a_f * Ap
                        z_exp = clip(z - self._alpha() * (g * free), lo, hi)
                        g_exp = Q(z_exp) - c
                        # the power iteration estimates ||Q|| from below: a step that does
                        # not descend was too long (alpha >= 2 / ||Q||), halve it for good
                        f_exp = 0.5 * dot(z_exp, g_exp - c)
                        if f_exp <= 0.5 * dot(z, g - c):
                            z, g = z_exp, g_exp
                        else:
                            self.alpha *= 0.5
                            inv_alpha, lo_a, hi_a = None, None, None
                        fz = None
                    p = None
            else:                                     # proportioning step
                beta = np.subtract(gp, phi, t1)
                Ab = Q(beta)
                a = bb / dot(beta, Ab)
                a = min(a, _longest_step(z, beta, lo, hi))
                z = clip(z - a * beta, lo, hi)
                g -= np.multiply(Ab, a, t2)
                p = None
                fz = None


def _bb_length(step, change, dot):
    """The Barzilai-Borwein step length s.y / y.y of a step s that changed the gradient by y
    (None when s.y <= 0), by the dot product ``dot``."""
    sy = dot(step, change)
    if not sy > 0.0:
        return None
    return sy / dot(change, change)


def held_boxes(qp, cone, z, tol, rel, s, friction, max_iterations):
    """MPRGP on the box of the current normal forces, then on the box of the normal forces it
    found, at most MPRGP_ROUNDS boxes of ROUND_ITERATIONS iterations: a resting pile is
    solved in a few iterations and keeps its box. Returns (z projected onto the box of its
    own normal forces, iterations, residual, settled: the box held within tol plus rel of
    the largest multiplier, as the rows' own tolerance is tol plus rel of what they ask).
    qp: the rows' MPRGP; cone: their ``accelerated_projection.FrictionBox``."""
    iterations, residual = 0, np.inf
    fric_s = s.compress(friction)
    fric_tol = tol.compress(friction)
    limit = cone.limits(z)
    for _ in range(MPRGP_ROUNDS):
        z, used, residual = qp.solve(*cone.bounds(limit), z, tol,
                                     min(ROUND_ITERATIONS, max_iterations - iterations))
        iterations += used
        z = cone.project(z, z)
        found = cone.limits(z)            # (the next round's box)
        change = np.abs(found - limit).compress(friction)
        largest = np.abs(s * z).max()
        if residual <= 1.0 and (change <= fric_tol + rel * largest / fric_s).all():
            return z, iterations, residual, True
        if (iterations >= max_iterations or used == 0
                or (fric_s * change).max() > MOVING_BOX * largest):
            break
        limit = found
    return z, iterations, residual, False


def _longest_step(z, d, lo, hi):
    """The longest step a >= 0 that keeps z - a d within [lo, hi] (inf if none bounds it)."""
    room = np.divide(z - np.where(d > 0, lo, hi), d, out=np.full(z.shape[0], np.inf),
                     where=d != 0)
    return float(room.min(initial=np.inf))
