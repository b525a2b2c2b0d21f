"""The viewer's camera: a scene without a camera is framed with the ground its bodies fall
to, V returns to the start view, I hides the HUD."""
import numpy as np
import pytest

from render_helpers import drop_world


@pytest.fixture
def key(gl_mode):
    from render.backend import load_pyglet
    return load_pyglet().window.key


def _on_screen(v, point, margin=0.02):
    w, h = v.window.get_size()
    x, y = v.camera.project(np.asarray(point, float), w, h)[0]
    return margin * w <= x <= (1 - margin) * w and margin * h <= y <= (1 - margin) * h


def test_a_scene_without_a_camera_keeps_a_falling_body_in_view(make_viewer):
    world = drop_world(position=(0.0, 0.0, 2.0))         # a 0.4 m sphere, 1.6 m above ground
    v = make_viewer(world)
    assert _on_screen(v, world.positions[1] + (0, 0, 0.4))
    assert _on_screen(v, (0.0, 0.0, 0.0)), "the ground it lands on is out of view"
    while world.time < 1.0:
        v.tick(1 / 60)
    assert world.positions[1][2] < 0.5 and _on_screen(v, world.positions[1])


def test_v_returns_the_camera_to_the_start_view_and_i_hides_the_hud(make_viewer, key):
    v = make_viewer(drop_world(), camera={"target": (0, 0, 1), "distance": 6, "yaw": -90,
                                          "pitch": 10})
    start = v.camera.spec()
    v.camera.orbit(40, 20)
    v.camera.zoom(0.3)
    v.camera.pan(30, 10, 240)
    assert v.camera.spec() != start
    assert v.on_key_press(key.V, 0)
    assert v.camera.spec() == start
    assert v.show_hud
    v.on_key_press(key.I, 0)
    assert not v.show_hud
    v.draw_frame()
    v.on_key_press(key.I, 0)
    assert v.show_hud


@pytest.mark.parametrize("size", [(500, 300), (200, 150)])
def test_the_help_overlay_fits_the_window_or_says_to_enlarge_it(make_viewer, key, size):
    from render.viewer import help_text
    v = make_viewer(drop_world(), size=size)
    v.on_key_press(key.H, 0)
    w, h = v.window.get_size()
    shown = [lab for lab in (v.help_label, v.help_label2) if lab.visible]
    for lab in shown:
        assert lab.x >= 0 and lab.x + lab.content_width <= w
        assert lab.y <= h and lab.y - lab.content_height >= 0
    if size == (500, 300):               # all of it, in two columns with long lines wrapped
        assert " ".join(v.help_text_shown().split()) == " ".join(help_text().split())
    else:
        assert v.help_text_shown().splitlines()[-1].startswith("... enlarge the window")
    v.draw_frame()
