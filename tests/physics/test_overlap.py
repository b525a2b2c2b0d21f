"""Overlap queries name the bodies a shape placed somewhere would touch (physics.overlap),
checked against each pair's distance worked out by hand."""
import numpy as np
import pytest

from physics import Box, Capsule, Cylinder, Plane, Sphere, World


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


def _z_onto(direction):
    """The unit quaternion (w, x, y, z) turning the body's z axis onto ``direction``."""
    d = np.asarray(direction, dtype=float) / np.linalg.norm(direction)
    half = np.arccos(np.clip(d[2], -1.0, 1.0)) / 2.0
    axis = np.cross((0.0, 0.0, 1.0), d)
    if np.linalg.norm(axis) < 1e-12:
        return (1.0, 0.0, 0.0, 0.0)
    return (np.cos(half), *(np.sin(half) * axis / np.linalg.norm(axis)))


@pytest.mark.parametrize("degrees", [90, 60, 30, 10])
def test_a_cylinder_through_a_wall_overlaps_it(degrees):
    """A rod (r 1 cm, half length 0.35 m) through the middle of a 2 cm wall at an angle to
    it, both its caps outside, no edge of the wall near: it overlaps the wall, as a capsule
    does. Nothing was named before (no rim point, corner or edge of either was in the
    other); nor was a log (r 0.2 m) end-on through a 1 m or 4 m wall. Moved 1 mm clear of
    the wall's face (by its reach across the wall, 0.35 sin + 0.01 cos), nothing is."""
    world = World()
    wall = world.add_body(Box((0.01, 1.0, 1.0)), static=True)
    a = np.radians(degrees)
    turn = _z_onto((np.sin(a), np.cos(a), 0.0))
    assert world.overlapping(Cylinder(0.01, 0.35), (0, 0, 0), orientation=turn) == [wall]
    assert world.overlapping(Capsule(0.01, 0.35), (0, 0, 0), orientation=turn) == [wall]
    reach = 0.35 * np.sin(a) + 0.01 * np.cos(a)
    assert world.overlapping(Cylinder(0.01, 0.35), (-0.011 - reach, 0, 0),
                             orientation=turn) == []
    for face in (1.0, 4.0):
        world = World()
        wall = world.add_body(Box((0.01, face / 2, face / 2)), static=True)
        assert world.overlapping(Cylinder(0.2, 1.0), (0, 0.1, 0),
                                 orientation=_z_onto((1, 0, 0))) == [wall]


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
