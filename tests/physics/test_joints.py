"""Joints (physics/joints.py): the RotationLock, a joint of angular rows alone (a character
that moves and is pushed freely but never tips), and what a joint removed and added again
is. Its rows are checked against finite differences with every joint's in test_rows.py."""
import numpy as np
import pytest

from physics import (Ball, Box, Capsule, Coupling, Cylinder, Cylindrical, Distance, Gear, Hinge,
                     Plane, Rolling, RotationLock, Slider, Sphere, Universal, World)
from physics.contacts import excluded_pairs
from tests.physics.snapshot_helpers import assert_same_state, replay_from_snapshot

G = 9.81


def character(friction=0.1, axis=(0, 0, 1)):
    """A world with a ground plane and an 80 kg capsule (radius 0.3, half length 0.6)
    standing on it, centre 0.9 m up, locked to the world (about ``axis`` only, or whole for
    None). Returns (world, capsule, lock)."""
    world = World(gravity=(0, 0, -G), dt=1 / 240)
    world.add_body(Plane(normal=(0, 0, 1), offset=0.0), friction=friction)
    body = world.add_body(Capsule(radius=0.3, half_length=0.6), mass=80.0,
                          position=(0, 0, 0.9), friction=friction)
    lock = world.add_joint(RotationLock(None, body, axis=axis))
    return world, body, lock


def tilt(body) -> float:
    """The angle (rad) between the body's axis (local z) and the world's vertical."""
    z = body.rotation[:, 2]
    return float(np.arctan2(np.linalg.norm(np.cross(z, (0, 0, 1))), z[2]))


def test_a_yaw_locked_character_pushed_at_its_shoulder_slides_upright_and_the_lock_holds_the_tipping_moment():
    """200 N sideways 0.5 m above the centre for 0.5 s, on ground of mu 0.1: it slides
    (friction 78.48 N against the push), its axis stays vertical, and the lock's torque is what
    statics says the push and the friction put about the centre, against them: the push's
    0.5 x 200 = 100 N m and the friction's 0.9 x 78.48 = 70.63 N m (the normal force passes
    through the centre), -170.63 N m about y."""
    world, body, lock = character(friction=0.1)
    push, arm, mu, m = 200.0, 0.5, 0.1, 80.0
    worst = 0.0
    for _ in range(120):
        body.apply_force((push, 0, 0), point=body.position + (0, 0, arm))
        world.step()
        worst = max(worst, tilt(body))
    assert worst < 1e-6
    # it slid: a = (F - mu m g) / m for 0.5 s
    assert body.linear_velocity[0] == pytest.approx((push - mu * m * G) / m * 0.5, rel=0.02)
    assert body.linear_velocity[0] > 0.7
    c = world.contacts
    assert c.friction_force[:, 0].sum() == pytest.approx(-mu * m * G, rel=1e-3)
    statics = -(arm * push + 0.9 * mu * m * G)            # about y, N m
    assert lock.torque[1] == pytest.approx(statics, rel=0.01)
    assert abs(lock.torque[0]) < 1e-6 and abs(lock.torque[2]) < 1e-6
    np.testing.assert_array_equal(lock.force, 0.0)
    np.testing.assert_array_equal(world.joint_forces, [[0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(world.joint_torques, [lock.torque])
    # without the lock the same push tips it over
    free_world, free, _ = character(friction=0.1)
    free_world.remove_joint(free_world.joints[0])
    for _ in range(120):
        free.apply_force((push, 0, 0), point=free.position + (0, 0, arm))
        free_world.step()
    assert tilt(free) > 0.2


def test_a_yaw_locked_character_spins_freely_about_its_axis():
    """Given 3 rad/s of yaw it keeps it for 2 s on the ground (mu 0.5): the axis is free, so
    the lock takes none of it; a spin off the axis is taken away at the first step."""
    world, body, lock = character(friction=0.5)
    body.angular_velocity = (0, 0, 3.0)
    world.step()
    Lz = world.angular_momentum(body.position)[2]
    assert Lz == pytest.approx(body.inertia[2, 2] * 3.0, rel=1e-12)
    heading0 = np.arctan2(body.rotation[1, 0], body.rotation[0, 0])
    world.step(480)
    assert world.angular_momentum(body.position)[2] == pytest.approx(Lz, rel=1e-9)
    np.testing.assert_allclose(body.angular_velocity, (0, 0, 3.0), atol=1e-9)
    turned = np.arctan2(body.rotation[1, 0], body.rotation[0, 0]) - heading0
    assert np.mod(turned - 3.0 * 2.0 + np.pi, 2 * np.pi) - np.pi == pytest.approx(0, abs=1e-6)
    assert tilt(body) < 1e-9
    body.angular_velocity = (1.0, 0.5, 3.0)              # a tipping spin: not allowed
    world.step()
    np.testing.assert_allclose(body.angular_velocity, (0, 0, 3.0), atol=1e-9)


def test_a_fully_locked_box_dropped_on_an_edge_lands_on_it_without_turning_and_rests():
    """A 2 kg box turned 30 degrees about x falls 0.3 m onto its lowest edge and stays on it
    (a free box would topple flat): its orientation holds to 1e-9 through the impact, it comes
    to rest, the edge's two contacts carry its weight and the lock holds the weight's moment
    about the edge, m g times the centre's 0.123 m reach past it."""
    world = World(dt=1 / 240)
    world.add_body(Plane(normal=(0, 0, 1), offset=0.0))
    angle = np.radians(30)
    q0 = np.array([np.cos(angle / 2), np.sin(angle / 2), 0, 0])
    box = world.add_body(Box((0.3, 0.2, 0.1)), mass=2.0, position=(0, 0, 0.6), orientation=q0)
    lock = world.add_joint(RotationLock(None, box))
    turned = 0.0
    for _ in range(480):
        world.step()
        turned = max(turned, np.abs(box.orientation - q0).max())
    assert turned < 1e-9
    assert np.linalg.norm(box.linear_velocity) < 1e-9
    assert np.linalg.norm(box.angular_velocity) < 1e-9
    # resting on its lowest edge, the corners at local (+-0.3, -0.2, -0.1): the centre is
    # 0.2 sin + 0.1 cos above it and 0.2 cos - 0.1 sin past it along y
    assert box.position[2] == pytest.approx(0.2 * np.sin(angle) + 0.1 * np.cos(angle), abs=1e-4)
    c = world.contacts
    assert len(c.point) == 2
    assert c.normal_force.sum() == pytest.approx(2.0 * G, rel=1e-9)
    reach = 0.2 * np.cos(angle) - 0.1 * np.sin(angle)
    assert box.position[1] - c.point[:, 1].mean() == pytest.approx(reach, abs=1e-6)
    assert lock.torque[0] == pytest.approx(2.0 * G * reach, rel=1e-6)
    np.testing.assert_allclose(lock.torque[1:], 0.0, atol=1e-9)
    np.testing.assert_array_equal(lock.force, 0.0)


def test_two_bodies_locked_to_each_other_keep_the_momenta_a_free_pair_would():
    """In zero gravity, a box and a capsule locked to each other (not touching): kicking the
    capsule with a torque for one step adds the torque's impulse to the total angular
    momentum and nothing to the linear; then both are held over 4 s, each body keeps its own
    linear momentum (the lock has no force), and the two turn as one."""
    world = World(gravity=(0, 0, 0), dt=1 / 240)
    a = world.add_body(Box((0.3, 0.2, 0.1)), mass=2.0, position=(0, 0, 0),
                       linear_velocity=(0.5, 0, 0))
    b = world.add_body(Capsule(0.1, 0.4), mass=1.0, position=(0, 2.0, 0.2),
                       orientation=(np.cos(0.3), np.sin(0.3), 0, 0), linear_velocity=(0, 0.3, 0.2))
    lock = world.add_joint(RotationLock(a, b))
    world.step()
    P0, L0 = world.linear_momentum(), world.angular_momentum()
    pa, pb = a.mass * a.linear_velocity, b.mass * b.linear_velocity
    kick = np.array([0.0, 2.0, 5.0])
    b.apply_torque(kick)
    world.step()
    np.testing.assert_allclose(world.linear_momentum(), P0, atol=1e-14)
    np.testing.assert_allclose(world.angular_momentum(), L0 + kick * world.dt, atol=1e-13)
    L1 = world.angular_momentum()
    assert np.linalg.norm(b.angular_velocity) > 0.1
    for _ in range(960):
        world.step()
        assert not len(world.contacts.point)
    np.testing.assert_allclose(world.linear_momentum(), P0, atol=1e-13)
    np.testing.assert_allclose(world.angular_momentum(), L1, atol=1e-12)
    np.testing.assert_allclose(a.mass * a.linear_velocity, pa, atol=1e-13)
    np.testing.assert_allclose(b.mass * b.linear_velocity, pb, atol=1e-13)
    np.testing.assert_allclose(a.angular_velocity, b.angular_velocity, atol=1e-9)
    assert world.constraint_error() < 1e-8
    np.testing.assert_array_equal(lock.force, 0.0)
    assert np.linalg.norm(lock.torque) > 1e-4          # it carries the box round with it


def test_bodies_locked_to_each_other_still_collide():
    """A lock joins no point of its bodies, so they are not a jointed pair: a sphere locked
    to a box it falls onto lands on it (a Ball joint between them would let it fall
    through). The world's static bodies are not jointed to a body locked to the world."""
    world = World(dt=1 / 240)
    ground = world.add_body(Plane(normal=(0, 0, 1), offset=0.0))
    box = world.add_body(Box((0.5, 0.5, 0.1)), mass=5.0, position=(0, 0, 0.1))
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 0.5))
    world.add_joint(RotationLock(box, ball))
    world.add_joint(RotationLock(None, box, axis=(0, 0, 1)))
    assert excluded_pairs(world).size == 0
    world.step(480)
    assert ball.position[2] == pytest.approx(0.3, abs=1e-3)
    on_ball = world.contacts.body_b == ball.index
    assert world.contacts.normal_force[on_ball].sum() == pytest.approx(G, rel=1e-6)
    assert box.position[2] == pytest.approx(0.1, abs=1e-3) and ground.static


def test_a_locked_character_replays_from_a_snapshot_sleeps_and_tips_once_unlocked():
    """A fully locked character sliding to a stop: a snapshot replays bit for bit, it falls
    asleep (its lock holding nothing then), removing the lock wakes it and a push tips it,
    and the lock added again holds the pose it has then."""
    world, body, lock = character(friction=0.5, axis=None)
    body.linear_velocity = (1.0, 0.5, 0)
    first, second = replay_from_snapshot(world, 30, 60)
    assert_same_state(first, second)
    world.sleeping = True
    world.step(480)
    assert body.asleep
    assert lock.torque == pytest.approx([0, 0, 0], abs=1e-9)
    world.remove_joint(lock)
    assert not body.asleep and world.joints == []
    for _ in range(120):
        body.apply_force((200.0, 0, 0), point=body.position + (0, 0, 0.5))
        world.step()
    assert tilt(body) > 0.1
    with pytest.raises(ValueError, match="removed from its world"):
        lock.torque
    world.add_joint(lock)                        # again, holding the pose it has now
    q = body.orientation
    world.step(60)
    np.testing.assert_allclose(body.orientation, q, atol=1e-9)
    np.testing.assert_allclose(lock.anchor, body.position)


@pytest.mark.parametrize("make, message", [
    (lambda a, b: RotationLock(None, b, axis=(0, 0, 0)), "axis must be a non-zero direction"),
    (lambda a, b: RotationLock(None, b, axis=(1e-12, 0, 0)), "axis must be a non-zero direction"),
    (lambda a, b: RotationLock(a, b, axis=(np.nan, 0, 1)), "axis must be finite"),
    (lambda a, b: RotationLock(a, b, axis=(np.inf, 0, 1)), "axis must be finite"),
    (lambda a, b: RotationLock(a, b, axis=(0, 1)), "axis must have 3 components"),
    (lambda a, b: RotationLock(a, b, axis="z"), "axis must be 3 real numbers"),
    (lambda a, b: RotationLock(b, b), "same body"),
    (lambda a, b: RotationLock(a, None), "body_b must be a body"),
    (lambda a, b: RotationLock(a, "b"), "body_b must be a Body"),
])
def test_bad_rotation_locks_name_the_parameter(make, message):
    world = World()
    a = world.add_body(Sphere(0.1), mass=1.0)
    b = world.add_body(Sphere(0.1), mass=1.0, position=(1, 0, 0))
    with pytest.raises(ValueError, match=message):
        make(a, b)


def test_a_rotation_lock_holding_no_dynamic_body_is_refused():
    world = World()
    wall = world.add_body(Box((0.1, 0.1, 0.1)), static=True)
    post = world.add_body(Box((0.1, 0.1, 0.1)), static=True, position=(0, 1, 0))
    for lock in (RotationLock(None, wall), RotationLock(wall, post, axis=(0, 0, 1))):
        with pytest.raises(ValueError, match="joins no dynamic body"):
            world.add_joint(lock)
    assert world.joints == []


@pytest.mark.parametrize("kind", ["Ball", "Hinge", "Distance"])
def test_a_joint_added_again_is_the_joint_its_arguments_make_there(kind):
    """A joint removed, its body_b moved 2 m and turned 0.4 rad, and added again is bound
    afresh from its arguments, as a new joint with them (``anchor=None``: body_b's centre
    now; a rigid Distance's ``length=None``: the anchors' distance now; a hinge's angle zero
    now, its limits counted from there): the two worlds step bit for bit alike. Before, the
    first add's anchor and length were kept: the ball joint held the re-added body 2 m off
    its centre, so spinning at 1 rad/s it swung round that point, and the rod kept its
    first 1 m length where its anchors were 3 m apart."""
    def make(a, b):
        if kind == "Ball":
            return Ball(a, b)
        if kind == "Hinge":
            return Hinge(a, b, axis=(0, 0, 1), limits=(-0.5, 0.5))
        return Distance(a, b)

    def world_with(rejoin):
        world = World(gravity=(0, 0, 0))
        b = world.add_body(Sphere(0.1), mass=1.0, position=(1, 0, 0))
        joint = world.add_joint(make(None, b))
        b.angular_velocity = (0, 0, 0.3)
        world.step(60)
        world.remove_joint(joint)
        b.position = (3, 0, 0)
        b.orientation = (np.cos(0.2), 0, 0, np.sin(0.2))
        b.linear_velocity, b.angular_velocity = (0, 0, 0), (0, 0, 1.0)
        return world, b, world.add_joint(joint if rejoin else make(None, b))

    world, b, joint = world_with(rejoin=True)
    fresh_world, _, fresh = world_with(rejoin=False)
    np.testing.assert_array_equal(joint.anchor, (3, 0, 0))
    np.testing.assert_array_equal(joint.anchor, fresh.anchor)
    if kind == "Hinge":
        assert joint.angle == fresh.angle == 0.0
    if kind == "Distance":
        assert joint.length == fresh.length == 3.0
    world.step(240)
    fresh_world.step(240)
    np.testing.assert_array_equal(world.positions, fresh_world.positions)
    np.testing.assert_array_equal(world.orientations, fresh_world.orientations)
    if kind == "Ball":                        # spinning about its own centre, it stays put
        np.testing.assert_allclose(b.position, (3, 0, 0), atol=1e-9)
    if kind == "Hinge":                       # turning at 1 rad/s, it stops at the limit
        assert joint.angle == pytest.approx(0.5, abs=2e-3)


def three_boxes():
    """A world with a ground plane and three 1 kg boxes 1 m up, at x = 0, 0.5 and 3."""
    world = World(gravity=(0, 0, -G))
    world.add_body(Plane())
    return world, *(world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(x, 0, 1))
                    for x in (0.0, 0.5, 3.0))


def test_a_joints_bodies_cannot_be_changed_after_it_is_made():
    """Before, body_a and body_b were plain attributes: ``Ball(None, c)`` given body_a = c
    was added as a joint of c with itself, a hinge given another body_b kept holding the old
    one (and the old one could then be removed from under it), and body_b = "a" failed deep
    in the step. Now setting either is refused and the joint keeps its bodies."""
    world, a, b, c = three_boxes()
    hinge = world.add_joint(Hinge(None, a, anchor=(0, 0, 1.2), axis=(0, 1, 0)))
    slider = world.add_joint(Slider(a, b, axis=(1, 0, 0)))
    loose = Ball(None, c, anchor=(3, 0, 1.2))
    message = (r"cannot set \w+\.body_[ab]: a joint's bodies are fixed when it is made: make "
               r"a new joint \(world.remove_joint takes this one out\)")
    for joint, label, value in ((loose, "body_a", c), (hinge, "body_b", c),
                                (hinge, "body_b", "a"), (hinge, "body_a", b),
                                (slider, "body_b", c)):
        with pytest.raises(ValueError, match=message):
            setattr(joint, label, value)
    assert (loose.body_a, hinge.body_a, hinge.body_b, slider.body_b) == (None, None, a, b)
    with pytest.raises(ValueError, match="still has joints"):
        world.remove_body(b)
    world.step(60)
    assert np.linalg.norm(hinge.anchor - (0, 0, 1.2)) < 1e-6      # a still hangs from it
    assert c.position[2] == pytest.approx(1 - G * 0.25**2 / 2, abs=0.01)    # c falls free


def test_add_joint_refuses_a_joint_of_a_body_with_itself_however_it_came_about():
    world, a, b, c = three_boxes()
    joint = Ball(None, c)
    joint._body_a = c                       # (what no public setter can do any more)
    with pytest.raises(ValueError, match=r"joins a body to itself: body_a and body_b must be "
                                         "two bodies"):
        world.add_joint(joint)
    assert world.joints == []


@pytest.mark.parametrize("make, part, words", [
    (lambda w, a, b: Universal(a, b, anchor=(0.25, 0, 1)), "turning_a",
     "a joint's coordinates are fixed when it is made: set their limits"),
    (lambda w, a, b: Cylindrical(a, b, axis=(1, 0, 0)), "sliding",
     "a joint's coordinates are fixed when it is made: set their limits"),
    (lambda w, a, b: Gear(w.add_joint(Hinge(None, a)), w.add_joint(Hinge(None, b)), 2.0),
     "phi", "a coupling's joints and functions are fixed when it is made: make a new one"),
    (lambda w, a, b: Coupling([w.add_joint(Hinge(None, a)), w.add_joint(Hinge(None, b))],
                              lambda q: q[1] - q[0], lambda q: np.array([-1.0, 1.0])),
     "grad", "a coupling's joints and functions are fixed when it is made: make a new one"),
])
def test_the_parts_a_joint_is_made_with_are_refused_when_set(make, part, words):
    """Before, ``universal.turning_a = None`` and ``coupling.phi = None`` were taken and the
    next step failed with a raw AttributeError or TypeError from inside the world."""
    world, a, b, _ = three_boxes()
    joint = world.add_joint(make(world, a, b))
    kept = getattr(joint, part)
    with pytest.raises(ValueError, match=f"cannot set {type(joint).__name__}.{part}: {words}"):
        setattr(joint, part, None)
    assert getattr(joint, part) is kept
    world.step(5)


@pytest.mark.parametrize("part, value", [("radius", -1.0), ("radius", 5.0), ("radius", "big"),
                                         ("normal", (0, 0, 0)), ("offset", np.nan),
                                         ("axis", (1, 0, 0))])
def test_a_rolling_wheels_plane_radius_and_axis_are_refused_when_set(part, value):
    """Before, they were plain attributes, reported as set and never used by the step (or,
    'big', failing deep in it once the world rebuilt its rows)."""
    world = World(gravity=(0, 0, -G))
    world.add_body(Plane())
    disc = world.add_body(Cylinder(0.2, 0.02), mass=1.0, position=(0, 0, 0.2),
                          orientation=(np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0),
                          linear_velocity=(1, 0, 0))
    roll = world.add_joint(Rolling(disc))
    with pytest.raises(ValueError, match=f"cannot set Rolling.{part}: a wheel's plane, radius "
                                         "and axis are fixed when its Rolling is made"):
        setattr(roll, part, value)
    assert (roll.radius, roll.offset) == (0.2, 0.0)
    world.step(60)
    assert abs(roll.gap) < 1e-6


def test_an_attribute_error_inside_a_joints_property_is_not_reported_as_the_property_missing():
    """A joint's ``__getattr__`` (its hints for misspelt names) was reached when a property
    raised AttributeError inside, and said the joint had no such property."""
    class Probe(Hinge):
        @property
        def reading(self):
            return self.body_b.no_such_reading

    world, a, _, _ = three_boxes()
    probe = world.add_joint(Probe(None, a))
    with pytest.raises(AttributeError, match="no_such_reading") as error:
        probe.reading
    assert "'reading'" not in str(error.value)


@pytest.mark.parametrize("make, use", [
    (lambda a, b: Hinge(None, a, axis=(0, 1, 0)), lambda j: j.apply_torque(1.0)),
    (lambda a, b: Hinge(None, a, axis=(0, 1, 0)), lambda j: j.rate),
    (lambda a, b: Slider(a, b, axis=(1, 0, 0)), lambda j: j.apply_force(1.0)),
    (lambda a, b: Slider(a, b, axis=(1, 0, 0)), lambda j: j.position),
    (lambda a, b: Cylindrical(None, a, axis=(0, 0, 1)), lambda j: j.angle_rate),
    (lambda a, b: Universal(a, b, anchor=(0.25, 0, 1)), lambda j: j.angle_a),
    (lambda a, b: Distance(a, b, limits=(0.1, 1.0)), lambda j: j.distance),
    (lambda a, b: Ball(a, b, anchor=(0.25, 0, 1)), lambda j: j.anchor),
    (lambda a, b: Ball(None, a, anchor=(0, 0, 1.5)), lambda j: j.swing),
])
def test_a_joint_not_yet_added_says_to_add_it_before_measuring_or_loading_it(make, use):
    """Hinge(...).apply_torque(1) raised "AttributeError: 'Hinge' object has no attribute
    'axis'" (the frames it measures from are made by add_joint), and a Ball's swing said it
    had no twist axis as if its body's centre had been at the anchor. A removed joint keeps
    its frames and still answers."""
    world, a, b, _ = three_boxes()
    joint = make(a, b)
    with pytest.raises(ValueError, match=rf"^<{type(joint).__name__} .*> is not in a world yet: "
                                         r"add it with world.add_joint first \(its anchors and "
                                         r"axes are fixed in its bodies there"):
        use(joint)
    world.add_joint(joint)
    added = use(joint)
    world.clear_forces()
    world.remove_joint(joint)
    if added is not None:                                     # (a removed joint keeps
        np.testing.assert_allclose(use(joint), added)         # its frames)
