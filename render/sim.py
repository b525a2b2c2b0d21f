"""Driving a World for display: scenes, controllers, the real-time clock and the mouse spring.
Pure Python/numpy (no OpenGL), so it is shared by the window and the offscreen renderer.

Scene-like objects
------------------
Anything the viewer can show is turned into a :class:`SceneSpec` by :func:`as_scene`:

- a ``physics.World``;
- an object with a ``.world`` attribute and optionally ``.title`` (or ``.name``), ``.camera``
  and ``.controller`` (what ``scenes.load(name)`` returns);
- a tuple ``(world, title, camera, controller)`` (trailing items optional), as returned by a
  ``load_scene(name)`` hook;
- a dict with the keys ``world``, ``title``, ``camera``, ``controller``.

Controllers
-----------
A controller is called before every ``world.step()`` (also in offscreen renders) to apply
forces, torques or motor targets. It may be a callable ``controller(world)`` (or
``controller(world, dt)``), or an object with one of the methods ``before_step``, ``update``
or ``step`` taking the same arguments. Optional extras: ``reset()`` (see below) and
``on_key_press(symbol, modifiers)`` / ``on_key_release(symbol, modifiers)`` (keys the viewer
does not use itself are passed on).

The viewer's R runs the scene again from its start. A controller keeps state the world's
snapshot does not hold (the box pyramid's "already shot", a winch's start time, a rope length
it set), so a scene with a controller is built again (``SceneSpec.rebuild``: a registry or
file scene's ``rebuilt()``, a scene list's name or callable) into a new world, with its new
controller; only a scene that cannot be built again (a World handed over with a controller)
gets its snapshot back and its controller's ``reset()``, if it has one.
"""
from __future__ import annotations

import inspect
import math
import os
import sys
import time
import traceback
from dataclasses import dataclass, field

import numpy as np


@dataclass
class SceneSpec:
    world: object
    title: str = "maxcoord"
    camera: object = None
    controller: object = None
    source: object = field(default=None, repr=False)
    rebuild: object = field(default=None, repr=False)   # () -> a new scene-like, the same scene


def _is_world(obj) -> bool:
    return all(hasattr(obj, a) for a in ("step", "bodies", "get_state", "set_state", "dt"))


def as_scene(obj, title=None, camera=None, controller=None) -> SceneSpec:
    """Normalise a World / scene object / tuple / dict into a SceneSpec; explicit arguments
    override what the object carries."""
    if isinstance(obj, SceneSpec):
        spec = SceneSpec(obj.world, obj.title, obj.camera, obj.controller, obj.source,
                         obj.rebuild)
    elif _is_world(obj):
        spec = SceneSpec(obj, source=obj)
    elif isinstance(obj, dict) and "world" in obj:
        spec = SceneSpec(obj["world"], obj.get("title") or "maxcoord", obj.get("camera"),
                         obj.get("controller"), obj, obj.get("rebuild"))
    elif isinstance(obj, (tuple, list)) and obj and _is_world(obj[0]):
        items = list(obj) + [None] * (4 - len(obj))
        spec = SceneSpec(items[0], items[1] or "maxcoord", items[2], items[3], obj)
    elif hasattr(obj, "world") and _is_world(obj.world):
        spec = SceneSpec(obj.world, getattr(obj, "title", None) or getattr(obj, "name", None)
                         or "maxcoord", getattr(obj, "camera", None),
                         getattr(obj, "controller", None), obj)
        rebuilt = getattr(obj, "rebuilt", None)
        spec.rebuild = rebuilt if callable(rebuilt) else None
    else:
        raise ValueError("expected a physics.World, a scene object with .world, a "
                         f"(world, title, camera, controller) tuple or a dict; got {obj!r}")
    if title is not None:
        spec.title = str(title)
    if camera is not None:
        spec.camera = camera
    if controller is not None:
        spec.controller = controller
    return spec


def resolve_scene(entry, load_scene=None) -> SceneSpec:
    """A scene list entry -> SceneSpec. Strings go through ``load_scene(name)`` (default:
    ``scenes.load(name)``); other callables are called with no arguments to build a fresh
    world; anything else is passed to :func:`as_scene`."""
    if isinstance(entry, str):
        if load_scene is None:
            import scenes
            load_scene = scenes.load
        spec = as_scene(load_scene(entry))
        if spec.title == "maxcoord":
            spec.title = entry
        if spec.rebuild is None:
            spec.rebuild = lambda: resolve_scene(entry, load_scene)
        return spec
    if callable(entry) and not _is_world(entry):
        spec = as_scene(entry())
        if spec.title == "maxcoord":
            spec.title = getattr(entry, "__name__", "maxcoord")
        if spec.rebuild is None:
            spec.rebuild = entry
        return spec
    return as_scene(entry)


def controller_function(controller):
    """A function f(world) that runs the controller once before a step, or None."""
    if controller is None:
        return None
    fn = controller
    if not callable(controller):
        for name in ("before_step", "update", "step"):
            if callable(getattr(controller, name, None)):
                fn = getattr(controller, name)
                break
        else:
            raise ValueError("controller must be callable as controller(world) or have a "
                             f"before_step/update/step method; got {controller!r}")
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty]
        wants_dt = len(params) >= 2
    except (TypeError, ValueError):
        wants_dt = False
    if wants_dt:
        return lambda world: fn(world, world.dt)
    return fn


def jointed_island(world, body) -> list[int]:
    """Indices of the dynamic bodies joined to ``body`` through chains of joints (``body``
    included): what a pull on ``body`` has to move. A RotationLock joins no point of its
    bodies (a pull moves the other body's orientation, not its position): it is left out."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    n = len(world.bodies)
    dynamic = np.array([not b.static for b in world.bodies], dtype=bool)
    pairs = np.array([(j.body_a.index, j.body_b.index) for j in world.joints
                      if getattr(j, "body_a", None) is not None
                      and getattr(j, "body_b", None) is not None
                      and getattr(j, "_joins_bodies", True)],
                     dtype=np.intp).reshape(-1, 2)
    pairs = pairs[dynamic[pairs].all(axis=1)]        # (a static body joins nothing)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    return np.flatnonzero(dynamic & (label == label[body.index])).tolist()


def connected_mass(world, body) -> float:
    """Total mass of the dynamic bodies joined to ``body`` through joints (including it), kg."""
    return float(sum(world.bodies[k].mass for k in jointed_island(world, body)))


class DragSpring:
    """The mouse's pull on a material point of a body (a mouse joint, as applied forces).

    What it does, and why each part is there:

    - The spring's anchor follows the cursor (``target``) at up to ``max_speed`` (m/s), so a
      long drag moves the body at a walking pace instead of flinging it.
    - Stiffness and damping are sized for the mass ``mass`` (kg) of the grabbed body's
      jointed island (a ragdoll's 70 kg when its hand is grabbed, a car's when its chassis
      is): ``frequency`` (Hz) critically damped. The spring acts at the grab point and is
      integrated implicitly against the grabbed body's own point mobility, which joints can
      only lower, so it stays stable at any dt and mass ratio. The island's damping acts on
      its centre-of-mass velocity, as a force on every member in proportion to its mass
      (limbs still swing freely about it); it is not inside the force cap, so it can always
      brake. Tracking a ramping anchor critically damped does not overshoot.
    - A slow integral term ``held`` learns the steady load (the weight of what hangs from
      the point, less what the ground carries), so a lifted ragdoll hangs at the cursor
      instead of sagging below it. It only integrates near the anchor (no wind-up during a
      long pull) and is capped at the island's weight.
    - The force at the point is capped at ``max_force`` = mass * (g + ``max_accel``).
    """

    HOLD_RADIUS = 0.1     # m: the integral term learns only this close to the anchor

    def __init__(self, body, grab_point, frequency: float = 3.0, damping_ratio: float = 1.0,
                 max_accel: float = 30.0, max_speed: float = 5.0):
        self.body = body
        self.world = body.world
        p = np.asarray(grab_point, dtype=float)
        self.local_point = body.rotation.T @ (p - body.position)
        self.target = p.copy()          # the cursor, m
        self.anchor = p.copy()          # the spring's end, chasing the cursor, m
        # the island by handles: a controller removing other bodies moves their indices
        # (the damping then pushed whichever bodies took them, or indexed past the end)
        self.island_bodies = [self.world.bodies[k] for k in jointed_island(self.world, body)]
        self._island_key = None
        self._find_island()
        self.mass = float(self.masses.sum())
        self.omega = 2 * math.pi * frequency
        self.damping_ratio = float(damping_ratio)
        self.stiffness = self.mass * self.omega ** 2                       # N/m
        # the grabbed body damps its own motion at the point; the rest of the island's
        # share of critical damping acts on the island's centre of mass
        self.point_damping = 2 * damping_ratio * body.mass * self.omega    # N s/m
        self.island_damping = 2 * damping_ratio * (self.mass - body.mass) * self.omega
        g = float(np.linalg.norm(self.world.gravity))
        self.max_force = self.mass * (g + max_accel)                       # N
        self.max_hold = 1.2 * self.mass * g                                # N
        self.max_speed = float(max_speed)
        self.held = np.zeros(3)         # the integral term, N
        self.force = np.zeros(3)        # the last force at the point, N

    def _find_island(self):
        """``island`` (indices in world.bodies now) and ``masses`` of the island's bodies still
        in the world; looked up again only when the number of bodies or the grabbed body's
        index has changed since (a lookup by handles takes ~1 ms for a 2000-link chain: too
        much for every step)."""
        key = (len(self.world.bodies), self.body.index)
        if key == self._island_key:
            return
        self._island_key = key
        kept = [b for b in self.island_bodies if not b.removed]
        self.island_bodies = kept
        self.island = np.array([b.index for b in kept], dtype=int)
        self.masses = np.array([b.mass for b in kept], dtype=float)

    def grab_point_world(self) -> np.ndarray:
        b = self.body
        return b.position + b.rotation @ self.local_point

    def _point_mobility(self, p) -> np.ndarray:
        """(3, 3) velocity change per impulse at world point ``p`` of the grabbed body alone,
        1/kg: 1/m - [r]x I^-1 [r]x."""
        b = self.body
        R = b.rotation
        inv_inertia = R @ np.linalg.inv(b.inertia) @ R.T
        r = p - b.position
        rx = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
        return np.eye(3) / b.mass - rx @ inv_inertia @ rx

    def _move_anchor(self, h):
        step = self.target - self.anchor
        n = float(np.linalg.norm(step))
        if n > self.max_speed * h:
            step *= self.max_speed * h / n
        self.anchor = self.anchor + step

    def apply(self):
        """Apply this step's forces (call once before each ``world.step()``)."""
        h = self.world.dt
        self._move_anchor(h)
        p = self.grab_point_world()
        v = self.body.point_velocity(p)
        error = self.anchor - p
        k, c = self.stiffness, self.point_damping
        # integral term: only near the anchor, where the remaining error is a steady load
        if float(np.linalg.norm(error)) < self.HOLD_RADIUS:
            self.held = self.held + h * k * self.omega / 3.0 * error
            n = float(np.linalg.norm(self.held))
            if n > self.max_hold:
                self.held *= self.max_hold / n
        # backward Euler against the body's own point mobility K:
        # F = k (e - h v+) - c v+ + held, v+ = v + h K F
        K = self._point_mobility(p)
        A = np.eye(3) + (k * h + c) * h * K
        f = np.linalg.solve(A, k * error - (k * h + c) * v + self.held)
        n = float(np.linalg.norm(f))
        if n > self.max_force:
            f *= self.max_force / n
        self.force = f
        self.body.apply_force(f, point=p)
        self._damp_island(h)

    def _damp_island(self, h):
        """The island's share of damping: the same deceleration for every member (implicit
        in the step, so it never reverses the motion), proportional to the island's
        centre-of-mass velocity; no torques, so its limbs swing freely about it."""
        if self.island_damping <= 0.0:
            return
        self._find_island()
        v = np.asarray(self.world.linear_velocities)[self.island]
        v_com = (self.masses[:, None] * v).sum(0) / self.masses.sum()
        rate = self.island_damping / self.mass                     # 1/s
        decel = rate / (1.0 + rate * h) * v_com                     # m/s^2
        self.world.apply_forces(-self.masses[:, None] * decel, self.island)


class TimeScale:
    """The +/- keys' playback speeds: ``time_scale`` steps through ``TIME_SCALES``."""

    TIME_SCALES = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0, 2.0, 4.0, 8.0)

    def faster(self):
        self._scale(+1)

    def slower(self):
        self._scale(-1)

    def _scale(self, direction):
        s = self.TIME_SCALES
        i = min(range(len(s)), key=lambda k: abs(math.log(s[k] / self.time_scale)))
        self.time_scale = s[int(np.clip(i + direction, 0, len(s) - 1))]


class Simulation(TimeScale):
    """A world plus what the viewer does to it: pause, single steps, time scale, reset to the
    start (see the module docstring: ``rebuild``, a callable returning a new scene-like of
    the same scene, builds a scene with a controller again), a controller and a drag spring,
    and a fixed-step accumulator that advances the world at its own dt independently of the
    frame rate."""

    def __init__(self, world, controller=None, *, rebuild=None, frame_budget: float = 1 / 25,
                 max_steps_per_frame: int = 200):
        if rebuild is not None and not callable(rebuild):
            raise ValueError(f"rebuild must be None or a callable, got {rebuild!r}")
        self.rebuild = rebuild
        self._use(world, controller)
        self.paused = False
        self.time_scale = 1.0
        self.accumulator = 0.0
        self.frame_budget = frame_budget
        self.max_steps_per_frame = max_steps_per_frame
        self.drag: DragSpring | None = None
        self.step_seconds = 0.0          # smoothed wall time of one world.step()
        self.realtime_factor = 1.0       # smoothed sim seconds per wall second
        self.behind = False              # the last frame hit the step cap
        self.error: str | None = None
        self._last_traceback = None       # the last one printed to stderr
        self.steps_taken = 0
        self.in_controller = False       # the last step_once raised in the controller

    # -- single steps --------------------------------------------------------------------
    def step_once(self):
        """One world.step() with the drag spring and the controller applied first. A drag
        on a body the controller has removed ends (it raised "... has been removed" as if
        the engine had failed, and paused the viewer)."""
        if self.drag is not None and self.drag.body.removed:
            self.drag = None
        if self.drag is not None:
            self.drag.apply()
        self.in_controller = True        # (left so when the controller raises)
        if self._control is not None:
            self._control(self.world)
        self.in_controller = False
        t0 = time.perf_counter()
        self.world.step()
        dt = time.perf_counter() - t0
        self.step_seconds = dt if self.steps_taken == 0 else 0.9 * self.step_seconds + 0.1 * dt
        self.steps_taken += 1

    def advance_to(self, t: float):
        """Step until world.time reaches t (within half a step)."""
        dt = self.world.dt
        while self.world.time < t - 0.5 * dt:
            self.step_once()

    def call_safely(self, fn, *args, where: str = ""):
        """Call ``fn(*args)``; an exception pauses the simulation instead of killing the
        viewer, is shown on the HUD (``error``: type, message and the innermost file:line)
        and its full traceback goes to stderr, once per distinct traceback (resuming into the
        same failure does not repeat it). Returns True if ``fn`` returned normally."""
        try:
            fn(*args)
            return True
        except Exception as exc:
            self.report_error(exc, where)
            return False

    def report_error(self, exc: BaseException, where: str = ""):
        """Pause and record ``exc`` (see :meth:`call_safely`); ``where`` names what failed, e.g.
        "controller on_key_press"."""
        frames = traceback.extract_tb(exc.__traceback__)
        place = f" ({os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
        message = " ".join(str(exc).split())
        message = message if len(message) <= 100 else message[:99] + "…"
        # file:line last but never cut off: it is what the user needs to find the bug
        self.error = (f"{where}: " if where else "") + f"{type(exc).__name__}: {message}{place}"
        self.paused = True
        self.accumulator = 0.0
        self.drag = None
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        if text != self._last_traceback:
            self._last_traceback = text
            sys.stderr.write(f"maxcoord viewer: paused after an error"
                             f"{' in ' + where if where else ''}:\n{text}")
            sys.stderr.flush()

    def single_step(self):
        """Advance exactly one dt (the viewer's period key); pauses."""
        self.paused = True
        self.accumulator = 0.0
        self.call_safely(self.step_once)

    def toggle_pause(self):
        self.paused = not self.paused
        self.accumulator = 0.0

    def _use(self, world, controller):
        self.world = world
        self.controller = controller
        self._control = controller_function(controller)
        self.initial_state = world.get_state()

    def reset(self):
        """Back to the start: a scene with a controller built again (``self.world`` is then a
        new World, keeping the old one's ``sleeping``), else the initial snapshot restored.
        A rebuild that fails restores the snapshot and shows the error (paused). The user's
        pause stays; a pause an error forced ends (R after a failing step stayed paused)."""
        self.accumulator = 0.0
        self.drag = None
        if self.error is not None and self.paused:
            self.paused = False
        self.error = None
        if self.controller is not None and self.rebuild is not None:
            try:
                spec = as_scene(self.rebuild())
            except Exception as exc:
                self.report_error(exc, "building the scene again (R)")
            else:
                spec.world.sleeping = self.world.sleeping      # (Z, --sleeping)
                self._use(spec.world, spec.controller)
                return
        try:
            self.world.set_state(self.initial_state)
        except ValueError as exc:      # (bodies the controller removed: it raised out of R)
            self.report_error(exc, "restoring the start (R)")
            return
        reset = getattr(self.controller, "reset", None)
        if callable(reset):
            reset()

    # -- real time -----------------------------------------------------------------------
    def advance(self, wall_dt: float) -> int:
        """Called once per frame with the wall time since the last frame: runs as many steps
        of world.dt as the accumulated (scaled) time asks for, but stops when a frame's
        budget of wall time or step count is used up; the backlog is then dropped, so a slow
        scene runs slower than real time instead of freezing. Returns the steps taken."""
        wall_dt = min(max(wall_dt, 0.0), 0.25)
        if self.paused:
            self.behind = False
            return 0
        dt = self.world.dt
        self.accumulator += wall_dt * self.time_scale
        want = int(self.accumulator / dt + 1e-9)
        start = time.perf_counter()
        n = 0
        while n < want:
            if not self.call_safely(self.step_once):
                break
            n += 1
            if n >= self.max_steps_per_frame or time.perf_counter() - start > self.frame_budget:
                break
        self.behind = n < want and not self.paused
        if self.behind:
            self.accumulator = 0.0
        else:
            self.accumulator -= n * dt
        if wall_dt > 0:
            rate = n * dt / wall_dt
            self.realtime_factor = 0.9 * self.realtime_factor + 0.1 * rate
        return n

    @property
    def slower_than_real_time(self) -> bool:
        return (not self.paused) and (self.behind or
                                      self.realtime_factor < 0.9 * self.time_scale)
