"""Ready scenes. Each scene module defines TITLE, DESCRIPTION, PARAMS (defaults), CAMERA and
``build(world, **params)``, which fills the world and may return a controller called as
``controller(world)`` before every step. ``build``'s docstring documents every parameter in
a "Parameters:" section, a line each, ``name (unit): meaning`` (unit "-" for a plain
number, or ``name: meaning``; "count", "true/false"); ``describe(name)["parameters"]`` and
``maxcoord list`` show them. A controller may also define ``summary()``, returning
(label, value) pairs that ``Scene.summary()`` hands on and ``maxcoord run`` prints under its
summary table (what the scene is there to show, e.g. the whiteboard's force and path error).

    import scenes
    scenes.names()
    s = scenes.load("chain", links=20)
    s.world.step(240)
    scenes.load("my_scene.py")      # a file that defines build(world)
    scenes.load_with("my_scene.py", {"dt": 0.5}, dt=1/120)   # its parameter dt, the step
"""
from .registry import Scene, load, load_with, names, describe

__all__ = ["Scene", "load", "load_with", "names", "describe"]
