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
        # (the last line, wrapped under itself where the window is narrower than it)
        assert " ".join(v.help_text_shown().split()).endswith(
            "... enlarge the window to see the rest (H closes)")
    v.draw_frame()


def _unwrapped_height(lab) -> int:
    """The height of ``lab``'s text laid out with no wrapping at all."""
    from render.backend import load_pyglet
    pyglet = load_pyglet()
    clone = pyglet.text.Label(lab.text, font_name=lab.font_name, font_size=lab.font_size,
                              multiline=True, width=100000)
    return clone.content_height


@pytest.mark.parametrize("size", [(1280, 720), (800, 450)])
def test_the_help_leaves_the_hud_uncovered_where_there_is_room(make_viewer, key, size,
                                                               tmp_path):
    """The help box was centred on the window and covered the HUD's lower lines ("screenshot
    saved: ..."): at 1280x720 its top 51 px lay under the HUD's box. Now it goes beside the HUD
    (1280x720: 11 pt, one column) or below it (800x450: two columns)."""
    v = make_viewer(drop_world(), size=size, screenshot_dir=tmp_path / "a_folder_with_a_name")
    v.on_key_press(key.S, 0)
    v.on_key_press(key.H, 0)
    hud, helpbox = v.hud_bg, v.help_bg
    apart_x = helpbox.x >= hud.x + hud.width or hud.x >= helpbox.x + helpbox.width
    apart_y = helpbox.y + helpbox.height <= hud.y or hud.y + hud.height <= helpbox.y
    assert apart_x or apart_y, ((hud.x, hud.y, hud.width, hud.height),
                                (helpbox.x, helpbox.y, helpbox.width, helpbox.height))
    w, h = v.window.get_size()
    assert helpbox.x >= 0 and helpbox.x + helpbox.width <= w and helpbox.y >= 0
    assert v.help_label.font_size >= 9
    img = v.draw_frame(read=True)
    assert img.std() > 5


@pytest.mark.parametrize("size", [(480, 270), (800, 450)])
def test_wrapped_help_lines_continue_under_their_description(make_viewer, key, size):
    """In two columns the help's long lines wrap. pyglet wrapped them at the label's edge,
    so "(still islands sleep; drawn paler)" went on at the left, under the keys; the help
    now wraps them itself, each under its own description, and pyglet wraps nothing."""
    from render.viewer import help_text
    v = make_viewer(drop_world(), size=size)
    v.on_key_press(key.H, 0)
    shown = [lab for lab in (v.help_label, v.help_label2) if lab.visible]
    assert len(shown) == 2
    for lab in shown:
        assert lab.content_height == _unwrapped_height(lab)
    starts = tuple(line for line in help_text().splitlines() if line.strip())
    continued = [line for line in v.help_text_shown().splitlines()
                 if line.strip() and not any(s.startswith(line.rstrip()) for s in starts)]
    assert continued, "nothing wrapped: the test shows nothing"
    assert all(line.startswith(" " * 6) for line in continued), continued


def test_the_hud_wraps_no_line_the_window_has_room_for(make_viewer, key, tmp_path):
    """The HUD's text was laid out 420 px wide whatever the window: a screenshot's path or a
    long body name wrapped onto a second line in a 1280 px window. Now it wraps only at the
    window's width."""
    folder = tmp_path / "shots"
    v = make_viewer(drop_world(), size=(1280, 720), screenshot_dir=folder)
    v.on_key_press(key.S, 0)
    v._update_hud(force=True)
    assert 80 < len(f"screenshot saved: {v.last_screenshot}") < 150, v.last_screenshot
    assert v.hud_label.content_width > 420
    assert v.hud_label.content_height == _unwrapped_height(v.hud_label)


@pytest.fixture
def mouse(gl_mode):
    from render.backend import load_pyglet
    return load_pyglet().window.mouse


def test_the_mouse_keeps_the_eye_above_the_ground_and_the_camera_near_the_scene(make_viewer,
                                                                               mouse):
    """An orbit drag to a negative pitch put the eye under the ground plane (the whole view
    its underside), a pan took the target to z = -17 m, and the wheel zoomed from 1 mm (inside
    the bodies) to 1e6 m. Now: the eye stays a little above the ground (a quarter of the least
    distance), the target within the scene's radius S of the bodies and above the ground, the
    distance from a median body's radius (the 0.4 m sphere's) to 50 S."""
    world = drop_world(position=(0.0, 0.0, 1.0))      # the 0.4 m sphere, 0.6 m over the ground
    v = make_viewer(world, camera={"target": (0, 0, 1), "distance": 6, "yaw": -90,
                                   "pitch": 10})
    _, radius = v.geometry.bounding_sphere()
    for _ in range(40):                               # up the screen: the eye goes down
        v.on_mouse_drag(160, 120, 0, 20, mouse.LEFT, 0)
    assert v.camera.eye[2] >= 0.1 - 1e-9 and v.camera.pitch < 0     # (was -2.8 m)
    np.testing.assert_allclose(v.camera.eye[2], 0.25 * 0.4)          # pitch held there
    assert v.draw_frame(read=True).std() > 5
    for _ in range(100):
        v.on_mouse_scroll(160, 120, 0, 1)
    assert v.camera.distance == pytest.approx(0.4)                  # (was 1 mm)
    assert v.camera.eye[2] >= 0.1 - 1e-9
    for _ in range(400):
        v.on_mouse_scroll(160, 120, 0, -1)
    assert v.camera.distance == pytest.approx(50 * radius)          # (was 1e6 m)
    assert v.camera.eye[2] >= 0.1 - 1e-9                            # (zooming out lowers it)
    for _ in range(40):                               # the scene pulled up: the target sinks
        v.on_mouse_drag(160, 120, 0, 200, mouse.RIGHT, 0)
    assert v.camera.target[2] >= 0.0 and v.camera.eye[2] >= 0.1 - 1e-9
    for _ in range(40):
        v.on_mouse_drag(160, 120, 300, 0, mouse.RIGHT, 0)
    lo, hi = v.geometry.bounds()
    assert np.all(v.camera.target >= lo - radius - 1e-9)
    assert np.all(v.camera.target <= hi + radius + 1e-9)


def test_without_a_ground_the_eye_may_go_under_the_bodies(make_viewer, mouse):
    """A scene with no ground plane (its grid is only a reference) keeps its full pitch."""
    from physics import Sphere, World
    world = World(gravity=(0, 0, 0))
    world.add_body(Sphere(0.3), mass=1.0, position=(0, 0, 1))
    v = make_viewer(world, camera={"target": (0, 0, 1), "distance": 4, "yaw": -90,
                                   "pitch": 10})
    for _ in range(60):
        v.on_mouse_drag(160, 120, 0, 20, mouse.LEFT, 0)
    assert v.camera.pitch == -89.0
