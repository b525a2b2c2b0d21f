"""The ``maxcoord`` command line: list, run, bench, view, render."""


def load_scene(*args, **kwargs):
    """scenes.load, then what it built kept out of the garbage collector's full collections
    (see physics.allocator): no 20 ms pauses in a run, the viewer or a benchmark. (Imports
    inside: the command line sets numpy's threads before numpy is first imported.)"""
    import scenes
    from physics.allocator import freeze_built_objects
    scene = scenes.load(*args, **kwargs)
    freeze_built_objects()
    return scene
