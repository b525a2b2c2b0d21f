"""Overlap queries name the bodies a shape placed somewhere would touch (physics.overlap),
checked against each pair's distance worked out by hand."""
import numpy as np
import pytest

from physics import Box, Capsule, Plane, Sphere, World


def test_a_sphere_query_finds_exactly_the_spheres_and_boxes_it_reaches():
    """200 random probes of radius 0.3 m among 30 spheres and 30 turned boxes: a body is
    named where the probe's centre lies within the probe's radius of its surface."""
    rng = np.random.default_rng(3)
    world = World(gravity=(0, 0, 0))
    centres = rng.uniform(-3, 3, size=(60, 3))
    radii = rng.uniform(0.1, 0.4, size=30)
    half = rng.uniform(0.1, 0.4, size=(30, 3))
    turns = rng.normal(size=(30, 4))
    turns /= np.linalg.norm(turns, axis=1, keepdims=True)
    for c, r in zip(centres[:30], radii):
        world.add_body(Sphere(r), mass=1.0, position=c)
    boxes = [world.add_body(Box(h), mass=1.0, position=c, orientation=q)
             for c, h, q in zip(centres[30:], half, turns)]
    found = 0
    for probe in rng.uniform(-3, 3, size=(200, 3)):
        named = {b.index for b in world.overlapping(Sphere(0.3), probe)}
        gap_spheres = np.linalg.norm(centres[:30] - probe, axis=1) - radii
        local = np.einsum("nji,nj->ni", np.array([b.rotation for b in boxes]),
                          probe - centres[30:])
        gap_boxes = np.linalg.norm(np.clip(np.abs(local) - half, 0.0, None), axis=1)
        expected = set(np.flatnonzero(np.concatenate([gap_spheres, gap_boxes]) <= 0.3))
        # (a body within a micrometre of grazing may go either way)
        grazing = set(np.flatnonzero(np.abs(np.concatenate([gap_spheres, gap_boxes]) - 0.3)
                                     < 1e-6))
        assert named - grazing == expected - grazing, probe
        found += len(expected)
    assert found > 30


def test_an_overlap_query_honours_the_mask_and_meets_planes_and_moves_nothing():
    world = World()
    ground = world.add_body(Plane())
    crate = world.add_body(Box((0.5, 0.5, 0.5)), mass=1.0, position=(0, 0, 0.5))
    crate.collision_group = 2
    before = world.get_state()
    assert world.overlapping(Capsule(0.2, 1.0), (0, 0, 0.5)) == [ground, crate]
    assert world.overlapping(Capsule(0.2, 1.0), (0, 0, 0.5), mask=2) == [crate]
    assert world.overlapping(Sphere(0.1), (0, 0, 1.2)) == []
    # turned upright, the capsule reaches the ground from 1.15 m up; lying, it does not
    assert world.overlapping(Capsule(0.2, 1.0), (3, 0, 1.15)) == [ground]
    lying = (np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0)
    assert world.overlapping(Capsule(0.2, 1.0), (3, 0, 1.15), orientation=lying) == []
    assert len(world.bodies) == 2
    np.testing.assert_array_equal(world.get_state()["x"], before["x"])


@pytest.mark.parametrize("call, words", [
    (lambda w: w.overlapping(Plane(), (0, 0, 0)), r"^shape must be a Sphere, Box, Capsule or "
                                                  r"Cylinder"),
    (lambda w: w.overlapping("ball", (0, 0, 0)), r"^shape must be"),
    (lambda w: w.overlapping(Sphere(1.0), (0, np.nan, 0)), r"^position must be finite"),
    (lambda w: w.overlapping(Sphere(1.0), (0, 0, 0), orientation=(0, 0, 0, 0)),
     r"^orientation must be a unit quaternion"),
    (lambda w: w.overlapping(Sphere(1.0), (0, 0, 0), mask="all"), r"^mask must be an integer"),
])
def test_bad_overlap_queries_are_refused_by_name(call, words):
    world = World()
    world.add_body(Sphere(0.5), mass=1.0)
    with pytest.raises(ValueError, match=words):
        call(world)
