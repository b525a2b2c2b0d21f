"""Finding, describing and building scenes (from the registry or from a user's file)."""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import math
import os
import re
from dataclasses import dataclass, field
from typing import Callable

from physics import World

SCENES = ("pendulum", "double_pendulum", "chain", "fourbar", "gyroscope", "newtons_cradle", "box_pyramid", "dominoes", "marbles", "ragdoll", "ragdoll_pile", "humanoid_box", "car", "stewart", "gears", "whiteboard")


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
                self.controller(self.world)
            self.world.step()

    def summary(self) -> list[tuple[str, str]]:
        """Scene-specific (label, value) lines for a run's summary (``maxcoord run`` prints
        them under its table): the controller's ``summary()``, if it has one, else none."""
        lines = getattr(self.controller, "summary", None)
        return [(str(k), str(v)) for k, v in lines()] if callable(lines) else []


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
            spec.loader.exec_module(module)
        except Exception as exc:
            raise ValueError(f"scene file {name!r} failed to load: {exc}") from None
        if not hasattr(module, "build"):
            raise ValueError(f"scene file {name!r} defines no build(world) function")
        return module
    raise ValueError(f"unknown scene {name!r}; choose one of: {', '.join(names())} "
                     "(or give a .py file that defines build(world))")


def describe(name: str) -> dict:
    """A scene's name, title, description, ``params`` (the defaults) and ``parameters``:
    for each, its default, unit and meaning, as its build docstring's "Parameters:"
    section gives them (empty strings where it gives none)."""
    m = _module(name)
    defaults = dict(getattr(m, "PARAMS", {}))
    documented = parameter_docs(getattr(m, "build", None))
    parameters = {key: {"default": value, **documented.get(key, {"unit": "", "meaning": ""})}
                  for key, value in defaults.items()}
    return {"name": name, "title": getattr(m, "TITLE", name),
            "description": getattr(m, "DESCRIPTION", ""), "params": defaults,
            "parameters": parameters}


# a parameter's line in a build docstring's "Parameters:" section: "name (unit): meaning"
_PARAMETER_LINE = re.compile(r"^(\s+)(\w+) \(([^()]+)\): (.+)$")


def parameter_docs(build) -> dict[str, dict[str, str]]:
    """{name: {"unit", "meaning"}} from the "Parameters:" section of ``build``'s docstring:
    one line per parameter, ``name (unit): meaning``, the meaning going on over lines
    indented deeper; the section ends at a blank line. The unit is "-" for a number
    without one, "count" for a whole number of things, "true/false" for a flag."""
    doc = inspect.getdoc(build) if build is not None else None
    lines = (doc or "").splitlines()
    if "Parameters:" not in lines:
        return {}
    found, indent, last = {}, None, None
    for line in lines[lines.index("Parameters:") + 1:]:
        if not line.strip():
            break
        entry = _PARAMETER_LINE.match(line)
        if entry and (indent is None or len(entry.group(1)) == indent):
            indent, last = len(entry.group(1)), entry.group(2)
            found[last] = {"unit": entry.group(3), "meaning": entry.group(4)}
        elif last is not None:
            found[last]["meaning"] += " " + line.strip()
    return found


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _coerce(name, key, value, default):
    if isinstance(value, str) and isinstance(default, bool):     # bool("False") is True
        if value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        raise ValueError(f"parameter {key}={value!r} of scene {name!r} must be a bool "
                         "(true/false, yes/no, 1/0)")
    if isinstance(value, str) and isinstance(default, (int, float)):
        whole = isinstance(default, int)
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not math.isfinite(number) or (whole and number != int(number)):
            what = "a whole number" if whole else "a finite number"
            raise ValueError(f"parameter {key}={value!r} of scene {name!r} must be {what}")
        return int(number) if whole else number
    if isinstance(value, str) and default is not None and not isinstance(default, str):
        try:
            value = type(default)(value)
        except ValueError:
            raise ValueError(f"parameter {key}={value!r} of scene {name!r} must be a "
                             f"{type(default).__name__}") from None
    return value


def load(name: str, dt: float | None = None, **params) -> Scene:
    """Build a scene by registry name or file path, with parameter overrides."""
    m = _module(name)
    defaults = dict(getattr(m, "PARAMS", {}))
    unknown = sorted(set(params) - set(defaults)) if defaults or params else []
    if unknown and not _accepts_any(m.build):
        raise ValueError(f"scene {name!r} has no parameter {unknown[0]!r}; "
                         f"its parameters are: {', '.join(defaults) or 'none'}")
    merged = {k: _coerce(name, k, params.get(k, v), v) for k, v in defaults.items()}
    merged.update({k: v for k, v in params.items() if k not in defaults})
    world_kwargs = dict(getattr(m, "WORLD", {}))
    if dt is not None:
        world_kwargs["dt"] = dt
    world = World(**world_kwargs)
    try:
        controller = m.build(world, **merged)
    except ValueError:
        raise
    except Exception as exc:
        raise ValueError(f"scene {name!r} failed to build: {type(exc).__name__}: {exc}") from None
    return Scene(name, getattr(m, "TITLE", name), getattr(m, "DESCRIPTION", ""), world, merged,
                 dict(getattr(m, "CAMERA", {})), controller)


def _accepts_any(fn) -> bool:
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
