"""A body named on the command line (``plot --body``, ``render --follow``): by its name, as
given to ``add_body``, or by its index in ``world.bodies`` (a chain's links have no names)."""
from __future__ import annotations

from physics.validation import close_names, listed


def body_index(option: str, text: str, names: list[str] | None, n: int, source: str) -> int:
    """The index of the body ``text`` gives to ``option``: a name among ``names`` (each
    body's name, "" or None for none; None where ``source`` keeps no names) or an index from
    0 to ``n - 1``. ValueError naming the option, with a close name or the first names there
    are."""
    if names is not None and text in names:
        matches = [k for k, name in enumerate(names) if name == text]
        if len(matches) > 1:
            raise ValueError(f"{option} {text!r}: {len(matches)} bodies of {source} have that "
                             f"name (indices {listed(map(str, matches))}): give an index")
        return matches[0]
    if text.isdigit() and int(text) < n:
        return int(text)
    named = [name for name in names or [] if name]
    close = close_names(text, named)
    known = (f"did you mean {' or '.join(map(repr, close))}? " if close
             else f"its named bodies: {listed(named)}; " if named
             else "" if names is not None
             else "it keeps no body names (recorded before they were kept); ")
    raise ValueError(f"{option} {text!r}: no such body in {source} ({known}or an index from 0 "
                     f"to {n - 1})")
