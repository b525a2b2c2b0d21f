"""`maxcoord view` as a command: what it says where no window can open, and its options."""
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
