"""Process settings for stepping without pauses: freed memory kept for the next step (asked for
explicitly, can be turned off), and the objects built before a run out of the garbage
collector's full collections."""
import gc
import weakref

from physics import World
from physics.allocator import freeze_built_objects, keep_freed_memory


def test_keeping_freed_memory_is_granted_by_glibc_unless_turned_off(monkeypatch):
    monkeypatch.setenv("MAXCOORD_KEEP_MEMORY", "0")
    assert keep_freed_memory() is False
    monkeypatch.delenv("MAXCOORD_KEEP_MEMORY")
    assert keep_freed_memory() is True          # Debian's glibc takes both mallopt settings


class _Holder:
    pass


def test_freezing_again_frees_what_became_garbage_since():
    """What was built before a run is frozen (full collections skip it); freezing again, as
    loading another scene does, first frees the garbage made since: a world dropped while
    caught in a reference cycle is not kept for ever."""
    try:
        holder = _Holder()
        holder.cycle, holder.world = holder, World()
        dropped = weakref.ref(holder)
        freeze_built_objects()
        assert gc.get_freeze_count() > 0
        del holder
        gc.collect()
        assert dropped() is not None                # frozen: out of the collections' reach
        freeze_built_objects()
        assert dropped() is None
    finally:
        gc.unfreeze()
