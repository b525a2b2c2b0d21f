"""Rendering without a visible window: stills, clips and the render benchmark.

With no display (``DISPLAY`` unset, or naming an X server that cannot be reached) OpenGL
comes from pyglet's headless EGL mode, otherwise from a hidden window; either way frames are
drawn into an offscreen framebuffer of the requested size and read back.
"""
from __future__ import annotations

import math
import sys
import time

import numpy as np

from .backend import load_pyglet, make_window, renderer_info
from .camera import Camera
from .commands import parse_size
from .imagefiles import (FolderWriter, GifWriter, Mp4Writer, check_gif_fps, check_output,
                         write_png)
from .scenedata import WorldGeometry, initial_camera
from .sim import Simulation, as_scene

_CONTEXT = {}
# the multisampling (samples per pixel) render draws with; the render benchmark measures the
# same, since on a software rasteriser 4x costs about twice the fill work of none
RENDER_SAMPLES = 4


class OffscreenRenderer:
    """A GL context (hidden window or headless surface) with a Renderer and a render target of
    a given size. ``render(world_geometry, camera)`` returns an (h, w, 3) uint8 image.
    ``quality``: "fast", "full" or None (see ``renderer.default_quality``)."""

    def __init__(self, size=(1280, 720), samples: int = 4, quality: str | None = None):
        load_pyglet()
        from .renderer import Renderer
        self.window = _shared_window()
        self.window.switch_to()
        from .renderer import resolve_quality
        self.renderer = _CONTEXT.get("renderer")
        if self.renderer is None:
            self.renderer = _CONTEXT["renderer"] = Renderer()
        self.quality = resolve_quality(quality)
        self.size = parse_size(size)
        from .renderer import RenderTarget
        self.target = RenderTarget(*self.size, samples=samples)

    def draw(self, geometry, camera, options=None):
        self.window.switch_to()
        self.target.bind()
        self.renderer.quality = self.quality          # the renderer is shared
        self.renderer.draw(geometry, camera, *self.size, options, target_fbo=self.target.fbo)

    def render(self, geometry, camera, options=None) -> np.ndarray:
        self.draw(geometry, camera, options)
        return self.target.read()

    def finish(self):
        load_pyglet().gl.glFinish()

    def close(self):
        self.window.switch_to()
        self.target.delete()


def _shared_window():
    """One small hidden window (or headless surface) per process that owns the GL context."""
    w = _CONTEXT.get("window")
    if w is None:
        w = _CONTEXT["window"] = make_window(64, 64, visible=False, caption="maxcoord offscreen")
    return w


# how much of the picture a followed body takes: its bounding sphere is framed this many
# times over, leaving room for what is around it (the car with the cones ahead of it)
FOLLOW_ROOM = 3.0


def followed_body(world, body: int | str | None) -> int | None:
    """The index of the body to follow (None for None): ``body`` is its index in
    ``world.bodies`` or its name; ValueError naming what there is where none is."""
    if body is None:
        return None
    if isinstance(body, (int, np.integer)) and not isinstance(body, bool):
        if not 0 <= body < len(world.bodies):
            raise ValueError(f"follow: body index must be from 0 to {len(world.bodies) - 1}, "
                             f"got {body}")
        return int(body)
    return world.body(body).index


def aim_at_followed(camera: Camera, geometry, index: int, aspect: float):
    """Point ``camera`` (its angles kept) at body ``index``, close enough that the body's
    bounding sphere takes about 1 / FOLLOW_ROOM of the picture's height."""
    geometry.refresh()
    radius = geometry.radius[index] if geometry.has_shape[index] else 0.5
    camera.frame_spheres(geometry.world.positions[index], FOLLOW_ROOM * radius, aspect)


class _Progress:
    def __init__(self, total: int, enabled: bool, label: str):
        self.total, self.enabled, self.label = total, enabled, label
        self.start = time.perf_counter()

    def update(self, done: int, sim_time: float):
        if not self.enabled:
            return
        if not sys.stderr.isatty():         # (a pipe or a file: a line per quarter, no \r)
            if done == self.total or 4 * done // max(self.total, 1) > 4 * (done - 1) // max(
                    self.total, 1):
                sys.stderr.write(f"{self.label}: {done}/{self.total} frames, t={sim_time:.2f} s\n")
            return
        width = 30
        fill = int(width * done / max(self.total, 1))
        rate = done / max(time.perf_counter() - self.start, 1e-9)
        sys.stderr.write(f"\r{self.label} [{'#' * fill}{'.' * (width - fill)}] {done}/{self.total}"
                         f" frames  t={sim_time:.2f} s  {rate:.1f} frames/s ")
        sys.stderr.flush()

    def close(self):
        if self.enabled and sys.stderr.isatty():
            sys.stderr.write("\n")
            sys.stderr.flush()


class RenderStopped(Exception):
    """The simulation failed part-way through a render (a step, or the scene's controller):
    ``error`` is what failed, ``in_controller`` whether the controller raised it (not the
    world's step), ``done`` what ``render_offscreen`` wrote up to there (a still of the
    state reached, or the frames before it), in the dict it returns."""

    def __init__(self, error: Exception, done: dict, in_controller: bool = False):
        super().__init__(f"{type(error).__name__}: {error}")
        self.error, self.done, self.in_controller = error, done, in_controller


def render_offscreen(world, *, seconds: float, out, fps: float = 30, size=(1280, 720),
                     camera=None, controller=None, progress: bool = True,
                     samples: int = RENDER_SAMPLES,
                     contacts: bool = False, joints: bool = False, shadows: bool = True,
                     quality: str | None = None, playback=None, frame: bool = False,
                     follow: int | str | None = None) -> dict:
    """Simulate ``world`` (a World or a scene object with ``.world``) for ``seconds`` and
    write what it looks like to ``out``:

    - ``*.png``: a still of the state after ``seconds`` (0 for the initial state);
    - ``*.gif`` / ``*.mp4``: a clip of n = ``round(seconds * fps)`` frames (at least 1),
      frame k showing the state at ``k / fps`` after the start and shown for 1 / fps, so the
      clip plays n / fps s (``seconds`` to the nearest whole frame); the world is then
      simulated through the last frame's 1 / fps, to n / fps. A GIF takes at most 50 fps
      (its delays are whole centiseconds; they follow the clock, e.g. 3, 4, 3 cs at 30 fps);
    - a path ending in ``/`` or without a suffix: that many numbered PNGs in a folder, whose
      frame_NNNNN.png from before are removed first (``removed`` counts them).

    The folder ``out`` goes in must exist, and a folder of frames must hold nothing but
    frame_NNNNN.png (ValueError before any work otherwise).

    The world advances at its own dt (with ``controller`` applied before every step).
    ``camera`` is a camera spec (see ``render.camera``); where it gives no target and
    distance, the camera frames the bodies and the ground under each falling one at the
    start and stays there (a still too), as the viewer's first view does
    (``scenedata.initial_camera``).
    ``frame``: the camera (its angles kept) frames every body at the start (a still: at the
    end), as the viewer's F key does, whatever the spec's target and distance.
    ``follow``: a body (its name, or its index in ``world.bodies``) the camera (its angles
    kept) stays on, as the viewer's T
    key does, close enough that its bounding sphere takes about a third of the picture's
    height (the car at 1280x720 was 70 px wide on its 40 m course; followed, 190 px); not
    with ``frame``. Where the scene's controller removes the body, the camera stays where it
    last was and ``notes`` says from when.
    ``quality``: "fast", "full" or None (fast on a software rasteriser; see ``renderer``).
    ``playback``: a ``render.playback.Playback`` over ``world``: instead of simulating, frame
    k shows the recording at ``k / fps`` after its first sample (times past its end show the
    last sample). Returns ``{"out", "kind", "frames", "fps", "duration" (s the clip plays; 0
    for a still), "sim_time" (s simulated), "size", "seconds_wall", "removed" (stale frames
    removed from a folder), "notes" (what the caller should be told: a followed body
    removed)}``. A step or controller that fails part-way raises
    ``RenderStopped`` once the still of the state reached, or the frames before it, are
    written.
    """
    if not (seconds >= 0 and math.isfinite(seconds)):
        raise ValueError(f"seconds must be >= 0, got {seconds!r}")
    if not fps > 0:
        raise ValueError(f"fps must be > 0, got {fps!r}")
    size = parse_size(size)
    kind = check_output(out)
    if kind == "gif":
        check_gif_fps(fps)
    if frame and follow is not None:
        raise ValueError("frame and follow both point the camera; give one of them")
    spec = as_scene(world, camera=camera, controller=controller)
    followed = followed_body(spec.world, follow)
    # by its handle: once an earlier body is removed, the index names the next body (the
    # camera followed it), or none (IndexError)
    followed = None if followed is None else spec.world.bodies[followed]
    notes = []
    if playback is not None:
        if playback.world is not spec.world:
            raise ValueError("playback must play into the world being rendered")
        playback.seek(playback.start)
        sim = playback
    else:
        sim = Simulation(spec.world, spec.controller)
    geometry = WorldGeometry(spec.world)
    from .renderer import DrawOptions
    opts = DrawOptions(contacts=contacts, joints=joints, shadows=shadows)
    aspect = size[0] / size[1]

    def camera_now(cam=None):
        """The camera for the state drawn next: the spec's (``frame``: framed) at the first
        call; on the followed body, its distance kept after the first, at every call."""
        nonlocal followed
        if followed is not None and followed.removed:
            name = f"{followed.name!r}" if followed.name else "the followed body"
            notes.append(f"the scene removed {name} by t={spec.world.time:.6g} s; the camera "
                         "stayed where it last was from there")
            followed = None
        if cam is None:
            cam = initial_camera(spec.camera, geometry, aspect, frame)
            if followed is not None:
                aim_at_followed(cam, geometry, followed.index, aspect)
        elif followed is not None:
            cam.target = np.array(spec.world.positions[followed.index], float)
        return cam

    cam = camera_now()
    t0 = spec.world.time
    wall = time.perf_counter()
    off = OffscreenRenderer(size, samples=samples, quality=quality)
    failed = None
    try:
        if kind == "png":
            bar = _Progress(1, progress, "render")
            failed = _advance(sim, t0 + seconds)
            if frame or followed is not None:
                cam = camera_now()          # pointed at the end; else the start's, as a clip
            write_png(out, off.render(geometry, cam, opts))
            bar.update(1, spec.world.time - t0)
            bar.close()
            n = 1
        else:
            n = max(1, int(round(seconds * fps)))
            if kind == "folder":
                writer = FolderWriter(out)
            else:
                writer = GifWriter(out, fps) if kind == "gif" else Mp4Writer(out, fps)
            bar = _Progress(n, progress, "render")
            try:
                for k in range(n):
                    failed = _advance(sim, t0 + k / fps)
                    if failed is not None:
                        break
                    writer.append(off.render(geometry, camera_now(cam), opts))
                    bar.update(k + 1, spec.world.time - t0)
            finally:
                writer.close()
                bar.close()
            n = writer.count
            if failed is None:
                failed = _advance(sim, t0 + n / fps)    # through the last frame's 1 / fps
    finally:
        off.close()
    done = {"out": str(out), "kind": kind, "frames": n, "fps": fps,
            "duration": 0.0 if kind == "png" else n / fps, "sim_time": spec.world.time - t0,
            "size": list(size), "seconds_wall": time.perf_counter() - wall,
            "removed": writer.removed if kind == "folder" else 0, "notes": notes}
    if failed is not None:
        raise RenderStopped(failed, done, getattr(sim, "in_controller", False))
    return done


def _advance(sim, t: float) -> Exception | None:
    """``sim.advance_to(t)``; what failed in a step or the controller, if anything (the
    world is left as it was before that step)."""
    try:
        sim.advance_to(t)
    except Exception as exc:
        return exc
    return None


def render_image(world, camera=None, size=(640, 360), samples: int = 0,
                 quality: str | None = None, frame: bool = False, **draw) -> np.ndarray:
    """The current state of ``world`` as an (h, w, 3) uint8 image (no stepping); ``frame``:
    the camera frames every body (render_offscreen); ``draw`` are ``DrawOptions``."""
    size = parse_size(size)          # (before size[0] / size[1]: numpy's divide warning)
    spec = as_scene(world, camera=camera)
    geometry = WorldGeometry(spec.world)
    from .renderer import DrawOptions
    cam = initial_camera(spec.camera, geometry, size[0] / size[1], frame)
    off = OffscreenRenderer(size, samples=samples, quality=quality)
    try:
        return off.render(geometry, cam, DrawOptions(**draw))
    finally:
        off.close()


def benchmark_world(n: int, seed: int = 0):
    """n mixed bodies (spheres, boxes, capsules, cylinders) in a loose block above a ground
    plane, randomly oriented; nothing is stepped."""
    from physics import Box, Capsule, Cylinder, Plane, Sphere, World
    rng = np.random.default_rng(seed)
    world = World()
    world.add_body(Plane(normal=(0, 0, 1), offset=0.0))
    side = max(1, int(math.ceil(n ** (1 / 3) * 1.6)))
    layers = int(math.ceil(n / side**2))
    shapes = [Sphere(0.3), Box((0.3, 0.2, 0.25)), Capsule(0.15, 0.2), Cylinder(0.2, 0.2)]
    k = 0
    for z in range(layers):
        for y in range(side):
            for x in range(side):
                if k == n:
                    break
                q = rng.normal(size=4)
                world.add_body(shapes[k % 4], mass=1.0,
                               position=((x - side / 2) * 0.9, (y - side / 2) * 0.9, 0.5 + z * 0.9),
                               orientation=q / np.linalg.norm(q))
                k += 1
    return world


def frame_times(n_bodies_list=(100, 1000, 5000), size=(1280, 720), frames: int = 60,
                samples: int = RENDER_SAMPLES, quality: str | None = None) -> dict:
    """Render-only benchmark: for each body count, a scene of that many mixed bodies drawn
    ``frames`` times (camera orbiting, physics not stepped, glFinish after every frame) into a
    ``size`` offscreen framebuffer with ``samples`` multisampling (default: as ``render``
    draws; it measured none, 2-3 times cheaper on llvmpipe than what render spends).
    ``ms_per_frame`` is the median frame (software GL on a shared machine is noisy),
    ``mean_ms`` the mean, ``readback_ms`` one read of the picture (the multisample resolve
    and glReadPixels: render does both for every frame).
    ``quality`` as for the renderer (None: fast on a software rasteriser).
    Returns ``{"size", "frames", "samples", "quality", "mode", "renderer",
    "results": {n: {...}}}``."""
    off = OffscreenRenderer(size, samples=samples, quality=quality)
    results = {}
    try:
        for n in n_bodies_list:
            world = benchmark_world(int(n))
            geometry = WorldGeometry(world)
            cam = initial_camera(None, geometry, size[0] / size[1])
            off.render(geometry, cam)                  # warm up (shader compile, buffers)
            off.finish()
            times = []
            for _ in range(frames):
                t0 = time.perf_counter()
                cam.orbit(360.0 / frames, 0.0)
                off.draw(geometry, cam)
                off.finish()
                times.append(time.perf_counter() - t0)
            dt = float(np.median(times))
            t1 = time.perf_counter()
            for _ in range(5):
                off.target.read()
            readback = (time.perf_counter() - t1) / 5
            results[int(n)] = {"ms_per_frame": round(dt * 1e3, 2), "fps": round(1.0 / dt, 1),
                               "mean_ms": round(float(np.mean(times)) * 1e3, 2),
                               "readback_ms": round(readback * 1e3, 2)}
        info = renderer_info()
    finally:
        off.close()
    return {"size": list(size), "frames": frames, "samples": off.target.samples,
            "quality": off.quality,
            "mode": info["mode"], "renderer": info["renderer"], "results": results}
