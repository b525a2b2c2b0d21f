"""What each ready scene is for actually happens (cheap versions of the scenes)."""
import numpy as np
import pytest

import scenes
from physics import World
from scenes.humanoid import STANDING_PELVIS_HEIGHT, add_ragdoll


def bodies(world):
    return {b.name: b for b in world.bodies}


def run(scene, seconds):
    scene.step(int(round(seconds / scene.world.dt)))


# -- Newton's cradle ------------------------------------------------------------------------
def test_cradle_passes_the_momentum_to_the_last_ball():
    scene = scenes.load("newtons_cradle")
    world = scene.world
    balls = [b for b in world.bodies if b.name.startswith("ball")]
    incoming = 0.0
    for _ in range(int(0.5 / world.dt)):        # swing in until the first ball is stopped
        scene.step()
        v = [b.linear_velocity[0] for b in balls]
        incoming = max(incoming, v[0])
        if incoming > 0.1 and v[0] < 0.5 * incoming:
            break
    else:
        pytest.fail("the first ball never hit the others")
    scene.step(3)
    v = np.array([b.linear_velocity[0] for b in balls])
    assert v[-1] >= 0.9 * incoming
    assert np.all(np.abs(v[:-1]) < 0.1 * incoming)
    assert world.constraint_error() < 1e-6


def test_cradle_keeps_its_swing_over_many_knocks():
    """Steel on steel with restitution 1: over 5 s (about 10 knocks) the largest kinetic
    energy of each second stays within 1 % of the lifted ball's drop energy."""
    scene = scenes.load("newtons_cradle", angle=0.5, length=0.2)
    world = scene.world
    ball = bodies(world)["ball1"]
    drop = ball.mass * 9.81 * 0.2 * (1 - np.cos(0.5))
    peaks = []
    for _second in range(5):
        peak = 0.0
        for _ in range(240):
            scene.step()
            peak = max(peak, world.kinetic_energy())
        peaks.append(peak)
    assert np.allclose(peaks, drop, rtol=1e-2)


def test_cradle_with_two_lifted_balls_sends_two_out():
    scene = scenes.load("newtons_cradle", lifted=2)
    world = scene.world
    balls = [b for b in world.bodies if b.name.startswith("ball")]
    run(scene, 0.3)                              # both have hit by now, both out ones swing
    v = np.array([b.linear_velocity[0] for b in balls])
    assert v[-1] > 0.3 and v[-2] > 0.3
    assert np.all(np.abs(v[:-2]) < 0.1 * v[-1])


# -- stacks and piles -----------------------------------------------------------------------
def test_small_pyramid_stands_still_until_the_ball_comes():
    scene = scenes.load("box_pyramid", base=3, shot_time=0.6)
    world = scene.world
    boxes = [b for b in world.bodies if b.name.startswith("box")]
    start = np.array([b.position for b in boxes])
    run(scene, 0.5)
    moved = np.linalg.norm(np.array([b.position for b in boxes]) - start, axis=1)
    assert moved.max() < 2e-3
    run(scene, 1.2)                              # the ball rolls in at 8 m/s
    moved = np.linalg.norm(np.array([b.position for b in boxes]) - start, axis=1)
    assert moved.max() > 0.3


def test_dominoes_all_fall_in_turn():
    scene = scenes.load("dominoes", count=8)
    world = scene.world
    dominoes = [b for b in world.bodies if b.name.startswith("domino")]
    fell_at = {}
    for _ in range(int(2.0 / world.dt)):
        scene.step()
        for i, d in enumerate(dominoes):
            if i not in fell_at and d.rotation[2, 2] < np.cos(0.6):   # tipped past 34 deg
                fell_at[i] = world.time
    assert sorted(fell_at) == list(range(len(dominoes)))
    times = [fell_at[i] for i in range(len(dominoes))]
    assert times == sorted(times)                # one after another
    assert all(np.isfinite(world.positions).ravel())


def test_marbles_land_inside_the_bin():
    scene = scenes.load("marbles", count=100, half_width=0.6)
    world = scene.world
    run(scene, 1.0)
    marbles = np.array([b.position for b in world.bodies if b.name.startswith("marble")])
    assert len(marbles) == 100
    assert np.all(np.abs(marbles[:, :2]) < 0.6)
    assert np.all((marbles[:, 2] > 0.02) & (marbles[:, 2] < 0.06))     # resting on the floor


# -- ragdolls -------------------------------------------------------------------------------
def test_ragdoll_has_fifteen_segments_and_realistic_mass():
    world = World()
    doll = add_ragdoll(world, (0, 0, STANDING_PELVIS_HEIGHT))
    assert len(doll) == 15
    assert doll.mass == pytest.approx(70.0, abs=2.0)
    kinds = {name: type(j).__name__ for name, j in doll.joints.items()}
    for name in ("spine", "neck", "shoulder_l", "shoulder_r", "hip_l", "hip_r"):
        assert kinds[name] == "Ball" and doll.joints[name].swing_limit is not None
    for name in ("elbow_l", "elbow_r", "knee_l", "knee_r"):
        assert kinds[name] == "Hinge" and doll.joints[name].limits is not None
    assert world.constraint_error() < 1e-12
    # standing: the soles touch z = 0
    lowest = min(b.position[2] - b.shape.radius for n, b in doll.items() if n.startswith("foot"))
    assert lowest == pytest.approx(0.0, abs=1e-9)


def test_ragdoll_scale_and_yaw():
    world = World()
    doll = add_ragdoll(world, (1.0, 2.0, 3.0), scale=0.5, yaw=np.pi / 2)
    assert doll.mass == pytest.approx(70.0 / 8, rel=1e-6)
    assert np.allclose(doll["pelvis"].position, (1.0, 2.0, 3.0))
    # the left side (+y at yaw 0) now points to -x
    assert doll["hand_l"].position[0] < 1.0 - 0.1


def test_ragdoll_tumbles_down_the_stairs_and_holds_together():
    scene = scenes.load("ragdoll")
    world = scene.world
    parts = bodies(world)
    top = scene.params["steps"] * scene.params["rise"]
    worst = 0.0
    for _ in range(int(3.0 / world.dt)):
        scene.step()
        worst = max(worst, world.constraint_error())
    assert np.all(np.isfinite(world.positions))
    assert worst < 1e-3
    pelvis = parts["pelvis"].position
    assert pelvis[2] < top - 0.5                 # it went down
    doll = np.array([parts[n].position for n in ("pelvis", "torso", "head", "hand_l", "foot_r")])
    assert np.all(np.abs(doll[:, 1]) < 1.0)      # still over the 2 m wide stairs
    assert np.all(doll[:, 2] > -0.05)            # and above the floor


def test_humanoid_stands_holding_the_box():
    scene = scenes.load("humanoid_box", squat=0.0)
    world = scene.world
    parts = bodies(world)
    z0 = parts["pelvis"].position[2]
    box0 = parts["box"].position
    heights = []
    for _ in range(int(3.0 / world.dt)):
        scene.step()
        heights.append(parts["pelvis"].position[2])
    assert np.max(np.abs(np.array(heights) - z0)) < 0.05
    assert np.linalg.norm(parts["box"].position - box0) < 0.05
    assert world.constraint_error() < 1e-6


def test_humanoid_squats_with_the_box():
    scene = scenes.load("humanoid_box", squat=0.4, period=4.0)
    world = scene.world
    parts = bodies(world)
    z0 = parts["pelvis"].position[2]
    run(scene, 2.0)                              # the bottom of the squat
    drop = z0 - parts["pelvis"].position[2]
    assert 0.03 < drop < 0.12
    feet = [parts["foot_l"].position, parts["foot_r"].position]
    assert all(abs(f[2] - 0.04) < 0.01 for f in feet)     # flat on the ground


# -- vehicles and robots --------------------------------------------------------------------
def test_stewart_plate_follows_its_path_within_millimetres():
    scene = scenes.load("stewart")
    world = scene.world
    plate = scene.controller.plate
    worst, worst_angle = 0.0, 0.0
    for _ in range(int(3.0 / world.dt)):
        scene.step()
        c, R = scene.controller.pose(world.time)
        worst = max(worst, np.linalg.norm(plate.position - c))
        cos = (np.trace(R.T @ plate.rotation) - 1) / 2
        worst_angle = max(worst_angle, np.arccos(np.clip(cos, -1, 1)))
    assert worst < 3e-3
    assert worst_angle < np.radians(0.2)
    assert world.constraint_error() < 1e-6
    # it really moved: the path is a 0.1 m circle
    assert np.linalg.norm(plate.position - scene.controller.pose(0.0)[0]) > 0.05


# -- couplings ------------------------------------------------------------------------------
def test_gears_scene_arm_gains_the_work_of_its_torque():
    scene = scenes.load("gears", torque=1.0)
    world = scene.world
    parts = bodies(world)
    joints = scene.controller.joints
    run(scene, 2.5)
    q1, q2 = joints["q1"].angle, joints["q2"].angle
    ke = 0.0
    for name in ("link1", "link2"):
        b = parts[name]
        Iw = b.rotation @ b.inertia @ b.rotation.T
        ke += 0.5 * b.mass * b.linear_velocity @ b.linear_velocity
        ke += 0.5 * b.angular_velocity @ Iw @ b.angular_velocity
    assert ke == pytest.approx(1.0 * q1, rel=0.01)
    assert abs(q2 - 2 * np.sin(q1)) < 1e-6
    ratio = scene.params["ratio"]
    assert joints["driven"].angle == pytest.approx(-joints["drive"].angle / ratio, abs=1e-6)
    assert joints["rack"].position == pytest.approx(0.15 * joints["pinion"].angle, abs=1e-6)
    assert abs(joints["drive"].angle) > 0.5


def test_whiteboard_eraser_stays_on_the_board_and_presses():
    scene = scenes.load("whiteboard")
    world = scene.world
    contact = scene.controller.contact
    far, press = 0.0, []
    for _ in range(int(3.0 / world.dt)):
        scene.step()
        assert abs(contact.distance) < 1e-6
        if world.time > 1.0:
            far = max(far, np.linalg.norm(contact.anchor - scene.controller.path(world.time)))
            press.append(contact.force @ np.array([-1.0, 0.0, 0.0]))   # board pushes back
    assert far < 0.015
    assert min(press) > 0


# -- ragdoll pile ----------------------------------------------------------------------------
def test_a_ragdoll_pile_with_joint_friction_comes_to_rest():
    """Limp joints let a pile sag for seconds (hands rolling under it); with friction in the
    joints two dropped ragdolls lie still within 3 s."""
    scene = scenes.load("ragdoll_pile", count=2, joint_friction=1.0)
    run(scene, 3.0)
    world = scene.world
    assert np.abs(world.linear_velocities).max() < 1e-3
    assert np.abs(world.angular_velocities).max() < 1e-2


def test_a_bad_joint_friction_is_refused_by_its_scene_name():
    with pytest.raises(ValueError, match="joint_friction"):
        scenes.load("ragdoll_pile", count=1, joint_friction=-1.0)


def test_fourbar_starts_with_every_link_moving_as_the_loop_lets_it():
    """The crank's speed sets the coupler's and the rocker's: the joints hold those velocities
    as they are, so the first step keeps the energy (turning the crank alone, the first
    step's projection took 0.36 J of 38.6)."""
    scene = scenes.load("fourbar")
    world, crank = scene.world, bodies(scene.world)["crank"]
    e0 = world.energy()
    scene.step(1)
    assert world.energy() == pytest.approx(e0, rel=1e-6)
    assert crank.angular_velocity[1] == pytest.approx(3.0, rel=0.01)
    assert world.constraint_error() < 1e-8


# -- Wrecking ball --------------------------------------------------------------------------
def test_wrecking_ball_swings_on_its_rope_into_the_wall_and_the_winch_reels_it_up():
    """The ball released taut at 0.9 rad on a 5 m rope reaches the bottom of its swing at
    sqrt(2 g L (1 - cos 0.9)) = 6.09 m/s within 0.5 %, the rope pulling m g + m v^2 / L
    there within 2 %; it knocks the whole wall (3 x 2 boxes, 0.7 m from the jib's foot)
    over, every box pushed on by more than 0.5 m and down on the ground or on another box
    lying there; from 2 s the winch shortens the rope at 1 m/s."""
    scene = scenes.load("wrecking_ball", rows=3, columns=2, winch_time=2.0)
    world = scene.world
    named = bodies(world)
    ball, rope = named["ball"], world.joints[0]
    m, g, L = 300.0, 9.81, 5.0
    while ball.position[0] < 0:
        run(scene, world.dt)
    v = np.linalg.norm(ball.linear_velocity)
    assert v == pytest.approx(np.sqrt(2 * g * L * (1 - np.cos(0.9))), rel=5e-3)
    assert -rope.limit_effort == pytest.approx(m * g + m * v ** 2 / L, rel=0.02)
    run(scene, 2.0 - world.time)
    wall = [b for name, b in named.items() if name.startswith("brick")]
    assert all(b.position[2] < 3 * 0.25 and b.position[0] > 0.7 + 0.5 for b in wall)
    run(scene, 0.5)
    before = rope.distance
    run(scene, 1.0)
    assert rope.distance == pytest.approx(before - 1.0, abs=0.02)
    assert scene.summary()[0][0] == "ball's top speed"
