"""The real-time viewer: a pyglet window showing a World as it runs.

    Viewer(world, title="drop", camera=None, controller=None, scenes=None).run()

``world`` may also be a scene object (``.world``, ``.title``, ``.camera``, ``.controller``) or a
``(world, title, camera, controller)`` tuple; ``scenes`` is an optional list of scene names or
callables for N / P (names are loaded with ``load_scene(name)``, default ``scenes.load``;
the scene given first, if the list holds it, comes back as given, from its start, and the pause
and time scale carry over from scene to scene).
Every key is listed in :data:`KEY_BINDINGS`, which drives both the key handler and the help
overlay (H).

Playing a recording: ``Viewer(scene, playback=Playback(recording, scene.world))`` (see
``render.playback``) shows the recorded poses instead of stepping physics, with a timeline at
the bottom of the window (click or drag to scrub) and the keys of
:data:`PLAYBACK_KEY_BINDINGS` on top of the usual ones (Space plays / pauses, "." and R act
on the recording, +/- change the playback speed).
"""
from __future__ import annotations

import atexit
import dataclasses
import math
import re
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .backend import load_pyglet, make_window
from .imagefiles import write_png
from .scenedata import WorldGeometry, initial_camera
from .sim import Simulation, as_scene, resolve_scene

pyglet = load_pyglet()
key = pyglet.window.key
mouse = pyglet.window.mouse
gl = pyglet.gl

from .renderer import DrawOptions, Renderer, read_pixels  # noqa: E402


@dataclass(frozen=True)
class KeyBinding:
    label: str          # how the help overlay names the key
    symbols: tuple      # pyglet key symbols that trigger it
    action: str         # Viewer method name
    help: str


KEY_BINDINGS = (
    KeyBinding("Space", (key.SPACE,), "toggle_pause", "pause / resume"),
    KeyBinding(".", (key.PERIOD, key.NUM_DECIMAL), "single_step", "single step (one dt; pauses)"),
    KeyBinding("R", (key.R,), "reset", "reset to the initial state"),
    KeyBinding("+", (key.PLUS, key.EQUAL, key.NUM_ADD), "faster", "time scale x2"),
    KeyBinding("-", (key.MINUS, key.NUM_SUBTRACT), "slower", "time scale /2"),
    KeyBinding("C", (key.C,), "toggle_contacts", "show contacts and contact forces"),
    KeyBinding("J", (key.J,), "toggle_joints", "show joint anchors and axes"),
    KeyBinding("Z", (key.Z,), "toggle_sleeping",
               "sleeping on / off (still islands sleep; drawn paler)"),
    KeyBinding("W", (key.W,), "toggle_wireframe", "wireframe"),
    KeyBinding("Q", (key.Q,), "toggle_quality", "render quality: fast / full (shadow map)"),
    KeyBinding("F", (key.F,), "frame_scene", "frame all bodies"),
    KeyBinding("V", (key.V,), "reset_camera", "camera back to the start view"),
    KeyBinding("T", (key.T,), "toggle_follow", "camera follows the selected body"),
    KeyBinding("N", (key.N,), "next_scene", "next scene in the list (keeps pause, time scale)"),
    KeyBinding("P", (key.P,), "previous_scene",
               "previous scene (the one opened keeps its params)"),
    KeyBinding("S", (key.S,), "save_screenshot", "screenshot to PNG (view --screenshot-dir)"),
    KeyBinding("I", (key.I,), "toggle_hud", "HUD (status text, timeline) on / off"),
    KeyBinding("H", (key.H, key.F1), "toggle_help", "this help"),
    KeyBinding("Esc", (key.ESCAPE,), "quit", "quit"),
)

PLAYBACK_KEY_BINDINGS = (
    KeyBinding("Left", (key.LEFT,), "step_back", "previous recorded sample (pauses)"),
    KeyBinding("Right", (key.RIGHT,), "step_forward", "next recorded sample (pauses)"),
    KeyBinding("Home", (key.HOME,), "seek_start", "jump to the start of the recording"),
    KeyBinding("End", (key.END,), "seek_end", "jump to the end of the recording"),
    KeyBinding("L", (key.L,), "toggle_loop", "at the end: loop (default) / stop"),
)

# what the usual keys do to a recording (the help overlay's wording); None: not available
PLAYBACK_HELP = {
    "toggle_pause": "play / pause",
    "single_step": "next recorded sample (pauses)",
    "reset": "back to the start of the recording",
    "faster": "playback speed x2",
    "slower": "playback speed /2",
    "next_scene": None,
    "previous_scene": None,
    "toggle_sleeping": None,
    "toggle_contacts": None,       # recordings hold a count of contacts, not their points
}

TIMELINE_HEIGHT = 30        # px, the playback timeline along the bottom of the window
NOTICE_SECONDS = 4.0        # s the HUD shows a notice (the screenshot just saved, a body
                            # the scene removed while it was selected)
FAILED_NOTICE_SECONDS = 12.0   # s it shows a screenshot that could not be saved
SCREENSHOT_NOTICE = NOTICE_SECONDS

MOUSE_BINDINGS = (
    ("Left drag", "orbit"),
    ("Right or middle drag", "pan (also Shift + left drag)"),
    ("Wheel", "zoom"),
    ("Ctrl + left click", "select the body under the cursor"),
    ("Ctrl + left drag", "pull the body with a spring"),
)

_BY_SYMBOL = {sym: b for b in KEY_BINDINGS for sym in b.symbols}
_PLAYBACK_BY_SYMBOL = {sym: b for b in PLAYBACK_KEY_BINDINGS for sym in b.symbols}


def _software_gl() -> bool:
    r = gl.gl_info.get_renderer().lower()
    return any(name in r for name in ("llvmpipe", "softpipe", "swrast", "software"))


def help_text(playback: bool = False) -> str:
    """The help overlay: every key binding and mouse action; with ``playback`` also the keys
    and the timeline of a recording."""
    if not playback:
        lines = ["Keys"]
        lines += [f"  {b.label:<6} {b.help}" for b in KEY_BINDINGS]
        lines += ["", "Mouse"]
        lines += [f"  {what:<21} {does}" for what, does in MOUSE_BINDINGS]
        return "\n".join(lines)
    lines = ["Keys (playing a recording)"]
    for b in PLAYBACK_KEY_BINDINGS + KEY_BINDINGS:
        text = PLAYBACK_HELP.get(b.action, b.help)
        if text is not None:
            lines.append(f"  {b.label:<6} {text}")
    lines += ["", "Mouse"]
    lines += ["  Click / drag timeline  scrub (the bar along the bottom)"]
    lines += [f"  {what:<21}  {does}" for what, does in MOUSE_BINDINGS
              if what != "Ctrl + left drag"]
    return "\n".join(lines)


def _wrap_help(line: str, chars: int) -> list[str]:
    """A help line wrapped to at most ``chars`` characters, continuing under its own
    description ("  Space  pause / ..." under "pause"), not in the column of keys."""
    chars = max(int(chars), 12)
    key = re.match(r" +\S+(?: \S+)*? {2,}| +\S+ ", line)
    if len(line) <= chars or key is None:
        return textwrap.wrap(line, chars, subsequent_indent="  ") or [line]
    if len(key.group(0)) <= chars // 2:
        return textwrap.wrap(line, chars, subsequent_indent=" " * len(key.group(0)))
    # a long key ("Right or middle drag"): what it does on the lines below
    return [key.group(0).rstrip()] + textwrap.wrap(line[len(key.group(0)):], chars,
                                                   initial_indent=" " * 6,
                                                   subsequent_indent=" " * 6)


def _help_wrap(columns: int, room_w: int) -> int:
    """The px the help's lines may take: all the room in one column; two columns side by
    side, 24 px apart, wrap their long lines to share it."""
    return 4000 if columns == 1 else max((room_w - 24) // 2, 50)


def _split_columns(entries: list[list[str]], columns: int) -> list[list[str]]:
    """Help entries (each a line and its wrapped continuation) into ``columns`` (1 or 2)
    columns of lines as even as can be, never splitting an entry between two columns."""
    lines = [line for entry in entries for line in entry]
    if columns == 1:
        return [lines]
    sizes = np.cumsum([len(entry) for entry in entries])
    cut = int(np.argmin(np.maximum(sizes, len(lines) - sizes))) + 1
    return [[line for entry in entries[:cut] for line in entry],
            [line for entry in entries[cut:] for line in entry]]


class Viewer:
    """A window that runs and shows a world in real time (see the module docstring).

    Other parameters: ``size`` (window pixels), ``visible`` (False for tests), ``samples``
    (multisampling; default 4 on a GPU, none on a software rasteriser), ``quality``
    ("fast" or "full"; default fast on a software rasteriser, see ``renderer``),
    ``screenshot_dir``, ``load_scene`` (name -> scene),
    ``max_steps_per_frame`` and ``frame_budget`` (s of stepping per frame before the viewer
    gives up on real time and slows down).
    """

    def __init__(self, world, title: str | None = None, camera=None, controller=None,
                 scenes=None, *, load_scene=None, size=(1280, 720), visible: bool = True,
                 samples: int | None = None, screenshot_dir=".", max_steps_per_frame: int = 200,
                 frame_budget: float = 1 / 25, vsync: bool = False,
                 quality: str | None = None, playback=None):
        self.scenes = list(scenes) if scenes else []
        self.playback = None
        self.load_scene = load_scene
        self.scene_index = 0
        self.screenshot_dir = Path(screenshot_dir)
        self._sim_opts = dict(max_steps_per_frame=max_steps_per_frame, frame_budget=frame_budget)
        if world is None:
            if not self.scenes:
                raise ValueError("give a world (or scene), or a non-empty scenes list")
            spec = resolve_scene(self.scenes[0], load_scene)
        else:
            spec = as_scene(world, title, camera, controller)
        self.window = make_window(int(size[0]), int(size[1]), visible=visible,
                                  caption=spec.title, resizable=True,
                                  samples=4 if samples is None else samples, vsync=vsync)
        self.window.switch_to()
        if samples is None and self.window.config.sample_buffers and _software_gl():
            # multisampling costs a software rasteriser several times the fill work
            self.window.close()
            self.window = make_window(int(size[0]), int(size[1]), visible=visible,
                                      caption=spec.title, resizable=True, samples=0,
                                      vsync=vsync)
            self.window.switch_to()
        self.renderer = Renderer(quality=quality)
        self.options = DrawOptions()
        self.show_help = False
        self.show_hud = True
        self._help_over_hud = False      # the help fits only over the HUD: the HUD not drawn
        # the selected body by its handle: a controller removing a body moves the indices
        # of those after it (an index kept selected, followed and dragged the next body, or
        # crashed the HUD past the end)
        self._selected_body = None
        self.follow = False
        self.last_screenshot: Path | None = None
        self._notices: list[tuple[str, float]] = []   # (text, time.monotonic() it goes)
        self._drag_plane = None
        self._frames = []
        self._hud_time = 0.0
        self._hud_state_time = None
        self._timeline_text = None
        self._build_hud()
        self.window.push_handlers(self)
        self._load(spec, playback)
        self.scene_index = 0 if world is None else self._index_in_scenes(spec)
        # A scene given as an object may differ from its list entry (the command line's
        # --param values): N / P coming back to its place show it again, not the entry.
        self._opened = None
        if world is not None and self.scene_index is not None:
            self._opened = (self.scene_index, spec, playback, self.sim)
        atexit.register(self.close)      # a clean GL teardown before interpreter shutdown

    # -- scenes --------------------------------------------------------------------------
    def _load(self, spec, playback=None, sim=None):
        """Show ``spec``: simulated live (by ``sim``, a ``Simulation`` of ``spec.world``, or
        a new one), or played back from ``playback`` (a ``render.playback.Playback`` over
        ``spec.world``)."""
        if playback is not None and playback.world is not spec.world:
            raise ValueError("playback must play into the world of the scene it is given with")
        if sim is not None and playback is None:      # (R may have built it again)
            spec = dataclasses.replace(spec, world=sim.world, controller=sim.controller)
        self.spec = spec
        self.world = spec.world
        self.title = spec.title
        self.playback = playback
        if playback is not None:
            self.sim = playback
            self.options.contacts = False      # the world's contacts are not the recording's
        elif sim is not None:
            self.sim = sim
        else:
            self.sim = Simulation(self.world, spec.controller, rebuild=spec.rebuild,
                                  **self._sim_opts)
        self._layout_hud()          # (the help's text differs for a recording)
        self.geometry = WorldGeometry(self.world)
        w, h = self.window.get_size()
        self.camera = initial_camera(spec.camera, self.geometry, w / max(h, 1))
        self.initial_camera = self.camera.copy()
        self._selected_body = None
        self.follow = False
        self.window.set_caption(f"maxcoord - {self.title}")
        self._update_hud(force=True)

    def _index_in_scenes(self, spec) -> int | None:
        """Where the scene shown first is in ``scenes`` (matched by registry name, or by
        the entry itself), so that N / P continue from it; None if it is not listed."""
        name = getattr(spec.source, "name", None)
        for i, entry in enumerate(self.scenes):
            if (isinstance(entry, str) and entry == name) or entry is spec.source \
                    or entry is spec.world:
                return i
        return None

    def _switch_scene(self, delta: int):
        if not self.scenes:
            return
        if self.scene_index is None:          # the first scene shown is not in the list
            self.scene_index = 0 if delta > 0 else len(self.scenes) - 1
        else:
            self.scene_index = (self.scene_index + delta) % len(self.scenes)
        # the user's pause and time scale stay, as R keeps them; a pause an error forced
        # is not the user's
        paused = self.sim.paused and self.sim.error is None
        time_scale = self.sim.time_scale
        if self._opened is not None and self.scene_index == self._opened[0]:
            _, spec, playback, sim = self._opened
            sim.reset()            # from its start, as R would
            self._load(spec, playback, sim)
        else:
            entry = self.scenes[self.scene_index]
            try:
                spec = resolve_scene(entry, self.load_scene)
            except Exception as exc:       # a broken scene must not take the viewer down
                self.sim.error = f"could not load scene {entry!r}: {type(exc).__name__}: {exc}"
                self.sim.paused = True
                return
            self._load(spec)
        self.sim.paused, self.sim.time_scale = paused, time_scale
        self._update_hud(force=True)

    def next_scene(self):
        self._switch_scene(+1)

    def previous_scene(self):
        self._switch_scene(-1)

    # -- actions (bound in KEY_BINDINGS) -------------------------------------------------
    def toggle_pause(self):
        self.sim.toggle_pause()

    def single_step(self):
        self.sim.single_step()

    def reset(self):
        """The scene from its start (built again where it has a controller: see
        ``Simulation.reset``); the camera, pause, time scale and draw options stay, and the
        selection where the scene built again has a body at its index."""
        world = self.world
        selected = self.selected
        self.sim.reset()
        self._drag_plane = None
        if self.sim.world is not world:
            self.spec = dataclasses.replace(self.spec, world=self.sim.world,
                                            controller=self.sim.controller)
            self.world = self.sim.world
            self.geometry = WorldGeometry(self.world)
            self.selected = selected if selected is not None and \
                selected < len(self.world.bodies) else None
            self._update_hud(force=True)

    def faster(self):
        self.sim.faster()

    def slower(self):
        self.sim.slower()

    def toggle_contacts(self):
        if self.playback is None:          # a recording has no contact points to draw
            self.options.contacts = not self.options.contacts

    def toggle_joints(self):
        self.options.joints = not self.options.joints

    def toggle_sleeping(self):
        if self.playback is None:
            self.world.sleeping = not self.world.sleeping

    def toggle_wireframe(self):
        self.options.wireframe = not self.options.wireframe

    def toggle_quality(self):
        self.renderer.quality = "full" if self.renderer.quality == "fast" else "fast"

    def toggle_help(self):
        self.show_help = not self.show_help
        self._layout_hud()

    def toggle_hud(self):
        self.show_hud = not self.show_hud
        self._layout_hud()             # (the help may take the room the HUD leaves)

    def reset_camera(self):
        """Back to the view the scene was first shown with (R resets only the bodies)."""
        self.follow = False
        self.camera = self.initial_camera.copy()

    def step_back(self):
        if self.playback is not None:
            self.playback.step_back()

    def step_forward(self):
        if self.playback is not None:
            self.playback.step_forward()

    def seek_start(self):
        if self.playback is not None:
            self.playback.seek_start()

    def seek_end(self):
        if self.playback is not None:
            self.playback.seek_end()

    def toggle_loop(self):
        if self.playback is not None:
            self.playback.toggle_loop()

    def toggle_follow(self):
        self.follow = (not self.follow) and self.selected is not None

    # -- the selected body ---------------------------------------------------------------
    @property
    def selected_body(self):
        """The selected Body, or None (none selected, or the scene has removed it)."""
        body = self._selected_body
        return None if body is None or body.removed else body

    @property
    def selected(self) -> int | None:
        """The selected body's index in ``world.bodies`` now (it moves when the scene removes
        an earlier body), or None. Set: an index, or None to select nothing."""
        body = self.selected_body
        return None if body is None else body.index

    @selected.setter
    def selected(self, index: int | None):
        self._selected_body = None if index is None else self.world.bodies[index]
        if index is None:
            self.follow = False

    def _drop_removed_selection(self):
        """Where the scene's controller has removed the selected body: nothing selected,
        followed or dragged any more, and the HUD says so for NOTICE_SECONDS."""
        body = self._selected_body
        if body is None or not body.removed:
            return
        # (the simulation ends a drag on a removed body itself; _drag_plane says there was one)
        dragged = self._drag_plane is not None
        what = ", ".join(["selected"] + ["followed"] * self.follow + ["dragged"] * dragged)
        self._selected_body = None
        self.follow = False
        if self.sim.drag is not None and self.sim.drag.body is body:
            self.sim.drag = None
        self._drag_plane = None
        name = f" {body.name!r}" if body.name else ""
        self.notice(f"the scene removed the body{name} ({what}): selection dropped")

    def notice(self, text: str, seconds: float = NOTICE_SECONDS):
        """Show ``text`` on the HUD for ``seconds``."""
        self._notices = [n for n in self._notices if n[0] != text]
        self._notices.append((text, time.monotonic() + seconds))
        self._update_hud(force=True)

    def frame_scene(self):
        """Frame every shaped body (the F key), keeping the camera's angles."""
        self.follow = False
        w, h = self.window.get_size()
        self._limit_camera()
        self.geometry.frame(self.camera, w / max(h, 1))

    def _limit_camera(self):
        """Bound what the mouse and F do to the camera by the scene as it is now
        (``WorldGeometry.camera_limits``): the eye above the ground, the target near the
        bodies, the zoom within a range of the scene's size."""
        self.camera.limits = self.geometry.camera_limits(self.initial_camera)

    def screenshot(self, path=None) -> Path:
        """Draw a frame and save the window's pixels (HUD included) as a PNG; returns the
        path (default: ``screenshot_dir/maxcoord-<title>-<time>.png``)."""
        if path is None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in self.title)
            path = self.screenshot_dir / f"maxcoord-{safe}-{stamp}-{int(time.time() * 1e3) % 1000:03d}.png"
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_png(path, self.draw_frame(read=True))
        self.last_screenshot = path
        print(f"screenshot: {path}")
        self.notice(f"screenshot saved: {path}")
        return path

    def save_screenshot(self) -> Path | None:
        """The S key: :meth:`screenshot` to ``screenshot_dir``; a file that cannot be written
        (a folder without write permission, a working folder since deleted, a full disk) is
        named on the HUD and stderr, as other errors are, instead of closing the viewer (it
        raised out of the key handler). Returns the path, or None."""
        try:
            return self.screenshot()
        except OSError as exc:
            cause = getattr(exc, "cause", None) or exc       # (write_png's WriteFailed)
            folder = self.screenshot_dir
            text = (f"ERROR: screenshot not saved in {str(folder)!r}: {type(cause).__name__}: "
                    f"{cause.strerror or cause} (view --screenshot-dir DIR saves elsewhere)")
            print(f"maxcoord viewer: {text}", file=sys.stderr)
            self.notice(text, FAILED_NOTICE_SECONDS)
            return None

    def quit(self):
        self.close()
        pyglet.app.exit()

    def close(self):
        """Close the window (the viewer cannot be used afterwards)."""
        atexit.unregister(self.close)
        if self.window.context is not None:
            self.window.remove_handlers(self)
            self.window.close()

    # -- frame loop ----------------------------------------------------------------------
    def tick(self, wall_dt: float):
        """Advance the simulation by the wall time since the last frame (fixed steps)."""
        self.sim.advance(wall_dt)
        self._drop_removed_selection()
        if self.follow and self.selected is not None:
            self.camera.target = np.asarray(self.world.positions[self.selected], float).copy()
        self._update_hud()

    def _scheduled(self, dt):
        self.tick(dt)

    def run(self):
        """Open the window and run until it is closed (Esc)."""
        pyglet.clock.schedule_interval(self._scheduled, 1 / 60)
        try:
            pyglet.app.run(1 / 60)
        finally:
            pyglet.clock.unschedule(self._scheduled)
            # pyglet's loop turns the windows' event queue off for good (a class attribute):
            # a headless window made after it dispatched its first resize from its
            # constructor, before its projection existed ('HeadlessWindow' object has no
            # attribute 'ubo': 15 render tests run in one process without a display)
            pyglet.window.Window._enable_event_queue = True

    def draw_frame(self, read: bool = False):
        """Draw the scene and overlays into the window's back buffer; with ``read`` return
        the pixels as (h, w, 3) uint8 (top row first) before the buffers are swapped."""
        self.window.switch_to()
        now = time.perf_counter()
        self._frames.append(now)
        self._frames = [t for t in self._frames if now - t < 1.0]
        fw, fh = self.window.get_framebuffer_size()
        self._drop_removed_selection()          # (a single step, or a key's controller)
        highlight = {}
        if self.selected is not None:
            highlight[self.selected] = (0.35, 0.35, 0.25)
        drag = self.sim.drag
        if drag is not None and drag.body.removed:      # (a drag not on the selected body)
            drag = self.sim.drag = None
        self.options.highlight = highlight
        self.options.drag = None if drag is None else (drag.grab_point_world(), drag.target)
        self.renderer.draw(self.geometry, self.camera, fw, fh, self.options, target_fbo=0)
        gl.glDisable(gl.GL_DEPTH_TEST)
        gl.glViewport(0, 0, fw, fh)
        if self.show_hud and not (self.show_help and self._help_over_hud):
            if self._hud_state_time != self._state_time():
                # the text is refreshed only a few times a second, but its time must be
                # the drawn state's (it lagged the pose and the timeline by up to 0.25 s)
                self._update_hud(force=True)
            self.hud_batch.draw()
            if self.playback is not None:
                self._update_timeline()
                self.timeline_batch.draw()
        if self.show_help:
            self.help_batch.draw()
        gl.glEnable(gl.GL_DEPTH_TEST)
        if read:
            gl.glFinish()
            return read_pixels(0, 0, fw, fh)
        return None

    # -- pyglet event handlers -----------------------------------------------------------
    def on_draw(self):
        self.draw_frame()
        return pyglet.event.EVENT_HANDLED

    def on_resize(self, width, height):
        self._layout_hud()
        # not handled: pyglet's own handler sets the viewport and 2D projection for the HUD

    def on_key_press(self, symbol, modifiers):
        b = _PLAYBACK_BY_SYMBOL.get(symbol) if self.playback is not None else None
        b = b or _BY_SYMBOL.get(symbol)
        if b is None:
            return self._pass_key_to_controller("on_key_press", symbol, modifiers)
        getattr(self, b.action)()
        if b.action != "quit":
            self._update_hud(force=True)
        return pyglet.event.EVENT_HANDLED

    def on_key_release(self, symbol, modifiers):
        if symbol not in _BY_SYMBOL and self.playback is None:
            return self._pass_key_to_controller("on_key_release", symbol, modifiers)
        return None

    def _pass_key_to_controller(self, hook: str, symbol, modifiers):
        """Call the controller's ``hook`` (on_key_press / on_key_release) if it has one; an
        exception in it pauses the simulation and shows on the HUD, as a failing step does,
        instead of closing the viewer."""
        handler = getattr(self.sim.controller, hook, None)
        if not callable(handler):
            return None
        self.sim.call_safely(handler, symbol, modifiers, where=f"controller {hook}")
        self._update_hud(force=True)
        return pyglet.event.EVENT_HANDLED

    def on_mouse_press(self, x, y, button, modifiers):
        if button == mouse.LEFT and self.in_timeline(x, y):
            self.playback.scrubbing = True
            self.scrub_to(x)
        elif button == mouse.LEFT and modifiers & key.MOD_CTRL:
            self.pick(x, y)
        return pyglet.event.EVENT_HANDLED

    def on_mouse_release(self, x, y, button, modifiers):
        if button == mouse.LEFT and self.playback is not None and self.playback.scrubbing:
            self.playback.scrubbing = False
        if button == mouse.LEFT:
            self.sim.drag = None
            self._drag_plane = None
        return pyglet.event.EVENT_HANDLED

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        if self.playback is not None and self.playback.scrubbing and buttons & mouse.LEFT:
            self.scrub_to(x)
        elif self.sim.drag is not None and buttons & mouse.LEFT:
            self._drag_to(x, y)
        elif buttons & (mouse.RIGHT | mouse.MIDDLE) or (buttons & mouse.LEFT
                                                        and modifiers & key.MOD_SHIFT):
            self.follow = False
            self._limit_camera()
            self.camera.pan(dx, dy, self.window.get_size()[1])
        elif buttons & mouse.LEFT and not modifiers & key.MOD_CTRL:
            self._limit_camera()
            self.camera.orbit(-0.3 * dx, -0.3 * dy)
        return pyglet.event.EVENT_HANDLED

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self._limit_camera()
        self.camera.zoom(0.88 ** scroll_y)
        return pyglet.event.EVENT_HANDLED

    # -- picking and dragging ------------------------------------------------------------
    def pick(self, x, y):
        """Select the body under window pixel (x, y) (y from the bottom) and, if it is
        dynamic, start dragging it with a spring toward the cursor. Returns the body index
        or None."""
        w, h = self.window.get_size()
        origin, direction = self.camera.ray(x, y, w, h)
        hit = self.geometry.ray_cast(origin, direction)
        if hit is None:
            self.selected = None
            return None
        i, _, point = hit
        self.selected = i
        body = self.world.bodies[i]
        if not body.static and getattr(self.sim, "interactive", True):
            from .sim import DragSpring
            self.sim.drag = DragSpring(body, point)
            self._drag_plane = (point.copy(), self.camera.basis()[2].copy())
        return i

    def _drag_to(self, x, y):
        if self._drag_plane is None:
            return
        w, h = self.window.get_size()
        origin, d = self.camera.ray(x, y, w, h)
        p0, n = self._drag_plane
        denom = float(d @ n)
        if abs(denom) < 1e-9:
            return
        t = float((p0 - origin) @ n) / denom
        if t > 0:
            self.sim.drag.target = origin + t * d

    # -- HUD -----------------------------------------------------------------------------
    def _build_hud(self):
        fonts = ("DejaVu Sans Mono", "Menlo", "Consolas", "Courier New", "monospace")
        self.hud_batch = pyglet.graphics.Batch()
        self.help_batch = pyglet.graphics.Batch()
        bg, fg = pyglet.graphics.Group(0), pyglet.graphics.Group(1)
        self.hud_bg = pyglet.shapes.Rectangle(0, 0, 10, 10, color=(20, 24, 30, 150),
                                              batch=self.hud_batch, group=bg)
        self.hud_label = pyglet.text.Label("", font_name=fonts, font_size=10, multiline=True,
                                           width=1000, x=10, y=0, anchor_y="top",
                                           color=(235, 238, 242, 255), batch=self.hud_batch,
                                           group=fg)
        self.help_bg = pyglet.shapes.Rectangle(0, 0, 10, 10, color=(20, 24, 30, 205),
                                               batch=self.help_batch, group=bg)
        # two labels: the help goes into two columns when one does not fit the window
        self.help_label, self.help_label2 = (
            pyglet.text.Label(help_text(), font_name=fonts, font_size=11, multiline=True,
                              width=4000, x=0, y=0, anchor_x="left", anchor_y="top",
                              color=(245, 245, 245, 255), batch=self.help_batch, group=fg)
            for _ in range(2))
        # the playback timeline (drawn only when playing a recording)
        self.timeline_batch = pyglet.graphics.Batch()
        top = pyglet.graphics.Group(2)
        self.timeline_bg = pyglet.shapes.Rectangle(0, 0, 10, TIMELINE_HEIGHT,
                                                   color=(20, 24, 30, 190),
                                                   batch=self.timeline_batch, group=bg)
        self.timeline_track = pyglet.shapes.Rectangle(0, 0, 10, 8, color=(90, 96, 108, 255),
                                                      batch=self.timeline_batch, group=fg)
        self.timeline_fill = pyglet.shapes.Rectangle(0, 0, 0, 8, color=(80, 170, 255, 255),
                                                     batch=self.timeline_batch, group=fg)
        self.timeline_handle = pyglet.shapes.Rectangle(0, 0, 6, 20, color=(240, 240, 240, 255),
                                                       batch=self.timeline_batch, group=top)
        self.timeline_label = pyglet.text.Label("", font_name=fonts, font_size=10, x=10,
                                                y=TIMELINE_HEIGHT // 2, anchor_y="center",
                                                color=(235, 238, 242, 255),
                                                batch=self.timeline_batch, group=fg)
        self._layout_hud()

    HUD_FONT_SIZES = (10, 9, 8, 7)           # pt, tried largest first
    HUD_SHARE = 0.4                          # most of the window's height the HUD may cover

    def _fit_hud_font(self, w, h):
        """The largest HUD font whose box takes at most HUD_SHARE of the window's height and
        fits its width (at 480x270 the 10 pt HUD of nine lines covered over half the view);
        the smallest where none does. Tried again only when the window or the number of
        lines changes."""
        lab = self.hud_label
        key = (w, h, lab.text.count("\n"))
        if getattr(self, "_hud_fit", None) == key:
            return
        self._hud_fit = key
        for size in self.HUD_FONT_SIZES:
            if lab.font_size != size:
                lab.font_size = size
            if lab.content_height + 16 <= self.HUD_SHARE * h and lab.content_width + 24 <= w:
                break

    def _layout_hud(self):
        w, h = self.window.get_size()
        lab = self.hud_label
        if lab.width != max(w - 24, 50):
            # lines wrap only where the window is narrower than them (at a fixed 420 px,
            # "screenshot saved: <path>" and a controller's error wrapped in any window)
            lab.width = max(w - 24, 50)
        self._fit_hud_font(w, h)
        lab.y = h - 8
        ch = lab.content_height
        self.hud_bg.x, self.hud_bg.y = 0, h - ch - 16
        self.hud_bg.width, self.hud_bg.height = min(lab.content_width + 24, w), ch + 16
        if self.show_help:       # (laid out when shown)
            self._layout_help(w, h)
        if self.playback is not None:
            self._layout_timeline()

    HELP_FONT_SIZES = (11, 10, 9, 8, 7)      # pt, tried largest first
    HELP_PAD = 16                            # px around the help text

    HUD_STEP = 40        # px: the HUD's width as the help sees it, rounded up to this, so
                         # the help does not move as the HUD's numbers change length

    def _help_regions(self, w, h) -> list[tuple[int, int, int, int]]:
        """Where the help may go, (x, y, width, height) from the bottom left: beside the HUD
        and below it, so that it hides none of the HUD (it covered the "screenshot saved"
        line), and above a recording's timeline (it hid the timeline at 800x450); the whole
        window where the HUD, and with it the timeline, is hidden."""
        if not self.show_hud:
            return [(0, 0, w, h)]
        hud_w = min(-(-self.hud_bg.width // self.HUD_STEP) * self.HUD_STEP, w)
        hud_h = self.hud_bg.height
        low = TIMELINE_HEIGHT if self.playback is not None else 0
        return [(hud_w, low, w - hud_w, h - low), (0, low, w, h - hud_h - low)]

    def _fit_help(self, lines, room_w, room_h) -> tuple[int, int] | None:
        """The (font size, columns) of the largest help that fits room_w x room_h px, one
        column before two at a size; None where not even two columns of the smallest do.
        Each try is measured arithmetically (``_help_extent``), without laying out text."""
        for columns, size in ((c, s) for c in (1, 2) for s in self.HELP_FONT_SIZES):
            cw, ch = self._help_extent(self._help_parts(lines, columns, size,
                                                        _help_wrap(columns, room_w)), size)
            if cw <= room_w and ch <= room_h:
                return size, columns
        return None

    def _layout_help(self, w, h):
        """Fit the help overlay into the part of a w x h window the HUD leaves (beside it or
        below it, whichever takes the larger font): the largest font that fits, in one
        column, else in two. Where it fits in neither, the whole window, over the HUD; where
        not even two columns of the smallest font fit that, as many lines as do and a last
        line saying to enlarge the window. Laid out again only when the window, the HUD's
        box or the text changes."""
        text = help_text(self.playback is not None)
        regions = self._help_regions(w, h)
        if getattr(self, "_help_fit", None) == (w, h, text, regions):
            return
        self._help_fit = (w, h, text, regions)
        lines = text.split("\n")
        pad = 2 * self.HELP_PAD + 8
        whole = (0, 0, w, h)
        fits = [(region, self._fit_help(lines, region[2] - pad, region[3] - pad))
                for region in regions]
        fits = [(region, fit) for region, fit in fits if fit is not None]
        if not fits and whole not in regions:            # over the HUD, then
            fit = self._fit_help(lines, w - pad, h - pad)
            fits = [(whole, fit)] if fit is not None else []
        if fits:            # the largest font, one column before two, the first on a tie
            region, (size, columns) = max(fits, key=lambda rf: (rf[1][0], -rf[1][1]))
            self._set_help_columns(lines, columns, size, _help_wrap(columns, region[2] - pad))
        else:                              # too small for all of it: say so
            region, size, keep = whole, self.HELP_FONT_SIZES[-1], len(lines)
            while keep > 1:
                keep -= 1
                shown = lines[:keep] + ["... enlarge the window to see the rest (H closes)"]
                parts = self._help_parts(shown, 1, size, max(w - pad, 50))
                if self._help_extent(parts, size)[1] <= h - pad:
                    break
            self._set_help_columns(shown, 1, size, wrap=max(w - pad, 50))
        # (where it takes the whole window, the HUD is not drawn under it)
        self._help_over_hud = self.show_hud and region == whole
        self._place_help(*region)

    def _help_parts(self, lines, columns: int, size: int, wrap: int = 4000) -> list[list[str]]:
        """``lines`` in ``columns`` columns at ``size`` pt, lines longer than ``wrap`` px
        wrapped under their own description (not under the keys)."""
        chars = wrap // self._help_metrics(size)[0] if wrap < 4000 else None
        entries = [[line] if chars is None else _wrap_help(line, chars) for line in lines]
        return _split_columns(entries, columns)

    def _help_extent(self, parts, size: int) -> tuple[int, int]:
        """(width, height) in px the columns ``parts`` take at ``size`` pt side by side, 24 px
        apart, from the monospace font's measured character width and line heights."""
        char, first, line = self._help_metrics(size)
        width = sum(math.ceil(char * max(map(len, part), default=0)) for part in parts)
        height = max(first + line * (len(part) - 1) for part in parts)
        return width + 24 * (len(parts) - 1), int(math.ceil(height))

    def _set_help_columns(self, lines, columns: int, size: int,
                          wrap: int = 4000) -> tuple[int, int]:
        """Put ``lines`` into ``columns`` help labels at ``size`` pt (``_help_parts``); returns
        the (width, height) in px they take together (columns side by side, 24 px apart)."""
        labels = (self.help_label, self.help_label2)
        parts = self._help_parts(lines, columns, size, wrap)
        for k, lab in enumerate(labels):
            lab.visible = k < columns
            if lab.font_size != size:
                lab.text = ""         # (a new size lays the old text out again: 70 ms)
                lab.font_size = size
            lab.text = "\n".join(parts[k]) if k < columns else ""
        used = labels[:columns]
        return (sum(lab.content_width for lab in used) + 24 * (columns - 1),
                max(lab.content_height for lab in used))

    def _help_metrics(self, size: int) -> tuple[float, float, float]:
        """(character width, first line's height, each further line's) in px of the help's
        monospace font at ``size`` pt, measured once on a scratch label: fitting the help
        then lays out no text (each layout of the whole help took 20-100 ms in llvmpipe's
        pyglet, and fitting a small window tried up to 40: 1.2 s at 400x300)."""
        metrics = self.__dict__.setdefault("_help_metric_cache", {})
        if size not in metrics:
            lab = self.__dict__.get("_help_probe")
            if lab is None:
                lab = self._help_probe = pyglet.text.Label(
                    "", font_name=self.help_label.font_name, multiline=True, width=4000)
            lab.text, lab.font_size, lab.text = "", size, "0" * 40
            char, first = max(lab.content_width / 40, 1.0), lab.content_height
            lab.text = "0" * 40 + "\n0"
            metrics[size] = char, first, lab.content_height - first
        return metrics[size]

    def _place_help(self, x0, y0, w, h):
        """Centre the help's labels and their box in the region (x0, y0, w, h)."""
        labels = [lab for lab in (self.help_label, self.help_label2) if lab.visible]
        total = sum(lab.content_width for lab in labels) + 24 * (len(labels) - 1)
        height = max(lab.content_height for lab in labels)
        x = x0 + max((w - total) // 2, self.HELP_PAD)
        top = y0 + min((h + height) // 2, h - self.HELP_PAD)
        for lab in labels:
            lab.x, lab.y = x, top
            x += lab.content_width + 24
        pad = self.HELP_PAD
        self.help_bg.x, self.help_bg.y = labels[0].x - pad, top - height - pad
        self.help_bg.width, self.help_bg.height = total + 2 * pad, height + 2 * pad

    def help_text_shown(self) -> str:
        """The help overlay's text as laid out for the window (columns one after the other),
        whether or not it is shown now."""
        self._layout_help(*self.window.get_size())
        return "\n".join(lab.text for lab in (self.help_label, self.help_label2)
                         if lab.visible)

    # -- playback timeline ---------------------------------------------------------------
    def _timeline_string(self) -> str:
        pb = self.playback
        end = f"{pb.end:.3f}"
        return f"{pb.t:{len(end)}.3f} / {end} s"

    TIMELINE_FONT_SIZES = (10, 9, 8, 7)     # pt, tried largest first
    MIN_TRACK = 60                          # px of track the label must leave

    def _layout_timeline(self):
        """The time label, then the track to the right edge: the label's largest font that
        leaves the track MIN_TRACK px, else no label and the track the whole width (at
        120x80 the label took the window and the track began past its right edge)."""
        w, _ = self.window.get_size()
        lab = self.timeline_label
        # size the label for its widest text so the track does not move as time changes
        widest = f"{self.playback.end:.3f} / {self.playback.end:.3f} s"
        lab.text = widest
        for size in self.TIMELINE_FONT_SIZES:
            if lab.font_size != size:
                lab.font_size = size
                lab.text = widest
            if lab.x + lab.content_width + 14 + self.MIN_TRACK <= w - 16:
                break
        self._timeline_label_shown = lab.x + lab.content_width + 14 + self.MIN_TRACK <= w - 16
        x0 = lab.x + lab.content_width + 14 if self._timeline_label_shown else 10
        if not self._timeline_label_shown:
            lab.text = ""
        self._timeline_x = (x0, max(x0 + 1, w - 16))
        self._timeline_text = None
        self.timeline_bg.width = w
        self.timeline_track.x, self.timeline_track.y = x0, TIMELINE_HEIGHT // 2 - 4
        self.timeline_track.width = self._timeline_x[1] - x0
        self.timeline_fill.x, self.timeline_fill.y = x0, TIMELINE_HEIGHT // 2 - 4
        self.timeline_handle.y = TIMELINE_HEIGHT // 2 - 10
        self._update_timeline()

    def timeline_rect(self) -> tuple[int, int, int, int]:
        """(x0, y0, x1, y1) of the timeline's track in window pixels (y from the bottom);
        the whole strip below ``TIMELINE_HEIGHT`` takes clicks."""
        if self.playback is None:
            raise ValueError("the timeline exists only when playing a recording")
        x0, x1 = self._timeline_x
        return x0, TIMELINE_HEIGHT // 2 - 4, x1, TIMELINE_HEIGHT // 2 + 4

    def in_timeline(self, x, y) -> bool:
        return self.playback is not None and self.show_hud and 0 <= y <= TIMELINE_HEIGHT

    def scrub_to(self, x):
        """Show the recording at the time under window pixel column ``x`` of the timeline."""
        x0, _, x1, _ = self.timeline_rect()
        self.playback.seek_fraction((x - x0) / max(x1 - x0, 1))
        self._update_timeline()
        self._update_hud(force=True)

    def _update_timeline(self):
        x0, x1 = self._timeline_x
        px = x0 + self.playback.fraction * (x1 - x0)
        self.timeline_fill.width = px - x0
        self.timeline_handle.x = px - 3
        text = self._timeline_string() if self._timeline_label_shown else ""
        if text != self._timeline_text:
            self._timeline_text = self.timeline_label.text = text

    def hud_text(self) -> str:
        if self.playback is not None:
            return self._playback_hud_text()
        sim, world = self.sim, self.world
        contacts = getattr(world, "contacts", None)
        pts = getattr(contacts, "point", None) if contacts is not None else None
        n_contacts = "-" if pts is None else str(len(pts))
        fps = max(len(self._frames) - 1, 0) / max(self._frames[-1] - self._frames[0], 1e-9) \
            if len(self._frames) > 1 else 0.0
        try:
            energy = f"{world.energy():.6g} J"
        except Exception:
            energy = "-"
        try:
            err = f"{world.constraint_error():.2e}"
        except Exception:
            err = "-"
        state = "PAUSED" if sim.paused else f"time scale x{sim.time_scale:g}"
        # (the smoothed factor keeps its last running value while paused)
        real = "real time: paused" if sim.paused else f"real time x{sim.realtime_factor:.2f}"
        lines = [
            f"{self.title}",
            f"t {world.time:9.3f} s   dt {world.dt * 1e3:.3g} ms   {state}",
            f"fps {fps:5.1f}   {real}   step {sim.step_seconds * 1e3:.2f} ms"
            f"   {self.renderer.quality}",
            f"bodies {len(world.bodies)}   joints {len(world.joints)}   contacts {n_contacts}"
            + (f"   asleep {int(np.count_nonzero(world.asleep))}" if world.sleeping else ""),
            f"energy {energy}   constraint error {err}",
        ]
        if sim.slower_than_real_time:
            lines.append(self._behind_text())
        lines += self._selection_lines()
        if sim.error:
            lines.append(f"ERROR: {sim.error}  (traceback on stderr)")
        # (S printed the path on stdout only: nothing in the window said it had worked)
        lines += self._notice_lines()
        if self.scenes:
            at = "-" if self.scene_index is None else self.scene_index + 1
            lines.append(f"scene {at}/{len(self.scenes)} (N/P)")
        lines.append("H: help   I: hide this")
        return "\n".join(lines)

    def _selection_lines(self) -> list[str]:
        body = self.selected_body
        if body is None:
            return []
        name = f" {body.name!r}" if body.name else ""
        return [f"selected #{body.index}{name} {type(body.shape).__name__}"
                + ("  (following)" if self.follow else "")]

    def _notice_lines(self) -> list[str]:
        now = time.monotonic()
        self._notices = [(text, until) for text, until in self._notices if now < until]
        return [text for text, _ in self._notices]

    def _behind_text(self) -> str:
        """The warning that the steps cannot keep up, in the terms of the line above it: the
        real time factor reached against the one asked (the share of the asked speed, x0.48
        under "real time x0.12" at time scale 1/4, read as a second, contradicting speed)."""
        sim = self.sim
        reached = f"real time x{sim.realtime_factor:.2f}"
        if sim.time_scale == 1:
            return f"SLOWER THAN REAL TIME ({reached})"
        return f"SLOWER THAN ASKED ({reached}, asked x{sim.time_scale:.3g})"

    def _playback_hud_text(self) -> str:
        pb, world = self.playback, self.world
        fps = max(len(self._frames) - 1, 0) / max(self._frames[-1] - self._frames[0], 1e-9) \
            if len(self._frames) > 1 else 0.0

        def recorded(name, fmt):
            v = pb.series_at(name)
            return "-" if v is None else format(v, fmt)

        state = "PAUSED" if pb.paused else f"playing x{pb.time_scale:g}"
        lines = [
            f"{self.title}",
            f"t {pb.t:.3f} / {pb.end:.3f} s   {state}   {'loop' if pb.loop else 'stop'} at end",
            f"sample {pb.sample_index() + 1}/{pb.n_samples}   dt {world.dt * 1e3:.3g} ms"
            f"   fps {fps:5.1f}   {self.renderer.quality}",
            f"bodies {len(world.bodies)}   joints {len(world.joints)}   "
            f"contacts {recorded('contacts', '.0f')} (recorded count, not drawn)",
            f"recorded: energy {recorded('energy', '.6g')} J   "
            f"error {recorded('constraint_error', '.2e')}",
        ]
        lines += self._selection_lines()
        lines += self._notice_lines()
        lines.append("H: help   I: hide this")
        return "\n".join(lines)

    def _state_time(self) -> float:
        """The time of the state drawn: the recording's time, or the world's."""
        return self.playback.t if self.playback is not None else self.world.time

    def _update_hud(self, force: bool = False):
        now = time.perf_counter()
        if not force and now - self._hud_time < 0.25:
            return
        self._hud_time = now
        self._hud_state_time = self._state_time()
        self.hud_label.text = self.hud_text()
        self._layout_hud()
