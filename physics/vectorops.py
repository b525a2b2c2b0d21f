"""The vector operations that both bounded methods (``mprgp``, ``accelerated_projection``)
run in every iteration, cheap and bitwise reproducible.

With 10^4 rows the vector operations take about half of an iteration's time (the products,
``bodyspace``, the other half); with a few hundred (a ragdoll pile) numpy's per-call overhead
dominates.
So the operations are plain numpy in a fixed order (dot products without BLAS threads: the
result is bitwise reproducible) and branch-free (min/max against masks, not np.where: on the
scattered masks of a pile np.where cost several times more); the vectors of an iteration are
preallocated buffers written by the ufuncs' out, the masks are turned into 0/1 floats once (a
bool operand costs a cast in every product), and reductions and dot products take numpy's
cheapest entry points (argmax, count_nonzero, ndarray.dot). Both methods also keep a warm
start no worse than no impulses at all by the same rule (``best_scale``).
"""
import numpy as np

from .math3d import clip as _clip_ufunc

# Below this many rows numpy's per-call cost outweighs the per-element cost of its operations:
# short vectors take the fewest calls, long ones the fastest operations
SHORT_ROWS = 1500
# OpenBLAS threads its ddot above 10^4 entries, and on a busy machine those threads spun for
# whole seconds (seen on the 1000-sphere bin): longer vectors' dot products go to BLAS in
# pieces of this many entries
DOT_PIECE = 8192


def dot(a, b):
    """a . b, single-threaded (``dot_for``)."""
    return dot_for(a.shape[0])(a, b)


def dot_for(m):
    """The dot product of vectors of m entries, single-threaded: ``dot_short`` up to DOT_PIECE
    entries, else ``dot_long`` (einsum's own loop, used before, took twice as long). A loop
    of many dot products of one size chooses once. (A given size always takes the same path:
    runs stay bitwise reproducible.)"""
    return dot_short if m <= DOT_PIECE else dot_long


def dot_short(a, b):
    """dot for at most DOT_PIECE entries (ndarray.dot: the BLAS call of @ at half its
    overhead)."""
    return float(a.dot(b))


def dot_long(a, b):
    """dot for more than DOT_PIECE entries: BLAS on pieces of DOT_PIECE (half einsum's time)."""
    total = 0.0
    for i in range(0, a.shape[0], DOT_PIECE):
        total += float(a[i:i + DOT_PIECE].dot(b[i:i + DOT_PIECE]))
    return total


def clip(x, lo, hi):
    """np.clip(x, lo, hi) into a new array (``clip_to``)."""
    return clip_to(np.empty_like(x), x, lo, hi)


def clip_to(out, x, lo, hi):
    """np.clip(x, lo, hi) into out (x may be out): np.clip's own ufunc on short vectors (a
    third cheaper than maximum and minimum there), maximum and minimum on long ones (which
    they run at twice the ufunc's speed). The same numbers either way."""
    if x.shape[0] < SHORT_ROWS:
        return _clip_ufunc(x, lo, hi, out=out)
    np.maximum(x, lo, out=out)
    return np.minimum(out, hi, out=out)


def best_scale(zQz, cz):
    """The t in [0, 1) of the best multiple t z of a z worse than no impulses at all
    (f(z) = zQz / 2 - cz > 0 = f(0)), or None when z is no worse."""
    if zQz > 0.0 and cz < 0.5 * zQz:
        return max(cz / zQz, 0.0)
    return None
