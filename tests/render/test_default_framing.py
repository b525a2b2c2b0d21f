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
