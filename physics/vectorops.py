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


def dot(a, b):
    """a . b, single-threaded: OpenBLAS threads its ddot above 10^4 entries, and on a busy
    machine those threads spun for whole seconds (seen on the 1000-sphere bin), so long
    vectors go to BLAS in pieces of 8192 entries (einsum's own loop, used before, took twice
    as long). (A given size always takes the same path: runs stay bitwise reproducible.)"""
    return dot_short(a, b) if a.shape[0] <= 8192 else dot_long(a, b)


def dot_short(a, b):
    """dot for at most 8192 entries (ndarray.dot: the BLAS call of @ at half its overhead)."""
    return float(a.dot(b))


def dot_long(a, b):
    """dot for more than 8192 entries: BLAS on pieces of 8192 (half einsum's time)."""
    total = 0.0
    for i in range(0, a.shape[0], 8192):
        total += float(a[i:i + 8192].dot(b[i:i + 8192]))
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
