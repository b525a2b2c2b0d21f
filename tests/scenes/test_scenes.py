"""Every registered scene builds and runs 2 s: finite, joints held, something moved."""
import numpy as np
import pytest

import scenes

# Heavy scenes run smaller in the smoke test (their defaults are for viewing).
SMOKE_PARAMS = {
    "box_pyramid": {"base": 3},
    "dominoes": {"count": 8},
    "marbles": {"count": 100},
    "ragdoll_pile": {"count": 2},
}


@pytest.mark.parametrize("name", scenes.names())
def test_scene_runs_two_seconds(name):
    scene = scenes.load(name, **SMOKE_PARAMS.get(name, {}))
    world = scene.world
    start = world.positions.copy()
    scene.step(int(round(2.0 / world.dt)))
    assert np.all(np.isfinite(world.positions))
    assert world.constraint_error() < 1e-4
    assert np.max(np.linalg.norm(world.positions - start, axis=1)) > 0.01


@pytest.mark.parametrize("name", scenes.names())
def test_scene_describes_itself(name):
    info = scenes.describe(name)
    assert info["title"] and info["description"]
    scene = scenes.load(name, **SMOKE_PARAMS.get(name, {}))
    assert set(scene.camera) >= {"target", "distance", "yaw", "pitch"}


def test_unknown_scene_lists_the_choices():
    with pytest.raises(ValueError, match="choose one of: box_pyramid"):
        scenes.load("nope")


def test_string_parameters_are_coerced_to_the_defaults_type():
    scene = scenes.load("ragdoll", steps="3", push="1.0", self_collision="false")
    assert scene.params["steps"] == 3 and scene.params["self_collision"] is False
    with pytest.raises(ValueError, match="self_collision"):
        scenes.load("ragdoll", self_collision="maybe")
