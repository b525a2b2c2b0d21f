"""Replaying a world from a snapshot, and comparing states (shared by the tests that check a
replay is exact or a world unchanged)."""
import numpy as np


def replay_from_snapshot(world, before: int, after: int):
    """Step ``before`` steps and take a snapshot, step ``after`` more; restore the snapshot and
    step ``after`` again. Returns both end states (``get_state`` dicts)."""
    world.step(before)
    snapshot = world.get_state()
    world.step(after)
    first = world.get_state()
    world.set_state(snapshot)
    world.step(after)
    return first, world.get_state()


def assert_same_state(a, b):
    """Two ``get_state`` dicts hold the same bodies' state at the same time, bit for bit."""
    for key in ("x", "q", "v", "w"):
        assert np.array_equal(a[key], b[key]) and a[key].tobytes() == b[key].tobytes(), key
    assert a["time"] == b["time"]
