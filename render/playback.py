"""Playing back a recording made by ``maxcoord run SCENE --record out.npz`` (numpy only, no
OpenGL), for the viewer's timeline and for offscreen renders.

    rec = Recording.load("out.npz")                 # ValueError with one clear line if bad
    scene, playback = open_recording("out.npz")     # rebuilds the scene from name + params
    playback.seek(1.25)                             # world poses now show t = 1.25 s
    playback.advance(1 / 60)                        # real-time playback (pause, scale, loop)

A recording holds ``k`` samples of the poses of all ``n`` bodies at strictly increasing times
``time (k,)``: ``position (k, n, 3)``, ``orientation (k, n, 4)`` (w, x, y, z) and, when present,
``linear_velocity`` / ``angular_velocity (k, n, 3)`` and the scalar series ``energy``,
``constraint_error`` and ``contacts (k,)``. Between two samples positions and velocities are
interpolated linearly and orientations by slerp (shortest arc, normalised); at a sample time
the recorded values are returned exactly.

:class:`Playback` has the same surface as :class:`render.sim.Simulation` (``paused``,
``time_scale``, ``advance``, ``toggle_pause``, ``single_step``, ``reset``, ``faster``, ...), so
the viewer drives either one; instead of stepping physics it writes the interpolated poses into
the world with ``world.set_state``.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .sim import TimeScale

_SERIES = ("energy", "constraint_error", "contacts")


@dataclass
class Recording:
    """The arrays of one recording (see the module docstring for shapes)."""
    scene: str
    params: dict
    dt: float
    time: np.ndarray                 # (k,) strictly increasing, s
    position: np.ndarray             # (k, n, 3) world-frame centres of mass, m
    orientation: np.ndarray          # (k, n, 4) unit quaternions (w, x, y, z), body to world
    linear_velocity: np.ndarray | None = None     # (k, n, 3) m/s
    angular_velocity: np.ndarray | None = None    # (k, n, 3) rad/s, world frame
    series: dict = field(default_factory=dict)    # name -> (k,) (energy, constraint_error, ...)
    path: str = ""
    # (n,) str: each body's shape as built (its repr: Sphere(radius=0.1)), or None (a
    # recording made before they were kept)
    body_shape: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        return len(self.time)

    @property
    def n_bodies(self) -> int:
        return self.position.shape[1]

    @classmethod
    def load(cls, path) -> "Recording":
        """Read and check a ``.npz`` written by ``maxcoord run --record``; any problem raises
        a ``ValueError`` whose message is one line naming the file."""
        path = str(path)
        if Path(path).is_dir():
            raise ValueError(f"recording {path!r} is a folder, not a file: give the .npz "
                             "file that maxcoord run --record wrote")
        if not Path(path).is_file():
            raise ValueError(f"recording {path!r} does not exist")
        try:
            with open(path, "rb") as f:
                magic = f.read(4)
        except OSError as exc:
            raise ValueError(f"cannot read recording {path!r}: {_one_line(exc)}") from None
        if magic not in (b"PK\x03\x04", b"PK\x05\x06"):
            raise ValueError(f"{path} is not a maxcoord recording (not a .npz archive)")
        try:
            with np.load(path, allow_pickle=False) as data:
                missing = [k for k in ("scene", "time", "position", "orientation")
                           if k not in data.files]
                if missing:
                    raise ValueError(f"missing {', '.join(missing)}")
                arrays = {k: np.asarray(data[k]) for k in data.files}
        except ValueError as exc:
            raise ValueError(f"{path} is not a maxcoord recording ({_one_line(exc)})") from None
        except Exception as exc:           # zipfile.BadZipFile, OSError, EOFError, ...
            raise ValueError(f"{path} is not a readable maxcoord recording "
                             f"({type(exc).__name__}: {_one_line(exc)})") from None
        try:
            return cls.from_arrays(arrays, path=path)
        except ValueError as exc:
            raise ValueError(f"{path} is not a valid maxcoord recording ({exc})") from None

    @classmethod
    def from_arrays(cls, arrays: dict, path: str = "") -> "Recording":
        """Build from a dict of arrays with the keys of the ``.npz`` (checked)."""
        scene = arrays["scene"]
        scene = str(scene.item() if isinstance(scene, np.ndarray) else scene)
        params = arrays.get("params", "{}")
        try:
            params = json.loads(str(params.item() if isinstance(params, np.ndarray) else params))
        except json.JSONDecodeError as exc:
            raise ValueError(f"params is not JSON: {exc}") from None
        if not isinstance(params, dict):
            raise ValueError("params is not a JSON object")
        t = _floats(arrays, "time")
        if t.ndim != 1 or len(t) == 0:
            raise ValueError(f"time must be a non-empty 1-D array, got shape {t.shape}")
        k = len(t)
        x = _floats(arrays, "position")
        q = _floats(arrays, "orientation")
        if x.ndim != 3 or x.shape[0] != k or x.shape[2] != 3:
            raise ValueError(f"position must have shape ({k}, n, 3), got {x.shape}")
        n = x.shape[1]
        if q.shape != (k, n, 4):
            raise ValueError(f"orientation must have shape ({k}, {n}, 4), got {q.shape}")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(x)) and np.all(np.isfinite(q))):
            raise ValueError("time, position or orientation is not finite")
        if k > 1 and not np.all(np.diff(t) > 0):
            raise ValueError("time is not strictly increasing")
        norms = np.linalg.norm(q, axis=2)
        if np.any(np.abs(norms - 1.0) > 1e-3):
            raise ValueError("orientation holds quaternions that are not unit length")
        vel = {}
        for name in ("linear_velocity", "angular_velocity"):
            v = arrays.get(name)
            if v is not None:
                v = _floats(arrays, name)
                if v.shape != (k, n, 3) or not np.all(np.isfinite(v)):
                    v = None                     # optional: ignore rather than refuse
            vel[name] = v
        series = {}
        for name in _SERIES:
            s = arrays.get(name)
            if s is not None and np.shape(s) == (k,):
                series[name] = _floats(arrays, name)
        dt = arrays.get("dt")
        dt = float(dt) if dt is not None and np.size(dt) == 1 else float("nan")
        if not (dt > 0 and math.isfinite(dt)):
            dt = float(np.median(np.diff(t))) if k > 1 else 1 / 240
        shapes = arrays.get("body_shape")
        if shapes is not None and np.shape(shapes) != (n,):
            shapes = None                        # optional: ignore rather than refuse
        return cls(scene, params, dt, t, x, q, vel["linear_velocity"], vel["angular_velocity"],
                   series, path, None if shapes is None else np.asarray(shapes, dtype=str))


def _floats(arrays: dict, name: str) -> np.ndarray:
    """The recording's array ``name`` as floats, or ValueError naming it (numpy's own
    "could not convert string to float: 'abc'" did not say which array held it)."""
    try:
        return np.asarray(arrays[name], dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"its {name} array holds something other than numbers "
                         f"({_one_line(exc, 80)})") from None


def body_shapes(world) -> np.ndarray:
    """(n,) str: each body's shape, as its repr (``Sphere(radius=0.1)``; exact: a float's
    repr reads back as the same float), or "" for a body without one."""
    return np.array([repr(b.shape) if b.shape is not None else "" for b in world.bodies],
                    dtype=str)


def _check_shapes(recording: Recording, world):
    """ValueError (one line) where the rebuilt scene's bodies have other shapes than the
    recorded ones (a scene file edited since, or one that builds at random): played back,
    they were drawn in the recorded poses with the wrong sizes, a ball floating or sunk."""
    if recording.body_shape is None:
        return
    other = np.flatnonzero(body_shapes(world) != recording.body_shape)
    if other.size:
        src = f"{recording.path}: " if recording.path else ""
        i = int(other[0])
        changed = ("1 body another shape" if other.size == 1
                   else f"{other.size} bodies other shapes")
        raise ValueError(f"{src}scene {recording.scene!r} rebuilt with these parameters gives "
                         f"{changed} than were recorded (body {i}: "
                         f"{world.bodies[i].shape!r} now): its file changed since, or it "
                         "builds at random; record it again")


def _one_line(exc, limit: int | None = 200) -> str:
    text = " ".join(str(exc).split())
    return (text if limit is None else text[:limit]) if text else type(exc).__name__


def slerp(q0: np.ndarray, q1: np.ndarray, f: float) -> np.ndarray:
    """Spherical interpolation of (n, 4) unit quaternions at fraction ``f`` in [0, 1] along the
    shorter arc (q and -q are the same rotation), normalised; nearly equal pairs fall back to
    normalised lerp. ``f == 0`` returns ``q0`` exactly and ``f == 1`` returns ``q1`` up to the
    sign chosen for the short arc."""
    q0 = np.asarray(q0, dtype=float)
    q1 = np.asarray(q1, dtype=float)
    if f <= 0.0:
        return q0.copy()
    d = np.einsum("ij,ij->i", q0, q1)
    q1 = np.where(d[:, None] < 0, -q1, q1)
    if f >= 1.0:
        return q1
    d = np.minimum(np.abs(d), 1.0)
    theta = np.arccos(d)
    s = np.sin(theta)
    near = s < 1e-6
    s = np.where(near, 1.0, s)
    a = np.where(near, 1.0 - f, np.sin((1.0 - f) * theta) / s)
    b = np.where(near, f, np.sin(f * theta) / s)
    q = a[:, None] * q0 + b[:, None] * q1
    return q / np.linalg.norm(q, axis=1, keepdims=True)


class Playback(TimeScale):
    """Plays a :class:`Recording` into ``world`` (whose bodies must match the recording's):
    a clock over ``[start, end]`` of the recorded times that advances with the wall clock
    (times ``time_scale``) unless paused or being scrubbed, and sets the world's poses from
    the interpolated samples. At the end it loops back to the start (``loop=True``, the
    default) or stops there and pauses."""

    interactive = False          # the viewer does not drag bodies of a recording around

    def __init__(self, recording: Recording, world, *, loop: bool = True):
        n = len(world.bodies)
        if recording.n_bodies != n:
            src = f"{recording.path}: " if recording.path else ""
            raise ValueError(f"{src}the recording has {recording.n_bodies} bodies but scene "
                             f"{recording.scene!r} rebuilt with these parameters has {n}")
        _check_shapes(recording, world)
        self.recording = recording
        self.world = world
        self.controller = None
        self.loop = bool(loop)
        self.paused = False
        self.scrubbing = False        # held by the timeline while the mouse drags it
        self.time_scale = 1.0
        self.drag = None
        self.error: str | None = None
        self.step_seconds = 0.0
        self.behind = False
        self.steps_taken = 0
        self._template = world.get_state()
        self.initial_state = self._template
        self.t = self.start
        self.seek(self.start)

    # -- time <-> samples ----------------------------------------------------------------
    @property
    def start(self) -> float:
        return float(self.recording.time[0])

    @property
    def end(self) -> float:
        return float(self.recording.time[-1])

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def n_samples(self) -> int:
        return self.recording.n_samples

    def clamp(self, t: float) -> float:
        return float(min(max(float(t), self.start), self.end))

    def locate(self, t: float) -> tuple[int, float]:
        """(i, f): time ``t`` (clamped to the recording) lies a fraction ``f`` in [0, 1) of
        the way from sample i to sample i + 1 (f = 0 at the last sample)."""
        times = self.recording.time
        t = self.clamp(t)
        k = len(times)
        if k == 1 or t >= times[-1]:
            return k - 1, 0.0
        i = int(np.searchsorted(times, t, side="right")) - 1
        i = min(max(i, 0), k - 2)
        f = (t - times[i]) / (times[i + 1] - times[i])
        return i, float(min(max(f, 0.0), 1.0))

    def sample_index(self, t: float | None = None) -> int:
        """The sample at or just before ``t`` (default: the current time)."""
        return self.locate(self.t if t is None else t)[0]

    @property
    def fraction(self) -> float:
        """Where the current time lies on the timeline, 0 at the start and 1 at the end."""
        return (self.t - self.start) / self.duration if self.duration > 0 else 0.0

    def time_at_fraction(self, f: float) -> float:
        """The time at fraction ``f`` of the timeline (clamped to [0, 1])."""
        return self.start + min(max(float(f), 0.0), 1.0) * self.duration

    # -- interpolation -------------------------------------------------------------------
    def pose_at(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Positions (n, 3) and orientations (n, 4) at time ``t`` (clamped); the recorded
        arrays themselves (copies) at sample times."""
        rec = self.recording
        i, f = self.locate(t)
        if f == 0.0:
            return rec.position[i].copy(), rec.orientation[i].copy()
        x = (1.0 - f) * rec.position[i] + f * rec.position[i + 1]
        return x, slerp(rec.orientation[i], rec.orientation[i + 1], f)

    def velocity_at(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Linear and angular velocities (n, 3) at ``t``, linear between samples (zeros if
        the recording has none)."""
        rec = self.recording
        i, f = self.locate(t)
        out = []
        for v in (rec.linear_velocity, rec.angular_velocity):
            if v is None:
                out.append(np.zeros((rec.n_bodies, 3)))
            elif f == 0.0:
                out.append(v[i].copy())
            else:
                out.append((1.0 - f) * v[i] + f * v[i + 1])
        return out[0], out[1]

    def series_at(self, name: str, t: float | None = None) -> float | None:
        """A recorded scalar series (``energy``, ``constraint_error``, ``contacts``) at ``t``
        (default now): linear between samples, the sample's value for ``contacts``; None if
        the recording lacks it."""
        s = self.recording.series.get(name)
        if s is None:
            return None
        i, f = self.locate(self.t if t is None else t)
        if f == 0.0 or name == "contacts":
            return float(s[i])
        return float((1.0 - f) * s[i] + f * s[i + 1])

    # -- moving the clock ----------------------------------------------------------------
    def seek(self, t: float):
        """Show time ``t`` (clamped to the recording): write the interpolated poses and
        velocities, and the time, into the world."""
        self.t = self.clamp(t)
        x, q = self.pose_at(self.t)
        v, w = self.velocity_at(self.t)
        state = dict(self._template)
        # row 0 of the state arrays is the world's fixed frame, rows 1.. the bodies
        for name, value in (("x", x), ("q", q), ("v", v), ("w", w)):
            arr = np.array(self._template[name], dtype=float)
            arr[1:] = value
            state[name] = arr
        state["time"] = self.t
        self.world.set_state(state)

    def seek_fraction(self, f: float):
        self.seek(self.time_at_fraction(f))

    def step_samples(self, delta: int):
        """Pause and move to the next (``delta`` > 0) or previous recorded sample; from
        between two samples, +1 goes to the later one and -1 to the earlier one."""
        times = self.recording.time
        self.paused = True
        if delta > 0:
            j = int(np.searchsorted(times, self.t, side="right")) + int(delta) - 1
        elif delta < 0:
            j = int(np.searchsorted(times, self.t, side="left")) + int(delta)
        else:
            j = self.sample_index()
        self.seek(times[min(max(j, 0), len(times) - 1)])

    def step_forward(self):
        self.step_samples(+1)

    def step_back(self):
        self.step_samples(-1)

    def seek_start(self):
        self.seek(self.start)

    def seek_end(self):
        self.seek(self.end)

    def advance(self, wall_dt: float) -> int:
        """Called once per frame with the wall time since the last frame: moves the clock by
        ``wall_dt * time_scale`` (unless paused or scrubbing) and shows the new time; at the
        end loops to the start or stops and pauses. Returns 1 if the clock moved, else 0."""
        wall_dt = min(max(float(wall_dt), 0.0), 0.25)
        if self.paused or self.scrubbing or wall_dt == 0.0:
            return 0
        t = self.t + wall_dt * self.time_scale
        if t > self.end:
            if self.loop and self.duration > 0:
                t = self.start + (t - self.end) % self.duration
            else:
                t = self.end
                self.paused = True
        self.seek(t)
        self.steps_taken += 1
        return 1

    def advance_to(self, t: float):
        """Show time ``t`` (what an offscreen render asks of a simulation)."""
        self.seek(t)

    # -- the Simulation surface the viewer uses ------------------------------------------
    def toggle_pause(self):
        if self.paused and not self.loop and self.t >= self.end:
            self.seek(self.start)          # play again from the start
        self.paused = not self.paused

    def single_step(self):
        self.step_forward()

    def reset(self):
        self.seek(self.start)

    def toggle_loop(self):
        self.loop = not self.loop

    @property
    def realtime_factor(self) -> float:
        return 0.0 if self.paused or self.scrubbing else self.time_scale

    @property
    def slower_than_real_time(self) -> bool:
        return False


def scene_file_of(rec: Recording) -> str:
    """The scene to rebuild ``rec`` from: its registry name, or its scene file (a ``.py``) as
    recorded (an absolute path since recordings store one) or, when that is gone, the file of
    the same name next to the recording (a folder of scene and recording moved or opened from
    elsewhere). Raises ``ValueError`` naming both places tried."""
    name = rec.scene
    if not name.endswith(".py") or Path(name).is_file():
        return name
    beside = Path(rec.path).resolve().parent / Path(name).name if rec.path else None
    if beside is not None and beside.is_file():
        return str(beside)
    also = f" nor at {str(beside)!r} next to the recording" if beside is not None else ""
    raise ValueError(f"{rec.path or 'the recording'}: its scene file is not at {name!r}{also}; "
                     "put the scene file back or next to the recording")


def open_recording(path, load_scene=None, *, loop: bool = True):
    """Load the recording at ``path``, rebuild its scene with ``load_scene(name, params,
    dt)`` (default ``scenes.load_with``: the parameters in a dict, so that one called name or
    dt is the scene's) and return ``(scene, playback)`` with the world
    showing the first sample. Raises ``ValueError`` (one line) for an unreadable file, a scene
    that cannot be rebuilt, or a body count that does not match."""
    rec = Recording.load(path)
    if load_scene is None:
        import scenes
        load_scene = scenes.load_with
    source = scene_file_of(rec)
    try:
        scene = load_scene(source, rec.params, rec.dt)
    except ValueError as exc:
        raise ValueError(f"{path}: cannot rebuild the recorded scene: "
                         f"{_one_line(exc, limit=None)}") from None
    world = scene.world if hasattr(scene, "world") else scene
    return scene, Playback(rec, world, loop=loop)
