"""Process settings for stepping without pauses: freed memory kept for the next step's
temporaries, and the objects built before the run kept out of the garbage collector's full
collections.

A step makes and drops a few hundred numpy temporaries, from 1 kB to a few MB. With glibc's
defaults, blocks above 128 kB come from mmap and go back to the kernel when freed, and the
top of the heap is handed back once 128 kB of it are free; either way the next step touches
fresh pages, and each first touch is a page fault. That cost 15 % of a 1000-link chain's step
(4.13 -> 3.45 ms) and 8 % of the 1000-sphere bin's. Raising both thresholds keeps at most
KEEP_BYTES of freed memory in the process for reuse.

It is a setting of the whole process, so the library does not make it on import: the
``maxcoord`` command line (runs, benchmarks, the viewer) calls ``keep_freed_memory()``, and a
program of one's own may call ``physics.keep_freed_memory()``. Only glibc (Linux) has
mallopt; elsewhere this does nothing. MAXCOORD_KEEP_MEMORY=0 in the environment turns it off.
Likewise the command line calls ``freeze_built_objects()`` once a scene is built, and a
program of one's own may call ``physics.freeze_built_objects()`` after building its world.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os

KEEP_BYTES = 64 << 20          # freed memory the process may keep (bytes)
MMAP_BYTES = 32 << 20          # blocks above this still come from mmap (glibc's own maximum)
_M_TRIM_THRESHOLD = -1         # glibc's mallopt parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed memory for reuse; True if it was asked."""
    if os.environ.get("MAXCOORD_KEEP_MEMORY", "1") == "0":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_BYTES)) and bool(mallopt(_M_TRIM_THRESHOLD,
                                                                         KEEP_BYTES))


def freeze_built_objects() -> None:
    """Collect the garbage, then move every object made so far (the modules, the worlds built)
    out of the garbage collector's full collections (``gc.freeze``). Those otherwise scan all
    of them, ~43k objects with a 10-ragdoll pile: a 20 ms pause every few hundred steps, a
    dropped frame in the viewer. A step's own temporaries are still freed by reference
    counting and the young generations' collections.

    Call it when a world is built and before it runs; calling it again (another scene loaded)
    first frees what became garbage since, the last world included."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
