"""A humanoid standing on the ground holding a box in both hands: two closed loops."""
import numpy as np

from physics import Ball, Box, Plane

from scenes.humanoid import STANDING_PELVIS_HEIGHT, add_ragdoll, hold_pose

TITLE = "Humanoid holding a box"
DESCRIPTION = ("A 70 kg humanoid held upright by hinge servos, feet on the ground (friction "
               "contacts) and a box ball-jointed to both hands: loops through the ground and "
               "the arms. It squats slowly (squat=0: it stands still).")
PARAMS = {"box_mass": 5.0, "stiffness": 4000.0, "damping": 150.0, "friction": 0.8,
          "squat": 0.4, "period": 4.0}
CAMERA = {"target": (0.2, 0.0, 0.9), "distance": 3.5, "yaw": -50, "pitch": 10}


def build(world, box_mass=5.0, stiffness=4000.0, damping=150.0, friction=0.8, squat=0.4,
          period=4.0):
    """A 70 kg humanoid standing on the ground, held upright by hinge servos, with a box
    ball-jointed to both hands; it squats slowly, feet flat and torso upright.

    Parameters:
        box_mass (kg): the held box's mass.
        stiffness (N m/rad): every joint servo's stiffness.
        damping (N m s/rad): every joint servo's damping.
        friction (-): Coulomb friction coefficient of the humanoid, the box and the ground.
        squat (rad): the deepest thigh tilt of the knee bend (0: it stands still).
        period (s): the time of one squat, down and up.
    """
    if box_mass <= 0 or stiffness <= 0 or damping < 0 or period <= 0:
        raise ValueError("box_mass, stiffness and period must be positive and damping >= 0")
    world.add_body(Plane(), friction=friction, name="ground")
    doll = add_ragdoll(world, (0.0, 0.0, STANDING_PELVIS_HEIGHT + 0.001), standing=True,
                       arms="forward", friction=friction)
    hands = [doll["hand_l"], doll["hand_r"]]
    centre = 0.5 * (hands[0].position + hands[1].position)
    grip = hands[0].position[1] - doll["hand_l"].shape.radius - centre[1]   # box half width
    box = world.add_body(Box((0.12, grip, 0.12)), mass=box_mass, position=centre,
                         friction=friction, name="box")
    for hand in hands:
        world.add_joint(Ball(hand, box, anchor=hand.position, name=f"grip_{hand.name[-1]}"))
    for side in ("l", "r"):
        world.ignore_collision(box, doll[f"forearm_{side}"])
    hold_pose(doll, stiffness, damping)
    if squat == 0:
        return None
    legs = {n: doll.joints[n] for n in ("hip_l", "hip_r", "knee_l", "knee_r", "ankle_l", "ankle_r")}

    def squat_slowly(world):
        beta = 0.5 * squat * (1 - np.cos(2 * np.pi * world.time / period))
        for side in ("l", "r"):
            legs[f"hip_{side}"].set_servo(-beta, stiffness, damping)
            legs[f"knee_{side}"].set_servo(2 * beta, stiffness, damping)
            legs[f"ankle_{side}"].set_servo(-beta, stiffness, damping)
    return squat_slowly
