"""Ray casts meet the first surface along each ray (physics.raycast), checked against a
march along the ray with each shape's own inside test."""
import numpy as np
import pytest

from physics import Box, Capsule, Cylinder, Plane, Sphere, World
from physics import raycast, raycull
from physics.math3d import quat_to_matrix


def _inside(shape, local):
    """(P,) bool: points (P, 3) in a shape's frame that lie within it."""
    x, y, z = local.T
    if isinstance(shape, Sphere):
        return x * x + y * y + z * z <= shape.radius ** 2
    if isinstance(shape, Box):
        return np.all(np.abs(local) <= np.asarray(shape.half_extents), axis=1)
    if isinstance(shape, Capsule):
        zc = np.clip(z, -shape.half_length, shape.half_length)
        return x * x + y * y + (z - zc) ** 2 <= shape.radius ** 2
    return (x * x + y * y <= shape.radius ** 2) & (np.abs(z) <= shape.half_length)


def _first_entry(body, shape, origin, direction, reach=20.0):
    """The distance where the ray first enters the body: a march of 1 mm, then bisection."""
    t = np.arange(0.0, reach, 1e-3)
    R = body.rotation
    local = (origin + t[:, None] * direction - body.position) @ R
    inside = _inside(shape, local)
    if not inside.any():
        return np.inf
    k = int(np.argmax(inside))
    if k == 0:
        return 0.0
    lo, hi = t[k - 1], t[k]
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _inside(shape, ((origin + mid * direction - body.position) @ R)[None])[0]:
            hi = mid
        else:
            lo = mid
    return hi


SHAPES = [Sphere(0.4), Box((0.5, 0.2, 0.3)), Capsule(0.15, 0.4), Cylinder(0.3, 0.25)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: type(s).__name__)
def test_rays_meet_a_turned_shape_where_a_march_along_them_enters_it(shape, monkeypatch):
    rng = np.random.default_rng(7)
    world = World()
    q = rng.normal(size=4)
    body = world.add_body(shape, mass=1.0, position=(0.3, -0.2, 1.0),
                          orientation=q / np.linalg.norm(q))
    # rays from a shell of origins at 3 m aimed at points near the body
    origins = body.position + 3.0 * _unit(rng.normal(size=(60, 3)))
    targets = body.position + rng.uniform(-0.4, 0.4, size=(60, 3))
    directions = _unit(targets - origins)
    hits = world.ray_casts(origins, 2.5 * directions)        # (any length of direction)
    expected = np.array([_first_entry(body, shape, o, d) for o, d in zip(origins, directions)])
    met = np.isfinite(expected)
    assert 15 < met.sum() < 60
    np.testing.assert_array_equal(hits.body, np.where(met, 0, -1))
    np.testing.assert_allclose(hits.distance[met], expected[met], atol=1e-9)
    assert np.all(np.isinf(hits.distance[~met])) and np.all(np.isnan(hits.point[~met]))
    # the normal is the surface's outward one: just outside along it, just inside against it
    p, n = hits.point[met], hits.normal[met]
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, rtol=1e-12)
    R = quat_to_matrix(body.orientation[None])[0]
    assert not _inside(shape, (p + 1e-6 * n - body.position) @ R).any()
    assert _inside(shape, (p - 1e-6 * n - body.position) @ R).all()
    assert np.all(np.einsum("ij,ij->i", n, directions[met]) < 0.0)
    # cast in batches of 7 rays, the same
    monkeypatch.setattr(raycast, "PAIRS_AT_ONCE", 7)
    for batched, whole in zip(world.ray_casts(origins, 2.5 * directions), hits):
        np.testing.assert_array_equal(batched, whole)


def test_each_ray_reports_the_nearest_body_within_its_reach_and_its_filters():
    world = World()
    ground = world.add_body(Plane())
    near = world.add_body(Sphere(0.5), mass=1.0, position=(0, 0, 2))
    far = world.add_body(Box((0.5, 0.5, 0.5)), mass=1.0, position=(0, 0, 4))
    far.collision_group = 2
    hit = world.ray_cast((0, 0, 10), (0, 0, -1))
    assert hit.body is far and hit.distance == pytest.approx(5.5)
    np.testing.assert_allclose(hit.point, (0, 0, 4.5))
    np.testing.assert_allclose(hit.normal, (0, 0, 1))
    assert world.ray_cast((0, 0, 10), (0, 0, -1), mask=1).body is near
    assert world.ray_cast((0, 0, 10), (0, 0, -1), ignore=[far, near]).body is ground
    assert world.ray_cast((0, 0, 10), (0, 0, -1), max_distance=5.0) is None
    # a ray starting inside a body meets it at once, its normal against the ray
    inside = world.ray_cast((0, 0, 2.1), (1, 0, 0))
    assert inside.body is near and inside.distance == 0.0
    np.testing.assert_allclose(inside.normal, (-1, 0, 0))
    # one ray up misses everything; the ground is met from above only
    assert world.ray_cast((5, 0, 1), (0, 0, 1)) is None
    hits = world.ray_casts([(5, 0, 1), (5, 0, 1)], [(0, 0, -1), (1, 0, -1)],
                           max_distance=[0.5, 2.0])
    np.testing.assert_array_equal(hits.body, [-1, ground.index])
    assert hits.distance[1] == pytest.approx(np.sqrt(2.0))


@pytest.mark.parametrize("call, words", [
    # one ray's arguments are named as given (ray_cast), a batch's by row (ray_casts)
    (lambda w: w.ray_cast((0, 0, 1), (0, 0, 0)), r"^direction must not be zero, got"),
    (lambda w: w.ray_cast((0, np.nan, 1), (0, 0, 1)), r"^origin must be finite"),
    (lambda w: w.ray_cast((0, 0), (0, 0, 1)), r"^origin must have 3 components"),
    (lambda w: w.ray_casts([(0, 0, 1)], [(0, 0, 0)]), r"^directions must not be zero: row 0"),
    (lambda w: w.ray_casts([(0, np.nan, 1)], [(0, 0, 1)]), r"^origins must be finite"),
    (lambda w: w.ray_casts([(0, 0)], [(0, 0, 1)]), r"^origins must be \(R, 3\) numbers"),
    (lambda w: w.ray_casts([(0, 0, 1)] * 2, [(0, 0, 1)] * 3), r"^origins and directions must "
                                                               r"have one row each per ray"),
    (lambda w: w.ray_cast((0, 0, 1), (0, 0, 1), max_distance=0), r"^max_distance must be "
                                                                  r"positive"),
    (lambda w: w.ray_casts([(0, 0, 1)] * 2, [(0, 0, 1)] * 2, max_distance=[1, 2, 3]),
     r"^max_distance must be one number or one per ray \(2\), got 3"),
    (lambda w: w.ray_cast((0, 0, 1), (0, 0, 1), mask=0.5), r"^mask must be an integer bit"),
    (lambda w: w.ray_cast((0, 0, 1), (0, 0, 1), ignore=[None]), r"^ignore must be bodies of "
                                                                 r"this world"),
])
def test_bad_rays_are_refused_by_name(call, words):
    world = World()
    world.add_body(Sphere(0.5), mass=1.0)
    with pytest.raises(ValueError, match=words):
        call(world)


def _unit(v):
    return v / np.linalg.norm(v, axis=1, keepdims=True)


BODIES = SHAPES + [Plane((0.0, 0.6, 0.8), 0.3)]


@pytest.mark.parametrize("shape", BODIES, ids=lambda s: type(s).__name__)
def test_a_ray_from_a_surface_point_meets_that_body_only_going_in(shape):
    """A ricochet cast from the hit point along the reflected direction, or along the
    surface, goes on past the body it starts on (the Box and the Plane met it at distance 0,
    the round shapes did not); going in it meets the body at 0 with the surface's normal;
    from inside, at 0 against the ray."""
    rng = np.random.default_rng(11)
    world = World()
    q = rng.normal(size=4)
    placed = {} if isinstance(shape, Plane) else dict(
        mass=1.0, position=(0.3, -0.2, 1.0), orientation=q / np.linalg.norm(q))
    body = world.add_body(shape, **placed)
    centre = body.position if placed else np.array([0.0, 0.0, 0.0])
    origins = centre + 3.0 * _unit(rng.normal(size=(200, 3)))
    if not placed:                                   # (from above the plane)
        origins[:, 2] = np.abs(origins[:, 2]) + 3.0
    directions = _unit(centre + rng.uniform(-0.3, 0.3, size=(200, 3)) - origins)
    first = world.ray_casts(origins, directions)
    met = first.body == 0
    assert met.sum() > 100
    p, n, d = first.point[met], first.normal[met], directions[met]
    reflected = d - 2.0 * np.einsum("ij,ij->i", d, n)[:, None] * n
    along = _unit(np.cross(n, rng.normal(size=n.shape)))
    for leaving in (reflected, along, n):
        np.testing.assert_array_equal(world.ray_casts(p, leaving).body, -1)
    going_in = world.ray_casts(p, -n)
    np.testing.assert_array_equal(going_in.body, 0)
    np.testing.assert_array_equal(going_in.distance, 0.0)
    np.testing.assert_allclose(going_in.normal, n, atol=1e-12)
    # 1 mm inside (along the normal): met at 0, the normal against the ray, in any direction
    inside = world.ray_casts(p - 1e-3 * n, reflected)
    np.testing.assert_array_equal(inside.body, 0)
    np.testing.assert_array_equal(inside.distance, 0.0)
    np.testing.assert_allclose(inside.normal, -_unit(reflected), rtol=0, atol=1e-15)


def test_the_bounding_boxes_pick_the_same_hits_as_testing_every_body():
    """The culled cast (bounding boxes swept per ray) against the exact test of every ray
    with every body, over a crowd of turned shapes, one wide slab and a plane, with rays of
    every reach, axis-aligned ones and ones starting on surfaces."""
    rng = np.random.default_rng(5)
    world = World()
    world.add_body(Plane((0, 0, 1), -1.0))
    world.add_body(Box((30.0, 30.0, 0.2)), static=True, position=(0, 0, -0.5))
    kinds = [lambda: Sphere(rng.uniform(0.1, 0.5)),
             lambda: Box(rng.uniform(0.05, 0.5, 3)),
             lambda: Capsule(rng.uniform(0.05, 0.3), rng.uniform(0.05, 0.6)),
             lambda: Cylinder(rng.uniform(0.05, 0.4), rng.uniform(0.05, 0.4))]
    for _ in range(300):
        q = rng.normal(size=4)
        world.add_body(kinds[rng.integers(4)](), mass=1.0, position=rng.uniform(-10, 10, 3),
                       orientation=q / np.linalg.norm(q))
    r = 240
    origins = rng.uniform(-12, 12, (r, 3))
    directions = _unit(rng.normal(size=(r, 3)))
    directions[:60] = np.eye(3)[rng.integers(3, size=60)] * rng.choice([-1, 1], (60, 1))
    reach = np.where(rng.random(r) < 0.5, np.inf, rng.uniform(0.5, 20.0, r))
    # a third of them again from the points they met, reflected
    hits = world.ray_casts(origins, directions, max_distance=reach)
    again = np.flatnonzero(hits.body >= 0)[:80]
    n = hits.normal[again]
    d = directions[again]
    origins = np.vstack([origins, hits.point[again]])
    directions = np.vstack([directions, d - 2.0 * np.einsum("ij,ij->i", d, n)[:, None] * n])
    reach = np.concatenate([reach, np.full(again.size, np.inf)])
    assert origins.shape[0] * len(world.bodies) > 4 * raycull.DENSE_PAIRS
    culled = world.ray_casts(origins, directions, max_distance=reach)
    count, rays = len(world.bodies), origins.shape[0]
    every = raycast.cast_pairs(world._kind[1:], world._params[1:], world.positions,
                               world.orientations, origins, directions, reach,
                               np.repeat(np.arange(rays), count), np.tile(np.arange(count), rays))
    assert 150 < (culled.body >= 0).sum() < rays
    # (the same bodies; the numbers to rounding: einsum's sums may round otherwise in
    # arrays of other lengths)
    np.testing.assert_array_equal(culled.body, every.body)
    for a, b in zip(culled[1:], every[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-14)


def test_each_ray_can_leave_out_its_own_body():
    """Ground checks cast down from each character's centre: each leaves out its own
    capsule (one list for all would leave out the one another stands on)."""
    world = World()
    ground = world.add_body(Plane())
    feet = [world.add_body(Capsule(0.3, 0.6), mass=80.0, position=(2.0 * i, 0, 0.9))
            for i in range(3)]
    top = world.add_body(Capsule(0.3, 0.6), mass=80.0, position=(0, 0, 2.7))
    characters = feet + [top]
    origins = np.array([c.position for c in characters])
    down = np.tile([0.0, 0.0, -1.0], (4, 1))
    for own in (characters, [c.index for c in characters], np.array([1, 2, 3, 4])):
        hits = world.ray_casts(origins, down, max_distance=1.0, ignore_each=own)
        np.testing.assert_array_equal(hits.body, [ground.index] * 3 + [feet[0].index])
        np.testing.assert_allclose(hits.distance, 0.9)
    # None or -1: nothing left out for that ray; ``ignore`` takes indices too
    hits = world.ray_casts(origins, down, max_distance=1.0, ignore=[ground.index],
                           ignore_each=[None, -1, feet[2], top])
    np.testing.assert_array_equal(hits.body, [feet[0].index, feet[1].index, -1, feet[0].index])
    assert world.ray_cast(origins[0], down[0], ignore=feet[0].index).body is ground
    with pytest.raises(ValueError, match=r"^ignore_each must give one body \(or -1 or None\) "
                                         r"per ray \(4\), got 3"):
        world.ray_casts(origins, down, ignore_each=characters[:3])
    with pytest.raises(ValueError, match=r"^ignore_each must be bodies of this world or their "
                                         r"indices \(0 to 4\), got index 5"):
        world.ray_casts(origins, down, ignore_each=[5, 1, 2, 3])
    with pytest.raises(ValueError, match=r"^ignore must be bodies of this world or their "
                                         r"indices \(0 to 4\), got index -2"):
        world.ray_cast(origins[0], down[0], ignore=-2)


def test_a_ray_along_an_axis_beside_a_box_misses_it():
    """A ray still along x that passes 0.1 m beside a box's face, within its bounding sphere,
    met its top face (the slab of the axis it does not move on counted as always entered)."""
    world = World()
    world.add_body(Box((0.5, 0.5, 0.5)), static=True)
    assert world.ray_cast((0.6, 0, 10), (0, 0, -1)) is None
    assert world.ray_cast((0.6, 0.6, 10), (0, 0, -1)) is None
    assert world.ray_cast((0.4, 0, 10), (0, 0, -1)).distance == 9.5
