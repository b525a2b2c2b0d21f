"""The mouse's drag spring (render.sim.DragSpring), without a window: it tracks the cursor
firmly without overshooting it, lifts what the grabbed body is joined to, and a long drag does
not fling the body."""
import numpy as np
import pytest

from physics import Box, Plane, World
from render.sim import DragSpring, Simulation


def _pull(world, body, offset, seconds):
    """Grab ``body`` at its centre, put the cursor at ``offset`` from there and step for
    ``seconds``; returns (drag, positions of the grab point per step, the Simulation)."""
    sim = Simulation(world)
    drag = DragSpring(body, body.position.copy())
    sim.drag = drag
    drag.target = body.position + np.asarray(offset, float)
    path = []
    for _ in range(int(round(seconds / world.dt))):
        sim.step_once()
        path.append(drag.grab_point_world())
    return drag, np.array(path), sim


@pytest.mark.parametrize("pull", [0.3, 3.0, 10.0])
def test_a_box_pulled_up_does_not_overshoot_the_cursor(pull):
    world = World(dt=1 / 240)
    world.add_body(Plane())
    box = world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0.2))
    z0 = box.position[2]
    drag, path, _ = _pull(world, box, (0, 0, pull), 2.5 + pull / 5.0)
    rise = path[:, 2] - z0
    assert rise.max() < pull * 1.03, f"overshoot {100 * (rise.max() / pull - 1):.1f} %"
    assert abs(rise[-1] - pull) < 0.02 * pull + 0.005        # and gets there (no sag)


def test_a_long_drag_moves_the_body_at_a_bounded_speed():
    world = World(gravity=(0, 0, 0), dt=1 / 240)
    box = world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 0))
    drag, path, _ = _pull(world, box, (30.0, 0, 0), 1.0)
    speed = np.linalg.norm(np.diff(path, axis=0), axis=1) / world.dt
    assert speed.max() < 1.05 * drag.max_speed
    assert world.energy() < 0.5 * 1.0 * (1.05 * drag.max_speed) ** 2


def test_a_ragdoll_lifted_by_its_hand_reaches_the_cursor():
    from tools import load_scene
    scene = load_scene("ragdoll_pile", count=1)
    world = scene.world
    hand = next(b for b in world.bodies if b.name == "doll0/hand_l")
    assert sum(not b.static for b in world.bodies) == 15
    world.step(int(0.25 / world.dt))                 # let it drop a little first
    drag, path, _ = _pull(world, hand, (0, 0, 1.0), 2.0)
    assert drag.mass == pytest.approx(70.0, rel=0.05)   # the whole doll, not 10x the hand
    assert np.linalg.norm(path[-1] - drag.target) < 0.05


def test_a_long_car_drag_keeps_the_energy_bounded():
    from tools import load_scene
    world = load_scene("car").world
    chassis = next(b for b in world.bodies if b.name == "chassis")
    e0 = world.energy()
    offset = np.array([6.0, 7.0, 9.0])               # a 13 m pull, up and away
    drag, path, sim = _pull(world, chassis, offset, 1.5)
    speeds = [np.linalg.norm(world.bodies[k].linear_velocity) for k in drag.island]
    assert max(speeds) < 1.5 * drag.max_speed
    lift = drag.mass * 9.81 * offset[2]
    assert world.energy() < e0 + lift + 0.5 * drag.mass * (1.5 * drag.max_speed) ** 2


def test_a_body_locked_to_another_is_dragged_as_itself():
    """A RotationLock joins no point of its two bodies: the pull is sized for the grabbed
    body's mass, and the other keeps its place (it only turns with the grabbed one)."""
    from physics import RotationLock, Sphere
    world = World(gravity=(0, 0, 0), dt=1 / 240)
    ball = world.add_body(Sphere(0.2), mass=1.0, position=(0, 0, 0))
    crate = world.add_body(Box((0.2, 0.2, 0.2)), mass=20.0, position=(2.0, 0, 0))
    world.add_joint(RotationLock(crate, ball))
    drag, path, _ = _pull(world, ball, (0, 1.0, 0), 2.0)
    assert drag.mass == 1.0
    assert np.linalg.norm(path[-1] - drag.target) < 0.02
    np.testing.assert_allclose(crate.position, (2.0, 0, 0), atol=1e-12)
