"""A URDF robot file as a scene (``maxcoord run arm.urdf``, ``maxcoord view arm.urdf``): the
robot loaded by ``physics.urdf.load_urdf`` above a ground plane."""
import os
import types

from physics import Plane
from physics.urdf import load_urdf


def scene_module(path: str) -> types.ModuleType:
    """A scene module (PARAMS, TITLE, DESCRIPTION, ``build``) for the URDF file at ``path``."""
    if not os.path.isfile(path):
        raise ValueError(f"URDF file {path!r} does not exist")

    def build(world, fixed_base=True, motors=False, height=0.0):
        """The robot's root link at ``height`` above a ground plane at z = 0 (its links
        keep their URDF collision shapes; see load_urdf for what is left out).

        Parameters:
            fixed_base (true/false): the root link static (true) or free, falling (false).
            motors (true/false): a velocity motor at 0 on each joint, up to its URDF effort.
            height (m): the root link's frame above the ground.
        """
        world.add_body(Plane(), name="ground")
        load_urdf(world, path, position=(0.0, 0.0, height), fixed_base=fixed_base,
                  motors=motors)

    module = types.ModuleType(os.path.basename(path))
    module.__file__ = __file__          # (a failed build's traceback is traced to here)
    module.build = build
    module.PARAMS = {"fixed_base": True, "motors": False, "height": 0.0}
    module.TITLE = os.path.basename(path)
    module.DESCRIPTION = f"The URDF robot of {path}, above a ground plane."
    return module
