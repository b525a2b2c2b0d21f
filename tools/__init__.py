"""The ``maxcoord`` command line: list, run, bench, view, render."""


def load_scene(*args, **kwargs):
    """scenes.load, then what it built kept out of the garbage collector's full collections
    (see physics.allocator): no 20 ms pauses in a run, the viewer or a benchmark. (Imports
    inside: the command line sets numpy's threads before numpy is first imported.)"""
    import scenes
    return _frozen(scenes.load(*args, **kwargs))


def load_scene_with(target: str, params: dict, dt: float | None = None):
    """``load_scene`` with the scene's parameters in one dict (scenes.load_with), so that any
    name is the scene's own, ``name`` and ``dt`` among them: the command line's --param."""
    import scenes
    return _frozen(scenes.load_with(target, params, dt))


def _frozen(scene):
    from physics.allocator import freeze_built_objects
    freeze_built_objects()
    return scene
