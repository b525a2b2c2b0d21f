"""A .urdf file is a scene: the robot above a ground plane, its parameters load_urdf's."""
import warnings

import pytest

import scenes

ARM = """<robot name="arm"><link name="base"/>
  <link name="rod"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
    <inertia ixx="0.17" iyy="0.17" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 -0.5"/><geometry><box size="0.1 0.1 1"/></geometry>
    </collision></link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/>
    <axis xyz="0 1 0"/><limit effort="50" velocity="2"/></joint>
</robot>"""


def test_a_urdf_file_loads_as_a_scene_with_its_parameters(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # nothing of this robot is left out
        scene = scenes.load(str(path), height=2.0)
    world = scene.world
    assert [b.name for b in world.bodies] == ["ground", "rod"]
    assert world.body("rod").position[2] == pytest.approx(1.5, abs=1e-15)
    assert scenes.describe(str(path))["params"] == {"fixed_base": True, "motors": False,
                                                     "height": 0.0}
    scene.step(240)                 # hanging straight down on its hinge 2 m up: it stays
    assert abs(world.joint("hinge").angle) < 1e-9
    # a free base needs a mass: this one's root link has none, and the build says so
    with pytest.raises(ValueError, match="link 'base': has no mass .* is a floating base"):
        scenes.load_with(str(path), {"fixed_base": "false"})


def test_a_missing_urdf_file_is_refused_by_name():
    with pytest.raises(ValueError, match="URDF file 'nowhere.urdf' does not exist"):
        scenes.load("nowhere.urdf")
