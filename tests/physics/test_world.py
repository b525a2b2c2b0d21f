"""The World's public surface: building, snapshots, removal, clear errors on bad input, and a
failing step that leaves the world untouched."""
import warnings

import numpy as np
import pytest

from physics import (Ball, Box, Capsule, Cylinder, Distance, Fixed, Gear, Hinge, Plane,
                     RotationLock, Slider, Sphere, StepError, Universal, World)
from physics.math3d import quat_multiply, quat_to_matrix
from snapshot_helpers import assert_same_snapshot, assert_same_state, replay_from_snapshot


def hanging_pair():
    world = World()
    a = world.add_body(Box((0.1, 0.1, 0.3)), mass=1.0, position=(0, 0, -0.3))
    b = world.add_body(Sphere(0.1), density=1000.0, position=(0, 0, -0.8))
    world.add_joint(Hinge(None, a, anchor=(0, 0, 0), axis=(0, 1, 0)))
    world.add_joint(Ball(a, b, anchor=(0, 0, -0.6)))
    a.angular_velocity = (0, 3.0, 0)
    return world, a, b


def test_mass_properties_from_shapes():
    world = World()
    s = world.add_body(Sphere(0.5), density=1000.0)
    assert s.mass == pytest.approx(1000 * 4 / 3 * np.pi * 0.125)
    np.testing.assert_allclose(s.inertia, np.eye(3) * 0.4 * s.mass * 0.25)
    box = world.add_body(Box((0.5, 1.0, 1.5)), mass=12.0)
    np.testing.assert_allclose(np.diag(box.inertia), [12 / 12 * (4 + 9), 12 / 12 * (1 + 9), 12 / 12 * (1 + 4)])
    cyl = world.add_body(Cylinder(0.2, 0.5), mass=3.0)
    np.testing.assert_allclose(np.diag(cyl.inertia), [3 * (0.04 / 4 + 1 / 12)] * 2 + [3 * 0.02])
    # a capsule of zero length is a sphere
    cap = world.add_body(Capsule(0.3, 0.0), mass=2.0)
    np.testing.assert_allclose(cap.inertia, np.eye(3) * 0.4 * 2.0 * 0.09)
    custom = world.add_body(Sphere(0.1), mass=1.0, inertia=(1.0, 2.0, 3.0))
    np.testing.assert_allclose(custom.inertia, np.diag([1.0, 2.0, 3.0]))


def test_every_body_keeps_the_name_it_was_given():
    world = World()
    names = [world.add_body(shape, name=label, **kw).name for shape, label, kw in (
        (Plane(), "ground", {}), (Box((0.1, 0.1, 0.1)), "crate", {"mass": 1.0}),
        (Sphere(0.2), "post", {"static": True}), (Sphere(0.1), None, {"mass": 1.0}))]
    assert names == ["ground", "crate", "post", None]


def test_all_joint_forces_and_torques_at_once_are_each_joints():
    world, a, b = hanging_pair()
    world.step(10)
    assert world.joint_forces.shape == world.joint_torques.shape == (2, 3)
    for k, joint in enumerate(world.joints):
        np.testing.assert_array_equal(world.joint_forces[k], joint.force)
        np.testing.assert_array_equal(world.joint_torques[k], joint.torque)
    assert np.abs(world.joint_forces).max() > 1.0


def test_joint_reports_the_static_load_it_carries():
    world = World()
    b = world.add_body(Sphere(0.1), mass=2.0, position=(0, 0, -1))
    j = world.add_joint(Ball(None, b, anchor=(0, 0, 0)))
    world.step(10)
    np.testing.assert_allclose(j.force, [0, 0, 2 * 9.81], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(j.torque, [0, 0, 0], atol=1e-6)


def test_hinge_angle_and_slider_position_track_the_motion():
    world = World(gravity=(0, 0, 0))
    wheel = world.add_body(Cylinder(0.2, 0.05), mass=1.0)
    hinge = world.add_joint(Hinge(None, wheel, anchor=(0, 0, 0), axis=(0, 0, 1)))
    wheel.angular_velocity = (0, 0, 1.0)
    cart = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 2, 0))
    slider = world.add_joint(Slider(None, cart, axis=(1, 0, 0)))
    cart.linear_velocity = (0.5, 0, 0)
    world.step(240)
    assert hinge.angle == pytest.approx(1.0, abs=1e-6)
    assert hinge.rate == pytest.approx(1.0, abs=1e-9)
    assert slider.position == pytest.approx(0.5, abs=1e-9)
    assert slider.rate == pytest.approx(0.5, abs=1e-9)


def test_snapshot_restores_an_exact_replay():
    world, a, b = hanging_pair()
    first, second = replay_from_snapshot(world, 50, 100)
    assert_same_state(first, second)


def test_a_snapshot_whose_time_was_set_restores_that_time():
    """A snapshot's clock (origin and step count) replays the time to the bit; a snapshot
    whose "time" was changed by hand restores that time instead, and counts on from it."""
    world, a, b = hanging_pair()
    world.step(30)
    snapshot = world.get_state()
    snapshot["time"] = 5.0
    world.set_state(snapshot)
    assert world.time == 5.0
    world.step(2)
    assert world.time == 5.0 + 2 * world.dt


def test_a_snapshot_edited_off_the_joints_is_placed_on_them_as_body_position_does():
    """A 1 kg, 1 m rod on a hinge: moved 0.3 m up off it, through Body.position or by editing
    a snapshot, it is placed back on the hinge at the next step and keeps about the energy of
    the pose it is put in (9.8 J at rest before, 11.8 J in the placed pose). From the edited
    snapshot the step's stabilisation snapped it back: 4.45 m/s, 25.1 J."""
    def hinged_rod():
        world = World(dt=1 / 240)
        rod = world.add_body(Box((0.5, 0.02, 0.02)), mass=1.0, position=(0.5, 0, 1))
        world.add_joint(Hinge(None, rod, anchor=(0, 0, 1), axis=(0, 1, 0)))
        world.step(10)
        return world, rod
    speeds = []
    for edit in ("position", "snapshot"):
        world, rod = hinged_rod()
        if edit == "position":
            rod.position = rod.position + (0, 0, 0.3)
        else:
            snapshot = world.get_state()
            snapshot["x"][-1] += (0, 0, 0.3)
            world.set_state(snapshot)
        world.step()
        assert world.constraint_error() < 1e-6
        assert world.energy() < 12.0
        speeds.append(np.linalg.norm(rod.linear_velocity))
    assert max(speeds) < 0.35


def test_remove_joint_then_body():
    world, a, b = hanging_pair()
    with pytest.raises(ValueError, match="remove them first"):
        world.remove_body(b)
    world.remove_joint(world.joints[1])
    world.remove_body(b)
    assert world.bodies == [a] and b not in world.bodies
    world.step(10)   # still runs with the remaining hinge
    with pytest.raises(ValueError, match="removed"):
        b.position


@pytest.mark.parametrize("edit", ["add a body", "remove a body", "remove a body before",
                                  "change a mass"])
@pytest.mark.parametrize("limit_first", [False, True])
def test_a_limit_dropped_in_the_frame_of_another_edit_lets_its_joint_swing_on(edit, limit_first):
    """A body added or removed, or a mass changed, in the frame a joint's limit is dropped
    (before or after): the limits kept their warm start from the rows they had, and the next
    step failed with an IndexError. Now the rod swings on past where the limit held it (to
    2.30 rad), and the other rod stays on its limit."""
    world = World(dt=1 / 120)
    first = world.add_body(Sphere(0.1), mass=0.2, position=(5, 5, 0.5))
    rods = [world.add_body(Box((0.3, 0.05, 0.05)), mass=1.0, position=(0.3, y, 2.0))
            for y in (0.0, 1.0)]
    hinges = [world.add_joint(Hinge(None, rod, anchor=(0, y, 2.0), axis=(0, 1, 0),
                                    limits=(-0.5, 0.5))) for rod, y in zip(rods, (0.0, 1.0))]
    last = world.add_body(Sphere(0.1), mass=0.2, position=(-5, 5, 0.5))
    world.step(120)
    assert [h.angle for h in hinges] == pytest.approx([0.5, 0.5], abs=1e-3)
    if limit_first:
        hinges[0].limits = None
    if edit == "add a body":
        world.add_body(Sphere(0.1), mass=0.2, position=(5, -5, 0.5))
    elif edit == "remove a body":
        world.remove_body(last)
    elif edit == "remove a body before":            # (the rods' rows move down)
        world.remove_body(first)
    else:
        rods[1].mass = 2.0
    if not limit_first:
        hinges[0].limits = None
    world.step(60)
    assert hinges[0].angle > 2.0
    assert hinges[1].angle == pytest.approx(0.5, abs=1e-3)


def test_a_body_added_after_one_was_removed_starts_afresh():
    """A new body takes the row a removed one freed: it kept that body's inverse mass (a
    static wall with 0.5 1/kg: every later step of the world failed), its queued force and
    torque (a ball never pushed moved at 4.2 m/s) and how long it had been still (asleep
    after 0.09 s, not sleep_time)."""
    world = World(gravity=(0, 0, 0), sleeping=True)
    world.add_body(Plane(offset=-5.0))
    crate = world.add_body(Box((0.2, 0.2, 0.2)), mass=2.0)
    crate.apply_force((1000.0, 0, 0))
    crate.apply_torque((0, 0, 5.0))
    world.step(100)                                  # still for 0.42 s: not asleep yet
    crate.apply_force((1000.0, 0, 0))
    world.remove_body(crate)
    wall = world.add_body(Box((1.0, 0.1, 1.0)), static=True, position=(3, 0, 0))
    world.remove_body(wall)
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(5, 0, 0))
    world.step()
    assert np.all(ball.linear_velocity == 0) and np.all(ball.angular_velocity == 0)
    wall = world.add_body(Box((1.0, 0.1, 1.0)), static=True, position=(3, 0, 0))
    world.step(int(0.45 / world.dt))
    assert not ball.asleep                           # (sleep_time 0.5 s)
    world.step(int(0.1 / world.dt))
    assert ball.asleep
    assert wall.mass == np.inf and world._inv_mass[wall.row] == 0.0
    assert np.all(ball.position == (5, 0, 0))


@pytest.mark.parametrize("kwargs, match", [
    (dict(mass=0.0), "mass must be positive"),
    (dict(mass=-1.0), "mass must be positive"),
    (dict(mass=float("nan")), "mass must be finite"),
    (dict(mass=1.0, orientation=(0, 0, 0, 0)), "orientation must be a unit quaternion"),
    (dict(mass=1.0, orientation=(1, 1, 0, 0)), "orientation must be a unit quaternion"),
    (dict(mass=1.0, position=(0, float("nan"), 0)), "position must be finite"),
    (dict(mass=1.0, linear_velocity=(0, 0)), "linear_velocity must have 3 components"),
    (dict(mass=1.0, angular_velocity=(0, float("inf"), 0)), "angular_velocity must be finite"),
    (dict(), "needs mass= or density="),
    (dict(mass=1.0, density=2.0), "either mass or density"),
    (dict(mass=1.0, inertia=(1.0, -1.0, 1.0)), "inertia must be positive definite"),
    (dict(mass=1.0, inertia=(1.0, 1.0, 100.0)), r"inertia is no rigid body's.*I1 \+ I2 >= I3"),
    (dict(density=1000.0, shape=Sphere(1e300)), "gives Sphere.* a mass of inf kg"),
    (dict(density=1000.0, shape=Sphere(1e-300)), "gives Sphere.* a mass of 0 kg"),
    (dict(mass=1.0, friction=-1), "friction must be zero or positive"),
    (dict(mass=1.0, restitution=2.0), "restitution must be between 0 and 1"),
    (dict(mass=1.0, rolling_friction="x"), "rolling_friction must be a number"),
    (dict(mass=1.0, spin_friction=float("nan")), "spin_friction must be finite"),
])
def test_bad_body_input_names_the_parameter_and_adds_no_body(kwargs, match):
    """(A refused material used to leave a body with the default material in the world.)"""
    kwargs = dict(kwargs)
    shape = kwargs.pop("shape", Sphere(0.1))
    world = World()
    world.add_body(Plane())
    with pytest.raises(ValueError, match=match):
        world.add_body(shape, **kwargs)
    assert len(world.bodies) == 1 and world._n == 2      # (row 0 is the world frame)


def test_an_inertia_too_small_for_the_contacts_to_hold_the_body_is_refused():
    """A 1 kg box of half size 0.1 m (its own inertia 0.00667 kg m^2) given 1e-7 kg m^2 was
    accepted and fell through the ground, to z = -1.41 m in a second, without an error: a
    contact row's softness is relative to its r^2 / I. Below 1e-3 of the shape's own
    inertia about any axis is now refused, when the body is added and when its inertia is
    set; 1e-3 of it rests on the ground, as a 1 kg sphere bob of 1e-3 kg m^2 stays accepted."""
    world = World(gravity=(0, 0, -9.81))
    world.add_body(Plane())
    message = (r"inertia \(1e-07, 1e-07, 1e-07\) \(principal moments, kg m\^2\) is 1.5e-05 of "
               r"what Box\(half_extents=\(0.1, 0.1, 0.1\)\) of 1 kg has about some axis .*"
               r"below 0.001 of it its contacts cannot hold it")
    with pytest.raises(ValueError, match=message):
        world.add_body(Box((0.1,) * 3), mass=1.0, inertia=np.eye(3) * 1e-7, position=(0, 0, 0.3))
    assert len(world.bodies) == 1
    box = world.add_body(Box((0.1,) * 3), mass=1.0, inertia=np.eye(3) * 6.7e-6,
                         position=(0, 0, 0.3))
    with pytest.raises(ValueError, match="is 0.00015 of what Box"):
        box.inertia = (1.0, 1.0, 1e-6)           # (small about one axis is enough)
    np.testing.assert_allclose(box.inertia, np.eye(3) * 6.7e-6)
    world.step(240)
    assert box.position[2] == pytest.approx(0.1, abs=1e-3)
    world.add_body(Sphere(0.05), mass=1.0, inertia=(1e-3,) * 3, position=(1, 0, 1))


@pytest.mark.parametrize("make, shown", [
    (lambda w: w.add_body(Sphere(0.1), mass=1.0, orientation=np.array([1.0, 1.0, 0.0, 0.0])),
     "got (1, 1, 0, 0) with norm 1.41421"),
    (lambda w: Box(np.array([0.5, -0.25, 1.0])), "got (0.5, -0.25, 1)"),
    (lambda w: World(baumgarte=np.array([-1.0, 2.0])), "got (-1, 2)"),
    (lambda w: Hinge(None, w.add_body(Sphere(0.1), mass=1.0), anchor=(0, 0, 0), axis=(0, 0, 1),
                     limits=np.array([0.5, -0.5])), "got (0.5, -0.5)"),
], ids=["orientation", "half_extents", "baumgarte", "limits"])
def test_error_messages_show_numbers_as_a_user_writes_them(make, shown):
    """Values given as numpy arrays come back in the message as plain numbers, not as
    np.float64(...) reprs."""
    with pytest.raises(ValueError) as error:
        make(World())
    assert shown in str(error.value) and "np." not in str(error.value)


@pytest.mark.parametrize("field", ["collision_group", "collision_mask"])
@pytest.mark.parametrize("value", ["a", 1.5, True, None, 2**64, -2**63 - 1])
def test_bad_collision_bits_name_the_parameter(field, value):
    body = World().add_body(Sphere(0.1), mass=1.0)
    before = getattr(body, field)
    with pytest.raises(ValueError, match=f"{field} must be an integer bit mask"):
        setattr(body, field, value)
    assert getattr(body, field) == before


def test_collision_bits_take_whole_numbers_and_all_64_bits():
    body = World().add_body(Sphere(0.1), mass=1.0)
    body.collision_group = 4.0
    body.collision_mask = 2**64 - 1          # every group: the int64 of the same bits
    assert (body.collision_group, body.collision_mask) == (4, -1)
    body.collision_mask = np.int64(6)
    assert body.collision_mask == 6


@pytest.mark.parametrize("make, match", [
    (lambda: Sphere(0.0), "radius must be positive"),
    (lambda: Box((1, 0, 1)), "half_extents must all be positive"),
    (lambda: Capsule(-0.1, 1.0), "radius must be positive"),
    (lambda: Plane(normal=(0, 0, 0)), "normal must be a non-zero direction"),
])
def test_bad_shapes_name_the_parameter(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_joints_name_the_parameter():
    world = World()
    a = world.add_body(Sphere(0.1), mass=1.0)
    b = world.add_body(Sphere(0.1), mass=1.0, position=(1, 0, 0))
    with pytest.raises(ValueError, match="axis must be a non-zero direction"):
        Hinge(a, b, anchor=(0.5, 0, 0), axis=(0, 0, 0))
    with pytest.raises(ValueError, match="same body"):
        Ball(a, a, anchor=(0, 0, 0))
    with pytest.raises(ValueError, match="anchor must be finite"):
        Ball(a, b, anchor=(0, float("nan"), 0))
    with pytest.raises(ValueError, match="must be perpendicular"):
        Universal(a, b, axis_a=(1, 0, 0), axis_b=(1, 1, 0))
    with pytest.raises(ValueError, match="positive length"):
        world.add_joint(Distance(a, b, anchor_a=(0.3, 0, 0), anchor_b=(0.3, 0, 0)))
    other = World().add_body(Sphere(0.1), mass=1.0)
    with pytest.raises(ValueError, match="not a body of this world"):
        world.add_joint(Fixed(a, other))
    with pytest.raises(ValueError, match="body_b must be a body"):
        Ball(a, None, anchor=(0, 0, 0))
    # a joint that holds no dynamic body moves nothing (its rows were empty in the direct
    # solve's matrix, which then could not be factorised)
    wall = world.add_body(Box((0.1, 0.1, 0.1)), static=True, position=(0, 2, 0))
    ramp = world.add_body(Box((0.1, 0.1, 0.1)), static=True, position=(0, 3, 0),
                          linear_velocity=(0, 0, 1))
    for joint in (Hinge(None, wall, anchor=(0, 2, 0), axis=(0, 0, 1)),
                  Slider(wall, ramp, axis=(0, 1, 0))):
        with pytest.raises(ValueError, match="joins no dynamic body"):
            world.add_joint(joint)
    assert len(world.joints) == 0


def test_bad_world_settings_name_the_parameter():
    with pytest.raises(ValueError, match="dt must be positive"):
        World(dt=0)
    with pytest.raises(ValueError, match="integrator must be one of"):
        World(integrator="euler")
    with pytest.raises(ValueError, match="stabilization_time"):
        World(dt=0.01, stabilization_time=0.001)
    with pytest.raises(ValueError, match="gravity must be finite"):
        World(gravity=(0, 0, float("nan")))
    for bad in (0, 2.5, None, "two"):
        with pytest.raises(ValueError, match="substeps must be a positive integer"):
            World(substeps=bad)


def test_a_cfm_that_would_let_the_constraints_give_way_is_refused():
    """cfm had no upper bound: at 100 a box resting on the ground sank to z = -0.63 m in a
    second, at 1e300 a hinge came apart. It is absolute, beside a row's stiffness 1 / m, so
    its bound is 0.1 over the heaviest dynamic body's mass (1 kg at least), and a body too
    heavy for the world's cfm is refused likewise; 0.1 with a 1 kg box still rests it."""
    for value in (100.0, 1e300):
        with pytest.raises(ValueError, match=r"cfm must be at most 0.1 here \(0.1 over the "
                                             r"heaviest dynamic body's mass, taken as at least "
                                             r"1 kg: 1 kg\), got (100|1e\+300): beyond it the "
                                             "contacts and joints give way"):
            World(cfm=value)
    world = World(gravity=(0, 0, -9.81), cfm=0.1)
    world.add_body(Plane())
    box = world.add_body(Box((0.1,) * 3), mass=1.0, position=(0, 0, 0.1))
    with pytest.raises(ValueError, match=r"mass 100 kg is too heavy for this world's cfm 0.1: "
                                         r"contacts and joints hold a body while mass times "
                                         r"cfm is at most 0.1 \(here 1 kg\)"):
        box.mass = 100.0
    with pytest.raises(ValueError, match="mass 2 kg is too heavy"):
        world.add_body(Box((0.1,) * 3), mass=2.0, position=(1, 0, 0.1))
    assert (box.mass, len(world.bodies)) == (1.0, 2)
    world.step(240)
    assert box.position[2] == pytest.approx(0.1, abs=5e-4)
    world.cfm = 1e-9
    box.mass = 100.0
    with pytest.raises(ValueError, match=r"cfm must be at most 0.001 here .* 100 kg\), got 0.01"):
        world.cfm = 0.01
    assert world.cfm == 1e-9


@pytest.mark.parametrize("name, value, message", [
    ("dt", -1.0, "dt must be positive"), ("dt", float("nan"), "dt must be finite"),
    ("dt", "0.01", "dt must be a number"), ("dt", 1e-300, "dt must be at least 1e-09 s"),
    ("substeps", 0, "substeps must be a positive integer"),
    ("cfm", -1.0, "cfm must be zero or positive"),
    ("contact_margin", float("nan"), "contact_margin must be finite"),
    ("contact_solver", "fast", "contact_solver must be one of 'auto', 'iterative', 'direct'"),
    ("integrator", "euler", "integrator must be one of"),
    ("gyroscopic", "bad", "gyroscopic must be one of"),
    ("post_stabilization", "no", "post_stabilization must be True or False"),
    ("position_tolerance", float("nan"), "position_tolerance must be finite"),
    ("shake_iterations", 0, "shake_iterations must be a positive integer"),
    ("max_split_depth", -1, "max_split_depth must be a whole number >= 0"),
    ("baumgarte", (float("nan"), 1.0), "baumgarte must be finite"),
])
def test_a_world_setting_is_checked_whenever_it_is_set(name, value, message):
    """Settings changed after the World is made are checked as the constructor checks
    them, and a refused one leaves the old value. (world.dt = -1 ran time backwards, and
    integrator = 'euler' failed at the next step with a KeyError.)"""
    world, a, b = hanging_pair()
    kept = getattr(world, name)
    with pytest.raises(ValueError, match=message):
        setattr(world, name, value)
    assert getattr(world, name) == kept
    world.step(2)


def test_a_new_dt_keeps_the_time_reached_and_moves_the_default_stabilisation():
    world, a, b = hanging_pair()
    world.step(240)
    world.dt = 1 / 1000
    assert world.time == pytest.approx(1.0)
    assert world.baumgarte == pytest.approx((1 / 0.004**2, 2 / 0.004))
    world.step(10)
    assert world.time == pytest.approx(1.01)
    assert world.constraint_error() < 1e-8
    # a stabilisation time given at creation must stay above two sub-steps
    fixed = World(dt=0.001, stabilization_time=0.01)
    with pytest.raises(ValueError, match="more than half the stabilisation time"):
        fixed.dt = 0.006


def test_gravity_is_set_whole_and_a_shape_stays_its_bodys():
    world, a, b = hanging_pair()
    with pytest.raises(ValueError, match="read-only"):
        world.gravity[2] = float("nan")
    with pytest.raises(ValueError, match="WRITEABLE"):
        world.gravity.flags.writeable = True
    world.gravity = (0, 0, -1.62)
    assert world.gravity == pytest.approx((0, 0, -1.62))
    with pytest.raises(ValueError, match="shape is fixed"):
        b.shape = Sphere(0.4)
    assert b.shape.radius == 0.1


def test_the_state_arrays_handed_out_cannot_be_made_writeable():
    """world.positions and friends view the arrays the step reads and writes; numpy lets a
    plain read-only view be made writeable again, and a write through it moved a body that the
    world's other records (its sleep, its contacts' warm starts) never heard of."""
    world, a, b = hanging_pair()
    for name in ("positions", "orientations", "linear_velocities", "angular_velocities",
                 "masses", "asleep"):
        view = getattr(world, name)
        with pytest.raises(ValueError, match="WRITEABLE"):
            view.flags.writeable = True
    world.step(3)
    assert np.array_equal(world.positions[1], b.position)      # still a live view


def test_masses_follow_each_body_in_bodies_order():
    """world.masses is every body's mass in one array (static ones infinite), as Body.mass
    reads it, and follows a mass set on a body and a body removed before it."""
    world = World()
    world.add_body(Box((1, 1, 0.1)), static=True)
    ball = world.add_body(Sphere(0.1), density=1000.0, position=(0, 0, 1))
    box = world.add_body(Box((0.1, 0.2, 0.3)), mass=2.5, position=(1, 0, 1))
    assert np.isinf(world.masses[0])
    assert world.masses[1] == pytest.approx(1000.0 * 4 / 3 * np.pi * 0.1 ** 3, rel=1e-12)
    assert world.masses[2] == 2.5
    box.mass = 4.0
    assert world.masses[2] == 4.0
    world.remove_body(ball)
    assert np.array_equal(world.masses, [np.inf, 4.0])


def test_a_pendulum_swings_on_under_a_new_gravity():
    """The energy a conservative system holds through its fallback steps is measured again
    when gravity changes. Before, it was held at the old gravity's level: a pendulum whose
    gravity went from 9.81 to 20 m/s^2 was damped to 0.28 m/s within 2 s (480 restores)."""
    world = World(dt=1 / 240)
    bob = world.add_body(Sphere(radius=0.05), mass=1.0, position=(1.0, 0, 2.0))
    world.add_joint(Hinge(None, bob, anchor=(0, 0, 2.0), axis=(0, 1, 0)))
    world.step(240)
    world.gravity = (0, 0, -20.0)
    e_new = world.energy()
    speeds = []
    for _ in range(8):
        world.step(60)
        speeds.append(np.linalg.norm(bob.linear_velocity))
    assert world.energy() == pytest.approx(e_new, abs=0.02 * abs(e_new))
    # from level at 2 m: the bottom of the swing at sqrt(2 g l) = 6.3 m/s
    assert max(speeds) > 5.0 and world.stats["energy_restores"] < 20


@pytest.mark.parametrize("place", [(0.5, 0, 1.3), (0.5, 0, 2.0), (5.0, 5.0, 5.0)])
def test_a_body_placed_off_its_joint_is_put_back_on_it_at_rest(place):
    """A resting hinged rod moved by hand 0.3 m, 1 m or 7.8 m off its hinge: the next step
    puts it back on the joint (the nearest pose it allows) and it starts from rest there,
    then swings with the energy of that pose. Before, the step's position correction became
    velocity: it swung away at 1.1-8 m/s with 0.76-44 J it never had (only the energy level
    held it that low; unheld, 5.6-8e4 m/s)."""
    world = World(dt=1 / 240)
    rod = world.add_body(Box((0.5, 0.02, 0.02)), mass=1.0, position=(0.5, 0, 1.0))
    hinge = world.add_joint(Hinge(None, rod, anchor=(0, 0, 1.0), axis=(0, 1, 0)))
    rod.position = place
    world.step()
    assert world.constraint_error() < 1e-8
    assert world.kinetic_energy() < 0.5 * 1.0 * (9.81 / 240) ** 2 * 1.01   # one step's fall
    e1 = world.energy()
    world.step(240)
    assert world.energy() == pytest.approx(e1, abs=1e-3)
    assert hinge.angle != 0.0 and world.stats["splits"] == 0


def capsule_chain(links=10):
    world, prev, bodies = World(), None, []
    for i in range(links):
        body = world.add_body(Capsule(0.03, 0.1), mass=0.5, position=(0, 0, -0.1 - 0.2 * i))
        world.add_joint(Ball(prev, body, anchor=(0, 0, -0.2 * i)))
        prev = body
        bodies.append(body)
    return world, bodies


@pytest.mark.parametrize("link, offset", [(5, 1.0), (9, 10.0), (0, 100.0)])
def test_a_chain_link_placed_far_off_is_put_back_without_flinging_the_chain(link, offset):
    """A hanging 10-link chain with one link moved 1 to 100 m sideways: the placement's
    Newton steps are halved until they lower the joints' error, and the chain starts from
    rest. Full steps made the error worse from a metre off, and the step then flung the chain
    to 5.9e16 m (middle link, 1 m) or 400 m/s (end link, 2 m)."""
    world, bodies = capsule_chain()
    bodies[link].position = bodies[link].position + (offset, 0, 0)
    world.step()
    assert world.constraint_error() < 1e-8
    assert max(np.linalg.norm(b.linear_velocity) for b in bodies) < 0.1


def test_a_placement_the_joints_cannot_meet_is_refused_leaving_the_world_as_it_was():
    world, bodies = capsule_chain()
    bodies[9].position = bodies[9].position + (100.0, 0, 0)
    before = world.get_state()
    with pytest.raises(StepError, match="place them again, the mechanism whole"):
        world.step()
    assert_same_state(world.get_state(), before)


def turned_about(body, anchor, axis, angle):
    """Place ``body`` turned by ``angle`` (rad) about the world line through ``anchor`` along
    the unit ``axis``: on a joint there, its coordinate moves by the angle."""
    axis, anchor = np.asarray(axis, float), np.asarray(anchor, float)
    q = np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])
    R = quat_to_matrix(q[None])[0]
    body.position = anchor + R @ (body.position - anchor)
    body.orientation = quat_multiply(q[None], body.orientation[None])[0]


def limited_rod(angle, limits=(-0.5, 0.5)):
    """A 1 kg, 1 m rod on a level hinge (about y at 1 m up), placed at ``angle`` on it."""
    world = World(dt=1 / 240)
    rod = world.add_body(Box((0.5, 0.02, 0.02)), mass=1.0, position=(0.5, 0, 1.0))
    hinge = world.add_joint(Hinge(None, rod, anchor=(0, 0, 1.0), axis=(0, 1, 0), limits=limits))
    turned_about(rod, (0, 0, 1.0), (0, 1, 0), angle)
    return world, rod, hinge


def test_a_rod_placed_past_its_hinge_limit_is_brought_to_the_limit_at_rest():
    """A rod placed on its hinge at 1.2 rad, 0.7 past its limit (gravity pressing it further):
    the next step starts it at the limit, at rest, with the energy of the rod placed there.
    Before, the limit alone pushed it back within the step: it turned at 42 rad/s with 291 J,
    hit its other limit and rested after 0.43 s."""
    world, rod, hinge = limited_rod(1.2)
    world.step()
    assert hinge.angle == pytest.approx(0.5, abs=1e-3) and abs(hinge.rate) < 1e-3
    assert world.constraint_error() < 1e-8
    at_limit, _, _ = limited_rod(0.5)
    at_limit.step()
    # (the same within what the placement's tolerance of 1e-8 rad at the bound makes)
    assert world.energy() == pytest.approx(at_limit.energy(), abs=1e-7)
    assert world.kinetic_energy() < 1e-7          # (pressed into the limit for a step)
    world.step(120)
    assert hinge.angle == pytest.approx(0.5, abs=1e-3) and abs(hinge.rate) < 1e-3


def limited_joint(kind):
    """A 1 kg body on a limited joint to the world, in zero gravity, placed past its limit:
    (world, the coordinate placed (a function), its bound)."""
    world = World(dt=1 / 240, gravity=(0, 0, 0))
    if kind == "slider":
        block = world.add_body(Box((0.05, 0.05, 0.05)), mass=1.0, position=(0, 0, 1.0))
        joint = world.add_joint(Slider(None, block, anchor=(0, 0, 1.0), axis=(1, 0, 0),
                                       limits=(-0.2, 0.2)))
        block.position = (0.5, 0, 1.0)
        return world, lambda: joint.position, 0.2
    bob = world.add_body(Capsule(0.03, 0.2), mass=1.0, position=(0, 0, 0.75))
    joint = world.add_joint(Ball(None, bob, anchor=(0, 0, 1.0), swing_limit=0.5,
                                 twist_limits=(-0.3, 0.3)))
    if kind == "swing":
        turned_about(bob, (0, 0, 1.0), (1, 0, 0), 1.0)
        return world, lambda: joint.swing, 0.5
    if kind == "twist":             # (the twist axis points from the anchor to the bob: -z)
        turned_about(bob, (0, 0, 1.0), (0, 0, -1), -0.8)
        return world, lambda: joint.twist, -0.3
    turned_about(bob, (0, 0, 1.0), (0, 0, -1), 0.8)       # both
    turned_about(bob, (0, 0, 1.0), (0, 1, 0), 0.9)
    return world, lambda: (joint.swing, joint.twist), (0.5, 0.3)


@pytest.mark.parametrize("kind", ["slider", "swing", "twist", "swing and twist"])
def test_a_body_placed_past_a_slider_or_ball_limit_is_brought_to_it_at_rest(kind):
    """A slider placed 0.3 m past its limit, a ball joint 0.5 rad beyond its swing cone, 0.5
    rad beyond its twist limit, and beyond both: after one step each is at its bound, at
    rest. Before, the limits pushed them back within the step, making 161 J (the slider, at
    18 m/s, to its other limit), 35 J (the swing, still swinging across the cone after 2 s),
    0.2 J (the twist, spun at 30 rad/s to its other limit) and 23 J (both)."""
    world, coordinate, bound = limited_joint(kind)
    world.step()
    np.testing.assert_allclose(coordinate(), bound, atol=1e-6)
    assert world.kinetic_energy() < 1e-12 and world.constraint_error() < 1e-8
    world.step(60)
    np.testing.assert_allclose(coordinate(), bound, atol=1e-6)
    assert world.kinetic_energy() < 1e-12


def limb_chain(limits):
    """Four rods in a level row on hinges about y (the first to the world), each joint with
    ``limits`` (None: none): a limb."""
    world, prev, rods, hinges = World(dt=1 / 240), None, [], []
    for i in range(4):
        rod = world.add_body(Box((0.25, 0.02, 0.02)), mass=1.0, position=(0.25 + 0.5 * i, 0, 1.0))
        hinges.append(world.add_joint(Hinge(prev, rod, anchor=(0.5 * i, 0, 1.0), axis=(0, 1, 0),
                                            limits=limits)))
        prev = rod
        rods.append(rod)
    return world, rods, hinges


def test_a_chain_whose_links_are_placed_past_their_limits_starts_at_them_at_rest():
    """A chain of four hinged rods (limits +-0.3) with the second and the fourth joint turned
    0.9 rad (the rods beyond them turned with them): after one step every joint is within its
    limits, the two placed ones at them, and the chain is at rest. Before, the limits pushed
    it back at up to 32 rad/s with 60 J, and it took 1.3 s to settle."""
    world, rods, hinges = limb_chain((-0.3, 0.3))
    for k in (1, 3):
        for rod in rods[k:]:
            turned_about(rod, hinges[k].anchor, (0, 1, 0), 0.9)
    world.step()
    # (within what a step of gravity presses into the limits: 2e-5 rad)
    angles = np.array([h.angle for h in hinges])
    assert np.all(np.abs(angles) <= 0.3 + 1e-4)
    assert angles[[1, 3]] == pytest.approx(0.3, abs=1e-4)
    assert world.constraint_error() < 1e-8
    assert world.kinetic_energy() < 1e-3     # (hanging on its limits, after one step's fall)
    world.step(120)
    assert np.all(np.abs([h.angle for h in hinges]) <= 0.3 + 1e-3)
    assert world.kinetic_energy() < 1e-3


def test_limbs_placed_at_random_orientations_start_within_their_limits_at_rest():
    """Ball joints with swing cones and twist limits and limited hinges, every body given a
    random orientation in zero gravity: the placement meets joints and limits together, and
    nothing moves. Before, the limits pushed the limbs back with 15.6 J."""
    rng = np.random.default_rng(7)
    world = World(dt=1 / 240, gravity=(0, 0, 0))
    prev, joints = None, []
    for i in range(6):
        body = world.add_body(Capsule(0.04, 0.1), mass=1.0, position=(0, 0, -0.1 - 0.3 * i))
        anchor = (0, 0, -0.3 * i)
        joints.append(world.add_joint(
            Ball(prev, body, anchor=anchor, swing_limit=0.6, twist_limits=(-0.4, 0.4))
            if i % 2 == 0 else Hinge(prev, body, anchor=anchor, axis=(0, 1, 0), limits=(-0.1, 1.5))))
        prev = body
    for body in world.bodies:
        q = rng.normal(size=4)
        body.orientation = q / np.linalg.norm(q)
    world.step()
    for j in joints:
        if isinstance(j, Ball):
            assert j.swing <= 0.6 + 1e-6 and -0.4 - 1e-6 <= j.twist <= 0.4 + 1e-6
        else:
            assert -0.1 - 1e-6 <= j.angle <= 1.5 + 1e-6
    assert world.kinetic_energy() < 1e-12 and world.constraint_error() < 1e-8


def test_a_limit_set_inside_the_pose_of_a_mechanism_not_placed_is_no_placement():
    """Two rods on hinges, one given limits its pose is past (``limits = ...``) while the
    other is placed past its own: the placement brings the placed rod to its limit and
    leaves the other to its limit rows, as a world where nothing was placed does: they push
    it a quarter of the way back in the step, and it keeps limits.KEPT_LIMIT_PUSH (1 rad/s)
    of that push as its rate."""
    from physics.limits import KEPT_LIMIT_PUSH
    def two_rods():
        world = World(dt=1 / 240)
        rods, hinges = [], []
        for y in (0.0, 1.0):
            rod = world.add_body(Box((0.5, 0.02, 0.02)), mass=1.0, position=(0.5, y, 1.0))
            hinges.append(world.add_joint(Hinge(None, rod, anchor=(0, y, 1.0), axis=(0, 1, 0),
                                                limits=(-0.5, 0.5))))
            rods.append(rod)
            turned_about(rod, (0, y, 1.0), (0, 1, 0), 0.5)     # resting on their limits
        world.step(60)
        hinges[1].limits = (-0.2, 0.2)
        return world, rods, hinges
    placed, rods, hinges = two_rods()
    turned_about(rods[0], (0, 0, 1.0), (0, 1, 0), 0.7)
    alone, _, hinges_alone = two_rods()
    placed.step()
    alone.step()
    assert hinges[0].angle == pytest.approx(0.5, abs=1e-3) and abs(hinges[0].rate) < 1e-3
    assert hinges[1].angle == pytest.approx(hinges_alone[1].angle, rel=1e-9)
    assert hinges[1].rate == pytest.approx(hinges_alone[1].rate, rel=1e-9)
    assert hinges[1].angle < 0.45
    assert hinges[1].rate == pytest.approx(-KEPT_LIMIT_PUSH, rel=0.05)


def _relative_turn(a, b):
    """The angle (rad) of body b's orientation relative to body a's (a None: the world)."""
    Ra = np.eye(3) if a is None else a.rotation
    return float(np.arccos(np.clip((np.trace(Ra.T @ b.rotation) - 1) / 2, -1.0, 1.0)))


@pytest.mark.parametrize("axis, angle", [((1, 0, 0), 2.6), ((1, 0, 0), np.pi),
                                         ((1, 0, 1), 2.2), ((0, 0, 1), 3.0)])
def test_a_body_placed_turned_far_off_its_hinge_comes_back_with_its_axis_the_right_way(axis, angle):
    """A rod on a hinge about y placed turned up to half a turn about an axis across the
    hinge's: the placement brings the rod's hinge axis back along the world's y, not against
    it. The hinge's rows (the rod's axis across two world directions) are met with the axis
    upside down too, and from beyond a quarter turn the placement's Newton steps went there
    (at 2.6 rad about x the rod's axis ended along -y)."""
    world = World(dt=1 / 240, gravity=(0, 0, 0))
    rod = world.add_body(Box((0.05, 0.05, 0.5)), mass=1.0, position=(0, 0, -0.5))
    world.add_joint(Hinge(None, rod, anchor=(0, 0, 0), axis=(0, 1, 0)))
    turned_about(rod, (0, 0, 0), np.asarray(axis) / np.linalg.norm(axis), angle)
    world.step()
    assert rod.rotation @ [0, 1, 0] == pytest.approx([0, 1, 0], abs=1e-6)
    assert world.constraint_error() < 1e-6 and world.kinetic_energy() < 1e-12


@pytest.mark.parametrize("axis, angle", [((1, 1, 1), 2 * np.pi / 3), ((1, 0, 0), np.pi),
                                         ((0, 1, 1), 2.0)])
def test_a_welded_or_locked_body_placed_turned_far_off_comes_back_to_its_pose(axis, angle):
    """A box welded to another (and a capsule whose orientation is locked to the world)
    placed turned a third of a turn about its diagonal, half a turn about x, or 2 rad about
    another axis, comes back to the orientation it was welded (locked) in. The weld's
    rows (each axis of one across another of the other) are met in those poses too: the
    box turned a third of a turn about its diagonal stayed so, with no joint error."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    world = World(dt=1 / 240, gravity=(0, 0, 0))
    a = world.add_body(Box((0.1, 0.2, 0.3)), mass=1.0)
    b = world.add_body(Box((0.1, 0.2, 0.3)), mass=1.0, position=(0.5, 0, 0))
    world.add_joint(Fixed(a, b, anchor=(0.25, 0, 0)))
    capsule = world.add_body(Capsule(0.1, 0.3), mass=2.0, position=(0, 2, 0))
    world.add_joint(RotationLock(None, capsule))
    turned_about(b, b.position, axis, angle)
    turned_about(capsule, capsule.position, axis, angle)
    world.step()
    assert _relative_turn(a, b) < 1e-6 and _relative_turn(None, capsule) < 1e-6
    assert world.constraint_error() < 1e-6


def test_a_yaw_locked_capsule_placed_nearly_upside_down_comes_back_upright_and_keeps_its_yaw():
    """RotationLock(None, capsule, axis=z) holds the capsule's axis up and leaves its yaw
    free: placed turned 2.9 rad about x after a yaw of 1 rad, it comes back upright with
    its yaw (it ended on its head). A body placed turned about the axes its joints leave
    free is left as placed: no turning back is needed there."""
    world = World(dt=1 / 240)
    world.add_body(Plane())
    capsule = world.add_body(Capsule(0.3, 0.6), mass=80.0, position=(0, 0, 0.9))
    world.add_joint(RotationLock(None, capsule, axis=(0, 0, 1)))
    turned_about(capsule, capsule.position, (0, 0, 1), 1.0)
    world.step()
    yawed = capsule.rotation.copy()
    assert yawed @ [1, 0, 0] == pytest.approx([np.cos(1.0), np.sin(1.0), 0], abs=1e-9)
    turned_about(capsule, capsule.position, (1, 0, 0), 2.9)
    world.step()
    assert capsule.rotation @ [0, 0, 1] == pytest.approx([0, 0, 1], abs=1e-6)
    assert capsule.rotation == pytest.approx(yawed, abs=1e-6)


@pytest.mark.parametrize("limits", [(-1.0, 1.0), (-0.3, 0.3)])
def test_a_placement_within_limits_is_the_placement_without_them(limits):
    """A chain's link moved 0.4 m off its joints, placed where its limits allow: the step is
    bit for bit the one without limits ((-1, 1): none are near), and with the chain resting
    on its limits ((-0.3, 0.3): every joint pressed at its upper limit, with whatever the
    step's limit rows leave within their slop), placing a body where it lies changes
    nothing. (Guards: both held before limits were part of the placement.)"""
    if limits == (-1.0, 1.0):
        worlds = [limb_chain(limits)[:2], limb_chain(None)[:2]]
        for _, rods in worlds:
            rods[2].position = rods[2].position + (0, 0, 0.4)
    else:
        world, rods, _ = limb_chain(limits)
        world.step(240)
        state = world.get_state()
        placed, rods_placed, _ = limb_chain(limits)
        placed.set_state(state)
        rods_placed[2].position = rods_placed[2].position
        worlds = [(world, rods), (placed, rods_placed)]
    for world, _ in worlds:
        world.step(30)
    assert_same_state(worlds[0][0].get_state(), worlds[1][0].get_state())


def test_joint_forces_and_contacts_describe_the_last_step_until_the_next():
    """Reading a joint's force after an edit elsewhere gave 0 N (the report was dropped with
    the step's caches), and after add_body the contacts were gone too."""
    world = World()
    world.add_body(Plane())
    bob = world.add_body(Box((0.05, 0.05, 0.05)), mass=2.0, position=(0, 0, 1.0))
    rope = world.add_joint(Ball(None, bob, anchor=(0, 0, 1.5)))
    other = world.add_body(Sphere(0.1), mass=1.0, position=(3, 0, 0.1))
    world.step(60)
    weight = pytest.approx(2 * 9.81, rel=1e-6)
    assert rope.force[2] == weight and len(world.contacts) == 1
    snapshot = world.get_state()
    other.linear_velocity = (0.1, 0, 0)
    assert rope.force[2] == weight
    world.step(5)
    world.set_state(snapshot)                   # the snapshot's forces
    assert rope.force[2] == weight and len(world.contacts) == 1
    world.add_body(Sphere(0.1), mass=1.0, position=(-3, 0, 3))
    assert rope.force[2] == weight and len(world.contacts) == 1


def test_a_body_added_far_away_leaves_a_settled_stack_as_it_was():
    """Adding a body keeps the contacts' warm start (every body keeps its row). Before, a
    static marker 30 m away shook a settled stack of 12 boxes at 5e-3 m/s."""
    def settled_stack():
        world = World()
        world.add_body(Plane())
        boxes = [world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0.2 + 0.4 * i))
                 for i in range(12)]
        world.step(240)
        return world, boxes
    plain, _ = settled_stack()
    plain.step(24)
    world, boxes = settled_stack()
    world.add_body(Box((0.05, 0.05, 0.05)), static=True, position=(30, 30, 5))
    world.add_body(Sphere(0.1), mass=1.0, position=(-30, 0, 5))
    world.step(24)
    assert np.abs(world.linear_velocities[:13]).max() < 1e-6
    assert np.abs(world.positions[:13] - plain.positions).max() < 1e-8


def test_a_bodys_mass_and_inertia_may_change_while_it_runs():
    """pymunk's body.mass, PyBullet's changeDynamics: a new mass scales the inertia with it
    (the same shape, another density), wakes the body, and the contacts carry the new weight
    from the next steps on. Static bodies stay static."""
    world = World(sleeping=True)
    ground = world.add_body(Plane())
    low = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.1))
    top = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.3))
    world.step(240)
    assert top.asleep
    top.mass = 5.0
    assert not top.asleep and not low.asleep
    assert top.inertia == pytest.approx(np.eye(3) * 5.0 * 0.08 / 12)
    world.step(120)
    c = world.contacts
    assert c.normal_force[c.body_a == ground.index].sum() == pytest.approx(6 * 9.81, rel=1e-6)
    assert top.position[2] == pytest.approx(0.3, abs=3e-4)
    free = world.add_body(Sphere(0.1), mass=1.0, position=(5, 0, 5))
    free.inertia = (0.01, 0.02, 0.025)
    assert free.inertia.diagonal() == pytest.approx((0.01, 0.02, 0.025))
    free.apply_torque((0, 0, 0.05))                 # 2 rad/s^2 about z for one step
    world.step()
    assert free.angular_velocity[2] == pytest.approx(2.0 * world.dt, rel=1e-9)
    for name, value, message in (("mass", 0.0, "mass must be positive"),
                                 ("inertia", (1, 1, 5), "inertia is no rigid body's"),
                                 ("static", True, "static is fixed when it is made")):
        with pytest.raises(ValueError, match=message):
            setattr(top, name, value)
    with pytest.raises(ValueError, match="is static"):
        ground.mass = 3.0


def test_a_hinge_angle_read_after_a_step_is_the_one_computed_from_the_state():
    """After a step a hinge's angle is the one the step carried to its end state (read in
    1.5 us, not computed again in 80 us), the same bits as computed from the bodies; moved by
    the user, it is computed from the new state."""
    world = World()
    rod = world.add_body(Box((0.05, 0.05, 0.5)), mass=1.0, position=(0.5, 0, 0),
                         orientation=(np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0))
    hinge = world.add_joint(Hinge(None, rod, anchor=(0, 0, 0), axis=(0, 1, 0)))
    world.step(60)
    read = hinge.angle
    world._angles_current = False
    assert hinge.angle == read and read > 0.3            # (swung down from level)
    rod.orientation = (np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0)
    rod.position = (0.5, 0, 0)
    assert hinge.angle == pytest.approx(0.0, abs=1e-12)


def test_forces_applied_in_a_batch_act_as_one_by_one():
    def pair():
        world = World()
        bodies = [world.add_body(Sphere(0.1), mass=m, position=(i, 0, 0))
                  for i, m in enumerate((1.0, 2.0, 3.0))]
        return world, bodies
    one, bodies = pair()
    forces = np.array([[1.0, 0, 0], [0, 2.0, 0], [0, 0, 3.0]])
    for body, f in zip(bodies[::2], forces[::2]):
        body.apply_force(f)
    one.step()
    batch, _ = pair()
    batch.apply_forces(forces[::2], [0, 2])
    batch.step()
    assert np.array_equal(batch.linear_velocities, one.linear_velocities)
    with pytest.raises(ValueError, match=r"forces must be \(2, 3\) finite"):
        batch.apply_forces(np.zeros((3, 3)), [0, 1])
    with pytest.raises(ValueError, match=r"^forces\[1, 2\] is nan: forces must be \(2, 3\) finite"):
        batch.apply_forces([[0, 0, 0], [0, 0, np.nan]], [0, 1])
    with pytest.raises(ValueError, match="bodies must be indices into world.bodies"):
        batch.apply_forces(np.zeros((1, 3)), [3])


def test_a_removed_joint_says_so_and_may_be_added_again():
    world = World()
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0)
    hinge = world.add_joint(Hinge(None, box, anchor=(0, 0, 0.1), axis=(1, 0, 0)))
    world.remove_joint(hinge)
    with pytest.raises(ValueError, match="has been removed from its world"):
        hinge.force
    with pytest.raises(ValueError, match="is not in a world; add it"):
        Hinge(None, box, anchor=(0, 0, 0.1), axis=(1, 0, 0)).force
    world.add_joint(hinge)
    world.step()
    assert hinge.force[2] == pytest.approx(9.81)


def test_a_joint_in_a_coupling_is_removed_after_the_coupling():
    world = World()
    a = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0)
    b = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(1, 0, 0))
    h1 = world.add_joint(Hinge(None, a, anchor=(0, 0, 0), axis=(0, 0, 1)))
    h2 = world.add_joint(Hinge(None, b, anchor=(1, 0, 0), axis=(0, 0, 1)))
    gear = world.add_joint(Gear(h1, h2, ratio=2.0))
    with pytest.raises(ValueError, match="is coupled by .*Gear.*remove them first"):
        world.remove_joint(h1)
    world.step()                         # the gear still works
    world.remove_joint(gear)
    world.remove_joint(h1)
    world.step()
    assert len(world.joints) == 1


def test_bad_numbers_name_their_parameter_in_words_a_user_wrote():
    """Single numbers are named as numbers (not "must be 1 numbers, got ['fast']"), and an
    anchor by the name it was given."""
    world, a, b = hanging_pair()
    hinge = world.joints[0]
    for make, message in (
            (lambda: hinge.set_motor("fast", 1.0), "velocity must be a number, got 'fast'"),
            (lambda: hinge.set_servo(float("nan"), 1.0), "target must be finite"),
            (lambda: Plane(offset="a"), "offset must be a number, got 'a'"),
            (lambda: Distance(a, b, anchor_b=(0, 0)), "anchor_b must have 3 components"),
            (lambda: world.step(float("nan")), "n must be a whole number >= 0, got nan"),
            (lambda: world.step(None), "n must be a whole number >= 0, got None"),
            (lambda: Ball(None, b, anchor=(0, 0, -0.6), twist_axis=(0, 0, 1), swing_limit=4.0),
             "swing_limit must be below pi"),
            (lambda: world.add_body(Sphere(0.1), mass=True), "mass must be a number, got True")):
        with pytest.raises(ValueError, match=message):
            make()
    world.step(2.0)


def test_a_misspelt_setting_is_refused_with_the_names_it_may_mean():
    """world.gravty = ..., hinge.limit = ... were kept as new attributes and never acted (the
    rod swung on to 3.1 rad with hinge.limits None): refused, naming what was meant. Real
    settings and a joint's name still set."""
    world, a, b = hanging_pair()
    hinge = world.joints[0]
    for owner, name, meant in ((world, "gravty", "gravity"), (world, "time_step", "time"),
                               (hinge, "limit", "limits"), (hinge, "frction", "friction")):
        with pytest.raises(AttributeError, match=f"has no attribute '{name}' "
                                                 f"\\(did you mean {meant}.*never act"):
            setattr(owner, name, 1.0)
        assert name not in vars(owner)
    world.gravity, world.dt, hinge.limits, hinge.name = (0, 0, -1.0), 0.01, (-0.1, 0.1), "h"
    world.step(3)
    assert hinge.name == "h" and world.dt == 0.01


@pytest.mark.parametrize("error", [ZeroDivisionError, OverflowError])
def test_a_solver_whose_float_arithmetic_fails_raises_a_step_error(monkeypatch, error):
    """Python's own float arithmetic in a solver raises where numpy's gives an infinity: a
    world blown up by a 2 km distance joint ended its step with a bare ZeroDivisionError
    from the contact solve. It is a StepError, and the world is unchanged."""
    import physics.symplectic

    world = World(dt=1 / 60)
    world.add_body(Plane())
    world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0.19))
    world.step(5)
    before = world.get_state()

    def failing(*args, **kwargs):
        raise error("float division by zero")

    monkeypatch.setattr(physics.symplectic, "bounded_multipliers", failing)
    with pytest.raises(StepError, match="failed: float division by zero; the world is unchanged"):
        world.step()
    assert_same_snapshot(world.get_state(), before)


def test_a_step_that_would_overflow_raises_and_leaves_the_world_unchanged():
    world, a, b = hanging_pair()
    world.step(5)
    b.apply_force((1e308, 1e308, 0))
    before, stats = world.get_state(), dict(world.stats)
    with pytest.raises(StepError, match="unchanged.*stay queued: world.clear_forces"):
        world.step()
    assert_same_snapshot(world.get_state(), before)     # every part, the queued force too
    assert world.stats == stats         # (the failed attempt's splits were counted)
    with pytest.raises(StepError):            # (the force is still there)
        world.step()
    world.clear_forces()
    world.step()
    assert np.isfinite(world.positions).all()


@pytest.mark.parametrize("poke", ["place", "anchor"])
def test_a_body_or_anchor_put_at_1e300_is_refused_cleanly_without_numpy_warnings(poke):
    """A body placed at 1e300 m, a hinge anchored 1e300 m away: numpy's RuntimeWarnings
    (overflow in matmul, invalid value in sin and cos, in multiply) came before the clean
    StepError, from the placement and the model's anchors, which ran outside the step's
    own errstate (and get_state, which compiles the model too, warned for the anchor). The
    placed body's step raises a StepError and nothing else, and the world is as it was.
    The anchor is refused when the joint is added (a ValueError naming it): its rows'
    1/m + |r|^2 / I overflowed, and the step that followed raised on one machine and, with
    other BLAS kernels, on another held nothing with finite numbers (its force read 0)."""
    import warnings
    world = World()
    rod = world.add_body(Capsule(0.05, 0.4), mass=1.0, position=(0, 0, 0.6))
    tip = world.add_body(Box((0.1,) * 3), mass=1.0, position=(0, 0, 0.1))
    world.add_joint(Ball(rod, tip, anchor=(0, 0, 0.2)))
    world.add_joint(Hinge(None, rod, anchor=(0, 0, 1.0), axis=(0, 1, 0)))
    world.step(5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        if poke == "place":
            tip.position = (1e300, 0, 0)
            before = world.get_state()
            with pytest.raises(StepError, match="bodies placed off their joints"):
                world.step()
        else:
            before = world.get_state()
            far = Hinge(None, tip, anchor=(1e300, 0, 1), axis=(0, 1, 0))
            with pytest.raises(ValueError, match=r"^anchor lies 1e\+300 m from .* overflow"):
                world.add_joint(far)
            assert len(world.joints) == 2
        assert_same_snapshot(world.get_state(), before)


def test_an_anchor_as_far_as_its_rows_stay_finite_is_taken_and_holds():
    """The farthest anchor taken: 1e153 m from a 1 kg, 0.2 m box (1/m + |r|^2 / I =
    1.5e308 1/kg); at 1e154 m (anchor_a of a Distance alike) a ValueError names it."""
    world = World(gravity=(0, 0, 0))
    box = world.add_body(Box((0.1,) * 3), mass=1.0)
    world.add_joint(Hinge(None, box, anchor=(1e153, 0, 0), axis=(0, 0, 1)))
    world.step(3)
    assert np.isfinite(box.position).all()
    with pytest.raises(ValueError, match="^anchor lies 1e\\+154 m"):
        world.add_joint(Hinge(None, box, anchor=(1e154, 0, 0), axis=(0, 0, 1)))
    other = world.add_body(Sphere(0.1), mass=1.0, position=(1, 0, 0))
    with pytest.raises(ValueError, match="^anchor_a lies 1e\\+154 m"):
        world.add_joint(Distance(box, other, anchor_a=(-1e154, 0, 0), anchor_b=(1, 0, 0)))


def test_a_step_whose_kinetic_energy_would_overflow_raises_and_leaves_the_world_unchanged():
    """1e300 N on a 1 kg ball: a finite 4.2e297 m/s whose square overflows. The step was
    taken, and world.energy() was inf from then on; now it is a StepError and the world is
    as it was, with its energy finite."""
    world = World()
    world.add_body(Plane())
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 0.1))
    world.step(10)
    ball.apply_force((1e300, 0, 0))
    before = world.get_state()
    with pytest.raises(StepError, match="produced speeds so large that their kinetic energy "
                                        "overflows to infinity; the world is unchanged"):
        world.step()
    assert_same_snapshot(world.get_state(), before)
    assert np.isfinite(world.energy()) and abs(ball.linear_velocity[0]) < 1e-6
    world.clear_forces()
    world.step()
    assert np.isfinite(world.energy())


@pytest.mark.parametrize("scene, params, before, after", [
    ("ragdoll_pile", {"count": 2}, 150, 60),      # contacts, limits, joints: iterative solve
    ("marbles", {"count": 60, "half_width": 0.15}, 120, 40),
    ("box_pyramid", {"base": 4}, 60, 40),
])
def test_snapshot_of_a_contact_scene_restores_an_exact_replay(scene, params, before, after):
    """A snapshot carries what the next solve starts from (the contacts' and limits' last
    multipliers, the solver's norm estimate): restored, a pile replays bit for bit, and
    world.contacts is the snapshot's again, not the last step's."""
    import scenes
    world = scenes.load(scene, **params).world
    world.contact_solver = "iterative"
    world.step(before)
    snapshot, contacts = world.get_state(), world.contacts
    assert len(contacts) > 0
    first, second = replay_from_snapshot(world, 0, after)
    # (the clock too: the replay's time is the run's origin plus its steps times dt, not the
    # snapshot's time plus the steps since)
    assert_same_state(first, second)
    world.set_state(snapshot)
    for field in ("point", "normal", "depth", "body_a", "body_b", "normal_force",
                  "friction_force"):
        assert np.array_equal(getattr(world.contacts, field), getattr(contacts, field)), field


def swing_against_hinge_limits(world, x):
    """A level arm held at (x, 0, 1.2) by a hinge about y limited to +-0.02 rad: it falls
    onto its upper limit within steps, whose row then carries it (the limits' warm
    start). (Swinging between its limits instead, it is stopped dead at each and carries
    nothing most of the time.)"""
    arm = world.add_body(Box((0.2, 0.05, 0.05)), mass=1.0, position=(x + 0.2, 0.0, 1.2))
    world.add_joint(Hinge(None, arm, anchor=(x, 0.0, 1.2), axis=(0, 1, 0), limits=(-0.02, 0.02)))


def test_a_snapshots_limit_multipliers_of_another_plan_are_dropped_when_restored():
    """The limits' warm start is kept by plan row; a snapshot whose rows this world's plan
    does not have (its limits changed since) restores without them, and the next steps start
    the limit rows cold, as from a snapshot that has none."""
    world = World(contact_solver="iterative")
    swing_against_hinge_limits(world, x=0.0)
    world.step(20)
    snapshot = world.get_state()
    rows, multipliers = snapshot["limit_multipliers"]
    assert multipliers.max() == pytest.approx(9.81 * 0.2 * np.cos(0.02), rel=1e-3)   # m g l
    snapshot["limit_multipliers"] = (rows + 2, multipliers)     # the plan has rows 0 and 1
    world.set_state(snapshot)
    assert world.get_state()["limit_multipliers"] is None
    world.step(5)
    cold = world.get_state()
    snapshot["limit_multipliers"] = None
    world.set_state(snapshot)
    world.step(5)
    assert_same_state(world.get_state(), cold)


def test_a_snapshot_is_refused_by_a_world_whose_bodies_or_joints_were_swapped():
    """The counts alone matched: after a sphere was removed and a capsule added, a snapshot
    put the sphere's pose on the box that took its place (sunk 0.1 m into the ground)."""
    world = World()
    world.add_body(Plane())
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 0.1))
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(1, 0, 0.5))
    hinge = world.add_joint(Ball(None, box, anchor=(1, 0, 0.7)))
    world.step(10)
    snapshot = world.get_state()
    world.remove_joint(hinge)
    world.add_joint(Hinge(None, box, anchor=(1, 0, 0.7), axis=(1, 0, 0)))
    with pytest.raises(ValueError, match="other joints: joint 0 .*was a Ball"):
        world.set_state(snapshot)
    world.remove_body(ball)
    world.add_body(Capsule(0.1, 0.1), mass=1.0, position=(2, 0, 0.2))
    before = world.get_state()
    with pytest.raises(ValueError, match="other bodies: body 1 .*Box.*another shape"):
        world.set_state(snapshot)
    assert_same_state(world.get_state(), before)


def test_a_snapshot_is_refused_after_a_body_is_respawned_as_one_of_the_same_shape():
    """A 1 kg coin removed and a 50 kg cannonball of the same shape added in its place kept
    the counts and the shapes, and the snapshot put the coin's pose and velocity on the
    cannonball. A snapshot knows its bodies as they were added; one from before the
    serials (an older version) still restores by shape."""
    world = World()
    world.add_body(Plane())
    crate = world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0.2))
    coin = world.add_body(Sphere(0.1), mass=1.0, position=(1, 0, 0.1))
    world.step(10)
    snapshot = world.get_state()
    world.remove_body(coin)
    ball = world.add_body(Sphere(0.1), mass=50.0, position=(5, 5, 0.1))
    before = world.get_state()
    with pytest.raises(ValueError, match=r"body 2 \(.*Sphere.*\) was added since, in place of "
                                         "one removed"):
        world.set_state(snapshot)
    assert_same_state(world.get_state(), before)
    assert ball.position == pytest.approx((5, 5, 0.1))
    older = dict(snapshot, topology={k: v for k, v in snapshot["topology"].items()
                                     if k != "body"})
    world.set_state(older)
    assert ball.position == pytest.approx(snapshot["x"][3])
    world.set_state(world.get_state())                # its own snapshot restores
    assert crate.position == pytest.approx(snapshot["x"][2])


@pytest.mark.parametrize("damage, message", [
    pytest.param(lambda s: s["v"].__setitem__((0, 0), np.nan), "state\\['v'\\]", id="v"),
    pytest.param(lambda s: s["contacts"]["normal_force"].__setitem__(0, np.inf),
                 "'normal_force'", id="contacts-infinite-force"),
    pytest.param(lambda s: s["contacts"].__setitem__("point", s["contacts"]["point"][1:]),
                 "'point'", id="contacts-short-point"),
    pytest.param(lambda s: s["contacts"]["body_b"].__setitem__(0, 99), "'body_b'",
                 id="contacts-unknown-body"),
    pytest.param(lambda s: s["contacts"].pop("keys"), "malformed", id="contacts-no-keys"),
    pytest.param(lambda s: s.__setitem__("limit_multipliers", ([0], [np.nan])),
                 "limit_multipliers", id="limit_multipliers"),
    pytest.param(lambda s: s.__setitem__("norm_vector", np.zeros(5)), "norm_vector",
                 id="norm_vector"),
    pytest.param(lambda s: s.__setitem__("solve_settled", "yes"), "solve_settled",
                 id="solve_settled"),
    pytest.param(lambda s: s.__setitem__("time", float("nan")), "time", id="time"),
    pytest.param(lambda s: s.__setitem__("clock", (0.0, -20)), "clock", id="clock-steps"),
    pytest.param(lambda s: s.__setitem__("clock", (float("nan"), 20)), "clock",
                 id="clock-origin"),
    pytest.param(lambda s: s.__setitem__("clock", "0.0, 20"), "clock", id="clock-malformed"),
    pytest.param(lambda s: s["q"].__setitem__(2, (5.0, 0, 0, 0)), r"q'\]\[2\] must be a unit",
                 id="q-not-unit"),
    pytest.param(lambda s: s["q"].__setitem__(1, 0.0), r"q'\]\[1\] must be a unit", id="q-zero"),
    pytest.param(lambda s: s.__setitem__("energy_reference", float("nan")), "energy_reference",
                 id="energy_reference"),
    pytest.param(lambda s: s.__setitem__("topology", "junk"), r"topology'\] is damaged",
                 id="topology"),
    pytest.param(lambda s: s.clear(), "it has no 'n_bodies', 'n_joints', 'x', 'q'", id="empty"),
    # (a count given as a string said "taken from a world of 5 bodies ...; this one has 5")
    pytest.param(lambda s: s.__setitem__("n_bodies", str(s["n_bodies"])),
                 r"^state\['n_bodies'\] must be a whole number \(the count World.get_state "
                 r"wrote\), got '\d+' \(str\); pass the snapshot as taken$", id="n_bodies-str"),
    pytest.param(lambda s: s.__setitem__("n_joints", float(s["n_joints"])),
                 r"^state\['n_joints'\] must be a whole number .*\(float\)", id="n_joints-float"),
    # (a string for w said only "could not convert string to float")
    pytest.param(lambda s: s.__setitem__("w", "abc"), r"state\['w'\] must be an array of "
                 r"shape \(6, 3\) of numbers, got 'abc'", id="w-string"),
    # (taken: a negative time, and keys or plan rows of 0.5 cut to 0)
    pytest.param(lambda s: s.__setitem__("time", -5.0), r"state\['time'\] must be a finite "
                 r"time >= 0", id="time-negative"),
    pytest.param(lambda s: s["contacts"].__setitem__("keys", s["contacts"]["keys"] + 0.5),
                 r"state\['contacts'\]\['keys'\] must be integers", id="contacts-keys-float"),
    pytest.param(lambda s: s.__setitem__("limit_multipliers", (
        np.asarray(s["limit_multipliers"][0]) + 0.5, s["limit_multipliers"][1])),
                 r"limit_multipliers'\]\[0\] \(the plan rows\) must be integers",
                 id="limit-rows-float"),
])
def test_a_damaged_snapshot_is_refused_whole_and_changes_nothing(damage, message):
    """Every part of a snapshot is checked before any is written: a bad one raises a
    ValueError naming the part, and the world keeps its state, contacts and warm start.
    (Quaternions that were not unit ones were taken: a pendulum restored from one went from
    9.81 J to 17.87 J in 5 steps.)"""
    world = World(contact_solver="iterative")      # (which carries a norm vector)
    world.add_body(Plane())
    for i in range(3):
        world.add_body(Sphere(0.1), mass=1.0, position=(0.3 * i, 0, 0.099))
    swing_against_hinge_limits(world, x=2.0)       # the limit rows' warm start
    world.step(20)
    snapshot = world.get_state()
    world.step(5)
    # (the live flag unlike the snapshot's, so that writing it before refusing would show)
    world._solver_memory.settled = not snapshot["solve_settled"]
    before = world.get_state()
    assert before["norm_vector"] is not None and len(before["contacts"]["keys"]) > 0
    assert before["limit_multipliers"] is not None
    damage(snapshot)
    with pytest.raises(ValueError, match=message):
        world.set_state(snapshot)
    after = world.get_state()
    assert_same_state(after, before)
    # the contacts with their warm start, and what the solver carries, as they were
    for key, value in before["contacts"].items():
        assert np.array_equal(after["contacts"][key], value), key
    assert np.array_equal(after["norm_vector"], before["norm_vector"])
    assert after["solve_settled"] == before["solve_settled"]
    for saved, kept in zip(before["limit_multipliers"], after["limit_multipliers"]):
        assert np.array_equal(saved, kept)


def test_a_step_stopped_with_ctrl_c_leaves_the_world_as_it_was(monkeypatch):
    """KeyboardInterrupt is no Exception: a step stopped by it part-way (here after its
    sub-step, before its commit) kept what the attempt had changed (the step counts, the
    stiffness and caches it carries on with); it is put back as a failed step is, and the
    world then steps bit for bit as one never stopped."""
    import physics.step
    world, a, b = hanging_pair()
    twin, _, _ = hanging_pair()
    world.step(10)
    twin.step(10)
    substep = physics.step.SUBSTEPS["symplectic"]

    def stopped_part_way(*args):
        substep(*args)
        raise KeyboardInterrupt

    counted = dict(world.stats)
    monkeypatch.setitem(physics.step.SUBSTEPS, "symplectic", stopped_part_way)
    with pytest.raises(KeyboardInterrupt):
        world.step()
    monkeypatch.undo()
    assert world.stats == counted
    world.step(20)
    twin.step(20)
    assert_same_state(world.get_state(), twin.get_state())


def test_a_singular_step_names_the_joint_and_says_what_to_do_about_the_queued_forces():
    """A hand of inertia 1e-300 kg m^2 on a ball joint: the joints' matrix is singular. The
    StepError names the joint whose row the factorisation broke down at (it said '(row 5)'),
    and says the queued forces stay and how to drop them only when some are queued (it said
    so with none, and once printed '{_QUEUED}').
    (The hand has no shape: one with a shape is refused so small an inertia.)"""
    world = World()
    arm = world.add_body(Capsule(0.05, 0.2), mass=1.0, position=(0, 0, 1), name="arm")
    hand = world.add_body(None, mass=0.5, inertia=(1e-3,) * 3, position=(0, 0, 0.6),
                          name="hand")
    hinge = world.add_joint(Hinge(None, arm, anchor=(0, 0, 1.2), axis=(0, 1, 0),
                                  limits=(-1, 1)))
    hinge.set_motor(velocity=1.0, max_force=5.0)
    world.add_joint(Ball(arm, hand, anchor=(0, 0, 0.7), name="wrist"))
    world.step(10)
    hand.inertia = (1e-300,) * 3
    failed = ("failed: constraint matrix is not positive definite at a row of <Ball 'wrist' "
              "<Body 'arm' #0 Capsule> -> <Body 'hand' #1 no shape>>; the world is unchanged "
              "(check for conflicting joints, bodies of wildly different mass, or forces too "
              "large for dt)")
    with pytest.raises(StepError) as error:
        world.step()
    assert str(error.value) == f"step at t={world.time:.6g} s {failed}"
    hand.apply_force((1.0, 0, 0))
    with pytest.raises(StepError) as error:
        world.step()
    assert "{" not in str(error.value)
    assert str(error.value) == (f"step at t={world.time:.6g} s {failed}; the forces applied "
                                "for it stay queued: world.clear_forces() drops them")


def test_a_step_error_with_no_forces_queued_does_not_speak_of_them():
    """A velocity of 1e300 m/s set by hand, nothing applied: the StepError said the forces
    applied for the step stay queued and world.clear_forces() drops them; there are none."""
    world = World()
    box = world.add_body(Box((0.1,) * 3), mass=1.0, position=(0, 0, 1))
    world.add_joint(Hinge(None, box, anchor=(0, 0, 1.2), axis=(0, 1, 0)))
    box.linear_velocity = (1e300, 0, 0)
    before = world.get_state()
    with pytest.raises(StepError) as error:
        world.step()
    assert str(error.value) == (
        "step at t=0 s produced NaN or infinity; the world is unchanged (the velocities it "
        "started from are too large for their kinetic energy to be a float: <Body #0 Box> has "
        "linear_velocity (1e+300, 0, 0) m/s, angular_velocity (0, 0, 0) rad/s; set smaller "
        "velocities)")
    assert_same_snapshot(world.get_state(), before)


def test_a_step_from_velocities_beyond_a_float_s_energy_names_them_and_finite_ones_step():
    """linear_velocity (1e200, 0, 0) was taken, then every step raised a StepError blaming
    forces too large for dt or an unstable configuration; it names the body and its
    velocities, the world stays as it was, and 1e150 m/s (energy 5e299 J) steps."""
    world = World(dt=1 / 60)
    world.add_body(Plane())
    world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 1))
    bullet = world.add_body(Sphere(0.1), mass=1.0, position=(3, 0, 1), name="bullet")
    for field, value, unit in (("linear_velocity", (1e200, 0, 0), "m/s"),
                               ("angular_velocity", (0, 0, 1e180), "rad/s")):
        setattr(bullet, field, value)
        before = world.get_state()
        with pytest.raises(StepError) as error:
            world.step()
        assert ("the world is unchanged (the velocities it started from are too large for "
                "their kinetic energy to be a float: <Body 'bullet' #2 Sphere> has ") \
            in str(error.value)
        assert f"{field} ({value[0]:g}, 0, {value[2]:g}) {unit}" in str(error.value)
        assert_same_snapshot(world.get_state(), before)
        setattr(bullet, field, (0, 0, 0))
    bullet.linear_velocity = (1e150, 0, 0)
    world.step()
    assert bullet.position[0] == pytest.approx(1e150 / 60, rel=1e-12)


def test_queued_loads_that_would_overflow_are_refused_and_leave_the_queue_as_it_was():
    """1e308 N twice queued an infinite force, and 1e200 N at 1e200 m a torque of -inf
    (the step could only fail); each is refused naming force, point or torque, and what
    was queued stays."""
    world = World()
    body = world.add_body(Sphere(0.1), mass=1.0)
    other = world.add_body(Sphere(0.1), mass=1.0, position=(1, 0, 0))
    body.apply_force((1e308, 0, 0))
    body.apply_torque((0, 0, 1e308))
    force, torque = world._force.copy(), world._torque.copy()
    for load, message in (
            (lambda: body.apply_force((1e308, 0, 0)), "^force: .* overflows"),
            (lambda: body.apply_force((1e10, 0, 0), point=(0, 1e308, 1e308)),
             r"^point \(0, 1e\+308, 1e\+308\) is so far .* overflows"),
            (lambda: other.apply_force((1e200, 0, 0), point=(0, 1e200, 0)),
             r"^point .* torque of force \(1e\+200, 0, 0\) about it overflows"),
            (lambda: body.apply_force((0, 1.0, 0), point=(1e308, 0, 0)), "^point: .* overflows"),
            (lambda: body.apply_torque((0, 0, 1e308)), "^torque: .* overflows"),
            (lambda: world.apply_forces([[1e308, 0, 0]] * 2, [1, 1]),
             r"^forces on <Body #1 Sphere> .* add up past the largest float"),
            (lambda: world.apply_forces([[1e308, 0, 0], [0, 0, 0]]), r"^forces on <Body #0")):
        with pytest.raises(ValueError, match=message):
            load()
        assert np.array_equal(world._force, force) and np.array_equal(world._torque, torque)


def test_a_load_on_a_static_body_is_refused_as_it_would_do_nothing():
    """Forces and torques on a static body or a plane were dropped, silently."""
    world = World()
    ground = world.add_body(Plane())
    post = world.add_body(Box((0.1, 0.1, 0.1)), static=True, position=(1, 0, 0.1))
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 1))
    for load, name in ((lambda: ground.apply_force((1.0, 0, 0)), "force"),
                       (lambda: post.apply_force((0, 0, 1.0), point=(1, 0, 0.2)), "force"),
                       (lambda: post.apply_torque((0, 0, 1.0)), "torque")):
        with pytest.raises(ValueError, match=f"^{name} on <Body #.*>, which is static: nothing "
                                             "pushes a static body.*add it with mass="):
            load()
    with pytest.raises(ValueError, match=r"^forces\[1\] is on <Body #1 Box>, which is static"):
        world.apply_forces([[0, 0, 1.0], [1.0, 0, 0]], [ball, post])
    assert not world._force.any() and not world._torque.any()
    # (a zero load does nothing either way: every body's row, the ground's zero, is taken)
    world.apply_forces([[0, 0, 0], [0, 0, 0], [0, 0, 2.0]])
    ground.apply_force((0, 0, 0))
    assert np.array_equal(world._force[ball.row], [0, 0, 2.0])


def test_apply_forces_takes_body_handles_and_refuses_what_is_no_body_by_name():
    """bodies=[0.5] was cut to body 0, 1.7 to 1, [True] taken as body 0, [body] raised
    int()'s TypeError, ['a'] "invalid literal for int()", forces='abc' "could not convert
    string to float"."""
    world = World()
    a, b = (world.add_body(Sphere(0.1), mass=1.0, position=(i, 0, 0)) for i in range(2))
    world.apply_forces([[1.0, 0, 0], [0, 2.0, 0]], [b, a])
    world.apply_forces([[0, 0, 3.0]], np.array([1]))
    assert np.array_equal(world._force[1:3], [[0, 2.0, 0], [1.0, 0, 3.0]])
    other = World().add_body(Sphere(0.1), mass=1.0)
    gone = world.add_body(Sphere(0.1), mass=1.0, position=(5, 0, 0))
    world.remove_body(gone)
    for bodies, message in (
            ([0.5], r"^bodies\[0\] must be a Body of this world or an integer index into "
                    r"world.bodies, got 0.5"),
            (1.7, r"^bodies\[0\] must be .* got 1.7"),
            ([0, True], r"^bodies\[1\] must be .* got True"),
            (["a"], r"^bodies\[0\] must be .* got 'a'"),
            ([other], r"^bodies\[0\]: <Body #0 Sphere> is not a body of this world"),
            ([gone], r"^bodies\[0\]: <Body \(removed\) Sphere> is not a body of this world"),
            ([2], r"^bodies\[0\] is 2: bodies must be indices into world.bodies \(0 to 1\)")):
        with pytest.raises(ValueError, match=message):
            world.apply_forces(np.ones((1 if np.ndim(bodies) == 0 else len(bodies), 3)), bodies)
    with pytest.raises(ValueError, match=r"^forces must be \(2, 3\) numbers \(N\), one row "
                                         r"per body, got 'abc'"):
        world.apply_forces("abc")
    assert np.array_equal(world._force[1:3], [[0, 2.0, 0], [1.0, 0, 3.0]])


def test_flags_names_and_vectors_of_the_wrong_kind_are_refused_by_name():
    """static="no" made a static body (bool() of it) while World(sleeping=1) was refused;
    gravity [[0, 0, -9.81]] was flattened and complex numbers lost their imaginary part
    with only a warning; a name of 5 or [1] was kept."""
    world = World()
    for kwargs, message in (
            (dict(static="no"), "^static must be True or False, got 'no'"),
            (dict(static=1, mass=1.0), "^static must be True or False, got 1"),
            (dict(mass=1.0, name=5), "^name must be a string or None, got 5"),
            (dict(mass=1.0, name=[1]), r"^name must be a string or None, got \[1\]"),
            (dict(mass=1.0, position=[[0, 0, 1]]),
             r"^position must be a flat sequence of 3 numbers, got shape \(1, 3\)"),
            (dict(mass=1.0, linear_velocity=(1 + 1j, 0, 0)),
             "^linear_velocity must be 3 real numbers"),
            (dict(mass=1.0, inertia=np.eye(3) * (1 + 0j)),
             "^inertia must be a 3x3 matrix or 3 diagonal values")):
        with pytest.raises(ValueError, match=message):
            world.add_body(Sphere(0.1), **kwargs)
    assert len(world.bodies) == 0
    for kwargs, message in (
            (dict(gravity=[[0, 0, -9.81]]), r"^gravity must be a flat sequence of 3 numbers"),
            (dict(gravity=np.array([0, 0, -9.81 + 0j])), "^gravity must be 3 real numbers"),
            (dict(dt=np.complex128(0.01)), "^dt must be a number")):
        with pytest.raises(ValueError, match=message):
            World(**kwargs)
    body = world.add_body(Sphere(0.1), static=np.True_, name="post")
    assert body.static
    with pytest.raises(ValueError, match="^name must be a string or None, got 5"):
        body.name = 5
    with pytest.raises(ValueError, match="^name must be a string or None, got 5"):
        Hinge(None, world.add_body(Sphere(0.1), mass=1.0), name=5)
    assert body.name == "post"


def test_what_a_static_body_or_a_plane_cannot_take_is_refused_not_dropped():
    """add_body(Box, static=True, inertia=(1, 1, 1)) made a body with no inertia without a
    word (mass= and density= were refused), and add_body(Plane(), static=False) made a
    static plane. Both are refused, naming what to drop; nothing is added."""
    world = World()
    with pytest.raises(ValueError, match=r"^a static body has no inertia \(nothing turns it "
                                         r"but the angular_velocity it is given\); drop "
                                         r"inertia=$"):
        world.add_body(Box((1, 1, 1)), static=True, inertia=(1, 1, 1))
    with pytest.raises(ValueError, match=r"^static=False cannot hold for a Plane: a plane is "
                                         r"always static \(it never moves\); drop static=, "
                                         r"or give a thin Box with mass= for a slab"):
        world.add_body(Plane(), static=False)
    with pytest.raises(ValueError, match="^static must be True or False, got 0"):
        world.add_body(Plane(), static=0)
    assert len(world.bodies) == 0
    assert world.add_body(Plane()).static and world.add_body(Plane(), static=True).static
    assert not world.add_body(Box((1, 1, 1)), mass=1.0).static


def test_removing_what_is_no_body_or_joint_names_the_parameter():
    """remove_joint('x') raised AttributeError: 'str' object has no attribute '_world'."""
    world = World()
    body = world.add_body(Sphere(0.1), mass=1.0)
    with pytest.raises(ValueError, match="^joint must be a joint of this world .* got 'x'"):
        world.remove_joint("x")
    with pytest.raises(ValueError, match="^joint must be a joint of this world .* got <Body"):
        world.remove_joint(body)
    with pytest.raises(ValueError, match="^body must be a Body of this world .* got None"):
        world.remove_body(None)


def test_a_joint_added_or_a_sleeper_woken_far_away_keeps_the_last_steps_reports_and_warm_start():
    """Adding a joint 30 m away turned a settled stack's contacts and an unrelated pin's force
    to 0 N until the next step, and the stack, started cold, moved at 2.5e-3 m/s in it;
    waking a sleeping crate 2 m away turned the pin's force to 0 N likewise."""
    world = World(sleeping=True)
    world.add_body(Plane())
    stack = [world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0.2 + 0.4 * k))
             for k in range(4)]
    rod = world.add_body(Box((0.05, 0.05, 0.5)), mass=1.0, position=(2, 0, 2.0))
    pin = world.add_joint(Hinge(None, rod, anchor=(2, 0, 2.5), axis=(1, 0, 0)))
    rod.angular_velocity = (1.0, 0, 0)          # (it keeps swinging: awake)
    world.step(300)
    assert stack[0].asleep and not rod.asleep
    force, held = pin.force, world.contacts.normal_force.sum()
    stack[0].wake()
    assert pin.force == pytest.approx(force, abs=1e-12)
    world.step()
    force, held = pin.force, world.contacts.normal_force.sum()
    far = world.add_body(Sphere(0.1), mass=1.0, position=(30, 0, 1))
    world.add_joint(Ball(None, far, anchor=(30, 0, 1.5)))
    assert pin.force == pytest.approx(force, abs=1e-12)
    assert world.contacts.normal_force.sum() == pytest.approx(held, abs=1e-9)
    world.step()
    assert max(np.linalg.norm(b.linear_velocity) for b in stack) < 1e-6


def test_bodies_and_joints_are_found_by_name():
    """world.body(name) and world.joint(name): the one so called; a name none has is refused
    with the nearest names, one that several have with how many."""
    world = World()
    hand = world.add_body(Sphere(0.1), mass=1.0, name="hand")
    head = world.add_body(Sphere(0.1), mass=1.0, position=(1, 0, 0), name="head")
    neck = world.add_joint(Ball(hand, head, anchor=(0.5, 0, 0), name="neck"))
    assert world.body("hand") is hand and world.body("head") is head
    assert world.joint("neck") is neck
    with pytest.raises(ValueError, match="no body is called 'HAND'; did you mean 'hand'"):
        world.body("HAND")              # (compared ignoring case, as scene names are)
    with pytest.raises(ValueError, match="no body is called 'hnd'; did you mean 'hand'"):
        world.body("hnd")
    with pytest.raises(ValueError, match="no joint is called 'x'; the names are 'neck'"):
        world.joint("x")
    world.add_body(Sphere(0.1), mass=1.0, position=(3, 0, 0), name="hand")
    with pytest.raises(ValueError, match="2 bodies are called 'hand'.*by its index"):
        world.body("hand")
    # many names: the first 10 and how many more (1001 marbles listed all, 13,000 characters)
    for k in range(20):
        world.add_body(Sphere(0.1), mass=1.0, position=(5 + k, 0, 0), name=f"ball{k:02d}")
    with pytest.raises(ValueError) as refused:
        world.body("xyz")
    assert str(refused.value) == ("no body is called 'xyz'; the names are 'ball00', 'ball01', "
                                  "'ball02', 'ball03', 'ball04', 'ball05', 'ball06', 'ball07', "
                                  "'ball08', 'ball09' and 12 more")


@pytest.mark.parametrize("dt", [1 / 240, 1 / 60])
def test_a_lift_set_moving_for_a_worlds_first_step_carries_its_load_from_that_step(dt):
    """A lift made at rest and given a velocity before the world's first step, 0.02 m/s more
    before every step: its 2 kg load's weld reports m (g + a) from the first step on. The
    first step had no last step's velocities to measure the change from and read half of it
    (24.42 N at dt 1/240 where m (g + a) is 29.22); it measures from those the lift was made
    with."""
    world = World(dt=dt)
    lift = world.add_body(Box((0.3, 0.3, 0.05)), static=True, position=(0, 0, 2))
    load = world.add_body(Box((0.1, 0.1, 0.1)), mass=2.0, position=(0, 0, 1.5))
    weld = world.add_joint(Fixed(lift, load))
    for k in range(3):
        lift.linear_velocity = (0, 0, 0.02 * (k + 1))
        world.step()
        assert weld.force[2] == pytest.approx(2.0 * (9.81 + 0.02 / dt), rel=1e-6)


@pytest.mark.parametrize("dt", [1 / 240, 1 / 60])
@pytest.mark.parametrize("how", ["ball", "contact"])
def test_a_load_on_an_accelerating_kinematic_lift_reports_m_times_g_plus_a(dt, how):
    """A lift driven by setting its velocity before every step, accelerating up at 2 m/s^2,
    carries a 2 kg load: its joint reports m (g + a), as a contact does. The joint read
    m (g + a / 2): half of each step's velocity change came in the velocity projection
    that ends the step, which the report leaves out. Replayed from a snapshot, bit for bit."""
    world = World(dt=dt)
    lift = world.add_body(Box((0.5, 0.5, 0.1)), static=True, position=(0, 0, 2))
    if how == "ball":
        load = world.add_body(Sphere(0.1), mass=2.0, position=(0, 0, 1))
        joint = world.add_joint(Ball(lift, load, anchor=(0, 0, 2)))
    else:
        load = world.add_body(Box((0.2, 0.2, 0.2)), mass=2.0, position=(0, 0, 2.3))
    world.step(30)
    steps = int(round(1 / dt))
    for i in range(steps):
        lift.linear_velocity = (0, 0, 2.0 * (i + 1) * dt)
        world.step()
        if i == steps // 2:
            snapshot, half = world.get_state(), i
    force = joint.force[2] if how == "ball" else world.contacts.normal_force.sum()
    assert force == pytest.approx(2.0 * (9.81 + 2.0), rel=1e-6)
    assert load.linear_velocity[2] == pytest.approx(2.0, abs=1e-6)
    end = world.get_state()
    world.set_state(snapshot)
    for i in range(half + 1, steps):
        lift.linear_velocity = (0, 0, 2.0 * (i + 1) * dt)
        world.step()
    assert_same_state(world.get_state(), end)


def test_bad_impulses_are_refused_by_name_and_change_nothing():
    """apply_impulse and apply_impulses check their input as apply_force does: NaN, the wrong
    shape, a static body (unless zero), and velocities past the largest float are refused
    with a ValueError naming the parameter, and leave every velocity as it was."""
    world = World()
    ground = world.add_body(Plane())
    ledge = world.add_body(Box((0.5, 0.5, 0.1)), static=True, position=(3, 0, 0.1))
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 0.1))
    before = world.get_state()
    for make, message in (
            (lambda: ball.apply_impulse((np.nan, 0, 0)), r"^impulse must be finite"),
            (lambda: ball.apply_impulse((1, 0)), r"^impulse must have 3 components"),
            (lambda: ball.apply_impulse((1, 0, 0), point=(0, "a", 0)), r"^point must be 3 real"),
            (lambda: ledge.apply_impulse((1, 0, 0)), r"^impulse on <Body #1 Box>, which is "
             r"static: nothing pushes a static body, so an impulse on it has no effect"),
            (lambda: ball.apply_impulse((1e308, 0, 0), point=(0, 1e308, 0)),
             r"^impulse \(1e\+308, 0, 0\) N s at point \(0, 1e\+308, 0\) gives <Body #2 "
             r"Sphere> a velocity or spin past the largest float"),
            (lambda: world.apply_impulses(np.zeros((2, 3))),
             r"^impulses must be \(3, 3\) finite numbers \(N s\)"),
            (lambda: world.apply_impulses([(0, 0, 1)], bodies=[ball], points=[(0, 0, np.inf)]),
             r"^points\[0, 2\] is inf"),
            (lambda: world.apply_impulses([(0, 0, 0), (0, 0, 1)], bodies=[ball, ground]),
             r"^impulses\[1\] is on <Body #0 Plane>, which is static"),
            (lambda: world.apply_impulses([(0, 0, 1)], bodies=[7]),
             r"bodies must be indices into world.bodies")):
        with pytest.raises(ValueError, match=message):
            make()
    assert_same_state(world.get_state(), before)
    ledge.apply_impulse((0, 0, 0))                    # a zero one is nothing, as a zero force
    world.apply_impulses([(0, 0, 0), (0, 0, 0), (1.0, 0, 0)])
    assert ball.linear_velocity == pytest.approx((1.0, 0, 0))
    world.apply_impulses([(0, 0, 0.5), (0, 0, 0.5)], bodies=[2, ball])     # named twice: both
    assert ball.linear_velocity == pytest.approx((1.0, 0, 1.0))


def test_every_bodys_velocity_may_be_set_at_once_as_one_by_one():
    """world.linear_velocities and angular_velocities take a whole (n, 3) array: the same
    bodies moving the same way as when set one by one (bitwise, after 20 steps of a hinged
    pair with a ball on the ground), checked as Body.linear_velocity checks one (shape, NaN,
    a plane that would move). The explorer found them read-only with no batch setter."""
    def scene():
        world = World()
        world.add_body(Plane())
        ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 1, 0.1))
        a = world.add_body(Box((0.1, 0.1, 0.3)), mass=1.0, position=(0, 0, 1.7))
        b = world.add_body(Box((0.1, 0.1, 0.3)), mass=1.0, position=(0, 0, 1.1))
        world.add_joint(Hinge(None, a, anchor=(0, 0, 2.0), axis=(0, 1, 0)))
        world.add_joint(Hinge(a, b, anchor=(0, 0, 1.4), axis=(0, 1, 0)))
        world.step(5)
        return world, [ball, a, b]
    v = np.array([[0, 0, 0], [2.0, 0, 0.5], [0.3, 0, 0], [0, 1.0, 0]])
    w = np.array([[0, 0, 0], [0, 0, 4.0], [0, 2.0, 0], [1.0, 0, 0]])
    one, bodies = scene()
    for body, vk, wk in zip(bodies, v[1:], w[1:]):
        body.linear_velocity, body.angular_velocity = vk, wk
    one.step(20)
    batch, _ = scene()
    batch.linear_velocities = v
    batch.angular_velocities = w.tolist()
    np.testing.assert_array_equal(batch.linear_velocities, v)        # set now
    batch.step(20)
    assert_same_state(batch.get_state(), one.get_state())
    assert batch.bodies[1].position[0] == pytest.approx(2.0 * 20 / 240, abs=1e-9)  # flying
    assert batch.constraint_error() < 1e-6     # the pair's velocities projected on its hinges
    for value, message in ((np.zeros((3, 3)), r"^linear_velocities must be \(4, 3\) finite "
                            r"numbers \(m/s\), one row per body, got shape \(3, 3\)"),
                           (np.full((4, 3), np.nan), r"^linear_velocities\[0, 0\] is nan"),
                           ([[0, 0, 1.0]] + [[0, 0, 0]] * 3, r"^linear_velocities\[0\] is for "
                            r"<Body #0 Plane>, a Plane, which does not move")):
        before = batch.get_state()
        with pytest.raises(ValueError, match=message):
            batch.linear_velocities = value
        assert_same_state(batch.get_state(), before)
    with pytest.raises(ValueError, match=r"^angular_velocities must be \(4, 3\) numbers "
                       r"\(rad/s\), one row per body, got 'fast'"):
        batch.angular_velocities = "fast"


def test_step_given_a_step_size_says_that_it_takes_a_number_of_steps():
    """world.step(0.016), a Box2D and pymunk habit, said only "n must be a whole number"."""
    world = World(dt=1 / 60)
    with pytest.raises(ValueError, match=r"^n must be a whole number >= 0, got 0\.016: step\(n\) "
                       r"takes a number of steps, not a step size; each step is world.dt "
                       r"\(0\.0166667 s\) long. For steps of 0\.016 s set world.dt = 0\.016"):
        world.step(0.016)
    with pytest.raises(ValueError, match=r"^n must be a whole number >= 0, got -1$"):
        world.step(-1)
    assert world.time == 0.0
    world.step(2.0)
    assert world.time == pytest.approx(2 / 60)


def test_collision_group_zero_is_refused_saying_how_to_turn_collisions_off():
    """A group of no bits was taken silently and the body then collided with nothing; the
    way to do that is collision_mask = 0, which the refusal names."""
    world = World()
    world.add_body(Plane())
    crate = world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0.2))
    with pytest.raises(ValueError, match=r"^collision_group 0 puts <Body #1 Box> in no group, "
                       r"so nothing would collide with it: .* set collision_mask = 0"):
        crate.collision_group = 0
    assert crate.collision_group == 1
    world.step(60)
    assert crate.position[2] == pytest.approx(0.2, abs=1e-3)      # still on the ground
    crate.collision_mask = 0
    world.step(240)
    assert crate.position[2] < -4.0                               # falls through (-4.7 m)


def test_a_snapshot_of_fewer_bodies_says_to_remove_those_added_or_take_a_new_one():
    """set_state after spawning said only the counts ("a world of 5 bodies ...; this one has
    11"); now it says what to do."""
    world = World()
    world.add_body(Plane())
    world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0.2))
    snapshot = world.get_state()
    spawned = [world.add_body(Sphere(0.1), mass=1.0, position=(k, 0, 1)) for k in range(1, 3)]
    with pytest.raises(ValueError, match=r"^state was taken from a world of 2 bodies and 0 "
                       r"joints; this one has 4 and 0. To restore it, remove the bodies added "
                       r"since \(world.remove_body\), or take a new snapshot \(get_state\)"):
        world.set_state(snapshot)
    for ball in spawned:
        world.remove_body(ball)
    world.set_state(snapshot)
    world.remove_body(world.bodies[1])
    with pytest.raises(ValueError, match=r"this one has 1 and 0. Bodies removed since cannot be "
                       r"restored .* take a new snapshot"):
        world.set_state(snapshot)


def test_a_removed_body_says_so_and_names_no_world():
    """After world.remove_body, body.world still returned the world, so a game could not
    tell a removed handle from a live one without a try around another property."""
    world = World()
    kept = world.add_body(Sphere(0.1), mass=1.0)
    gone = world.add_body(Sphere(0.1), mass=1.0, position=(1, 0, 0))
    assert not gone.removed and gone.world is world
    world.remove_body(gone)
    assert gone.removed and not kept.removed and kept.world is world
    with pytest.raises(ValueError, match=r"has been removed from its world"):
        gone.world
    with pytest.raises(ValueError, match=r"has been removed from its world"):
        gone.position


def test_the_batch_arrays_are_live_views_and_a_removal_moves_their_rows_up():
    """What the README says of world.positions and world.contacts kept across steps and a
    remove_body (documented, not changed: this pins it)."""
    world = World(dt=1 / 60)
    world.add_body(Plane())
    boxes = [world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(i, 0, 1.0))
             for i in range(3)]
    kept = world.positions
    world.step(10)
    assert kept[1, 2] == boxes[0].position[2] < 1.0 - 0.5 * 9.81 * (9 / 60) ** 2 * 0.9
    assert not kept.flags.writeable
    world.step(50)
    report = world.contacts
    depth, body_b = report.depth.copy(), report.body_b.copy()
    assert set(body_b) == {1, 2, 3}
    boxes[0].apply_impulse((0, 0, 3.0))
    world.step(2)
    np.testing.assert_array_equal(report.depth, depth)
    world.remove_body(boxes[0])
    np.testing.assert_array_equal(report.body_b, body_b)        # (its step's indices)
    assert boxes[1].index == 1 and kept[2, 0] == 2.0 and kept[3, 0] == 2.0
    assert world.positions.shape == (3, 3)


@pytest.mark.parametrize("dt", [1 / 60, 1 / 240])
def test_move_to_drives_a_kinematic_door_round_its_hinge_exactly_and_it_sweeps_a_ball(dt):
    """A static door (1 m wide) driven each step by move_to along its turn about an edge at
    2 rad/s ends each step on that turn: after a whole turn its edge is on the hinge line to
    rounding (given v = w x r instead, it drifted 55 mm off in a turn at dt 1/60), and a ball
    in its way is pushed off at about the door's speed there."""
    world = World(dt=dt)
    world.add_body(Plane())
    door = world.add_body(Box((0.5, 0.05, 1.0)), static=True, position=(0.5, 0, 1.0))
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0.5, 0.3, 0.1))
    steps = round(np.pi / dt)
    for i in range(steps):
        angle = 2.0 * (i + 1) * dt
        door.move_to((0.5 * np.cos(angle), 0.5 * np.sin(angle), 1.0),
                     (np.cos(angle / 2), 0, 0, np.sin(angle / 2)))
        world.step()
        assert np.linalg.norm(door.position[:2]) == pytest.approx(0.5, abs=1e-12)
    edge = door.position + door.rotation @ np.array([-0.5, 0.0, 0.0])
    assert np.linalg.norm(edge[:2]) < 1e-12
    assert np.linalg.norm(ball.position[:2]) > 2.0
    assert 1.5 < np.linalg.norm(ball.linear_velocity) < 2.5


def test_move_to_keeps_the_sense_of_a_fan_turning_more_than_half_a_turn_a_step():
    """A kinematic fan spun up from rest to 300 rad/s in 1 s (5 rad a step at dt 1/60) by
    move_to along its angle: past pi a step the shortest turn to each pose runs backwards
    (-177 rad/s for 200), so move_to takes the turn nearest the spin it has; and a ball on
    the blade is flung forward, the way the fan turns."""
    world = World(dt=1 / 60, gravity=(0, 0, 0))
    fan = world.add_body(Box((1.0, 0.05, 0.05)), static=True)
    ball = world.add_body(Sphere(0.05), mass=0.1, position=(0.7, 0.2, 0.0))
    accel = 300.0
    for i in range(60):
        t = (i + 1) * world.dt
        angle = 0.5 * accel * t * t
        fan.move_to((0, 0, 0), (np.cos(angle / 2), 0, 0, np.sin(angle / 2)))
        assert fan.angular_velocity[2] == pytest.approx(accel * (t - 0.5 * world.dt), rel=1e-9)
        world.step()
        w, _, _, z = fan.orientation
        assert abs(np.sin(angle / 2) * w - np.cos(angle / 2) * z) < 1e-9
    assert np.cross(ball.position, ball.linear_velocity)[2] > 0.0
    # moved to the pose it has, it stops (counted in whole turns about its 300 rad/s, it
    # was given 2 pi / dt = 377 rad/s, and kept it held so); the ball flies on, untouched
    fan.move_to((0, 0, 0), fan.orientation.copy())
    assert np.array_equal(fan.angular_velocity, np.zeros(3))
    before = fan.orientation.copy()
    world.step()
    np.testing.assert_allclose(fan.orientation, before, rtol=0, atol=1e-15)


def test_move_to_is_for_static_bodies_and_checks_its_pose():
    world = World()
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0)
    with pytest.raises(ValueError, match="move_to drives a static"):
        box.move_to((0, 0, 1))
    door = world.add_body(Box((0.1, 0.1, 0.1)), static=True)
    with pytest.raises(ValueError, match="orientation"):
        door.move_to((0, 0, 1), (2, 0, 0, 0))
    with pytest.raises(ValueError, match="position"):
        door.move_to((0, np.nan, 1))
    door.move_to((0.0, 0.0, 1.0))
    assert door.linear_velocity == pytest.approx((0, 0, 1.0 / world.dt))


@pytest.mark.parametrize("mass, cfm, shortfall", [(1.0, 1e-9, 0.0), (1e6, 1e-9, 7.5e-4),
                                                  (1e8, 1e-9, 0.087), (1e8, 1e-11, 7.5e-4),
                                                  (1e8, 0.0, 0.0)])
def test_a_heavy_hung_load_reads_short_of_m_g_by_the_regularisation(mass, cfm, shortfall):
    """README: the joint's reading misses m g by about m cfm / (1 + m cfm); cfm 0 is exact."""
    world = World(dt=1 / 240, cfm=cfm)
    bob = world.add_body(Sphere(0.5), mass=mass, position=(0, 0, -20.0))
    rope = world.add_joint(Distance(None, bob, anchor_a=(0, 0, 0), anchor_b=(0, 0, -19.5)))
    world.step(240)
    reading = np.linalg.norm(rope.force) / (mass * 9.81)
    assert 1 - reading == pytest.approx(shortfall, rel=0.02, abs=1e-8)
    assert abs(bob.position[2] + 20.0) < 1e-7


@pytest.mark.parametrize("length, off", [(0.7, 0.0333), (1.0, 0.1333)])
def test_a_loop_that_cannot_close_warns_once_naming_a_joint(length, off):
    """A two-link arm of reach 0.6 m tied back to its root by a rigid Distance longer than
    that has no pose: the step warns (once) instead of running on silently with forces of
    1e11 N; a Distance it can reach gives no warning."""
    def arm(length):
        world = World(dt=1 / 240, gravity=(0, 0, 0))
        upper = world.add_body(Box((0.15, 0.01, 0.01)), mass=1, position=(0.15, 0, 0))
        fore = world.add_body(Box((0.15, 0.01, 0.01)), mass=1, position=(0.45, 0, 0))
        world.add_joint(Hinge(None, upper, anchor=(0, 0, 0), axis=(0, 1, 0)))
        world.add_joint(Hinge(upper, fore, anchor=(0.3, 0, 0), axis=(0, 1, 0), name="elbow"))
        world.add_joint(Distance(None, fore, anchor_a=(0, 0, 0), anchor_b=(0.6, 0, 0),
                                 length=length))
        return world

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        arm(0.6).step(10)
    world = arm(length)
    with pytest.warns(RuntimeWarning, match=r"joint 'elbow' is .* cannot all hold") as caught:
        world.step(10)
    assert len(caught) == 1
    assert world.constraint_error() == pytest.approx(off, abs=1e-4)
