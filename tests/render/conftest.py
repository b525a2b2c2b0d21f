"""Fixtures for the render tests.

The tests run in whatever graphics the process has: a real window when DISPLAY is set (CI runs
them under ``xvfb-run -a``), else pyglet's headless EGL mode (``render.backend`` chooses before
pyglet's GL modules are imported, so the choice is consistent for the whole process). If no
OpenGL context can be had at all, the tests fail rather than skip.
"""
import os

import pytest


@pytest.fixture(scope="session")
def gl_mode():
    """'window' (a real X window, e.g. under Xvfb) or 'headless' (EGL, no display)."""
    from render.backend import is_headless, load_pyglet
    load_pyglet()
    mode = "headless" if is_headless() else "window"
    assert mode == ("window" if os.environ.get("DISPLAY") else "headless")
    return mode


@pytest.fixture
def make_viewer(gl_mode, tmp_path):
    """Factory for Viewers (a small visible window, or a headless surface); closes them."""
    from render import Viewer
    made = []

    def make(world, **kw):
        kw.setdefault("size", (320, 240))
        kw.setdefault("samples", 0)
        kw.setdefault("screenshot_dir", tmp_path)
        v = Viewer(world, **kw)
        made.append(v)
        return v

    yield make
    for v in made:
        v.close()


@pytest.fixture
def key(gl_mode):
    from render.backend import load_pyglet
    return load_pyglet().window.key


@pytest.fixture
def mouse(gl_mode):
    from render.backend import load_pyglet
    return load_pyglet().window.mouse
