"""A step of several sub-steps (``World(substeps=n)``) is n steps of dt / n, and reports what
acted over all of them: the impulses of the step over dt."""
import numpy as np
import pytest

from physics import Box, Capsule, Hinge, Plane, Slider, Sphere, World
from snapshot_helpers import assert_same_snapshot, assert_same_state


def pile_beside_an_arm(dt, substeps):
    """Ten boxes and ten balls dropped on the ground beside a rod on a hinge limited to
    +-0.5 rad, set swinging at 3 rad/s, and a 2 kg box lifted by a slider's motor."""
    world = World(dt=dt, substeps=substeps)
    world.add_body(Plane(), friction=0.6)
    rng = np.random.default_rng(1)
    for i in range(20):
        world.add_body(Box((0.1, 0.1, 0.1)) if i % 2 else Sphere(0.1), mass=1.0,
                       position=(rng.normal() * 0.3, rng.normal() * 0.3, 0.3 + 0.25 * i))
    arm = world.add_body(Capsule(0.05, 0.3), mass=1.0, position=(1, 0, 0.5))
    world.add_joint(Hinge(None, arm, anchor=(1, 0, 0.85), axis=(0, 1, 0), limits=(-0.5, 0.5)))
    arm.angular_velocity = (0, 3.0, 0)
    lift = world.add_body(Box((0.1, 0.1, 0.1)), mass=2.0, position=(-1, 0, 0.5))
    world.add_joint(Slider(None, lift, axis=(0, 0, 1))).set_motor(velocity=0.2, max_force=50.0)
    return world


def joint_report(world):
    """Every joint's force and torque, then the hinge's limit effort and the slider's motor
    effort."""
    hinge, slider = world.joints
    return np.concatenate([world.joint_forces.ravel(), world.joint_torques.ravel(),
                           [hinge.limit_effort, slider.motor_effort]])


def test_four_sub_steps_are_four_steps_of_a_quarter_dt_bit_for_bit():
    """Each sub-step keeps its contacts and limits for the next one's warm start, as a step
    does. (The sub-steps started from the step's start's instead: the pile's bodies ended up
    to 2.4 m away from the twin's after 2 s.)"""
    coarse, fine = pile_beside_an_arm(1 / 60, 4), pile_beside_an_arm(1 / 240, 1)
    for _ in range(120):
        coarse.step()
        fine.step(4)
    assert_same_state(coarse.get_state(), fine.get_state())


def test_a_step_reports_the_mean_of_its_sub_steps_forces():
    """Joint forces, limit and motor efforts and the contacts' forces are their sub-steps'
    means: the impulses of the step over dt."""
    coarse, fine = pile_beside_an_arm(1 / 60, 4), pile_beside_an_arm(1 / 240, 1)
    for _ in range(45):
        coarse.step()
        wrenches, normal, friction = [], [], []
        for _ in range(4):
            fine.step()
            wrenches.append(joint_report(fine))
            normal.append(fine.contacts.normal_force.sum())
            friction.append(fine.contacts.friction_force.sum(axis=0))
        np.testing.assert_allclose(joint_report(coarse), np.mean(wrenches, axis=0),
                                   rtol=1e-9, atol=1e-9)
        assert coarse.contacts.normal_force.sum() == pytest.approx(np.mean(normal), rel=1e-9)
        np.testing.assert_allclose(coarse.contacts.friction_force.sum(axis=0),
                                   np.mean(friction, axis=0), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("substeps", [1, 4])
def test_a_box_landing_shows_its_impact_in_the_reported_forces(substeps):
    """A 2 kg box dropped 0.2 m onto the ground, or onto a slider's lower limit, at dt 1/60:
    the forces reported over 1 s sum to the weight's impulse m g T, less half a sub-step's
    weight (the first sub-step's half kick, which no force took back), and the step it lands
    in reports its impact, m v / dt more than its weight. (With 4 sub-steps the last one's
    forces alone were shown: 41 % of the impulse was missing, the impact never appeared.)"""
    dt, T, m = 1 / 60, 1.0, 2.0
    h = dt / substeps
    impact = m * np.sqrt(2 * 9.81 * 0.2) / dt
    for on_limit in (False, True):
        world = World(dt=dt, substeps=substeps)
        if on_limit:
            box = world.add_body(Box((0.1, 0.1, 0.1)), mass=m, position=(0, 0, 0.2))
            slider = world.add_joint(Slider(None, box, axis=(0, 0, 1), limits=(0.0, 1.0)))
            box.position = (0, 0, 0.4)

            def force():
                return slider.limit_effort
        else:
            world.add_body(Plane())
            box = world.add_body(Box((0.1, 0.1, 0.1)), mass=m, position=(0, 0, 0.3))

            def force():
                return world.contacts.normal_force.sum()
        forces = []
        for _ in range(round(T / dt)):
            world.step()
            forces.append(force())
        forces = np.abs(forces)
        assert np.sum(forces) * dt == pytest.approx(m * 9.81 * (T - h / 2), rel=1e-6)
        assert forces.max() > 0.5 * impact


def test_a_snapshot_keeps_the_forces_a_step_of_sub_steps_reported():
    world = pile_beside_an_arm(1 / 60, 4)
    world.step(20)
    state = world.get_state()
    shown = world.contacts
    world.step(3)
    world.set_state(state)
    for field in ("point", "normal_force", "friction_force", "body_a", "body_b"):
        assert np.array_equal(getattr(world.contacts, field), getattr(shown, field)), field
    assert_same_snapshot(world.get_state(), state)


def test_a_sleeping_pendulum_reports_its_load_with_sub_steps():
    """A 2 kg rod hanging still on a hinge falls asleep; its hinge, which then makes no rows,
    reports the m g it carried when it fell asleep, with sub-steps as without (the sub-steps'
    mean was 0 N for it)."""
    world = World(dt=1 / 60, substeps=4, sleeping=True)
    rod = world.add_body(Capsule(0.05, 0.4), mass=2.0, position=(0, 0, 0.5))
    hinge = world.add_joint(Hinge(None, rod, anchor=(0, 0, 1.0), axis=(0, 1, 0)))
    world.step(120)
    assert rod.asleep
    world.step()
    np.testing.assert_allclose(hinge.force, (0, 0, 2.0 * 9.81), atol=1e-6)
