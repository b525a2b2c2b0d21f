"""Checks on user input. Each raises ValueError with a sentence that names the parameter
(``warn_user``: a warning where the input is legal but most likely a slip)."""
from __future__ import annotations

import difflib
import sys
import warnings

import numpy as np


def warn_user(message: str):
    """A UserWarning pointed at the user's line: the first caller outside this package (a
    setter reached through a constructor is several frames deep)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("physics."):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, UserWarning, stacklevel=level)


def read_only(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` that cannot be written through, not even after setting
    ``flags.writeable`` (numpy lets a view be made writeable again while the array it views
    is): the view goes through a read-only buffer."""
    return np.asarray(memoryview(array).toreadonly())


def close_names(name: str, names) -> list[str]:
    """Up to three of ``names`` close to ``name`` (a misspelt or mis-cased one), closest
    first, for a "did you mean" hint: compared ignoring case (PENDULUM is pendulum), each
    returned as spelt in ``names``."""
    by_folded = {}
    for known in names:
        by_folded.setdefault(str(known).casefold(), str(known))
    close = difflib.get_close_matches(str(name).casefold(), list(by_folded), n=3)
    return [by_folded[folded] for folded in close]


# how many names an error lists before "and N more" (marbles' 1001 bodies made an error one
# line of 13,000 characters)
LISTED_NAMES = 10


def listed(names, limit: int = LISTED_NAMES) -> str:
    """``names`` joined by ", ", the first ``limit`` of them and then "and N more"."""
    names = [str(name) for name in names]
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def check_known_attribute(obj, name: str):
    """AttributeError for setting a public attribute ``name`` that obj's class does not have
    and that its constructor did not make: a misspelt setting (``world.gravty = ...``,
    ``hinge.limit = ...``) would be kept and never act. Call it from ``__setattr__``."""
    if name[0] == "_" or name in obj.__dict__ or hasattr(type(obj), name):
        return
    maker = sys._getframe(2)
    if maker.f_code.co_name == "__init__" and maker.f_locals.get("self") is obj:
        return
    known = sorted(n for n in set(dir(type(obj))) | set(obj.__dict__) if not n.startswith("_"))
    close = close_names(name, known)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    raise AttributeError(f"{type(obj).__name__} has no attribute {name!r}{hint}: set, it would "
                         "be kept and never act")


def shown(values) -> str:
    """Numbers for an error message, as a user would write them: (1, 0.5, 0) (a tuple of
    numpy floats prints as (np.float64(1.0), ...))."""
    return "(" + ", ".join(f"{float(v):.6g}" for v in np.ravel(values)) + ")"


def numbers(name: str, value, what: str) -> np.ndarray:
    """``value`` as a float array (a copy), or ValueError naming ``name`` (``what``: what
    it must be) for strings, booleans, complex numbers (numpy dropped their imaginary
    part with only a warning) and anything else that is not real numbers."""
    if value is not None:
        try:
            arr = np.asarray(value)
            # every entry must be a real number, and numpy's reading hides some that are not:
            # (True, 1, 1) reads as integers (the True was taken as 1), [1.5, True] as floats,
            # [1, None, 3] as objects (the None became NaN, refused as "must be finite"). A
            # numeric array holds nothing else; a sequence is looked at entry by entry.
            numeric = arr.dtype.kind in "iuf"
            if (numeric and isinstance(value, np.ndarray)) or (
                    (numeric or arr.dtype.kind == "O")
                    and _all_real(np.asarray(value, dtype=object))):
                return arr.astype(float)
        except (TypeError, ValueError, OverflowError):
            pass
    raise ValueError(f"{name} must be {what}, got {value!r}")


def _all_real(arr: np.ndarray) -> bool:
    """Whether every entry of an object array is a real number (a Python or numpy int or
    float, not a bool, None or a string)."""
    return all(isinstance(x, (int, float, np.integer, np.floating))
               and not isinstance(x, (bool, np.bool_)) for x in arr.flat)


def check_vector(name: str, value, size: int) -> np.ndarray:
    """A finite float vector of the given size (a copy): ``size`` numbers in a flat
    sequence, not a nested one ((1, 3) was flattened and taken)."""
    arr = numbers(name, value, f"{size} real numbers")
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a flat sequence of {size} numbers, got shape "
                         f"{arr.shape}: {value!r}")
    if arr.size != size or arr.ndim != 1:
        raise ValueError(f"{name} must have {size} components, got {arr.size}: {value!r}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or infinity), got {value!r}")
    return arr


def check_number(name: str, value) -> float:
    """A finite number (not a string or a bool)."""
    if isinstance(value, (bool, np.bool_, str, bytes, complex, np.complexfloating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    except OverflowError:       # (an int beyond the largest float: 10**400)
        raise ValueError(f"{name} must be finite, got a number beyond the largest float "
                         f"({float(np.finfo(float).max):.3g})") from None
    if not np.isfinite(x):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return x


def check_positive(name: str, value, allow_zero: bool = False, allow_inf: bool = False) -> float:
    """A positive finite number (or zero, or +infinity, where allowed)."""
    if allow_inf and isinstance(value, (float, np.floating)) and value == np.inf:
        return np.inf
    x = check_number(name, value)
    if x < 0 or (x == 0 and not allow_zero):
        what = "zero or positive" if allow_zero else "positive"
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return x


def check_restitution(value) -> float:
    """A coefficient of restitution: a number from 0 to 1."""
    r = check_positive("restitution", value, allow_zero=True)
    if r > 1:
        raise ValueError(f"restitution must be between 0 and 1, got {value!r}")
    return r


def _whole_number(value):
    """value as an int when it is a whole number (3.0 is 3; True is not one), else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        n = int(value)
        return n if n == value else None
    except (TypeError, ValueError, OverflowError):
        return None


def check_count(name: str, value, minimum: int = 1) -> int:
    """A whole number from ``minimum`` up (1, 2, ...; 3.0 is taken as 3, True is not)."""
    n = _whole_number(value)
    if n is None or n < minimum:
        what = "a positive integer" if minimum == 1 else f"a whole number >= {minimum}"
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return n


def check_flag(name: str, value) -> bool:
    """True or False (not a string or a number that would read as one)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_name(name: str, value) -> str | None:
    """A label: a string, or None for none (5 or [1] were kept and shown as labels)."""
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string or None, got {value!r}")
    return value


def name_property(what: str) -> property:
    """The ``name`` of a body or joint (kept in ``_name``): a label checked by check_name."""
    def get(self) -> str | None:
        return self._name

    def set(self, value):
        self._name = check_name("name", value)

    return property(get, set, doc=f"A label for the {what} (shown in its repr and errors), "
                                  "or None.")


def check_choice(name: str, value, choices) -> str:
    """One of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_bits(name: str, value) -> int:
    """A 64-bit mask of collision groups as a signed int64: a whole number from -2**63 to
    2**64 - 1 (3.0 is taken as 3; True is not). Masks of bit 63, such as 2**64 - 1 (every
    group), are taken as the int64 of the same bits (-1)."""
    n = _whole_number(value)
    if n is None or not -2**63 <= n < 2**64:
        raise ValueError(f"{name} must be an integer bit mask of 64 groups (-1: all), "
                         f"got {value!r}")
    return n - 2**64 if n >= 2**63 else n


def check_unit_direction(name: str, value) -> np.ndarray:
    """A direction vector, normalised; rejects zero and near-zero length."""
    v = check_vector(name, value, 3)
    with np.errstate(over="ignore"):
        n = np.linalg.norm(v)
    if np.isinf(n):
        # components past ~1e154 overflow the norm, and v / inf is a zero axis: the
        # direction of v scaled down by its largest component instead
        v = v / np.abs(v).max()
        n = np.linalg.norm(v)
    if n < 1e-9:
        raise ValueError(f"{name} must be a non-zero direction, got {value!r}")
    return v / n


def check_quaternion(name: str, value) -> np.ndarray:
    """A unit quaternion (w, x, y, z). Accepts small rounding (|q| within 1e-3 of 1) and
    renormalises; anything else is an error, since silently normalising a typo hides it."""
    q = check_vector(name, value, 4)
    n = np.linalg.norm(q)
    if n < 1e-9:
        raise ValueError(f"{name} must be a unit quaternion (w, x, y, z), got zero")
    if abs(n - 1.0) > 1e-3:
        raise ValueError(
            f"{name} must be a unit quaternion (w, x, y, z), got {shown(q)} with norm {n:.6g}; "
            "normalise it first")
    return q / n


def check_inertia(name: str, value) -> np.ndarray:
    """A symmetric positive definite 3x3 body-frame inertia (3 numbers mean a diagonal)."""
    arr = numbers(name, value, "a 3x3 matrix or 3 diagonal values")
    if arr.shape == (3,):
        arr = np.diag(arr)
    if arr.shape != (3, 3):
        raise ValueError(f"{name} must be a 3x3 matrix or 3 diagonal values, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    if not np.allclose(arr, arr.T, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(arr).max())):
        raise ValueError(f"{name} must be symmetric")
    eig = np.linalg.eigvalsh(arr)
    if eig[0] <= 0:
        raise ValueError(f"{name} must be positive definite, smallest eigenvalue is {eig[0]:.3g}")
    if eig[0] + eig[1] < eig[2] * (1.0 - 1e-9):
        raise ValueError(f"{name} is no rigid body's: its principal moments {shown(eig)} break "
                         "I1 + I2 >= I3 (the two smaller must add up to the largest at least)")
    return 0.5 * (arr + arr.T)


# An explicit inertia may be this share of its shape's own (at the body's mass) about any axis,
# no less. A contact row's softness is relative to its own diagonal (bounded.CONTACT_SOFTNESS),
# which is r^2 / I for a small I: its stiffness against the body's weight falls with I, and
# the contacts stop holding the body. Dropped 0.2 m tilted onto a plane, a 0.1 m box and a
# capsule at 1e-4 of their inertia sank 3 and 5 cm into it (at 1e-5 the capsule fell through
# it), a flat cylinder at 3e-5; at 3e-4 all four shapes tried (box, rod, capsule, cylinder)
# rested within 1 mm, at 1 kg and at 100 kg alike.
SMALLEST_INERTIA_SHARE = 1e-3


def check_inertia_holds_contacts(shape, mass: float, inertia: np.ndarray):
    """ValueError when ``inertia`` is below SMALLEST_INERTIA_SHARE of what ``shape`` has at
    ``mass`` about some axis (a body without a shape has no contacts: any inertia)."""
    if shape is None:
        return
    own = mass * shape.unit_inertia()
    # (the least ratio of inertia to own about any axis: generalised eigenvalues)
    root = np.linalg.inv(np.linalg.cholesky(own))
    share = np.linalg.eigvalsh(root @ inertia @ root.T)[0]
    if share < SMALLEST_INERTIA_SHARE:
        raise ValueError(
            f"inertia {shown(np.linalg.eigvalsh(inertia))} (principal moments, kg m^2) is "
            f"{share:.3g} of what {shape!r} of {mass:g} kg has about some axis (its own: "
            f"{shown(np.linalg.eigvalsh(own))}); below {SMALLEST_INERTIA_SHARE:g} of it its "
            "contacts cannot hold it and it sinks through what it rests on: give an inertia "
            "of at least that share, or leave inertia out for the shape's own")


def check_integers(name: str, value):
    """ValueError naming ``name`` unless ``value`` (a snapshot's indices or keys) holds
    integers: floats such as 0.5 were cut to 0 by the conversion that follows."""
    dtype = np.asarray(value).dtype
    if dtype.kind not in "iu":
        raise ValueError(f"{name} must be integers, got {dtype} values")


def checked_array(state, key, shape, required=False, where="state"):
    """A snapshot's part state[key] as a float array of this shape with finite entries (None
    when the snapshot has no such optional part, or None there); ValueError naming the part
    (``where``[key]) otherwise."""
    value = state.get(key)
    if value is None:
        if required:
            raise ValueError(f"{where} has no {key!r}")
        return None
    value = numbers(f"{where}[{key!r}]", value, f"an array of shape {shape} of numbers")
    check_array_shape(f"{where}[{key!r}]", value, shape, "finite numbers")
    return value


def check_array_shape(name: str, value: np.ndarray, shape, what: str):
    """ValueError naming ``name`` where the float array ``value`` is not of this ``shape`` or
    has an entry that is not finite (naming the first such entry); ``what`` says what the
    entries are ("finite numbers (N), one row per body")."""
    if value.shape != shape:
        raise ValueError(f"{name} must be {shape} {what}, got shape {value.shape}")
    bad = np.argwhere(~np.isfinite(value))
    if bad.size:
        at = ", ".join(str(int(k)) for k in bad[0])
        raise ValueError(f"{name}[{at}] is {value[tuple(bad[0])].item()!r}: {name} must be {shape} "
                         f"{what}")


# kg: the most a dynamic body may weigh. Contacts hold it with the solver's regularisation
# (World.cfm, absolute) beside its own stiffness 1 / m: a 0.2 m box of 1e8 kg sinks 0.32 mm
# into the ground in a second, of 1e9 kg 0.47 mm, of 1e12 kg it fell through.
MAX_MASS = 1e8


def check_mass(name: str, value) -> float:
    """A dynamic body's mass (kg): positive, finite, at most MAX_MASS."""
    m = check_positive(name, value)
    if m > MAX_MASS:
        raise ValueError(f"{name} must be at most {MAX_MASS:g} kg, got {value!r}: contacts "
                         "cannot hold a body so heavy (one of 1e12 kg fell through the "
                         "ground); make an immovable body static=True")
    return m

