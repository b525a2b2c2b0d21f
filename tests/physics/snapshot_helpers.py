"""Replaying a world from a snapshot (shared by the tests that check it is exact)."""


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
