"""Choosing pyglet's platform (a real window or headless EGL) and making GL contexts.

pyglet decides between a real window and headless EGL when ``pyglet.window``/``pyglet.gl`` is
first imported (importing ``pyglet.window`` with no X display and headless mode off raises
``NoSuchDisplayException`` because of pyglet's hidden shadow window). Everything in ``render``
that needs OpenGL goes through :func:`load_pyglet`, which picks headless mode when there is no
display (DISPLAY unset, or naming an X server that cannot be reached), before that first
import.

Override with the environment: ``MAXCOORD_HEADLESS=1`` forces headless EGL, ``=0`` forces a
windowing system.
"""
from __future__ import annotations

import os
import sys


def want_headless() -> bool:
    """True when OpenGL should come from headless EGL (no display to open a window on)."""
    forced = os.environ.get("MAXCOORD_HEADLESS", "").strip().lower()
    if forced in ("1", "true", "yes", "on"):
        return True
    if forced in ("0", "false", "no", "off"):
        return False
    if os.environ.get("PYGLET_HEADLESS", "").strip().lower() in ("1", "true", "yes", "on"):
        return True
    if sys.platform.startswith(("win", "cygwin", "darwin")):
        return False
    display = os.environ.get("DISPLAY", "")
    if display:
        # a DISPLAY left pointing at no X server (a dropped ssh -X session): offscreen work
        # needs no window, and EGL needs no X server, where pyglet would raise
        # NoSuchDisplayException from its shadow window (the viewer refuses it first, in
        # require_window)
        return _x_display_opens(display) is False
    return not os.environ.get("WAYLAND_DISPLAY")


def forced_quality() -> str | None:
    """The render quality ``MAXCOORD_RENDER_QUALITY`` forces ("fast" or "full"), or None
    (unset or "auto"); ValueError for anything else. Needs no GL context, so a command can
    check it before its work (run --png simulated the whole run first, then blamed OpenGL)."""
    forced = os.environ.get("MAXCOORD_RENDER_QUALITY", "").strip().lower()
    if forced in ("", "auto"):
        return None
    if forced not in ("fast", "full"):
        raise ValueError(f"MAXCOORD_RENDER_QUALITY must be fast, full or auto, got {forced!r}")
    return forced


class NoDisplayError(RuntimeError):
    """A window was asked for where none can be opened (no X display to connect to)."""


def _x_display_opens(name: str) -> bool | None:
    """True if Xlib can connect to display ``name``, False if it cannot, None when libX11 is
    not there to ask (then pyglet will find out for itself)."""
    import ctypes
    import ctypes.util
    path = ctypes.util.find_library("X11")
    if path is None:
        return None
    try:
        xlib = ctypes.CDLL(path)
    except OSError:
        return None
    xlib.XOpenDisplay.restype = ctypes.c_void_p
    xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    xlib.XCloseDisplay.argtypes = [ctypes.c_void_p]
    handle = xlib.XOpenDisplay(name.encode())
    if not handle:
        return False
    xlib.XCloseDisplay(handle)
    return True


def window_problem() -> str | None:
    """Why no window can be opened here (a few words for an error message), or None.

    Checked before pyglet's window module is imported, since on a machine without a display
    :func:`load_pyglet` would otherwise quietly choose headless EGL (a window nobody sees), and
    a wrong ``DISPLAY`` makes pyglet raise a long traceback."""
    forced = os.environ.get("MAXCOORD_HEADLESS", "").strip().lower()
    if forced in ("1", "true", "yes", "on"):
        return "MAXCOORD_HEADLESS is set"
    if os.environ.get("PYGLET_HEADLESS", "").strip().lower() in ("1", "true", "yes", "on"):
        return "PYGLET_HEADLESS is set"
    if sys.platform.startswith(("win", "cygwin", "darwin")):
        return None
    display = os.environ.get("DISPLAY", "")
    if not display:
        return None if os.environ.get("WAYLAND_DISPLAY") else "DISPLAY is not set"
    if _x_display_opens(display) is False:
        return f"cannot connect to the X display DISPLAY={display}"
    return None


def require_window():
    """Raise :class:`NoDisplayError` (one actionable line) when no window can be opened."""
    problem = window_problem()
    if problem is not None:
        raise NoDisplayError(f"view needs a display ({problem}); use maxcoord render SCENE "
                             "--out clip.gif, or run under xvfb-run")


def load_pyglet():
    """Import pyglet with the right platform and return the module (with ``gl`` and
    ``window`` loaded). Safe to call many times."""
    import pyglet
    if "pyglet.window" not in sys.modules and "pyglet.gl" not in sys.modules:
        pyglet.options["headless"] = want_headless()
        # The debug GL checks call glGetError after every call: far too slow for us.
        pyglet.options["debug_gl"] = False
    import pyglet.gl  # noqa: F401
    import pyglet.window  # noqa: F401
    return pyglet


def is_headless() -> bool:
    import pyglet
    return bool(pyglet.options["headless"])


def gl_config(samples: int = 0):
    """An OpenGL 3.3 core config with 8-bit RGBA and a 24-bit depth buffer (asked for
    explicitly: headless EGL otherwise picks RGB565)."""
    pyglet = load_pyglet()
    kw = dict(major_version=3, minor_version=3, forward_compatible=True, double_buffer=True,
              depth_size=24, red_size=8, green_size=8, blue_size=8, alpha_size=8)
    if samples:
        kw.update(sample_buffers=1, samples=samples)
    return pyglet.gl.Config(**kw)


def make_window(width: int, height: int, *, visible: bool = True, caption: str = "maxcoord",
                resizable: bool = False, samples: int = 0, vsync: bool = False,
                window_class=None):
    """A pyglet window (a headless EGL surface when there is no display) with an OpenGL 3.3+
    core context. Tries multisampling first when ``samples`` is given, then falls back."""
    pyglet = load_pyglet()
    cls = window_class or pyglet.window.Window
    errors = []
    for s in ([samples, 0] if samples else [0]):
        try:
            return cls(width, height, caption=caption, visible=visible, resizable=resizable,
                       config=gl_config(s), vsync=vsync)
        except (pyglet.window.NoSuchConfigException, pyglet.gl.ContextException) as exc:
            errors.append(exc)
    raise RuntimeError(f"could not create an OpenGL 3.3 core context: {errors[-1]}")


def renderer_info() -> dict:
    """GL vendor/renderer/version strings of the current context and the platform mode."""
    from pyglet.gl import gl_info
    return {"renderer": gl_info.get_renderer(), "vendor": gl_info.get_vendor(),
            "gl_version": ".".join(map(str, gl_info.get_version())),
            "mode": "headless-egl" if is_headless() else "window"}
