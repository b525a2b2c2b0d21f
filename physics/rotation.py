"""Rotational dynamics of free bodies: the inertias in the world frame, the torque-free flow
(Euler's equations by the implicit midpoint rule; exactly for free bodies symmetric about
their axis) that the symplectic step's drift follows, and the explicit gyroscopic torque of
the seed equation. Angular velocities in rad/s, world
frame unless named body; inertias about the centre of mass, kg m^2."""
from __future__ import annotations

import numpy as np

from .math3d import (_ADJ, _AFTER, _NEXT, cross, dot, einsum, quat_multiply, rotate_by_quat,
                     rotation_vector_to_quat, skew, solve3)


def body_inertia(world, model):
    """The body-frame inertias: (N, 3) principal moments when all are diagonal, else (N, 3, 3)."""
    return world._inertia[:world._n] if model.principal is None else model.principal


def body_inverse_inertia(world, model):
    """The body-frame inverse inertias: (N, 3) principal moments when all are diagonal,
    else (N, 3, 3)."""
    return world._inv_inertia[:world._n] if model.principal_inv is None else model.principal_inv


def in_world_frame(R: np.ndarray, body: np.ndarray) -> np.ndarray:
    """R B R^T per body (N, 3, 3) for body-frame matrices B (N, 3, 3), or their diagonals
    (N, 3): then R B is a column scaling (the same values as the product, whose other terms
    are exact zeros) and one batched product is left."""
    if body.ndim == 2:
        return (R * body[:, None, :]) @ R.transpose(0, 2, 1)
    return R @ body @ R.transpose(0, 2, 1)


def world_inverse_inertia(R: np.ndarray, inv_inertia_body: np.ndarray,
                          dynamic=None) -> np.ndarray:
    """R I^-1 R^T per body (N, 3, 3); zero for static bodies (whose I^-1 is zero).
    dynamic: the rows of the dynamic bodies (an index array or slice; None: all rows), the
    others' left zero uncomputed (a level of 10,000 static tiles turned its zeros into
    the world frame every step: 3.5 ms of an 8.6 ms step with every dynamic body asleep)."""
    if dynamic is None:
        return in_world_frame(R, inv_inertia_body)
    out = np.zeros(R.shape)
    out[dynamic] = in_world_frame(R[dynamic], inv_inertia_body[dynamic])
    return out


def euler_midpoint(inertia, omega, h, iterations=2, guess=None):
    """Body-frame angular velocity (N, 3) after h of torque-free motion by the implicit
    midpoint rule: I (W1 - W0) / h + Wm x I Wm = 0, Wm = (W0 + W1) / 2. The rule keeps both
    W.I W and |I W| exactly, so thin bodies (rods, where the explicit term is unstable) spin
    without gaining energy. Newton's method from ``guess`` (default W0). ``inertia``: body
    frame (N, 3, 3), or (N, 3) principal moments when every inertia is diagonal (the same
    arithmetic without the products with zeros)."""
    if inertia.ndim == 2:
        return _principal_midpoint(inertia, omega, h, iterations, guess)
    w1 = omega.copy() if guess is None else guess
    for _ in range(iterations):
        wm = 0.5 * (omega + w1)
        Iwm = inertia_times(inertia, wm)
        residual = inertia_times(inertia, w1 - omega) + h * cross(wm, Iwm)
        jac = inertia + 0.5 * h * (skew(wm) @ inertia - skew(Iwm))
        w1 = w1 - solve3(jac, residual)
    return w1


# Entry (i, j) of skew(r), flat index 3 i + j, is _SKEW_SIGN * r[_SKEW_COMPONENT]: -eps_ijk r_k
# (a zero on the diagonal); _COLUMN is its j
_SKEW_COMPONENT = np.array([0, 2, 1, 2, 0, 0, 1, 0, 0])
_SKEW_SIGN = np.array([0.0, -1.0, 1.0, 1.0, 0.0, -1.0, -1.0, 1.0, 0.0])[:, None]
_COLUMN = np.tile(np.arange(3), 3)
# the adjugate's cofactors p q - r s (math3d._ADJ) as one gather of both products' factors
_COFACTOR_LEFT = np.concatenate([_ADJ[0], _ADJ[2]])
_COFACTOR_RIGHT = np.concatenate([_ADJ[1], _ADJ[3]])


def _principal_midpoint(inertia, omega, h, iterations, guess):
    """euler_midpoint for principal moments (N, 3): the same arithmetic, bit for bit, on the
    components laid out as rows (3, N) and the Jacobians' entries as (9, N), so that each
    numpy call works on whole contiguous rows (the SHAKE drift calls it ~6 times a step in a
    10-ragdoll pile: 466k -> 278k instructions a call for 150 bodies, callgrind).

    What keeps the bits: each entry is the product, difference and sum of the same factors
    in the same order as ``cross``, ``skew`` and ``solve3``'s; the skew entries are exactly
    +-r_k (an entry whose r_k is zero comes out +0 both ways: (+-0) I_j - (+-0) with equal
    signs); and the two sums einsum made in solve3 are written out in the order its kernels
    take them: the determinant's three products as (p0 + p2) + p1 (its two-lane loop), the
    solution's as ((0 + t0) + t1) + t2 (zero-started, which decides the sign of a zero)."""
    moments = inertia.T.copy()
    start = omega.T.copy()
    w1 = start.copy() if guess is None else guess.T.copy()
    column_moments = moments.take(_COLUMN, axis=0)
    half_h = 0.5 * h
    spins = np.empty((2,) + start.shape)       # Wm and I Wm
    wm, Iwm = spins
    for _ in range(iterations):
        np.add(start, w1, out=wm)
        wm *= 0.5
        np.multiply(moments, wm, out=Iwm)
        plus_one, plus_two = spins.take(_NEXT, axis=1), spins.take(_AFTER, axis=1)
        residual = moments * (w1 - start) + h * (plus_one[0] * plus_two[1]
                                                      - plus_two[0] * plus_one[1])
        skews = spins.take(_SKEW_COMPONENT, axis=1)
        skews *= _SKEW_SIGN
        jac = skews[0] * column_moments
        jac -= skews[1]
        jac *= half_h
        jac[::4] += moments
        factors = jac.take(_COFACTOR_LEFT, axis=0) * jac.take(_COFACTOR_RIGHT, axis=0)
        adjugate_t = factors[:9] - factors[9:]          # entry (k, i) at 3 k + i
        first = jac[:3] * adjugate_t[:3]
        det = (first[0] + first[2]) + first[1]
        terms = adjugate_t.reshape(3, 3, -1) * residual[:, None, :]
        step = ((0.0 + terms[0]) + terms[1]) + terms[2]
        step /= det
        w1 = w1 - step
    return w1.T.copy()


def free_rotation(R, inertia, w, h, flows, near=None):
    """The torque-free flow of each body over h from world angular velocity w (N, 3): its
    body-frame angular velocity at the start and at the end, (N, 3) each, and the parts of
    the split flow (``split_spin``) for the rotation (see midpoint_rotation). ``flows``
    (``FreeFlows``): the bodies that need the flow (dynamic, anisotropic inertia) and how
    each turns; the others keep their body-frame angular velocity, as an isotropic body
    (whose inertia is a multiple of the identity: spheres, cubes) does exactly. Those
    without joints end on the start's |I W| and W.I W exactly
    (see on_invariants): the tops by their exact flow (``top_spin``), those with three
    distinct moments by its splitting (``split_spin``), the others by the midpoint rule.
    ``near``: this pair for a nearby w' (SHAKE's correction of w is tiny): then one Newton
    iteration from there is as exact as two from scratch."""
    body_start = einsum("nji,nj->ni", R, w)
    body_end = body_start.copy()
    dyn, free, tops, split = flows.midpoint, flows.aligned, flows.tops, flows.split
    w0 = body_start[dyn]
    if w0.size:
        if near is None:
            w1 = euler_midpoint(inertia[dyn], w0, h)
        else:
            start = near[1][dyn] + w0 - near[0][dyn]
            w1 = euler_midpoint(inertia[dyn], w0, h, iterations=1, guess=start)
        body_end[dyn] = w1
    if body_start[free].size:
        body_end[free] = on_invariants(inertia[free], body_start[free], body_end[free])
    if tops.size:
        tops.put_body(body_end, top_spin(tops.moments, tops.body(body_start), h))
    parts = None
    if split.size:
        moments, start = split.principal, split.body(body_start)
        parts = split_spin(moments, start, h)
        split.put_body(body_end, on_invariants(moments, start, parts[0]))
    return body_start, body_end, parts


# how far apart (relative) two principal moments may be and still make a top: rounding in
# moments a user computes (a stick 1e-12 off its symmetry was turned by the midpoint rule,
# 167 degrees of precession in 1 s where its flow gives 5.6)
TOP_SYMMETRY = 1e-9


class Tops:
    """Free bodies of diagonal body-frame inertia, each in its own axis order: ``rows`` (k,),
    ``axes`` (k,) the index 0, 1, 2 of the axis along which its other two moments are
    nearest equal, ``principal`` (k, 3) its moments in the order (across, across, along) and
    ``moments`` those with the two across made equal (their mean): a top's, whose torque-free
    flow is known exactly (``top_spin``, ``top_rotation``)."""

    def __init__(self, rows, axes, principal):
        self.rows, self.axes, self.principal = rows, axes, principal
        # each body's components in the order (across, across, along): a turn of the axes'
        # order (x, y, z), so the frame stays right-handed
        self.order = (axes[:, None] + np.arange(1, 4)) % 3
        self.moments = principal.copy()
        self.moments[:, :2] = principal[:, :2].mean(axis=1, keepdims=True)
        self.size = rows.size

    def body(self, vectors):
        """Their rows of body-frame vectors (N, 3), in each one's (across, across, along)
        order."""
        return np.take_along_axis(vectors[self.rows], self.order, axis=1)

    def put_body(self, vectors, ordered):
        """Write ``ordered`` (k, 3), in each one's order, back into ``vectors`` (N, 3)."""
        out = np.empty_like(ordered)
        np.put_along_axis(out, self.order, ordered, axis=1)
        vectors[self.rows] = out

    def subset(self, keep):
        """Those of them that ``keep`` (k,) bool marks."""
        return Tops(self.rows[keep], self.axes[keep], self.principal[keep])


def free_diagonal(inertia, free) -> Tops:
    """The bodies ``free`` (slice or rows) whose body-frame inertia, (N, 3) principal moments
    or (N, 3, 3), is diagonal, each in the axis order of ``Tops``."""
    rows = np.arange(inertia.shape[0])[free]
    picked = inertia[rows]
    if picked.ndim == 3:
        diagonal = einsum("nii->ni", picked)
        rows = rows[np.all(picked == diagonal[:, :, None] * np.eye(3), axis=(1, 2))]
        picked = einsum("nii->ni", inertia[rows])
    # the axis whose two others are nearest equal (a sphere's are all: none is needed)
    across = np.stack([np.abs(picked[:, 1] - picked[:, 2]), np.abs(picked[:, 2] - picked[:, 0]),
                       np.abs(picked[:, 0] - picked[:, 1])], axis=1)
    axes = np.argmin(across, axis=1)
    order = (axes[:, None] + np.arange(1, 4)) % 3
    return Tops(rows, axes, np.take_along_axis(picked, order, axis=1))


def symmetric(tops: Tops) -> np.ndarray:
    """(k,) bool: whether each body's two across moments are equal, to ``TOP_SYMMETRY``."""
    p = tops.principal
    return np.abs(p[:, 0] - p[:, 1]) <= TOP_SYMMETRY * p.max(axis=1, initial=0.0)


class FreeFlows:
    """How each dynamic body of anisotropic inertia turns in the drift: ``tops`` (``Tops``,
    two moments equal) and ``split`` (``Tops``, three distinct moments) are free bodies of
    diagonal body-frame inertia, turned by exact flows; ``midpoint`` (slice or rows) the
    others (jointed, or of a full inertia), by the midpoint rule, ``aligned`` (slice or rows)
    those of them without joints (``on_invariants``, ``_momentum_alignment``)."""

    def __init__(self, inertia, spinning, tumbling):
        """From the body-frame inertias (N, 3) or (N, 3, 3), the dynamic bodies of
        anisotropic inertia ``spinning`` and those of them without joints ``tumbling``
        (slices or rows)."""
        diagonal = free_diagonal(inertia, tumbling)
        top = symmetric(diagonal)
        self.tops, self.split = diagonal.subset(top), diagonal.subset(~top)
        self.midpoint, self.aligned = spinning, tumbling
        if diagonal.size:
            n = inertia.shape[0]
            self.midpoint = np.setdiff1d(np.arange(n)[spinning], diagonal.rows)
            self.aligned = np.setdiff1d(np.arange(n)[tumbling], diagonal.rows)


def top_spin(inertia, start, h):
    """The body-frame angular velocities (k, 3) after h of torque-free motion of bodies
    symmetric about their third axis (principal moments (k, 3), I_1 = I_2), from ``start``
    (k, 3): exactly, the part across the axis turned about it by h W_3 (I_3 - I_1) / I_1."""
    angle = h * start[:, 2] * (inertia[:, 2] - inertia[:, 0]) / inertia[:, 0]
    c, s = np.cos(angle), np.sin(angle)
    end = start.copy()
    end[:, 0] = c * start[:, 0] - s * start[:, 1]
    end[:, 1] = s * start[:, 0] + c * start[:, 1]
    return end


def on_invariants(inertia, start, end, max_iterations=20):
    """The body-frame angular velocities ``end`` (n, 3) moved onto the angular momentum size
    |I W| and the energy W.I W / 2 of ``start`` (n, 3), the two invariants of a free body's
    Euler equations, by Newton's method on both along their gradients I^2 W and I W (a body
    spinning about a principal axis, where the two are parallel, is scaled onto |I W| alone),
    until both are met to rounding.

    The midpoint rule keeps both where its Newton iterations converge; where a body turns
    radians in a step they may not (a box at 1000 rad/s, dt 1/240: residuals of 4 % on some
    steps). The end is then put back on them: in one or two iterations where the midpoint
    rule converged, up to 15 where it did not (that box, 10 s)."""
    Iw0 = inertia_times(inertia, start)
    momentum, energy = dot(Iw0, Iw0), dot(start, Iw0)
    w = end
    for _ in range(max_iterations):
        Iw = inertia_times(inertia, w)
        I2w = inertia_times(inertia, Iw)
        # the gradients / 2: a = I^2 w (of |I w|^2), b = I w (of w.I w); w + x a + y b
        aa, ab, bb = dot(I2w, I2w), dot(I2w, Iw), dot(Iw, Iw)
        g1, g2 = 0.5 * (bb - momentum), 0.5 * (dot(w, Iw) - energy)
        if np.all((np.abs(g1) <= 1e-15 * momentum) & (np.abs(g2) <= 1e-15 * energy)):
            break
        det = aa * bb - ab * ab
        apart = det > 1e-6 * aa * bb
        det = np.where(apart, det, 1.0)
        x = np.where(apart, (ab * g2 - bb * g1) / det, -g1 / np.maximum(aa, 1e-300))
        y = np.where(apart, (ab * g1 - aa * g2) / det, 0.0)
        w = w + x[:, None] * I2w + y[:, None] * Iw
    return w


def midpoint_rotation(R, w, flow, h, inertia, flows):
    """The world rotations (N, 4), unit quaternions, of the flow (body_start, body_end) of
    free_rotation: for the bodies of ``flows`` (``FreeFlows``) turned by the midpoint rule the
    turn by h times the midpoint angular velocity (bodies outside ``flows``, static or
    isotropic: spheres, cubes: by h w), and for those without joints then the least turn that
    puts the end's angular momentum on the start's; the tops turn exactly (``top_rotation``),
    the free bodies of three distinct moments by that flow's splitting (``split_rotation``),
    then by that least turn.

    The midpoint rule keeps the body-frame |I W| (free_rotation makes it exact) and W.I W; the
    midpoint turn alone does not carry R I W_end onto R I W_start, and a free box spinning at
    100 rad/s about no principal axis had its angular momentum turn 0.41 degrees in 10 s at
    dt 1/240 (7.1 at 1/60). The aligning turn is O(h^3); with it a free body's world angular
    momentum is kept to rounding, and its energy is the midpoint rule's. (Jointed bodies are
    left out: SHAKE's corrections move them after the drift anyway, and aligned, a free
    floating chain kept its angular momentum better but lost 1.6 % of its energy in 10 s at
    dt 1/60, where it gained 0.05 % without.)"""
    turn = h * w
    body_start, body_end, parts = flow
    dyn, free, tops, split = flows.midpoint, flows.aligned, flows.tops, flows.split
    Rd = R[dyn]
    if Rd.shape[0]:
        turn[dyn] = h * einsum("nij,nj->ni", Rd, 0.5 * (body_start[dyn] + body_end[dyn]))
    rotation = rotation_vector_to_quat(turn)
    Rf = R[free]
    if Rf.shape[0]:
        rotation[free] = quat_multiply(_momentum_alignment(
            Rf, inertia[free], body_start[free], body_end[free], rotation[free]), rotation[free])
    if tops.size:
        R_top = np.take_along_axis(R[tops.rows], tops.order[:, None, :], axis=2)
        rotation[tops.rows] = top_rotation(R_top, tops.moments, tops.body(body_start), h)
    if split.size:
        R_split = np.take_along_axis(R[split.rows], split.order[:, None, :], axis=2)
        moments, start = split.principal, split.body(body_start)
        turn = split_rotation(R_split, moments, start, parts, h)
        rotation[split.rows] = quat_multiply(_momentum_alignment(
            R_split, moments, start, split.body(body_end), turn), turn)
    return rotation


def _about_second_axis(vectors, angles):
    """Body-frame vectors (k, 3) turned about their second axis by ``angles`` (k,), rad."""
    c, s = np.cos(angles), np.sin(angles)
    out = vectors.copy()
    out[:, 0] = c * vectors[:, 0] + s * vectors[:, 2]
    out[:, 2] = c * vectors[:, 2] - s * vectors[:, 0]
    return out


def split_spin(moments, start, h):
    """The body-frame angular velocities (k, 3) after h of torque-free motion of bodies of
    principal moments (k, 3) (I_1, I_2, I_3), from ``start`` (k, 3), by Strang's splitting of
    the energy H = (L_1^2 + L_2^2) / 2 I_1 + L_3^2 / 2 I_3 (a top, flowed exactly:
    ``top_spin``) + L_2^2 (1 / I_2 - 1 / I_1) / 2 (a turn about axis 2 at L_2 (1 / I_2 -
    1 / I_1), L_2 constant along it): half that turn, the top's h, half the turn. Each part
    is a free body's flow, so |L| is kept exactly; the energy within O(h^2) of the residual's.
    Also returns the three parts' data for ``split_rotation``: the half turns' angles (k,)
    and the top's moments and start (k, 3)."""
    top = moments.copy()
    top[:, 1] = moments[:, 0]
    rate = 0.5 * h * (1.0 / moments[:, 1] - 1.0 / moments[:, 0])
    L = moments * start
    first = rate * L[:, 1]
    L = _about_second_axis(L, -first)
    top_start = L / top
    L = top * top_spin(top, top_start, h)
    last = rate * L[:, 1]
    L = _about_second_axis(L, -last)
    return L / moments, first, last, top, top_start


def split_rotation(R, moments, body_start, parts, h):
    """The world rotations (k, 4), unit quaternions, of the flow over h that ``split_spin``
    gave ``parts`` of, from body-frame angular velocities ``body_start`` (k, 3) at rotations
    R (k, 3, 3), both in the (1, 2, 3) order of the moments (k, 3): a turn about the body's
    axis 2, the top's (as ``top_rotation``: about its axis 3, then about L, which no part
    changes), and a turn about axis 2 again."""
    _, first, last, top, top_start = parts
    q1 = rotation_vector_to_quat(first[:, None] * R[:, :, 1])    # (R e_2 stays)
    own = (h * top_start[:, 2] * (1.0 - top[:, 2] / top[:, 0]))[:, None] * \
        rotate_by_quat(q1, R[:, :, 2])
    precession = einsum("nij,nj->ni", R, moments * body_start) / top[:, :1]
    q2 = quat_multiply(quat_multiply(rotation_vector_to_quat(h * precession),
                                     rotation_vector_to_quat(own)), q1)
    q3 = rotation_vector_to_quat(last[:, None] * rotate_by_quat(q2, R[:, :, 1]))
    return quat_multiply(q3, q2)


def top_rotation(R, inertia, body_start, h):
    """The world rotations (k, 4), unit quaternions, of h of torque-free motion of bodies
    symmetric about their third axis (principal moments (k, 3), I_1 = I_2) at rotations R
    (k, 3, 3) from body-frame angular velocities ``body_start`` (k, 3), both in that axis
    order: exactly, a turn about their axis by h W_3 (1 - I_3 / I_1), then about the angular
    momentum L by h |L| / I_1 (the precession), which ends on ``top_spin``'s angular
    velocity.

    The midpoint rule turns the spin across the axis about it by 2 atan(h Omega / 2) where
    it turns by h Omega (Omega = W_z (I_z - I_x) / I_x), and the least turn that then puts
    the angular momentum back tilts the axis by up to half that error: a thin stick (r 1 cm,
    0.6 m) spinning about its axis at 103 rad/s (1.7 rad a step at dt 1/60, 0.3 rad short)
    and tilting at 0.1 rad/s, its momentum 30 degrees off its axis, had its end moved
    35 mm a step where its motion moved it 0.4 mm, and lying along a wall it went through
    it."""
    axis = R[:, :, 2]
    precession = einsum("nij,nj->ni", R, inertia * body_start) / inertia[:, :1]     # L / I_x
    own = (h * body_start[:, 2] * (1.0 - inertia[:, 2] / inertia[:, 0]))[:, None] * axis
    return quat_multiply(rotation_vector_to_quat(h * precession), rotation_vector_to_quat(own))


def _momentum_alignment(R, inertia, body_start, body_end, turn):
    """The least turns (n, 4), unit quaternions, that carry the world angular momentum at the
    end of a body's drift by ``turn`` (n, 4) back onto the direction of the one at its start."""
    start = einsum("nij,nj->ni", R, inertia_times(inertia, body_start))
    end = rotate_by_quat(turn, einsum("nij,nj->ni", R, inertia_times(inertia, body_end)))
    # the half-angle quaternion of the least turn from end to start: (|e||s| + e.s, e x s)
    align = np.empty((end.shape[0], 4))
    align[:, 0] = np.sqrt(dot(start, start) * dot(end, end)) + dot(end, start)
    align[:, 1:] = cross(end, start)
    size = np.sqrt(dot(align, align))
    still = size == 0.0                   # (a body that does not spin has nothing to align)
    align[still] = (1.0, 0.0, 0.0, 0.0)
    align /= np.where(still, 1.0, size)[:, None]
    return align


def end_spin(R1, w, flow, dyn):
    """The world angular velocity (N, 3) at the end of the flow of free_rotation, at the
    rotations R1 reached: R1 times the body-frame one for the bodies ``dyn``; the others (static
    bodies, isotropic bodies: spheres, cubes) keep w exactly."""
    out = w.copy()
    out[dyn] = einsum("nij,nj->ni", R1[dyn], flow[1][dyn])
    return out


def inertia_times(inertia, vectors):
    """I w per body (N, 3), body frame: ``inertia`` (N, 3, 3), or (N, 3) principal moments when
    all are diagonal (the same products without the zeros)."""
    return inertia * vectors if inertia.ndim == 2 else einsum("nij,nj->ni", inertia, vectors)


def gyroscopic_torque_explicit(R, inertia, w, dyn):
    """-w x (I_world w) (N, 3), the seed's term, for the bodies ``dyn`` (zero for the others:
    static bodies and isotropic bodies: spheres, cubes). ``inertia``: body frame (N, 3, 3),
    or (N, 3) principal moments."""
    out = np.zeros_like(w)
    if isinstance(dyn, slice) and dyn.start == dyn.stop:
        return out          # (none spins so: a pile of cubes, ~12 calls a step saved)
    Rd, wd = R[dyn], w[dyn]
    body = einsum("nji,nj->ni", Rd, wd)
    body = inertia_times(inertia[dyn], body)
    out[dyn] = -cross(wd, einsum("nij,nj->ni", Rd, body))
    return out
