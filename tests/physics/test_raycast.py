"""Ray casts meet the first surface along each ray (physics.raycast), checked against a
march along the ray with each shape's own inside test."""
import numpy as np
import pytest

from physics import Box, Capsule, Cylinder, Plane, Sphere, World
from physics import raycast
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
    (lambda w: w.ray_cast((0, 0, 1), (0, 0, 0)), r"^directions must not be zero: row 0"),
    (lambda w: w.ray_cast((0, np.nan, 1), (0, 0, 1)), r"^origins must be finite"),
    (lambda w: w.ray_cast((0, 0), (0, 0, 1)), r"^origins must be \(R, 3\) numbers"),
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
