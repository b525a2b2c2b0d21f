"""Specification of collision detection (physics.collision.find_contacts).

Conventions checked here: normals point from body_a to body_b, planes are always body_a,
depth > 0 means overlap, and each contact point lies midway between the two surfaces, so
that point + normal * depth / 2 is on a's surface and point - normal * depth / 2 on b's.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from physics.collision import ContactSet, find_contacts
from physics.collision.broadphase import PairCache, find_pairs, half_extents, sweep_and_prune
from physics.shapes import BOX, CAPSULE, CYLINDER, NO_SHAPE, PLANE, SPHERE

Z_UP = (0.0, 0.0, 1.0)


def rot(axis="z", degrees=0.0):
    return Rotation.from_euler(axis, degrees, degrees=True).as_matrix()


def body(kind, params, pos=(0, 0, 0), R=None, static=False):
    return dict(kind=kind, params=np.r_[params, np.zeros(4 - len(params))], pos=pos,
                R=np.eye(3) if R is None else R, static=static)


def plane(normal=Z_UP, offset=0.0):
    return body(PLANE, [*normal, offset], static=True)


def sphere(r, pos, **kw):
    return body(SPHERE, [r], pos, **kw)


def box(half, pos, **kw):
    return body(BOX, half, pos, **kw)


def capsule(r, hl, pos, **kw):
    return body(CAPSULE, [r, hl], pos, **kw)


def cylinder(r, hl, pos, **kw):
    return body(CYLINDER, [r, hl], pos, **kw)


def arrays(*bodies):
    kind = np.array([b["kind"] for b in bodies])
    params = np.array([b["params"] for b in bodies], dtype=float)
    pos = np.array([b["pos"] for b in bodies], dtype=float)
    R = np.array([b["R"] for b in bodies], dtype=float)
    static = np.array([b["static"] for b in bodies])
    return kind, params, pos, R, static


def collide(*bodies, margin=0.0, group=None, mask=None, excluded=(), velocity=None, dt=None):
    kind, params, pos, R, static = arrays(*bodies)
    n = len(kind)
    return find_contacts(kind, params, pos, R, static=static,
                         group=np.ones(n, int) if group is None else np.asarray(group),
                         mask=np.ones(n, int) if mask is None else np.asarray(mask),
                         excluded_pairs=np.array(excluded, dtype=int).reshape(-1, 2),
                         margin=margin, velocity=velocity, dt=dt)


# --- planes ---------------------------------------------------------------------------------

def test_sphere_sinking_into_ground_plane():
    c = collide(plane(), sphere(0.5, (1.0, 2.0, 0.4)))
    assert len(c) == 1
    assert (c.body_a[0], c.body_b[0]) == (0, 1)          # the plane is body a
    np.testing.assert_allclose(c.depth, [0.1])
    np.testing.assert_allclose(c.normal, [[0, 0, 1]])
    np.testing.assert_allclose(c.point, [[1.0, 2.0, -0.05]])  # midway: plane 0, sphere -0.1
    assert c.point.dtype == np.float64 and c.feature.dtype == np.int64


def test_tilted_plane_with_offset():
    n = np.array([0.0, 0.6, 0.8])
    c = collide(plane(n, 1.0), sphere(0.5, n * 1.3))       # centre 0.3 above the plane
    np.testing.assert_allclose(c.depth, [0.2])
    np.testing.assert_allclose(c.normal, [n])


def test_box_resting_on_plane_gives_its_four_bottom_corners():
    c = collide(plane(), box((0.5, 0.3, 0.2), (0.0, 0.0, 0.19)))
    assert len(c) == 4
    np.testing.assert_allclose(c.depth, 0.01)
    np.testing.assert_allclose(np.sort(np.abs(c.point[:, :2]), axis=0), [[0.5, 0.3]] * 4)
    np.testing.assert_allclose(c.point[:, 2], -0.005)
    assert len(set(c.feature)) == 4


def test_box_on_one_corner_and_within_margin():
    R = Rotation.from_euler("xy", [30, 20], degrees=True).as_matrix()
    b = box((0.5, 0.3, 0.2), (0.0, 0.0, 0.5), R=R)
    lowest = 0.5 - np.abs(R).dot([0.5, 0.3, 0.2])[2]
    c = collide(plane(), b)
    assert len(c) == 0 if lowest > 0 else len(c) >= 1
    c = collide(plane(), b, margin=lowest + 1e-9)
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [-lowest])


def test_capsule_lying_on_plane_gives_both_end_spheres():
    c = collide(plane(), capsule(0.2, 0.5, (0.0, 0.0, 0.19), R=rot("y", 90)))
    assert len(c) == 2
    np.testing.assert_allclose(np.sort(c.point[:, 0]), [-0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(c.depth, 0.01)


def test_standing_capsule_touches_with_its_lower_end_only():
    c = collide(plane(), capsule(0.2, 0.5, (0.0, 0.0, 0.69)))
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [0.01])


def test_cylinder_on_plane_standing_lying_and_tilted():
    standing = collide(plane(), cylinder(0.3, 0.5, (0, 0, 0.49)))
    assert len(standing) == 4
    np.testing.assert_allclose(standing.depth, 0.01)
    np.testing.assert_allclose(np.hypot(*standing.point[:, :2].T), 0.3)

    lying = collide(plane(), cylinder(0.3, 0.5, (0, 0, 0.29), R=rot("x", 90)))
    assert len(lying) == 2
    np.testing.assert_allclose(lying.depth, 0.01)
    np.testing.assert_allclose(np.sort(lying.point[:, 1]), [-0.5, 0.5], atol=1e-12)

    reach = 0.5 * np.cos(np.pi / 6) + 0.3 * np.sin(np.pi / 6)   # lowest rim point below centre
    assert len(collide(plane(), cylinder(0.3, 0.5, (0, 0, reach + 0.001), R=rot("x", 30)))) == 0
    tilted = collide(plane(), cylinder(0.3, 0.5, (0, 0, reach - 0.01), R=rot("x", 30)))
    assert len(tilted) == 1
    np.testing.assert_allclose(tilted.depth, [0.01])


# --- spheres and capsules -------------------------------------------------------------------

def test_two_spheres():
    c = collide(sphere(0.5, (0, 0, 0)), sphere(0.3, (0.7, 0, 0)))
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [0.1])
    n_from_a = c.normal[0] if c.body_a[0] == 0 else -c.normal[0]
    np.testing.assert_allclose(n_from_a, [1, 0, 0])
    np.testing.assert_allclose(c.point, [[0.45, 0, 0]])    # a's surface 0.5, b's 0.4


def test_crossed_capsules_touch_at_one_point():
    c = collide(capsule(0.1, 1.0, (0, 0, 0), R=rot("y", 90)),
                capsule(0.1, 1.0, (0.3, 0.2, 0.15), R=rot("x", 90)))
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [0.05])
    np.testing.assert_allclose(c.point, [[0.3, 0, 0.075]], atol=1e-12)


def test_parallel_capsules_give_the_ends_of_their_overlap():
    c = collide(capsule(0.1, 1.0, (0, 0, 0), R=rot("y", 90)),
                capsule(0.1, 0.5, (0.8, 0, 0.19), R=rot("y", 90)))
    assert len(c) == 2
    np.testing.assert_allclose(np.sort(c.point[:, 0]), [0.3, 1.0])
    np.testing.assert_allclose(c.depth, 0.01)


# --- boxes ----------------------------------------------------------------------------------

def test_sphere_against_box_face_edge_and_inside():
    ground = box((1, 1, 0.5), (0, 0, 0), static=True)
    face = collide(ground, sphere(0.2, (0.3, 0.4, 0.65)))
    np.testing.assert_allclose(face.depth, [0.05])
    np.testing.assert_allclose(face.normal, [[0, 0, 1]])     # box (a) -> sphere (b)
    edge = collide(ground, sphere(0.2, (1.1, 0, 0.6)))
    np.testing.assert_allclose(edge.depth, [0.2 - np.sqrt(0.02)])
    np.testing.assert_allclose(edge.normal, [[np.sqrt(0.5), 0, np.sqrt(0.5)]])
    inside = collide(ground, sphere(0.2, (0.0, 0.0, 0.4)))   # centre 0.1 below the top
    np.testing.assert_allclose(inside.depth, [0.3])
    np.testing.assert_allclose(inside.normal, [[0, 0, 1]])


def test_capsule_lying_on_box_and_overhanging_its_edge():
    ground = box((1, 1, 0.5), (0, 0, 0), static=True)
    c = collide(ground, capsule(0.1, 0.6, (0.0, 0.0, 0.59), R=rot("y", 90)))
    assert len(c) == 2
    np.testing.assert_allclose(np.sort(c.point[:, 0]), [-0.6, 0.6])
    np.testing.assert_allclose(c.depth, 0.01)
    over = collide(ground, capsule(0.1, 0.6, (0.8, 0.0, 0.59), R=rot("y", 90)))
    assert len(over) == 2                                   # one end and the box edge
    np.testing.assert_allclose(np.sort(over.point[:, 0]), [0.2, 1.0])
    np.testing.assert_allclose(over.normal, [[0, 0, 1]] * 2)


def test_small_box_resting_on_big_box():
    c = collide(box((1, 1, 0.5), (0, 0, 0), static=True), box((0.2, 0.3, 0.1), (0.1, 0, 0.59)))
    assert len(c) == 4
    np.testing.assert_allclose(c.depth, 0.01)
    np.testing.assert_allclose(np.sort(c.point[:, 0]), [-0.1, -0.1, 0.3, 0.3])
    np.testing.assert_allclose(c.normal, [[0, 0, 1]] * 4)


def test_box_rotated_45_degrees_on_box_is_clipped_to_the_overlap():
    bottom = box((1, 1, 0.5), (0, 0, 0), static=True)
    top = box((0.9, 0.9, 0.25), (0, 0, 0.74), R=rot("z", 45))
    c = collide(bottom, top)
    # The overlap of the 2 x 2 square and the rotated square is an octagon: 4 of its corners.
    assert len(c) == 4
    np.testing.assert_allclose(c.depth, 0.01)
    np.testing.assert_allclose(c.normal, [[0, 0, 1]] * 4)
    np.testing.assert_allclose(c.point[:, 2], 0.495)
    x, y = c.point[:, 0], c.point[:, 1]
    tol = 1e-9
    assert np.all(np.abs(x) <= 1 + tol) and np.all(np.abs(y) <= 1 + tol)
    assert np.all(np.abs(x) + np.abs(y) <= 0.9 * np.sqrt(2) + tol)
    # Spread over the octagon, not bunched on one side.
    assert np.ptp(x) > 1.0 and np.ptp(y) > 1.0


def test_box_edge_across_box_edge_gives_one_point():
    a = box((0.5, 0.5, 0.5), (0, 0, 0), R=rot("y", 45))         # top edge along y
    b = box((0.5, 0.5, 0.5), (0, 0, 2 * np.sqrt(0.5) - 0.02), R=rot("x", 45))  # bottom along x
    c = collide(a, b)
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [0.02], atol=1e-12)
    np.testing.assert_allclose(c.point, [[0, 0, np.sqrt(0.5) - 0.01]], atol=1e-12)
    np.testing.assert_allclose(np.abs(c.normal), [[0, 0, 1]], atol=1e-12)


# --- cylinders ------------------------------------------------------------------------------

def test_cylinder_against_boxes_spheres_and_capsules():
    ground = box((1, 1, 0.5), (0, 0, 0), static=True)
    standing = collide(ground, cylinder(0.3, 0.4, (0, 0, 0.89)))
    assert len(standing) == 4
    np.testing.assert_allclose(standing.depth, 0.01)
    lying = collide(ground, cylinder(0.3, 0.4, (0, 0, 0.79), R=rot("x", 90)))
    assert len(lying) == 2
    np.testing.assert_allclose(lying.depth, 0.01)
    # Box resting on the top cap of a cylinder: its 4 bottom corners.
    on_cap = collide(cylinder(0.5, 0.5, (0, 0, 0), static=True), box((0.2, 0.2, 0.1), (0, 0, 0.59)))
    assert len(on_cap) == 4
    np.testing.assert_allclose(on_cap.depth, 0.01)
    np.testing.assert_allclose(on_cap.normal, [[0, 0, 1]] * 4)

    cyl = cylinder(0.5, 0.5, (0, 0, 0), static=True)
    side = collide(cyl, sphere(0.2, (0.6, 0, 0.1)))
    np.testing.assert_allclose(side.depth, [0.1])
    np.testing.assert_allclose(side.normal, [[1, 0, 0]])
    flat = collide(cyl, capsule(0.1, 0.3, (0.0, 0.0, 0.59), R=rot("y", 90)))
    assert len(flat) == 2
    np.testing.assert_allclose(flat.depth, 0.01)
    stacked = collide(cyl, cylinder(0.3, 0.2, (0, 0, 0.69)))
    assert len(stacked) == 4
    np.testing.assert_allclose(stacked.depth, 0.01)


# --- filters, margins, speculative contacts -------------------------------------------------

def test_masks_exclusions_static_pairs_and_shapeless_bodies_do_not_collide():
    a, b = sphere(0.5, (0, 0, 0)), sphere(0.5, (0.8, 0, 0))
    assert len(collide(a, b)) == 1
    assert len(collide(a, b, group=[1, 2], mask=[1, 1])) == 0     # b's group not in a's mask
    assert len(collide(a, b, group=[1, 2], mask=[2, 1])) == 1
    assert len(collide(a, b, excluded=[(1, 0)])) == 0
    assert len(collide(a, b, excluded=[(0, 1)])) == 0
    assert len(collide(dict(a, static=True), dict(b, static=True))) == 0
    assert len(collide(plane(), box((1, 1, 1), (0, 0, 0), static=True))) == 0
    ghost = body(NO_SHAPE, [], (0, 0, 0))
    assert len(collide(ghost, b, plane())) == 1                  # only plane-sphere
    assert len(collide(plane(), sphere(0.5, (0, 0, 0.4)), mask=[0, 1])) == 0


def test_gap_beyond_margin_gives_nothing_and_within_margin_a_negative_depth():
    a, b = sphere(0.5, (0, 0, 0)), sphere(0.5, (1.05, 0, 0))
    assert len(collide(a, b)) == 0
    assert len(collide(a, b, margin=0.04)) == 0
    c = collide(a, b, margin=0.06)
    np.testing.assert_allclose(c.depth, [-0.05])
    np.testing.assert_allclose(c.point, [[0.525, 0, 0]])
    boxes = collide(plane(), box((0.5, 0.5, 0.5), (0, 0, 0.53)), margin=0.05)
    assert len(boxes) == 4
    np.testing.assert_allclose(boxes.depth, -0.03)


def test_fast_bodies_get_speculative_contacts():
    fast = sphere(0.1, (0, 0, 0.6))
    vel = np.array([[0, 0, 0], [0, 0, -40.0]])
    assert len(collide(plane(), fast)) == 0
    c = collide(plane(), fast, velocity=vel, dt=1 / 60)       # 0.67 m this step
    np.testing.assert_allclose(c.depth, [-0.5])
    # Two spheres closing at 60 m/s, 0.8 m apart.
    vel = np.array([[30.0, 0, 0], [-30.0, 0, 0]])
    c = collide(sphere(0.1, (0, 0, 0)), sphere(0.1, (1.0, 0, 0)), velocity=vel, dt=1 / 60)
    np.testing.assert_allclose(c.depth, [-0.8])
    c = collide(sphere(0.1, (0, 0, 0)), sphere(0.1, (1.0, 0, 0)), velocity=-vel, dt=1 / 60)
    assert len(c) == 1   # |v_rel| dt bounds the margin; the solver will only allow the gap


def test_empty_inputs():
    c = collide(plane())
    assert isinstance(c, ContactSet) and len(c) == 0
    assert ContactSet.empty().point.shape == (0, 3)


# --- broadphase -----------------------------------------------------------------------------

def random_bodies(n, rng, spread=4.0, kinds=(SPHERE, BOX, CAPSULE, CYLINDER)):
    kind = rng.choice(kinds, n)
    size = rng.uniform(0.05, 0.3, (n, 3))
    params = np.zeros((n, 4))
    params[:, :3] = size
    params[kind == SPHERE, 1:] = 0
    params[(kind == CAPSULE) | (kind == CYLINDER), 2] = 0
    pos = rng.uniform(-spread / 2, spread / 2, (n, 3))
    R = Rotation.random(n, random_state=rng.integers(1 << 31)).as_matrix()
    return kind, params, pos, R


def test_sweep_and_prune_matches_brute_force_on_500_bodies():
    rng = np.random.default_rng(1)
    kind, params, pos, R = random_bodies(500, rng)
    ext = half_extents(kind, params, R)
    lo, hi = pos - ext, pos + ext
    i, j = sweep_and_prune(lo, hi)
    found = {(min(p), max(p)) for p in zip(i.tolist(), j.tolist())}
    overlap = np.all((lo[:, None] <= hi[None]) & (lo[None] <= hi[:, None]), axis=2)
    bi, bj = np.nonzero(np.triu(overlap, 1))
    assert len(found) == len(i)                 # each pair once
    assert found == set(zip(bi.tolist(), bj.tolist()))
    assert len(found) > 100


def test_cached_broadphase_finds_exactly_the_pairs_of_a_fresh_sweep():
    """Bodies drift, turn and speed up for 60 steps, and a few teleport; every step the pair
    cache must give the fresh sweep's pairs in the fresh sweep's order (so replays stay
    bitwise exact), while sweeping again only when something has left its skin."""
    rng = np.random.default_rng(7)
    n = 300
    kind, params, pos, R = random_bodies(n, rng)
    kind[:2] = PLANE                                   # a floor and a wall
    params[0], params[1] = (0, 0, 1, -2.0), (1, 0, 0, -2.0)
    static = kind == PLANE
    static[2:12] = True                                # some static boxes and spheres
    group, mask = np.ones(n, np.int64), np.ones(n, np.int64)
    mask[20:30] = 0                                    # ghosts
    excluded = np.array([[40, 41], [42, 43]])
    cache, sweeps = PairCache(), 0
    vel = np.where(static[:, None], 0.0, rng.normal(0, 0.5, (n, 3)))
    for step in range(60):
        reach = np.linalg.norm(vel, axis=1) / 240
        args = (kind, params, pos, R, static, group, mask, excluded, 0.01, reach)
        before = cache.anchor
        cached = find_pairs(*args, cache=cache)
        sweeps += cache.anchor is not before
        fresh = find_pairs(*args)
        for a, b in zip(cached, fresh):
            np.testing.assert_array_equal(a, b)
        pos = pos + vel / 240
        R = Rotation.from_rotvec(rng.normal(0, 0.02, (n, 3))).as_matrix() @ R
        vel = vel * 1.05
        if step % 20 == 19:
            pos[50] += 0.5                             # a teleport forces a new sweep
    assert len(fresh[0]) > 50 and len(fresh[2]) > 10
    assert 3 <= sweeps < 30


def test_contact_pairs_of_500_random_spheres_match_brute_force():
    rng = np.random.default_rng(2)
    n = 500
    r = rng.uniform(0.05, 0.25, n)
    pos = rng.uniform(-2, 2, (n, 3))
    kind = np.full(n, SPHERE)
    params = np.c_[r, np.zeros((n, 3))]
    c = find_contacts(kind, params, pos, np.tile(np.eye(3), (n, 1, 1)), static=np.zeros(n, bool),
                      group=np.ones(n, int), mask=np.ones(n, int),
                      excluded_pairs=np.zeros((0, 2), int))
    found = {(min(p), max(p)) for p in zip(c.body_a.tolist(), c.body_b.tolist())}
    dist = np.linalg.norm(pos[:, None] - pos[None], axis=2)
    bi, bj = np.nonzero(np.triu(dist < r[:, None] + r[None], 1))
    assert found == set(zip(bi.tolist(), bj.tolist())) and len(found) > 20
    np.testing.assert_allclose(c.depth, r[c.body_a] + r[c.body_b] - dist[c.body_a, c.body_b])


def test_every_body_reaching_below_the_ground_touches_it_and_no_other():
    rng = np.random.default_rng(3)
    kind, params, pos, R = random_bodies(500, rng)
    a = R[:, 2, :]                   # world z component of each local axis
    r, hl = params[:, 0], params[:, 1]
    reach = np.select([kind == SPHERE, kind == BOX, kind == CAPSULE, kind == CYLINDER],
                      [r, np.sum(np.abs(a) * params[:, :3], 1),
                       r + hl * np.abs(a[:, 2]),
                       hl * np.abs(a[:, 2]) + r * np.sqrt(1 - a[:, 2] ** 2)])
    lowest = pos[:, 2] - reach       # the ground is z = -1: about a quarter reach below it
    n = len(kind) + 1
    c = find_contacts(np.r_[PLANE, kind], np.r_[[[0, 0, 1, -1.0]], params],
                      np.r_[np.zeros((1, 3)), pos], np.r_[np.eye(3)[None], R],
                      static=np.zeros(n, bool), group=np.ones(n, int), mask=np.ones(n, int),
                      excluded_pairs=np.zeros((0, 2), int))
    on_ground = c.body_a == 0
    assert np.sum(lowest < -1.0) > 100
    assert set(c.body_b[on_ground] - 1) == set(np.flatnonzero(lowest < -1.0))
    deepest = np.full(n, -np.inf)
    np.maximum.at(deepest, c.body_b[on_ground], c.depth[on_ground])
    np.testing.assert_allclose(deepest[1:][lowest < -1.0], -1.0 - lowest[lowest < -1.0])


# --- stability and geometric consistency ----------------------------------------------------

def keys(c):
    return set(map(tuple, c.keys().tolist()))


def test_feature_ids_are_stable_when_a_box_moves_slightly():
    bottom = box((1, 1, 0.5), (0, 0, 0), static=True)
    for R0, half in ((rot("z", 45), 0.9), (rot("z", 10), 0.3)):
        before = collide(plane(), bottom, box((half, half, 0.25), (0, 0, 0.74), R=R0))
        nudge = Rotation.from_rotvec([0.003, -0.002, 0.004]).as_matrix()
        after = collide(plane(), bottom,
                        box((half, half, 0.25), (0.002, -0.001, 0.7405), R=nudge @ R0))
        assert len(before) == 4 and keys(before) == keys(after)
    c0 = collide(plane(), box((0.5, 0.3, 0.2), (0, 0, 0.19)))
    c1 = collide(plane(), box((0.5, 0.3, 0.2), (0.01, 0, 0.191), R=rot("z", 1)))
    assert keys(c0) == keys(c1)


def sdf(b, x):
    """Independent signed distance of world points x (K, 3) to body dict b."""
    p = (x - b["pos"]) @ b["R"]
    k, q = b["kind"], b["params"]
    if k == SPHERE:
        return np.linalg.norm(p, axis=1) - q[0]
    if k == CAPSULE:
        z = np.clip(p[:, 2], -q[1], q[1])
        return np.linalg.norm(p - np.c_[0 * z, 0 * z, z], axis=1) - q[0]
    if k == BOX:
        d = np.abs(p) - q[:3]
        return np.linalg.norm(np.maximum(d, 0), axis=1) + np.minimum(d.max(axis=1), 0)
    if k == CYLINDER:
        d = np.c_[np.hypot(p[:, 0], p[:, 1]) - q[0], np.abs(p[:, 2]) - q[1]]
        return np.linalg.norm(np.maximum(d, 0), axis=1) + np.minimum(d.max(axis=1), 0)
    raise ValueError(k)


@pytest.mark.parametrize("kinds", [(SPHERE, SPHERE), (SPHERE, CAPSULE), (CAPSULE, CAPSULE),
                                   (BOX, SPHERE), (BOX, CAPSULE), (BOX, BOX),
                                   (CYLINDER, SPHERE), (CYLINDER, CAPSULE), (CYLINDER, BOX),
                                   (CYLINDER, CYLINDER)])
def test_random_poses_contact_points_lie_on_both_surfaces(kinds):
    rng = np.random.default_rng(sum(kinds) + 10 * kinds[0])
    hits = singles = 0
    for trial in range(60):
        bodies = []
        for k in kinds:
            q = rng.uniform(0.2, 0.6, 3)
            params = {SPHERE: q[:1], CAPSULE: q[:2], BOX: q, CYLINDER: q[:2]}[k]
            R = Rotation.random(random_state=rng.integers(1 << 31)).as_matrix()
            bodies.append(body(k, params, rng.uniform(-0.5, 0.5, 3), R=R))
        c = collide(*bodies, margin=0.05)
        if len(c) == 0:
            continue
        hits += 1
        np.testing.assert_allclose(np.linalg.norm(c.normal, axis=1), 1.0)
        a, b = bodies[c.body_a[0]], bodies[c.body_b[0]]
        on_a = c.point + c.normal * c.depth[:, None] / 2
        on_b = c.point - c.normal * c.depth[:, None] / 2
        assert np.all(sdf(a, on_a) <= 1e-6) and np.all(sdf(b, on_b) <= 1e-6)
        # Exact points: those of box-box manifolds, and the single deepest point (feature 0)
        # of a sphere or capsule against anything. Others may sit inside a surface, e.g. the
        # end of a capsule clipped at a box edge, or be approximations (cylinder-box).
        exact = slice(None) if kinds == (BOX, BOX) else c.feature == 0
        if kinds[1] in (SPHERE, CAPSULE) and kinds[0] != kinds[1]:
            # ... and only while b's axis stays outside a: deeper, the deepest point of the
            # axis may sit on an edge of a's signed distance, where no normal is exact.
            exact &= c.depth < b["params"][0]
        if kinds[1] in (SPHERE, CAPSULE) or kinds == (BOX, BOX):
            np.testing.assert_allclose(sdf(a, on_a[exact]), 0, atol=1e-6)
            np.testing.assert_allclose(sdf(b, on_b[exact]), 0, atol=1e-6)
            singles += len(on_a[exact])
    assert hits > 20 and (singles >= 5 or kinds[1] in (BOX, CYLINDER))
