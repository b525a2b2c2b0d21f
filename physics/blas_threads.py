"""One BLAS thread inside a step.

The step's linear algebra is many small LAPACK calls (banded Cholesky factorisations of a few
hundred rows), for which OpenBLAS's extra threads only spin and wait on each other: a ragdoll
thrown at a wall, stepped from a script on a busy 2-core machine, spent 1.2-7.6 s in one step's
158 factorisations with two threads and 0.2-0.3 s with one. The ``maxcoord`` command sets
OPENBLAS_NUM_THREADS=1 before numpy loads; a script imports numpy itself, often first, so
the step sets the thread count of every BLAS library loaded (numpy and scipy each bring their
own OpenBLAS) to one while it runs and gives the caller's back after (threadpoolctl finds the
libraries; 4 us a step when they already run one thread, 15 us when they do not).
"""
from __future__ import annotations

import functools

from threadpoolctl import ThreadpoolController

_libraries = None     # the BLAS libraries' controllers, found at the first step


def _blas_libraries():
    global _libraries
    if _libraries is None:
        _libraries = ThreadpoolController().select(user_api="blas").lib_controllers
    return _libraries


def one_blas_thread(function):
    """``function`` run with every loaded BLAS library on one thread, their counts restored
    after (also when it raises)."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        libraries = _blas_libraries()
        counts = [library.get_num_threads() for library in libraries]
        if all(count == 1 for count in counts):
            return function(*args, **kwargs)
        for library in libraries:
            library.set_num_threads(1)
        try:
            return function(*args, **kwargs)
        finally:
            for library, count in zip(libraries, counts):
                library.set_num_threads(count)
    return wrapper
