"""load_urdf: URDF links and joints as bodies and joints, checked against hand kinematics,
hand dynamics and statics; every refused input names its element."""
import warnings

import numpy as np
import pytest

from physics import ArticulatedView, Fixed, Gear, Hinge, Slider, World
from physics.urdf import load_urdf
from physics.urdf_parse import rpy_matrix

G = 9.81


def _rot(axis, angle):
    """Rodrigues' rotation about a unit axis."""
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _inertial(mass, xyz="0 0 0", rpy="0 0 0", ixx=0.01, iyy=0.01, izz=0.01, ixy=0.0, ixz=0.0,
              iyz=0.0):
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" '
            f'iyz="{iyz}"/></inertial>')


def _load(world, text, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = load_urdf(world, text, **kwargs)
    return robot, [str(w.message) for w in caught]


# A planar 2-link arm lying along +x, turning about y: links of 1 kg and 0.6 kg, 1.0 m and
# 0.8 m, centres of mass 0.4 m and 0.3 m out. The first link's inertia is given in an
# inertial frame turned by rpy (0.3, 0, 0.2) with off-diagonal terms; its moment about the
# link's y axis is worked out by hand in the test.
I1 = np.array([[0.02, 0.003, -0.001], [0.003, 0.09, 0.002], [-0.001, 0.002, 0.085]])
ARM = f"""<robot name="arm">
  <link name="base"/>
  <link name="upper">
    {_inertial(1.0, "0.4 0 0", "0.3 0 0.2", I1[0, 0], I1[1, 1], I1[2, 2], I1[0, 1], I1[0, 2],
               I1[1, 2])}
    <collision><origin xyz="0.4 0 0" rpy="0 1.5707963267948966 0"/>
      <geometry><cylinder radius="0.05" length="0.9"/></geometry></collision>
  </link>
  <link name="lower">
    {_inertial(0.6, "0.3 0 0", ixx=0.002, iyy=0.04, izz=0.04)}
    <collision><origin xyz="0.3 0 0"/><geometry><box size="0.7 0.06 0.06"/></geometry></collision>
  </link>
  <link name="tool"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 1.5"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="40" velocity="3"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/>
    <origin xyz="1.0 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2.5" upper="2.5" effort="20" velocity="3"/></joint>
  <joint name="flange" type="fixed"><parent link="lower"/><child link="tool"/>
    <origin xyz="0.8 0 0" rpy="0 0 1.5707963267948966"/></joint>
</robot>"""


def test_arm_maps_links_to_bodies_and_joints_to_hinges_merging_the_massless_tool():
    world = World()
    robot, warned = _load(world, ARM)
    assert set(robot.bodies) == {"upper", "lower", "tool"}      # base: the world itself
    assert robot.bodies["tool"] is robot.bodies["lower"]
    assert isinstance(robot.joints["shoulder"], Hinge) and set(robot.joints) == {
        "shoulder", "elbow"}
    assert robot.joints["shoulder"].body_a is None
    assert robot.joints["elbow"].limits == (-2.5, 2.5)
    assert robot.effort_limits == {"shoulder": 40.0, "elbow": 20.0}
    assert len(world.bodies) == 2 and len(world.joints) == 2
    assert any("'tool'" in line and "merged into link 'lower'" in line
               for line in robot.ignored)
    assert len(warned) == 1 and "'tool'" in warned[0]
    # the masses and centres of mass are the URDF's
    assert robot.bodies["upper"].mass == 1.0
    np.testing.assert_allclose(robot.bodies["upper"].position, (0.4, 0, 1.5), atol=1e-15)
    np.testing.assert_allclose(robot.bodies["lower"].position, (1.3, 0, 1.5), atol=1e-15)


def _arm_forward_kinematics(base_p, base_R, q1, q2):
    """Link frames from the URDF's joint origins and axes, composed by hand."""
    y = np.array([0.0, 1.0, 0.0])
    p_up, R_up = base_p + base_R @ (0, 0, 1.5), base_R @ _rot(y, q1)
    p_low, R_low = p_up + R_up @ (1.0, 0, 0), R_up @ _rot(y, q2)
    p_tool, R_tool = p_low + R_low @ (0.8, 0, 0), R_low @ _rot((0, 0, 1), np.pi / 2)
    return {"base": (base_p, base_R), "upper": (p_up, R_up), "lower": (p_low, R_low),
            "tool": (p_tool, R_tool)}


@pytest.mark.parametrize("q", [(0.0, 0.0), (0.7, -1.2), (-1.9, 2.4)])
def test_arm_link_poses_match_forward_kinematics_from_the_urdf(q):
    world = World()
    base_p = np.array([0.3, -0.2, 0.1])
    base_q = np.array([np.cos(0.25), 0.0, 0.0, np.sin(0.25)])      # 0.5 rad about z
    robot, _ = _load(world, ARM, position=base_p, orientation=base_q)
    view = ArticulatedView(world)
    view.set_state(np.array(q), np.zeros(2))
    np.testing.assert_allclose([robot.joints["shoulder"].angle, robot.joints["elbow"].angle],
                               q, atol=1e-12)
    expected = _arm_forward_kinematics(base_p, _rot((0, 0, 1), 0.5), *q)
    for link, (p, R) in expected.items():
        pose_p, pose_R = robot.link_pose(link)
        np.testing.assert_allclose(pose_p, p, atol=1e-12, err_msg=link)
        np.testing.assert_allclose(pose_R, R, atol=1e-12, err_msg=link)


def test_arm_joint_space_mass_matrix_matches_the_hand_computation():
    world = World()
    robot, _ = _load(world, ARM)
    view = ArticulatedView(world)
    q2 = 0.8
    view.set_state(np.array([0.3, q2]), np.zeros(2))
    # moments about y (the hinge axis): link 1's inertia turned from its inertial frame
    R = rpy_matrix((0.3, 0.0, 0.2))
    Iy1 = (R @ I1 @ R.T)[1, 1]
    Iy2 = 0.04
    m1, m2, lc1, lc2, l1 = 1.0, 0.6, 0.4, 0.3, 1.0
    M11 = Iy1 + Iy2 + m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * np.cos(q2))
    M12 = Iy2 + m2 * (lc2**2 + l1 * lc2 * np.cos(q2))
    M22 = Iy2 + m2 * lc2**2
    np.testing.assert_allclose(view.mass_matrix(), [[M11, M12], [M12, M22]], rtol=1e-12)
    # and the statics of the arm lying level: gravity turns it about +y by m g x, so the
    # joint torques that hold it (gravity's part of the bias) are minus those moments
    view.set_state(np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(view.gravity_forces(),
                               [-G * (m1 * lc1 + m2 * (l1 + lc2)), -G * m2 * lc2], rtol=1e-12)


def test_fixed_base_arm_holds_level_with_motor_torques_equal_to_the_statics():
    world = World(dt=1 / 240)
    robot, _ = _load(world, ARM, motors=True)
    world.step(240)
    shoulder, elbow = robot.joints["shoulder"], robot.joints["elbow"]
    assert abs(shoulder.angle) < 1e-8 and abs(elbow.angle) < 1e-8
    # gravity turns the level arm about +y; the motors hold it with the opposite torque
    np.testing.assert_allclose(shoulder.motor_effort, -G * (1.0 * 0.4 + 0.6 * 1.3), rtol=1e-6)
    np.testing.assert_allclose(elbow.motor_effort, -G * 0.6 * 0.3, rtol=1e-6)
    # within their efforts (40 and 20 N m): a 1 N m motor cannot hold the elbow (1.77 N m)
    weak = World(dt=1 / 240)
    robot, _ = _load(weak, ARM.replace('effort="20"', 'effort="1"'), motors=True)
    weak.step(60)
    assert robot.joints["elbow"].angle > 0.1


def test_rpy_is_fixed_axis_roll_then_pitch_then_yaw():
    # built by hand: roll pi/2 about x turns y onto z; pitch pi/2 about the fixed y then
    # turns z onto x and x onto -z, so x -> -z, y -> x, z -> -y
    expected = np.array([[0, 1, 0], [0, 0, -1], [-1, 0, 0]], dtype=float)
    np.testing.assert_allclose(rpy_matrix((np.pi / 2, np.pi / 2, 0)), expected, atol=1e-15)
    r, p, y = 0.3, -0.7, 1.1
    np.testing.assert_allclose(rpy_matrix((r, p, y)), _rot((0, 0, 1), y) @ _rot(
        (0, 1, 0), p) @ _rot((1, 0, 0), r), atol=1e-15)
    # and a joint origin's rpy carries the child's frame, axis and shape with it
    text = f"""<robot name="r"><link name="base"/>
      <link name="arm">{_inertial(2.0, "0 0 0.5")}
        <collision><origin xyz="0 0 0.5"/><geometry><cylinder radius="0.05" length="1"/>
        </geometry></collision></link>
      <joint name="j" type="continuous"><parent link="base"/><child link="arm"/>
        <origin xyz="1 2 3" rpy="{np.pi / 2} {np.pi / 2} 0"/><axis xyz="0 0 1"/></joint>
    </robot>"""
    world = World()
    robot, _ = _load(world, text)
    p, R = robot.link_pose("arm")
    np.testing.assert_allclose(R, expected, atol=1e-15)
    np.testing.assert_allclose(robot.bodies["arm"].position, (1, 2, 3) + expected @ (0, 0, .5),
                               atol=1e-15)
    np.testing.assert_allclose(robot.joints["j"].axis, (0, -1, 0), atol=1e-15)


def test_prismatic_joint_is_a_slider_that_its_limits_hold():
    text = f"""<robot name="lift"><link name="rail"/>
      <link name="cart">{_inertial(3.0)}
        <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
      <joint name="slide" type="prismatic"><parent link="rail"/><child link="cart"/>
        <origin xyz="0 0 1"/><axis xyz="0 0 1"/>
        <limit lower="-0.25" upper="0.5" effort="100" velocity="1"/></joint>
    </robot>"""
    world = World(dt=1 / 240)
    robot, _ = _load(world, text)
    slide = robot.joints["slide"]
    assert isinstance(slide, Slider) and slide.limits == (-0.25, 0.5)
    world.step(240)                          # falls 0.25 m onto its lower limit and rests
    assert abs(slide.position + 0.25) < 3e-4
    np.testing.assert_allclose(slide.limit_effort, 3.0 * G, rtol=1e-6)


def test_mimic_joint_is_a_gear_and_damping_a_damper():
    text = f"""<robot name="g"><link name="base"/>
      <link name="a">{_inertial(1.0, ixx=0.1, iyy=0.1, izz=0.1)}</link>
      <link name="b">{_inertial(1.0, ixx=0.1, iyy=0.1, izz=0.1)}</link>
      <joint name="ja" type="continuous"><parent link="base"/><child link="a"/>
        <axis xyz="0 0 1"/><dynamics damping="0.05"/></joint>
      <joint name="jb" type="continuous"><parent link="a"/><child link="b"/>
        <axis xyz="0 0 1"/><mimic joint="ja" multiplier="2"/></joint>
    </robot>"""
    world = World(gravity=(0, 0, 0), dt=1 / 240)
    robot, _ = _load(world, text)
    assert isinstance(robot.couplings["jb"], Gear)
    view = ArticulatedView(world)
    view.set_state(np.zeros(2), np.array([1.0, 2.0]))
    world.step(240)
    ja, jb = robot.joints["ja"], robot.joints["jb"]
    assert abs(jb.angle - 2 * ja.angle) < 1e-8
    # the damper on ja: about ja the two discs' 0.1 + 0.1 kg m^2 ... turning at 1 and 3
    # rad/s; the gear makes the inertia about ja 0.1 + 0.1 * 3^2 = 1.0 kg m^2, so the rate
    # falls as exp(-c t / 1.0) (an implicit damper: (1 + c h)^-n)
    np.testing.assert_allclose(ja.rate, (1 + 0.05 / 240) ** -240, rtol=1e-6)


def test_floating_base_falls_freely_with_its_joints():
    # a massless root frame (base_footprint) welded to the torso is carried by the torso
    text = f"""<robot name="f"><link name="footprint"/><link name="torso">{_inertial(5.0)}</link>
      <joint name="weld" type="fixed"><parent link="footprint"/><child link="torso"/>
        <origin xyz="0 0 0.5"/></joint>
      <link name="leg">{_inertial(1.0, "0 0 -0.3")}</link>
      <joint name="hip" type="continuous"><parent link="torso"/><child link="leg"/>
        <axis xyz="0 1 0"/></joint></robot>"""
    world = World(dt=1 / 240)
    robot, _ = _load(world, text, fixed_base=False, position=(0, 0, 10))
    assert robot.bodies["footprint"] is robot.bodies["torso"] and len(world.bodies) == 2
    world.step(240)
    np.testing.assert_allclose(robot.bodies["torso"].position, (0, 0, 10.5 - G / 2), atol=1e-9)
    np.testing.assert_allclose(robot.link_pose("footprint")[0], (0, 0, 10 - G / 2), atol=1e-9)
    assert abs(robot.joints["hip"].angle) < 1e-9


def test_meshes_off_centre_collisions_and_planar_joints_are_listed_as_ignored():
    text = f"""<robot name="m"><link name="base">
        <collision><geometry><box size="1 1 0.1"/></geometry></collision></link>
      <link name="shell">{_inertial(1.0)}
        <collision><geometry><mesh filename="shell.stl"/></geometry></collision>
        <visual><geometry><mesh filename="shell.dae"/></geometry></visual></link>
      <link name="offset">{_inertial(1.0)}
        <collision><origin xyz="0.2 0 0"/><geometry><sphere radius="0.1"/></geometry>
        </collision></link>
      <link name="puck">{_inertial(1.0)}</link>
      <joint name="j1" type="fixed"><parent link="base"/><child link="shell"/>
        <origin xyz="0 0 1"/></joint>
      <joint name="j2" type="continuous"><parent link="shell"/><child link="offset"/></joint>
      <joint name="j3" type="planar"><parent link="base"/><child link="puck"/>
        <axis xyz="0 0 1"/></joint>
    </robot>"""
    world = World()
    robot, warned = _load(world, text)
    assert robot.bodies["base"].static and robot.bodies["base"].shape is not None
    assert isinstance(robot.joints["j1"], Fixed)
    assert robot.bodies["shell"].shape is None and robot.bodies["offset"].shape is None
    assert "j3" not in robot.joints and not any(j.body_b is robot.bodies["puck"]
                                                for j in world.joints)
    text_ignored = "\n".join(robot.ignored)
    for expected in ("mesh 'shell.stl'", "<visual>", "centred 0.2 m from the centre of mass",
                     "planar joints are not supported"):
        assert expected in text_ignored and expected in warned[0]


def test_a_moving_link_without_inertial_takes_missing_mass_with_its_shapes_inertia():
    text = """<robot name="w"><link name="base"/>
      <link name="wheel"><collision><origin xyz="0 0 0.3"/><geometry><sphere radius="0.1"/>
        </geometry></collision></link>
      <joint name="axle" type="continuous"><parent link="base"/><child link="wheel"/>
        <axis xyz="0 1 0"/></joint></robot>"""
    with pytest.raises(ValueError, match="link 'wheel': has no mass .* moved by joint 'axle'"):
        load_urdf(World(), text)
    world = World()
    robot, warned = _load(world, text, missing_mass=0.5)
    wheel = robot.bodies["wheel"]
    assert wheel.mass == 0.5 and wheel.shape is not None
    np.testing.assert_allclose(wheel.inertia, np.eye(3) * 0.4 * 0.5 * 0.1**2, rtol=1e-15)
    np.testing.assert_allclose(wheel.position, (0, 0, 0.3), atol=1e-15)
    assert "given missing_mass 0.5 kg" in warned[0]


def _gripper(wrist):
    finger = '<limit lower="0" upper="0.04" effort="20" velocity="0.1"/>'
    # on a wrist the palm turns; without one the palm is the robot's static root
    palm_joint = ('<link name="base"/><joint name="wrist" type="continuous"><parent '
                  'link="base"/><child link="palm"/><axis xyz="0 0 1"/>'
                  '<limit effort="5" velocity="1"/></joint>' if wrist else "")
    return f"""<robot name="hand">
      <link name="palm">{_inertial(1.0)}<collision><origin xyz="0 0 0.1"/><geometry>
        <box size="0.1 0.1 0.05"/></geometry></collision></link>
      <link name="left">{_inertial(0.1, ixx=1e-3, iyy=1e-3, izz=1e-3)}</link>
      <link name="right">{_inertial(0.1, ixx=1e-3, iyy=1e-3, izz=1e-3)}</link>
      {palm_joint}
      <joint name="left" type="prismatic"><parent link="palm"/><child link="left"/>
        <axis xyz="0 1 0"/>{finger}</joint>
      <joint name="right" type="prismatic"><parent link="palm"/><child link="right"/>
        <axis xyz="0 -1 0"/>{finger}<mimic joint="left"/></joint>
    </robot>"""


def test_a_mimicking_finger_follows_its_gear_and_gets_no_motor():
    # the palm static: the left finger's motor opens the hand at 1 cm/s and the right
    # finger follows through the gear (a motor at 0 on it would stall both)
    world = World(gravity=(0, 0, 0), dt=1 / 240)
    robot, _ = _load(world, _gripper(wrist=False), motors=True)
    assert isinstance(robot.couplings["right"], Gear)
    robot.joints["left"].set_motor(0.01, 20.0)
    world.step(240)
    np.testing.assert_allclose(robot.joints["left"].position, 0.01, rtol=1e-3)
    np.testing.assert_allclose(robot.joints["right"].position, robot.joints["left"].position,
                               atol=1e-9)


def test_a_mimic_the_gears_refuse_is_listed():
    # on a palm that turns on its wrist the two fingers' sliders move three bodies: a gear
    # between them is refused (see Gear), and listed
    world = World()
    robot, warned = _load(world, _gripper(wrist=True))
    assert "right" not in robot.couplings
    assert "joint 'right' <mimic joint='left'>" in warned[0]


# -- refused input: a ValueError naming the element, and nothing added ----------------------
_GOOD_LINK = f'<link name="b">{_inertial(1.0)}</link>'


def _joint(kind="revolute", axis="0 0 1", parent="a", child="b", extra="", name="j"):
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<axis xyz="{axis}"/>{limit}{extra}</joint>')


@pytest.mark.parametrize("text, message", [
    ("<robot name='r'><link name='a'>", "not well-formed XML"),
    ("<robut name='r'/>", "root element must be <robot>"),
    (f"<robot><link name='a'/>{_GOOD_LINK}{_joint(kind='ball')}</robot>",
     "joint 'j': type 'ball' is not a URDF joint type"),
    (f"<robot><link name='a'/>{_GOOD_LINK}{_joint(parent='nowhere')}</robot>",
     "joint 'j': <parent link='nowhere'> is no link"),
    (f"<robot><link name='a'/>{_GOOD_LINK}<joint name='j' type='fixed'><parent link='a'/>"
     "</joint></robot>", "joint 'j': has no <child link=>"),
    (f"<robot><link name='a'/>{_GOOD_LINK}{_joint(axis='0 0 0')}</robot>",
     "joint 'j': axis (0.0, 0.0, 0.0) has zero length"),
    (f"<robot><link name='a'/><link name='b'>{_inertial(0)}</link>{_joint()}</robot>",
     "link 'b': has no mass"),
    (f"<robot><link name='a'/><link name='b'>{_inertial(-1)}</link>{_joint()}</robot>",
     "link 'b' <inertial>: <mass value> -1 is negative"),
    (f"<robot><link name='a'/><link name='b'>{_inertial(1, ixx=1, iyy=0.1, izz=0.1)}</link>"
     f"{_joint()}</robot>", "link 'b' <inertial><inertia> is no rigid body's"),
    (f"<robot><link name='a'/>{_GOOD_LINK}<link name='c'/>{_joint()}</robot>",
     "2 root links ['a', 'c']"),
    (f"<robot><link name='a'>{_inertial(1)}</link>{_GOOD_LINK}{_joint()}"
     f"{_joint(parent='b', child='a', name='k')}</robot>",
     "form a cycle"),
    (f"<robot><link name='a'/>{_GOOD_LINK}" + _joint(extra="<mimic joint='q'/>") + "</robot>",
     "joint 'j': <mimic joint> 'q' is no joint"),
    (f"<robot><link name='a'/>{_GOOD_LINK}<joint name='j' type='revolute'><parent link='a'/>"
     "<child link='b'/></joint></robot>", "joint 'j': a revolute joint needs <limit"),
    (f"<robot><link name='a'/>{_GOOD_LINK}" + _joint(extra="<dynamics friction='-2'/>")
     + "</robot>", "joint 'j': <dynamics friction> must not be negative, got -2"),
    (f"<robot><link name='a'/>{_GOOD_LINK}" + _joint(kind="continuous").replace(
        'effort="1"', 'effort="-1"') + "</robot>",
     "joint 'j': <limit effort> must not be negative, got -1"),
    (f"<robot><link name='a'/>{_GOOD_LINK}<joint name='j' type='fixed'><parent link='a'/>"
     "<child link='b'/><origin xyz='0 1'/></joint></robot>",
     "joint 'j': <origin xyz='0 1'> must be 3 finite numbers"),
    (f"<robot><link name='a'/><link name='b'>{_inertial(1)}<collision><geometry>"
     "<cone radius='1'/></geometry></collision></link>" + _joint() + "</robot>",
     "link 'b' <collision> 0: unknown geometry <cone>"),
])
def test_bad_urdf_is_a_value_error_naming_the_element(text, message):
    world = World()
    world.add_body(None, mass=1.0, inertia=(1, 1, 1))
    with pytest.raises(ValueError) as refused:
        load_urdf(world, text)
    assert message in str(refused.value)
    assert len(world.bodies) == 1 and not world.joints


def test_a_failure_after_some_bodies_were_made_leaves_the_world_as_it_was():
    # a 1e9 kg link is refused by add_body, after the first link's body was made
    text = (f"<robot><link name='a'>{_inertial(1)}</link><link name='b'>{_inertial(1e9)}"
            f"</link>{_joint()}</robot>")
    world = World()
    with pytest.raises(ValueError, match="link 'b': "):
        load_urdf(world, text, fixed_base=False)
    assert not world.bodies and not world.joints


def test_a_free_base_needs_a_mass_of_its_own_or_its_welded_childs():
    # root 'a' welded to 'b', itself massless: neither can carry the robot
    text = (f"<robot><link name='a'/><link name='b'/>{_joint(kind='fixed')}<link name='c'>"
            f"{_inertial(1)}</link>{_joint(parent='b', child='c', name='k')}</robot>")
    with pytest.raises(ValueError, match="link 'a': has no mass .* is a floating base"):
        load_urdf(World(), text, fixed_base=False)


def test_a_missing_file_and_bad_keywords_are_refused_by_name():
    with pytest.raises(ValueError, match="path_or_string: cannot read URDF file"):
        load_urdf(World(), "/no/such/robot.urdf")
    with pytest.raises(ValueError, match="motors=True needs a positive, finite <limit effort>"):
        load_urdf(World(), ARM.replace('effort="20"', 'effort="0"'), motors=True)
    with pytest.raises(ValueError, match="missing_mass"):
        load_urdf(World(), ARM, missing_mass=-1)


def test_a_file_path_loads_as_the_string_does(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    world = World()
    robot, _ = _load(world, path)
    assert set(robot.joints) == {"shoulder", "elbow"}


def test_the_robot_does_not_collide_with_itself_unless_asked():
    # a rod hanging from a ball on a hinge above the static base reaches 5 cm into it: the
    # base and the rod are two links apart
    text = f"""<robot name="s"><link name="base">
        <collision><geometry><box size="1 1 0.1"/></geometry></collision></link>
      <link name="ball">{_inertial(1.0)}
        <collision><geometry><sphere radius="0.05"/></geometry></collision></link>
      <link name="rod">{_inertial(1.0, "0 0 -0.5", ixx=0.1, iyy=0.1)}
        <collision><origin xyz="0 0 -0.5"/><geometry><box size="0.05 0.05 1"/></geometry>
        </collision></link>
      <joint name="j1" type="continuous"><parent link="base"/><child link="ball"/>
        <origin xyz="0 0 1"/><axis xyz="0 1 0"/></joint>
      <joint name="j2" type="continuous"><parent link="ball"/><child link="rod"/>
        <axis xyz="0 1 0"/></joint></robot>"""
    for self_collision in (False, True):
        world = World(gravity=(0, 0, 0))
        robot, _ = _load(world, text, self_collision=self_collision)
        world.step()
        assert (robot.bodies["base"] in robot.bodies["rod"].touching) is self_collision
