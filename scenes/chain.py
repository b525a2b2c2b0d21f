"""A chain of thin rods on ball joints, hung from one end and released horizontal."""
import numpy as np

from physics import Ball, Capsule, Plane

TITLE = "Chain"
DESCRIPTION = "n capsule links (0.1 m, 0.1 kg) on ball joints, hung from the world, released horizontal."
PARAMS = {"links": 30, "link_length": 0.1, "angle": 0.0, "self_collision": True}
CAMERA = {"target": (1.0, 0, 1.5), "distance": 6.0, "yaw": 90, "pitch": 10}


def build(world, links=30, link_length=0.1, angle=0.0, self_collision=True):
    """A chain of 0.1 kg capsule links on ball joints, hung from the world 2 m up and
    released at rest.

    Parameters:
        links (count): how many links (1 to 2000).
        link_length (m): each link's length, joint to joint (above 0).
        angle (rad): the chain's start tilt below the horizontal (pi/2 hangs straight down).
        self_collision (true/false): whether links that are not neighbours collide (off,
            the chain is a purely conservative mechanism).
    """
    if not 1 <= links <= 2000:
        raise ValueError(f"links must be from 1 to 2000, got {links}")
    if link_length <= 0:
        raise ValueError(f"link_length must be positive, got {link_length}")
    world.add_body(Plane(offset=-links * link_length - 0.5), name="ground")
    d = np.array([np.cos(angle), 0.0, -np.sin(angle)])
    tilt = np.pi / 2 + angle                     # local z onto d
    q = (np.cos(tilt / 2), 0.0, np.sin(tilt / 2), 0.0)
    prev, top = None, np.array([0.0, 0.0, 2.0])
    for i in range(int(links)):
        body = world.add_body(Capsule(0.01, link_length / 2), mass=0.1, orientation=q,
                              position=top + d * link_length * (i + 0.5))
        if not self_collision:
            body.collision_mask = 0
        world.add_joint(Ball(prev, body, anchor=top + d * link_length * i))
        prev = body
