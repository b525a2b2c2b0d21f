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
    moved = 0.0
    for _ in range(2):              # (a second apart: a top precessing once in 2 s is back)
        scene.step(int(round(1.0 / world.dt)))
        moved = max(moved, np.max(np.linalg.norm(world.positions - start, axis=1)))
    assert np.all(np.isfinite(world.positions))
    assert world.constraint_error() < 1e-4
    assert moved > 0.01


@pytest.mark.parametrize("name", scenes.names())
def test_scene_describes_itself(name):
    info = scenes.describe(name)
    assert info["title"] and info["description"]
    scene = scenes.load(name, **SMOKE_PARAMS.get(name, {}))
    assert set(scene.camera) >= {"target", "distance", "yaw", "pitch"}


@pytest.mark.parametrize("name", scenes.names())
def test_every_parameter_has_a_unit_and_a_meaning(name):
    """Each scene's build docstring documents each of its parameters, ``name (unit):
    meaning``, and no other (``maxcoord list`` shows them; it showed bare defaults such as
    tip=3.0, which is in rad/s)."""
    import inspect
    from scenes.registry import _module
    info = scenes.describe(name)
    built = set(inspect.signature(_module(name).build).parameters) - {"world"}
    documented = scenes.registry.parameter_docs(_module(name).build)
    assert set(documented) == set(info["params"]) == built
    for key, p in info["parameters"].items():
        assert p["default"] == info["params"][key]
        assert p["unit"].strip() and len(p["meaning"]) > 10, (key, p)


def test_parameter_docs_join_lines_and_stop_at_the_section_end():
    def build(world, speed=1.0, count=2):
        """A thing.

        Parameters:
            speed (m/s): how fast it goes,
                along x.
            count (count): how many.

        Other text (m): not a parameter.
        """
    assert scenes.registry.parameter_docs(build) == {
        "speed": {"unit": "m/s", "meaning": "how fast it goes, along x."},
        "count": {"unit": "count", "meaning": "how many."}}
    assert scenes.registry.parameter_docs(lambda world: None) == {}
    assert scenes.describe("dominoes")["parameters"]["tip"] == {
        "default": 3.0, "unit": "rad/s",
        "meaning": "the angular speed given to the first domino, about its front bottom edge."}


def test_parameter_docs_take_an_entry_on_the_parameters_line_itself():
    """An entry after "Parameters:" on its own line ("Parameters: speed (m/s): ...") lost the
    whole section: every parameter, the ones on lines of their own too, showed as not
    documented. It is the first entry, and the lines under it go on as ever."""
    def first(world, speed=2.0, mu=0.5):
        """Parameters: speed (m/s): start speed,
                along x.
            mu: Coulomb friction
        """

    def later(world, speed=2.0, mu=0.5):
        """A box.

        Parameters: speed (m/s): start speed,
                along x.
            mu: Coulomb friction

        Other text (m): not a parameter.
        """

    def alone(world, speed=2.0, mu=0.5):
        """Parameters: speed (m/s): start speed, along x."""

    expected = {"speed": {"unit": "m/s", "meaning": "start speed, along x."},
                "mu": {"unit": "-", "meaning": "Coulomb friction"}}
    assert scenes.registry.parameter_docs(first) == expected
    assert scenes.registry.parameter_docs(later) == expected
    assert scenes.registry.parameter_docs(alone) == {"speed": expected["speed"]}

    def prose(world):
        """Parameters: see the module's docstring."""       # (no entry: no section)
    assert scenes.registry.parameter_docs(prose) == {}


def test_unknown_scene_lists_the_choices():
    with pytest.raises(ValueError, match="choose one of: box_pyramid"):
        scenes.load("nope")


def test_string_parameters_are_coerced_to_the_defaults_type():
    scene = scenes.load("ragdoll", steps="3", push="1.0", self_collision="false")
    assert scene.params["steps"] == 3 and scene.params["self_collision"] is False
    with pytest.raises(ValueError, match="self_collision"):
        scenes.load("ragdoll", self_collision="maybe")


def test_the_gyroscope_draws_shapes_that_agree_with_its_physics():
    """The T-handle's inertia is 0.01, 0.02, 0.03 kg m^2 about x, y, z (spun about y, the
    middle one); it was drawn as a 0.6 x 0.12 x 0.3 m box, whose inertia (0.0087, 0.0375,
    0.0312) is largest about y. Now the drawn box has nearly its inertia, in the same order.
    The top's ball joint stood in mid air; now a static post reaches up to it."""
    world = scenes.load("gyroscope").world
    handle = world.body("T-handle")
    a, b, c = 2 * np.asarray(handle.shape.half_extents)
    drawn = handle.mass / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    physical = np.diag(handle.inertia)
    assert list(np.argsort(drawn)) == list(np.argsort(physical)) == [0, 1, 2]
    np.testing.assert_allclose(drawn, physical, rtol=0.01)
    post = world.body("post")
    assert post.static
    tip = np.asarray(post.position) + (0, 0, post.shape.half_length)
    pivot = world.body("top").position - 0.3 * np.array([np.sin(0.3), 0, np.cos(0.3)])
    np.testing.assert_allclose(tip, pivot, atol=1e-9)
    # the disc stands on a stem from the pivot into it (it was drawn floating 0.3 m over
    # the post), welded to it and light beside it
    top, stem = world.body("top"), world.body("stem")
    axis = np.array([np.sin(0.3), 0, np.cos(0.3)])
    ends = stem.position + np.outer([-1, 1], (stem.shape.half_length + stem.shape.radius) * axis)
    np.testing.assert_allclose(ends[0], pivot, atol=1e-9)
    assert np.dot(ends[1] - top.position, axis) > -top.shape.half_length   # into the disc
    assert stem.mass <= 0.01 * top.mass
    world.step(240)
    np.testing.assert_allclose(world.body("stem").angular_velocity, top.angular_velocity,
                               atol=1e-6)


def test_the_ragdoll_scene_leaves_room_above_the_head():
    """Its camera put the top of the head 2 px from the top edge at 1280x720 (on the edge
    at 16:10); now there is a twentieth of the picture's height or more above it."""
    from render.camera import Camera
    scene = scenes.load("ragdoll")
    head = scene.world.body("head")
    top = np.asarray(head.position) + (0, 0, head.shape.bounding_radius())
    for width, height in ((1280, 720), (1280, 800)):
        column, row = Camera.from_spec(scene.camera).project(top[None], width, height)[0]
        assert height - row > 0.05 * height, (width, height, row)     # (rows count up)
