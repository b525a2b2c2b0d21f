"""Offscreen output where DISPLAY names an X server that cannot be reached (a dropped ssh -X
session): pyglet's headless EGL mode needs no X server, so render and run --png draw anyway."""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _maxcoord(*args, cwd):
    env = {k: v for k, v in os.environ.items()
           if k not in ("WAYLAND_DISPLAY", "PYGLET_HEADLESS", "MAXCOORD_HEADLESS")}
    env["DISPLAY"] = ":31999"                      # (no X server answers there)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "tools.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_render_and_run_png_draw_headless_where_display_cannot_be_reached(tmp_path):
    """render raised pyglet's NoSuchDisplayException with a traceback, and run --png ran
    every step and then said to install libegl1 and libgl1 (installed)."""
    from PIL import Image
    done = _maxcoord("render", "pendulum", "--out", "still.png", "--seconds", "0.05",
                     "--size", "64x36", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert Image.open(tmp_path / "still.png").size == (64, 36)
    done = _maxcoord("run", "pendulum", "--seconds", "0.05", "--quiet", "--png", "end.png",
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert Image.open(tmp_path / "end.png").size == (1280, 720)


def test_view_still_refuses_an_unreachable_display_in_one_line(tmp_path):
    done = _maxcoord("view", "pendulum", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == ("maxcoord: error: view needs a display (cannot connect to the X "
                           "display DISPLAY=:31999); use maxcoord render SCENE --out clip.gif, "
                           "or run under xvfb-run\n")
