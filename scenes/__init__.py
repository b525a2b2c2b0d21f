"""Ready scenes. Each scene module defines TITLE, DESCRIPTION, PARAMS (defaults), CAMERA and
``build(world, **params)``, which fills the world and may return a controller called as
``controller(world)`` before every step.

    import scenes
    scenes.names()
    s = scenes.load("chain", links=20)
    s.world.step(240)
    scenes.load("my_scene.py")      # a file that defines build(world)
"""
from .registry import Scene, load, names, describe

__all__ = ["Scene", "load", "names", "describe"]
