"""Keeping freed memory for the next step is asked for explicitly and can be turned off."""
from physics.allocator import keep_freed_memory


def test_keeping_freed_memory_is_granted_by_glibc_unless_turned_off(monkeypatch):
    monkeypatch.setenv("MAXCOORD_KEEP_MEMORY", "0")
    assert keep_freed_memory() is False
    monkeypatch.delenv("MAXCOORD_KEEP_MEMORY")
    assert keep_freed_memory() is True          # Debian's glibc takes both mallopt settings
