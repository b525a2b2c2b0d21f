"""The shared checks of user input (physics.validation): each refuses by the parameter's name."""
import re

import numpy as np
import pytest

from physics import Box, Hinge, Plane, Sphere, World
from physics.validation import check_unit_direction


def test_a_direction_with_huge_components_keeps_its_direction():
    """Its norm overflows to infinity: it was divided by that into a zero axis, silently
    (a Hinge's axis (0, 0, 0), a Plane's normal (0, 0, 0)). Zero, tiny and non-finite
    directions are still refused by name, and ordinary ones normalised to the same bits."""
    world = World()
    body = world.add_body(Sphere(0.1), mass=1.0)
    half = 2 ** -0.5
    for value, unit in (((1e300, 1e300, 0), (half, half, 0)),
                        ((-1e308, 0, 1e308), (-half, 0, half)),
                        ((0, 1.7e308, 0), (0, 1, 0))):
        np.testing.assert_allclose(check_unit_direction("axis", value), unit, rtol=1e-15)
        np.testing.assert_allclose(Plane(normal=value).normal, unit, rtol=1e-15)
        hinge = world.add_joint(Hinge(None, body, axis=value))
        np.testing.assert_allclose(hinge.axis, unit, rtol=1e-15)
        world.remove_joint(hinge)
    for value, message in (((0, 0, 0), "normal must be a non-zero direction"),
                           ((1e-12, 0, 0), "normal must be a non-zero direction"),
                           ((np.nan, 1e300, 0), "normal must be finite"),
                           ((np.inf, 0, 0), "normal must be finite")):
        with pytest.raises(ValueError, match=message):
            Plane(normal=value)
    v = np.array([0.3, -0.4, 1.2])
    assert check_unit_direction("axis", v).tobytes() == (v / np.linalg.norm(v)).tobytes()


@pytest.mark.parametrize("make, words", [
    (lambda w, b: Sphere(10 ** 400), "radius must be finite, got a number beyond"),
    (lambda w, b: w.add_body(Sphere(1.0), mass=10 ** 400), "mass must be finite"),
    (lambda w, b: setattr(w.add_joint(Hinge(None, b)), "limits", (-10 ** 400, 1)),
     "limits must be finite"),
    (lambda w, b: setattr(w.add_joint(Hinge(None, b)), "limits", ("-1", "1")),
     "limits must be a number"),
    # (an infinite bound is a one-sided limit: "must be finite" said the opposite)
    (lambda w, b: setattr(w.add_joint(Hinge(None, b)), "limits", (float("nan"), 1)),
     r"limits must be numbers, not NaN \(an infinite bound is a one-sided limit\)"),
    (lambda w, b: setattr(w.add_joint(Hinge(None, b)), "limits", (False, True)),
     "limits must be a number"),
    (lambda w, b: w.apply_forces([[1.0, 0, 0]], bodies=10 ** 400), r"bodies\[0\] is 1000"),
    (lambda w, b: setattr(w, "dt", 1e200), "dt must be at most 10 s"),
    (lambda w, b: World(dt=1e300), "dt must be at most 10 s"),
    (lambda w, b: setattr(w, "substeps", 10 ** 20), "substeps must be at most 1000"),
])
def test_numbers_beyond_the_floats_or_the_steps_sense_are_refused_by_name(make, words):
    """An int beyond the largest float raised a bare OverflowError naming nothing; limits took
    strings and booleans; dt 1e300 overflowed in its Baumgarte terms; 10**20 sub-steps were
    taken, and the step never returned."""
    world = World()
    body = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 1))
    with pytest.raises(ValueError, match=words):
        make(world, body)


def test_a_damaged_limit_snapshot_is_refused_by_name():
    world = World()
    body = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 1))
    world.add_joint(Hinge(None, body, anchor=(0, 0, 2), axis=(1, 0, 0), limits=(-1, 1)))
    state = world.get_state()
    state["limit_multipliers"] = {}
    with pytest.raises(ValueError, match=r"state\['limit_multipliers'\] is malformed"):
        world.set_state(state)


@pytest.mark.parametrize("make", [
    lambda w: w.add_body(Sphere(0.1), mass=1e12),
    lambda w: w.add_body(Sphere(1.0), density=1e9),
    lambda w: setattr(w.add_body(Sphere(0.1), mass=1.0), "mass", 1e9),
])
def test_a_body_too_heavy_for_contacts_to_hold_is_refused_by_name(make):
    """A 0.2 m box of 1e12 kg fell through the ground (contacts hold it with the solver's
    absolute regularisation beside its stiffness 1 / m); 1e8 kg is the most a dynamic body
    may weigh, and the message points to static=True."""
    with pytest.raises(ValueError, match=r"mass.*at most 1e\+08 kg.*static=True"):
        make(World())


def test_a_box_of_the_heaviest_mass_allowed_rests_on_the_ground():
    world = World()
    world.add_body(Plane())
    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1e8, position=(0, 0, 0.1))
    world.step(240)
    assert 0.1 - box.position[2] < 5e-4



def test_a_vector_with_none_or_a_list_among_its_numbers_is_refused_as_not_numbers():
    """Box([1, None, 3]) said half_extents 'must be finite (no NaN or infinity)': the None
    had become NaN. Any entry that is not a real number is now refused as such; numpy's
    own numbers among Python ones are still taken."""
    for value in ([1, None, 3], [1, [2], 3], (0, "1", 0)):
        with pytest.raises(ValueError, match=rf"^half_extents must be 3 real numbers, got "
                                             rf"{re.escape(repr(value))}$"):
            Box(value)
    with pytest.raises(ValueError, match=r"^position must be 3 real numbers, got \(0, None, 1\)$"):
        World().add_body(Sphere(0.1), mass=1.0, position=(0, None, 1))
    assert Box((np.float32(0.5), 1, np.int64(2))).half_extents == (0.5, 1.0, 2.0)


def test_a_bool_among_a_vectors_numbers_is_refused():
    """(True, False, True) was refused, but Box((True, 1, 1)) and position=(True, 0, 0) were
    taken as 1: numpy reads a bool among ints as an int (and among floats as a float)."""
    for value in ((True, 1, 1), [1.5, True, 3], (np.True_, 0, 0)):
        with pytest.raises(ValueError, match=rf"^half_extents must be 3 real numbers, got "
                                             rf"{re.escape(repr(value))}$"):
            Box(value)
    world = World()
    for kwargs, message in (
            (dict(position=(True, 0, 0)), r"^position must be 3 real numbers, got \(True, 0, 0\)"),
            (dict(linear_velocity=[0.5, False, 0]), r"^linear_velocity must be 3 real numbers"),
            (dict(inertia=[[1, 0, 0], [0, True, 0], [0, 0, 1]]),
             r"^inertia must be a 3x3 matrix or 3 diagonal values, got \[\[1, 0, 0\], \[0, True")):
        with pytest.raises(ValueError, match=message):
            world.add_body(Sphere(0.1), mass=1.0, **kwargs)
    assert len(world.bodies) == 0
    body = world.add_body(Sphere(0.1), mass=1.0, position=(1, 0.5, np.int64(2)))
    assert body.position.tolist() == [1.0, 0.5, 2.0]
