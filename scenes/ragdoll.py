"""A capsule ragdoll shoved down a flight of stairs."""
from physics import Box, Plane

from scenes.humanoid import STANDING_PELVIS_HEIGHT, add_ragdoll

TITLE = "Ragdoll on the stairs"
DESCRIPTION = ("A 15-capsule, 70 kg humanoid (cone/twist-limited ball joints, limited hinges) "
               "shoved in the back at the top of a flight of stairs.")
PARAMS = {"steps": 8, "rise": 0.2, "run": 0.26, "push": 1.6, "friction": 0.8, "yaw": 0.0,
          "self_collision": True}
CAMERA = {"target": (0.8, 0.0, 1.35), "distance": 6.5, "yaw": -70, "pitch": 15}


def add_stairs(world, steps, rise, run, width=2.0, landing=1.2, friction=0.8):
    """Static boxes: a landing (x in [-landing, 0]) at height steps*rise, then steps - 1
    treads going down along +x, each ``run`` deep; the ground plane continues below."""
    top = steps * rise
    boxes = [world.add_body(Box((landing / 2, width / 2, top / 2)), static=True,
                            position=(-landing / 2, 0, top / 2), friction=friction,
                            name="landing")]
    for k in range(1, steps):
        h = (steps - k) * rise
        boxes.append(world.add_body(Box((run / 2, width / 2, h / 2)), static=True,
                                    position=((k - 0.5) * run, 0, h / 2), friction=friction,
                                    name=f"step{k}"))
    return boxes


def build(world, steps=8, rise=0.2, run=0.26, push=1.6, friction=0.8, yaw=0.0,
          self_collision=True):
    """A 15-capsule, 70 kg ragdoll standing on a landing at the top of a flight of
    stairs, its upper body shoved down them.

    Parameters:
        steps (count): how many steps, 1 to 100 (the landing counts as the top one).
        rise (m): each step's height.
        run (m): each tread's depth along x.
        push (m/s): the speed given to the upper body (torso, head, arms) along +x, down
            the stairs.
        friction (-): Coulomb friction coefficient of the ragdoll, the stairs and the
            ground.
        yaw (rad): the figure's facing about the vertical (0 faces down the stairs).
        self_collision (true/false): whether the ragdoll's own segments collide.
    """
    steps = int(steps)
    if not 1 <= steps <= 100 or rise <= 0 or run <= 0:
        raise ValueError(f"need 1 <= steps <= 100, rise > 0, run > 0; got {steps}, {rise}, {run}")
    world.add_body(Plane(), friction=friction, name="ground")
    add_stairs(world, steps, rise, run, friction=friction)
    top = steps * rise
    doll = add_ragdoll(world, (-0.25, 0.0, top + STANDING_PELVIS_HEIGHT + 0.002), yaw=yaw,
                       friction=friction, self_collision=self_collision)
    for name in ("torso", "head", "upper_arm_l", "upper_arm_r", "forearm_l", "forearm_r",
                 "hand_l", "hand_r"):
        doll[name].linear_velocity = (push, 0.0, 0.0)
