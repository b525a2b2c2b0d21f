"""The step's model: what a step needs that changes only with the topology (``Model``, made by
``compile_model``), what of it holds after bodies on no joint come or go (``Kept``), and what
the velocity projection that ends a sub-step leaves for the next one to start from
(``StartCache``).

Its own module because it is the step's data, not one of its stages: the world compiles it
(``World._model``) apart from stepping, and every stage reads it.
"""
from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .assembly import Pattern, Scatter
from .collision.broadphase import PairCache
from .collision.internal_faces import carry_faces
from .contacts import excluded_pairs
from .math3d import einsum
from .placement import Alignments
from .rotation import FreeFlows
from .rows import PrimitiveTable, build_tables
from .shapes import BOX
from .sleeping import joint_links, joints_with_rows, linked_labels
from .stiffness import anchor_sides


class StartCache(NamedTuple):
    """What the velocity projection at the end of a sub-step computed at its positions, which
    are where the next sub-step starts: rotations, inverse inertias, the factorised A (with the
    inverse inertias it was made with), the joint rows."""
    x: np.ndarray
    q: np.ndarray
    R: np.ndarray
    Iinv: np.ndarray
    factor: object
    cfm: float
    stiffness: object = None  # the tension stiffness in the factorised A, if any
    metric: object = None     # the inverse inertias of the factorised A (with that stiffness)
    h: float = 0.0            # the sub-step that stiffness was weighed for
    rows: object = None       # the joint rows there (C and J; Jdu is for other velocities)


@dataclass
class Model:
    """What a step needs that only changes with the topology."""
    tables: list[PrimitiveTable]
    a: np.ndarray            # (m,) body row of each constraint row's side a
    b: np.ndarray
    owner: np.ndarray        # (m,) joint index of each row
    pattern: Pattern | None
    scatter: Scatter | None
    dynamic: np.ndarray | slice  # rows of bodies with finite mass (a slice when contiguous)
    joint_b: np.ndarray      # (nj,) body row of each joint's body_b
    joint_lb: np.ndarray     # (nj, 3) anchor on body_b, body_b frame
    collides: bool           # at least two bodies have shapes
    anchor_sides: tuple | None  # see anchor_sides()
    principal: np.ndarray | None  # (N, 3) body-frame inertia diagonals, if all are diagonal
    principal_inv: np.ndarray | None  # (N, 3) and those of the inverse inertias
    spinning: np.ndarray | slice  # dynamic bodies with an anisotropic inertia (see _spinning)
    tumbling: np.ndarray | slice  # those of them without joints (rotation.midpoint_rotation)
    flows: FreeFlows         # how each of them turns in the drift (rotation.free_rotation)
    pair_cache: PairCache    # the broadphase candidates of these bodies, kept between steps
    jointed: np.ndarray      # the body rows that joint rows act on
    mechanism: np.ndarray    # (N,) label: dynamic bodies linked by joint rows share one
    turning_reach: np.ndarray  # (N,) m^2: largest principal moment over mass (sleeping)
    alignments: Alignments | None  # the axes and frames the joints hold (placement)
    # what the step reads of the masses every step, made once with them (every change of a
    # mass, inertia, sleep or body compiles the model again): gravity's kg and the
    # kinetic energy bound's (``_energy_overflows``). From a 55-box pyramid's steps these
    # took a dozen numpy calls each, the same numbers every step.
    dynamic_mass: np.ndarray | None = None   # (N,) kg, 0 for static (and sleeping) bodies
    dynamic_mass_sum: float = 0.0            # kg, their sum (``unilateral._weight``)
    spin_weight: np.ndarray | None = None    # (dynamic,) kg m^2: tr(I) of the dynamic bodies
    # kg + kg m^2: the sums of both (inf: not known), by which the bound is known to be far
    # from overflowing without taking it (``_energy_overflows``)
    energy_weight: float = np.inf

    @functools.cached_property
    def m(self) -> int:
        """Joint rows (made once: a step asks about ten times)."""
        return self.a.shape[0]


class Kept(NamedTuple):
    """What holds of a compiled Model after bodies on no joint were appended to its world or
    removed from it, no joint's body changing row (``World._body_appended``,
    ``World.remove_body``): the joints' part of ``model`` (its tables, their rows' bodies and
    sparsity), the broadphase's last ``sweep`` (collision.broadphase.Sweep, or None) and the
    ``mechanism`` labels of the bodies it had, as their rows are now, and the internal
    ``faces`` of its static boxes once bodies were removed (collision.internal_faces.Faces,
    found again around the removed ones; None: the model's own; False: to be found again in
    full)."""
    model: Model
    sweep: object
    mechanism: np.ndarray
    faces: object = None

    @staticmethod
    def of(model: Model) -> "Kept":
        return Kept(model, model.pair_cache.sweep, model.mechanism)

    def without_rows(self, removed) -> "Kept":
        """What is kept once the bodies ``removed`` (removal.RemovedRows; on no joint) are
        gone and the bodies after them have moved down."""
        mechanism = self.mechanism
        had = removed.before(mechanism.shape[0])
        if had is not None:
            # (each one's label is its own; linked_labels numbers the groups by their first
            # row, so the others' close up over the gaps)
            labels = np.sort(mechanism.take(had.rows))
            mechanism = np.delete(mechanism, had.rows)
            mechanism -= labels.searchsorted(mechanism)
        faces = self.model.pair_cache.faces if self.faces is None else self.faces
        if faces is not None and faces is not False:
            faces = faces.without_rows(removed)
            faces = False if faces is None else faces
        return Kept(self.model, None if self.sweep is None else self.sweep.without_rows(removed),
                    mechanism, faces)


def compile_model(world, kept: Kept | None = None) -> Model:
    """Flatten the joints into primitive tables and cache the sparsity of A.

    kept: what holds of the model before bodies on no joint were appended or removed (see
    ``Kept``): the joints' part is taken from it and only what is per body is made again (a
    bullet spawned each step no longer rebuilt every joint table, the bodies' mechanism
    labels and the broadphase's sweep of all pairs)."""
    n = world._n
    pair_cache = PairCache(world._kind[:n], world._params[:n], excluded_pairs(world))
    pair_cache.static_boxes = np.flatnonzero((world._kind[:n] == BOX)
                                             & (world._inv_mass[:n] == 0))
    if kept is None:
        tables, a, b, owner, pattern, alignments = _joint_part(world)
        joint_b = joint_links(world)[:, 1].copy()
        joint_lb = np.array([j._lb for j in world._joints]).reshape(-1, 3)
        jointed = np.union1d(a, b)
        mechanism = _mechanisms(a, b, world._inv_mass[:n])
    else:
        before = kept.model
        tables, a, b, owner, pattern = (before.tables, before.a, before.b, before.owner,
                                        before.pattern)
        alignments, joint_b, joint_lb = before.alignments, before.joint_b, before.joint_lb
        jointed = before.jointed
        # (the static boxes grown across internal faces, then the sweep made of them)
        carry_faces(pair_cache, before.pair_cache, world._kind[:n], world._params[:n],
                    kept.faces)
        pair_cache.carrying(kept.sweep)
        # (an appended body is linked to none: a label of its own after the others')
        known = kept.mechanism
        mechanism = np.concatenate([known, known.max(initial=-1) + 1
                                    + np.arange(n - known.shape[0], dtype=known.dtype)])
    inv_mass = world._inv_mass[:n]
    scatter = Scatter(a, b, n) if a.size else None
    shaped = int(np.count_nonzero(world._kind[:n] >= 0))
    dynamic = _slice_if_contiguous(np.flatnonzero(inv_mass > 0))
    spinning = _spinning(world._inertia[:n], inv_mass > 0)
    tumbling = _tumbling(spinning, jointed, n)
    principal = principal_inv = None
    if _is_diagonal(world._inertia[:n]) and _is_diagonal(world._inv_inertia[:n]):
        principal = einsum("nii->ni", world._inertia[:n]).copy()
        principal_inv = einsum("nii->ni", world._inv_inertia[:n]).copy()
    # (an anchor beyond 1e154 m, accepted as finite, overflows its length here, and that
    # times the world frame's zero reach is a NaN; the step fails on that anchor with its
    # own StepError, without numpy's warnings first)
    with np.errstate(over="ignore", invalid="ignore"):
        sides = anchor_sides(tables, world._inv_inertia[:n])
    mass, moves = world._mass[:n], inv_mass > 0
    mass_sum = float(mass.sum(where=moves))
    spin_weight = np.trace(world._inertia[:n][dynamic], axis1=1, axis2=2)
    return Model(tables, a, b, owner, pattern, scatter, dynamic, joint_b, joint_lb,
                 shaped >= 2, sides,
                 principal, principal_inv, spinning, tumbling,
                 FreeFlows(principal if principal is not None else world._inertia[:n],
                           spinning, tumbling),
                 pair_cache, jointed, mechanism,
                 (principal if principal is not None
                  else np.linalg.eigvalsh(world._inertia[:n])).max(axis=1) * inv_mass,
                 alignments,
                 np.where(moves, mass, 0.0), mass_sum, spin_weight,
                 mass_sum + float(spin_weight.sum()))


def _joint_part(world):
    """The joints' primitive tables, the body rows (a, b) and joint (owner) of each of their
    rows, the sparsity of their A (None without rows) and their Alignments."""
    instances = defaultdict(list)
    made = world._joint_instances     # joint: ((index, row a, row b), its instances)
    with_rows = joints_with_rows(world)
    for index, joint in with_rows:
        key = (index, joint._rows_a, joint.body_b.row)
        known = made.get(joint)
        if known is None or known[0] != key:
            known = made[joint] = (key, joint._instances(index))
        for kind, inst in known[1]:
            instances[kind].append(inst)
    tables = build_tables(instances)
    n = world._n
    a, b = tables.a, tables.b           # the bodies of each row (built with the tables)
    owner = np.concatenate([t.row_owner for t in tables] or [[]]).astype(np.intp)
    pattern = Pattern(a, b, world._inv_mass[:n] > 0, n) if a.size else None
    return tables, a, b, owner, pattern, Alignments.of(with_rows)


def _slice_if_contiguous(rows):
    """Row indices (k,) as a slice when they are non-empty and contiguous (indexing with it
    gives views instead of copies), else as they are."""
    if rows.size and rows[-1] - rows[0] + 1 == rows.size:
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


_OFF_DIAGONAL = [1, 2, 3, 5, 6, 7]      # the off-diagonal entries of a flattened 3x3


def _is_diagonal(matrices):
    return not np.any(matrices.reshape(-1, 9)[:, _OFF_DIAGONAL])


def _spinning(inertia, dynamic):
    """The dynamic bodies whose body-frame inertia (N, 3, 3) is not a multiple of the identity
    (a slice when contiguous). Only their torque-free motion turns the angular velocity and
    only they feel a gyroscopic torque; for the others (isotropic bodies: spheres, cubes)
    both are exactly zero, and the step leaves them out of that work."""
    flat = inertia.reshape(-1, 9)
    isotropic = ((flat[:, 0] == flat[:, 4]) & (flat[:, 0] == flat[:, 8])
                 & ~np.any(flat[:, _OFF_DIAGONAL], axis=1))
    rows = np.flatnonzero(dynamic & ~isotropic)
    return _slice_if_contiguous(rows) if rows.size else slice(0, 0)


def _mechanisms(a, b, inv_mass):
    """(N,) labels: dynamic bodies linked by joint rows (their body rows a, b (m,)) share
    one; every other body has one of its own."""
    linked = (inv_mass.take(a) > 0) & (inv_mass.take(b) > 0)
    return linked_labels(a[linked], b[linked], inv_mass.shape[0])


def _tumbling(spinning, jointed, n):
    """The bodies of ``spinning`` (slice or rows) that no joint row acts on (``jointed``, rows),
    as a slice when contiguous."""
    free = np.zeros(n, dtype=bool)
    free[spinning] = True
    free[jointed] = False
    rows = np.flatnonzero(free)
    return _slice_if_contiguous(rows) if rows.size else slice(0, 0)
