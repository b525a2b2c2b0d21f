"""physics never touches a display or OpenGL, and `import render` opens nothing by itself."""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(code, **env_changes):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "PYGLET_HEADLESS", "MAXCOORD_HEADLESS")}
    env.update(env_changes)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_physics_imports_and_steps_without_display_or_opengl():
    out = _run("import sys, physics\n"
               "w = physics.World()\n"
               "w.add_body(physics.Sphere(0.1), mass=1.0, position=(0, 0, 1))\n"
               "w.step(3)\n"
               "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('pyglet', 'OpenGL'))\n"
               "assert not bad, bad\n"
               "print('ok')\n")
    assert out.strip() == "ok"


def test_import_render_opens_no_display():
    # a DISPLAY that does not exist: importing render (and its pure-numpy parts) must not
    # try to connect to it or load pyglet's GL/window modules
    out = _run("import sys, render\n"
               "from render import Camera, Simulation, as_scene\n"
               "from render.commands import view_command, render_command, bench_render\n"
               "from render.scenedata import WorldGeometry\n"
               "bad = sorted(m for m in sys.modules if m in ('pyglet.window', 'pyglet.gl',"
               " 'pyglet.graphics'))\n"
               "assert not bad, bad\n"
               "print('ok')\n", DISPLAY=":31999")
    assert out.strip() == "ok"
