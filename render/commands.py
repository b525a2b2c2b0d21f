"""Entry points for the ``maxcoord`` command line (wired up in ``tools``).

``target`` is a ``physics.World`` or a scene object with ``.world`` (and optionally
``.title``, ``.camera``, ``.controller``); resolving scene names or files is the CLI's job.
Nothing here imports OpenGL until a command runs.
"""
from __future__ import annotations


def parse_size(size) -> tuple[int, int]:
    """(w, h) pixels from a pair or a "WxH" string; ValueError unless two positive integers."""
    given = size
    if isinstance(size, str):
        parts = size.lower().replace("*", "x").split("x")
        if len(parts) != 2:
            raise ValueError(f"size must look like 1280x720, got {size!r}")
        size = parts
    refusal = f"size must be two positive integers (w, h) or 'WxH', got {given!r}"
    try:
        w, h = (int(v) for v in size)
    except (TypeError, ValueError):
        raise ValueError(refusal) from None
    if w < 1 or h < 1:
        raise ValueError(refusal)
    return w, h


def view_command(target, **opts) -> int:
    """Open the real-time viewer on ``target`` and block until the window is closed.

    Options (all optional): ``title``, ``camera`` (a camera spec, see ``render.camera``),
    ``controller``, ``scenes`` (list of names/callables for N/P) with ``load_scene``
    (name -> scene), ``size`` ((w, h) or "WxH"), ``samples`` (MSAA, default 4),
    ``screenshot_dir``, ``paused`` (start paused), ``time_scale``, ``quality``
    ("fast"/"full"; default fast on a software rasteriser, Q toggles), ``playback`` (a
    ``render.playback.Playback`` over the target's world: play a recording with a timeline
    instead of simulating). Returns 0 (a process exit code). Raises
    ``render.backend.NoDisplayError`` (one line) when there is no display to open a window on.
    """
    from .backend import NoDisplayError, require_window
    require_window()           # before pyglet's window module: it would fall back to EGL
    paused = opts.pop("paused", False)
    time_scale = opts.pop("time_scale", None)
    if "size" in opts:
        opts["size"] = parse_size(opts["size"])
    try:
        from .viewer import Viewer
        viewer = Viewer(target, **opts)
    except Exception as exc:
        # pyglet's NoSuchDisplayException (where the check above could not ask Xlib)
        if type(exc).__name__ != "NoSuchDisplayException":
            raise
        raise NoDisplayError(f"view needs a display (pyglet: {exc}); use maxcoord render "
                             "SCENE --out clip.gif, or run under xvfb-run") from None
    if paused:
        viewer.sim.paused = True
    if time_scale is not None:
        viewer.sim.time_scale = float(time_scale)
    viewer.run()
    return 0


def render_command(target, seconds: float, out, fps: float = 30, size=(1280, 720),
                   **opts) -> dict:
    """Render ``seconds`` of ``target`` offscreen to ``out`` (.png still of the final state,
    .gif, .mp4, or a folder of PNGs when ``out`` ends in '/' or has no suffix).

    Options: ``camera``, ``frame``, ``follow`` (a body's name or index), ``controller``,
    ``progress`` (stderr bar, default True), ``samples`` (MSAA, default
    ``render.offscreen.RENDER_SAMPLES``, 4), ``contacts``, ``joints``, ``shadows``, ``quality``
    ("fast"/"full"), ``playback`` (a ``render.playback.Playback``: render the recording instead
    of simulating; frame k shows k / fps after its first sample). A clip of n frames plays n /
    fps s; a GIF takes at most 50 fps. Returns a JSON-able summary ``{"out", "kind", "frames",
    "fps", "duration" (s the clip plays), "sim_time" (s), "size", "seconds_wall"}``
    (see ``render.offscreen.render_offscreen``).
    """
    from .offscreen import render_offscreen
    return render_offscreen(target, seconds=float(seconds), out=out, fps=float(fps),
                            size=parse_size(size), **opts)


def bench_render(n_bodies=(100, 1000, 5000), size=(1280, 720), frames: int = 60,
                 quality: str | None = None, samples: int | None = None) -> dict:
    """The render benchmark: ms per frame and fps for scenes of 100, 1000 and 5000 mixed
    bodies (render only, no physics), drawn as ``render`` draws them (``samples``: None for
    its multisampling, ``render.offscreen.RENDER_SAMPLES``). ``quality``: "fast", "full" or
    None (the renderer's default: fast on a software rasteriser, or
    ``MAXCOORD_RENDER_QUALITY``). JSON-able:
    ``{"size", "frames", "samples", "quality", "mode", "renderer", "results": {"100":
    {"ms_per_frame", "fps", "readback_ms"}, ...}}``."""
    from .offscreen import RENDER_SAMPLES, frame_times
    r = frame_times(tuple(n_bodies), size=parse_size(size), frames=int(frames),
                    quality=quality, samples=RENDER_SAMPLES if samples is None else samples)
    r["results"] = {str(k): v for k, v in r["results"].items()}
    return r
