"""World.profile: where the steps' time went, by stage of the pipeline (physics.stages)."""
import pytest

from physics import Ball, Box, Hinge, Plane, Sphere, StepError, World
from physics.stages import STAGES


def test_every_step_is_counted_and_its_time_split_among_the_stages():
    """A box dropped on the ground: the stages' seconds add up to the steps' total, each
    stage the pipeline ran took time, and reset_profile starts again from zero."""
    world = World()
    world.add_body(Plane())
    world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.3))
    world.step(60)
    profile = world.profile
    assert profile["steps"] == 60
    assert sum(profile[s] for s in STAGES) == pytest.approx(profile["total"], rel=1e-9)
    for stage in ("collide", "rows", "solve", "integrate", "other"):
        assert profile[stage] > 0, stage
    profile["total"] = -1.0                      # a copy: the world's own is untouched
    assert world.profile["total"] > 0
    world.reset_profile()
    assert world.profile == {"steps": 0, "total": 0.0, **dict.fromkeys(STAGES, 0.0)}
    world.step(2)
    assert world.profile["steps"] == 2


def test_the_rk4_integrator_counts_its_evaluations_as_integration():
    """World(integrator="rk4") evaluates rows and multipliers four times within its own
    sub-step: all of it is "integrate", none "solve"."""
    world = World(integrator="rk4")
    rod = world.add_body(Sphere(0.05), mass=1.0, position=(0.5, 0, 0))
    world.add_joint(Hinge(None, rod, anchor=(0, 0, 0), axis=(0, 1, 0)))
    world.step(30)
    profile = world.profile
    assert profile["solve"] == 0.0 and profile["integrate"] > 0.0
    assert sum(profile[s] for s in STAGES) == pytest.approx(profile["total"], rel=1e-9)


def test_a_failed_step_adds_its_time_but_not_a_step():
    """A step that raises StepError (an overflowing force) leaves the world as it was; its
    time still counts in the stages and the total, which keep adding up, and the steps do
    not count it."""
    world = World()
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, -0.5))
    world.add_joint(Ball(None, ball, anchor=(0, 0, 0)))
    world.step(3)
    ball.apply_force((1e308, 1e308, 0))
    with pytest.raises(StepError):
        world.step()
    profile = world.profile
    assert profile["steps"] == 3
    assert sum(profile[s] for s in STAGES) == pytest.approx(profile["total"], rel=1e-9)
