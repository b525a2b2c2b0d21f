"""Hybrid motion-force (the null-space projection's whiteboard example): the arm's joint torques
come from the constrained inverse dynamics of its joint-space view with the board's multiplier
set to the pushing force; simulated in the maximal-coordinate engine, the eraser follows the
wiping path and the board pushes back with that force."""
import numpy as np
import pytest

import scenes
from scenes.whiteboard import NORMAL, wipe_motion, wipe_point


def test_wipe_motion_derivatives():
    for t in (0.3, 0.7, 2.0, 4.4):   # not across the end of the ramp (1 s)
        p, v, a = wipe_motion(t, 0.25, 0.12, 5.0)
        e = 1e-5
        pp, vp, _ = wipe_motion(t + e, 0.25, 0.12, 5.0)
        pm, vm, _ = wipe_motion(t - e, 0.25, 0.12, 5.0)
        np.testing.assert_allclose(p, wipe_point(t, 0.25, 0.12, 5.0), atol=1e-15)
        np.testing.assert_allclose((pp - pm) / (2 * e), v, atol=1e-8)
        np.testing.assert_allclose((vp - vm) / (2 * e), a, atol=1e-6)


def test_eraser_follows_the_wiping_path_pushing_with_10_newtons():
    """A full wiping stroke (the 1 s ramp and one 5 s figure eight): the eraser tip within
    1 mm of the path point at every step, the constraint's force 10 N within 2 % at every
    step after the first 0.1 s."""
    scene = scenes.load("whiteboard")
    assert scene.params["press"] == 10.0
    world, wipe = scene.world, scene.controller
    contact = wipe.contact
    worst_path, worst_force, steps = 0.0, 0.0, 0
    y_range = [np.inf, -np.inf]
    while world.time < 6.0 - 1e-9:
        scene.step()
        steps += 1
        tip = contact.anchor
        worst_path = max(worst_path, np.linalg.norm(tip - scene.controller.path(world.time)))
        y_range = [min(y_range[0], tip[1]), max(y_range[1], tip[1])]
        force = contact.force
        if world.time > 0.1:
            worst_force = max(worst_force, abs(force @ NORMAL - 10.0) / 10.0)
            # frictionless: all of it along the board's normal
            assert np.linalg.norm(force - (force @ NORMAL) * NORMAL) < 1e-6
    assert steps == int(round(6.0 / world.dt))
    assert worst_path < 1e-3
    assert worst_force < 0.02
    assert abs(contact.distance) < 1e-6
    assert y_range[1] - y_range[0] > 0.45                 # it did wipe the whole width


def test_pushing_force_is_the_chosen_multiplier():
    scene = scenes.load("whiteboard", press=4.0)
    world = scene.world
    forces = []
    for _ in range(int(round(1.0 / world.dt))):
        scene.step()
        forces.append(scene.controller.contact.force @ NORMAL)
    assert np.asarray(forces[24:]) == pytest.approx(4.0, rel=0.02)
    assert scene.controller.measured_force == pytest.approx(4.0, rel=0.02)


def test_the_turret_sits_on_its_pillar_and_turns_without_touching_it():
    """The pillar's top was at 0.90 m and the turret's underside at 0.96 m: the turret
    floated 6 cm above it. Now they meet at 0.96 m, and no contact between them ever forms
    (friction there would fight the turret's turning) over a second of wiping."""
    scene = scenes.load("whiteboard")
    world = scene.world
    pillar, turret = world.body("pillar"), world.body("turret")
    top = pillar.position[2] + pillar.shape.half_length
    underside = turret.position[2] - turret.shape.half_length
    assert top == pytest.approx(0.96, abs=1e-12) and underside == pytest.approx(top, abs=1e-12)
    pair = {pillar.index, turret.index}
    for _ in range(240):
        scene.step()
        c = world.contacts
        assert not any({int(a), int(b)} == pair for a, b in zip(c.body_a, c.body_b))
