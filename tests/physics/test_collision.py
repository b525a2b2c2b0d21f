"""Specification of collision detection (physics.collision.find_contacts).

Conventions checked here: normals point from body_a to body_b, planes are always body_a,
depth > 0 means overlap, and each contact point lies midway between the two surfaces, so
that point + normal * depth / 2 is on a's surface and point - normal * depth / 2 on b's.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from physics.collision import ContactSet, find_contacts, find_contacts_with_cache
from physics.collision import broadphase
from physics.collision.broadphase import PairCache, find_pairs, kind_groups, sweep_and_prune
from physics.collision.sdf import box_distance, box_segment_deepest
from physics.shapes import BOX, CAPSULE, CYLINDER, NO_SHAPE, PLANE, SPHERE

Z_UP = (0.0, 0.0, 1.0)


def rot(axis="z", degrees=0.0):
    return Rotation.from_euler(axis, degrees, degrees=True).as_matrix()


def body(kind, params, pos=(0, 0, 0), R=None, static=False):
    return dict(kind=kind, params=np.r_[params, np.zeros(4 - len(params))], pos=pos,
                R=np.eye(3) if R is None else R, static=static)


def plane(normal=Z_UP, offset=0.0):
    return body(PLANE, [*normal, offset], static=True)


def sphere(r, pos, **kw):
    return body(SPHERE, [r], pos, **kw)


def box(half, pos, **kw):
    return body(BOX, half, pos, **kw)


def capsule(r, hl, pos, **kw):
    return body(CAPSULE, [r, hl], pos, **kw)


def cylinder(r, hl, pos, **kw):
    return body(CYLINDER, [r, hl], pos, **kw)


def arrays(*bodies):
    kind = np.array([b["kind"] for b in bodies])
    params = np.array([b["params"] for b in bodies], dtype=float)
    pos = np.array([b["pos"] for b in bodies], dtype=float)
    R = np.array([b["R"] for b in bodies], dtype=float)
    static = np.array([b["static"] for b in bodies])
    return kind, params, pos, R, static


def collide(*bodies, margin=0.0, group=None, mask=None, excluded=(), velocity=None, dt=None):
    kind, params, pos, R, static = arrays(*bodies)
    n = len(kind)
    return find_contacts(kind, params, pos, R, static=static,
                         group=np.ones(n, int) if group is None else np.asarray(group),
                         mask=np.ones(n, int) if mask is None else np.asarray(mask),
                         excluded_pairs=np.array(excluded, dtype=int).reshape(-1, 2),
                         margin=margin, velocity=velocity, dt=dt)


# --- planes ---------------------------------------------------------------------------------

def test_sphere_sinking_into_ground_plane():
    c = collide(plane(), sphere(0.5, (1.0, 2.0, 0.4)))
    assert len(c) == 1
    assert (c.body_a[0], c.body_b[0]) == (0, 1)          # the plane is body a
    np.testing.assert_allclose(c.depth, [0.1])
    np.testing.assert_allclose(c.normal, [[0, 0, 1]])
    np.testing.assert_allclose(c.point, [[1.0, 2.0, -0.05]])  # midway: plane 0, sphere -0.1
    assert c.point.dtype == np.float64 and c.feature.dtype == np.int64


def test_tilted_plane_with_offset():
    n = np.array([0.0, 0.6, 0.8])
    c = collide(plane(n, 1.0), sphere(0.5, n * 1.3))       # centre 0.3 above the plane
    np.testing.assert_allclose(c.depth, [0.2])
    np.testing.assert_allclose(c.normal, [n])


def test_box_resting_on_plane_gives_its_four_bottom_corners():
    c = collide(plane(), box((0.5, 0.3, 0.2), (0.0, 0.0, 0.19)))
    assert len(c) == 4
    np.testing.assert_allclose(c.depth, 0.01)
    np.testing.assert_allclose(np.sort(np.abs(c.point[:, :2]), axis=0), [[0.5, 0.3]] * 4)
    np.testing.assert_allclose(c.point[:, 2], -0.005)
    assert len(set(c.feature)) == 4


def test_box_on_one_corner_and_within_margin():
    R = Rotation.from_euler("xy", [30, 20], degrees=True).as_matrix()
    b = box((0.5, 0.3, 0.2), (0.0, 0.0, 0.5), R=R)
    lowest = 0.5 - np.abs(R).dot([0.5, 0.3, 0.2])[2]
    c = collide(plane(), b)
    assert len(c) == 0 if lowest > 0 else len(c) >= 1
    c = collide(plane(), b, margin=lowest + 1e-9)
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [-lowest])


def test_capsule_lying_on_plane_gives_both_end_spheres():
    c = collide(plane(), capsule(0.2, 0.5, (0.0, 0.0, 0.19), R=rot("y", 90)))
    assert len(c) == 2
    np.testing.assert_allclose(np.sort(c.point[:, 0]), [-0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(c.depth, 0.01)


def test_standing_capsule_touches_with_its_lower_end_only():
    c = collide(plane(), capsule(0.2, 0.5, (0.0, 0.0, 0.69)))
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [0.01])


def test_cylinder_on_plane_standing_lying_and_tilted():
    standing = collide(plane(), cylinder(0.3, 0.5, (0, 0, 0.49)))
    assert len(standing) == 4
    np.testing.assert_allclose(standing.depth, 0.01)
    np.testing.assert_allclose(np.hypot(*standing.point[:, :2].T), 0.3)

    lying = collide(plane(), cylinder(0.3, 0.5, (0, 0, 0.29), R=rot("x", 90)))
    assert len(lying) == 2
    np.testing.assert_allclose(lying.depth, 0.01)
    np.testing.assert_allclose(np.sort(lying.point[:, 1]), [-0.5, 0.5], atol=1e-12)

    reach = 0.5 * np.cos(np.pi / 6) + 0.3 * np.sin(np.pi / 6)   # lowest rim point below centre
    assert len(collide(plane(), cylinder(0.3, 0.5, (0, 0, reach + 0.001), R=rot("x", 30)))) == 0
    tilted = collide(plane(), cylinder(0.3, 0.5, (0, 0, reach - 0.01), R=rot("x", 30)))
    assert len(tilted) == 1
    np.testing.assert_allclose(tilted.depth, [0.01])
    # Buried whole (a coin, r 1 cm, 1 mm thick, tilted 15 degrees, its highest rim point
    # 2 mm under the ground): every rim point is a contact, around its centre, not the low
    # side's alone (whose push-out turned it about its centre and sent the other side down)
    coin_reach = 0.01 * np.sin(np.radians(15)) + 0.0005 * np.cos(np.radians(15))
    buried = collide(plane(), cylinder(0.01, 0.0005, (0, 0, -coin_reach - 0.002),
                                       R=rot("x", 15)))
    assert len(buried) == 10
    assert buried.depth.min() == pytest.approx(0.002, abs=1e-12)
    assert buried.point[:, 1].min() < -0.009 and buried.point[:, 1].max() > 0.009


# --- spheres and capsules -------------------------------------------------------------------

def test_two_spheres():
    c = collide(sphere(0.5, (0, 0, 0)), sphere(0.3, (0.7, 0, 0)))
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [0.1])
    n_from_a = c.normal[0] if c.body_a[0] == 0 else -c.normal[0]
    np.testing.assert_allclose(n_from_a, [1, 0, 0])
    np.testing.assert_allclose(c.point, [[0.45, 0, 0]])    # a's surface 0.5, b's 0.4


def test_crossed_capsules_touch_at_one_point():
    c = collide(capsule(0.1, 1.0, (0, 0, 0), R=rot("y", 90)),
                capsule(0.1, 1.0, (0.3, 0.2, 0.15), R=rot("x", 90)))
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [0.05])
    np.testing.assert_allclose(c.point, [[0.3, 0, 0.075]], atol=1e-12)


def test_parallel_capsules_give_the_ends_of_their_overlap():
    c = collide(capsule(0.1, 1.0, (0, 0, 0), R=rot("y", 90)),
                capsule(0.1, 0.5, (0.8, 0, 0.19), R=rot("y", 90)))
    assert len(c) == 2
    np.testing.assert_allclose(np.sort(c.point[:, 0]), [0.3, 1.0])
    np.testing.assert_allclose(c.depth, 0.01)


# --- boxes ----------------------------------------------------------------------------------

def test_sphere_against_box_face_edge_and_inside():
    ground = box((1, 1, 0.5), (0, 0, 0), static=True)
    face = collide(ground, sphere(0.2, (0.3, 0.4, 0.65)))
    np.testing.assert_allclose(face.depth, [0.05])
    np.testing.assert_allclose(face.normal, [[0, 0, 1]])     # box (a) -> sphere (b)
    edge = collide(ground, sphere(0.2, (1.1, 0, 0.6)))
    np.testing.assert_allclose(edge.depth, [0.2 - np.sqrt(0.02)])
    np.testing.assert_allclose(edge.normal, [[np.sqrt(0.5), 0, np.sqrt(0.5)]])
    inside = collide(ground, sphere(0.2, (0.0, 0.0, 0.4)))   # centre 0.1 below the top
    np.testing.assert_allclose(inside.depth, [0.3])
    np.testing.assert_allclose(inside.normal, [[0, 0, 1]])


def test_capsule_lying_on_box_and_overhanging_its_edge():
    ground = box((1, 1, 0.5), (0, 0, 0), static=True)
    c = collide(ground, capsule(0.1, 0.6, (0.0, 0.0, 0.59), R=rot("y", 90)))
    assert len(c) == 2
    np.testing.assert_allclose(np.sort(c.point[:, 0]), [-0.6, 0.6])
    np.testing.assert_allclose(c.depth, 0.01)
    over = collide(ground, capsule(0.1, 0.6, (0.8, 0.0, 0.59), R=rot("y", 90)))
    assert len(over) == 2                                   # one end and the box edge
    np.testing.assert_allclose(np.sort(over.point[:, 0]), [0.2, 1.0])
    np.testing.assert_allclose(over.normal, [[0, 0, 1]] * 2)


def test_small_box_resting_on_big_box():
    c = collide(box((1, 1, 0.5), (0, 0, 0), static=True), box((0.2, 0.3, 0.1), (0.1, 0, 0.59)))
    assert len(c) == 4
    np.testing.assert_allclose(c.depth, 0.01)
    np.testing.assert_allclose(np.sort(c.point[:, 0]), [-0.1, -0.1, 0.3, 0.3])
    np.testing.assert_allclose(c.normal, [[0, 0, 1]] * 4)


def test_box_rotated_45_degrees_on_box_is_clipped_to_the_overlap():
    bottom = box((1, 1, 0.5), (0, 0, 0), static=True)
    top = box((0.9, 0.9, 0.25), (0, 0, 0.74), R=rot("z", 45))
    c = collide(bottom, top)
    # The overlap of the 2 x 2 square and the rotated square is an octagon: 4 of its corners.
    assert len(c) == 4
    np.testing.assert_allclose(c.depth, 0.01)
    np.testing.assert_allclose(c.normal, [[0, 0, 1]] * 4)
    np.testing.assert_allclose(c.point[:, 2], 0.495)
    x, y = c.point[:, 0], c.point[:, 1]
    tol = 1e-9
    assert np.all(np.abs(x) <= 1 + tol) and np.all(np.abs(y) <= 1 + tol)
    assert np.all(np.abs(x) + np.abs(y) <= 0.9 * np.sqrt(2) + tol)
    # Spread over the octagon, not bunched on one side.
    assert np.ptp(x) > 1.0 and np.ptp(y) > 1.0


def test_box_edge_across_box_edge_gives_one_point():
    a = box((0.5, 0.5, 0.5), (0, 0, 0), R=rot("y", 45))         # top edge along y
    b = box((0.5, 0.5, 0.5), (0, 0, 2 * np.sqrt(0.5) - 0.02), R=rot("x", 45))  # bottom along x
    c = collide(a, b)
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [0.02], atol=1e-12)
    np.testing.assert_allclose(c.point, [[0, 0, np.sqrt(0.5) - 0.01]], atol=1e-12)
    np.testing.assert_allclose(np.abs(c.normal), [[0, 0, 1]], atol=1e-12)


def test_a_level_capsule_overhanging_a_face_on_both_sides_lies_on_both_edges():
    """A capsule lying level across a box's face or a cylinder's cap and past both edges is as
    deep all along the face: two contacts at the edges, the clipped segment's ends, as for a
    capsule within the face. Before, the search for its deepest point ended at one end of that
    flat stretch, on an edge, and gave one contact there (at x = -0.1, then +0.1: the capsule
    rocked on it for ever). Also tilted within PARALLEL_SINE, and along a cylinder's side
    past both caps."""
    for ground in (box((0.1, 0.1, 0.1), (0, 0, 0), static=True),
                   cylinder(0.1, 0.1, (0, 0, 0), static=True)):
        c = collide(ground, capsule(0.05, 0.2, (0, 0, 0.149), R=rot("y", 90)))
        assert len(c) == 2
        np.testing.assert_allclose(np.sort(c.point[:, 0]), [-0.1, 0.1])
        np.testing.assert_allclose(c.depth, 0.001)
        np.testing.assert_allclose(c.normal, [[0, 0, 1]] * 2, atol=1e-12)
    tilted = collide(box((0.1, 0.1, 0.1), (0, 0, 0), static=True),
                     capsule(0.05, 0.2, (0, 0, 0.149), R=rot("y", 90.5)))    # +x end lower
    order = np.argsort(tilted.point[:, 0])
    np.testing.assert_allclose(tilted.point[order, 0], [-0.1, 0.1])
    np.testing.assert_allclose(tilted.depth[order],
                               0.001 + np.array([-0.1, 0.1]) * np.tan(np.radians(0.5)))
    np.testing.assert_allclose(tilted.normal, [[0, 0, 1]] * 2, atol=1e-12)
    along = collide(cylinder(0.1, 0.1, (0, 0, 0), static=True), capsule(0.05, 0.2, (0.149, 0, 0)))
    assert len(along) == 2
    np.testing.assert_allclose(np.sort(along.point[:, 2]), [-0.1, 0.1])
    np.testing.assert_allclose(along.depth, 0.001)
    np.testing.assert_allclose(along.normal, [[1, 0, 0]] * 2, atol=1e-12)


# --- cylinders ------------------------------------------------------------------------------

def test_cylinder_against_boxes_spheres_and_capsules():
    ground = box((1, 1, 0.5), (0, 0, 0), static=True)
    standing = collide(ground, cylinder(0.3, 0.4, (0, 0, 0.89)))
    assert len(standing) == 4
    np.testing.assert_allclose(standing.depth, 0.01)
    lying = collide(ground, cylinder(0.3, 0.4, (0, 0, 0.79), R=rot("x", 90)))
    assert len(lying) == 2
    np.testing.assert_allclose(lying.depth, 0.01)
    # Box resting on the top cap of a cylinder: its 4 bottom corners.
    on_cap = collide(cylinder(0.5, 0.5, (0, 0, 0), static=True), box((0.2, 0.2, 0.1), (0, 0, 0.59)))
    assert len(on_cap) == 4
    np.testing.assert_allclose(on_cap.depth, 0.01)
    np.testing.assert_allclose(on_cap.normal, [[0, 0, 1]] * 4)

    cyl = cylinder(0.5, 0.5, (0, 0, 0), static=True)
    side = collide(cyl, sphere(0.2, (0.6, 0, 0.1)))
    np.testing.assert_allclose(side.depth, [0.1])
    np.testing.assert_allclose(side.normal, [[1, 0, 0]])
    flat = collide(cyl, capsule(0.1, 0.3, (0.0, 0.0, 0.59), R=rot("y", 90)))
    assert len(flat) == 2
    np.testing.assert_allclose(flat.depth, 0.01)
    stacked = collide(cyl, cylinder(0.3, 0.2, (0, 0, 0.69)))
    assert len(stacked) == 4
    np.testing.assert_allclose(stacked.depth, 0.01)


@pytest.mark.parametrize("degrees", [90, 60, 30, 10])
def test_a_cylinder_through_a_wall_is_pushed_out_the_shorter_way(degrees):
    """A rod (r 1 cm, half length 0.35 m) through a 2 cm wall at an angle to it, its centre
    2 mm on the wall's -x side, both caps outside and no wall edge near: one contact, as deep
    as the rod reaches across the wall's -x face (0.35 sin + 0.01 cos + 0.01 - 0.002), normal
    +x (rod towards wall), at the rod's point furthest along +x. Before: no contact at all
    (no rim point, corner or edge of either lay in the other). A lying cylinder on a box
    keeps its two contacts (``test_cylinder_against_boxes_spheres_and_capsules``)."""
    a = np.radians(degrees)
    axis = np.array([np.sin(a), np.cos(a), 0.0])
    turn = Rotation.align_vectors([axis], [[0.0, 0.0, 1.0]])[0].as_matrix()
    centre = np.array([-0.002, 0.0, 0.0])
    c = collide(box((0.01, 1.0, 1.0), (0, 0, 0), static=True),
                cylinder(0.01, 0.35, centre, R=turn))
    assert len(c) == 1 and (c.body_a[0], c.body_b[0]) == (1, 0)      # the cylinder is a
    reach = 0.35 * np.sin(a) + 0.01 * np.cos(a)
    np.testing.assert_allclose(c.depth, [reach + 0.008], rtol=1e-12)
    np.testing.assert_allclose(c.normal, [[1, 0, 0]], atol=1e-12)
    across = np.array([1.0, 0, 0]) - np.sin(a) * axis       # (cos a long: 0 end-on)
    furthest = centre + 0.35 * axis + 0.01 * across / max(np.cos(a), 1e-300) * (degrees < 90)
    np.testing.assert_allclose(c.point + c.normal * c.depth[:, None] / 2, [furthest],
                               atol=1e-12)
    # moved 1 mm clear of the wall's face: nothing
    assert len(collide(box((0.01, 1.0, 1.0), (0, 0, 0), static=True),
                       cylinder(0.01, 0.35, (-0.011 - reach, 0, 0), R=turn))) == 0


def test_edges_lined_up_with_a_rim_are_measured_through_the_face_they_press_into():
    """Where an edge of one body lies on the side of the other (two equal cylinders stacked,
    twisted or not; a box whose edges' midpoints, or corners, lie on a cylinder's rim; a
    cylinder on a box as wide), its points lie on that side while the two overlap through the
    top: every contact is the 0.5 mm overlap, pushing the upper body straight up. Before, each
    took the side, depth 0 and a horizontal normal, and nothing held the upper body up (the
    stacked cylinder sank through the lower one to the floor). Side by side at one height, the
    lower body's top edge lies on the other's top: it was 0 deep upwards, not 2 mm sideways."""
    lower_cylinder = cylinder(0.1, 0.1, (0, 0, 0.1), static=True)
    lower_box = box((0.1, 0.1, 0.1), (0, 0, 0.1), static=True)
    top = (0, 0, 0.2995)
    for lower, upper in ((lower_cylinder, cylinder(0.1, 0.1, top)),
                         (lower_cylinder, cylinder(0.1, 0.1, top, R=rot("z", 17))),
                         (lower_cylinder, box((0.1, 0.1, 0.1), top)),
                         (lower_cylinder, box((np.sqrt(0.005), np.sqrt(0.005), 0.1), top,
                                              R=rot("z", 45))),
                         (lower_box, cylinder(0.1, 0.1, top))):
        c = collide(lower, upper)
        assert len(c) >= 4
        up = c.normal * np.where(c.body_a == 0, 1.0, -1.0)[:, None]     # lower -> upper
        np.testing.assert_allclose(up, [[0, 0, 1]] * len(c), atol=1e-9)
        np.testing.assert_allclose(c.depth, 5e-4, atol=1e-12)
    for a, b in ((lower_cylinder, box((0.1, 0.1, 0.1), (0.198, 0, 0.1))),
                 (box((0.1, 0.1, 0.1), (0.198, 0, 0.1), static=True),
                  cylinder(0.1, 0.1, (0, 0, 0.1)))):
        side = collide(a, b)
        np.testing.assert_allclose(side.normal[:, 2], 0, atol=1e-12)
        np.testing.assert_allclose(side.depth.max(), 0.002)


# --- filters, margins, speculative contacts -------------------------------------------------

def test_masks_exclusions_static_pairs_and_shapeless_bodies_do_not_collide():
    a, b = sphere(0.5, (0, 0, 0)), sphere(0.5, (0.8, 0, 0))
    assert len(collide(a, b)) == 1
    assert len(collide(a, b, group=[1, 2], mask=[1, 1])) == 0     # b's group not in a's mask
    assert len(collide(a, b, group=[1, 2], mask=[2, 1])) == 1
    assert len(collide(a, b, excluded=[(1, 0)])) == 0
    assert len(collide(a, b, excluded=[(0, 1)])) == 0
    assert len(collide(dict(a, static=True), dict(b, static=True))) == 0
    assert len(collide(plane(), box((1, 1, 1), (0, 0, 0), static=True))) == 0
    ghost = body(NO_SHAPE, [], (0, 0, 0))
    assert len(collide(ghost, b, plane())) == 1                  # only plane-sphere
    assert len(collide(plane(), sphere(0.5, (0, 0, 0.4)), mask=[0, 1])) == 0


def test_gap_beyond_margin_gives_nothing_and_within_margin_a_negative_depth():
    a, b = sphere(0.5, (0, 0, 0)), sphere(0.5, (1.05, 0, 0))
    assert len(collide(a, b)) == 0
    assert len(collide(a, b, margin=0.04)) == 0
    c = collide(a, b, margin=0.06)
    np.testing.assert_allclose(c.depth, [-0.05])
    np.testing.assert_allclose(c.point, [[0.525, 0, 0]])
    boxes = collide(plane(), box((0.5, 0.5, 0.5), (0, 0, 0.53)), margin=0.05)
    assert len(boxes) == 4
    np.testing.assert_allclose(boxes.depth, -0.03)


def test_fast_bodies_get_speculative_contacts():
    fast = sphere(0.1, (0, 0, 0.6))
    vel = np.array([[0, 0, 0], [0, 0, -40.0]])
    assert len(collide(plane(), fast)) == 0
    c = collide(plane(), fast, velocity=vel, dt=1 / 60)       # 0.67 m this step
    np.testing.assert_allclose(c.depth, [-0.5])
    # Two spheres closing at 60 m/s, 0.8 m apart.
    vel = np.array([[30.0, 0, 0], [-30.0, 0, 0]])
    c = collide(sphere(0.1, (0, 0, 0)), sphere(0.1, (1.0, 0, 0)), velocity=vel, dt=1 / 60)
    np.testing.assert_allclose(c.depth, [-0.8])
    # moving apart, or side by side, their paths never bring them within the margin: no
    # contact (400 bullets flying in parallel made pairs with all their neighbours)
    c = collide(sphere(0.1, (0, 0, 0)), sphere(0.1, (1.0, 0, 0)), velocity=-vel, dt=1 / 60)
    assert len(c) == 0
    side_by_side = np.array([[300.0, 0, 0], [300.0, 0, 0]])
    c = collide(sphere(0.1, (0, 0, 0)), sphere(0.1, (0, 0.5, 0)), velocity=side_by_side,
                dt=1 / 60)
    assert len(c) == 0
    # a pair whose paths meet keeps its contact
    crossing = np.array([[30.0, 0, 0], [-30.0, 0, 0]])
    c = collide(sphere(0.1, (0, 0, 0)), sphere(0.1, (0.8, 0.19, 0)), velocity=crossing,
                dt=1 / 60)
    assert len(c) == 1


def test_empty_inputs():
    c = collide(plane())
    assert isinstance(c, ContactSet) and len(c) == 0
    assert ContactSet.empty().point.shape == (0, 3)


# --- broadphase -----------------------------------------------------------------------------

def random_bodies(n, rng, spread=4.0, kinds=(SPHERE, BOX, CAPSULE, CYLINDER)):
    kind = rng.choice(kinds, n)
    size = rng.uniform(0.05, 0.3, (n, 3))
    params = np.zeros((n, 4))
    params[:, :3] = size
    params[kind == SPHERE, 1:] = 0
    params[(kind == CAPSULE) | (kind == CYLINDER), 2] = 0
    pos = rng.uniform(-spread / 2, spread / 2, (n, 3))
    R = Rotation.random(n, random_state=rng.integers(1 << 31)).as_matrix()
    return kind, params, pos, R


def half_extents(kind, params, R):
    """(N, 3) half sizes of each body's world AABB about its centre, by the broadphase's own
    formula for each bounded kind."""
    ext = np.zeros((len(kind), 3))
    for k, rows in kind_groups(kind, np.arange(len(kind))):
        ext[rows] = broadphase._kind_extents(k, params[rows], R[rows])
    return ext


def brute_force_pairs(lo, hi):
    """Every pair (i, j), i < j, whose boxes [lo, hi] overlap or touch, by the all-pairs test,
    in sorted order."""
    overlap = np.all((lo[:, None] <= hi[None]) & (lo[None] <= hi[:, None]), axis=2)
    bi, bj = np.nonzero(np.triu(overlap, 1))
    return list(zip(bi.tolist(), bj.tolist()))


@pytest.mark.parametrize("block_from", [0, 10 ** 9, None], ids=["blocks", "lists", "default"])
def test_sweep_and_prune_matches_brute_force_with_walls_and_touching_boxes(monkeypatch,
                                                                           block_from):
    """Either sweep, the dense-block one (forced with block_from 0) and the pair-list one
    (block_from out of reach), and the choice between them by the default BLOCK_SWEEP_PAIRS
    (None), gives exactly the all-pairs box test's pairs, each once: crowded bodies of mixed
    sizes, a few bin-sized walls overlapping nearly everything (their runs outgrow the block),
    boxes that touch exactly (lo == hi) and coincident lower bounds on the sweep axis, in
    scenes of different sizes, the last one sparse (most first-axis overlaps are pruned on
    the other axes)."""
    if block_from is not None:
        monkeypatch.setattr(broadphase, "BLOCK_SWEEP_PAIRS", block_from)
    rng = np.random.default_rng(11)
    for n, spread in ((40, 0.5), (700, 1.2), (300, 0.6), (1100, 1.3), (500, 4.0)):
        kind, params, pos, R = random_bodies(n, rng, spread=spread)
        ext = half_extents(kind, params, R)
        ext[:4] = rng.uniform(0.6, 0.9, (4, 3))            # walls
        pos[4:20] = np.round(pos[4:20] * 4) / 4            # shared coordinates
        ext[4:20] = 0.125                                  # touching exactly
        lo, hi = pos - ext, pos + ext
        i, j = sweep_and_prune(lo, hi)
        found = sorted(zip(np.minimum(i, j).tolist(), np.maximum(i, j).tolist()))
        assert found == brute_force_pairs(lo, hi)                   # each pair once
        assert len(found) > 100
        assert i.dtype == j.dtype == np.int64


def test_cached_broadphase_finds_exactly_the_pairs_of_a_fresh_sweep():
    """Bodies drift, turn and speed up for 60 steps, a few teleport, a static body is moved
    and the margin grows; every step the pair cache must give the fresh sweep's pairs in the
    fresh sweep's order (so replays stay bitwise exact), while sweeping again only when
    something has left its skin."""
    rng = np.random.default_rng(7)
    n = 300
    kind, params, pos, R = random_bodies(n, rng)
    kind[:2] = PLANE                                   # a floor and a wall
    params[0], params[1] = (0, 0, 1, -2.0), (1, 0, 0, -2.0)
    static = kind == PLANE
    static[2:12] = True                                # some static boxes and spheres
    group, mask = np.ones(n, np.int64), np.ones(n, np.int64)
    mask[20:30] = 0                                    # ghosts
    excluded = np.array([[40, 41], [42, 43]])
    cache, sweeps = PairCache(kind, params, excluded), 0
    vel = np.where(static[:, None], 0.0, rng.normal(0, 0.5, (n, 3)))
    margin = 0.01
    for step in range(60):
        reach = np.linalg.norm(vel, axis=1) / 240
        args = (pos, R, static, group, mask, margin, reach)
        before = cache.anchor
        cached = find_pairs(cache, *args)
        sweeps += cache.anchor is not before
        fresh = find_pairs(PairCache(kind, params, excluded), *args)
        for a, b in zip(cached, fresh):
            np.testing.assert_array_equal(a, b)
        pos = pos + vel / 240
        R = Rotation.from_rotvec(rng.normal(0, 0.02, (n, 3))).as_matrix() @ R
        vel = vel * 1.05
        if step % 20 == 19:
            pos[50] += 0.5                             # a teleport forces a new sweep
        if step == 30:
            pos[5] = pos[60] + 0.05                    # a static body put among others
        if step == 45:
            margin = 0.3
    assert len(fresh[0]) > 50 and len(fresh[2]) > 10
    assert 3 <= sweeps < 30


@pytest.mark.parametrize("row", [0, 5])
def test_the_bodies_near_one_are_those_the_broadphase_pairs_it_with(row):
    """broadphase.near_one (a static body moved into sleeping ones between steps) finds the
    bodies that find_pairs pairs with body ``row``, a plane (0) or a static box or sphere
    (5), among 300 random bodies."""
    rng = np.random.default_rng(11)
    n = 300
    kind, params, pos, R = random_bodies(n, rng)
    kind[0], params[0] = PLANE, (0, 0, 1, -2.0)
    static = np.zeros(n, dtype=bool)
    static[[0, 5]] = True
    ones, margin = np.ones(n, np.int64), 0.01
    i, j, pp, pb = find_pairs(PairCache(kind, params), pos, R, static, ones, ones, margin,
                              np.zeros(n))
    if kind[row] == PLANE:
        paired = pb[pp == row]
    else:
        paired = np.concatenate([j[i == row], i[j == row]])
    others = np.setdiff1d(np.arange(n), [0, 5])
    near = broadphase.near_one(kind, params, pos, R, row, others, margin)
    np.testing.assert_array_equal(others[near], np.sort(paired))
    assert paired.size >= 3


def test_contact_pairs_of_500_random_spheres_match_brute_force():
    rng = np.random.default_rng(2)
    n = 500
    r = rng.uniform(0.05, 0.25, n)
    pos = rng.uniform(-2, 2, (n, 3))
    kind = np.full(n, SPHERE)
    params = np.c_[r, np.zeros((n, 3))]
    c = find_contacts(kind, params, pos, np.tile(np.eye(3), (n, 1, 1)), static=np.zeros(n, bool),
                      group=np.ones(n, int), mask=np.ones(n, int),
                      excluded_pairs=np.zeros((0, 2), int))
    found = {(min(p), max(p)) for p in zip(c.body_a.tolist(), c.body_b.tolist())}
    dist = np.linalg.norm(pos[:, None] - pos[None], axis=2)
    bi, bj = np.nonzero(np.triu(dist < r[:, None] + r[None], 1))
    assert found == set(zip(bi.tolist(), bj.tolist())) and len(found) > 20
    np.testing.assert_allclose(c.depth, r[c.body_a] + r[c.body_b] - dist[c.body_a, c.body_b])


def test_a_kept_pair_cache_alone_gives_the_shapes_and_excluded_pairs():
    """A PairCache is made for its bodies' shapes and excluded pairs and holds them fixed; the
    call with a kept cache takes none of them (a second copy could differ from the one the
    cache sweeps with), and honours the cache's."""
    kind, params = np.full(2, SPHERE), np.array([[0.5, 0, 0, 0]] * 2)
    pose = (np.array([[0.0, 0, 0], [0.5, 0, 0]]), np.tile(np.eye(3), (2, 1, 1)))
    common = dict(static=np.zeros(2, bool), group=np.ones(2, int), mask=np.ones(2, int))
    cache = PairCache(kind, params, np.array([[0, 1]]))
    for name, value in (("kind", kind), ("params", params),
                        ("excluded_pairs", np.zeros((0, 2), int))):
        with pytest.raises(TypeError, match=name):
            find_contacts_with_cache(cache, *pose, **common, **{name: value})
    assert len(find_contacts_with_cache(cache, *pose, **common)) == 0      # excluded by it
    assert len(find_contacts(kind, params, *pose, **common)) == 1
    kept = find_contacts_with_cache(PairCache(kind, params), *pose, **common)
    np.testing.assert_array_equal(kept.depth, [0.5])                        # its radii


def test_every_body_reaching_below_the_ground_touches_it_and_no_other():
    rng = np.random.default_rng(3)
    kind, params, pos, R = random_bodies(500, rng)
    a = R[:, 2, :]                   # world z component of each local axis
    r, hl = params[:, 0], params[:, 1]
    reach = np.select([kind == SPHERE, kind == BOX, kind == CAPSULE, kind == CYLINDER],
                      [r, np.sum(np.abs(a) * params[:, :3], 1),
                       r + hl * np.abs(a[:, 2]),
                       hl * np.abs(a[:, 2]) + r * np.sqrt(1 - a[:, 2] ** 2)])
    lowest = pos[:, 2] - reach       # the ground is z = -1: about a quarter reach below it
    n = len(kind) + 1
    c = find_contacts(np.r_[PLANE, kind], np.r_[[[0, 0, 1, -1.0]], params],
                      np.r_[np.zeros((1, 3)), pos], np.r_[np.eye(3)[None], R],
                      static=np.zeros(n, bool), group=np.ones(n, int), mask=np.ones(n, int),
                      excluded_pairs=np.zeros((0, 2), int))
    on_ground = c.body_a == 0
    assert np.sum(lowest < -1.0) > 100
    assert set(c.body_b[on_ground] - 1) == set(np.flatnonzero(lowest < -1.0))
    deepest = np.full(n, -np.inf)
    np.maximum.at(deepest, c.body_b[on_ground], c.depth[on_ground])
    np.testing.assert_allclose(deepest[1:][lowest < -1.0], -1.0 - lowest[lowest < -1.0])


# --- stability and geometric consistency ----------------------------------------------------

def keys(c):
    """The set of (body_a, body_b, feature): the warm-starting key of each contact."""
    return set(zip(c.body_a.tolist(), c.body_b.tolist(), c.feature.tolist()))


def test_feature_ids_are_stable_when_a_box_moves_slightly():
    bottom = box((1, 1, 0.5), (0, 0, 0), static=True)
    for R0, half in ((rot("z", 45), 0.9), (rot("z", 10), 0.3)):
        before = collide(plane(), bottom, box((half, half, 0.25), (0, 0, 0.74), R=R0))
        nudge = Rotation.from_rotvec([0.003, -0.002, 0.004]).as_matrix()
        after = collide(plane(), bottom,
                        box((half, half, 0.25), (0.002, -0.001, 0.7405), R=nudge @ R0))
        assert len(before) == 4 and keys(before) == keys(after)
    c0 = collide(plane(), box((0.5, 0.3, 0.2), (0, 0, 0.19)))
    c1 = collide(plane(), box((0.5, 0.3, 0.2), (0.01, 0, 0.191), R=rot("z", 1)))
    assert keys(c0) == keys(c1)


def sdf(b, x):
    """Independent signed distance of world points x (K, 3) to body dict b."""
    p = (x - b["pos"]) @ b["R"]
    k, q = b["kind"], b["params"]
    if k == SPHERE:
        return np.linalg.norm(p, axis=1) - q[0]
    if k == CAPSULE:
        z = np.clip(p[:, 2], -q[1], q[1])
        return np.linalg.norm(p - np.c_[0 * z, 0 * z, z], axis=1) - q[0]
    if k == BOX:
        d = np.abs(p) - q[:3]
        return np.linalg.norm(np.maximum(d, 0), axis=1) + np.minimum(d.max(axis=1), 0)
    if k == CYLINDER:
        d = np.c_[np.hypot(p[:, 0], p[:, 1]) - q[0], np.abs(p[:, 2]) - q[1]]
        return np.linalg.norm(np.maximum(d, 0), axis=1) + np.minimum(d.max(axis=1), 0)
    raise ValueError(k)


@pytest.mark.parametrize("kinds", [(SPHERE, SPHERE), (SPHERE, CAPSULE), (CAPSULE, CAPSULE),
                                   (BOX, SPHERE), (BOX, CAPSULE), (BOX, BOX),
                                   (CYLINDER, SPHERE), (CYLINDER, CAPSULE), (CYLINDER, BOX),
                                   (CYLINDER, CYLINDER)])
def test_random_poses_contact_points_lie_on_both_surfaces(kinds):
    rng = np.random.default_rng(sum(kinds) + 10 * kinds[0])
    hits = singles = 0
    for trial in range(60):
        bodies = []
        for k in kinds:
            q = rng.uniform(0.2, 0.6, 3)
            params = {SPHERE: q[:1], CAPSULE: q[:2], BOX: q, CYLINDER: q[:2]}[k]
            R = Rotation.random(random_state=rng.integers(1 << 31)).as_matrix()
            bodies.append(body(k, params, rng.uniform(-0.5, 0.5, 3), R=R))
        c = collide(*bodies, margin=0.05)
        if len(c) == 0:
            continue
        hits += 1
        np.testing.assert_allclose(np.linalg.norm(c.normal, axis=1), 1.0)
        a, b = bodies[c.body_a[0]], bodies[c.body_b[0]]
        on_a = c.point + c.normal * c.depth[:, None] / 2
        on_b = c.point - c.normal * c.depth[:, None] / 2
        assert np.all(sdf(a, on_a) <= 1e-6) and np.all(sdf(b, on_b) <= 1e-6)
        # Exact points: those of box-box manifolds, and the single deepest point (feature 0)
        # of a sphere or capsule against anything. Others may sit inside a surface, e.g. the
        # end of a capsule clipped at a box edge, or be approximations (cylinder-box).
        exact = slice(None) if kinds == (BOX, BOX) else c.feature == 0
        if kinds[1] in (SPHERE, CAPSULE) and kinds[0] != kinds[1]:
            # ... and only while b's axis stays outside a: deeper, the deepest point of the
            # axis may sit on an edge of a's signed distance, where no normal is exact.
            exact &= c.depth < b["params"][0]
        if kinds[1] in (SPHERE, CAPSULE) or kinds == (BOX, BOX):
            np.testing.assert_allclose(sdf(a, on_a[exact]), 0, atol=1e-6)
            np.testing.assert_allclose(sdf(b, on_b[exact]), 0, atol=1e-6)
            singles += len(on_a[exact])
    assert hits > 20 and (singles >= 5 or kinds[1] in (BOX, CYLINDER))


# --- box-box: the vectorised narrowphase against a per-pair reference -----------------------

def _dot012(x, y):
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]


def _dot021(x, y):
    return (x[0] * y[0] + x[2] * y[2]) + x[1] * y[1]


def _reference_box_box(pa, Ra, ha, pb, Rb, hb, margin):
    """One box pair, one axis and one candidate at a time: {feature: (point, normal, depth)}.

    The same geometry as physics/collision/boxbox.py (SAT over 15 axes with its preferences,
    24 candidate corners of the clipped face, the 4-point reduction), written as a plain
    loop. Sums run in the same order as the vectorised code (_dot012 / _dot021), so the face
    manifolds must agree to the bit, ties included.
    """
    from physics.collision.boxbox import EDGE_FEATURE, INCIDENT_QUAD, INSIDE_TOL
    from physics.collision.geometry import closest_segments
    from physics.collision.sat import ABS_TOL, REL_TOL
    d = pb - pa
    axes, seps, offsets = [], [], []
    for n in [Ra[:, i] for i in range(3)] + [Rb[:, j] for j in range(3)]:
        axes.append(n), offsets.append(_dot012(n, d))
    for i in range(3):
        for j in range(3):
            c = np.cross(Ra[:, i], Rb[:, j])
            length = np.sqrt((c[0] * c[0] + c[1] * c[1]) + c[2] * c[2])
            axes.append(c / length if length > 1e-6 else c), offsets.append(_dot021(axes[-1], d))
    for idx, n in enumerate(axes):
        reach_a = [abs(_dot012(n, Ra[:, k])) * ha[k] for k in range(3)]
        reach_b = [abs(_dot012(n, Rb[:, k])) * hb[k] for k in range(3)]
        sep = (abs(offsets[idx]) - ((reach_a[0] + reach_a[2]) + reach_a[1])
               - ((reach_b[0] + reach_b[2]) + reach_b[1]))
        seps.append(sep if idx < 6 or np.linalg.norm(n) > 0.5 else -np.inf)
    scale = max(ha.max(), hb.max())
    best_a = int(np.argmax(seps[:3]))
    best_b = 3 + int(np.argmax(seps[3:6]))
    best_e = 6 + int(np.argmax(seps[6:]))
    best = best_a
    if seps[best_b] > seps[best_a] + REL_TOL * abs(seps[best_a]) + ABS_TOL * scale:
        best = best_b
    if seps[best_e] > seps[best] + REL_TOL * abs(seps[best]) + ABS_TOL * scale:
        best = best_e
    normal = axes[best] * (1.0 if offsets[best] >= 0 else -1.0)
    if seps[best] > margin:
        return {}
    if best >= 6:                                  # edge-edge: one point
        i, j = divmod(best - 6, 3)
        sa = np.where(normal @ Ra >= 0, 1.0, -1.0)
        sb = np.where(normal @ Rb >= 0, -1.0, 1.0)
        sa[i] = sb[j] = 0.0
        ca, cb = pa + Ra @ (sa * ha), pb + Rb @ (sb * hb)
        s, t = closest_segments(ca[None], Ra[None, :, i], ha[i:i + 1],
                                cb[None], Rb[None, :, j], hb[j:j + 1])
        qa, qb = ca + s[0] * Ra[:, i], cb + t[0] * Rb[:, j]
        depth = (qa - qb) @ normal
        return {EDGE_FEATURE + best - 6: (0.5 * (qa + qb), normal, depth)} if depth >= -margin else {}

    fb = best >= 3                                 # b's face is the reference
    (pr, Rr, hr), (pi, Ri, hi) = ((pb, Rb, hb), (pa, Ra, ha)) if fb else ((pa, Ra, ha), (pb, Rb, hb))
    n_ref = -normal if fb else normal
    k = best % 3
    k1, k2 = (k + 1) % 3, (k + 2) % 3
    U, V = Rr[:, k1], Rr[:, k2]
    hu, hv = hr[k1], hr[k2]
    face_c = pr + n_ref * hr[k]
    ref_face = 2 * k + (_dot012(n_ref, Rr[:, k]) > 0)
    m_dots = [_dot012(n_ref, Ri[:, j]) for j in range(3)]
    j = int(np.argmax(np.abs(m_dots)))
    s_inc = -1.0 if m_dots[j] > 0 else 1.0
    j1, j2 = (j + 1) % 3, (j + 2) % 3
    inc_n = Ri[:, j] * s_inc
    inc_c = pi + Ri[:, j] * (hi[j] * s_inc)
    P, Q = Ri[:, j1] * hi[j1], Ri[:, j2] * hi[j2]
    inc_face = 2 * j + (s_inc > 0)
    corners = [(inc_c + q0 * P) + q1 * Q - face_c for q0, q1 in INCIDENT_QUAD]
    loc = [np.array([_dot021(x, U), _dot021(x, V), _dot021(x, n_ref)]) for x in corners]
    nu, nv, mn = _dot021(inc_n, U), _dot021(inc_n, V), _dot021(inc_n, n_ref)
    w0 = _dot021(inc_c - face_c, inc_n) / mn
    tol_u, tol_v = hu * (1 + INSIDE_TOL), hv * (1 + INSIDE_TOL)

    cands = {}                                     # candidate number: (u, v, w)
    for e, (u, v, w) in enumerate(loc):
        if abs(u) <= tol_u and abs(v) <= tol_v:
            cands[e] = (u, v, w)
    edges = [loc[(e + 1) % 4] - loc[e] for e in range(4)]
    area2 = 0.0
    for e in range(4):
        area2 += loc[e][0] * loc[(e + 1) % 4][1] - loc[e][1] * loc[(e + 1) % 4][0]
    winding = np.sign(area2)
    for r, (q0, q1) in enumerate(INCIDENT_QUAD):
        ru, rv = q0 * hu, q1 * hv
        inside = winding != 0 and all(
            (eu * (rv - x[1]) - ev * (ru - x[0])) * winding
            >= -INSIDE_TOL * np.sqrt(eu**2 + ev**2) * max(hu, hv)
            for (eu, ev, _), x in zip(edges, loc))
        if inside:
            cands[4 + r] = (ru, rv, w0 - (ru * nu + rv * nv) / mn)
    for e in range(4):
        for s, (axis, line) in enumerate(((0, hu), (0, -hu), (1, hv), (1, -hv))):
            other, obound = 1 - axis, (tol_v, tol_u)[axis]
            if not abs(edges[e][axis]) > 1e-300:
                continue
            t = (line - loc[e][axis]) / edges[e][axis]
            o = loc[e][other] + t * edges[e][other]
            if 0 <= t <= 1 and abs(o) <= obound:
                uv = (line, o) if axis == 0 else (o, line)
                cands[8 + 4 * e + s] = (*uv, loc[e][2] + t * edges[e][2])
    cands = {c: x for c, x in cands.items() if x[2] <= margin}
    if not cands:
        return {}

    # Reduction: the deepest, the furthest from it, the largest triangles on either side
    # (first candidate number on ties, as np.argmax).
    tiny = (1e-5 * scale) ** 2
    order = sorted(cands)
    first = lambda key: max(order, key=lambda c: (key(c), -c))
    i1 = first(lambda c: -cands[c][2])
    u1, v1 = cands[i1][:2]
    du = {c: cands[c][0] - u1 for c in order}
    dv = {c: cands[c][1] - v1 for c in order}
    d2 = {c: du[c] ** 2 + dv[c] ** 2 for c in order}
    i2 = first(lambda c: d2[c])
    area = {c: du[i2] * dv[c] - dv[i2] * du[c] for c in order}
    i3 = first(lambda c: area[c])
    i4 = first(lambda c: -area[c])
    keep = [(i1, True), (i2, d2[i2] > tiny), (i3, area[i3] > tiny), (i4, area[i4] < -tiny)]
    out = {}
    for slot, (c, kept) in enumerate(keep):
        if kept:
            u, v, w = cands[c]
            point = face_c + u * U + v * V + (w / 2) * n_ref
            out[((fb * 6 + ref_face) * 6 + inc_face) * 24 + c] = (point, normal, -w)
    return out


def test_vectorised_box_box_matches_the_per_pair_reference_on_random_pairs():
    from physics.collision.boxbox import box_box
    from physics.collision.contacts import Shapes
    rng = np.random.default_rng(7)
    m = 480
    ha, hb = rng.uniform(0.1, 0.6, (m, 3)), rng.uniform(0.1, 0.6, (m, 3))
    Ra = Rotation.random(m, random_state=1).as_matrix()
    Rb = Rotation.random(m, random_state=2).as_matrix()
    pa = rng.uniform(-0.3, 0.3, (m, 3))
    pb = pa + rng.uniform(-0.8, 0.8, (m, 3))
    kind = np.arange(m) % 6
    # 0: random poses (overlapping or not); 1: far apart; 2: b resting on a's top face,
    # touching exactly, gapped or overlapping slightly, turned about z or axis-aligned and
    # offset (coincident edges, as in a pyramid); 3: tilted a little on it; 4: edge across
    # edge; 5: face-face with b's face as the reference (b below a).
    far = kind == 1
    pb[far] = pa[far] + rng.choice([-1, 1], (far.sum(), 3)) * 3.0
    stack = (kind == 2) | (kind == 3) | (kind == 5)
    turn = np.where(rng.random(m) < 0.5, 0.0, rng.uniform(0, np.pi, m))
    Rz = Rotation.from_euler("z", turn[:, None]).as_matrix()
    Ra[stack] = np.eye(3)
    Rb[stack] = Rz[stack]
    tilt = Rotation.from_rotvec(rng.normal(0, 0.05, (m, 3))).as_matrix()
    Rb[kind == 3] = tilt[kind == 3] @ Rb[kind == 3]
    gap = rng.choice([0.0, 0.0, 0.004, -0.003, 0.02], m)
    side = np.where(kind == 5, -1.0, 1.0)
    pb[stack, :2] = pa[stack, :2] + rng.choice([0.0, 0.5, -0.25], (stack.sum(), 2)) * ha[stack, :2]
    pb[stack, 2] = pa[stack, 2] + side[stack] * (ha[stack, 2] + hb[stack, 2] + gap[stack])
    same = stack & (rng.random(m) < 0.3)                 # equal boxes: coincident faces
    hb[same] = ha[same]
    edge = kind == 4
    Ra[edge] = Rotation.from_euler("y", rng.uniform(40, 50, (edge.sum(), 1)), degrees=True).as_matrix()
    Rb[edge] = Rotation.from_euler("zx", rng.uniform(40, 50, (edge.sum(), 2)),
                                   degrees=True).as_matrix()
    pb[edge] = pa[edge] + [0, 0, 1] * (np.hypot(ha[edge, 0], ha[edge, 2])
                                       + np.hypot(hb[edge, 1], hb[edge, 2]) - 0.05)[:, None]
    margin = rng.choice([0.0, 0.01, 0.05], m)

    params = lambda h: np.c_[h, np.zeros(m)]
    point, normal, depth, feature, valid = box_box(Shapes(pa, Ra, params(ha)),
                                                   Shapes(pb, Rb, params(hb)), margin)
    counts, edge_edge = np.zeros(5, int), 0
    for i in range(m):
        ref = _reference_box_box(pa[i], Ra[i], ha[i], pb[i], Rb[i], hb[i], margin[i])
        got = {int(f): (p, n, d) for f, p, n, d, v in
               zip(feature[i], point[i], normal[i], depth[i], valid[i]) if v}
        assert sorted(got) == sorted(ref), (i, kind[i])
        for f, (p, n, d) in ref.items():
            tol = 1e-12 if f >= 1 << 12 else 0.0          # edge-edge: einsum sums may differ
            np.testing.assert_allclose(got[f][0], p, rtol=0, atol=tol)
            np.testing.assert_array_equal(got[f][1], n)
            np.testing.assert_allclose(got[f][2], d, rtol=0, atol=tol)
        counts[min(len(ref), 4)] += 1
        edge_edge += any(f >= 1 << 12 for f in ref)
    # Every kind of manifold occurs: none (separated), 1 (edge-edge or a corner), 2..4.
    assert np.all(counts[[0, 1, 2, 4]] > 10) and edge_edge > 10, (counts, edge_edge)


@pytest.mark.parametrize("against", ["sphere", "box"])
def test_spheres_only_batches_give_the_general_paths_contacts_to_the_bit(against):
    """round_round and box_round skip the segment work when a batch holds only spheres; the
    contacts must be those of the general path, which runs when one capsule joins the batch."""
    from physics.collision.boxround import box_round
    from physics.collision.contacts import Shapes, from_candidates
    from physics.collision.round import round_round
    rng = np.random.default_rng(11)
    m = 400
    pa = rng.uniform(-1, 1, (m, 3))
    pb = pa + rng.normal(0, 0.08, (m, 3))
    Ra = Rotation.random(m, random_state=3).as_matrix()
    Rb = Rotation.random(m, random_state=4).as_matrix()
    pa[:4] = pb[:4]                                     # coincident centres
    if against == "sphere":
        narrowphase, par_a = round_round, np.c_[rng.uniform(0.02, 0.1, m), np.zeros((m, 3))]
    else:
        narrowphase, par_a = box_round, np.c_[rng.uniform(0.02, 0.2, (m, 3)), np.zeros(m)]
    par_b = np.c_[rng.uniform(0.02, 0.1, m), np.zeros((m, 3))]
    margin = rng.choice([0.0, 0.01, 0.05], m)
    candidates = narrowphase(Shapes(pa, Ra, par_a), Shapes(pb, Rb, par_b), margin)
    assert candidates[-1].shape == (m, 1)               # the spheres' path: one candidate
    fast = from_candidates(np.arange(m), np.arange(m), *candidates)
    capsule = np.r_[par_b, [[0.05, 0.1, 0.0, 0.0]]]
    general = from_candidates(np.arange(m + 1), np.arange(m + 1), *narrowphase(
        Shapes(np.r_[pa, pa[:1]], np.r_[Ra, Ra[:1]], np.r_[par_a, par_a[:1]]),
        Shapes(np.r_[pb, pb[:1]], np.r_[Rb, Rb[:1]], capsule), np.r_[margin, 0.0]))
    spheres = general.body_a < m
    assert len(fast) > 100
    for name in ("body_a", "body_b", "point", "normal", "depth", "feature"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(general, name)[spheres])


def test_the_distance_only_queries_give_the_closest_point_queries_distance_to_the_bit():
    """A search along a segment (a capsule's deepest point in a box or cylinder) evaluates
    the signed distance alone, dozens of times a step: box_distance and cylinder_distance
    give exactly the dist of box_closest and cylinder_closest, inside, outside, on faces,
    edges and corners, and on the cylinder's axis, rim and caps."""
    from physics.collision.sdf import box_closest, box_distance, cylinder_closest, cylinder_distance
    rng = np.random.default_rng(7)
    m = 4000
    h = rng.uniform(0.05, 1.0, (m, 3))
    p = rng.uniform(-2.0, 2.0, (m, 3)) * h
    p[::7] = np.sign(p[::7]) * h[::7]                  # corners
    p[1::7, 0] = h[1::7, 0]                           # on a face plane
    p[2::7, :2] = 0.0                                 # on the axis
    assert box_distance(p, h).tobytes() == box_closest(p, h)[0].tobytes()
    radius, half = h[:, 0], h[:, 1]
    p[3::7, 0], p[3::7, 2] = radius[3::7], half[3::7]   # on the rim
    assert cylinder_distance(p, radius, half).tobytes() == cylinder_closest(p, radius, half)[0].tobytes()
    # (M, C, 3) points broadcast against per-shape dimensions as the closest queries do
    pc = p[:m // 2].reshape(-1, 2, 3)
    hc = h[:m // 4]
    assert box_distance(pc, hc).tobytes() == box_closest(pc, hc)[0].tobytes()


@pytest.mark.parametrize("rows", [7, 2000], ids=["grid", "golden section"])
def test_the_deepest_point_search_finds_a_kinked_minimum_to_its_accuracy(rows):
    """golden_min on convex functions with a kink at their minimum (as a box's signed
    distance has along a segment past an edge) and flat ones: few rows take the grid
    search, many the golden section; either lands within (hi - lo) 0.618^48 of the kink,
    and on a zero-length interval returns its point without evaluating anything."""
    from physics.collision.geometry import golden_min
    rng = np.random.default_rng(rows)
    lo, hi = -rng.uniform(0.05, 0.5, rows), rng.uniform(0.05, 0.5, rows)
    kink = rng.uniform(lo, hi)
    slope = rng.uniform(0.2, 2.0, (2, rows))
    hi[::5] = lo[::5]                                        # spheres: nothing to search
    kink[::5] = lo[::5]
    evaluated = []

    def functions(r):
        k, s_left, s_right = kink[r, None], slope[0, r, None], slope[1, r, None]
        evaluated.append(r)
        return lambda t: np.where(t < k, s_left * (k - t), s_right * (t - k))

    t = golden_min(functions, lo, hi)
    assert np.abs(t - kink).max() <= (hi - lo).max() * 0.618 ** 48 * 2
    assert not np.isin(np.arange(0, rows, 5), np.concatenate(evaluated)).any()


def test_the_deepest_point_of_a_segment_in_a_box_is_exact():
    """box_segment_deepest against a dense sampling of each segment (10001 points): never
    deeper anywhere, and within rounding of the least sample or better; also for segments
    along an axis, through the centre, of zero length and outside the box."""
    rng = np.random.default_rng(3)
    m = 400
    h = rng.uniform(0.05, 1.0, (m, 3))
    c = rng.normal(size=(m, 3)) * 0.8
    c[300:340] = 0.0
    d = rng.normal(size=(m, 3))
    d[:100, 1:] = 0.0
    d[100:200, 2] = 0.0
    d /= np.linalg.norm(d, axis=1)[:, None]
    hl = rng.uniform(0.0, 1.5, m)
    hl[:20] = 0.0
    t = box_segment_deepest(c, d, h, hl)
    assert np.all(np.abs(t) <= hl)
    found = box_distance(c + t[:, None] * d, h)
    samples = np.linspace(-1, 1, 10001)[None, :] * hl[:, None]
    sampled = box_distance(c[:, None] + samples[..., None] * d[:, None], h[:, None]).min(axis=1)
    assert np.all(found <= sampled + 1e-12)
