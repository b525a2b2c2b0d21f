"""The default first camera (no CAMERA) on a scene without a ground plane. Window-free."""
import numpy as np

from physics import Sphere, World
from render.scenedata import WorldGeometry, initial_camera


def test_a_ball_falling_with_no_ground_stays_in_the_default_view():
    world = World(dt=1 / 240)
    world.add_body(Sphere(radius=0.1), mass=1.0, position=(0, 0, 1.0))
    w, h = 1280, 720
    cam = initial_camera(None, WorldGeometry(world), w / h)
    seen = []
    for _ in range(3):                        # 0, 0.5, 1.0 s: fallen 0, 1.2, 4.9 m
        (px, py), = np.asarray(cam.project(world.positions[0], w, h))[:, :2]
        seen.append((world.positions[0, 2], px, py))
        assert 0 <= px <= w and 0 <= py <= h, seen
        world.step(120)
    # (before: framed on the 0.1 m ball alone, 0.5 m away; at 0.5 s it was out of view)
    assert cam.distance > 5.0
    # the reference grid is under the framed fall, not at z = 0 where it hid the ball
    geometry = WorldGeometry(world)
    assert geometry.reference_z < 1.0 - 0.5 * 9.81 * 1.5 ** 2 - 0.1


def test_a_jointed_arm_with_no_ground_is_framed_on_itself():
    from physics import Ball, Box, Capsule, Hinge
    world = World(dt=1 / 240)
    arm = world.add_body(Capsule(radius=0.05, half_length=0.2), mass=1.0, position=(0, 0, 0.8))
    hand = world.add_body(Box(half_extents=(0.1, 0.05, 0.05)), mass=0.5, position=(0, 0, 0.45))
    world.add_joint(Hinge(None, arm, anchor=(0, 0, 1.0), axis=(0, 1, 0)))
    world.add_joint(Ball(arm, hand, anchor=(0, 0, 0.55)))
    geometry = WorldGeometry(world)
    cam = initial_camera(None, geometry, 16 / 9)
    # it hangs from its hinge: not framed with 11 m of fall (17.2 m away), as before 1.06 m
    assert 0.9 < cam.distance < 1.2 and geometry.reference_z == 0.0
