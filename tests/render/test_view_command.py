"""`maxcoord view` as a command: what it says where no window can open, and its options."""
import numpy as np
import pytest

from tools.cli import main


@pytest.mark.parametrize("env, reason", [
    ({"DISPLAY": None, "WAYLAND_DISPLAY": None}, "DISPLAY is not set"),
    ({"DISPLAY": ":31999"}, "cannot connect to the X display DISPLAY=:31999"),
    ({"MAXCOORD_HEADLESS": "1"}, "MAXCOORD_HEADLESS is set"),
])
def test_view_without_a_display_is_one_line_and_exit_code_2(env, reason, monkeypatch, capsys):
    monkeypatch.delenv("PYGLET_HEADLESS", raising=False)
    monkeypatch.delenv("MAXCOORD_HEADLESS", raising=False)
    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert main(["view", "pendulum"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and reason in err, err
    assert "maxcoord render SCENE --out clip.gif" in err and "xvfb-run" in err


def test_n_and_p_continue_from_the_scene_opened(make_viewer, gl_mode):
    import scenes
    from render.backend import load_pyglet
    from tools import load_scene
    key = load_pyglet().window.key
    names = scenes.names()
    k = names.index("pendulum")
    v = make_viewer(load_scene("pendulum"), scenes=names, load_scene=load_scene)
    assert f"scene {k + 1}/{len(names)}" in v.hud_text()
    v.on_key_press(key.N, 0)
    assert v.spec.source.name == names[(k + 1) % len(names)]
    assert f"scene {(k + 1) % len(names) + 1}/{len(names)}" in v.hud_text()
    v.on_key_press(key.P, 0)
    v.on_key_press(key.P, 0)
    assert v.spec.source.name == names[k - 1]


def test_view_takes_size_paused_and_time_scale(monkeypatch, capsys):
    import render.commands
    seen = {}
    monkeypatch.setattr(render.commands, "view_command",
                        lambda target, **opts: seen.update(opts) or 0)
    assert main(["view", "pendulum", "--size", "500x300", "--paused", "--time-scale", "0.5"]) == 0
    assert seen["size"] == (500, 300) and seen["paused"] is True and seen["time_scale"] == 0.5
    assert main(["view", "pendulum"]) == 0
    assert seen["size"] == (1280, 720) and seen["paused"] is False and seen["time_scale"] == 1.0
    for bad in (["--size", "500"], ["--time-scale", "0"]):
        capsys.readouterr()
        assert main(["view", "pendulum", *bad]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_the_hud_says_paused_instead_of_the_last_real_time_factor(make_viewer):
    from render_helpers import drop_world
    v = make_viewer(drop_world())
    v.sim.realtime_factor = 0.61
    assert "real time x0.61" in v.hud_text()
    v.toggle_pause()
    assert "real time: paused" in v.hud_text() and "x0.61" not in v.hud_text()


def test_the_slow_warning_gives_the_same_real_time_factor_as_the_line_above(make_viewer):
    """At --time-scale 1/4 the HUD said "real time x0.12" and then "SLOWER THAN REAL TIME
    (x0.48)", the share of the asked speed, which reads as a second real time factor. Now
    the warning repeats the factor and says what was asked."""
    from render_helpers import drop_world
    v = make_viewer(drop_world())
    v.sim.time_scale = 0.25
    v.sim.realtime_factor = 0.12
    lines = v.hud_text().splitlines()
    assert "real time x0.12" in lines[2]
    assert "SLOWER THAN ASKED (real time x0.12, asked x0.25)" in lines
    v.sim.time_scale = 1.0
    v.sim.realtime_factor = 0.48
    assert "SLOWER THAN REAL TIME (real time x0.48)" in v.hud_text().splitlines()


def test_n_then_p_brings_back_the_scene_opened_with_its_params_pause_and_time_scale(
        make_viewer, gl_mode):
    """`view pendulum --param length=0.3 --param angle=0 --paused`, then N and P: the pendulum
    comes back as it was opened (the short rod hanging still, from its start), and every scene
    shown keeps the pause and time scale the user set, as R keeps them."""
    import scenes
    from render.backend import load_pyglet
    from tools import load_scene, load_scene_with
    key = load_pyglet().window.key
    names = scenes.names()
    v = make_viewer(load_scene_with("pendulum", {"length": "0.3", "angle": "0"}),
                    scenes=names, load_scene=load_scene)
    start = v.world.get_state()
    rod = v.world.bodies[1]
    assert rod.shape.half_extents[2] == pytest.approx(0.15)
    v.on_key_press(key.PLUS, 0)
    v.tick(0.1)                                  # runs a little, so the state has moved on
    assert v.world.time > 0
    v.on_key_press(key.SPACE, 0)                 # then the user pauses
    v.on_key_press(key.N, 0)
    other = v.spec.source
    assert other.name != "pendulum"
    assert other.params == scenes.describe(other.name)["params"], "not the other's defaults"
    assert v.sim.paused and v.sim.time_scale == 2.0
    v.on_key_press(key.P, 0)
    assert v.spec.source.name == "pendulum" and v.spec.source.params["length"] == 0.3
    rod = v.world.bodies[1]
    assert rod.shape.half_extents[2] == pytest.approx(0.15), "the default 1 m rod came back"
    now = v.world.get_state()
    assert now["time"] == start["time"] == 0.0
    for name in ("x", "q", "v", "w"):
        np.testing.assert_array_equal(now[name], start[name])
    assert v.sim.paused and v.sim.time_scale == 2.0
    v.tick(0.1)
    assert v.world.time == 0.0, "paused, yet it ran"
    v.on_key_press(key.SPACE, 0)                 # running now: the next scene runs too
    v.on_key_press(key.N, 0)
    assert not v.sim.paused
    v.tick(0.05)
    assert v.world.time > 0


def test_a_scene_switch_does_not_keep_a_pause_forced_by_an_error(make_viewer, key_symbols):
    from render_helpers import drop_world

    def broken(world):
        raise RuntimeError("controller bug")

    v = make_viewer(None, scenes=[lambda: (drop_world(), "broken", None, broken), drop_world])
    v.tick(0.05)
    assert v.sim.paused and "controller bug" in v.sim.error
    v.on_key_press(key_symbols.N, 0)
    assert not v.sim.paused and v.sim.error is None
    v.tick(0.05)
    assert v.world.time > 0


@pytest.fixture
def key_symbols(gl_mode):
    from render.backend import load_pyglet
    return load_pyglet().window.key


def test_view_takes_a_screenshot_dir_and_refuses_one_it_cannot_make(monkeypatch, capsys,
                                                                    tmp_path):
    import render.commands
    seen = {}
    monkeypatch.setattr(render.commands, "view_command",
                        lambda target, **opts: seen.update(opts) or 0)
    shots = tmp_path / "shots"
    assert main(["view", "pendulum", "--screenshot-dir", str(shots)]) == 0
    assert seen["screenshot_dir"] == str(shots) and not shots.exists()   # (made at S)
    (tmp_path / "afile").write_text("kept")
    capsys.readouterr()
    assert main(["view", "pendulum", "--screenshot-dir", str(tmp_path / "afile")]) == 2
    assert capsys.readouterr().err == (
        f"maxcoord: error: --screenshot-dir: {str(tmp_path / 'afile')!r} is a file, not a "
        "folder for what it saves; give another name\n")

