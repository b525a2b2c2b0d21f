"""Ready scenes. Each scene module defines TITLE, DESCRIPTION, PARAMS (defaults), CAMERA and
``build(world, **params)``, which fills the world and may return a controller called as
``controller(world)`` before every step. A controller may also define ``summary()``, returning
(label, value) pairs that ``Scene.summary()`` hands on and ``maxcoord run`` prints under its
summary table (what the scene is there to show, e.g. the whiteboard's force and path error).

    import scenes
    scenes.names()
    s = scenes.load("chain", links=20)
    s.world.step(240)
    scenes.load("my_scene.py")      # a file that defines build(world)
"""
from .registry import Scene, load, names, describe

__all__ = ["Scene", "load", "names", "describe"]
