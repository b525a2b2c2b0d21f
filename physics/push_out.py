"""How fast a one-sided row's overrun beyond its slop is pushed back within a step: a
contact's penetration (``contact_rows``) and a limit's overshoot (``limits``) alike."""
from __future__ import annotations

import numpy as np

# m/s (rad/s for an angular limit): the slowest an overrun beyond the slop is pushed back,
# unless the rest of it goes within the step
FINISHING_PUSH = 1e-3


def push_out(beyond, h, T, most=np.inf):
    """The speed (m/s or rad/s, (K,)) at which overruns ``beyond`` (K,) their slop (m or rad;
    zero or less: within it) are pushed back within a step h (s): the overrun over the
    stabilisation time T (s), at most ``most``, and at least FINISHING_PUSH or what takes
    the rest of it back within the step.

    Over T alone the push fades geometrically (e^(-h/T) a step, 0.78 at T = 4 h) and never
    ends: a pile come to rest was pushed apart at ever slower speeds, which its solves had to
    meet to 1e-6 m/s, and each of them took its whole budget until the push fell to about
    that. A 30-box pile (0.3 m, 1 kg) dropped at dt 1/60 was still, its fastest box under
    1e-3 m/s, 23 steps before its solves finished (60 iterations each, its deepest contact
    0.09 mm beyond the slop); it now finishes within 3. Limits alike: 4 ragdolls with joint
    friction 1 N m (``scenes.ragdoll_pile``, dt 1/60) lay still on limits pushed back at
    ever slower rates, and their solves took the whole budget for 68 steps after the pile
    was still (15 now). The finishing push is slow: a body keeps it as speed (1 mm/s,
    1 mrad/s)."""
    beyond = np.maximum(beyond, 0.0)
    least = np.minimum(beyond / h, FINISHING_PUSH)
    return np.minimum(np.maximum(beyond / T, least), most)
