"""One body far away (flung off, or placed there) must not change how the rest is drawn: the
ground's grid, the shadows and the fog are fitted to what the camera looks at."""
import numpy as np
import pytest

from physics import Box, Plane, Sphere, World


def _world(far):
    world = World(dt=1 / 240)
    world.add_body(Plane())
    world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0.2))
    if far is not None:
        world.add_body(Sphere(0.1), mass=1.0, position=(far, 0, 5.0))
    return world


@pytest.mark.parametrize("far, quality", [(1e3, "full"), (1e6, "fast")])
def test_a_far_body_leaves_the_ground_grid_and_shadows_as_they_were(make_viewer, far, quality):
    images = []
    for distance in (None, far):
        v = make_viewer(_world(distance), quality=quality,
                        camera={"target": (0, 0, 0.2), "distance": 3})
        v.show_hud = False
        images.append(v.draw_frame(read=True).astype(int))
    diff = np.abs(images[0] - images[1])
    assert diff.mean() < 1.0 and np.mean(diff.max(axis=2) > 24) < 0.005, \
        (diff.mean(), np.mean(diff.max(axis=2) > 24))
