"""Finding, describing and building scenes (from the registry or from a user's file)."""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import math
import os
import re
import sys
import traceback
from dataclasses import dataclass, field
from typing import Callable

from physics import World
from physics.validation import close_names

SCENES = ("pendulum", "double_pendulum", "chain", "fourbar", "gyroscope", "newtons_cradle", "box_pyramid", "dominoes", "marbles", "ragdoll", "ragdoll_pile", "humanoid_box", "car", "stewart", "gears", "whiteboard", "wrecking_ball")


@dataclass
class Scene:
    name: str
    title: str
    description: str
    world: World
    params: dict
    camera: dict = field(default_factory=dict)
    controller: Callable | None = None

    def step(self, n: int = 1):
        """Advance n steps, calling the controller before each."""
        for _ in range(n):
            if self.controller is not None:
                self.control()
            self.world.step()

    def control(self):
        """Call the controller once, as ``controller(world)``, or ``controller(world, dt)``
        where it takes the step too (as the viewer's controllers may)."""
        controller = self.controller
        read = self.__dict__.get("_read_signature")      # (reading it cost ~50 calls a step)
        if read is None or read[0] is not controller:
            read = self._read_signature = (controller, _takes_the_world(controller))
        if read[1]:
            controller(self.world)
        else:
            controller(self.world, self.world.dt)

    def rebuilt(self) -> "Scene":
        """The same scene built again, from its start, into a new world: its parameters and
        the world's dt; a new controller, so none of the old one's state (the viewer's R)."""
        return load_with(self.name, self.params, self.world.dt)

    def summary(self) -> list[tuple[str, str]]:
        """Scene-specific (label, value) lines for a run's summary (``maxcoord run`` prints
        them under its table): the controller's ``summary()``, if it has one, else none."""
        lines = getattr(self.controller, "summary", None)
        return [_summary_row(k, row) for k, row in enumerate(lines())] if callable(lines) else []


def _summary_row(k: int, row) -> tuple[str, str]:
    """A summary() row as (label, value) strings; one that is not a pair says so."""
    if isinstance(row, (tuple, list)) and len(row) == 2:
        return str(row[0]), str(row[1])
    return f"summary() row {k}", f"is not a (label, value) pair: {row!r}"


def names() -> list[str]:
    return sorted(SCENES)


def _module(name: str):
    if name in SCENES:
        return importlib.import_module(f"scenes.{name}")
    if name.endswith(".py"):
        if not os.path.isfile(name):
            raise ValueError(f"scene file {name!r} does not exist")
        spec = importlib.util.spec_from_file_location(os.path.basename(name)[:-3], name)
        module = importlib.util.module_from_spec(spec)
        try:
            with _importable_from(os.path.dirname(os.path.abspath(name))):
                spec.loader.exec_module(module)
        except Exception as exc:
            raise ValueError(f"scene file {name!r} failed to load: {exc}") from None
        if not hasattr(module, "build"):
            raise ValueError(f"scene file {name!r} defines no build(world) function")
        if not callable(module.build):
            raise ValueError(f"scene file {name!r}: build must be a function build(world), "
                             f"got {type(module.build).__name__} {module.build!r}")
        return module
    if name.endswith(".urdf"):
        from .urdf_file import scene_module
        return scene_module(name)
    if os.path.isfile(name):
        raise ValueError(f"{name!r} is not a scene: a scene file is a .py file that defines "
                         f"build(world), or a .urdf robot (choose a ready one of: "
                         f"{', '.join(names())})")
    close = close_names(name, names())
    hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
    raise ValueError(f"unknown scene {name!r}; {hint}choose one of: {', '.join(names())} "
                     "(or give a .py file that defines build(world))")


def _takes_the_world(controller, *more) -> bool:
    """Whether ``controller(world, *more)`` binds to its signature (true where it has none
    to read, as some built-in callables)."""
    try:
        inspect.signature(controller).bind(None, *more)
    except TypeError:
        return False
    except ValueError:          # (no signature to read)
        pass
    return True


@contextlib.contextmanager
def _importable_from(folder: str):
    """Modules in ``folder`` importable while a scene file there loads, as ``python file.py``
    would have them (``from helper import ball``), without leaving sys.path changed."""
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        yield
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)


def describe(name: str) -> dict:
    """A scene's name, title, description, ``params`` (the defaults) and ``parameters``:
    for each, its default, unit and meaning, as its build docstring's "Parameters:"
    section gives them (empty strings where it gives none), and ``documented_only``: the
    names that section documents but PARAMS does not have."""
    m = _module(name)
    defaults, _, _ = _settings(name, m)
    documented = parameter_docs(getattr(m, "build", None))
    parameters = {key: {"default": value, **documented.get(key, {"unit": "", "meaning": ""})}
                  for key, value in defaults.items()}
    return {"name": name, "title": getattr(m, "TITLE", name),
            "description": getattr(m, "DESCRIPTION", "") or _first_paragraph(m.__doc__),
            "params": defaults,
            "parameters": parameters,
            "documented_only": [key for key in documented if key not in defaults]}


def _first_paragraph(doc: str | None) -> str:
    """A scene file's module docstring's first paragraph on one line (what `maxcoord list`
    shows of a file without DESCRIPTION), or ""."""
    return " ".join((doc or "").strip().split("\n\n")[0].split())


# a parameter's line in a build docstring's "Parameters:" section: "name (unit): meaning",
# or "name: meaning" for one without a unit (a user wrote `mu: Coulomb friction`, and it
# went on the meaning of the parameter above it)
_PARAMETER_LINE = re.compile(r"^(\s*)(\w+)(?: \(([^()]+)\))?: (.+)$")
# the line that starts the section: "Parameters:" alone, or with the first entry after it
# ("Parameters: speed (m/s): ...": the whole section was lost)
_SECTION_HEAD = re.compile(r"^Parameters:(?:\s*$|\s+(\w+(?: \([^()]+\))?: .+)$)")


def parameter_docs(build) -> dict[str, dict[str, str]]:
    """{name: {"unit", "meaning"}} from the "Parameters:" section of ``build``'s docstring:
    one line per parameter, ``name (unit): meaning`` or ``name: meaning`` (unit "-"), the
    meaning going on over lines indented deeper; the section ends at a blank line. The unit
    is "-" for a number without one, "count" for a whole number of things, "true/false"
    for a flag."""
    doc = inspect.getdoc(build) if build is not None else None
    lines = [line.rstrip() for line in (doc or "").splitlines()]
    heads = [k for k, line in enumerate(lines) if _SECTION_HEAD.match(line.strip())]
    if not heads:
        return {}
    # (the section's lines are indented as the docstring's body, or not at all where the
    # docstring starts with it: getdoc dedents the lines after the first; so an entry is
    # any line at the first entry's indent, deeper ones go on its meaning; an entry on the
    # "Parameters:" line itself leaves the next entry's line to set that indent)
    found, indent, last = {}, None, None
    head = _SECTION_HEAD.match(lines[heads[0]].strip()).group(1)
    if head:
        entry = _PARAMETER_LINE.match(head)
        last = entry.group(2)
        found[last] = {"unit": entry.group(3) or "-", "meaning": entry.group(4)}
    for line in lines[heads[0] + 1:]:
        if not line.strip():
            break
        entry = _PARAMETER_LINE.match(line)
        if entry and (indent is None or len(entry.group(1)) == indent):
            indent, last = len(entry.group(1)), entry.group(2)
            found[last] = {"unit": entry.group(3) or "-", "meaning": entry.group(4)}
        elif last is not None:
            found[last]["meaning"] += " " + line.strip()
    return found


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")

# a number parameter's text (--param): a sign, a number or a multiple of pi, and a divisor:
# 0.5, -1e-3, 1/3, pi, pi/2, -pi/4, 3pi/4, 2*pi, 0.5*pi. Read by this pattern, never eval()
_NUMBER = r"(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?"
_NUMBER_TEXT = re.compile(rf"([+-]?)(?:({_NUMBER})(?:\*(?=pi))?)?(pi)?(?:/({_NUMBER}))?")
NUMBER_EXAMPLES = "0.5, 1/3, pi/2, -3pi/4 or 2*pi"


def parse_number(text: str) -> float:
    """A number from its text: ``[sign] [number][*]pi [/ number]`` (either the number or pi
    may be left out, not both): '1/3', 'pi/2', '-pi/4', '3pi/4', '0.5*pi', '2.5e-3'.
    NaN where the text is none of these (or divides by zero)."""
    match = _NUMBER_TEXT.fullmatch(text.strip().lower())
    if not match or not (match.group(2) or match.group(3)):
        return math.nan
    sign, factor, pi, divisor = match.groups()
    value = (float(factor) if factor else 1.0) * (math.pi if pi else 1.0)
    if divisor is not None:
        if float(divisor) == 0:
            return math.nan
        value /= float(divisor)
    return -value if sign == "-" else value


# a parameter whose documented meaning names inf ("winch_time (s): ... (inf: never)") takes it
_NAMES_INFINITY = re.compile(r"(?<![\w.])[+-]?inf\b")
_INFINITY_TEXT = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf, "infinity": math.inf,
                  "+infinity": math.inf, "-infinity": -math.inf}


def _takes_infinity(build) -> set[str]:
    """The parameters of ``build`` whose docstring's meaning names inf: they take +-inf."""
    return {key for key, doc in parameter_docs(build).items()
            if _NAMES_INFINITY.search(doc["meaning"])}


def _coerce(name, key, value, default, infinite: bool = False):
    if isinstance(value, str) and isinstance(default, bool):     # bool("False") is True
        if value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        raise ValueError(f"parameter {key}={value!r} of scene {name!r} must be a bool "
                         "(true/false, yes/no, 1/0)")
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) \
            and isinstance(default, (int, float)) and not isinstance(default, bool):
        whole = isinstance(default, int)     # (a string from --param, or a number: a
        # recording's params may hold JSON's NaN)
        text = value.strip().lower() if isinstance(value, str) else None
        if infinite and not whole and text in _INFINITY_TEXT:
            return _INFINITY_TEXT[text]
        number = parse_number(value) if isinstance(value, str) else float(value)
        if infinite and not whole and math.isinf(number):    # (a recording's params)
            return number
        if not math.isfinite(number) or (whole and number != int(number)):
            what = "a whole number" if whole else "a finite number"
            if isinstance(value, str) and not whole:
                what += f" (such as {NUMBER_EXAMPLES})"
            raise ValueError(f"parameter {key}={value!r} of scene {name!r} must be {what}")
        return int(number) if whole else number
    if isinstance(value, str) and default is not None and not isinstance(default, str):
        try:
            value = type(default)(value)
        except ValueError:
            raise ValueError(f"parameter {key}={value!r} of scene {name!r} must be a "
                             f"{type(default).__name__}") from None
    return value


def load(name: str, /, dt: float | None = None, **params) -> Scene:
    """Build a scene by registry name or file path, with parameter overrides; ``dt`` is the
    world's step (a scene parameter called dt goes in ``load_with``'s dict)."""
    return load_with(name, params, dt)


def load_with(name: str, params: dict, dt: float | None = None) -> Scene:
    """``load`` with the parameter overrides in one dict, so that any name is the scene's
    own, ``name`` and ``dt`` among them (the command line's ``--param``, a recording's)."""
    params = dict(params)
    m = _module(name)
    defaults, world, camera = _settings(name, m)
    unknown = sorted(set(params) - set(defaults)) if defaults or params else []
    if unknown and not _accepts_any(m.build):
        raise ValueError(f"scene {name!r} has no parameter {unknown[0]!r}; "
                         f"its parameters are: {', '.join(defaults) or 'none'}")
    infinite = _takes_infinity(getattr(m, "build", None)) if params else set()
    merged = {k: _coerce(name, k, params.get(k, v), v, k in infinite)
              for k, v in defaults.items()}
    merged.update({k: v for k, v in params.items() if k not in defaults})
    if dt is not None:
        world.dt = dt                      # (the dt asked for wins over WORLD's)
    try:
        controller = m.build(world, **merged)
    except Exception as exc:
        stack = traceback.extract_tb(exc.__traceback__)
        if isinstance(exc, ValueError) and stack and stack[-1].filename == m.__file__:
            # (the scene's own check of its parameters names them)
            raise ValueError(f"scene {name!r}: {exc}") from None
        asked = ", ".join(f"{k}={merged[k]!r}" for k in params)
        raise ValueError(f"scene {name!r}{' with ' + asked if asked else ''} failed to build: "
                         f"{type(exc).__name__}: {exc}{_where_in(stack, m)}") from None
    if controller is not None and not callable(controller):
        raise ValueError(f"scene {name!r}: build() returned {controller!r}; it must return "
                         "None or a controller, a callable taking the world before each step")
    if controller is not None and not (_takes_the_world(controller)
                                       or _takes_the_world(controller, world.dt)):
        raise ValueError(f"scene {name!r}: build() returned a controller that cannot be called "
                         f"with the world, {controller!r} {inspect.signature(controller)}; it "
                         "is called as controller(world), or controller(world, dt), before "
                         "each step")
    return Scene(name, getattr(m, "TITLE", name), getattr(m, "DESCRIPTION", ""), world, merged,
                 camera, controller)


def _settings(name: str, module) -> tuple[dict, World, dict]:
    """A scene's PARAMS (the defaults), a new World made with its WORLD (World's keyword
    arguments) and its CAMERA, all checked: a ValueError names the scene (its file) and
    the setting that is wrong."""
    params, world = getattr(module, "PARAMS", {}), getattr(module, "WORLD", {})
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise ValueError(f"scene {name!r}: PARAMS must be a dict {{name: default}}, got a "
                         f"{type(params).__name__}: {params!r}")
    build = getattr(module, "build", None)
    if build is not None and params and not _accepts_any(build):
        takes = [k for k in inspect.signature(build).parameters][1:]
        extra = [k for k in params if k not in takes]
        if extra:
            raise ValueError(f"scene {name!r}: PARAMS has {extra[0]!r}, which build() does "
                             f"not take (it takes: {', '.join(takes) or 'only the world'})")
    if not isinstance(world, dict):
        raise ValueError(f"scene {name!r}: WORLD must be a dict of World's keyword arguments "
                         f"(such as {{'dt': 1/240}}), got a {type(world).__name__}: {world!r}")
    takes = [k for k in inspect.signature(World).parameters]
    extra = [k for k in world if k not in takes]
    if extra:
        raise ValueError(f"scene {name!r}: WORLD has {extra[0]!r}, which World() does not take "
                         f"(it takes: {', '.join(takes)})")
    try:
        made = World(**world)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"scene {name!r}: WORLD = {world!r}: {exc}") from None
    camera = getattr(module, "CAMERA", {})
    from render.camera import CAMERA_KEYS, Camera
    if not isinstance(camera, dict):
        # (dict("front") said "dictionary update sequence element #0 has length 1")
        raise ValueError(f"scene {name!r}: CAMERA must be a dict with some of the keys "
                         f"{', '.join(sorted(CAMERA_KEYS))} (such as {{'yaw': -90, "
                         f"'pitch': 15}}), got a {type(camera).__name__}: {camera!r}")
    try:
        Camera.from_spec(dict(camera) or None)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"scene {name!r} has a bad CAMERA: {exc}") from None
    camera = dict(camera)
    if camera and "fit" not in camera:
        camera["fit"] = True            # (made for the defaults: a bigger build is framed)
    return dict(params), made, camera


def _where_in(stack, module) -> str:
    """' (file, line n, in function)' of the last place in the scene's own file that an
    error's traceback ``stack`` passed through ('' when none did)."""
    path = getattr(module, "__file__", None)
    frames = [f for f in stack if f.filename == path]
    if not frames:
        return ""
    last = frames[-1]
    return f" ({os.path.basename(path)}, line {last.lineno}, in {last.name})"


def _accepts_any(fn) -> bool:
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
