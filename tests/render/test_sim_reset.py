"""The viewer's R (Simulation.reset) runs a scene again from its start, also where the
scene's controller keeps state the world's snapshot does not hold. Window-free."""
import numpy as np

import scenes
from physics import Plane, Sphere, World
from render.sim import Simulation, as_scene, resolve_scene


def _run(sim, seconds):
    for _ in range(int(round(seconds / sim.world.dt))):
        sim.step_once()


def _simulation(spec):
    return Simulation(spec.world, spec.controller, rebuild=spec.rebuild)


def test_reset_shoots_the_box_pyramids_ball_again():
    sim = _simulation(as_scene(scenes.load("box_pyramid", base=3, shot_time=0.1)))
    _run(sim, 0.3)
    first = sim.world.positions.copy()
    shot = sim.world.body("ball").linear_velocity[0]
    assert shot > 5.0                         # shot at 8 m/s at 0.1 s, rolling into the boxes
    sim.reset()
    assert sim.world.time == 0.0
    assert sim.world.body("ball").linear_velocity[0] == 0.0
    _run(sim, 0.3)
    # (before: the controller remembered its shot; the ball lay still, 0 m/s, after R)
    assert sim.world.body("ball").linear_velocity[0] == shot
    np.testing.assert_array_equal(sim.world.positions, first)


def test_reset_starts_the_wrecking_balls_winch_at_its_time_again():
    spec = as_scene(scenes.load("wrecking_ball", winch_time=0.3))
    sim = _simulation(spec)

    def rope_lengths():
        lengths = []
        for k in range(int(round(0.8 / sim.world.dt))):
            sim.step_once()
            if k % 48 == 47:
                lengths.append(sim.world.joints[0].distance)
        return lengths

    first = rope_lengths()
    assert abs(first[0] - 5.0) < 1e-3 and 4.4 < first[-1] < 4.6   # reels in at 1 m/s from 0.3 s
    sim.reset()
    # (before: 4.81, 4.61, ...: the winch went on from where it was, and the rope's length
    # it had set was not in the snapshot)
    assert rope_lengths() == first


def test_reset_of_a_scene_list_entry_builds_it_again_and_keeps_sleeping():
    def build():
        world = World(dt=1 / 240)
        world.add_body(Plane(normal=(0, 0, 1), offset=0.0))
        ball = world.add_body(Sphere(radius=0.1), mass=1.0, position=(0, 0, 1.0))
        pushed = []

        def controller(w):          # one push up, the first step only
            if not pushed:
                pushed.append(w.time)
                ball.apply_force((0.0, 0.0, 2400.0))
        return world, "push", None, controller

    sim = _simulation(resolve_scene(build))
    _run(sim, 0.1)
    height = sim.world.positions[1, 2]
    assert height > 1.3            # 2400 N for 1/240 s: 10 m/s up (gravity alone: 0.95 m)
    sim.world.sleeping = True                  # (the Z key)
    sim.reset()
    assert sim.world.sleeping
    _run(sim, 0.1)
    assert sim.world.positions[1, 2] == height


def test_reset_of_a_world_without_a_way_to_rebuild_restores_its_snapshot():
    world = World(dt=1 / 240)
    world.add_body(Sphere(radius=0.1), mass=1.0, position=(0, 0, 1.0))
    calls = []

    class Controller:
        def __call__(self, w):
            pass

        def reset(self):
            calls.append(1)

    sim = Simulation(world, Controller())
    _run(sim, 0.1)
    sim.reset()
    assert sim.world is world and world.time == 0.0 and calls == [1]
    assert world.positions[0, 2] == 1.0
