"""Camera, picking and the real-time clock: pure numpy, no OpenGL."""
import numpy as np
import pytest

from physics import Box, Capsule, Cylinder, Plane, Sphere, World
from render.camera import Camera
from render.scenedata import WorldGeometry, quat_to_matrix
from render.sim import Simulation, as_scene, resolve_scene


def test_camera_specs_agree():
    a = Camera.from_spec({"target": (1, 2, 3), "distance": 4, "yaw": 30, "pitch": 20})
    b = Camera.from_spec({"eye": tuple(a.eye), "target": (1, 2, 3)})
    c = Camera.from_spec(((1, 2, 3), 4, 30, 20))
    for cam in (b, c):
        np.testing.assert_allclose(cam.eye, a.eye, atol=1e-12)
        np.testing.assert_allclose(cam.view_matrix(), a.view_matrix(), atol=1e-12)
    assert Camera.from_spec(None).frame_on_load
    with pytest.raises(ValueError, match="camera"):
        Camera.from_spec("nonsense")
    # (a yaw beside an eye was dropped without a word, and a pitch of 95 looked down from
    # over the top: found by a command-line explorer)
    with pytest.raises(ValueError, match="camera gives both eye and yaw"):
        Camera.from_spec({"eye": (0, -5, 2), "target": (0, 0, 0.3), "yaw": -90})
    with pytest.raises(ValueError, match="camera pitch must be from -90 to 90 degrees"):
        Camera.from_spec({"target": (0, 0, 0), "pitch": 95})
    with pytest.raises(ValueError, match="camera fit must be True or False"):
        Camera.from_spec({"target": (0, 0, 0), "fit": "yes"})
    assert Camera.from_spec({"eye": (0, -5, 2), "target": (0, 0, 0.3), "fit": True}).fit_on_load


def test_ray_through_projected_point_hits_it():
    cam = Camera((0.5, -0.2, 1.0), 6.0, 35.0, 25.0)
    p = np.array([1.0, 0.3, 1.4])
    w, h = 640, 360
    x, y = cam.project(p, w, h)[0]
    o, d = cam.ray(x, y, w, h)
    # distance from p to the ray
    assert np.linalg.norm(np.cross(p - o, d)) < 1e-9
    np.testing.assert_allclose(cam.project(cam.target, w, h)[0], (w / 2, h / 2), atol=1e-9)


@pytest.mark.parametrize("shape, front", [
    (Sphere(0.5), 0.5), (Box((0.3, 0.4, 0.5)), 0.4), (Capsule(0.2, 0.5), 0.2),
    (Cylinder(0.3, 0.4), 0.3)])
def test_ray_cast_hits_the_real_surface(shape, front):
    world = World(gravity=(0, 0, 0))
    world.add_body(Plane())
    world.add_body(shape, mass=1.0, position=(1.0, 2.0, 3.0))
    g = WorldGeometry(world)
    hit = g.ray_cast((1.0, -5.0, 3.0), (0.0, 1.0, 0.0))        # along +y at the centre line
    assert hit is not None and hit[0] == 1
    np.testing.assert_allclose(hit[2], (1.0, 2.0 - front, 3.0), atol=1e-9)
    # grazing past the side misses (the bounding sphere of a capsule would not)
    r = shape.bounding_radius()
    assert g.ray_cast((1.0 + r + 0.01, -5.0, 3.0), (0.0, 1.0, 0.0)) is None


def test_ray_cast_box_in_body_frame_and_capsule_caps():
    world = World(gravity=(0, 0, 0))
    c = np.cos(np.pi / 8)
    s = np.sin(np.pi / 8)
    world.add_body(Box((1.0, 0.1, 0.1)), mass=1.0, orientation=(c, 0, 0, s))   # 45 deg about z
    world.add_body(Capsule(0.25, 1.0), mass=1.0, position=(0, 0, 5))
    g = WorldGeometry(world)
    # the rotated box's long axis runs along (1, 1, 0)/sqrt2: a ray down onto (0.5, 0.5) hits
    hit = g.ray_cast((0.5, 0.5, 3.0), (0, 0, -1))
    assert hit is not None and hit[0] == 0 and abs(hit[2][2] - 0.1) < 1e-9
    assert g.ray_cast((0.5, -0.5, 3.0), (0, 0, -1)) is None
    # straight down onto the capsule's top cap: hits at z = 5 + 1 + 0.25
    hit = g.ray_cast((0.0, 0.0, 9.0), (0, 0, -1))
    assert hit[0] == 1 and abs(hit[2][2] - 6.25) < 1e-9


def test_quat_to_matrix_is_a_rotation():
    q = np.random.default_rng(1).normal(size=(10, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    R = quat_to_matrix(q)
    np.testing.assert_allclose(R @ R.transpose(0, 2, 1), np.broadcast_to(np.eye(3), R.shape),
                               atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-12)


def test_accumulator_runs_fixed_steps_and_slows_down_when_capped():
    world = World(dt=0.01)
    world.add_body(Sphere(0.1), mass=1.0)
    calls = []
    sim = Simulation(world, controller=lambda w: calls.append(w.time))
    assert sim.advance(0.035) == 3 and abs(sim.accumulator - 0.005) < 1e-12
    assert sim.advance(0.005) == 1
    assert len(calls) == 4 and abs(world.time - 0.04) < 1e-12
    slow = Simulation(world, max_steps_per_frame=2)
    assert slow.advance(0.1) == 2                 # wanted 10
    assert slow.behind and slow.accumulator == 0.0 and slow.slower_than_real_time
    sim.toggle_pause()
    t = world.time
    assert sim.advance(1.0) == 0 and world.time == t


def test_scene_like_objects():
    world = World()

    class Scene:
        title = "demo"
        camera = {"distance": 3}
        controller = None

    Scene.world = world
    assert as_scene(Scene()).title == "demo" and as_scene(Scene()).world is world
    spec = as_scene((world, "tuple"))
    assert spec.title == "tuple" and spec.camera is None
    assert resolve_scene("x", load_scene=lambda name: (world, name.upper())).title == "X"
    with pytest.raises(ValueError):
        as_scene(42)


def _edges_closed(vertices, indices):
    """Every edge (by rounded position and capsule half) is shared by exactly two
    triangles, in opposite directions."""
    key = [tuple(np.round(v[[0, 1, 2, 6]], 5)) for v in vertices]
    count = {}
    for a, b, c in indices.reshape(-1, 3):
        for p, q in ((a, b), (b, c), (c, a)):
            e = (key[p], key[q])
            count[e] = count.get(e, 0) + 1
    return all(n == 1 and count.get((q, p), 0) == 1 for (p, q), n in count.items())


def test_meshes_closed_without_zero_area_triangles_and_lod_choice():
    from render import meshes
    prev = None
    for level in range(len(meshes.LOD_SEGMENTS)):
        tris = 0
        for kind, (v, i) in meshes.shape_meshes(level).items():
            t = v[i.reshape(-1, 3), :3] + v[i.reshape(-1, 3), 6:7] * [0, 0, 0.5]
            area = np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1)
            assert area.min() > 1e-6, (kind, level)
            assert _edges_closed(v, i), (kind, level)
            n = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
            assert np.all(np.einsum("ij,ij->i", n, t.mean(1)) > 0), (kind, level)  # outward
            tris += len(i) // 3
        assert prev is None or tris < prev
        prev = tris
    r = np.array([0.5, 5.0, 9.0, 20.0, 45.0, 100.0, 500.0])
    level = meshes.lod_level(r)
    assert np.all(np.diff(level) <= 0) and level[0] == len(meshes.LOD_SEGMENTS) - 1
    assert level[-1] == 0
    n = np.array(meshes.LOD_SEGMENTS)[level]
    err = r * (1 - np.cos(np.pi / n))
    assert np.all((err <= meshes.LOD_MAX_ERROR) | (level == 0))


def test_sleeping_bodies_are_drawn_paler_and_awake_ones_in_their_own_colour():
    from render.scenedata import STATIC_COLOR
    world = World(sleeping=True)
    world.add_body(Plane())
    resting = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 0.1))
    g = WorldGeometry(world)
    own = g.instances()["sphere"][0, 20:23].copy()
    world.step(240)
    assert resting.asleep
    drawn = g.instances()["sphere"][0, 20:23]
    np.testing.assert_allclose(drawn, 0.3 * own + 0.7 * np.array(STATIC_COLOR), atol=1e-6)
    resting.wake()
    np.testing.assert_allclose(g.instances()["sphere"][0, 20:23], own, atol=1e-7)


def test_a_scene_grown_past_its_camera_is_framed_on_its_first_view():
    """A scene's own camera is set for its default size: a 30-box-base pyramid (465 boxes)
    ran off every side of it. The first view (viewer, render, run --png) keeps that camera
    while every body's centre is in it (the default pyramid: unchanged) and otherwise points
    it, angles kept, at every body, as ``frame`` (the F key) does."""
    from render.offscreen import initial_camera
    from render.camera import Camera
    from tools import load_scene

    w, h = 1280, 720

    def inside(cam, points):
        p = cam.project(points, w, h)
        return (p[:, 0] >= 0) & (p[:, 0] <= w) & (p[:, 1] >= 0) & (p[:, 1] <= h)

    default = load_scene("box_pyramid", shot_speed=0.0)
    assert default.camera["fit"]
    kept = initial_camera(default.camera, WorldGeometry(default.world), w / h)
    assert repr(kept) == repr(Camera.from_spec(default.camera))

    scene = load_scene("box_pyramid", base=30, shot_speed=0.0)
    boxes = np.asarray(scene.world.positions)[1:]
    assert not inside(Camera.from_spec(scene.camera), boxes).all()   # 172 of 465 were out
    geometry = WorldGeometry(scene.world)
    own = initial_camera(scene.camera, geometry, w / h)
    framed = initial_camera(scene.camera, geometry, w / h, frame=True)
    assert inside(own, boxes).all()
    assert repr(own) == repr(framed)
    assert (own.yaw, own.pitch) == (default.camera["yaw"], default.camera["pitch"])


def test_a_bodys_colour_stays_with_it_when_an_earlier_body_is_removed():
    """Colours were by index: removing a body repainted every later one in the colour of
    the one before it (a followed car turned from green to purple). A body added after a
    removal takes a colour no body has had."""
    from render.scenedata import body_color
    world = World()
    world.add_body(Plane(normal=(0, 0, 1)))
    bodies = [world.add_body(Sphere(0.1), mass=1.0, position=(k, 0, 1)) for k in range(4)]
    geometry = WorldGeometry(world)
    before = {b: geometry.color[b.index, :3].copy() for b in bodies}
    np.testing.assert_allclose(before[bodies[2]], body_color(3))
    world.remove_body(bodies[1])
    added = world.add_body(Sphere(0.1), mass=1.0, position=(9, 0, 1))
    geometry.refresh()
    for b in (bodies[0], bodies[2], bodies[3]):
        np.testing.assert_array_equal(geometry.color[b.index, :3], before[b])
    np.testing.assert_allclose(geometry.color[added.index, :3], body_color(5))


def test_the_joint_overlay_marks_are_each_joints_anchor_and_axis_from_arrays():
    """The J overlay read ``joint.anchor`` and ``joint.axis`` joint by joint (a quaternion
    made a matrix each: 52 ms a frame for 2000 joints); ``WorldGeometry.joint_marks`` takes
    them from arrays (``World.joint_anchors``, each axis in body_a's frame found once). The
    same points and directions, a hinge on the world frame and a removed body included."""
    from physics import Ball, Hinge, RotationLock, Slider
    world = World(gravity=(0, 0, -9.81))
    world.add_body(Plane(normal=(0, 0, 1)))
    spare = world.add_body(Sphere(0.1), mass=1.0, position=(5, 0, 1))
    tilt = np.array([0.9, 0.1, 0.3, 0.2])
    a = world.add_body(Box((0.1, 0.2, 0.3)), mass=1.0, position=(0, 0, 2),
                       orientation=tilt / np.linalg.norm(tilt))
    b = world.add_body(Capsule(0.1, 0.2), mass=1.0, position=(0.5, 0, 2))
    c = world.add_body(Cylinder(0.1, 0.1), mass=1.0, position=(1.0, 0, 2))
    world.add_joint(Hinge(None, a, anchor=(0, 0, 2.3), axis=(0, 1, 0)))
    world.add_joint(Ball(a, b, anchor=(0.25, 0, 2)))
    world.add_joint(Slider(b, c, axis=(1, 0, 0)))
    world.add_joint(RotationLock(a, c))
    world.step(20)
    world.remove_body(spare)                       # (the jointed bodies' indices move down)
    world.step(5)
    geometry = WorldGeometry(world)
    anchors, points, axes = geometry.joint_marks()
    want = np.array([j.anchor for j in world.joints])
    np.testing.assert_allclose(anchors, want, atol=1e-12)
    with_axis = [j for j in world.joints if getattr(j, "axis", None) is not None]
    assert len(with_axis) == 2 and len(axes) == 2          # (the lock holds no axis)
    np.testing.assert_allclose(points, [j.anchor for j in with_axis], atol=1e-12)
    np.testing.assert_allclose(axes, [j.axis for j in with_axis], atol=1e-12)
    world.step(5)                                   # the cached axes turn with body_a
    anchors, points, axes = geometry.joint_marks()
    np.testing.assert_allclose(axes, [j.axis for j in with_axis], atol=1e-12)
    np.testing.assert_allclose(world.joint_anchors, [j.anchor for j in world.joints],
                               atol=1e-12)
