"""Bodies in bulk: ``World.remove_bodies`` (and ``add_bodies``) give the world that one
``remove_body`` (``add_body``) per body gives, bit for bit, and refuse bad input whole."""
import copy

import numpy as np
import pytest

from physics import Box, Capsule, Hinge, Plane, Sphere, World
from snapshot_helpers import assert_same_snapshot, replay_from_snapshot


def busy_world(sleeping, pendulum_first=False):
    """A floor with 24 named boxes and spheres falling onto it and a pendulum on a hinge
    added after them (its rows move down when they go: the step is compiled anew) or before
    (what its joint fixes is kept: ``model.Kept``), some pairs ignored."""
    world = World(dt=1 / 60, sleeping=sleeping)
    world.add_body(Plane(), name="floor")
    if pendulum_first:
        pendulum(world)
    rng = np.random.default_rng(7)
    bodies = []
    for k in range(24):
        shape = Box((0.1, 0.15, 0.1)) if k % 2 else Sphere(0.12)
        bodies.append(world.add_body(shape, mass=1.0 + k % 3, name=f"piece {k}",
                                     rolling_friction=0.01, spin_friction=0.01,
                                     position=(0.3 * (k % 6), 0.3 * (k // 6), 0.15 + 0.2 * (k % 4)),
                                     linear_velocity=rng.normal(0, 0.2, 3)))
    world.ignore_collision(bodies[3], bodies[4])
    world.ignore_collision(bodies[5], bodies[10])
    if not pendulum_first:
        pendulum(world)
    return world, bodies


def pendulum(world):
    bob = world.add_body(Sphere(0.1), mass=2.0, position=(3.0, 0, 1.0))
    world.add_joint(Hinge(None, bob, anchor=(3.0, 0, 1.6), axis=(0, 1, 0)))
    bob.linear_velocity = (1.0, 0, 0)


def by_key(state):
    """``state`` (get_state) with its live contacts in the order of their keys: removing
    bodies that sleeping islands rest on wakes those islands, whose contacts join the live
    ones island by island when the bodies go one by one, all at once when they go together
    (the same contacts; the next step finds them again in its own order)."""
    contacts = state["contacts"]
    order = np.argsort(contacts["keys"], kind="stable")
    return {**state, "contacts": {f: a.take(order, axis=0) for f, a in contacts.items()}}


@pytest.mark.parametrize("sleeping, pendulum_first", [(False, False), (True, False),
                                                      (False, True), (True, True)])
def test_removing_a_set_of_bodies_is_removing_them_one_by_one(sleeping, pendulum_first):
    """Same snapshot right after (contacts, warm starts, sleep, the pendulum's force, names)
    and the same run after it, bit for bit, whatever order either is given in."""
    world, bodies = busy_world(sleeping, pendulum_first)
    world.step(90)                                   # (settled: with sleeping, asleep)
    if sleeping:
        assert world.asleep[:24].sum() >= 20
    assert len(world.contacts) > 20
    gone = [bodies[k] for k in (17, 3, 0, 10, 11, 22)]
    one = copy.deepcopy(world)
    one_bodies = [one.bodies[b.index] for b in gone]
    world.remove_bodies(gone)
    for body in reversed(one_bodies):
        one.remove_body(body)
    assert_same_snapshot(by_key(world.get_state()), by_key(one.get_state()))
    assert [b.name for b in world.bodies] == [b.name for b in one.bodies]
    assert world.body("piece 23").index == 18 + pendulum_first
    assert all(b.removed for b in gone)
    world.step(60)
    one.step(60)
    assert_same_snapshot(world.get_state(), one.get_state())
    np.testing.assert_array_equal(world.joint_forces, one.joint_forces)
    assert world.joint_forces[0, 2] > 2.0 * 9.81         # (the bob still swings on it)


def test_a_removed_set_leaves_a_world_that_steps_and_replays_exactly():
    world, bodies = busy_world(sleeping=False)
    world.step(30)
    snapshot = world.get_state()
    world.remove_bodies(bodies[::3])
    world.remove_bodies([])                          # (nothing to do)
    assert len(world.bodies) == 26 - 8
    with pytest.raises(ValueError, match=r"this one has 18 and 1. Bodies removed since cannot "
                                         r"be restored"):
        world.set_state(snapshot)
    first, again = replay_from_snapshot(world, 5, 20)
    assert_same_snapshot(first, again)


def test_removing_every_body_but_the_floor_leaves_a_world_that_steps():
    world, bodies = busy_world(sleeping=True)
    world.step(10)
    world.remove_joint(world.joints[0])
    world.remove_bodies(world.bodies[1:])
    assert [b.name for b in world.bodies] == ["floor"] and len(world.contacts) == 0
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 0.5))
    world.step(60)
    assert ball.position[2] == pytest.approx(0.1, abs=2e-3)


def test_bad_sets_are_refused_by_entry_and_nothing_is_removed():
    world, bodies = busy_world(sleeping=False)
    world.step(5)
    other = World().add_body(Sphere(0.1), mass=1.0)
    bob = world.bodies[-1]
    gone = bodies[20]
    world.remove_body(gone)
    before = world.get_state()
    for given, message in (
            (bodies[0], r"^bodies must be a list \(or other iterable\) of Body handles of this "
                        r"world, got <Body 'piece 0' #1 Sphere> \(for one body, use "
                        r"remove_body\)"),
            (None, r"^bodies must be a list .* got None"),
            ("abc", r"^bodies must be a list .* got 'abc'"),
            ([bodies[1], 2], r"^bodies\[1\] must be a Body of this world \(as add_body returned "
                             r"it\), got 2"),
            ([bodies[1], other], r"^bodies\[1\]: <Body #0 Sphere> is not a body of this world"),
            ([bodies[1], gone], r"^bodies\[1\]: <Body 'piece 20' \(removed\) Sphere> is not a "
                                r"body of this world"),
            ([bodies[1], bodies[2], bodies[1]], r"^bodies\[2\] is bodies\[0\] again \(<Body "
                                                r"'piece 1' #2 Box>\): give each body once"),
            ((b for b in (bodies[1], bob)), r"^bodies\[1\]: <Body #24 Sphere> still has joints "
                                            r"\[.*Hinge.*\]; remove them first")):
        with pytest.raises(ValueError, match=message):
            world.remove_bodies(given)
        assert not bodies[1].removed and bodies[1].index == 2
        assert_same_snapshot(world.get_state(), before)
    with pytest.raises(ValueError, match=r"^<Body #24 Sphere> still has joints"):
        world.remove_body(bob)
    world.remove_bodies((bodies[1], bodies[2]))
    with pytest.raises(ValueError, match=r"has been removed from its world"):
        bodies[1].position
    with pytest.raises(ValueError, match=r"^bodies\[0\]: <Body 'piece 1' \(removed\) Box> is not"):
        world.remove_bodies([bodies[1]])
    with pytest.raises(ValueError, match=r"^<Body 'piece 2' \(removed\) Sphere> is not a body "
                                         r"of this world"):
        world.remove_body(bodies[2])


def spawn_arguments(n=30):
    """Per-body arguments for n bodies raining onto the busy world's floor: three shapes in
    turn, their own velocities, spins, friction and names; one density for all."""
    rng = np.random.default_rng(3)
    shapes = [(Sphere(0.05), Box((0.04, 0.06, 0.05)), Capsule(0.03, 0.06))[k % 3]
              for k in range(n)]
    return dict(shape=shapes, density=800.0, position=rng.uniform((0, 0, 1), (1.5, 1, 2), (n, 3)),
                linear_velocity=rng.normal(0, 1, (n, 3)), angular_velocity=rng.normal(0, 3, (n, 3)),
                friction=rng.uniform(0.2, 0.9, n), restitution=0.3,
                name=[f"debris {k}" for k in range(n)])


@pytest.mark.parametrize("sleeping", [False, True])
def test_adding_bodies_at_once_is_adding_them_one_by_one(sleeping):
    """Same snapshot right after and the same run after, bit for bit: shapes, masses,
    inverses, materials, what the step takes back from their velocities, names, handles."""
    world, _ = busy_world(sleeping)
    world.step(90)
    one = copy.deepcopy(world)
    given = spawn_arguments()
    added = world.add_bodies(**given)
    singles = [one.add_body(given["shape"][k], density=800.0, position=given["position"][k],
                            linear_velocity=given["linear_velocity"][k],
                            angular_velocity=given["angular_velocity"][k],
                            friction=given["friction"][k], restitution=0.3,
                            name=given["name"][k]) for k in range(30)]
    assert_same_snapshot(world.get_state(), one.get_state())
    assert [b.index for b in added] == [b.index for b in singles] == list(range(26, 56))
    assert added[4].name == "debris 4" and added[4].friction == given["friction"][4]
    assert added[5].mass == pytest.approx(800.0 * np.pi * 0.03 ** 2 * (4 / 3 * 0.03 + 0.12))
    world.step(60)
    one.step(60)
    assert_same_snapshot(world.get_state(), one.get_state())
    world.step(120)                     # (1 s after their drop some still bounce: 0.55 m up)
    assert (world.positions[26:, 2] < 0.3).all()             # (they landed, some on others)


def test_shared_values_and_static_bodies_added_at_once():
    """One shape, mass and velocity for all (found once), and static boxes given a velocity
    (kinematic): as add_body of each."""
    world, one = World(dt=1 / 60), World(dt=1 / 60)
    spots = np.column_stack([np.arange(4.0), np.zeros(4), np.ones(4)])
    for w, batch in ((world, True), (one, False)):
        w.add_body(Plane())
        if batch:
            balls = w.add_bodies(Sphere(0.1), mass=0.5, position=spots,
                                 linear_velocity=(0, 0, -1.0), name="ball")
            w.add_bodies(Box((0.5, 0.5, 0.05)), static=True, position=spots - (0, 0, 0.5),
                         linear_velocity=(0.2, 0, 0))
        else:
            balls = [w.add_body(Sphere(0.1), mass=0.5, position=p, linear_velocity=(0, 0, -1.0),
                                name="ball") for p in spots]
            for p in spots:
                w.add_body(Box((0.5, 0.5, 0.05)), static=True, position=p - (0, 0, 0.5),
                           linear_velocity=(0.2, 0, 0))
    assert_same_snapshot(world.get_state(), one.get_state())
    assert world.bodies[5].static and world.bodies[5].linear_velocity[0] == 0.2
    world.step(30)
    one.step(30)
    assert_same_snapshot(world.get_state(), one.get_state())
    # (each rolls on its moving box: friction brings a ball at rest to 2/7 of the belt's speed)
    assert balls[0].linear_velocity[0] == pytest.approx(2 / 7 * 0.2, rel=0.01)
    assert world.add_bodies(Sphere(0.1), mass=1.0, position=np.zeros((0, 3))) == []


def test_bad_entries_are_refused_by_index_and_nothing_is_added():
    world, _ = busy_world(sleeping=False)
    world.step(5)
    before = world.get_state()
    given = spawn_arguments(6)
    for change, message in (
            (dict(position=[1, 2, 3]), r"^position must be \(n, 3\) numbers \(m\), one row per "
                                       r"body, got \(1, 2, 3\)"),
            (dict(friction=[0.5] * 5), r"^friction has 5 entries for the 6 bodies of position: "
                                       r"give one for all, or one per body"),
            (dict(shape=[Sphere(0.1)] * 7), r"^shape has 7 entries for the 6 bodies"),
            (dict(friction=[0.5, 0.5, 0.5, -1, 0.5, 0.5]), r"^entry 3 of 6: friction must be "),
            (dict(position=np.array([[0, 0, 1.0]] * 5 + [[0, np.nan, 1]])),
             r"^entry 5 of 6: position must be"),
            (dict(name=["a", "b", 5, "d", "e", "f"]), r"^entry 2 of 6: name must be a string or "
                                                      r"None, got 5"),
            (dict(shape=[Sphere(0.1)] * 5 + [Plane()]), r"^entry 5 of 6: a Plane does not "
                                                        r"move"),
            (dict(static=True), r"^entry 0 of 6: a static body has no mass")):
        with pytest.raises(ValueError, match=message):
            world.add_bodies(**{**given, **change})
        assert_same_snapshot(world.get_state(), before)
        assert len(world.bodies) == 26


def test_a_body_refused_for_its_name_leaves_no_row_behind():
    """add_body checked the name when it made the handle, after the body's row was in the
    world: world.positions had a row more than world.bodies."""
    world = World()
    world.add_body(Sphere(0.1), mass=1.0)
    with pytest.raises(ValueError, match=r"^name must be a string or None, got 5"):
        world.add_body(Sphere(0.1), mass=1.0, name=5)
    assert world.positions.shape == (1, 3) and len(world.bodies) == 1
