"""maxcoord's viewer and offscreen renderer (pyglet 2.1, OpenGL 3.3 core).

``import render`` opens no display and imports no OpenGL: the pieces that need a GL context
(``Viewer``, ``render_offscreen``, ``render_image``, ``frame_times``) are loaded on first use,
after choosing pyglet's headless EGL mode when there is no display (see ``render.backend``).

    from render import Viewer, render_offscreen
    Viewer(world, title="drop").run()
    render_offscreen(world, seconds=2.0, out="drop.gif", fps=30, size=(640, 360))
"""
from __future__ import annotations

from .camera import Camera
from .playback import Playback, Recording, open_recording
from .sim import SceneSpec, Simulation, as_scene

_LAZY = {
    "Viewer": ("viewer", "Viewer"),
    "KEY_BINDINGS": ("viewer", "KEY_BINDINGS"),
    "render_offscreen": ("offscreen", "render_offscreen"),
    "render_image": ("offscreen", "render_image"),
    "frame_times": ("offscreen", "frame_times"),
}

__all__ = ["Camera", "Playback", "Recording", "SceneSpec", "Simulation", "as_scene",
           "open_recording", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'render' has no attribute {name!r}")
