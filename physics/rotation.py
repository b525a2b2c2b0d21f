"""Rotational dynamics of free bodies: the inertias in the world frame, the torque-free flow
(Euler's equations by the implicit midpoint rule) that the symplectic step's drift follows,
and the explicit gyroscopic torque of the seed equation. Angular velocities in rad/s, world
frame unless named body; inertias about the centre of mass, kg m^2."""
from __future__ import annotations

import numpy as np

from .math3d import cross, einsum, skew, solve3


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


def world_inverse_inertia(R: np.ndarray, inv_inertia_body: np.ndarray) -> np.ndarray:
    """R I^-1 R^T per body (N, 3, 3); zero for static bodies (whose I^-1 is zero)."""
    return in_world_frame(R, inv_inertia_body)


def euler_midpoint(inertia, omega, h, iterations=2, guess=None):
    """Body-frame angular velocity (N, 3) after h of torque-free motion by the implicit
    midpoint rule: I (W1 - W0) / h + Wm x I Wm = 0, Wm = (W0 + W1) / 2. The rule keeps both
    W.I W and |I W| exactly, so thin bodies (rods, where the explicit term is unstable) spin
    without gaining energy. Newton's method from ``guess`` (default W0). ``inertia``: body
    frame (N, 3, 3), or (N, 3) principal moments when every inertia is diagonal (the same
    arithmetic without the products with zeros)."""
    principal = inertia.ndim == 2
    w1 = omega.copy() if guess is None else guess
    for _ in range(iterations):
        wm = 0.5 * (omega + w1)
        Iwm = inertia_times(inertia, wm)
        residual = inertia_times(inertia, w1 - omega) + h * cross(wm, Iwm)
        if principal:
            jac = skew(wm) * inertia[:, None, :] - skew(Iwm)     # zero diagonal
            jac *= 0.5 * h
            jac.reshape(-1, 9)[:, ::4] += inertia
        else:
            jac = inertia + 0.5 * h * (skew(wm) @ inertia - skew(Iwm))
        w1 = w1 - solve3(jac, residual)
    return w1


def free_rotation(R, inertia, w, h, dyn, near=None):
    """The torque-free flow of each body over h from world angular velocity w (N, 3): its
    body-frame angular velocity at the start and at the end, (N, 3) each (see midpoint_turn
    for the rotation). ``dyn``: the bodies that need the flow (dynamic, anisotropic inertia);
    the others keep their body-frame angular velocity, as an isotropic body (whose inertia is
    a multiple of the identity: spheres, cubes) does exactly. ``near``: this pair for a nearby
    w' (SHAKE's correction of w is tiny): then one Newton iteration from there is as exact as
    two from scratch."""
    body_start = einsum("nji,nj->ni", R, w)
    body_end = body_start.copy()
    w0 = body_start[dyn]
    if w0.size:
        if near is None:
            w1 = euler_midpoint(inertia[dyn], w0, h)
        else:
            start = near[1][dyn] + w0 - near[0][dyn]
            w1 = euler_midpoint(inertia[dyn], w0, h, iterations=1, guess=start)
        body_end[dyn] = w1
    return body_start, body_end


def midpoint_turn(R, w, flow, h, dyn):
    """The world rotation vector (N, 3) of the flow (body_start, body_end) of free_rotation:
    h times the midpoint angular velocity (bodies outside ``dyn``, static or isotropic:
    spheres, cubes: h w)."""
    turn = h * w
    body_start, body_end = flow
    turn[dyn] = h * einsum("nij,nj->ni", R[dyn], 0.5 * (body_start[dyn] + body_end[dyn]))
    return turn


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
    Rd, wd = R[dyn], w[dyn]
    body = einsum("nji,nj->ni", Rd, wd)
    body = inertia_times(inertia[dyn], body)
    out[dyn] = -cross(wd, einsum("nij,nj->ni", Rd, body))
    return out
