"""A user's controller that raises: the viewer stays open and paused, the HUD names the error
and where it was raised, and the full traceback goes to stderr once."""
import pytest

from render_helpers import drop_world


@pytest.fixture
def key(gl_mode):
    from render.backend import load_pyglet
    return load_pyglet().window.key


class Faulty:
    """Raises from its step after ``after`` seconds and from both key hooks."""

    def __init__(self, after=0.05):
        self.after = after

    def __call__(self, world):
        if world.time > self.after:
            return {}["no such key"]

    def on_key_press(self, symbol, modifiers):
        raise RuntimeError("controller key press bug")

    def on_key_release(self, symbol, modifiers):
        raise RuntimeError("controller key release bug")


def test_a_failing_controller_step_pauses_with_file_and_line(make_viewer, capsys):
    v = make_viewer(drop_world(), controller=Faulty())
    for _ in range(12):
        v.tick(1 / 60)
    assert v.sim.paused and v.window.context is not None
    hud = v.hud_text()
    assert "KeyError: 'no such key'" in hud and "test_viewer_controller_errors.py:" in hud, hud
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and 'return {}["no such key"]' in err
    v.sim.toggle_pause()                 # resuming into the same failure: not printed again
    v.tick(1 / 60)
    assert v.sim.paused and "Traceback" not in capsys.readouterr().err


def test_a_failing_key_hook_pauses_instead_of_closing_the_viewer(make_viewer, key, capsys):
    v = make_viewer(drop_world(), controller=Faulty(after=1e9))
    for hook, text in ((v.on_key_press, "key press bug"), (v.on_key_release, "release bug")):
        v.sim.paused = False
        v.sim.error = None
        assert hook(key.K, 0)                           # handled, no exception escapes
        assert v.sim.paused and v.window.context is not None
        assert text in v.hud_text() and "controller on_key_" in v.hud_text()
        assert text in capsys.readouterr().err
    v.draw_frame()


def test_r_after_an_error_runs_again_but_keeps_the_users_own_pause(make_viewer, key, capsys):
    """The pause a failing step forced is not the user's (N / P already drop it): R ran the
    scene from its start still paused, where the user's own pause stays as R keeps it."""
    v = make_viewer(drop_world(), controller=Faulty(after=0.05))
    for _ in range(12):
        v.tick(1 / 60)
    assert v.sim.paused and v.sim.error is not None
    v.on_key_press(key.R, 0)
    assert not v.sim.paused and v.sim.error is None and v.world.time == 0.0
    v.tick(1 / 60)
    assert v.world.time > 0
    v.on_key_press(key.SPACE, 0)                    # the user's pause
    v.on_key_press(key.R, 0)
    assert v.sim.paused and v.world.time == 0.0
    capsys.readouterr()
