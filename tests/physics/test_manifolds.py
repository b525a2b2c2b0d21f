"""Specification of the contact manifolds kept from step to step (physics.collision.manifolds):
a pair that has barely moved against the other body keeps the contacts its narrowphase found,
carried with the two bodies, and they are the narrowphase's contacts there to within that
motion; a pair that moved, turned or closed faster runs its narrowphase again."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from physics import Box, Capsule, Cylinder, Plane, StepError, World
from physics.collision import Manifolds, find_contacts_keeping, find_contacts_with_cache
from physics.collision import detect
from physics.collision.broadphase import PairCache
from physics.collision.manifolds import KEEP_DISTANCE, KEEP_TURN
from physics.shapes import BOX, CYLINDER
from snapshot_helpers import assert_same_state, replay_from_snapshot

# a 0.4 m box tilted by 3 degrees resting 2 mm deep on a 1 m box; a cylinder standing on a
# box, tilted by 2 degrees; a cylinder lying 1 mm deep across the cap of a standing one (its
# end cap flush with the standing one's side: the standing rim under that end touches the
# lying one's side, whose normal turns by the motion over its 0.1 m radius, CURVATURE)
PAIRS = {
    "box-box": ((BOX, (0.5, 0.5, 0.5, 0)), (BOX, (0.2, 0.2, 0.2, 0)),
                np.array([0.05, -0.02, 0.698]), ("x", 3.0)),
    "cylinder-cylinder": ((CYLINDER, (0.3, 0.2, 0, 0)), (CYLINDER, (0.1, 0.25, 0, 0)),
                          np.array([0.05, 0.0, 0.299]), ("y", 90.0)),
    "cylinder-box": ((CYLINDER, (0.15, 0.2, 0, 0)), (BOX, (0.5, 0.5, 0.5, 0)),
                     np.array([0.0, 0.0, -0.698]), ("x", 2.0)),
}

# 1 / the least radius (1/m) of a curved surface that a pair's contact normals are normal to
CURVATURE = {"box-box": 0.0, "cylinder-cylinder": 1 / 0.1, "cylinder-box": 0.0}


def pair_world(name):
    """(kind, params, positions, rotations) of the pair: body 0 at the origin, body 1 as
    PAIRS gives it."""
    (ka, pa), (kb, pb), offset, (axis, degrees) = PAIRS[name]
    kind = np.array([ka, kb])
    params = np.array([pa, pb], dtype=float)
    position = np.array([np.zeros(3), offset])
    rotation = np.array([np.eye(3), Rotation.from_euler(axis, degrees, degrees=True).as_matrix()])
    return kind, params, position, rotation


def contacts(cache, position, rotation, manifolds=None, velocity=None):
    kw = dict(static=np.array([True, False]), group=np.array([1, 1]), mask=np.array([1, 1]),
              margin=0.01, velocity=velocity, dt=1 / 240)
    if manifolds is None:
        return find_contacts_with_cache(cache, position, rotation, **kw)
    return find_contacts_keeping(cache, manifolds, position, rotation, **kw)


def moved(position, rotation, shift, turn):
    """The pair with body 1 shifted by ``shift`` (3,) m and turned by ``turn`` rad about z
    (its own centre)."""
    position, rotation = position.copy(), rotation.copy()
    position[1] += shift
    rotation[1] = Rotation.from_rotvec([0.0, 0.0, turn]).as_matrix() @ rotation[1]
    return position, rotation


@pytest.fixture
def narrowphase_calls(monkeypatch):
    """(pair type, pairs) of every narrowphase call made while the test runs."""
    calls = []
    narrowphase = detect._narrowphase

    def counted(t, a, *rest):
        calls.append((t, len(a)))
        return narrowphase(t, a, *rest)

    monkeypatch.setattr(detect, "_narrowphase", counted)
    return calls


def by_feature(cs):
    order = np.argsort(cs.feature)
    return cs.take(order)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_a_pair_that_barely_moved_keeps_the_contacts_the_narrowphase_would_find(
        name, narrowphase_calls):
    """Moved within the limits, the kept contacts are the narrowphase's contacts at the new
    poses: the same features, points within the motion, normals within the turn (and the
    motion over the radius of a curved surface they are normal to), and depths (measured
    between the carried surface points) to a small fraction of the motion."""
    kind, params, position, rotation = pair_world(name)
    cache = PairCache(kind, params)
    first, manifolds = contacts(cache, position, rotation, Manifolds.empty())
    assert len(first) > 0 and len(manifolds) == 1
    narrowphase_calls.clear()
    position, rotation = moved(position, rotation, 0.6 * KEEP_DISTANCE * np.array([1, -1, 1]),
                               0.5 * KEEP_TURN)
    kept, again = contacts(cache, position, rotation, manifolds)
    assert narrowphase_calls == []
    fresh = by_feature(contacts(cache, position, rotation))
    kept = by_feature(kept)
    assert np.array_equal(kept.feature, fresh.feature)
    assert np.abs(kept.point - fresh.point).max() < 2 * KEEP_DISTANCE
    assert np.abs(kept.normal - fresh.normal).max() < 2 * (KEEP_TURN
                                                           + KEEP_DISTANCE * CURVATURE[name])
    assert np.abs(kept.depth - fresh.depth).max() < 0.1 * KEEP_DISTANCE
    # the manifold stays the one found at the first pose
    assert np.array_equal(again.offset, manifolds.offset)


def test_many_pairs_keep_theirs_while_one_is_found_again(narrowphase_calls):
    """Seventy boxes resting on seventy boxes, one of them moved beyond the limit: its
    narrowphase runs alone and the others keep their manifolds (PARTLY_KEPT_PAIRS or more);
    with fewer pairs resting, all run it."""
    for pairs, alone in ((70, True), (detect.PARTLY_KEPT_PAIRS - 2, False)):
        kind, params, position, rotation = pair_world("box-box")
        kind, params = np.tile(kind, pairs), np.tile(params, (pairs, 1))
        position = np.concatenate([position + (3.0 * i, 0, 0) for i in range(pairs)])
        rotation = np.tile(rotation, (pairs, 1, 1))
        cache = PairCache(kind, params)
        kw = dict(static=np.arange(2 * pairs) % 2 == 0, group=np.ones(2 * pairs, dtype=int),
                  mask=np.ones(2 * pairs, dtype=int), margin=0.01)
        _, manifolds = find_contacts_keeping(cache, Manifolds.empty(), position, rotation, **kw)
        position[1, 0] += 2 * KEEP_DISTANCE
        narrowphase_calls.clear()
        kept, _ = find_contacts_keeping(cache, manifolds, position, rotation, **kw)
        assert narrowphase_calls == [(4 * 2 + 2, 1 if alone else pairs)]
        fresh = find_contacts_with_cache(cache, position, rotation, **kw)
        order_kept = np.lexsort((kept.feature, kept.body_a))
        order_fresh = np.lexsort((fresh.feature, fresh.body_a))
        assert np.array_equal(kept.feature[order_kept], fresh.feature[order_fresh])
        assert np.abs(kept.depth[order_kept] - fresh.depth[order_fresh]).max() < 1e-9


@pytest.mark.parametrize("shift, turn, speed", [
    ((2 * KEEP_DISTANCE, 0, 0), 0.0, 0.0),
    ((0, 0, 0), 2 * KEEP_TURN, 0.0),
    ((0, 0, 0), 0.0, 1.0),
])
def test_a_pair_that_moved_turned_or_closed_faster_is_found_again(shift, turn, speed,
                                                                  narrowphase_calls):
    """Beyond either limit, or closing faster than when its manifold was found (a larger
    speculative margin), the narrowphase runs again: the contacts are exactly the fresh ones."""
    kind, params, position, rotation = pair_world("box-box")
    cache = PairCache(kind, params)
    _, manifolds = contacts(cache, position, rotation, Manifolds.empty())
    position, rotation = moved(position, rotation, np.array(shift, dtype=float), turn)
    velocity = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, -speed]])
    narrowphase_calls.clear()
    kept, _ = contacts(cache, position, rotation, manifolds, velocity=velocity)
    assert narrowphase_calls == [(4 * 2 + 2, 1)]
    fresh = contacts(cache, position, rotation, velocity=velocity)
    for field in ("point", "normal", "depth", "feature"):
        assert np.array_equal(getattr(kept, field), getattr(fresh, field)), field


def test_a_settled_stack_keeps_its_manifolds_and_stands(narrowphase_calls):
    """Three boxes stacked on a box on the ground: once settled, no box-box pair runs its
    narrowphase again, and the stack stands still (the kept contacts' depths follow the
    bodies)."""
    world = World()
    world.add_body(Plane())
    boxes = [world.add_body(Box((0.3, 0.3, 0.1)), mass=2.0, position=(0.01 * i, 0, 0.1 + 0.2 * i))
             for i in range(4)]
    world.step(240)
    top = boxes[-1].position
    narrowphase_calls.clear()
    world.step(240)
    assert not [c for c in narrowphase_calls if c[0] == 4 * 2 + 2 and c[1] > 0]
    assert np.linalg.norm(boxes[-1].position - top) < 1e-4
    assert world.contacts.depth.max() < 1e-3


def test_a_stack_carried_by_a_moving_platform_keeps_its_manifolds(narrowphase_calls):
    """Two boxes stacked on a static box moving at 0.3 m/s (kinematic): the pairs move
    together, so they keep their manifolds while the stack rides along, and it stays put
    on the platform."""
    world = World()
    platform = world.add_body(Box((1.0, 1.0, 0.1)), position=(0, 0, 0.1), static=True,
                              linear_velocity=(0.3, 0, 0))
    low = world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0.4))
    top = world.add_body(Box((0.15, 0.15, 0.15)), mass=1.0, position=(0, 0, 0.75))
    world.step(240)
    offsets = [b.position - platform.position for b in (low, top)]
    narrowphase_calls.clear()
    world.step(120)
    assert not [c for c in narrowphase_calls if c[0] == 4 * 2 + 2 and c[1] > 0]
    for body, offset in zip((low, top), offsets):
        assert np.abs(body.position - platform.position - offset).max() < 1e-4
        assert body.linear_velocity[0] == pytest.approx(0.3, abs=1e-4)


def stack_world():
    """A box and a cylinder resting on a static box (their manifolds kept), and a capsule
    lying on it (box-capsule pairs run their narrowphase every step)."""
    world = World(contact_solver="iterative")
    world.add_body(Plane())
    world.add_body(Box((0.5, 0.5, 0.1)), position=(0, 0, 0.1), static=True)
    world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0.1, 0, 0.4))
    world.add_body(Capsule(0.05, 0.2), mass=1.0, position=(-0.3, 0, 0.25),
                   orientation=(np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0))
    world.add_body(Cylinder(0.1, 0.1), mass=1.0, position=(0.25, 0.35, 0.3))
    return world


def test_a_snapshot_keeps_the_manifolds_and_replays_bit_for_bit():
    world = stack_world()
    world.step(100)
    assert len(world.get_state()["manifolds"]["key"]) == 2
    first, second = replay_from_snapshot(world, 0, 60)
    assert_same_state(first, second)


@pytest.mark.parametrize("damage", [
    lambda m: m["key"].__setitem__(0, -1),
    lambda m: m.__setitem__("count", m["count"] + 1),
    lambda m: m["point_a"].__setitem__((0, 0), np.nan),
    lambda m: m.__setitem__("turn", m["turn"][:, :2]),
    lambda m: m.pop("normal"),
    lambda m: m.__setitem__("key", m["key"][::-1].copy()),
], ids=["negative-key", "counts", "nan", "shape", "missing", "unsorted"])
def test_a_damaged_snapshot_of_the_manifolds_is_refused_and_changes_nothing(damage):
    world = stack_world()
    world.step(100)
    snapshot = world.get_state()
    world.step(5)
    before = world.get_state()
    damage(snapshot["manifolds"])
    with pytest.raises(ValueError, match="manifolds"):
        world.set_state(snapshot)
    assert_same_state(world.get_state(), before)
    for field, value in before["manifolds"].items():
        assert np.array_equal(world.get_state()["manifolds"][field], value), field


def test_a_failed_step_keeps_the_manifolds_it_started_with():
    """A step that raises leaves the manifolds as they were, though its narrowphase found
    the moved box's contacts again."""
    world = stack_world()
    world.step(100)
    before = world.get_state()["manifolds"]
    world.bodies[2].position = world.bodies[2].position + (1e-3, 0, 0)
    world.bodies[2].apply_force((1e308, 1e308, 1e308))
    world.bodies[2].apply_torque((1e308, 1e308, 1e308))
    with pytest.raises(StepError):
        world.step()
    after = world.get_state()["manifolds"]
    for field, value in before.items():
        assert np.array_equal(after[field], value), field


def test_a_snapshot_without_manifolds_restores_with_none_kept():
    world = stack_world()
    world.step(100)
    snapshot = world.get_state()
    del snapshot["manifolds"]
    world.set_state(snapshot)
    assert len(world.get_state()["manifolds"]["key"]) == 0
    world.step(1)
    assert len(world.get_state()["manifolds"]["key"]) == 2
