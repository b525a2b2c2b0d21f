"""Every registered scene builds and runs 2 s: finite, joints held, something moved."""
import numpy as np
import pytest

import scenes


@pytest.mark.parametrize("name", scenes.names())
def test_scene_runs_two_seconds(name):
    scene = scenes.load(name)
    world = scene.world
    start = world.positions.copy()
    scene.step(int(round(2.0 / world.dt)))
    assert np.all(np.isfinite(world.positions))
    assert world.constraint_error() < 1e-4
    assert np.max(np.linalg.norm(world.positions - start, axis=1)) > 0.01


def test_unknown_scene_lists_the_choices():
    with pytest.raises(ValueError, match="choose one of: chain"):
        scenes.load("nope")
