"""The ``maxcoord`` command line: list, run, bench, view, render."""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import time
import traceback

# One BLAS thread: the engine's linear algebra is many small calls, for which OpenBLAS's extra
# threads only spin (seen: whole seconds lost in one step on a busy 2-core machine). It must be
# set before numpy loads; a user's own setting wins.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402  (after the thread setting above)

from physics.allocator import keep_freed_memory  # noqa: E402
from physics.energy import state_energy  # noqa: E402
from physics.stages import STAGES  # noqa: E402
from tools import load_scene, load_scene_with  # noqa: E402

# freed memory kept for the next step's temporaries (see physics.allocator)
keep_freed_memory()


class UsageError(Exception):
    pass


class RunStopped(Exception):
    """A run whose step failed part-way (its summary and recording are kept); exit code 1."""


class RunInterrupted(Exception):
    """A run stopped with Ctrl-C (its summary and recording of the steps taken are kept); exit
    code 130, as for any command interrupted."""


class _ControllerFailed(Exception):
    """The scene's controller raised ``error`` before a step (``_step``), not the world's
    step: told with its traceback, which leads into the scene's file."""

    def __init__(self, error: Exception):
        super().__init__(error)
        self.error = error


def _output_path(path: str | None, option: str, suffix: str) -> str | None:
    """The file an option writes (None: not asked for), checked before any work is done: its
    folder must exist, its name must end in ``suffix``, and it must be writable."""
    if path is None:
        return None
    if not path.lower().endswith(suffix):
        raise UsageError(f"{option} writes a {suffix} file; give a name ending in {suffix}, "
                         f"got {path!r}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{option}: the folder {folder!r} does not exist")
    _check_writable(path, option)
    return path


def _check_writable(path: str, option: str, folder: bool = False):
    """Refuse, before any work, an output that cannot be written: a file (or with
    ``folder``, a folder of frames) where the other is, or one its folder does not let be
    made. Tried: a file opened to append (an existing one is kept as it is) and removed
    again if it was not there; a folder made and removed, or a file made in it."""
    import tempfile
    target = os.path.abspath(path)
    try:
        if folder and os.path.isdir(target):
            tempfile.TemporaryFile(dir=target).close()
        elif folder and not os.path.exists(target):
            os.mkdir(target)
            os.rmdir(target)
        elif os.path.isdir(target):
            raise UsageError(f"{option}: {path!r} is a folder; give a file name")
        elif folder:
            what = "the frames" if option == "--out" else "what it saves"
            raise UsageError(f"{option}: {path!r} is a file, not a folder for {what}; "
                             "give another name")
        else:
            existed = os.path.exists(target)
            open(target, "ab").close()
            if not existed:
                os.remove(target)
    except OSError as exc:
        raise UsageError(f"{option}: cannot write {path!r} ({exc.strerror or exc}); give a "
                         "path in a folder you can write to") from None


def _number(text, option: str, unit: str = "a number of seconds",
            example: str = "1/240") -> float:
    """A time option's value (``--dt 1/240``, ``--seconds 0.5``): a number, or a fraction
    a/b; a UsageError naming ``option`` otherwise."""
    try:
        top, _, bottom = str(text).partition("/")
        return float(top) / float(bottom) if bottom else float(top)
    except (ValueError, ZeroDivisionError):
        raise UsageError(f"{option} must be {unit} or a fraction such as {example}, "
                         f"got {text!r}") from None


def _contact_iterations(text) -> int | None:
    """--contact-iterations (run): None for the world's own budget, else a whole number of
    at least 1 (a UsageError in maxcoord's one line otherwise, not argparse's two)."""
    if text is None:
        return None
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit() and int(digits) >= 1):     # ('²' is a digit)
        raise UsageError(f"--contact-iterations must be a positive whole number, got {text}")
    return int(text)


def _dt(text) -> float | None:
    """--dt (run, render): None for the scene's own step, else a positive number of seconds
    of at least the World's smallest step."""
    from physics.world import MAX_DT, MIN_DT
    if text is None:
        return None
    dt = _number(text, "--dt")
    if not (np.isfinite(dt) and dt > 0):
        raise UsageError(f"--dt must be a positive number, got {text}")
    if dt < MIN_DT:
        raise UsageError(f"--dt must be at least {MIN_DT:g} s, got {text}")
    if dt > MAX_DT:
        raise UsageError(f"--dt must be at most {MAX_DT:g} s, got {text}")
    return dt


# the largest picture side --size takes: 4K and a margin (a frame of 4096 x 4096 is 64 MB,
# and software OpenGL takes seconds a frame there); more is a typo, not a picture
MAX_SIZE = 4096


def _size(text: str) -> tuple[int, int]:
    """--size WIDTHxHEIGHT (view, render): two whole numbers of pixels, each from 1 to
    MAX_SIZE; a one-line UsageError naming --size otherwise."""
    width, x, height = str(text).lower().partition("x")
    try:
        size = int(width), int(height)
    except ValueError:
        size = None
    if not x or size is None:
        raise UsageError(f"--size must be WIDTHxHEIGHT in pixels, such as 640x360, "
                         f"got {text!r}")
    if not all(1 <= side <= MAX_SIZE for side in size):
        raise UsageError(f"--size must be from 1x1 to {MAX_SIZE}x{MAX_SIZE} pixels, "
                         f"got {text!r}")
    return size


def _params(pairs: list[str]) -> dict:
    out = {}
    for item in pairs or []:
        if "=" not in item:
            raise UsageError(f"--param expects key=value, got {item!r}")
        key, value = (part.strip() for part in item.split("=", 1))
        if key in out:        # (the last silently won)
            raise UsageError(f"--param {key} is given twice ({key}={out[key]} and "
                             f"{key}={value}); give it once")
        out[key] = value
    return out


def _load(target: str, params: dict, dt: float | None = None, sleeping: bool = False):
    """The scene, with its world set to sleep when asked (``--sleeping``; a scene that
    sleeps by itself keeps it)."""
    try:
        scene = load_scene_with(target, params, dt)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if sleeping:
        scene.world.sleeping = True
    return scene


def _add_sleeping(parser, drawn: bool, recordings: bool = False):
    parser.add_argument("--sleeping", action="store_true",
                        help="let islands of bodies that have stayed still sleep until something "
                             "touches them (" + ("drawn paler; " if drawn else "")
                             + "default: off, unless the scene turns it on)"
                             + ("; not with a .npz recording, which shows the recorded poses"
                                if recordings else ""))


def _add_param(parser, recordings: bool):
    parser.add_argument("--param", action="append", metavar="NAME=VALUE",
                        help="set one of the scene's parameters, repeatable (their names, "
                             "defaults and units: `maxcoord list SCENE`; default: the scene's "
                             "own)" + ("; not with a .npz recording, which stores its own"
                                       if recordings else ""))


LIST_WIDTH = 100      # characters a line of `maxcoord list` wraps at


def cmd_list(args):
    """Every scene (or the one named): its description, then each parameter with its
    default, unit and meaning."""
    import scenes
    if args.scene is None:
        print("Scenes and their parameters (set with --param NAME=VALUE): NAME = DEFAULT UNIT "
              "and what it sets\n(counts, flags and plain numbers such as friction "
              "coefficients have no unit)\n")
    listed = scenes.names() if args.scene is None else [args.scene]
    for k, name in enumerate(listed):
        try:
            info = scenes.describe(name)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        print("\n".join(_scene_listing(name, info)) + ("\n" if k + 1 < len(listed) else ""))


# the units of a build docstring that `maxcoord list` leaves out: a plain number, a count
# and a flag, whose defaults show what they are
UNSHOWN_UNITS = ("-", "count", "true/false")


def _scene_listing(name: str, info: dict) -> list[str]:
    """Lines of `maxcoord list` for one scene: its name and wrapped description, then a
    line per parameter, ``name = default unit``, its meaning wrapped beside it."""
    import textwrap
    lines = textwrap.wrap(info["description"] or "(no DESCRIPTION)", LIST_WIDTH,
                          initial_indent=f"{name:16s} ", subsequent_indent=" " * 17) or [name]
    parameters = info["parameters"]
    heads = {key: f"{key} = {p['default']} "
                  f"{'' if p['unit'] in UNSHOWN_UNITS else p['unit']}".rstrip()
             for key, p in parameters.items()}
    column = max((len(h) for h in heads.values()), default=0) + 6
    for key, p in parameters.items():
        meaning = p["meaning"] or (f"(not documented: build's docstring has no line "
                                   f"`{key} (unit): meaning`)")
        lines += textwrap.wrap(meaning, LIST_WIDTH,
                               initial_indent=f"    {heads[key]:{column - 4}s}",
                               subsequent_indent=" " * column)
    if not parameters:
        lines.append("    (no parameters)")
    for key in info.get("documented_only", []):
        lines.append(f"    (build's docstring documents {key}, which is not one of PARAMS)")
    return lines


def _progress(done: int, total: int, start: float):
    """A progress bar on a terminal; a line per quarter when stderr is a file or a pipe."""
    width = 30
    frac = done / total if total else 1.0
    if not sys.stderr.isatty():
        quarter = int(4 * frac)
        if quarter > int(4 * (done - 24) / total if total else 0) or done == total:
            sys.stderr.write(f"{100 * frac:5.1f}% ({done}/{total} steps)\n")
        return
    bar = "#" * int(width * frac) + "-" * (width - int(width * frac))
    rate = done / max(time.perf_counter() - start, 1e-9)
    sys.stderr.write(f"\r[{bar}] {100 * frac:5.1f}%  {rate:7.0f} steps/s")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


# steps a run may take: more is a typo (--seconds 1e9, --dt 1e-12), not a run to wait for
MAX_RUN_STEPS = 10**8


def cmd_run(args):
    from render.playback import body_shapes     # (no OpenGL: the recordings' format)
    seconds = _number(args.seconds, "--seconds")
    if not (np.isfinite(seconds) and seconds > 0):
        raise UsageError(f"--seconds must be a positive number, got {args.seconds}")
    dt = _dt(args.dt)
    iterations = _contact_iterations(args.contact_iterations)
    record_path = _output_path(args.record, "--record", ".npz")
    png_path = _output_path(args.png, "--png", ".png")
    if args.frame and not png_path:
        raise UsageError("--frame points the camera of the --png picture; give --png OUT.png "
                         "too, or leave --frame out")
    if png_path:
        from render.backend import forced_quality
        forced_quality()          # (before the run: a ValueError, one line)
    scene = _load(args.scene, _params(args.param), dt, args.sleeping)
    world = scene.world
    if iterations is not None:
        world.contact_iterations = iterations
    steps = int(round(seconds / world.dt))
    if steps < 1:
        raise UsageError(f"--seconds {args.seconds} is less than one step of "
                         f"{world.dt:g} s")
    if steps > MAX_RUN_STEPS:
        raise UsageError(f"--seconds {args.seconds} at steps of {world.dt:g} s would take "
                         f"{steps:.3g} steps (at most {MAX_RUN_STEPS:.0e})")
    # --png's camera is pointed at the start, as render's and the viewer's first view are
    # (a box dropped from 10 m framed at the end was a close-up of it on the ground)
    png_camera = _start_camera(scene) if png_path and not args.frame else scene.camera
    energy = _EnergyLog(world)
    worst_error, max_contacts = world.constraint_error(), 0
    record = {"time": [], "position": [], "orientation": [], "linear_velocity": [],
              "angular_velocity": [], "energy": [], "constraint_error": [], "joint_force": [],
              "joint_torque": [], "joint_coordinate": [], "joint_motor_effort": [],
              "contacts": []}
    coordinated = [j for j in world.joints if hasattr(j, "angle") or hasattr(j, "position")]
    every = max(1, steps // 2000)
    if args.record:                   # (the state it starts from first: E0 is the summary's)
        _sample(record, world, coordinated, worst_error)
    world.reset_profile()
    start = time.perf_counter()
    stopped, planned, steps_before = None, steps, world._steps
    in_controller, interrupted = False, False
    recording = {"shape": (len(world.bodies), len(world.joints)), "cut": None,
                 # the bodies' shapes as built, which playback builds again and checks
                 "built_shapes": body_shapes(world) if record_path else None}
    for i in range(steps):
        try:
            _step(scene, energy)
        except KeyboardInterrupt:    # (world.step puts back a step it was stopped in)
            interrupted, steps = True, i
            break
        except Exception as exc:     # a failed step (StepError: the world is as it was), or
            in_controller = isinstance(exc, _ControllerFailed)   # the scene's controller
            stopped = exc.error if in_controller else exc       # failing: what ran is kept
            steps = i
            break
        max_contacts = max(max_contacts, len(world.contacts))
        energy.after_step(i)
        if i % every == 0 or i == steps - 1:
            err = world.constraint_error()
            worst_error = max(worst_error, err)
            if args.record and recording["cut"] is None:
                _sample_while_the_same(record, recording, world, coordinated, err)
        if not args.quiet and (i % 24 == 0 or i == steps - 1):
            _progress(i + 1, steps, start)
    wall = time.perf_counter() - start
    energy.sample()                         # (the end, also of a run that stopped)
    taken = world._steps - steps_before     # (a controller may step the world itself)
    rows = [
        ("scene", scene.name if scene.title == scene.name else f"{scene.name} ({scene.title})"),
        ("bodies / joints", f"{len(world.bodies)} / {len(world.joints)}"),
        ("sim time", f"{world.time:.3f} s ({taken} steps of {world.dt * 1e3:.3f} ms)"
                     + ("" if taken == steps else
                        f"; the scene's controller stepped the world itself in {steps} calls")),
        ("integrator", f"{world.integrator}, dt {_step_text(world.dt)} s, {world.substeps} "
                       f"sub-step{'s' * (world.substeps != 1)} a step"),
        ("wall time", f"{wall:.2f} s"),
        ("real-time factor", f"{world.time / wall:.2f}x" if wall > 0 else "-"),
        ("step time", f"{wall / max(taken, 1) * 1e3:.3f} ms"),
        ("step time by stage", _stage_shares(world.profile)),
        *_energy_rows(energy, scene, max_contacts, taken),
        ("max constraint error", f"{worst_error:.2e} m"),
        ("contacts (max)", f"{max_contacts}"),
    ]
    if world.sleeping:
        rows.append(("dynamic bodies asleep", _asleep_at_the_end(world)))
    rows += _scene_rows(scene)       # the scene's own figures, under the generic ones
    if recording["cut"] is not None:
        rows.append(("recording", recording["cut"]))
    if stopped is not None:
        sys.stderr.write("\n")
        rows.append(("stopped", f"after {steps} of {planned} steps: "
                                f"{_failed(stopped, in_controller)} (below)"))
    if interrupted:
        sys.stderr.write("\n")
        rows.append(("stopped", f"after {steps} of {planned} steps: interrupted (Ctrl-C)"))
    width = max(len(k) for k, _ in rows)
    print("\n".join(f"{k:<{width}}  {v}" for k, v in rows))
    from render.imagefiles import WriteFailed, writing
    failed = []              # (a recording that cannot be written does not stop the PNG)
    if record_path and record["time"]:
        # a scene file by its absolute path, so the recording plays from any directory
        scene_name = os.path.abspath(scene.name) if scene.name.endswith(".py") else scene.name
        try:
            with writing(record_path):
                np.savez_compressed(
                    record_path, scene=scene_name, params=json.dumps(scene.params),
                    dt=world.dt, joint_coordinate_name=_coordinate_names(coordinated),
                    joint_name=_joint_names(world.joints),
                    body_name=np.array([b.name or "" for b in world.bodies], dtype=str),
                    body_shape=recording["built_shapes"],
                    **{k: np.array(v) for k, v in record.items()})
            print(f"recorded {len(record['time'])} samples to {record_path}")
        except WriteFailed as exc:
            failed.append(exc)
    if png_path:
        try:
            _write_final_frame(scene, png_path, args.frame, png_camera)
        except WriteFailed as exc:
            failed.append(exc)
    if failed:
        raise WriteFailed("; and ".join(map(str, failed)))
    if stopped is not None:
        raise _stopped("run", stopped, world, in_controller)
    if interrupted:
        kept = [path for path in (record_path if record["time"] else None, png_path) if path]
        raise RunInterrupted(f"the run was interrupted at t={world.time:.6g} s"
                             + (f"; what it simulated is kept in {' and '.join(kept)}"
                                if kept else ""))


def _raiser(in_controller: bool) -> str:
    """Who raised what stopped a run or render, where it is not a failed step (StepError):
    the scene's controller, or the world's step (a setting it refuses, such as rk4's)."""
    return "the scene's controller" if in_controller else "the world's step"


def _failed(error: Exception, in_controller: bool) -> str:
    """What stopped a run or render, for its summary table."""
    if isinstance(error, FloatingPointError):
        return "the step failed"
    return f"{_raiser(in_controller)} raised an error"


def _stopped(command: str, error: Exception, world, in_controller: bool) -> RunStopped:
    """The one-line error of a run or render whose step (a StepError, or another exception
    of the world's step) or scene's controller (its traceback is printed first, to show
    where) failed at world.time."""
    stopped = f"the {command} stopped at t={world.time:.6g} s: "
    if isinstance(error, FloatingPointError):
        return RunStopped(stopped + str(error))
    if in_controller:
        traceback.print_exception(error, file=sys.stderr)
    return RunStopped(stopped + f"{_raiser(in_controller)} raised {type(error).__name__}: "
                                f"{error}")


def _step_text(dt: float) -> str:
    """A step as one would write it: 1/240 where it is one over a whole number."""
    n = round(1 / dt)
    return f"1/{n}" if abs(n * dt - 1) < 1e-9 else f"{dt:g}"


# steps between samples of the whole energy (and the start and the last step): world.energy()
# costs 1-4 % of a ready scene's step (60-100 us), so every step would slow a run that much
ENERGY_EVERY = 8

# a largest kinetic energy below this share of the energy's size is rounding, not motion (a
# pendulum hanging still: 2e-22 J of 14.7 J), and the drift is no percentage of it
STILL = 1e-9


class _EnergyLog:
    """The energy over a run: E0, the last sample's, the largest kinetic energy (every
    step's) and the largest |E - E0| (sampled, and when), and what the scene's controller
    put in (``_step``)."""

    def __init__(self, world):
        self.world, self.stats = world, dict(world.stats)
        self.e0 = self.end = world.energy()
        self.ke_max = world.kinetic_energy()
        self.worst, self.worst_at = 0.0, world.time
        self.load_work, self.loaded = 0.0, False
        self.set_energy, self.set_steps, self.uncounted = 0.0, 0, False

    def after_step(self, i: int):
        """After step ``i``: its kinetic energy, towards the largest (a bounce's peak lasts a
        step, which a sample every ENERGY_EVERY steps misses: a ball dropped from 1 m read
        3.93 J of its 4.35 J), ~1 % of a step; every ENERGY_EVERY steps, the whole energy."""
        ke = self.world.kinetic_energy()
        self.ke_max = max(self.ke_max, ke)
        if i % ENERGY_EVERY == 0:
            self.sample(ke)

    def sample(self, ke: float | None = None):
        world = self.world
        ke = world.kinetic_energy() if ke is None else ke
        self.end = ke + world.potential_energy()
        self.ke_max = max(self.ke_max, ke)
        if abs(self.end - self.e0) > self.worst:
            self.worst, self.worst_at = abs(self.end - self.e0), world.time


def _state(world) -> np.ndarray:
    """(n, 13) positions, orientations, velocities and spins of the world's rows, copied."""
    n = world._n
    return np.concatenate((world._x[:n], world._q[:n], world._v[:n], world._w[:n]), axis=1)


def _step(scene, energy: _EnergyLog):
    """``scene.step()``, adding up what its controller puts in: the energy of the state it
    sets (velocities, poses) and the work of the forces and torques it queues for the step
    (apply_force, apply_torque), F . dx + tau . (w0 + w1) dt / 2 on each body."""
    world = scene.world
    if scene.controller is None:
        world.step()
        return
    n, steps, before = world._n, world._steps, _state(world)
    try:
        scene.control()
    except Exception as exc:
        raise _ControllerFailed(exc) from None
    if world._n != n or world._steps != steps:
        energy.uncounted = True              # (it added bodies, or stepped the world itself)
    elif (_state(world) != before).any():
        energy.set_energy += world.energy() - state_energy(
            world, np.split(before, [3, 7, 10], axis=1))
        energy.set_steps += 1
    n = world._n
    if not (world._force[:n].any() or world._torque[:n].any()):
        world.step()
        return
    force, torque = world._force[:n].copy(), world._torque[:n].copy()
    x0, w0 = world._x[:n].copy(), world._w[:n].copy()
    world.step()
    energy.loaded = True
    energy.load_work += float(np.vdot(force, world._x[:n] - x0)
                              + np.vdot(torque, w0 + world._w[:n]) * world.dt / 2)


def _energy_rows(energy: _EnergyLog, scene, max_contacts: int, taken: int) -> list:
    """The summary's energy rows: start and end; the drift and the largest |E - E0| in J and
    as a share of the largest kinetic energy reached (what moves: E0 counts potential energy
    from z = 0); what the controller put in (its loads' work, the state it set); and the steps
    where the engine held the energy on its level or fell back, over which the drift measures
    nothing."""
    e0, e1, ke = energy.e0, energy.end, energy.ke_max
    put = energy.load_work + energy.set_energy        # J, by the controller
    scale = max(abs(e0), abs(e1), energy.worst)       # J, the energy's size
    drift, worst = f"{e1 - e0:+.3g} J", f"{energy.worst:.3g} J"
    if STILL * scale < ke < np.inf:
        drift += f" ({(e1 - e0) / ke * 100:+.3g} % of the largest kinetic energy, {ke:.4g} J)"
        worst += f" ({energy.worst / ke * 100:.3g} %)"
    elif ke == 0:
        drift += " (nothing moved)"
    elif 0 < ke <= STILL * scale:
        drift += f" (nothing moved to speak of: the largest kinetic energy was {ke:.3g} J)"
    # what else changes the energy, told by the sign of the change without the controller's
    note = _energy_note(scene, max_contacts, e1 - e0 > put)
    if (energy.loaded or energy.set_steps) and abs(put) > STILL * scale:
        by_controller = ("; the scene's controller puts energy in" if put > 0 else
                         "; the scene's controller takes energy out")
        # (the reason that goes the change's way first)
        note = by_controller + note if (put > 0) == (e1 - e0 > 0) else note + by_controller
    # "drift" is the integrator's error: only where nothing else may change the energy
    changed = note or energy.loaded or energy.set_steps or energy.uncounted
    rows = [("energy start / end", f"{e0:.4g} J / {e1:.4g} J"),
            ("energy change" if changed else "energy drift",
             drift + ("" if energy.uncounted else note)),
            ("energy |E - E0| max", f"{worst} at t = {energy.worst_at:.3f} s, sampled every "
                                    f"{ENERGY_EVERY} steps")]
    put_in = ([f"{energy.load_work:+.3g} J of work by the forces and torques it applied"]
              if energy.loaded else [])
    if energy.set_steps:
        put_in.append(f"{energy.set_energy:+.3g} J by the velocities and poses it set (in "
                      f"{energy.set_steps} step{'s' * (energy.set_steps != 1)})")
    if energy.uncounted:
        put_in.append("not known: it added or removed bodies, or stepped the world itself")
    elif put_in and np.isfinite(put):
        # (a drift only where nothing else may change the energy: the gears' servo is a
        # motor, whose work is not counted, and its 48.6 J read as the integrator's error)
        without = _energy_note(scene, max_contacts, e1 - e0 > put)
        put_in.append(f"the change without it: {e1 - e0 - put:+.3g} J, not all drift"
                      f"{without.replace(';', ':', 1)}" if without else
                      f"the drift without it: {e1 - e0 - put:+.3g} J")
    if put_in:
        rows.append(("controller put in", "; ".join(put_in)))
    stats = {k: v - energy.stats.get(k, 0) for k, v in scene.world.stats.items()}
    restores = stats["energy_restores"]
    if restores:       # (one in a hundred steps or more: the level is what the drift shows)
        rows.append(("energy held", f"on its level by rescaling the velocities in {restores} "
                                    f"of {taken} steps" + (", so the drift measures nothing"
                                                           if restores * 100 >= taken else "")))
    fell_back = [f"{stats[k]} {what}" for k, what in (("stiff_steps", "stiff steps"),
                 ("splits", "splits"), ("projections", "projections")) if stats[k]]
    if fell_back:
        rows.append(("fallback steps", ", ".join(fell_back) + f" in {taken} steps"))
    return rows


def _scene_rows(scene) -> list[tuple[str, str]]:
    """The scene's own summary rows (a failing summary() is one row saying so rather than
    taking the table with it)."""
    try:
        return scene.summary()
    except Exception as exc:
        return [("summary()", f"failed: {type(exc).__name__}: {exc}")]


def _sample_while_the_same(record, recording, world, coordinated, err):
    """Sample the state (``_sample``) while the bodies and joints are those the recording
    began with; after the scene changes them, the recording ends there, and says so (its
    arrays hold one set of bodies)."""
    shape = (len(world.bodies), len(world.joints))
    if shape != recording["shape"]:
        recording["cut"] = (f"ends at t={record['time'][-1]:.3f} s: then the scene went from "
                            f"{recording['shape'][0]} bodies and {recording['shape'][1]} joints "
                            f"to {shape[0]} and {shape[1]}")
        return
    _sample(record, world, coordinated, err)


def _asleep_at_the_end(world) -> str:
    """How many of the dynamic bodies sleep (static ones, the ground plane among them, never
    sleep and are not counted)."""
    dynamic = np.array([not body.static for body in world.bodies], dtype=bool)
    asleep = np.count_nonzero(np.asarray(world.asleep, dtype=bool) & dynamic)
    return f"{asleep} of {np.count_nonzero(dynamic)} at the end"


def _sample(record: dict, world, coordinated, err: float):
    """Append the world's state now to the recording's series (``run --record``)."""
    record["time"].append(world.time)
    record["position"].append(world.positions.copy())
    record["orientation"].append(world.orientations.copy())
    record["linear_velocity"].append(world.linear_velocities.copy())
    record["angular_velocity"].append(world.angular_velocities.copy())
    record["energy"].append(world.energy())
    record["constraint_error"].append(err)
    record["joint_force"].append(world.joint_forces)
    record["joint_torque"].append(world.joint_torques)
    record["joint_coordinate"].append(
        [j.angle if hasattr(j, "angle") else j.position for j in coordinated])
    record["joint_motor_effort"].append(
        [j.motor_effort if hasattr(j, "motor_effort") else np.nan for j in coordinated])
    record["contacts"].append(len(world.contacts))


def _joint_names(joints) -> np.ndarray:
    """A label for each joint, in the order of the recorded joint_force and joint_torque: its
    name, or its kind and index."""
    return np.array([j.name or f"{type(j).__name__} {k}" for k, j in enumerate(joints)],
                    dtype=str)


def _coordinate_names(coordinated) -> np.ndarray:
    """A label for each recorded joint coordinate: the joint's name, or its kind and index and
    the body it moves, with the unit (rad for an angle, m for a slider's position)."""
    def label(k, joint):
        moved = f" ({joint.body_b.name})" if joint.body_b.name else ""
        unit = "rad" if hasattr(joint, "angle") else "m"
        return f"{joint.name or f'{type(joint).__name__} {k}{moved}'}, {unit}"
    return np.array([label(k, j) for k, j in enumerate(coordinated)], dtype=str)


def _stage_shares(profile: dict) -> str:
    """The stages' shares of the steps' time (``World.profile``), in the pipeline's order."""
    total = profile["total"]
    if total <= 0:
        return "-"
    return ", ".join(f"{stage} {profile[stage] / total * 100:.0f} %" for stage in STAGES)


def _energy_note(scene, max_contacts: int, gained: bool) -> str:
    """Why the energy may rightly change: only a mechanism left alone must keep it."""
    world = scene.world
    # a joint's own motor (hinge, slider) and its coordinates' (cylindrical, universal)
    drives = [d for j in world.joints for d in
              [j] + [getattr(j, name, None) for name in ("turning", "sliding", "turning_a",
                                                         "turning_b")]]
    if any(getattr(d, "_motor", (0.0,))[0] != 0.0 for d in drives):
        return "; motors do work"
    damped = any(b.linear_damping or b.angular_damping for b in world.bodies if not b.static)
    rubbing = any(getattr(d, "_friction", 0.0) for d in drives)     # (frictionloss)
    takers = [what for what, present in (("damping", damped), ("joint friction", rubbing))
              if present]
    if takers and not gained:
        return (f"; {' and '.join(takers)} take{'s' * (len(takers) == 1)} energy out"
                + (", and inelastic contacts and friction" if max_contacts else ""))
    if max_contacts:
        return ("; contacts pushing bodies out of overlap can add some" if gained else
                "; inelastic contacts and friction take energy out")
    return ""


PNG_SIZE = (1280, 720)


def _start_camera(scene):
    """The camera the viewer and render first show ``scene`` with (numpy only, no OpenGL)."""
    from render.scenedata import WorldGeometry, initial_camera
    return initial_camera(scene.camera, WorldGeometry(scene.world), PNG_SIZE[0] / PNG_SIZE[1])


def _write_final_frame(scene, out: str, frame: bool = False, camera=None):
    """The last state, drawn from ``camera`` (default the scene's; ``frame``: pointed at every
    body), as a PNG (needs the [viewer] extra and an OpenGL driver: EGL without a display, or
    any X server)."""
    try:
        from render.imagefiles import write_png
        from render.offscreen import render_image
        image = render_image(scene.world, camera=scene.camera if camera is None else camera,
                             size=PNG_SIZE, frame=frame)
    except ImportError as exc:
        raise UsageError(f"--png needs the viewer extra (pip install -e '.[viewer]'): {exc}") from None
    except Exception as exc:
        raise UsageError(f"--png could not open an OpenGL context ({type(exc).__name__}: {exc}); "
                         "install Debian's libegl1 and libgl1, or run under xvfb-run") from None
    write_png(out, image)
    print(f"wrote the final frame to {out}")


def cmd_bench(args):
    """The benchmarks asked for (all physics ones by default), checked before any is run."""
    from tools import bench
    names = args.names or None
    out = _output_path(args.out, "--out", ".json")
    try:
        bench.check_names(names or [])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        report = bench.run(names, out, progress=lambda text: print(text, file=sys.stderr,
                                                                   flush=True))
    except ImportError as exc:
        raise UsageError(f"bench render needs the viewer extra (pip install -e '.[viewer]'): "
                         f"{exc}") from None
    print(json.dumps(report, indent=2))


def _is_recording(target: str) -> bool:
    """A ``.npz`` path, or an existing non-.py file that is a zip archive (what numpy's
    savez writes)."""
    if target.lower().endswith(".npz"):
        return True
    if target.endswith(".py") or not os.path.isfile(target):
        return False
    try:
        with open(target, "rb") as f:
            return f.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def _open_recording(target: str, param, sleeping: bool):
    """(scene, playback) for a recording made by ``run --record``; errors are UsageErrors."""
    if param:
        raise UsageError("--param cannot be used with a recording: "
                         "it stores its scene's parameters")
    if sleeping:
        raise UsageError("--sleeping cannot be used with a recording: it plays the recorded "
                         "poses (sleep it with run --sleeping --record)")
    from render.playback import open_recording
    try:
        scene, playback = open_recording(target, load_scene=load_scene_with)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    scene.title = f"{scene.title} - recording {os.path.basename(target)}"
    return scene, playback


def cmd_view(args):
    from render.backend import NoDisplayError
    try:
        _view(args)
    except NoDisplayError as exc:
        raise UsageError(str(exc)) from None


def _view(args):
    import scenes
    from render.commands import view_command
    time_scale = _number(args.time_scale, "--time-scale", "a number", "1/4")
    if not (np.isfinite(time_scale) and time_scale > 0):
        raise UsageError(f"--time-scale must be a positive number, got {args.time_scale}")
    window = dict(size=_size(args.size), paused=args.paused, time_scale=time_scale)
    if args.screenshot_dir is not None:
        _check_writable(args.screenshot_dir, "--screenshot-dir", folder=True)
        window["screenshot_dir"] = args.screenshot_dir
    if _is_recording(args.scene):
        scene, playback = _open_recording(args.scene, args.param, args.sleeping)
        view_command(scene, playback=playback, **window)
        return
    scene = _load(args.scene, _params(args.param), sleeping=args.sleeping)
    # started on a registry scene, N / P step through the registry
    listed = scenes.names() if args.scene in scenes.names() else None
    view_command(scene, scenes=listed, load_scene=load_scene if listed else None, **window)


def _render_output(path: str) -> str:
    """render's --out, checked before any work as run's outputs are: its suffix is .png,
    .gif or .mp4 (or none, or a trailing /: a folder of frames), the folder it goes in
    exists (a folder of frames is made, but not its parent) and it can be written."""
    from render.imagefiles import check_output
    try:
        kind = check_output(path, "--out")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_writable(path, "--out", folder=kind == "folder")
    return kind


def _check_render_numbers(seconds: float | None, fps: float, kind: str):
    """render's --seconds and --fps, before any work (a GIF plays at most 50 fps). A clip
    takes positive seconds, as run does; a still takes 0 too: the state at the start."""
    if seconds is not None and not (np.isfinite(seconds) and seconds >= 0):
        raise UsageError(f"--seconds must be a finite number of seconds >= 0, got {seconds:g}")
    if seconds == 0 and kind != "png":
        raise UsageError("--seconds must be positive for a clip or frames, got 0; a .png "
                         "--out takes 0 (the state at the start)")
    if not (np.isfinite(fps) and fps > 0):
        raise UsageError(f"--fps must be a positive finite number of frames per second, "
                         f"got {fps:g}")
    if kind == "gif":
        from render.imagefiles import check_gif_fps
        try:
            check_gif_fps(fps, "--fps")
        except ValueError as exc:
            raise UsageError(str(exc)) from None


def _rendered(done: dict, asked: float, stopped_at: float | None = None) -> str:
    """What render wrote: a still's time, or a clip's frames and the seconds it plays (and
    that they are the seconds asked, to whole frames, when they differ, or where the run
    stopped, at ``stopped_at``)."""
    if done["kind"] == "png":
        return (f"wrote {done['out']} (the state at t = {done['sim_time']:.2f} s"
                + (", where it stopped)" if stopped_at is not None else ")"))
    frames, fps, duration = done["frames"], done["fps"], done["duration"]
    text = f"wrote {done['out']} ({frames} frame{'s' * (frames != 1)} at {fps:g} fps: " \
           f"{duration:.2f} s"
    if stopped_at is not None:
        text += f"; the run stopped at t={stopped_at:.6g} s"
    elif abs(duration - asked) > 1e-9:
        text += f"; the {asked:g} s asked, in whole frames of 1/{fps:g} s"
    removed = done.get("removed", 0)
    if removed:
        text += f"; removed {removed} older frame_NNNNN.png first"
    return text + ")"


def _followed(world, text: str | None, source: str) -> int | None:
    """render's --follow: the index of the body it names, by name or index as plot --body
    takes it (before any work)."""
    if text is None:
        return None
    from physics.shapes import Plane
    from tools.bodies import body_index
    try:
        index = body_index("--follow", text, [b.name for b in world.bodies], len(world.bodies),
                           source)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if isinstance(world.bodies[index].shape, Plane):
        # (it followed the ground, which never moves, without a word)
        raise UsageError(f"--follow {text!r} is a ground plane, which never moves: follow a "
                         "body that does (a name or index), or leave --follow out for the "
                         "scene's own camera")
    return index


def cmd_render(args):
    from render.commands import render_command
    from render.offscreen import RenderStopped
    if args.frame and args.follow is not None:
        raise UsageError("--frame and --follow both point the camera; give one of them")
    if args.shadows and args.no_shadows:
        raise UsageError("--shadows and --no-shadows contradict each other; give one (shadows "
                         "are drawn unless --no-shadows is given)")
    kind = _render_output(args.out)
    asked = None if args.seconds is None else _number(args.seconds, "--seconds")
    fps = _number(args.fps, "--fps", "a number of frames per second", "30000/1001")
    _check_render_numbers(asked, fps, kind)
    size, dt = _size(args.size), _dt(args.dt)
    if kind == "gif" and importlib.util.find_spec("PIL") is None:
        print("maxcoord: note: Pillow is not installed (it comes with the [viewer] extra): the "
              "GIF is written with a fixed palette and no compression, about 9 times larger "
              "(pip install pillow)", file=sys.stderr)
    if kind == "mp4" and (size[0] % 2 or size[1] % 2):
        even = tuple(side + side % 2 for side in size)
        print(f"maxcoord: note: --size {size[0]}x{size[1]} is padded to {even[0]}x{even[1]} "
              "in the .mp4 (its H.264 video takes even sides only)", file=sys.stderr)
    drawing = dict(frame=args.frame, follow=args.follow, contacts=args.contacts,
                   joints=args.joints, shadows=not args.no_shadows, quality=args.quality,
                   progress=not args.quiet)
    if _is_recording(args.scene):
        if dt is not None:
            raise UsageError("--dt cannot be used with a recording: it plays the recorded "
                             "poses (record with run --dt)")
        if args.contacts:
            raise UsageError("--contacts cannot be used with a recording: it holds no "
                             "contacts (the viewer's C key is off in playback too)")
        scene, playback = _open_recording(args.scene, args.param, args.sleeping)
        drawing["follow"] = _followed(scene.world, args.follow, args.scene)
        seconds = playback.duration if asked is None else asked
        if seconds > playback.duration:
            raise UsageError(f"--seconds {seconds:g} is longer than the recording "
                             f"({playback.duration:g} s)")
        done = render_command(scene, seconds=seconds, out=args.out, fps=fps, size=size,
                              playback=playback, **drawing)
    else:
        scene = _load(args.scene, _params(args.param), dt, args.sleeping)
        drawing["follow"] = _followed(scene.world, args.follow, args.scene)
        seconds = 5.0 if asked is None else asked
        try:
            done = render_command(scene, seconds=seconds, out=args.out, fps=fps,
                                  size=size, **drawing)
        except RenderStopped as stop:        # (what was rendered up to there is written)
            print(_rendered(stop.done, seconds, stopped_at=scene.world.time))
            _print_notes(stop.done)
            raise _stopped("render", stop.error, scene.world, stop.in_controller) from None
    print(_rendered(done, seconds))
    _print_notes(done)


def _print_notes(done: dict):
    """render's notes (a --follow body the scene removed part-way) on stderr, a line each."""
    for note in done.get("notes", ()):
        print(f"maxcoord: note: --follow: {note}", file=sys.stderr)


def cmd_plot(args):
    from tools.plot import plot_recording, series_names
    out = _output_path(args.out, "--out", ".png")
    if args.series is not None and not args.body:
        raise UsageError("--series needs --body: the bodies whose series to plot")
    try:
        series = None if args.series is None else series_names(args.series)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    bodies = [name.strip() for names in args.body or [] for name in names.split(",")]
    print(f"wrote {plot_recording(args.recording, out, bodies, series)}")


class _Parser(argparse.ArgumentParser):
    """argparse's parser, taking any word that starts with '-' and a digit or a point as a
    value, as it already takes -3 and -0.5: `--size -640x360` or `--dt -1/240` are then
    refused by the option's own check, which says what it takes, rather than by argparse's
    'expected one argument'. (No option of maxcoord's is spelt that way; subcommands'
    parsers are made of this class too.)"""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-[\d.]")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="maxcoord", description="maximal-coordinate rigid-body "
                                "physics: scenes, runs, benchmarks, a viewer and rendering "
                                "(`maxcoord COMMAND --help` for each command's options)")
    sub = p.add_subparsers(dest="command", required=True)
    for add in (_list_parser, _run_parser, _bench_parser, _view_parser, _render_parser,
                _plot_parser):
        add(sub)
    return p


def _command(sub, name: str, text: str, func):
    """A subcommand whose one-line ``text`` is both its entry in the top-level help and its
    own help's description."""
    s = sub.add_parser(name, help=text, description=text)
    s.set_defaults(func=func)
    return s


def _list_parser(sub):
    s = _command(sub, "list", "list the scenes with their descriptions and parameters (each "
                 "with its default, unit and meaning)", cmd_list)
    s.add_argument("scene", nargs="?", default=None,
                   help="one scene (a name, a .py file or a .urdf robot) to describe "
                        "(default: all)")


def _run_parser(sub):
    s = _command(sub, "run", "run a scene headless and print a summary", cmd_run)
    s.add_argument("scene", help="scene name (see `maxcoord list`), a .py file defining "
                   "build(world), or a .urdf robot")
    s.add_argument("--seconds", default="10", metavar="S",
                   help="simulated time to run, in s, a number or a fraction a/b (default 10)")
    s.add_argument("--dt", default=None, metavar="DT",
                   help="step size, in s, a number or a fraction such as 1/240 (default: the "
                        "scene's; 1/240 for the ready scenes)")
    _add_param(s, recordings=False)
    s.add_argument("--record", metavar="OUT.npz",
                   help="save time series (up to 4000 samples: every step, or every k-th "
                        "of a long run) of poses, velocities, energy, "
                        "constraint error, joint forces and coordinates to this .npz, for "
                        "`maxcoord plot` and `view` (default: none)")
    s.add_argument("--png", metavar="OUT.png",
                   help="draw the final state to this 1280x720 PNG (OpenGL, no display "
                        "needed; default: none)")
    _add_frame(s, "in the --png")
    s.add_argument("--quiet", action="store_true",
                   help="no progress bar on stderr (default: a bar on a terminal, a line per "
                        "quarter otherwise)")
    s.add_argument("--contact-iterations", default=None, metavar="N",
                   help="iteration budget of the iterative contact solve per step (default "
                        "60; 20-30 trade accuracy for speed in big piles, 120 buys accuracy)")
    _add_sleeping(s, drawn=False)


def _bench_parser(sub):
    from tools import bench
    names = bench.all_names()
    s = _command(sub, "bench", f"run benchmarks and print their JSON report ({', '.join(names)};"
                 " every report carries machine)", cmd_bench)
    s.add_argument("names", nargs="*", metavar="NAME",
                   help="which benchmarks: " + "; ".join(f"{n}: {bench.ABOUT[n]}" for n in names)
                        + f" (default: all but {', '.join(bench.ON_REQUEST)}, which runs only "
                        "when named)")
    s.add_argument("--out", metavar="OUT.json",
                   help="also write the JSON report to this .json file, checked before any "
                        "benchmark runs (default: printed only)")


def _view_parser(sub):
    s = _command(sub, "view", "open the interactive viewer on a scene, or play back a "
                 "recording (.npz from `run --record`) with a timeline", cmd_view)
    s.add_argument("scene", help="scene name, a .py scene file, a .urdf robot, or a .npz "
                   "recording")
    _add_param(s, recordings=True)
    s.add_argument("--size", default="1280x720", metavar="WxH",
                   help=f"window size in pixels, each side at most {MAX_SIZE} (default "
                        "1280x720)")
    s.add_argument("--paused", action="store_true",
                   help="start paused (Space runs, '.' steps once; default: running)")
    s.add_argument("--time-scale", default="1", metavar="X",
                   help="simulated seconds per wall second, a number or a fraction such as 1/4 "
                        "(default 1; +/- change it)")
    s.add_argument("--screenshot-dir", default=None, metavar="DIR",
                   help="the folder the S key saves screenshots in, made if need be (default: "
                        "the working folder)")
    _add_sleeping(s, drawn=True, recordings=True)


def _render_parser(sub):
    s = _command(sub, "render", "render a scene (or a .npz recording's playback) offscreen to "
                 ".png/.gif/.mp4 or a folder of PNG frames", cmd_render)
    s.add_argument("scene", help="scene name, a .py scene file, a .urdf robot, or a .npz "
                   "recording")
    s.add_argument("--seconds", default=None, metavar="S",
                   help="simulated time to render, in s (a number or a fraction a/b): a clip "
                        "of round(S * fps) frames, or "
                        "a .png of the state after S (default: 5 for a scene, the whole "
                        "recording for a .npz)")
    s.add_argument("--out", required=True, metavar="OUT",
                   help="where to write (required): a .png still, a .gif or .mp4 clip, or a "
                        "folder of numbered PNG frames (a path ending in / or without a "
                        "suffix, new, empty or holding only an earlier render's "
                        "frame_NNNNN.png, which are removed first); the folder it goes in "
                        "must exist")
    s.add_argument("--fps", default="30", metavar="N",
                   help="frames per second of a clip, frame k showing t = k / N s, a number "
                        "or a fraction a/b (default 30; a GIF at most 50)")
    s.add_argument("--size", default="1280x720", metavar="WxH",
                   help=f"picture size in pixels, each side at most {MAX_SIZE} (default "
                        "1280x720; a GIF at 640x360 takes about a third of the bytes)")
    s.add_argument("--dt", default=None, metavar="DT",
                   help="step size, in s, a number or a fraction such as 1/240 (default: the "
                        "scene's; 1/240 for the ready scenes; not with a recording)")
    _add_frame(s, "at the start (a .png: at the end)")
    s.add_argument("--follow", default=None, metavar="BODY",
                   help="keep the camera, its angles kept, on this body (its name, or its "
                        "index in world.bodies, as plot --body takes it), as "
                        "the viewer's T key follows the selected body, close enough that "
                        "the body spans about a third of the picture's height (e.g. "
                        "--follow chassis for the car; default: the scene's own camera); not "
                        "with --frame")
    s.add_argument("--contacts", action="store_true",
                   help="draw the contact points and normals, as the viewer's C key (default: "
                        "off; not with a recording, which holds no contacts)")
    s.add_argument("--joints", action="store_true",
                   help="draw the joints' anchors and axes, as the viewer's J key (default: "
                        "off)")
    # (two flags, not argparse's BooleanOptionalAction, whose last word silently won when
    # both were given)
    s.add_argument("--shadows", action="store_true",
                   help="draw shadows (the default; --no-shadows leaves them out)")
    s.add_argument("--no-shadows", action="store_true",
                   help="leave the shadows out (default: they are drawn)")
    s.add_argument("--quality", choices=("fast", "full"), default=None,
                   help="fast: contact shadows and a vertex-coloured sky; full: a shadow map "
                        "and per-pixel fog, grid and sky, as the viewer's Q key (default: "
                        "MAXCOORD_RENDER_QUALITY if set, else fast on a software rasteriser "
                        "and full on a GPU)")
    s.add_argument("--quiet", action="store_true",
                   help="no progress bar on stderr (default: a bar on a terminal, a line per "
                        "quarter otherwise)")
    _add_param(s, recordings=True)
    _add_sleeping(s, drawn=True, recordings=True)


def _add_frame(s, when: str):
    s.add_argument("--frame", action="store_true",
                   help=f"point the camera, its angles kept, so that every body is in view "
                        f"{when}, as the viewer's F key does (default: the scene's own "
                        "camera, which may not fit a scene made bigger with --param)")


def _plot_parser(sub):
    from tools.plot import BODY_SERIES, DEFAULT_SERIES
    s = _command(sub, "plot", "plot energy, constraint error and joint coordinates of a "
                 "recording against time, or chosen bodies' positions and velocities (needs "
                 "matplotlib)", cmd_plot)
    s.add_argument("recording", help="a .npz written by `maxcoord run --record`")
    s.add_argument("--out", default="plot.png", metavar="OUT.png",
                   help="the .png to write (default plot.png)")
    s.add_argument("--body", action="append", metavar="NAME",
                   help="plot this body's series instead, by its name or its index in "
                        "world.bodies; repeatable, or a comma-separated list (default: none, "
                        "the energy, constraint error and joint coordinates)")
    s.add_argument("--series", default=None, metavar="LIST",
                   help=f"with --body: which of {', '.join(BODY_SERIES)} (position in m, "
                        "velocity in m/s, speed, angular velocity in rad/s; world frame), "
                        f"comma-separated (default {DEFAULT_SERIES}: height and vertical "
                        "velocity)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except UsageError as exc:
        print(f"maxcoord: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:   # bad values reaching the physics (e.g. a scene parameter)
        print(f"maxcoord: error: {exc}", file=sys.stderr)
        return 2
    except RunStopped as exc:
        print(f"maxcoord: error: {exc}", file=sys.stderr)
        return 1
    except RunInterrupted as exc:
        print(f"maxcoord: {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:         # (maxcoord list | head: the reader has all it wants)
        sys.stdout = open(os.devnull, "w")
        return 0
    except OSError as exc:
        from render.imagefiles import WriteFailed
        if not isinstance(exc, WriteFailed):
            raise
        # an output that could not be written part-way (a full disk): its partial file
        # removed (the OSError's traceback, or for an .mp4 a corrupt file said to be written)
        print(f"maxcoord: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
