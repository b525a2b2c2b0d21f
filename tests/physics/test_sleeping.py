"""Sleeping: islands of still bodies drop out of the step until something touches them."""
import numpy as np
import pytest

from physics import Ball, Box, Cylinder, Hinge, Plane, Sphere, World

from snapshot_helpers import assert_same_state, replay_from_snapshot


def stack(height=3, sleeping=True):
    """``height`` 0.2 m boxes of 1 kg stacked on the ground."""
    world = World(sleeping=sleeping)
    world.add_body(Plane(), friction=0.6)
    boxes = [world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.1 + 0.2 * i),
                            friction=0.6) for i in range(height)]
    return world, boxes


def test_a_settled_stack_falls_asleep_and_stays_exactly_where_it_was():
    world, boxes = stack()
    world.step(240)                                   # still from the start: asleep by 0.5 s
    assert all(b.asleep for b in boxes)
    assert len({int(world._island[b.row]) for b in boxes}) == 1     # one island
    x, energy = world.positions.copy(), world.energy()
    world.step(1200)
    assert np.array_equal(world.positions, x)
    assert np.all(world.linear_velocities == 0) and np.all(world.angular_velocities == 0)
    assert world.energy() == energy                   # the weights still count
    assert not any(b.static for b in boxes)


def test_a_sleeping_stack_goes_on_reporting_its_contacts_and_their_forces():
    world, boxes = stack()
    world.step(240)
    assert all(b.asleep for b in boxes)
    c = world.contacts
    on_ground = c.body_a == 0                         # (the plane is body 0)
    assert on_ground.sum() >= 4 and len(c) > on_ground.sum()
    assert c.normal_force[on_ground].sum() == pytest.approx(3 * 9.81, rel=1e-6)
    world.step(480)                                   # (the step makes no contacts for it)
    assert np.array_equal(world.contacts.normal_force, c.normal_force)
    assert np.array_equal(world.contacts.point, c.point)


def test_a_woken_pile_starts_from_the_contact_forces_it_fell_asleep_with():
    import scenes
    world = scenes.load("box_pyramid", base=10).world
    world.sleeping = True
    world.step(480)
    assert world.asleep[1:].all()                     # (body 0 is the ground)
    before = len(world.contacts)
    x = world.positions.copy()
    world.bodies[1].wake()                            # the user wakes the pyramid
    assert not world.asleep[1:-1].any()               # (the last body, a ball, lies apart)
    assert len(world.contacts) == before
    world.step(1)
    # started cold, the first step's solve ran out of iterations and the pile lurched at
    # 7.7 mm/s; warm, it holds still
    assert np.abs(world.linear_velocities).max() < 1e-4
    assert np.abs(world.positions - x).max() < 1e-6


def test_a_small_body_rolling_slowly_sleeps_and_a_large_one_spinning_as_slowly_does_not():
    """The spin threshold (0.05 rad/s) alone never let a 3 cm marble rolling at 9 mm/s sleep
    (0.3 rad/s, and nothing slows it): 0 of 300 piled marbles slept in 10 s. A spin that
    moves a body's mass about its centre slower than sleep_speed counts as still too: the
    marble sleeps; a 1 m disc turning as slowly (0.3 rad/s, its rim at 0.3 m/s) does not."""
    world = World(sleeping=True)
    world.add_body(Plane())
    marble = world.add_body(Sphere(0.03), mass=0.03, position=(0, 0, 0.03),
                            linear_velocity=(0.009, 0, 0), angular_velocity=(0, 0.3, 0))
    disc = world.add_body(Cylinder(1.0, 0.05), mass=10.0, position=(5, 0, 1.0),
                          angular_velocity=(0, 0, 0.3))
    world.add_joint(Hinge(None, disc, anchor=(5, 0, 1.0), axis=(0, 0, 1)))     # a turntable
    world.step(240)
    assert marble.asleep and not disc.asleep
    assert np.linalg.norm(disc.angular_velocity) > 0.25


def test_without_sleeping_nothing_sleeps():
    world, boxes = stack(sleeping=False)
    world.step(480)
    assert not any(b.asleep for b in boxes)
    assert len(world.contacts) > 0


def test_a_ball_dropped_on_a_sleeping_stack_wakes_all_of_it_before_it_touches():
    world, boxes = stack()
    world.step(240)
    assert all(b.asleep for b in boxes)
    ball = world.add_body(Sphere(0.05), mass=0.5, position=(0.02, 0, 4.0))
    # (adding a body wakes nothing: the ball falls for 0.8 s, the stack sleeps on)
    world.step(150)
    assert all(b.asleep for b in boxes) and not ball.asleep
    top = boxes[-1].position[2] + 0.1
    gap = None
    while gap is None and world.time < 3.0:
        before = ball.position[2] - 0.05 - top
        world.step()
        if not boxes[-1].asleep:                     # the top box, which the ball reaches
            gap = before
    assert all(not b.asleep for b in boxes)           # the whole island, the bottom box too
    assert 0.0 < gap < 0.1                            # the step that woke it started apart
    world.step(240)
    assert ball.position[2] == pytest.approx(top + 0.05, abs=1e-3)    # it landed on the top
    world.step(480)                                   # and all of it sleeps again
    assert all(b.asleep for b in boxes) and ball.asleep


def test_momentum_goes_into_a_sleeping_body_that_is_hit():
    """No gravity: a box left still falls asleep; a ball flying into it wakes it in the
    step that finds their contact, which then runs with both awake: the impact keeps the
    momentum (a box still static in that step would have taken the ball's)."""
    world = World(gravity=(0, 0, 0), sleeping=True)
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, restitution=0.0)
    world.step(150)
    assert box.asleep
    world.add_body(Sphere(0.05), mass=2.0, position=(-1.0, 0.02, 0),
                          linear_velocity=(3.0, 0, 0), restitution=0.0)
    world.step(120)
    assert not box.asleep and box.linear_velocity[0] > 1.0
    assert world.linear_momentum() == pytest.approx([6.0, 0, 0], abs=1e-9)


def test_a_step_that_finds_an_awake_body_on_a_sleeping_one_runs_with_both_awake():
    """A ball put by hand right against a sleeping box, moving into it: the very step that
    finds their contact wakes the box and runs again, so the push moves the box and the
    momentum is kept."""
    world = World(gravity=(0, 0, 0), sleeping=True)
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, restitution=0.0)
    ball = world.add_body(Sphere(0.05), mass=2.0, position=(-5.0, 0, 0), restitution=0.0)
    world.step(150)
    assert box.asleep and ball.asleep
    ball.position = (-0.1495, 0.02, 0)               # 0.5 mm deep already
    ball.linear_velocity = (3.0, 0, 0)
    assert box.asleep                                  # (placing the ball woke only its island)
    world.step()
    assert not box.asleep and box.linear_velocity[0] > 1.0
    assert world.linear_momentum() == pytest.approx([6.0, 0, 0], abs=1e-9)


def test_islands_sleep_on_their_own():
    """A box that keeps being pushed does not keep another one, apart from it, awake."""
    world = World(sleeping=True)
    world.add_body(Plane(), friction=0.6)
    still = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.1))
    pushed = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(2, 0, 0.1))
    for _ in range(240):
        pushed.apply_force((10.0, 0, 0))           # more than friction's 5.9 N: it slides
        world.step()
    assert still.asleep and not pushed.asleep


def test_an_island_falling_asleep_leaves_the_awake_bodies_solve_as_it_was():
    """A box falling asleep 10 m from a pouring pile keeps the pile's solver memory (its
    norm estimate, whether its last solve finished). It was reset with the compiled model:
    the pile's next solve started cold, and 100 steps later 150 spheres stood up to 0.25 m
    from where they stood without the reset."""
    world = World(sleeping=True, contact_solver="iterative")
    world.add_body(Plane(), friction=0.5)
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(10, 0, 0.1), friction=0.6)
    rng = np.random.default_rng(0)
    for i in range(40):
        world.add_body(Sphere(0.05), mass=0.1, position=(*rng.uniform(-0.2, 0.2, 2),
                                                           0.1 + 0.11 * i / 4))
    while not box.asleep:
        memory = world._solver_memory
        world.step()
        assert world.time < 2.0
    assert world._solver_memory is memory and memory.u is not None
    assert int(world.asleep.sum()) == 1


@pytest.mark.parametrize("touch", ["velocity", "position", "force", "torque", "wake", "gravity"])
def test_the_user_wakes_a_sleeping_island(touch):
    world, boxes = stack()
    world.step(240)
    assert all(b.asleep for b in boxes)
    top = boxes[-1]
    if touch == "velocity":
        top.linear_velocity = (0.5, 0, 0)
    elif touch == "position":
        top.position = top.position + (0, 0, 0.01)
    elif touch == "force":
        top.apply_force((0, 0, 30.0))
    elif touch == "torque":
        top.apply_torque((0, 0, 1.0))
    elif touch == "wake":
        top.wake()
    else:
        world.gravity = (0, 0, -3.0)
    assert not any(b.asleep for b in boxes)
    world.step()
    if touch == "velocity":
        assert top.linear_velocity[0] > 0.4
    if touch == "force":                     # 30 N up against 9.81 N of weight: it rises
        assert top.linear_velocity[2] > 0


@pytest.mark.parametrize("change", ["platform moved", "platform's mask", "ignore_collision",
                                    "friction", "restitution"])
def test_a_change_to_what_a_sleeping_box_rests_on_wakes_it(change):
    """A static platform moved away, made to collide with nothing, told to ignore the box, or
    made slippery: the box asleep on it wakes and falls or slides, as it would awake. Before,
    only a change to the sleeping body itself woke it: the box hung in the air asleep."""
    world = World(sleeping=True)
    world.add_body(Plane())
    tilt = 0.35 if change == "friction" else 0.0       # rad: 20 degrees, mu 1 sticks there
    q = (np.cos(tilt / 2), np.sin(tilt / 2), 0, 0)
    platform = world.add_body(Box((0.5, 0.5, 0.05)), static=True, position=(0, 0, 1.0),
                              orientation=q, friction=1.0)
    up = np.array([0, -np.sin(tilt), np.cos(tilt)])
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, orientation=q, friction=1.0,
                         position=tuple(np.array([0, 0, 1.0]) + 0.15 * up))
    world.step(360)
    assert box.asleep
    start = box.position.copy()
    if change == "platform moved":
        platform.position = (5, 0, 1.0)
    elif change == "platform's mask":
        platform.collision_mask = 0
    elif change == "ignore_collision":
        world.ignore_collision(platform, box)
    elif change == "friction":
        platform.friction = 0.05
        box.friction = 0.05
    else:
        platform.restitution = 0.5
    assert not box.asleep
    world.step(60)
    moved = np.linalg.norm(box.position - start)
    if change == "restitution":
        assert moved < 1e-4                 # nothing to bounce from: it lies still, awake
    elif change == "friction":              # slides down at g (sin - mu cos) for 0.25 s
        expected = 0.5 * 9.81 * (np.sin(tilt) - 0.05 * np.cos(tilt)) * 0.25 ** 2
        assert moved == pytest.approx(expected, rel=0.05)
    else:                                   # falls freely for 0.25 s
        assert start[2] - box.position[2] == pytest.approx(0.5 * 9.81 * 0.25 ** 2, rel=0.03)


def test_turning_sleeping_off_wakes_everything():
    world, boxes = stack()
    world.step(240)
    world.sleeping = False
    assert not any(b.asleep for b in boxes)
    world.step(240)
    assert not any(b.asleep for b in boxes)


def hanging_chain(links=4):
    """A chain of 0.3 m boxes on hinges from the world, hanging at rest."""
    world = World(sleeping=True)
    bodies, joints = [], []
    for i in range(links):
        body = world.add_body(Box((0.02, 0.02, 0.15)), mass=1.0, position=(0, 0, -0.15 - 0.3 * i))
        a = bodies[-1] if bodies else None
        joints.append(world.add_joint(Hinge(a, body, anchor=(0, 0, -0.3 * i), axis=(1, 0, 0))))
        bodies.append(body)
    return world, bodies, joints


def test_a_sleeping_chain_reports_its_joint_forces_and_wakes_all_of_it_when_pushed():
    world, bodies, joints = hanging_chain()
    world.step(240)
    assert all(b.asleep for b in bodies)
    assert world._model().tables == []                # its joints make no rows
    # the top hinge carries the whole chain, 4 kg, while it sleeps as when it did not
    world.step(24)
    assert joints[0].force == pytest.approx([0, 0, 4 * 9.81], rel=1e-6)
    assert world.constraint_error() < 1e-8
    bodies[-1].apply_force((0, 20.0, 0))             # the lowest link: the top one wakes too
    assert not any(b.asleep for b in bodies)
    world.step(120)
    assert abs(joints[0].angle) > 1e-3               # it swung
    assert world.constraint_error() < 1e-8


@pytest.mark.parametrize("change", ["add_body", "mass"])
def test_a_sleeping_jointed_island_woken_after_a_body_is_added_keeps_its_joint_forces(change):
    """One jointed island asleep (two 1 kg boxes on a ball joint), another awake (a swinging
    pendulum); a body added, or a mass changed, then the sleeping island woken before the
    next step: waking read the last step's joint forces through a model compiled anew with
    the woken joints' rows, which the last step's report had none for: "ValueError: array
    is not broadcastable to correct shape" (a dynamic-world explorer's finding)."""
    world = World(dt=1 / 120, sleeping=True)
    world.add_body(Plane())
    a = world.add_body(Box((0.15, 0.15, 0.15)), mass=1.0, position=(0, 0, 0.15))
    b = world.add_body(Box((0.15, 0.15, 0.15)), mass=1.0, position=(0, 0, 0.45))
    joint = world.add_joint(Ball(a, b, anchor=(0, 0, 0.3)))
    p = world.add_body(Box((0.05, 0.05, 0.3)), mass=1.0, position=(3, 0, 1.7),
                       linear_velocity=(2, 0, 0))
    world.add_joint(Ball(None, p, anchor=(3, 0, 2.0)))
    world.step(200)
    assert a.asleep and b.asleep and not p.asleep
    if change == "add_body":      # (no joint force read before: reading it was a way round)
        world.add_body(Sphere(0.1), mass=1.0, position=(-5, 0, 2))
    else:
        p.mass = 2.0
    a.wake()
    assert not b.asleep
    # the force it slept with (the upper box's weight) until the next step
    assert joint.force == pytest.approx([0, 0, 9.81], rel=1e-6)
    world.step(12)
    assert joint.force == pytest.approx([0, 0, 9.81], rel=1e-4)


def test_changing_a_joints_motor_wakes_its_island():
    world, bodies, joints = hanging_chain(2)
    world.step(240)
    assert all(b.asleep for b in bodies)
    joints[0].set_motor(velocity=1.0, max_force=100.0)
    assert not any(b.asleep for b in bodies)
    world.step(48)
    assert joints[0].rate == pytest.approx(1.0, rel=1e-3)


def test_a_replay_from_a_snapshot_sleeps_and_wakes_bit_for_bit():
    world, boxes = stack()
    ball = world.add_body(Sphere(0.05), mass=0.5, position=(0.02, 0, 1.5))
    # a snapshot while the stack sleeps and the ball falls, replayed through the impact
    first, second = replay_from_snapshot(world, 200, 300)
    assert_same_state(first, second)
    assert np.array_equal(first["sleep"]["asleep"], second["sleep"]["asleep"])
    assert ball.position[2] < 1.0


def test_a_snapshot_taken_asleep_restores_the_sleep():
    world, boxes = stack()
    world.step(240)
    state, held = world.get_state(), world.contacts
    boxes[0].wake()
    world.step(10)
    world.set_state(state)
    assert all(b.asleep for b in boxes)
    assert np.array_equal(world.contacts.normal_force, held.normal_force)
    assert world.constraint_error() == 0.0
    old = dict(state, sleep={k: v for k, v in state["sleep"].items() if k != "contacts"})
    world.set_state(old)              # from before sleeping islands kept their contacts
    assert all(b.asleep for b in boxes) and len(world.contacts) == 0
    del old["sleep"]                                 # a snapshot from before sleeping
    world.set_state(old)
    assert not any(b.asleep for b in boxes)
    bad = dict(state, sleep=dict(state["sleep"], contacts={"depth": [0.0]}))
    with pytest.raises(ValueError, match=r"state\['sleep'\]\['contacts'\]"):
        world.set_state(bad)


@pytest.mark.parametrize("name, value", [("sleeping", "yes"), ("sleep_speed", -1.0),
                                         ("sleep_spin", float("nan")), ("sleep_time", 0.0)])
def test_bad_sleep_settings_are_refused_by_name(name, value):
    world = World()
    with pytest.raises(ValueError, match=name):
        setattr(world, name, value)
    if name == "sleeping":
        with pytest.raises(ValueError, match=name):
            World(sleeping=value)


def test_a_damaged_sleep_snapshot_is_refused_and_changes_nothing():
    world, boxes = stack()
    world.step(240)
    state = world.get_state()
    state["sleep"] = dict(state["sleep"], asleep=np.ones(len(world.bodies) + 1, dtype=bool))
    x = world.positions.copy()
    with pytest.raises(ValueError, match="static"):   # the ground and the world frame
        world.set_state(state)
    assert np.array_equal(world.positions, x) and all(b.asleep for b in boxes)


def test_a_kinematic_platform_that_starts_moving_wakes_the_box_asleep_on_it():
    world = World(sleeping=True)
    platform = world.add_body(Box((1.0, 1.0, 0.05)), static=True, friction=0.6)
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.15), friction=0.6)
    world.step(240)
    assert box.asleep
    platform.linear_velocity = (0.5, 0, 0)
    world.step()
    assert not box.asleep
    world.step(240)
    assert box.linear_velocity == pytest.approx((0.5, 0, 0), abs=1e-3)
    assert box.position[0] == pytest.approx(platform.position[0], abs=0.05)


def test_a_box_riding_a_slow_kinematic_platform_never_falls_asleep():
    """0.015 m/s is below the sleep speed, but the platform under it moves."""
    world = World(sleeping=True)
    platform = world.add_body(Box((1.0, 1.0, 0.05)), static=True, friction=0.6)
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.15), friction=0.6)
    platform.linear_velocity = (0.015, 0, 0)
    for _ in range(720):
        world.step()
        assert not box.asleep
    assert box.linear_velocity[0] == pytest.approx(0.015, rel=1e-3)


def test_a_turntable_that_starts_spinning_wakes_the_box_asleep_on_it():
    """Only its spin changes (it stays where it is): the box it carries wakes all the same."""
    world = World(sleeping=True)
    table = world.add_body(Cylinder(1.0, 0.05), static=True, friction=0.8)
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0.5, 0, 0.15), friction=0.8)
    world.step(240)
    assert box.asleep
    table.angular_velocity = (0, 0, 1.0)
    world.step(240)
    assert not box.asleep
    assert np.linalg.norm(box.linear_velocity) == pytest.approx(0.5, rel=0.02)


def test_removing_a_body_while_islands_sleep_keeps_the_others_contacts_right():
    world = World(sleeping=True)
    world.add_body(Plane(), friction=0.6)
    first = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.1))
    second = world.add_body(Box((0.1, 0.1, 0.1)), mass=2.0, position=(1, 0, 0.1))
    world.step(240)
    assert first.asleep and second.asleep and len(world.contacts) == 8
    world.remove_body(first)          # (the held contacts named it by its row)
    # the other island sleeps on, its contacts renumbered (before, every island woke and
    # every contact was forgotten: a sleeping stack shook at 5e-3 m/s when a far-away bullet
    # was removed)
    assert second.asleep
    c = world.contacts
    assert len(c) == 4 and set(c.body_b) == {1}
    assert c.normal_force.sum() == pytest.approx(2.0 * 9.81, rel=1e-6)
    world.step(10)
    c = world.contacts
    assert second.asleep and set(c.body_b) == {1}
    assert c.normal_force.sum() == pytest.approx(2.0 * 9.81, rel=1e-6)
    second.wake()
    world.step(10)                    # awake, it starts from those forces and stays put
    c = world.contacts
    assert set(c.body_b) == {1} and c.normal_force.sum() == pytest.approx(2.0 * 9.81, rel=1e-6)
    assert np.abs(second.linear_velocity).max() < 1e-6


def test_removing_a_body_leaves_an_awake_stack_beside_it_as_it_was():
    def stacks():
        world = World()
        world.add_body(Plane())
        boxes = [world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(x, 0, 0.1 + 0.2 * i))
                 for x in (0.0, 2.0) for i in range(4)]
        world.step(240)
        return world, boxes
    plain, _ = stacks()
    plain.step(120)
    world, boxes = stacks()
    world.remove_body(boxes[5])                  # the second of the other stack
    world.step(120)
    # the ground and the first stack (rows below the removed body's) as they were
    assert np.abs(world.positions[:5] - plain.positions[:5]).max() < 1e-9
    assert np.abs(world.linear_velocities[:5]).max() < 1e-6
    # the two boxes above the removed one fell onto the one below it
    assert world.positions[5:, 2] == pytest.approx([0.1, 0.3, 0.5], abs=1e-3)


def test_joints_added_or_removed_beside_a_sleeping_jointed_stack_keep_its_reports():
    world = World(sleeping=True)
    world.add_body(Plane())
    low = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.1))
    high = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.3))
    stack = world.add_joint(Ball(low, high, anchor=(0, 0, 0.2)))
    world.step(240)
    assert low.asleep and high.asleep
    bob = world.add_body(Sphere(0.05), mass=1.0, position=(5, 0, 1))
    swing = world.add_joint(Ball(None, bob, anchor=(5, 0, 1.5)))
    assert low.asleep and stack.force == pytest.approx((0, 0, 9.81), abs=1e-9)
    world.step(10)
    world.remove_joint(swing)
    assert stack.force == pytest.approx((0, 0, 9.81), abs=1e-9)
    assert world.constraint_error() < 1e-6
    world.set_state(world.get_state())               # its own snapshot restores


def test_a_bob_hanging_from_a_slow_kinematic_platform_never_sleeps_nor_loses_its_speed():
    """The platform's 0.01 m/s is below the sleep speed; the joint carries the bob along, and
    the energy check of a step without contacts or loads does not touch the platform."""
    world = World(sleeping=True)
    platform = world.add_body(Box((0.2, 0.2, 0.05)), static=True, position=(0, 0, 2),
                              linear_velocity=(0.01, 0, 0))
    bob = world.add_body(Sphere(0.05), mass=1.0, position=(0, 0, 1.5))
    world.add_joint(Ball(platform, bob, anchor=(0, 0, 2)))
    for _ in range(1200):
        world.step()
        assert not bob.asleep
    assert platform.linear_velocity[0] == 0.01
    assert bob.position[0] == pytest.approx(platform.position[0], abs=5e-3)
    assert world.stats["energy_restores"] == 0


def _stack_and_a_ball_flying_into_it():
    """A sleeping 3-box stack, a ball moving into it (the next step wakes the stack) and a
    hinged arm elsewhere, driven round (awake)."""
    world, boxes = stack()
    arm = world.add_body(Box((0.05, 0.05, 0.2)), mass=1.0, position=(3, 0, 1))
    hinge = world.add_joint(Hinge(None, arm, anchor=(3, 0, 1.2), axis=(0, 1, 0)))
    hinge.set_motor(velocity=1.0, max_force=50.0)
    world.step(240)
    assert all(b.asleep for b in boxes) and not arm.asleep
    ball = world.add_body(Sphere(0.05), mass=1.0, position=(-0.16, 0, 0.1),
                          linear_velocity=(2.0, 0, 0))
    return world, boxes, arm, ball


@pytest.mark.parametrize("fail", ["force", "motor"])
def test_a_failed_step_that_woke_an_island_leaves_it_asleep_and_the_world_unchanged(fail):
    """The step finds the ball reaching the stack, wakes it and runs again, then fails: the
    world is as it was, bit for bit (the stack asleep, its held contacts, the joints'
    forces, the limits' warm start, the stats), and then steps as if it had never tried.
    (The wake survived the StepError: all boxes awake, contacts and sleep islands new,
    and a step failing at dt = 1e9 lost the joints' forces and limit multipliers; dt is now
    at most 10 s, so a motor asked for 1e300 rad/s fails the step instead.)"""
    from physics import StepError
    from snapshot_helpers import assert_same_snapshot
    world, boxes, arm, ball = _stack_and_a_ball_flying_into_it()
    twin = _stack_and_a_ball_flying_into_it()[0]
    hinge, twin_hinge = world.joints[0], twin.joints[0]
    if fail == "force":
        arm.apply_force((1e300, 0, 0))
    else:
        hinge.set_motor(velocity=1e300, max_force=1e300)
    before, stats = world.get_state(), dict(world.stats)
    with pytest.raises(StepError, match="unchanged"):
        world.step()
    assert all(b.asleep for b in boxes)
    assert world.stats == stats
    assert_same_snapshot(world.get_state(), before)
    if fail == "force":
        world.clear_forces()
    else:
        hinge.set_motor(velocity=1.0, max_force=50.0)
        twin_hinge.set_motor(velocity=1e300, max_force=1e300)     # (retuned alike)
        twin_hinge.set_motor(velocity=1.0, max_force=50.0)
    world.step(30)
    twin.step(30)
    assert_same_snapshot(world.get_state(), twin.get_state())


def _far_ball_asleep_then_an_impact(substeps):
    """A ball asleep on the ground 20 m away, and a ball bouncing (restitution 0.8, dt
    1/240) or a box landing (dt 1/60, ``substeps`` 4), stepped to the step of its impact:
    what the step shows of its contacts (impact included, or the sub-steps' mean) is more
    than the contacts' last solve holds."""
    world = World(sleeping=True, dt=1 / 240 if substeps == 1 else 1 / 60, substeps=substeps)
    world.add_body(Plane())
    far = world.add_body(Sphere(0.1), mass=1.0, position=(20, 0, 0.1))
    if substeps == 1:
        body = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 2.0), restitution=0.8)
    else:
        body = world.add_body(Box((0.2, 0.2, 0.2)), mass=2.0, position=(0, 0, 5.0))
    for _ in range(600):
        world.step()
        c = world.contacts
        if c.normal_force[c.body_b == body.index].sum() > 50 * body.mass:
            break
    assert far.asleep and not body.asleep
    return world, far, body


@pytest.mark.parametrize("substeps", [1, 4])
@pytest.mark.parametrize("edit", ["remove_body", "wake", "apply_force", "position"])
def test_an_edit_far_away_leaves_the_contacts_as_the_last_step_showed_them(edit, substeps):
    """README (Conventions): the contacts stay as the last step made them until the next
    step. Before, removing, waking, pushing or moving a ball asleep 20 m away turned a
    bouncing ball's 2098 N into 0 N, and a box's landing at dt 1/60 with 4 sub-steps
    (1174.7 N) into its last sub-step's 21.6 N: the report shown in place of the live
    contacts was dropped when they were renumbered or joined by the woken island's."""
    world, far, body = _far_ball_asleep_then_an_impact(substeps)
    before = world.contacts
    mine = before.body_b == body.index
    force, points = before.normal_force[mine].copy(), before.point[mine].copy()
    assert force.sum() > 1000.0
    if edit == "remove_body":
        world.remove_body(far)
    elif edit == "wake":
        far.wake()
    elif edit == "apply_force":
        far.apply_force((1.0, 0, 0))
    else:
        far.position = (21, 0, 0.1)
    after = world.contacts
    mine = after.body_b == body.index                 # (renumbered after a removal)
    assert np.array_equal(after.normal_force[mine], force)
    assert np.array_equal(after.point[mine], points)
    if edit == "remove_body":                         # its own contact gone with it
        assert len(after) == mine.sum()
    else:                                             # the woken ball's, as it slept
        theirs = after.body_b == far.index
        assert after.normal_force[theirs].sum() == pytest.approx(9.81, rel=1e-6)


@pytest.mark.parametrize("change", ["position", "orientation", "collision_mask",
                                    "collision_group", "allow_collision"])
def test_a_static_wall_moved_or_made_solid_inside_a_sleeping_stack_wakes_and_pushes_it(change):
    """A static wall (0.1 m thick) moved, turned or made to collide (its mask, its group,
    ``allow_collision``) 5 cm into a sleeping stack of three 0.4 m boxes wakes the stack, which
    is pushed out until its faces meet the wall's; the box asleep 5 m away sleeps on. Before,
    the step made no contacts between the static wall and the sleeping boxes, so nothing
    woke them and they slept on inside it (a dynamic body moved so woke them)."""
    world = World(sleeping=True)
    world.add_body(Plane(), friction=0.6)
    stack = [world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0.2 + 0.4 * k),
                            friction=0.6) for k in range(3)]
    far = world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(5, 0, 0.2))
    wall = world.add_body(Box((0.05, 0.3, 1.0)), static=True, position=(0.3, 0, 1.0))
    if change == "collision_mask":
        wall.collision_mask = 0
    elif change == "collision_group":        # (group 0 is refused: a group the boxes mask out)
        for box in stack:
            box.collision_mask = ~2
        wall.collision_group = 2
    elif change == "allow_collision":
        for box in stack:
            world.ignore_collision(wall, box)
    if change not in ("position", "orientation"):     # in place, passing through them
        wall.position = (0.2, 0, 1.0)
    world.step(240)
    assert all(box.asleep for box in stack) and far.asleep
    face = 0.15                                        # m: the wall's face towards the stack
    if change == "position":
        wall.position = (0.2, 0, 1.0)
    elif change == "orientation":                      # a quarter turn about z: 0.3 m deep
        wall.orientation = (np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4))
        face = 0.0
    elif change == "collision_mask":
        wall.collision_mask = -1
    elif change == "collision_group":
        wall.collision_group = 1
    else:
        for box in stack:
            world.allow_collision(wall, box)
    assert not any(box.asleep for box in stack) and far.asleep
    world.step(240)
    x = np.array([box.position[0] for box in stack])
    assert x == pytest.approx(face - 0.2, abs=1e-3)    # their faces on the wall's (slop 0.3 mm)
    assert far.asleep


def test_allowing_two_sleeping_overlapping_boxes_to_collide_wakes_and_parts_them():
    """README: a change of collision filter wakes. ``ignore_collision`` did; allow_collision
    left two 0.4 m boxes asleep 0.2 m into each other, for ever."""
    world = World(sleeping=True)
    world.add_body(Plane())
    a = world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0.2))
    b = world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0.2, 0, 0.2))
    world.ignore_collision(a, b)
    world.step(240)
    assert a.asleep and b.asleep
    world.allow_collision(a, b)
    assert not a.asleep and not b.asleep
    world.step(240)
    assert b.position[0] - a.position[0] == pytest.approx(0.4, abs=1e-3)


@pytest.mark.parametrize("load", ["apply_forces", "apply_force", "apply_torque"])
def test_zero_loads_applied_every_step_let_boxes_sleep_and_a_push_wakes_only_its_box(load):
    """A force field applied before every step, zero on most bodies (a wind that is off),
    kept every body awake: five resting boxes given zero loads for 2 s never slept. Now
    the zero rows leave them to sleep after 0.5 s, and a 5 N row wakes only its box."""
    world = World(sleeping=True)
    world.add_body(Plane())
    boxes = [world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(k, 0, 0.1))
             for k in range(5)]
    zero = np.zeros((5, 3))
    for _ in range(480):
        if load == "apply_forces":
            world.apply_forces(zero, boxes)
        elif load == "apply_force":
            boxes[0].apply_force((0, 0, 0), point=(0, 0, 1))
        else:
            boxes[0].apply_torque((0, 0, 0))
        world.step()
    assert all(box.asleep for box in boxes)
    push = zero.copy()
    push[2] = (5.0, 0, 0)
    world.apply_forces(push, boxes)
    assert [box.asleep for box in boxes] == [True, True, False, True, True]
    world.step()
    assert boxes[2].linear_velocity[0] > 0 and not boxes[0].linear_velocity.any()


@pytest.mark.parametrize("how", ["apply_impulse", "apply_impulses", "linear_velocities"])
def test_an_impulse_or_a_batch_velocity_wakes_the_body_struck_and_no_other(how):
    """Two sleeping stacks of three boxes 2 m apart: an impulse of 0.5 N s along x on the top
    box of one (or its row of world.linear_velocities set to 0.5 m/s) wakes its stack and sends
    the box off at 0.5 m/s; the other stack sleeps on. Zero impulses, and the batch setter
    given the velocities the bodies have, wake nothing."""
    world = World(sleeping=True)
    world.add_body(Plane(), friction=0.6)
    stacks = [[world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(x, 0, 0.1 + 0.2 * i),
                              friction=0.6) for i in range(3)] for x in (0.0, 2.0)]
    world.step(240)
    assert world.asleep[1:].all()
    top = stacks[0][-1]
    # nothing
    stacks[1][0].apply_impulse((0, 0, 0))
    world.apply_impulses(np.zeros((7, 3)))
    world.linear_velocities = world.linear_velocities.copy()
    world.angular_velocities = np.zeros((7, 3))
    assert world.asleep[1:].all()
    if how == "apply_impulse":
        top.apply_impulse((0.5, 0, 0))
    elif how == "apply_impulses":
        world.apply_impulses([(0.5, 0, 0)], bodies=[top])
    else:
        v = world.linear_velocities.copy()
        v[top.index] = (0.5, 0, 0)
        world.linear_velocities = v
    assert top.linear_velocity == pytest.approx((0.5, 0, 0))
    assert not any(b.asleep for b in stacks[0]) and all(b.asleep for b in stacks[1])
    world.step()
    assert top.linear_velocity[0] > 0.4
    assert all(b.asleep for b in stacks[1])
