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


def assert_same_snapshot(a, b, where="state"):
    """Two ``get_state`` dicts are the same in every part, bit for bit (contacts, warm
    starts, sleep, joint forces and all)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            assert_same_snapshot(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_snapshot(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert (isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype
                and a.tobytes() == b.tobytes()), where
    else:
        assert a == b and type(a) is type(b), where
