"""Vectorised rotation helpers. Quaternions are scalar-first (w, x, y, z), body to world."""
from __future__ import annotations

import numpy as np

try:        # np.einsum without its dispatch layers: with optimize=False it calls just this
    from numpy._core.multiarray import c_einsum as einsum
except ImportError:                    # pragma: no cover
    einsum = np.einsum

try:        # np.clip's ufunc, which np.clip calls for float arrays with both bounds (its Python
    # layers cost three times the clip of a few hundred numbers)
    from numpy._core.umath import clip
except ImportError:                    # pragma: no cover
    clip = np.clip


# R = 1 + (the ten products q_i q_j, i <= j) @ _QUAT_PRODUCTS_TO_R: every entry of the rotation
# matrix is 0 or 1 plus +-2 times two of these products (the sums are exact, so the result is
# the textbook formula's to the last bit; one small matrix product instead of 9 assignments)
_QUAT_I = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 3])
_QUAT_J = np.array([0, 1, 2, 3, 1, 2, 3, 2, 3, 3])
_QUAT_PRODUCTS_TO_R = np.zeros((10, 9))
for _entry, _terms in enumerate((
        ((2, 2, -2), (3, 3, -2)), ((1, 2, 2), (0, 3, -2)), ((1, 3, 2), (0, 2, 2)),
        ((1, 2, 2), (0, 3, 2)), ((1, 1, -2), (3, 3, -2)), ((2, 3, 2), (0, 1, -2)),
        ((1, 3, 2), (0, 2, -2)), ((2, 3, 2), (0, 1, 2)), ((1, 1, -2), (2, 2, -2)))):
    for _i, _j, _c in _terms:
        _QUAT_PRODUCTS_TO_R[np.flatnonzero((_QUAT_I == _i) & (_QUAT_J == _j))[0], _entry] = _c
_IDENTITY9 = np.eye(3).reshape(9)


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """(n, 4) unit quaternions -> (n, 3, 3) rotation matrices."""
    products = q.take(_QUAT_I, axis=1) * q.take(_QUAT_J, axis=1)
    return (products @ _QUAT_PRODUCTS_TO_R + _IDENTITY9).reshape(-1, 3, 3)


def matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """One (3, 3) rotation matrix -> its unit quaternion (w, x, y, z) (scipy's conversion)."""
    from scipy.spatial.transform import Rotation
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    q = np.array([w, x, y, z])
    return q / np.linalg.norm(q)


# Component c of the Hamilton product a * b is sum_t a_t s[t, c] b[_QM_B[t, c]], the four
# terms t in the textbook order (aw bw - ax bx - ay by - az bz, ...). The signed, permuted b
# (n, 4, 4) is one product with a matrix of 0 and +-1 (exact: one non-zero term per entry),
# and einsum sums the four terms in order t = 0..3, as the textbook does: the same bits as
# sixteen products on columns, in two numpy calls
_QM_B = np.array([[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]]).ravel()
_QM_SIGN = np.array([[1, 1, 1, 1], [-1, 1, -1, 1], [-1, 1, 1, -1], [-1, -1, 1, 1]],
                    dtype=float).ravel()
_QM_SIGNED_B = np.zeros((4, 16))
_QM_SIGNED_B[_QM_B, np.arange(16)] = _QM_SIGN


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a * b for (n, 4) arrays, or (4,) ones (a (4,) factor with an (n, 4)
    one multiplies each of the n; two (4,) give a (4,))."""
    if np.ndim(a) != 2 or np.ndim(b) != 2:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        shape = np.broadcast_shapes(a.shape, b.shape)       # (4,) or (n, 4)
        a, b = (np.broadcast_to(x, shape).reshape(-1, 4) for x in (a, b))
        return quat_multiply(a, b).reshape(shape)
    signed_b = (b @ _QM_SIGNED_B).reshape(-1, 4, 4)     # [t, c]
    return einsum("nt,ntc->nc", a, signed_b)


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def rotation_vector_to_quat(phi: np.ndarray) -> np.ndarray:
    """Exact exponential map: (n, 3) rotation vectors (axis * angle, rad) -> (n, 4)."""
    angle = np.sqrt(einsum("ij,ij->i", phi, phi))
    half = 0.5 * angle
    # sin(half) / angle, 1/2 at zero. (Below 1e-8 rad sin(half) is half and the quotient
    # exactly 1/2, as its series 1/2 - angle^2/48 is in floating point: one division with a
    # default, without a branch for static bodies, whose angle is always zero.)
    k = np.empty_like(angle)
    k.fill(0.5)                         # (np.full costs twice as much on short arrays)
    np.divide(np.sin(half), angle, out=k, where=angle > 0)
    out = np.empty((phi.shape[0], 4))
    np.cos(half, out=out[:, 0])
    np.multiply(phi, k[:, None], out=out[:, 1:])
    return out


def rotate_quat(q: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """Apply world-frame rotation vectors phi (n, 3) to orientations q (n, 4), renormalised."""
    return turn_quat(q, rotation_vector_to_quat(phi))


def turn_quat(q: np.ndarray, turn: np.ndarray) -> np.ndarray:
    """Apply world-frame rotations ``turn`` (n, 4), unit quaternions, to orientations q (n, 4),
    renormalised."""
    out = quat_multiply(turn, q)
    sq = out * out      # np.linalg.norm's sum, by columns (numpy's short-axis sums are slower)
    out /= np.sqrt(((sq[:, 0] + sq[:, 1]) + sq[:, 2]) + sq[:, 3])[:, None]
    return out


def quat_to_rotation_vector(q: np.ndarray) -> np.ndarray:
    """Logarithm map (n, 4) -> (n, 3), angle in [0, pi]."""
    q = np.where(q[:, :1] < 0, -q, q)
    s = np.linalg.norm(q[:, 1:], axis=1)
    angle = 2.0 * np.arctan2(s, q[:, 0])
    k = np.where(s < 1e-12, 2.0, angle / np.where(s < 1e-12, 1.0, s))
    return q[:, 1:] * k[:, None]


def rotate_by_quat(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors v (n, 3) by unit quaternions q (n, 4): v + w t + u x t, t = 2 u x v."""
    u = q[:, 1:]
    t = 2.0 * cross(u, v)
    return v + q[:, :1] * t + cross(u, t)


def rotate(r: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Apply (n, 3, 3) rotations to (n, 3) vectors."""
    return einsum("nij,nj->ni", r, v)


# the cyclic successors of the components x, y, z: (y, z, x) and (z, x, y)
_NEXT = np.array([1, 2, 0])
_AFTER = np.array([2, 0, 1])


# Below this many rows numpy's per-call cost dominates and cross gathers the components with
# four calls; above it, per-component products on column views move less memory (measured:
# 100 rows 3.0 vs 5.4 us, 10000 rows 300 vs 155 us).
_GATHER_ROWS = 2048


def cross(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Row-wise cross product of (..., 3) arrays (broadcast against each other):
    a_{i+1} b_{i+2} - a_{i+2} b_{i+1} for each component, the same arithmetic either way, so
    the same result. ``out``: an array (or view) to write it into."""
    if out is None and max(a.size, b.size) <= 3 * _GATHER_ROWS:
        return (a.take(_NEXT, axis=-1) * b.take(_AFTER, axis=-1)
                - a.take(_AFTER, axis=-1) * b.take(_NEXT, axis=-1))
    if out is None:
        out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    cross_components([a[..., i] for i in range(3)], [b[..., i] for i in range(3)],
                     [out[..., i] for i in range(3)])
    return out


def cross_components(a, b, out):
    """a x b on components: a, b sequences of three arrays (or numbers) and out of three
    arrays written in place, a_{i+1} b_{i+2} - a_{i+2} b_{i+1} each (``cross``'s arithmetic;
    for data laid out by components, whose whole contiguous rows numpy handles fastest)."""
    np.subtract(a[1] * b[2], a[2] * b[1], out=out[0])
    np.subtract(a[2] * b[0], a[0] * b[2], out=out[1])
    np.subtract(a[0] * b[1], a[1] * b[0], out=out[2])


# skew(r)[i, j] = -eps_ijk r_k as one (3, 9) matrix, so that a whole batch is one product
_SKEW = np.zeros((3, 3, 3))
_SKEW[2, 0, 1] = _SKEW[0, 1, 2] = _SKEW[1, 2, 0] = -1.0
_SKEW[1, 0, 2] = _SKEW[2, 1, 0] = _SKEW[0, 2, 1] = 1.0
_SKEW = _SKEW.reshape(3, 9)


def skew(r: np.ndarray) -> np.ndarray:
    """(n, 3) -> (n, 3, 3) cross-product matrices: skew(r) @ v = r x v."""
    return (r @ _SKEW).reshape(-1, 3, 3)


# Entry (k, i) of the rows' cross products r_{k+1} x r_{k+2} of a 3x3 matrix is
# r_{k+1}[i+1] r_{k+2}[i+2] - r_{k+1}[i+2] r_{k+2}[i+1]; these are the four flat (row-major)
# indices of those factors for all nine entries
_K_NEXT, _K_AFTER = 3 * np.repeat(_NEXT, 3), 3 * np.repeat(_AFTER, 3)
_I_NEXT, _I_AFTER = np.tile(_NEXT, 3), np.tile(_AFTER, 3)
_ADJ = (_K_NEXT + _I_NEXT, _K_AFTER + _I_AFTER, _K_NEXT + _I_AFTER, _K_AFTER + _I_NEXT)


# ... and of the columns' cross products c_{k+1} x c_{k+2} (the rows of the adjugate)
_ADJ_COLUMNS = tuple(3 * (index % 3) + index // 3 for index in _ADJ)


def _cofactor_products(m: np.ndarray, table) -> np.ndarray:
    """(n, 3, 3) cofactors of the (n, 3, 3) matrices m, arranged by ``table`` (_ADJ_COLUMNS:
    the adjugate; _ADJ: its transpose), all nine by four gathers from the flat matrices."""
    flat = m.reshape(-1, 9)
    p, q, r, s = table
    return (flat.take(p, axis=1) * flat.take(q, axis=1)
            - flat.take(r, axis=1) * flat.take(s, axis=1)).reshape(-1, 3, 3)


def inverse3(m: np.ndarray) -> np.ndarray:
    """Inverses of (n, 3, 3) matrices by the adjugate, whose rows are the cross products of
    pairs of columns (several times faster than np.linalg.inv for thousands of small
    matrices); the caller ensures they are regular."""
    out = _cofactor_products(m, _ADJ_COLUMNS)
    out /= einsum("ij,ij->i", m[:, :, 0], out[:, 0])[:, None, None]
    return out


def solve3(m: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x (n, 3) with m x = b for (n, 3, 3) matrices by Cramer's rule: the columns of the
    adjugate are the cross products of pairs of rows. Several times faster than
    np.linalg.solve for many small systems; for well-conditioned m only (no pivoting)."""
    adjugate_t = _cofactor_products(m, _ADJ)
    det = einsum("ij,ij->i", m[:, 0], adjugate_t[:, 0])
    return einsum("nki,nk->ni", adjugate_t, b) / det[:, None]


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return einsum("ij,ij->i", a, b)


def nonzero_rows(x: np.ndarray) -> np.ndarray:
    """(n,) bool: the rows of x (n, 3) with a component that is not zero (a NaN counts, as
    in x.any(axis=1)), by columns: numpy reduces over a short last axis a few numbers at a
    time, and past ~2000 rows far slower still (1000 rows: 11 against 4 us; 2000: 182)."""
    return (x[:, 0] != 0.0) | (x[:, 1] != 0.0) | (x[:, 2] != 0.0)


def perpendicular_pair(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors that with the unit ``axis`` (3,) form a right-handed frame."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    p1 = np.cross(axis, helper)
    p1 /= np.linalg.norm(p1)
    return p1, np.cross(axis, p1)
