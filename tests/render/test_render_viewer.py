"""The viewer in a real window (under Xvfb) or a headless EGL surface."""
import numpy as np
import pytest

from physics import Box, World
from render.scenedata import body_color
from render_helpers import centroid, colour_mask, drop_world


def test_falling_body_moves_down_the_screen_where_projected(make_viewer):
    world = drop_world(position=(3.0, 3.0, 2.5))
    v = make_viewer(world, camera={"target": (3, 3, 1.6), "distance": 6, "yaw": -90,
                                   "pitch": 10})
    v.show_hud = False
    w, h = v.window.get_framebuffer_size()
    rgb = body_color(1)
    img0 = v.draw_frame(read=True)
    assert img0.shape == (h, w, 3)
    assert img0.std() > 5 and len(np.unique(img0.reshape(-1, 3), axis=0)) > 50, "blank frame"
    c0 = centroid(colour_mask(img0, rgb))
    p0 = v.camera.project(world.positions[1], w, h)[0]
    for _ in range(18):                       # 0.3 s of simulated time at 60 frames/s
        v.tick(1 / 60)
    assert abs(world.time - 0.3) < 1e-9
    img1 = v.draw_frame(read=True)
    c1 = centroid(colour_mask(img1, rgb))
    p1 = v.camera.project(world.positions[1], w, h)[0]
    # projected centres, in image coordinates (row 0 at the top)
    q0, q1 = np.array([p0[0], h - p0[1]]), np.array([p1[0], h - p1[1]])
    assert np.linalg.norm(c0 - q0) < 4 and np.linalg.norm(c1 - q1) < 4, (c0, q0, c1, q1)
    moved, expected = c1 - c0, q1 - q0
    assert expected[1] > 10                   # the body falls down the screen...
    assert moved[1] > 0.8 * expected[1] and abs(moved[0]) < 3   # ...and its pixels follow


def test_pause_single_step_and_reset(make_viewer, key):
    world = drop_world()
    v = make_viewer(world)
    start = world.get_state()
    v.tick(0.1)
    assert world.time > 0
    v.on_key_press(key.SPACE, 0)
    assert v.sim.paused
    t = world.time
    for _ in range(10):
        v.tick(1 / 60)
    assert world.time == t, "paused clock must not move"
    v.on_key_press(key.PERIOD, 0)
    assert world.time == pytest.approx(t + world.dt, abs=1e-12)
    assert v.sim.paused
    v.on_key_press(key.SPACE, 0)
    assert not v.sim.paused
    v.tick(0.05)
    v.on_key_press(key.R, 0)
    now = world.get_state()
    assert now["time"] == start["time"]
    for name in ("x", "q", "v", "w"):
        np.testing.assert_array_equal(now[name], start[name])
    scale = v.sim.time_scale
    v.on_key_press(key.PLUS, 0)
    assert v.sim.time_scale == 2 * scale
    v.on_key_press(key.MINUS, 0)
    v.on_key_press(key.MINUS, 0)
    assert v.sim.time_scale == scale / 2


def test_help_lists_every_binding_and_only_bound_keys_are_handled(make_viewer, key, tmp_path):
    from render.viewer import KEY_BINDINGS, help_text
    v = make_viewer(drop_world(), scenes=[drop_world, drop_world], size=(800, 600))
    text = v.help_text_shown()
    assert text == help_text()
    listed = []
    section = None
    for line in text.splitlines():
        if line in ("Keys", "Mouse"):
            section = line
        elif section == "Keys" and line.strip():
            listed.append(line.split()[0])
    assert listed == [b.label for b in KEY_BINDINGS], "help overlay and key table differ"
    for b in KEY_BINDINGS:
        assert callable(getattr(v, b.action)), b.action
        assert b.help in text
    v.on_key_press(key.H, 0)
    assert v.show_help
    img = v.draw_frame(read=True)             # the overlay draws
    assert img.std() > 5
    for b in KEY_BINDINGS:
        if b.action == "quit":
            continue
        for sym in b.symbols:
            assert v.on_key_press(sym, 0), f"{key.symbol_string(sym)} not handled"
    assert v.on_key_press(key.K, 0) is None   # unbound keys fall through
    assert list(tmp_path.glob("*.png")), "S wrote no screenshot"
    v.on_key_press(key.ESCAPE, 0)
    assert v.window.context is None or v.window.has_exit


def test_a_screenshot_is_named_on_the_hud_for_a_few_seconds(make_viewer, key, monkeypatch):
    """S printed the screenshot's path on stdout only, and nothing in the window said it had
    worked (a viewer explorer's finding); the HUD now names it for SCREENSHOT_NOTICE s."""
    import render.viewer as viewer_module
    v = make_viewer(drop_world(body="box", position=(0.0, 0.0, 0.5)))
    assert "screenshot" not in v.hud_text()
    v.on_key_press(key.S, 0)
    assert v.last_screenshot.exists()
    assert f"screenshot saved: {v.last_screenshot}" in v.hud_text()
    later = viewer_module.time.monotonic() + viewer_module.SCREENSHOT_NOTICE + 0.1
    monkeypatch.setattr(viewer_module.time, "monotonic", lambda: later)
    assert "screenshot" not in v.hud_text()


@pytest.mark.parametrize("where", ["under a file", "deleted working folder"])
def test_s_where_the_screenshot_cannot_be_written_says_so_on_the_hud(make_viewer, key, tmp_path,
                                                                     monkeypatch, capsys, where):
    """S in a working folder since deleted (the explorer's FileNotFoundError) or under a
    file raised out of the key handler and closed the viewer; the HUD and stderr now say the
    screenshot was not saved, and why, and the viewer goes on."""
    if where == "under a file":
        (tmp_path / "afile").write_text("kept")
        v = make_viewer(drop_world(), screenshot_dir=tmp_path / "afile" / "shots")
    else:
        gone = tmp_path / "gone"
        gone.mkdir()
        monkeypatch.chdir(gone)
        gone.rmdir()
        v = make_viewer(drop_world(), screenshot_dir=".")
    assert v.on_key_press(key.S, 0)
    assert v.last_screenshot is None
    hud = v.hud_text()
    error = "FileNotFoundError" if where != "under a file" else "NotADirectoryError"
    assert f"ERROR: screenshot not saved in {str(v.screenshot_dir)!r}: {error}" in hud
    assert "(view --screenshot-dir DIR saves elsewhere)" in hud
    assert "ERROR: screenshot not saved" in capsys.readouterr().err
    v.tick(1 / 60)
    assert v.world.time > 0 and v.draw_frame(read=True).std() > 5


def test_z_turns_sleeping_on_and_off_and_the_hud_counts_the_sleepers(make_viewer, key):
    world = drop_world(body="box", position=(0.0, 0.0, 0.5))     # resting on the ground
    v = make_viewer(world)
    assert "asleep" not in v.hud_text()
    v.on_key_press(key.Z, 0)
    assert world.sleeping
    world.step(240)
    assert world.bodies[1].asleep and "asleep 1" in v.hud_text()
    assert v.draw_frame(read=True).std() > 5
    v.on_key_press(key.Z, 0)
    assert not world.sleeping and not world.bodies[1].asleep


def test_ctrl_drag_pulls_the_body_toward_the_cursor(make_viewer, mouse, key):
    world = World(gravity=(0, 0, 0), dt=1 / 240)
    body = world.add_body(Box((0.5, 0.5, 0.5)), mass=2.0, position=(0, 0, 1))
    v = make_viewer(world, camera={"target": (0, 0, 1), "distance": 6, "yaw": -90, "pitch": 0})
    w, h = v.window.get_size()
    x, y = v.camera.project(body.position, w, h)[0]
    v.on_mouse_press(x, y, mouse.LEFT, key.MOD_CTRL)
    assert v.selected == 0 and v.sim.drag is not None
    v.on_mouse_drag(x + 60, y + 20, 60, 20, mouse.LEFT, key.MOD_CTRL)
    target = v.sim.drag.target.copy()
    assert target[0] > 0.5 and target[2] > 1.1
    img = v.draw_frame(read=True)             # drag line overlay draws
    assert img.std() > 5
    for _ in range(60):
        v.tick(1 / 60)
    grab = v.sim.drag.grab_point_world()
    assert np.linalg.norm(grab - target) < 0.25 * np.linalg.norm(target - (0, -0.5, 1))
    assert body.position[0] > 0.4 and body.position[2] > 1.1
    v.on_mouse_release(x + 60, y + 20, mouse.LEFT, key.MOD_CTRL)
    assert v.sim.drag is None
    # plain left drag orbits instead of picking
    yaw = v.camera.yaw
    v.on_mouse_drag(10, 10, 20, 0, mouse.LEFT, 0)
    assert v.camera.yaw != yaw
    v.on_mouse_scroll(0, 0, 0, 1)


def test_scene_switching_and_slow_scene_warning(make_viewer, key):
    made = []

    def scene_a():
        made.append("a")
        return drop_world()

    def scene_b():
        made.append("b")
        return (World(), "empty scene", {"distance": 3}, None)

    v = make_viewer(None, scenes=[scene_a, scene_b])
    assert made == ["a"]
    v.on_key_press(key.N, 0)
    assert v.title == "empty scene" and len(v.world.bodies) == 0
    v.draw_frame()
    v.on_key_press(key.P, 0)
    assert made == ["a", "b", "a"] and len(v.world.bodies) == 2
    v.sim.max_steps_per_frame = 1
    for _ in range(5):
        v.tick(0.1)
    assert "SLOWER THAN REAL TIME" in v.hud_text()


def test_follow_selected_body_and_frame(make_viewer, mouse, key):
    world = drop_world(position=(1.0, 2.0, 3.0))
    v = make_viewer(world, camera={"target": (1, 2, 2), "distance": 8, "yaw": -90, "pitch": 5})
    w, h = v.window.get_size()
    x, y = v.camera.project(world.positions[1], w, h)[0]
    v.on_mouse_press(x, y, mouse.LEFT, key.MOD_CTRL)
    v.on_mouse_release(x, y, mouse.LEFT, key.MOD_CTRL)
    assert v.selected == 1 and v.sim.drag is None
    v.on_key_press(key.T, 0)
    assert v.follow
    for _ in range(6):
        v.tick(1 / 60)
    np.testing.assert_allclose(v.camera.target, world.positions[1])
    v.on_key_press(key.F, 0)
    assert not v.follow
    v.on_mouse_press(1, 1, mouse.LEFT, key.MOD_CTRL)     # empty sky: deselects
    assert v.selected is None


def test_run_loop_advances_in_real_time(make_viewer):
    from render.backend import load_pyglet
    pyglet = load_pyglet()
    world = drop_world()
    v = make_viewer(world)
    pyglet.clock.schedule_once(lambda dt: v.quit(), 0.5)
    v.run()
    assert 0.05 < world.time < 1.0
    assert v.window.context is None
    # and a window made after the loop works: pyglet's loop left its windows' event queue off,
    # and a headless window then dispatched its first resize from its constructor, before
    # its projection was made ('HeadlessWindow' object has no attribute 'ubo')
    assert pyglet.window.Window._enable_event_queue
    again = make_viewer(drop_world())
    again.draw_frame()


def test_the_hud_time_is_the_time_of_the_state_drawn(make_viewer):
    world = drop_world()
    v = make_viewer(world)
    for _ in range(10):
        v.tick(1 / 60)
        v.draw_frame()
        assert f"t {world.time:9.3f} s" in v.hud_label.text, (world.time, v.hud_label.text)


def test_the_hud_fits_a_small_window(make_viewer):
    """At 480x270 the 10 pt HUD (seven lines with the slow warning) was 135 px high, half
    the view; it now takes a smaller font there, at most 40 % of the height, and keeps
    10 pt where there is room."""
    heights = {}
    for size in ((480, 270), (1280, 720)):
        v = make_viewer(drop_world(), size=size)
        v.sim.time_scale = 0.25
        v.sim.realtime_factor = 0.12
        v._update_hud(force=True)
        assert len(v.hud_label.text.splitlines()) == 7
        heights[size] = (v.hud_label.font_size, v.hud_bg.height)
    font, height = heights[(480, 270)]
    assert font < 10 and height <= 0.4 * 270, heights
    assert heights[(1280, 720)][0] == 10, heights


def test_reset_runs_a_scene_with_a_stateful_controller_again(make_viewer, key):
    import scenes
    v = make_viewer(scenes.load("box_pyramid", base=3, shot_time=0.1))
    v.sim.max_steps_per_frame = 10 ** 6
    v.sim.frame_budget = 1e9
    for _ in range(6):                      # 0.3 s; the ball is shot at 8 m/s at 0.1 s
        v.tick(0.05)
    shot = v.world.body("ball").linear_velocity[0]
    assert shot > 5.0
    v.camera.distance *= 1.5                # the user's view, and a pause: R keeps them
    view = v.camera.distance
    v.on_key_press(key.SPACE, 0)
    v.on_key_press(key.R, 0)
    assert v.world.time == 0.0 and v.sim.paused and v.camera.distance == view
    v.on_key_press(key.SPACE, 0)
    for _ in range(6):
        v.tick(0.05)
    # (before: the controller remembered it had shot: the ball lay still after R, 0 m/s)
    assert v.world.body("ball").linear_velocity[0] == shot
    assert v.geometry.world is v.world


@pytest.mark.parametrize("size", [(1280, 720), (800, 450), (400, 300)])
def test_the_help_is_fitted_with_one_layout_of_its_text(make_viewer, size):
    from render.viewer import help_text
    v = make_viewer(drop_world(), size=size)
    layouts = []
    set_columns = v._set_help_columns
    v._set_help_columns = lambda *a, **k: layouts.append(a) or set_columns(*a, **k)
    v.toggle_help()
    v.draw_frame()
    # (before: one layout of the whole help per font size and column count tried, and one
    # per line dropped where none fits: 3 at 1280x720, 14 at 800x450, 37 at 400x300)
    assert len(layouts) == 1
    # the arithmetic the fit uses is what the labels measure
    for playback in (False, True):
        lines = help_text(playback).split("\n")
        for font in v.HELP_FONT_SIZES:
            for columns, wrap in ((1, 4000), (2, 180), (1, 250)):
                parts = v._help_parts(lines, columns, font, wrap)
                assert v._help_extent(parts, font) == set_columns(lines, columns, font, wrap)
