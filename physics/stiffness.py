"""The geometric stiffness of joint tension, taken implicitly where the step cannot follow it.

A body pulled at an anchor by a tensioned joint is stiff against turning: the force's arm
turns with it. Explicit steps (Verlet, RATTLE) are stable only while h w < 2 for those
modes; the top of a 1000-link hanging chain (980 N) is far beyond. There the stiffness K is
added to the body's inertia as h^2 K / 4 in the kick, SHAKE and the velocity projection:
the step is then stable for any h, and the slow motion is unchanged. That step is the
trapezoidal rule (on a linear system, exactly) when its velocities stand for momentum over
the augmented inertia: the velocities stay in the metric of the step that made them, and
where the next step's differs they are carried into it keeping each body's angular momentum
(velocity_metric._between_metrics), so that steps stiff or not, and split ones, follow each other
without pumping the stiff modes.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.sparse._sparsetools import csr_matvecs

from .math3d import einsum, inverse3
from .rotation import in_world_frame

# A body turning against its joints' tension at rho = h^2 tr(I^-1 K) / 2 below this is left to
# the plain step (the top link of a 100-link hanging chain sits at 2); above twice it, the
# whole stiffness K is added to its inertia (see augmented_inverse_inertia).
RESOLVED_STIFFNESS = 3.0


def unresolved_stiffness(model, kin, lam, h):
    """The geometric stiffness of the joints' tension that the step cannot follow explicitly,
    per body (N, 3, 3), body frame, N m / rad; None when no body is that stiff.

    A body pulled at an anchor r from its centre by a force f with f.r > 0 feels a restoring
    torque -(f.r) (1 - r r^T / r.r) dtheta when it turns by dtheta. Compression (f.r < 0)
    destabilises and is left out, so K is positive semi-definite. Bodies are weighted in
    smoothly from rho = RESOLVED_STIFFNESS to twice that. K is kept in the body frame, so
    that it turns with the body as its anchors do: a link spinning about its own axis, which
    its tension does not resist, stays free to spin in the steps K carries (held in the
    world frame, K's free direction stayed where the axis was when K was found)."""
    sides = model.anchor_sides
    if sides is None:
        return None
    n = kin.R.shape[0]
    body = sides.body
    force = sides.sign[:, None] * lam.take(sides.rows)
    # rho <= h^2/2 sum |f| |r| (tr I^-1 - u.I^-1 u): a cheap screen of the common case
    bound = np.bincount(body, np.sqrt(einsum("ij,ij->i", force, force)) * sides.reach,
                        minlength=n)
    if 0.5 * h * h * bound.max() <= RESOLVED_STIFFNESS:
        return None
    r = einsum("nij,nj->ni", kin.R.take(body, axis=0), sides.local)
    pull = np.maximum(einsum("ij,ij->i", force, r), 0.0)
    if not pull.any():
        return None
    # tr I^-1 - u.I^-1 u is the same in the body frame: precomputed (sides.across)
    rho = 0.5 * h * h * np.bincount(body, pull * sides.across, minlength=n)
    weight = np.clip(rho / RESOLVED_STIFFNESS - 1.0, 0.0, 1.0)
    scale = pull * weight[body]         # zero for the sides that do not count
    if not scale.any():
        return None
    local = sides.local
    length = np.sqrt(einsum("ij,ij->i", local, local))
    u = local / np.where(length > 0, length, 1.0)[:, None]
    blocks = np.eye(3) - u[:, :, None] * u[:, None, :]
    blocks *= scale[:, None, None]
    return sides.sum_per_body(blocks.reshape(-1, 9), n).reshape(n, 3, 3)


class AnchorSides(NamedTuple):
    """Both sides of every point-coincidence row triple (S sides); see anchor_sides."""
    body: np.ndarray     # (S,) body row
    local: np.ndarray    # (S, 3) anchor in the body frame
    rows: np.ndarray     # (S, 3) the triple's rows
    sign: np.ndarray     # (S,) sign of the triple's force on that body
    reach: np.ndarray    # (S,) |r| across
    across: np.ndarray   # (S,) tr I^-1 - u.I^-1 u, u = r / |r|: the inverse inertia across r
    indptr: np.ndarray   # the (N x S) 0/1 matrix that sums the sides of each body (CSR)
    indices: np.ndarray

    def sum_per_body(self, values: np.ndarray, n: int) -> np.ndarray:
        """(N, k) sums of the sides' rows ``values`` (S, k), each body's sides in order."""
        out = np.zeros(n * values.shape[1])
        csr_matvecs(n, values.shape[0], values.shape[1], self.indptr, self.indices,
                    np.ones(values.shape[0]), np.ascontiguousarray(values).reshape(-1), out)
        return out.reshape(n, -1)


def anchor_sides(tables, inv_inertia):
    """The AnchorSides of all point tables, or None without any: the turning reach is |r|
    times the body's inverse inertia summed over the two axes across r, rad / (N m s^2) * m
    (rotation invariants, like ``across``). inv_inertia: (N, 3, 3) body frame."""
    parts, offset = [], 0
    for table in tables:
        count = table.ROWS_PER_INSTANCE[table.kind] * table.a.shape[0]
        if table.kind == "point":
            first = offset + 3 * np.arange(table.a.shape[0])
            for body, local, sign in ((table.a, table.args[0], -1.0), (table.b, table.args[1], 1.0)):
                parts.append((body, local, first, np.full(body.shape[0], sign)))
        offset += count
    if not parts:
        return None
    body, local, first, sign = (np.concatenate(column) for column in zip(*parts))
    length = np.sqrt(einsum("ij,ij->i", local, local))
    u = local / np.where(length > 0, length, 1.0)[:, None]
    Ib = inv_inertia[body]
    across = np.trace(Ib, axis1=1, axis2=2) - einsum("ij,ij->i", u, einsum("nij,nj->ni", Ib, u))
    n = inv_inertia.shape[0]
    order = np.argsort(body, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(body, minlength=n))]).astype(np.int32)
    return AnchorSides(body, local, first[:, None] + np.arange(3), sign, length * across, across,
                       indptr, order.astype(np.int32))


# The stiffness found in a step may carry the next one (saving a factorisation) while no
# body's has moved by more than this fraction of the largest.
STIFFNESS_DRIFT = 0.05


def stiffness_carries(K_used, K_found):
    """Whether the stiffness a step was started with may stand for the one it found."""
    if K_used is None or K_found is None:
        return K_used is K_found
    change = np.sqrt(einsum("nij,nij->n", K_found - K_used, K_found - K_used)).max()
    return change <= STIFFNESS_DRIFT * np.sqrt(einsum("nij,nij->n", K_used, K_used)).max()


def augmented_inverse_inertia(R, inertia_body, stiffness, h, dyn):
    """R (I + h^2 / 4 K)^-1 R^T per body (N, 3, 3), zero for static bodies; ``inertia_body``
    (N, 3, 3) or its diagonals (N, 3), and the stiffness K (N, 3, 3), body frame. Verlet with the
    stiffness K added to the inertia this way is stable for any step (its modes of frequency
    w see w^2 / (1 + h^2 w^2 / 4) < 4 / h^2) and conserves a modified energy, so joints under
    high tension (the top of a long hanging chain) turn no faster than the step resolves."""
    out = np.zeros_like(stiffness)
    body = 0.25 * h * h * stiffness[dyn]
    if inertia_body.ndim == 2:
        diagonal = np.arange(3)
        body[:, diagonal, diagonal] += inertia_body[dyn]
    else:
        body += inertia_body[dyn]
    out[dyn] = in_world_frame(R[dyn], inverse3(body))
    return out
