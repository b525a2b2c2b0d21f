"""The command line: a run prints its summary; every error is one line and a non-zero exit."""
import re

import numpy as np
import pytest

from tools.cli import main


def test_run_prints_a_summary_and_records(tmp_path, capsys):
    out = tmp_path / "rec.npz"
    assert main(["run", "pendulum", "--seconds", "0.5", "--quiet", "--record", str(out)]) == 0
    text = capsys.readouterr().out
    for label in ("real-time factor", "energy drift", "max constraint error", "120 steps"):
        assert label in text
    # where the steps' time went, every stage of the pipeline with its share
    shares = next(line for line in text.splitlines() if line.startswith("step time by stage"))
    for stage in ("collide", "rows", "impacts", "solve", "integrate", "other"):
        assert f"{stage} " in shares and "%" in shares
    data = np.load(out)
    assert data["position"].shape[1:] == (2, 3)
    assert data["time"][-1] == pytest.approx(0.5)
    # the state it starts from comes first: the summary's E0
    assert data["time"][0] == 0.0 and len(data["time"]) == 121
    e0 = float(next(line for line in text.splitlines() if line.startswith("energy start"))
               .split()[4])
    assert data["energy"][0] == pytest.approx(e0, abs=0.01)
    assert np.all(data["constraint_error"] < 1e-6)
    # the rod swung: its position changed
    assert np.linalg.norm(data["position"][-1, 1] - data["position"][0, 1]) > 0.05


def test_times_may_be_given_as_fractions(capsys):
    """--dt 1/60 was refused ('invalid float value') though the help and README give steps
    as 1/240; --seconds takes a fraction too."""
    assert main(["run", "pendulum", "--dt", "1/60", "--seconds", "1/2", "--quiet"]) == 0
    assert "(30 steps of 16.667 ms)" in capsys.readouterr().out


def test_the_summary_says_which_integrator_ran_with_what_step(capsys):
    """double_pendulum runs rk4 (its WORLD says so) and the summary did not say it, nor the
    step as the user would write it."""
    import re
    assert main(["run", "double_pendulum", "--seconds", "0.1", "--quiet"]) == 0
    assert re.search(r"^integrator +rk4, dt 1/240 s, 1 sub-step a step$",
                     capsys.readouterr().out, re.M)
    assert main(["run", "pendulum", "--seconds", "0.1", "--dt", "0.003", "--quiet"]) == 0
    assert re.search(r"^integrator +symplectic, dt 0.003 s, 1 sub-step a step$",
                     capsys.readouterr().out, re.M)


def test_run_with_sleeping_reports_the_bodies_asleep_at_the_end(capsys):
    """The pyramid stands still from the start: with --sleeping all of it (and the ball
    waiting for its shot) sleeps by 0.9 s, which the line says counting the dynamic bodies
    only (it said 56 of 57 bodies: the ground plane, which never sleeps, looked awake);
    without, the line is not printed."""
    assert main(["run", "box_pyramid", "--seconds", "0.9", "--quiet", "--sleeping"]) == 0
    assert "dynamic bodies asleep  56 of 56 at the end" in capsys.readouterr().out
    assert main(["run", "box_pyramid", "--seconds", "0.1", "--quiet", "--sleeping"]) == 0
    assert "dynamic bodies asleep  0 of 56 at the end" in capsys.readouterr().out
    assert main(["run", "box_pyramid", "--seconds", "0.1", "--quiet"]) == 0
    assert "asleep" not in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["run", "nosuch"], "unknown scene 'nosuch'; choose one of: box_pyramid, car,"),
    # (no suggestion, though world.body('hnd') gives one; and none ignoring case)
    (["run", "PENDULUM"], "unknown scene 'PENDULUM'; did you mean 'pendulum' or "
                          "'double_pendulum'? choose one of: box_pyramid,"),
    (["render", "ragdol", "--out", "x.gif"], "unknown scene 'ragdol'; did you mean 'ragdoll' or "
                                             "'ragdoll_pile'? choose one of:"),
    (["run", "chain", "--param", "foo=1"], "has no parameter 'foo'"),
    (["run", "chain", "--param", "links=abc"], "links='abc'"),
    (["run", "chain", "--param", "links"], "expects key=value"),
    (["run", "chain", "--seconds", "-1"], "--seconds must be a positive number, got -1"),
    (["run", "chain", "--seconds", "inf"], "--seconds must be a positive number, got inf"),
    (["run", "chain", "--seconds", "0.0001"], "less than one step of 0.00416667 s"),
    (["run", "chain", "--dt", "1e-300"], "--dt must be at least 1e-09 s, got 1e-300"),
    (["run", "chain", "--dt", "1/0"], "--dt must be a number of seconds or a fraction such as "
                                      "1/240, got '1/0'"),
    (["run", "chain", "--dt", "abc"], "--dt must be a number of seconds or a fraction such as "
                                      "1/240, got 'abc'"),
    (["run", "chain", "--dt=-1/240"], "--dt must be a positive number, got -1/240"),
    (["render", "chain", "--out", "clip.gif", "--seconds", "1//2"],
     "--seconds must be a number of seconds or a fraction such as 1/240, got '1//2'"),
    (["view", "chain", "--time-scale", "x"], "--time-scale must be a number or a fraction such "
                                             "as 1/4, got 'x'"),
    (["run", "chain", "--seconds", "1e9"], "would take 2.4e+11 steps"),
    (["run", "chain", "--param", "links=2.7"], "links='2.7' of scene 'chain' must be a whole"),
    (["run", "chain", "--param", "links=inf"], "links='inf' of scene 'chain' must be a whole"),
    (["run", "chain", "--param", "angle=nan"], "angle='nan' of scene 'chain' must be a finite"),
    # a ready scene's parameters: checked by name, or the error says what the scene was
    # built with (it was 'half_extents must all be positive, got (0.03, 0.03, 0)')
    (["run", "pendulum", "--param", "length=0"], "scene 'pendulum': length must be positive, "
                                                 "got 0.0"),
    (["run", "chain", "--param", "links=1e9"], "scene 'chain': links must be from 1 to 2000, "
                                               "got 1000000000"),
    (["run", "box_pyramid", "--param", "friction=-1", "--param", "base=2"],
     "scene 'box_pyramid' with friction=-1.0, base=2 failed to build: ValueError: friction "
     "must be zero or positive, got -1.0"),
    (["run", "pendulum", "--record", "no_such_folder/r.npz"], "no_such_folder' does not exist"),
    (["run", "pendulum", "--record", "out.txt"], "give a name ending in .npz"),
    (["run", "pendulum", "--png", "last.jpg"], "give a name ending in .png"),
    (["bench", "machine", "--out", "no_such_folder/b.json"], "no_such_folder' does not exist"),
    (["render", "pendulum", "--out", "clip.jpg"], "--out must end in .png, .gif or .mp4"),
    # (accepted: the last word won)
    (["render", "pendulum", "--out", "clip.gif", "--shadows", "--no-shadows"],
     "--shadows and --no-shadows contradict each other"),
    (["render", "pendulum", "--out", "clip.gif", "--fps", "60"],
     "--fps must be above 0 and at most 50 for a GIF"),
    (["render", "pendulum", "--out", "clip.gif", "--fps", "0"], "--fps must be a positive"),
    (["render", "pendulum", "--out", "clip.gif", "--fps", "fast"],
     "--fps must be a number of frames per second or a fraction such as 30000/1001, got 'fast'"),
    (["render", "pendulum", "--out", "clip.gif", "--seconds", "-1"],
     "--seconds must be a finite number of seconds >= 0, got -1"),
    (["render", "pendulum", "--out", "clip.gif", "--seconds", "inf"],
     "--seconds must be a finite number of seconds >= 0, got inf"),
    (["plot", "no_such_recording.npz"], "does not exist"),
    (["run", "chain", "--contact-iterations", "0"],
     "--contact-iterations must be a positive whole number, got 0"),
    # (it was argparse's own two lines, "maxcoord run: error: ... invalid int value")
    (["run", "chain", "--contact-iterations", "2.5"],
     "--contact-iterations must be a positive whole number, got 2.5"),
    (["run", "chain", "--contact-iterations", "\u00b2"],       # (a digit to str.isdigit)
     "--contact-iterations must be a positive whole number, got \u00b2"),
    (["run", "missing_file.py"], "does not exist"),
    (["bench", "nosuch"], "unknown benchmark"),
])
def test_errors_are_one_clear_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)            # (nothing may be written; if it is, not here)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("out", ["clip.gif", "last.png", "frames/"])
def test_render_refuses_a_missing_folder_before_any_work(out, tmp_path, monkeypatch, capsys):
    """As run's --png and --record do: one line naming the folder, exit code 2, nothing
    built or rendered and no folder made (render quietly made the missing folder)."""
    import tools.cli
    monkeypatch.setattr(tools.cli, "_load", lambda *a, **k: pytest.fail("the scene was built"))
    missing = tmp_path / "nonexist"
    assert main(["render", "pendulum", "--out", str(missing / out)]) == 2
    err = capsys.readouterr().err
    assert err == f"maxcoord: error: --out: the folder '{missing}' does not exist\n"
    assert not missing.exists()


@pytest.mark.parametrize("argv", [
    ["run", "pendulum", "--seconds", "2", "--quiet", "--png", "/proc/x.png"],
    ["run", "pendulum", "--seconds", "2", "--quiet", "--record", "adir.npz"],
    ["render", "pendulum", "--seconds", "2", "--size", "320x180", "--out", "/proc/x.gif"],
    ["render", "pendulum", "--seconds", "2", "--size", "320x180", "--out", "/proc/frames/"],
    ["render", "pendulum", "--seconds", "2", "--size", "320x180", "--out", "afile"],
    ["plot", "pend.npz", "--out", "/proc/x.png"],
    ["plot", "pend.npz", "--out", "adir.png"],
    ["bench", "machine", "--out", "/proc/b.json"],
])
def test_an_output_that_cannot_be_written_is_refused_before_any_work(argv, tmp_path,
                                                                     monkeypatch, capsys):
    """Only the suffix and the folder's existence were checked: `run --png /proc/x.png` ran
    the whole scene, then a FileNotFoundError traceback; `--record adir.npz` (a folder) an
    IsADirectoryError after the run; `render --out /proc/x.gif` rendered its 60 frames and
    lost them to a traceback; plot and bench the same. Now one line naming the option, exit
    code 2, nothing built, run or plotted, and an existing file left as it was."""
    import tools.bench
    import tools.cli
    import tools.plot
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir.npz").mkdir()
    (tmp_path / "adir.png").mkdir()
    (tmp_path / "afile").write_text("kept")
    (tmp_path / "pend.npz").write_bytes(b"")
    monkeypatch.setattr(tools.cli, "_load", lambda *a, **k: pytest.fail("the scene was built"))
    monkeypatch.setattr(tools.plot, "plot_recording", lambda *a: pytest.fail("it plotted"))
    monkeypatch.setattr(tools.bench, "run", lambda *a: pytest.fail("the benchmark ran"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    option = argv[-2]
    assert err.startswith(f"maxcoord: error: {option}: ") and len(err.splitlines()) == 1
    assert argv[-1] in err and "Traceback" not in err
    assert (tmp_path / "afile").read_text() == "kept"


def test_render_to_mp4_without_ffmpeg_is_one_line_before_any_work(tmp_path, monkeypatch,
                                                                   capsys):
    """Without the [video] extra (imageio-ffmpeg) or an ffmpeg on PATH, `render --out v.mp4`
    rendered its frames, then a RuntimeError traceback: now one line naming --out and the
    extra, exit code 2, nothing built and no file written."""
    import shutil
    import sys
    import tools.cli
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)      # (import fails)
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    monkeypatch.setattr(tools.cli, "_load", lambda *a, **k: pytest.fail("the scene was built"))
    out = tmp_path / "v.mp4"
    assert main(["render", "pendulum", "--out", str(out), "--seconds", "3"]) == 2
    assert capsys.readouterr().err == (
        "maxcoord: error: --out: writing .mp4 needs ffmpeg: pip install -e '.[video]' "
        "(imageio-ffmpeg, which ships its own ffmpeg), or install ffmpeg; or write .gif / PNG "
        "frames\n")
    assert not out.exists()


def test_render_reports_the_clip_it_wrote(tmp_path, capsys):
    """render --seconds 0.21 at 30 fps writes 6 frames whose delays (cs) sum to the 0.2 s
    it reports, and says that is the time asked in whole frames (it reported the last
    frame's time, 0.17 s, and stored 3 cs frames: 0.18 s of play)."""
    from render.imagefiles import gif_frame_delays
    out = tmp_path / "clip.gif"
    assert main(["render", "pendulum", "--seconds", "0.21", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == (f"wrote {out} (6 frames at 30 fps: 0.20 s; the 0.21 s asked, in "
                       "whole frames of 1/30 s)")
    assert gif_frame_delays(out) == [3, 4, 3, 3, 4, 3]


def test_list_shows_each_parameter_with_its_unit_and_meaning(capsys):
    """It showed "tip=3.0" and "angle=1.0" with neither unit nor meaning."""
    import re
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    for head, meaning in (("tip = 3.0 rad/s", "the angular speed given to the first domino"),
                          ("angle = 1.0 rad", "the rod's start angle from hanging straight"),
                          ("push = 1.6 m/s", "the speed given to the upper body"),
                          ("spin = 6.0 rad/s", "the T-handle's start spin about its middle"),
                          ("size = 0.5 m", "each cube's edge"),
                          ("gap = 0.02 m", "horizontal gap between neighbouring cubes"),
                          ("friction = 0.6", "Coulomb friction coefficient")):
        assert re.search(rf"^    {re.escape(head)} +{re.escape(meaning)}", text, re.M), head
    import scenes
    assert all(re.search(rf"^{name} ", text, re.M) for name in scenes.names())
    assert max(len(line) for line in text.splitlines()) <= 100


def test_list_describes_one_scene(capsys):
    assert main(["list", "pendulum"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("pendulum ") and len(lines) == 3
    assert lines[1].split() == ["angle", "=", "1.0", "rad", "the", "rod's", "start", "angle",
                                "from", "hanging", "straight", "down", "(0", "hangs", "still)."]
    assert main(["list", "nosuch"]) == 2
    assert "unknown scene 'nosuch'" in capsys.readouterr().err


def test_list_shows_a_scene_files_docstring_where_it_has_no_description(tmp_path, capsys):
    """A scene file without DESCRIPTION was listed as "(no DESCRIPTION)" though its module
    docstring said what it is (a viewer explorer's scene file); its first paragraph is shown."""
    scene = tmp_path / "shapes_scene.py"
    scene.write_text('"""Four shapes dropped\non a plane.\n\nMore detail."""\n'
                     "from physics import World\n\n\ndef build():\n    return World()\n")
    assert main(["list", str(scene)]) == 0
    out = capsys.readouterr().out
    assert " ".join(out.split()[1:]) == "Four shapes dropped on a plane. (no parameters)"


def _listed_parameters(tmp_path, capsys, name, source):
    """The parameter lines `maxcoord list` prints for a scene file of this source, each with
    its runs of spaces made one."""
    scene = tmp_path / name
    scene.write_text(source)
    assert main(["list", str(scene)]) == 0
    return [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()[1:]]


def test_list_reads_parameter_docs_wherever_the_section_starts_and_tells_mismatches(
        tmp_path, capsys):
    """A "Parameters:" section on the docstring's first line was lost ('speed = 8.0  -': the
    lines under it, dedented, did not match); a parameter the docstring leaves out, or one it
    documents that build does not take, is said rather than shown as '-' or dropped."""
    assert _listed_parameters(tmp_path, capsys, "bowling.py",
                              'PARAMS = {"speed": 8.0, "mass": 7.0}\n'
                              "def build(world, speed=8.0, mass=7.0):\n"
                              '    """Parameters:\n'
                              "        speed (m/s): the ball's speed,\n"
                              "            along x.\n"
                              "        spin (rad/s): the ball's spin.\n"
                              '    """\n') == [
        "speed = 8.0 m/s the ball's speed, along x.",
        "mass = 7.0 (not documented: build's docstring has no line `mass (unit): meaning`)",
        "(build's docstring documents spin, which is not one of PARAMS)"]


def test_list_into_a_pipe_closed_early_ends_quietly(monkeypatch):
    """maxcoord list | head -3: the reader leaves early, the next write fails with a broken
    pipe; that ends the listing quietly, exit 0 (it was a traceback)."""
    import io
    import sys

    class ClosedPipe(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["list"]) == 0


def _pushed_ball_scene(path, after, force, more=""):
    """A scene file: a ball whose controller applies ``force`` (source text) from ``after``
    s on, on line 7; ``more``: lines before the controller is returned."""
    path.write_text("import numpy as np\n"
                    "from physics import Sphere\n"
                    "def build(world):\n"
                    "    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 1))\n"
                    "    def push(world):\n"
                    f"        if world.time > {after}:\n"
                    f"            ball.apply_force({force})\n"
                    f"{more}    return push\n")
    return path


def test_a_run_whose_step_fails_keeps_its_summary_and_recording(tmp_path, capsys):
    """A step that fails part-way (a force of 1e308 N from 0.2 s overflows the position
    within 2 s) ends the run with exit code 1 and one error line; the summary covers the
    steps taken and the recording holds them. (It printed a traceback and saved nothing.)"""
    scene = _pushed_ball_scene(tmp_path / "blowup.py", 0.2, "(1e308, 0, 0)")
    out = tmp_path / "rec.npz"
    assert main(["run", str(scene), "--seconds", "3", "--quiet", "--record", str(out)]) == 1
    printed = capsys.readouterr()
    stopped = next(line for line in printed.out.splitlines() if line.startswith("stopped"))
    taken = int(stopped.split()[2])
    assert 48 < taken < 720 and f"after {taken} of 720 steps" in stopped
    assert "Traceback" not in printed.err and len(printed.err.strip().splitlines()) == 1
    assert f"the run stopped at t={taken / 240:.6g} s" in printed.err
    data = np.load(out)
    assert data["time"][-1] == pytest.approx(taken / 240)
    assert np.isfinite(data["position"]).all()


def test_a_run_stopped_with_ctrl_c_keeps_its_summary_and_recording(tmp_path, capsys,
                                                                    monkeypatch):
    """Ctrl-C during the 100th step (after the step has changed the world, before it ends):
    exit code 130 as before, but the summary covers the 99 steps taken, the recording holds
    them, and one line says so. (It returned 130 and wrote nothing.)"""
    import physics.world
    advance, calls = physics.world.pipeline.advance, []

    def interrupted_at_the_100th(world):
        calls.append(1)
        advance(world)
        if len(calls) == 100:
            raise KeyboardInterrupt

    monkeypatch.setattr(physics.world.pipeline, "advance", interrupted_at_the_100th)
    out = tmp_path / "rec.npz"
    assert main(["run", "pendulum", "--seconds", "2", "--quiet", "--record", str(out)]) == 130
    printed = capsys.readouterr()
    assert re.search(r"^stopped +after 99 of 480 steps: interrupted \(Ctrl-C\)$", printed.out,
                     re.M)
    assert re.search(r"^sim time +0.412 s \(99 steps of", printed.out, re.M)  # (the 100th undone)
    assert printed.err.strip() == (f"maxcoord: the run was interrupted at t=0.4125 s; what it "
                                   f"simulated is kept in {out}")
    data = np.load(out)
    assert data["time"][-1] == pytest.approx(99 / 240)


def test_a_run_whose_controller_fails_keeps_its_summary_and_says_where(tmp_path, capsys):
    """A controller's bug at 0.4 s (any exception) ends the run as a failed step does: the
    summary of the steps taken (a malformed summary row shown as such), the recording and
    the PNG's place kept, exit code 1, and the traceback into the scene file. Before, a
    ValueError was one line with no file or line and every output was lost, and another
    exception was a bare traceback."""
    scene = _pushed_ball_scene(tmp_path / "buggy.py", 0.4, "np.zeros(2) + np.zeros(3)",
                               "    push.summary = lambda: [('ball z', 'low'), 'oops']\n")
    out = tmp_path / "rec.npz"
    assert main(["run", str(scene), "--seconds", "1", "--quiet", "--record", str(out)]) == 1
    printed = capsys.readouterr()
    assert "after 97 of 240 steps: the scene's controller raised an error" in printed.out
    assert "ball z" in printed.out and "summary() row 1" in printed.out
    assert 'buggy.py", line 7, in push' in printed.err
    assert printed.err.strip().splitlines()[-1].startswith(
        "maxcoord: error: the run stopped at t=0.404167 s: the scene's controller raised "
        "ValueError: operands could not be broadcast")
    assert len(np.load(out)["time"]) == 98


@pytest.mark.parametrize("command", ["run", "render"])
def test_a_step_that_raises_is_not_blamed_on_the_controller(command, tmp_path, monkeypatch,
                                                            capsys):
    """An exception of the world's step other than a StepError (a setting it refuses, as
    rk4 refuses contacts: double_pendulum --dt 1/20 stopped at 2 s) was told as 'the scene's
    controller raised ValueError', with a traceback into the physics: it is the step's, in
    one line. (The step refuses here from 0.2 s on, whatever the engine does.)"""
    from physics.world import World
    step = World.step

    def refusing(world, *args, **kwargs):
        if world.time >= 0.2:
            raise ValueError("this step is refused")
        return step(world, *args, **kwargs)
    monkeypatch.setattr(World, "step", refusing)
    scene = _pushed_ball_scene(tmp_path / "calm.py", 10, "(1, 0, 0)")
    argv = {"run": ["run", str(scene), "--seconds", "1", "--quiet"],
            "render": ["render", str(scene), "--seconds", "1", "--size", "160x90", "--out",
                       str(tmp_path / "last.png")]}[command]
    assert main(argv) == 1
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err          # (render's progress line above it)
    assert printed.err.strip().splitlines()[-1] == (
        f"maxcoord: error: the {command} stopped at t=0.2 s: the world's step raised "
        "ValueError: this step is refused")
    if command == "run":
        assert "after 48 of 240 steps: the world's step raised an error (below)" in printed.out


def test_a_render_whose_step_fails_keeps_the_frames_before_it(tmp_path, capsys):
    """As run does: a step that fails part-way through a render (1e308 N from 0.2 s) ends it
    with exit code 1 and one error line saying when; the clip holds the frames up to there,
    and the line above says how many. (It printed a traceback and left a GIF of 1 frame.)"""
    from render.imagefiles import gif_frame_delays
    scene = _pushed_ball_scene(tmp_path / "blowup.py", 0.2, "(1e308, 0, 0)")
    out = tmp_path / "clip.gif"
    assert main(["render", str(scene), "--seconds", "3", "--out", str(out)]) == 1
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err
    error = printed.err.strip().splitlines()[-1]
    assert error.startswith("maxcoord: error: the render stopped at t=") and \
        "produced speeds so large that their kinetic energy overflows to infinity" in error
    t = float(error.split("t=")[1].split(" s")[0])
    frames = int(t * 30) + 1                # (frame k shows k / 30 s; Pillow merges the
    assert 0.2 < t < 3 and sum(gif_frame_delays(out)) == round(frames * 100 / 30)  # same)
    assert printed.out.strip() == (f"wrote {out} ({frames} frames at 30 fps: "
                                   f"{frames / 30:.2f} s; the run stopped at t={t:.6g} s)")


def test_a_render_whose_controller_fails_says_so_and_where(tmp_path, capsys):
    """A controller that raises in render was 'maxcoord: error: <its message>', exit code 2,
    as if the command line had been wrong: now it is what run says (the traceback into the
    scene file, then the time), exit code 1, and the PNG asked for shows the state there."""
    from render.imagefiles import read_png
    scene = _pushed_ball_scene(tmp_path / "buggy.py", 0.4, "(float('nan'), 0, 0)")
    out = tmp_path / "last.png"
    assert main(["render", str(scene), "--seconds", "1", "--out", str(out)]) == 1
    printed = capsys.readouterr()
    assert 'buggy.py", line 7, in push' in printed.err
    assert printed.err.strip().splitlines()[-1] == (
        "maxcoord: error: the render stopped at t=0.404167 s: the scene's controller raised "
        "ValueError: force must be finite (no NaN or infinity), got (nan, 0, 0)")
    assert printed.out.strip() == f"wrote {out} (the state at t = 0.40 s, where it stopped)"
    assert read_png(out).shape[:2] == (720, 1280)


@pytest.mark.parametrize("source, message", [
    ("import numpy as np\ndef build(world):\n    np.linalg.inv(np.zeros((3, 3)))\n",
     "failed to build: LinAlgError: Singular matrix (bad.py, line 3, in build)"),
    ("def build(world):\n    return 42\n", "build() returned 42; it must return None or a"),
    # (a controller that takes no world was let through, and failed at the first step)
    ("def build(world):\n    return lambda: None\n",
     "build() returned a controller that cannot be called with the world"),
    # (it was "TypeError: 'int' object is not callable")
    ("build = 5\n", "build must be a function build(world), got int 5"),
    ("CAMERA = {'traget': (0, 0, 0)}\ndef build(world):\n    pass\n",
     "has a bad CAMERA: camera has no key 'traget'"),
    ("CAMERA = {'distance': -5}\ndef build(world):\n    pass\n",
     "has a bad CAMERA: camera distance must be > 0"),
])
def test_a_scene_files_mistakes_are_told_before_the_run(tmp_path, capsys, source, message):
    scene = tmp_path / "bad.py"
    scene.write_text(source)
    assert main(["run", str(scene), "--seconds", "0.1", "--quiet"]) == 2
    assert message in capsys.readouterr().err


def test_a_controller_taking_the_world_and_dt_runs_as_the_viewer_runs_it(tmp_path, capsys):
    """The viewer calls controller(world, dt) where it takes two; run failed at the first
    step with a TypeError, and since dcc761f run, view and render refused the scene."""
    from tools import load_scene
    scene = tmp_path / "pushed.py"
    scene.write_text("from physics import Sphere\n"
                     "def build(world):\n"
                     "    ball = world.add_body(Sphere(0.1), mass=2.0)\n"
                     "    def push(world, dt):\n"
                     "        ball.apply_force((2.0 * dt * 240, 0, 0))\n"
                     "    return push\n")
    assert main(["run", str(scene), "--seconds", "0.5", "--quiet"]) == 0
    loaded = load_scene(str(scene))
    loaded.step(120)                               # 2 N on 2 kg for 0.5 s: 0.5 m/s
    assert loaded.world.bodies[0].linear_velocity[0] == pytest.approx(0.5, rel=1e-12)


def test_a_file_that_is_not_a_py_file_is_told_so_not_taken_for_a_scene_name(tmp_path, capsys):
    """An existing notes.txt was told "unknown scene 'notes.txt'; did you mean...": it is a
    file, just not a scene file."""
    notes = tmp_path / "notes.txt"
    notes.write_text("def build(world):\n    pass\n")
    assert main(["run", str(notes), "--seconds", "0.1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "is not a scene: a scene file is a .py file that defines build(world)" in err
    assert "unknown scene" not in err


def test_a_scene_file_without_a_title_is_named_once_in_the_summary(tmp_path, capsys):
    """Its title is its path: the summary's scene row said "path (path)"."""
    scene = tmp_path / "plain.py"
    scene.write_text("from physics import Sphere\ndef build(world):\n"
                     "    world.add_body(Sphere(0.1), mass=1.0)\n")
    assert main(["run", str(scene), "--seconds", "0.05", "--quiet"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("scene "))
    assert row.split()[1:] == [str(scene)]


@pytest.mark.parametrize("camera, message", [
    ('{"target": (0, 0, 0), "distance": 5, "fov": 0}',
     "camera fov must be from 1 to 170 degrees, got 0"),
    ('{"target": (0, 0, 0), "distance": 5, "fov": 180}',
     "camera fov must be from 1 to 170 degrees, got 180"),
    ('{"eye": (0, 0, 5), "target": (0, 0, 0), "fov": "wide"}',
     "camera fov must be a finite number, got 'wide'"),
    ('{"distance": float("inf")}', "camera distance must be a finite number, got inf"),
    ('{"target": (0, 0), "distance": 5}',
     "camera target must be a point (x, y, z) of finite numbers, got (0, 0)"),
    ('{"target": (0, 0, float("nan"))}',
     "camera target must be a point (x, y, z) of finite numbers, got (0, 0, nan)"),
    ('{"pitch": float("nan")}', "camera pitch must be a finite number, got nan"),
    ('{"eye": (0, 0, float("inf")), "target": (0, 0, 0)}',
     "camera eye must be a point (x, y, z) of finite numbers, got (0, 0, inf)"),
])
def test_a_scene_files_camera_values_are_checked_when_it_is_loaded(camera, message, tmp_path,
                                                                   capsys):
    """CAMERA = {..., "fov": 0} ran the scene, then a ZeroDivisionError traceback from the
    projection (run --png); fov 180 drew a smear; a distance of inf, a target of two numbers
    or NaN, a NaN pitch were taken or a message naming no key. Now one line naming the file,
    CAMERA and the key, before the run."""
    scene = tmp_path / "cam.py"
    scene.write_text(f"CAMERA = {camera}\n" + BUILD)
    out = tmp_path / "last.png"
    assert main(["run", str(scene), "--seconds", "0.1", "--quiet", "--png", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"maxcoord: error: scene {str(scene)!r} has a bad CAMERA: {message}\n"
    assert not out.exists()


@pytest.mark.parametrize("camera", ['"front"', "((0, 0, 0), 5, 30, 20)"])
def test_a_scene_files_camera_that_is_no_dict_says_what_it_must_be(camera, tmp_path, capsys):
    """CAMERA = "front" said "dictionary update sequence element #0 has length 1; 2 is
    required" (registry's dict(camera)); now what CAMERA must be, with its keys."""
    scene = tmp_path / "cam.py"
    scene.write_text(f"CAMERA = {camera}\n" + BUILD)
    assert main(["run", str(scene), "--seconds", "0.1", "--quiet"]) == 2
    kind = "str" if camera.startswith('"') else "tuple"
    assert capsys.readouterr().err == (
        f"maxcoord: error: scene {str(scene)!r}: CAMERA must be a dict with some of the keys "
        "distance, eye, fit, fov, pitch, target, yaw (such as {'yaw': -90, 'pitch': 15}), "
        f"got a {kind}: {camera.replace(chr(34), chr(39))}\n")


def test_run_png_checks_the_render_quality_variable_before_the_run(tmp_path, capsys,
                                                                 monkeypatch):
    """MAXCOORD_RENDER_QUALITY=ultra: run --png simulated the whole run, then said it "could
    not open an OpenGL context" (render and view refuse it before any work)."""
    monkeypatch.setenv("MAXCOORD_RENDER_QUALITY", "ultra")
    out = tmp_path / "x.png"
    assert main(["run", "pendulum", "--seconds", "0.1", "--png", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err == ("maxcoord: error: MAXCOORD_RENDER_QUALITY must be fast, full or "
                            "auto, got 'ultra'\n")
    assert captured.out == "" and not out.exists()


def test_render_refuses_sleeping_with_a_recording(tmp_path, capsys):
    """`render REC.npz --sleeping` was accepted and did nothing (a recording plays its
    recorded poses), where `view REC.npz --sleeping` and `render REC.npz --dt` are refused:
    it is refused as they are, one line, exit code 2, before anything is written."""
    recording = tmp_path / "pendulum.npz"
    assert main(["run", "pendulum", "--seconds", "0.1", "--quiet", "--record",
                 str(recording)]) == 0
    capsys.readouterr()
    out = tmp_path / "clip.gif"
    assert main(["render", str(recording), "--out", str(out), "--size", "160x90",
                 "--sleeping"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("maxcoord: error: --sleeping cannot be used with a recording: it "
                           "plays the recorded poses (sleep it with run --sleeping --record)")
    assert not out.exists()


BUILD = "def build(world):\n    pass\n"


@pytest.mark.parametrize("source, message", [
    ("PARAMS = [1, 2]\n" + BUILD,
     "PARAMS must be a dict {name: default}, got a list: [1, 2]"),
    ("PARAMS = {'n': 3}\ndef build(world, m=2):\n    pass\n",
     "PARAMS has 'n', which build() does not take (it takes: m)"),
    ("WORLD = {'bogus': 1}\n" + BUILD,
     "WORLD has 'bogus', which World() does not take (it takes: gravity, dt, substeps,"),
    ("WORLD = 'dt=0.01'\n" + BUILD,
     "WORLD must be a dict of World's keyword arguments (such as {'dt': 1/240}), got a str"),
    ("WORLD = {'dt': -1}\n" + BUILD, "WORLD = {'dt': -1}: dt must be positive, got -1"),
])
@pytest.mark.parametrize("command", ["run", "list", "render"])
def test_a_scene_files_bad_settings_are_one_line_naming_the_file(tmp_path, capsys, source,
                                                                 message, command):
    """PARAMS and WORLD that are not what a scene file needs were a traceback (PARAMS = [1, 2],
    WORLD = {'bogus': 1}) or a line naming neither the file nor the setting (WORLD = 'dt=0.01':
    'dictionary update sequence element #0 ...'; WORLD = {'dt': -1}: 'dt must be positive')."""
    scene = tmp_path / "bad.py"
    scene.write_text(source)
    out = tmp_path / "clip.gif"
    argv = {"run": ["run", str(scene), "--quiet"], "list": ["list", str(scene)],
            "render": ["render", str(scene), "--out", str(out)]}[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"maxcoord: error: scene {str(scene)!r}: {message}")
    assert len(err.strip().splitlines()) == 1 and not out.exists()


def test_a_run_tells_what_its_controller_did_to_the_world(tmp_path, capsys):
    """A controller that adds bodies ends the recording there (its arrays hold one set of
    bodies: the save failed with 'inhomogeneous shape'), one that steps the world itself is
    told apart in the step count, and an E0 of 0 gives a drift in J (it was
    +1664443779102871 %)."""
    scene = tmp_path / "grow.py"
    scene.write_text("from physics import Plane, Sphere\n"
                     "def build(world):\n"
                     "    world.add_body(Plane())\n"
                     "    def grow(world):\n"
                     "        if world.time > 0.2 and len(world.bodies) < 2:\n"
                     "            world.add_body(Sphere(0.05), mass=0.1, position=(0, 0, 1))\n"
                     "        world.step()\n"
                     "    return grow\n")
    out = tmp_path / "rec.npz"
    assert main(["run", str(scene), "--seconds", "0.5", "--quiet", "--record", str(out)]) == 0
    text = capsys.readouterr().out
    assert "240 steps of 4.167 ms); the scene's controller stepped the world itself in 120 " \
           "calls" in text
    ends = np.load(out)["time"][-1]
    assert 0.2 < ends < 0.21
    assert f"recording             ends at t={ends:.3f} s: then the scene went from 1 bodies " \
           "and 0 joints to 2 and 0" in text
    change = next(line for line in text.splitlines() if line.startswith("energy change"))
    assert 0 < float(change.split()[2]) < 1.0        # J: the ball, 0.98 J up, came in and fell
    # what it put in is not known (the ball's 0.98 J came with it)
    assert "controller put in     not known: it added or removed bodies, or stepped the " \
           "world itself" in text


def _summary(tmp_path, capsys, name, seconds, source):
    """What `maxcoord run` prints for a scene file of this source run this many seconds."""
    scene = tmp_path / name
    scene.write_text(source)
    assert main(["run", str(scene), "--seconds", str(seconds), "--quiet"]) == 0
    return capsys.readouterr().out


def _row(text: str, label: str) -> str:
    """The value of the summary's row ``label``, after the label and the padding."""
    return next(line for line in text.splitlines() if line.startswith(label))[len(label):]


def test_the_energy_drift_is_told_in_joules_and_against_the_kinetic_energy_reached(capsys):
    """The drift was a percentage of |E0|, which counts the potential energy from z = 0: the
    pendulum's E0 is 16.97 J of which 2.25 J swings. Now it is in J and a share of the
    largest kinetic energy reached, with the largest |E - E0| seen along the way."""
    import scenes
    assert main(["run", "pendulum", "--seconds", "1", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "|E0|" not in text
    drift = re.fullmatch(r" +([-+][0-9.e+-]+) J \(([-+][0-9.e+-]+) % of the largest kinetic "
                         r"energy, ([0-9.]+) J\)", _row(text, "energy drift"))
    change, percent, largest = map(float, drift.groups())
    assert percent == pytest.approx(change / largest * 100, rel=0.01)
    scene = scenes.load("pendulum")           # the same second, every step's kinetic energy
    kinetic = []
    for _ in range(240):
        scene.step()
        kinetic.append(scene.world.kinetic_energy())
    assert largest == pytest.approx(max(kinetic), rel=0.01)          # 2.255 J
    worst = re.fullmatch(r" +([0-9.e+-]+) J \(([0-9.e+-]+) %\) at t = ([0-9.]+) s, sampled "
                         r"every 8 steps", _row(text, "energy |E - E0| max"))
    assert worst and abs(change) <= float(worst.group(1)) < 1e-3 * largest
    assert 0 < float(worst.group(3)) <= 1.0


def test_a_run_says_when_the_engine_held_the_energy_and_fell_back(tmp_path, capsys):
    """A stiff bob (1 kg, 1e-3 kg m^2, on a 1 m hinge at dt 1/60) takes stiff steps, through
    which the engine rescales the velocities onto the energy's level: its drift is then 0 by
    construction, and the summary says so instead of looking perfect."""
    text = _summary(tmp_path, capsys, "bob.py", 0.5,
                    "from physics import Hinge, Sphere\n"
                    "WORLD = {'dt': 1 / 60}\n"
                    "def build(world):\n"
                    "    bob = world.add_body(Sphere(0.05), mass=1.0, inertia=(1e-3,) * 3,\n"
                    "                         position=(1, 0, 0))\n"
                    "    world.add_joint(Hinge(None, bob, anchor=(0, 0, 0), axis=(0, 1, 0)))\n")
    assert _row(text, "energy held").strip() == (
        "on its level by rescaling the velocities in 13 of 30 steps, so the drift measures "
        "nothing")
    assert _row(text, "fallback steps").strip() == "13 stiff steps in 30 steps"
    assert main(["run", "pendulum", "--seconds", "0.5", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "energy held" not in text and "fallback steps" not in text


def test_a_run_measures_the_energy_its_controller_puts_in(tmp_path, capsys):
    """The gyroscope's controller holds its T-handle's weight up and it does not move: the
    summary said the controller "may do work"; now it gives the work its loads did, 0 J, and
    the drift without it. A ball, without gravity, set moving at 2 m/s (2 J), then pushed by
    2 N and turned by 0.04 N m for 0.5 s (0.5 + 0.05 J), gains just what they put in."""
    assert main(["run", "gyroscope", "--seconds", "0.5", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "may do work" not in text
    drift = float(_row(text, "energy change").split()[0])
    assert _row(text, "controller put in").strip() == \
        f"+0 J of work by the forces and torques it applied; the drift without it: {drift:+.3g} J"
    text = _summary(tmp_path, capsys, "push.py", 0.5,
                    "from physics import Sphere\n"
                    "WORLD = {'gravity': (0, 0, 0)}\n"
                    "def build(world):\n"
                    "    ball = world.add_body(Sphere(0.1), mass=1.0)\n"
                    "    def push(world):\n"
                    "        if world.time == 0:\n"
                    "            ball.linear_velocity = (0, 2.0, 0)\n"
                    "        ball.apply_force((2.0, 0, 0))\n"
                    "        ball.apply_torque((0, 0, 0.04))\n"
                    "    return push\n")
    work, put, rest = re.fullmatch(
        r" +([-+][0-9.e+-]+) J of work by the forces and torques it applied; ([-+][0-9.e+-]+) J "
        r"by the velocities and poses it set \(in 1 step\); the drift without it: "
        r"([-+][0-9.e+-]+) J", _row(text, "controller put in")).groups()
    assert float(work) == pytest.approx(0.55, rel=0.01)
    assert float(put) == pytest.approx(2.0, rel=1e-9)
    assert abs(float(rest)) < 0.01 * float(work)
    assert float(_row(text, "energy change").split()[0]) == pytest.approx(2.55, rel=0.01)


def test_a_run_with_motors_does_not_call_the_change_without_its_controller_drift(capsys):
    """The gears' drive is a servo, whose work the summary does not measure: the 48 J it puts
    in read "the drift without it: +48.2 J", the integrator's error to a reader. It now says
    what else changes the energy."""
    assert main(["run", "gears", "--seconds", "0.5", "--quiet"]) == 0
    put_in = _row(capsys.readouterr().out, "controller put in")
    change = float(re.search(r"the change without it: ([-+][0-9.e+-]+) J, not all drift: "
                             r"motors do work$", put_in).group(1))
    assert change > 10.0 and "drift without it" not in put_in


def test_a_recording_names_its_joint_coordinates_and_the_plot_labels_them(tmp_path,
                                                                          monkeypatch):
    out = tmp_path / "rec.npz"
    assert main(["run", "double_pendulum", "--seconds", "0.1", "--quiet",
                 "--record", str(out)]) == 0
    data = np.load(out)
    assert list(data["joint_coordinate_name"]) == ["Hinge 0 (rod1), rad", "Hinge 1 (rod2), rad"]
    assert data["joint_coordinate"].shape == (len(data["time"]), 2)
    import matplotlib.axes
    legends = []
    real_legend = matplotlib.axes.Axes.legend
    monkeypatch.setattr(matplotlib.axes.Axes, "legend", lambda ax, *a, **kw: legends.append(
        [str(x) for x in a[1]]) or real_legend(ax, *a, **kw))
    assert main(["plot", str(out), "--out", str(tmp_path / "p.png")]) == 0
    assert legends == [["Hinge 0 (rod1), rad", "Hinge 1 (rod2), rad"]]


def test_a_recording_names_its_joints_and_keeps_the_actuators_efforts(tmp_path):
    """The recorded joint forces come with each joint's name (an engineer could not tell the
    Stewart platform's 18 joints apart), and the coordinates with their motors' efforts: the
    last sample's are those of the same scene stepped as long through the API."""
    from tools import load_scene
    out = tmp_path / "rec.npz"
    assert main(["run", "stewart", "--seconds", "0.25", "--quiet", "--record", str(out)]) == 0
    data = np.load(out)
    scene = load_scene("stewart")
    names = [j.name for j in scene.world.joints]
    assert list(data["joint_name"]) == names and len(names) == data["joint_force"].shape[1]
    scene.step(round(0.25 / scene.world.dt))          # (with its controller, as run)
    actuators = [j for j in scene.world.joints if j.name.startswith("actuator")]
    assert data["joint_motor_effort"].shape == (len(data["time"]), 6)
    assert np.array_equal(data["joint_motor_effort"][-1], [j.motor_effort for j in actuators])
    assert np.all(np.abs(data["joint_motor_effort"][-1]) > 10.0)       # they hold the top


def test_plot_says_a_constraint_error_of_exactly_zero_is_zero(tmp_path, monkeypatch):
    """A recording whose constraint error is exactly 0 (no joints) drew a line at 1e-16 on
    the log axis, which reads as an error of 1e-16 (a viewer explorer's finding). Its zeros
    are now left out of the curve and the panel says they are exactly 0."""
    out = tmp_path / "rec.npz"
    assert main(["run", "double_pendulum", "--seconds", "0.1", "--quiet",
                 "--record", str(out)]) == 0
    d = dict(np.load(out))
    k = len(d["time"])
    d["constraint_error"] = np.where(np.arange(k) < 3, 0.0, 1e-9)
    np.savez(out, **d)
    import matplotlib.axes
    drawn, said = [], []
    real_semilogy, real_text = matplotlib.axes.Axes.semilogy, matplotlib.axes.Axes.text
    monkeypatch.setattr(matplotlib.axes.Axes, "semilogy", lambda ax, x, y, *a, **kw: drawn.append(
        np.array(y)) or real_semilogy(ax, x, y, *a, **kw))
    monkeypatch.setattr(matplotlib.axes.Axes, "text", lambda ax, x, y, s, *a, **kw: said.append(
        s) or real_text(ax, x, y, s, *a, **kw))
    assert main(["plot", str(out), "--out", str(tmp_path / "p.png")]) == 0
    assert np.isnan(drawn[0][:3]).all() and np.all(drawn[0][3:] == 1e-9)
    assert said == [f"exactly 0 at 3 of {k} samples (not drawn)"]


def test_plot_warns_of_arrays_it_cannot_draw_as_recorded(tmp_path, capsys):
    """An energy that is NaN throughout drew an empty panel, and joint coordinates of another
    width than their names (or not finite) were relabelled or left out, all without a word:
    each is now a warning line naming the array, and the plot is still written."""
    out = tmp_path / "rec.npz"
    assert main(["run", "double_pendulum", "--seconds", "0.1", "--quiet",
                 "--record", str(out)]) == 0
    d = dict(np.load(out))
    k = len(d["time"])
    d["energy"] = np.full(k, np.nan)
    d["joint_coordinate"] = np.zeros((k, 3))
    np.savez(out, **d)
    capsys.readouterr()
    assert main(["plot", str(out), "--out", str(tmp_path / "p.png")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"maxcoord: warning: {out}: energy is NaN or infinite throughout: its panel is empty",
        f"maxcoord: warning: {out}: joint_coordinate has 3 columns but joint_coordinate_name "
        "names 2: they are labelled coordinate 0, 1, ..."]
    assert (tmp_path / "p.png").stat().st_size > 1000
    d["joint_coordinate"] = np.zeros((k - 1, 2))
    np.savez(out, **d)
    assert main(["plot", str(out), "--out", str(tmp_path / "p.png")]) == 0
    assert (f"maxcoord: warning: {out}: joint_coordinate has shape ({k - 1}, 2), not one row "
            f"per sample ({k}): not plotted") in capsys.readouterr().err


def test_plot_refuses_a_damaged_recording_in_one_line(tmp_path, capsys):
    out = tmp_path / "rec.npz"
    assert main(["run", "pendulum", "--seconds", "0.2", "--quiet", "--record", str(out)]) == 0
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(out.read_bytes()[:200])
    capsys.readouterr()
    assert main(["plot", str(damaged), "--out", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err
    assert "is not a readable maxcoord recording" in err and "Traceback" not in err


def test_a_scene_parameter_may_be_called_name_or_dt(tmp_path, capsys):
    """A scene file's parameter called `name` or `dt` was a TypeError traceback with
    --param ('load() got multiple values for argument 'name'', 'tools.load_scene() got
    multiple values for keyword argument 'dt''): --param sets the scene's own, --dt the
    world's step, and a recording of it plays back with them."""
    scene = tmp_path / "named.py"
    scene.write_text(
        'PARAMS = {"name": "hello", "dt": 0.5}\n'
        'def build(world, name="hello", dt=0.5):\n'
        '    def control(world):\n'
        '        pass\n'
        '    control.summary = lambda: [("built with", f"{name} {dt} {world.dt:.6f}")]\n'
        '    return control\n')
    recording = tmp_path / "named.npz"
    assert main(["run", str(scene), "--param", "name=world", "--param", "dt=1/4", "--dt",
                 "1/120", "--seconds", "0.1", "--quiet", "--record", str(recording)]) == 0
    printed = capsys.readouterr()
    assert re.search(r"^built with +world 0.25 0.008333$", printed.out, re.M), printed
    assert main(["run", str(scene), "--seconds", "0.1", "--quiet"]) == 0
    assert re.search(r"^built with +hello 0.5 0.004167$", capsys.readouterr().out, re.M)
    out = tmp_path / "last.png"
    assert main(["render", str(recording), "--out", str(out), "--size", "160x90"]) == 0
    assert out.exists() and "Traceback" not in capsys.readouterr().err


def test_a_malformed_scene_file_is_reported(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("def build(world):\n    this is not python\n")
    assert main(["run", str(bad), "--quiet"]) == 2
    assert "failed to build: NameError" in capsys.readouterr().err
    bad.write_text("def build(world:\n")
    assert main(["run", str(bad), "--quiet"]) == 2
    assert "failed to load" in capsys.readouterr().err


def test_a_user_scene_file_runs(tmp_path, capsys):
    good = tmp_path / "mine.py"
    good.write_text("from physics import Sphere\n"
                    "def build(world):\n    world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 5))\n")
    assert main(["run", str(good), "--seconds", "1", "--quiet"]) == 0
    assert "1 / 0" in capsys.readouterr().out


def test_run_draws_the_final_frame(tmp_path, capsys):
    from render.imagefiles import read_png
    out = tmp_path / "last.png"
    assert main(["run", "pendulum", "--seconds", "0.2", "--quiet", "--png", str(out)]) == 0
    assert f"wrote the final frame to {out}" in capsys.readouterr().out
    image = read_png(out)
    assert image.shape[:2] == (720, 1280)
    # the scene is drawn, not a blank clear colour: the picture holds many distinct colours
    assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 50


def test_run_whiteboard_prints_its_path_error_and_pressing_force(capsys):
    """Scenes add their own lines under the summary table (a controller's summary()): the
    whiteboard's eraser path error after the ramp and its pressing force against the 10 N
    command."""
    import re
    assert main(["run", "whiteboard", "--seconds", "1.5", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    labels = [line.split("  ")[0].strip() for line in lines]
    # under the generic table, aligned with it
    assert labels[-2:] == ["eraser path error", "eraser pressing force"]
    assert labels.index("contacts (max)") < labels.index("eraser path error")
    column = lines[0].index("whiteboard")
    assert all(line[column - 2: column] == "  " and line[column] != " " for line in lines[-2:])
    path = re.fullmatch(r"eraser path error +([0-9.]+) mm max after the 1 s ramp", lines[-2])
    assert path and 0.0 < float(path.group(1)) < 1.0
    force = re.fullmatch(r"eraser pressing force +([0-9.]+) N mean over 360 steps, worst "
                         r"([0-9.e+-]+) % off the 10 N command", lines[-1])
    assert force and float(force.group(1)) == pytest.approx(10.0, rel=0.02)
    assert float(force.group(2)) < 2.0

    # within the ramp there is no path figure yet; other scenes add no lines
    assert main(["run", "whiteboard", "--seconds", "0.5", "--quiet", "--param", "press=4"]) == 0
    text = capsys.readouterr().out
    assert "eraser path error      - (the run ended in the 1 s ramp)" in text
    assert "off the 4 N command" in text
    assert main(["run", "pendulum", "--seconds", "0.1", "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("contacts (max)")


def _commands():
    """{name: parser} of maxcoord's subcommands."""
    import argparse
    from tools.cli import build_parser
    parser = build_parser()
    return next(a for a in parser._actions
                if isinstance(a, argparse._SubParsersAction)).choices


def test_every_option_says_what_it_does_and_its_default():
    """render --out, render --fps (30), view/render --param and plot --out (plot.png) had
    no help at all."""
    import argparse
    for command, parser in _commands().items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            where = (command, action.option_strings or action.dest)
            assert action.help and len(action.help) > 20, where
            if action.option_strings and not action.required:
                assert "default" in action.help, where
    options = {a.dest: a.help for a in _commands()["render"]._actions}
    assert "default 30" in options["fps"] and "per second" in options["fps"]
    assert "required" in options["out"] and ".gif" in options["out"]
    assert "default plot.png" in {a.dest: a.help for a in _commands()["plot"]._actions}["out"]


def test_the_help_names_every_benchmark():
    """The top-level help listed the benchmarks without machine; bench --help listed none."""
    from tools import bench
    from tools.cli import build_parser
    top = " ".join(build_parser().format_help().split())
    assert f"({', '.join(bench.all_names())};" in top
    own = " ".join(_commands()["bench"].format_help().split())
    for name in bench.all_names():
        assert f"{name}: {bench.ABOUT[name]}" in own


def test_readme_command_line_section_shows_every_option():
    """README's Command line section keeps in step with the parser: each command's usage
    lines there name every option it takes (they left out run --quiet, render --fps and
    --param for view and render), and bench's name every benchmark."""
    import pathlib
    import re
    from tools import bench
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Command line\n", 1)[1].split("\n## ", 1)[0]
    usage = {}
    command = None
    for line in section.splitlines():
        if not line.startswith("    "):
            command = None
            continue
        start = re.match(r"\s+maxcoord (\w+)", line)
        command = start.group(1) if start else command
        if command:
            usage[command] = usage.get(command, "") + line.split("#")[0]
    for command, parser in _commands().items():
        for action in parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help":
                    assert re.search(rf"{flag}\b", usage[command]), (command, flag)
    assert all(re.search(rf"\b{name}\b", usage["bench"]) for name in bench.all_names())


def test_the_energy_note_names_a_coordinates_motor_and_damping(tmp_path, capsys):
    """A cylindrical joint's motor (joint.turning.set_motor) does work, and damping takes
    energy out: the summary said neither (a +16.8 J gain went unexplained)."""
    text = _summary(tmp_path, capsys, "spun.py", 0.5,
                    "from physics import Cylinder, Cylindrical\n"
                    "def build(world):\n"
                    "    wheel = world.add_body(Cylinder(0.3, 0.05), mass=2.0, position=(0, 0, 1))\n"
                    "    joint = world.add_joint(Cylindrical(None, wheel, axis=(0, 0, 1)))\n"
                    "    joint.turning.set_motor(velocity=20.0, max_force=5.0)\n")
    assert _row(text, "energy change").endswith("; motors do work")
    text = _summary(tmp_path, capsys, "damped.py", 0.5,
                    "from physics import Box, Hinge\n"
                    "def build(world):\n"
                    "    rod = world.add_body(Box((0.5, 0.03, 0.03)), mass=1.0,\n"
                    "                         position=(0.5, 0, 2), angular_damping=0.5)\n"
                    "    world.add_joint(Hinge(None, rod, anchor=(0, 0, 2), axis=(0, 1, 0)))\n")
    assert _row(text, "energy change").endswith("; damping takes energy out")


def test_render_takes_a_size_and_a_step(tmp_path, capsys, monkeypatch):
    """Every clip was 1280x720 (a 4 s pendulum GIF at 15 fps: 7.2 MB; 2.3 MB at 640x360),
    and render had no --dt although run has one."""
    from PIL import Image
    out = tmp_path / "clip.gif"
    assert main(["render", "pendulum", "--seconds", "0.1", "--size", "320x180",
                 "--out", str(out)]) == 0
    assert Image.open(out).size == (320, 180)
    import render.commands
    seen = {}
    monkeypatch.setattr(render.commands, "render_command", lambda scene, **kw: seen.update(
        kw, dt=scene.world.dt) or {"kind": "png", "out": kw["out"], "sim_time": 0.0})
    assert main(["render", "pendulum", "--dt", "1/60", "--out", str(tmp_path / "a.png")]) == 0
    assert seen["dt"] == pytest.approx(1 / 60) and seen["size"] == (1280, 720)


@pytest.mark.parametrize("size, message", [
    ("640", "--size must be WIDTHxHEIGHT in pixels, such as 640x360, got '640'"),
    ("axb", "--size must be WIDTHxHEIGHT in pixels, such as 640x360, got 'axb'"),
    ("0x100", "--size must be from 1x1 to 4096x4096 pixels, got '0x100'"),
    ("-640x360", "--size must be from 1x1 to 4096x4096 pixels, got '-640x360'"),
    ("100000x100", "--size must be from 1x1 to 4096x4096 pixels, got '100000x100'"),
])
def test_a_bad_size_is_one_line_naming_size(size, message, tmp_path, capsys, monkeypatch):
    import tools.cli
    monkeypatch.setattr(tools.cli, "_load", lambda *a, **k: pytest.fail("the scene was built"))
    for command in (["render", "pendulum", "--out", str(tmp_path / "c.gif")],
                    ["view", "pendulum"]):
        for spelt in ([f"--size={size}"], ["--size", size]):
            assert main(command + spelt) == 2
            assert capsys.readouterr().err == f"maxcoord: error: {message}\n"
    assert main(["render", "pendulum", "--dt", "0", "--out", str(tmp_path / "c.gif")]) == 2
    assert "--dt must be a positive number, got 0" in capsys.readouterr().err
    # (a value starting with '-' and a digit is the option's to refuse, not argparse's)
    assert main(["render", "pendulum", "--dt", "-1/240", "--out", str(tmp_path / "c.gif")]) == 2
    assert "--dt must be a positive number, got -1/240" in capsys.readouterr().err
    assert main(["render", "pendulum", "--fps", "-.5", "--out", str(tmp_path / "c.gif")]) == 2
    assert "--fps" in capsys.readouterr().err


@pytest.mark.parametrize("text, value", [
    ("1/3", 1 / 3), ("pi/2", np.pi / 2), ("-pi/4", -np.pi / 4), ("2*pi", 2 * np.pi),
    ("3pi/4", 3 * np.pi / 4), ("0.5*pi", np.pi / 2), ("pi", np.pi), ("-1.5e-1", -0.15),
])
def test_a_param_takes_a_fraction_or_a_multiple_of_pi(text, value):
    """--dt 1/60 worked but --param mu=1/3 or angle=pi/2 was refused ('must be a finite
    number')."""
    from tools.cli import _load, _params
    assert _load("pendulum", _params([f"angle={text}"])).params["angle"] == value
    assert _load("chain", _params(["links=12/4"])).params["links"] == 3


@pytest.mark.parametrize("text", ["pi*2", "2*", "1/0", "1//2", "1/2pi", "__import__('os')",
                                  "2**pi", "e"])
def test_a_param_outside_that_grammar_is_one_line_naming_it(text, capsys):
    assert main(["run", "pendulum", "--quiet", "--param", f"angle={text}"]) == 2
    assert capsys.readouterr().err == (
        f"maxcoord: error: parameter angle={text!r} of scene 'pendulum' must be a finite "
        "number (such as 0.5, 1/3, pi/2, -3pi/4 or 2*pi)\n")


BOUNCE = """from physics import Plane, Sphere
def build(world):
    world.add_body(Plane(), name="ground")
    world.add_body(Sphere(0.1), mass=0.5, position=(0, 0, 1.0), restitution=0.8, name="ball")
"""


@pytest.fixture
def bounce_recording(tmp_path):
    scene = tmp_path / "bounce.py"
    scene.write_text(BOUNCE)
    out = tmp_path / "bounce.npz"
    assert main(["run", str(scene), "--seconds", "1", "--quiet", "--record", str(out)]) == 0
    return out


def _drawn(monkeypatch):
    """The curves (label, y) and the title of the next plot."""
    import matplotlib.axes
    import matplotlib.figure
    drawn = {"curves": [], "ylabels": []}
    plot, ylabel = matplotlib.axes.Axes.plot, matplotlib.axes.Axes.set_ylabel
    suptitle = matplotlib.figure.Figure.suptitle
    monkeypatch.setattr(matplotlib.axes.Axes, "plot", lambda ax, x, y=None, **kw: drawn[
        "curves"].append((kw.get("label"), np.array(y))) or plot(ax, x, y, **kw))
    monkeypatch.setattr(matplotlib.axes.Axes, "set_ylabel", lambda ax, text, **kw: drawn[
        "ylabels"].append(text) or ylabel(ax, text, **kw))
    monkeypatch.setattr(matplotlib.figure.Figure, "suptitle", lambda fig, text, **kw: drawn.update(
        title=text) or suptitle(fig, text, **kw))
    return drawn


def test_plot_draws_a_bodys_height_and_velocity(bounce_recording, tmp_path, monkeypatch,
                                               capsys):
    """A teacher wants a bouncing ball's height over time: plot drew only the energy,
    the constraint error and joint coordinates; and its title was the scene file's absolute
    path. The recording keeps the bodies' names for --body."""
    data = np.load(bounce_recording)
    assert list(data["body_name"]) == ["ground", "ball"]
    drawn = _drawn(monkeypatch)
    png = tmp_path / "ball.png"
    assert main(["plot", str(bounce_recording), "--body", "ball", "--series", "z,vz",
                 "--out", str(png)]) == 0
    assert png.stat().st_size > 1000
    (z_label, z), (vz_label, vz) = drawn["curves"]
    assert (z_label, vz_label) == ("ball z", "ball vz")
    assert np.array_equal(z, data["position"][:, 1, 2])
    assert np.array_equal(vz, data["linear_velocity"][:, 1, 2])
    assert z.min() < 0.12 and z.max() == 1.0          # it fell to the ground and bounced
    assert drawn["ylabels"] == ["position (m)", "velocity (m/s)"]
    assert drawn["title"].startswith("bounce  (dt = 4.167 ms)") and "/" not in drawn["title"]
    drawn["curves"].clear()                             # by index; speed is |v|
    assert main(["plot", str(bounce_recording), "--body", "1", "--series", "speed",
                 "--out", str(png)]) == 0
    [(label, speed)] = drawn["curves"]
    assert label == "ball speed"
    assert np.allclose(speed, np.linalg.norm(data["linear_velocity"][:, 1], axis=1))


@pytest.mark.parametrize("options, message", [
    (["--body", "bal"], "--body 'bal': no such body in REC (did you mean 'ball'? or an "
                        "index from 0 to 1)"),
    (["--body", "2"], "--body '2': no such body in REC (its named bodies: ground, ball; "
                      "or an index from 0 to 1)"),
    (["--body", "ball", "--series", "z,height"],
     "--series takes a comma-separated list of x, y, z, vx, vy, vz, speed, wx, wy, wz; "
     "got 'height'"),
    (["--series", "z"], "--series needs --body: the bodies whose series to plot"),
])
def test_plot_body_mistakes_are_one_line(bounce_recording, options, message, tmp_path, capsys):
    assert main(["plot", str(bounce_recording), "--out", str(tmp_path / "p.png"),
                 *options]) == 2
    assert capsys.readouterr().err == \
        f"maxcoord: error: {message.replace('REC', str(bounce_recording))}\n"


def test_plot_names_a_scene_file_by_its_stem(bounce_recording, tmp_path, monkeypatch):
    drawn = _drawn(monkeypatch)
    assert main(["plot", str(bounce_recording), "--out", str(tmp_path / "p.png")]) == 0
    assert drawn["title"] == "bounce  (dt = 4.167 ms)"


def test_readme_says_how_two_bodies_friction_and_restitution_combine(tmp_path):
    """A teacher gave the box friction=0.3 only and measured mu = 0.387 against the ramp's
    default 0.5: README's Contacts section did not say how the pair's values combine, nor
    the default. Measured here as the teacher did: a box sliding down a 45-degree slope
    (gravity tilted), mu = tan(theta) - a / (g cos(theta))."""
    import pathlib
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    contacts = " ".join(readme.split("### Contacts\n", 1)[1].split("\n### ", 1)[0].split())
    for claim in ("geometric mean", "sqrt(mu_a mu_b)", "restitution the larger",
                  "`friction=0.5`", "mu = sqrt(0.3 x 0.5) = 0.387"):
        assert claim in contacts, claim
    scene = tmp_path / "slope.py"
    scene.write_text("import math\n"
                     "from physics import Box, Plane\n"
                     "g = 9.81\n"
                     "WORLD = {'gravity': (g / math.sqrt(2), 0, -g / math.sqrt(2))}\n"
                     "PARAMS = {'ramp': 0.5}\n"
                     "def build(world, ramp=0.5):\n"
                     "    world.add_body(Plane(), friction=ramp, name='ramp')\n"
                     "    world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.1),\n"
                     "                   friction=0.3, name='box')\n")
    for ramp, mu in (("0.5", np.sqrt(0.3 * 0.5)), ("0.3", 0.3)):
        out = tmp_path / "slope.npz"
        assert main(["run", str(scene), "--seconds", "0.5", "--quiet", "--param",
                     f"ramp={ramp}", "--record", str(out)]) == 0
        data = np.load(out)
        a = data["linear_velocity"][-1, 1, 0] / data["time"][-1]
        assert 1 - a / (9.81 / np.sqrt(2)) == pytest.approx(mu, abs=0.005)


def test_list_takes_a_parameter_without_a_unit_written_name_colon_meaning(tmp_path, capsys):
    """A teacher's incline wrote `mu: Coulomb friction` (no "(-)"): that line went on the
    meaning of the parameter above it, and `maxcoord list` said mu was not documented."""
    assert _listed_parameters(tmp_path, capsys, "incline.py",
                              'PARAMS = {"angle": 0.5, "mu": 0.3, "mass": 1.0}\n'
                              "def build(world, angle=0.5, mu=0.3, mass=1.0):\n"
                              '    """A box on a ramp.\n\n'
                              "    Parameters:\n"
                              "        angle (rad): the ramp's slope,\n"
                              "            from the horizontal.\n"
                              "        mu: Coulomb friction between box and ramp\n"
                              "        mass (kg): the box's mass.\n"
                              '    """\n') == [
        "angle = 0.5 rad the ramp's slope, from the horizontal.",
        "mu = 0.3 Coulomb friction between box and ramp",
        "mass = 1.0 kg the box's mass."]


def test_energy_taken_out_or_put_in_is_a_change_not_a_drift(tmp_path, capsys):
    """A box sliding to a stop lost its kinetic energy to friction, and the summary called
    that 'energy drift -6.79 J (-109 % ...)': drift is the integrator's error, and is kept
    for a scene that nothing but the integrator may change (the pendulum). Joint friction
    (a hinge's frictionloss) was not named as taking energy out either."""
    text = _summary(tmp_path, capsys, "slide.py", 1,
                    "from physics import Box, Plane\n"
                    "def build(world):\n"
                    "    world.add_body(Plane())\n"
                    "    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0, position=(0, 0, 0.1))\n"
                    "    box.linear_velocity = (2.0, 0, 0)\n")
    assert "energy drift" not in text
    assert re.fullmatch(r" +-2 J \(-100 % of the largest kinetic energy, 2 J\); inelastic "
                        r"contacts and friction take energy out", _row(text, "energy change"))
    text = _summary(tmp_path, capsys, "rubbing.py", 0.5,
                    "from physics import Box, Hinge\n"
                    "def build(world):\n"
                    "    rod = world.add_body(Box((0.5, 0.03, 0.03)), mass=1.0,\n"
                    "                         position=(0.5, 0, 2))\n"
                    "    world.add_joint(Hinge(None, rod, anchor=(0, 0, 2), axis=(0, 1, 0),\n"
                    "                          friction=0.5))\n")
    assert _row(text, "energy change").endswith("; joint friction takes energy out")
    assert main(["run", "pendulum", "--seconds", "0.5", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "energy change" not in text and re.search(r"^energy drift +[-+]", text, re.M)


def test_the_pendulums_hinge_angle_is_its_angle_from_the_vertical(tmp_path, capsys):
    """The pendulum's hinge was made at the release pose, so its recorded angle started at 0
    and, opposite in sign to the scene's angle, went to -2 rad: plot showed 0 to -2 rad
    instead of +-1. Now it reads the angle from hanging straight down, signed as --param
    angle; small swings take a uniform rod's period, 2 pi sqrt(2 L / 3 g)."""
    for angle, seconds in ((1.0, 1.2), (-0.05, 4.0)):
        out = tmp_path / "pendulum.npz"
        assert main(["run", "pendulum", "--param", f"angle={angle}", "--seconds", str(seconds),
                     "--quiet", "--record", str(out)]) == 0
        data = np.load(out)
        q, t = data["joint_coordinate"][:, 0], data["time"]
        assert q[0] == pytest.approx(angle, abs=1e-12)
        assert q.min() == pytest.approx(-abs(angle), rel=1e-3)
        assert q.max() == pytest.approx(abs(angle), rel=1e-3)
    rising = np.flatnonzero((q[:-1] < 0) & (q[1:] >= 0))
    crossings = t[rising] - q[rising] * (t[rising + 1] - t[rising]) / (q[rising + 1] - q[rising])
    period = np.diff(crossings).mean()
    assert period == pytest.approx(2 * np.pi * np.sqrt(2 * 1.0 / (3 * 9.81)), rel=2e-3)
    import scenes
    assert "sqrt(2L/3g)" in scenes.describe("pendulum")["description"]


DROPPED_BALL = ("from physics import Plane, Sphere\n"
                "WORLD = {'dt': 1 / 240}\n"
                "def build(world):\n"
                "    world.add_body(Plane())\n"
                "    world.add_body(Sphere(0.1), mass=0.5, position=(0, 0, 1),\n"
                "                   restitution=0.8)\n")


def test_the_largest_kinetic_energy_is_every_steps_not_every_eighths(tmp_path, capsys):
    """A 0.5 kg ball dropped from 1 m peaks in the one step before it bounces; sampled every
    8 steps the summary said 3.93 J where the steps reached 4.35 J."""
    import scenes
    text = _summary(tmp_path, capsys, "bounce.py", 1.2, DROPPED_BALL)
    largest = float(re.search(r"% of the largest kinetic energy, ([0-9.e+-]+) J\)",
                              _row(text, "energy change")).group(1))
    scene = scenes.load(str(tmp_path / "bounce.py"))
    kinetic = []
    for _ in range(round(1.2 * 240)):
        scene.step()
        kinetic.append(scene.world.kinetic_energy())
    assert largest == pytest.approx(max(kinetic), rel=1e-3)


def test_no_share_of_a_kinetic_energy_that_is_only_rounding(capsys):
    """The pendulum hanging still (angle=0) moved by 2e-22 J of rounding, and its drift was
    '-1.09e+12 % of the largest kinetic energy, 2.088e-22 J'."""
    assert main(["run", "pendulum", "--seconds", "0.05", "--quiet", "--param", "angle=0"]) == 0
    text = capsys.readouterr().out
    drift, worst = _row(text, "energy drift"), _row(text, "energy |E - E0| max")
    assert "%" not in drift and "%" not in worst
    largest = float(re.fullmatch(r" +[-+][0-9.e+-]+ J \(nothing moved to speak of: the "
                                 r"largest kinetic energy was ([0-9.e+-]+) J\)", drift).group(1))
    start = float(_row(text, "energy start / end").split()[0])
    assert 0 < largest < 1e-9 * start


def test_the_energy_changes_reason_agrees_with_the_controllers_work(tmp_path, capsys):
    """A controller that set a box sliding put in more than friction took out: the change
    was +, the next row said the controller put that in, and the change's reason was only
    'inelastic contacts and friction take energy out' (the box pyramid's ball: +1.01e+04 J)."""
    text = _summary(tmp_path, capsys, "shove.py", 0.3,
                    "from physics import Box, Plane\n"
                    "def build(world):\n"
                    "    world.add_body(Plane())\n"
                    "    box = world.add_body(Box((0.1, 0.1, 0.1)), mass=1.0,\n"
                    "                         position=(0, 0, 0.1))\n"
                    "    def shove(world):\n"
                    "        if world.time == 0:\n"
                    "            box.linear_velocity = (3.0, 0, 0)\n"
                    "    return shove\n")
    change = _row(text, "energy change")
    gained = float(change.split()[0])
    put = float(re.search(r"([-+][0-9.e+-]+) J by the velocities and poses it set",
                          _row(text, "controller put in")).group(1))
    assert 0 < gained < put
    assert change.endswith("; the scene's controller puts energy in; inelastic contacts and "
                           "friction take energy out")


def test_a_controller_that_takes_energy_out_is_named_so(tmp_path, capsys):
    """A controller that stops a falling ball takes its kinetic energy out; no contact or
    damping does, and the change's reason was nothing at all."""
    text = _summary(tmp_path, capsys, "catch.py", 0.3,
                    "from physics import Sphere\n"
                    "def build(world):\n"
                    "    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 5))\n"
                    "    def catch(world):\n"
                    "        if abs(world.time - 0.25) < 1e-9:\n"
                    "            ball.linear_velocity = (0, 0, 0)\n"
                    "    return catch\n")
    change = _row(text, "energy change")
    assert float(change.split()[0]) < 0
    assert change.endswith("; the scene's controller takes energy out")


def test_a_parameter_documented_to_take_inf_takes_it(tmp_path, capsys):
    """wrecking_ball documents 'winch_time (s): ... (inf: never)', and --param winch_time=inf
    was refused as 'must be a finite number'. Now a float parameter whose documented meaning
    names inf takes it (from --param and from a recording's stored parameters); others still
    refuse it."""
    from render.playback import open_recording
    from tools import load_scene_with
    assert "(inf: never)" in _listing(capsys, "wrecking_ball")
    out = tmp_path / "never.npz"
    assert main(["run", "wrecking_ball", "--param", "winch_time=inf", "--seconds", "0.05",
                 "--quiet", "--record", str(out)]) == 0
    scene, _ = open_recording(str(out), load_scene=load_scene_with)
    assert scene.params["winch_time"] == np.inf and scene.controller.start == np.inf
    capsys.readouterr()
    for refused in (["wrecking_ball", "winch_speed=inf"], ["pendulum", "angle=inf"]):
        assert main(["run", refused[0], "--param", refused[1], "--seconds", "0.05",
                     "--quiet"]) == 2
        assert "must be a finite number" in capsys.readouterr().err


def test_a_documented_rope_length_is_taken_or_refused_as_documented(capsys):
    """wrecking_ball documented rope_length '(1 to 20)' and at 1 failed to build with
    'limits must be (lower, upper) with lower < upper': the winch stops the rope at 1 m."""
    assert main(["run", "wrecking_ball", "--param", "rope_length=1", "--seconds", "0.05",
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rope_length must be more than 1 m" in err
    assert "(more than 1, the winch's stop, to 20)" in _listing(capsys, "wrecking_ball")
    assert main(["run", "wrecking_ball", "--param", "rope_length=1.01", "--param", "rows=0",
                 "--seconds", "0.05", "--quiet"]) == 0


def _listing(capsys, scene: str) -> str:
    """`maxcoord list SCENE`'s text, its wrapped lines joined."""
    capsys.readouterr()
    assert main(["list", scene]) == 0
    return " ".join(line.strip() for line in capsys.readouterr().out.splitlines())


def test_a_scene_file_imports_a_module_beside_it_without_leaving_sys_path_changed(
        tmp_path, capsys, monkeypatch):
    """`from helper import ball` in a scene file failed with 'No module named helper' unless
    PYTHONPATH named the file's folder, which `python scene.py` puts on sys.path itself."""
    import sys
    folder = tmp_path / "scenes_here"
    folder.mkdir()
    (folder / "beside_the_scene.py").write_text(
        "from physics import Sphere\n"
        "def ball(world):\n"
        "    return world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 1), name='ball')\n")
    (folder / "uses_it.py").write_text("from physics import Plane\n"
                                       "from beside_the_scene import ball\n"
                                       "def build(world):\n"
                                       "    world.add_body(Plane())\n"
                                       "    ball(world)\n")
    monkeypatch.delitem(sys.modules, "beside_the_scene", raising=False)
    path = list(sys.path)
    assert main(["run", str(folder / "uses_it.py"), "--seconds", "0.05", "--quiet"]) == 0
    assert _row(capsys.readouterr().out, "bodies / joints").strip() == "2 / 0"
    assert sys.path == path
    monkeypatch.delitem(sys.modules, "beside_the_scene")


def test_render_takes_a_fractional_frame_rate(tmp_path, capsys):
    """--fps took whole numbers only (2.5 got argparse's usage and "invalid int value"),
    though the clip's clock and writers take any rate; now a number or a fraction a/b."""
    folder = tmp_path / "frames"
    assert main(["render", "pendulum", "--out", f"{folder}/", "--seconds", "2", "--fps", "5/2",
                 "--size", "32x18"]) == 0
    assert "(5 frames at 2.5 fps: 2.00 s" in capsys.readouterr().out
    assert len(list(folder.iterdir())) == 5


def test_frames_rendered_into_a_folder_replace_an_earlier_renders(tmp_path, capsys):
    """Rendering 5 frames and then 2 into one folder left the first render's frames 2 to 4
    behind the second's, and a video made of frame_*.png mixed the two scenes. Now our own
    frame_NNNNN.png are removed first, and said so."""
    folder = tmp_path / "frames"
    folder.mkdir()
    assert main(["render", "pendulum", "--out", f"{folder}/", "--seconds", "1", "--fps", "5",
                 "--size", "32x18"]) == 0
    first = capsys.readouterr().out
    assert "removed" not in first
    assert main(["render", "double_pendulum", "--out", f"{folder}/", "--seconds", "0.1",
                 "--fps", "20", "--size", "32x18"]) == 0
    assert "(2 frames at 20 fps: 0.10 s; removed 5 older frame_NNNNN.png first)" in \
        capsys.readouterr().out
    assert sorted(p.name for p in folder.iterdir()) == ["frame_00000.png", "frame_00001.png"]


@pytest.mark.parametrize("extra, message", [
    (["--follow", "chasis"], "--follow 'chasis': no such body in car (did you mean "
                             "'chassis'? or an index from 0 to 21)"),
    (["--follow", "22"], "--follow '22': no such body in car (its named bodies: ground, "
                         "chassis, wheel_front_l, knuckle_l, hub_front_l, wheel_front_r, "
                         "knuckle_r, hub_front_r, wheel_rear_l, hub_rear_l and 12 more; or an "
                         "index from 0 to 21)"),
    (["--follow", "chassis", "--frame"],
     "--frame and --follow both point the camera; give one of them"),
    (["--follow", "0"], "--follow '0' is a ground plane, which never moves: follow a body "
                        "that does (a name or index), or leave --follow out for the scene's "
                        "own camera"),
])
def test_render_follow_refuses_an_unknown_body_or_frame_too(tmp_path, capsys, extra, message):
    out = tmp_path / "car.png"
    assert main(["render", "car", "--seconds", "0", "--out", str(out), *extra]) == 2
    assert capsys.readouterr().err == f"maxcoord: error: {message}\n"
    assert not out.exists()


@pytest.mark.parametrize("others", [["notes.txt"],
                                    ["frame_1.png", "my_frame_00001.png", "frame_00001.png.bak",
                                     "frame_00002.png", "sub"]])
def test_frames_are_not_written_into_a_folder_holding_other_files(tmp_path, capsys, others):
    """`render SCENE --out shots` (meaning shots.gif) wrote frame_NNNNN.png among whatever
    the folder held. Now one line says which files are there and what to give instead;
    nothing is written, the folder's files are as they were."""
    folder = tmp_path / "shots"
    folder.mkdir()
    for name in others:
        if name == "sub":
            (folder / name).mkdir()
        else:
            (folder / name).write_text("keep")
    assert main(["render", "pendulum", "--out", str(folder), "--seconds", "0.2",
                 "--size", "32x18"]) == 2
    captured = capsys.readouterr()
    strays = sorted(name for name in others if name != "frame_00002.png")
    shown = ", ".join(strays[:3]) + (f" and {len(strays) - 3} more" if len(strays) > 3 else "")
    assert captured.err == (f"maxcoord: error: --out: the folder '{folder}' already holds "
                            f"other files ({shown}); give a new or empty folder for the "
                            "frames, or a name ending in .png, .gif or .mp4\n")
    assert captured.out == ""
    assert sorted(p.name for p in folder.iterdir()) == sorted(others)


@pytest.mark.parametrize("command, message", [
    (["run", "pendulum", "--dt", "11"], "--dt must be at most 10 s, got 11"),
    (["render", "pendulum", "--dt", "11", "--out", "{tmp}/a.png"],
     "--dt must be at most 10 s, got 11"),
    (["run", "pendulum", "--param", "angle=1", "--param", "angle=2"],
     "--param angle is given twice (angle=1 and angle=2); give it once"),
    (["run", "pendulum", "--frame"],
     "--frame points the camera of the --png picture; give --png OUT.png too, or leave "
     "--frame out"),
    (["render", "pendulum", "--seconds", "0", "--out", "{tmp}/a.gif"],
     "--seconds must be positive for a clip or frames, got 0; a .png --out takes 0 (the "
     "state at the start)"),
    (["run", "pendulum", "--seconds", "0"], "--seconds must be a positive number, got 0"),
])
def test_option_mistakes_are_one_line_naming_the_option_before_any_work(
        command, message, tmp_path, capsys, monkeypatch):
    """--dt 11 said 'dt must be at most 10 s' (the World's words, no --dt); a repeated
    --param kept the last silently, run --frame without --png did nothing silently, and
    render --seconds 0 made a clip of one frame where run refuses --seconds 0."""
    import render.commands
    import tools.cli
    monkeypatch.setattr(tools.cli, "_load", lambda *a, **k: pytest.fail("the scene was built"))
    monkeypatch.setattr(render.commands, "render_command",
                        lambda *a, **k: pytest.fail("rendered"))
    assert main([part.format(tmp=tmp_path) for part in command] + ["--quiet"] * (
        command[0] == "run")) == 2
    assert capsys.readouterr().err == f"maxcoord: error: {message}\n"


def test_a_still_takes_seconds_0_and_an_odd_mp4_size_is_noted(tmp_path, capsys, monkeypatch):
    """An odd --size for .mp4 was padded by a pixel without a word."""
    import render.commands
    seen = {}
    monkeypatch.setattr(render.commands, "render_command", lambda scene, **kw: seen.update(
        kw) or {"kind": "png", "out": kw["out"], "sim_time": 0.0})
    assert main(["render", "pendulum", "--seconds", "0", "--out", str(tmp_path / "a.png")]) == 0
    assert seen["seconds"] == 0 and capsys.readouterr().err == ""
    assert main(["render", "pendulum", "--seconds", "0.1", "--size", "1281x720",
                 "--out", str(tmp_path / "a.mp4")]) == 0
    assert capsys.readouterr().err == ("maxcoord: note: --size 1281x720 is padded to 1282x720 "
                                       "in the .mp4 (its H.264 video takes even sides only)\n")
    assert main(["render", "pendulum", "--seconds", "0.1", "--size", "1280x720",
                 "--out", str(tmp_path / "a.mp4")]) == 0
    assert capsys.readouterr().err == ""


RESTING_SCENE = '''
from physics import Hinge, Plane, Sphere
CAMERA = {"eye": (0.0, -3.0, 1.2), "target": (0.0, 0.0, 0.5)}
def build(world):
    world.add_body(Plane(), name="ground")
    world.add_body(Sphere(0.3), mass=1.0, position=(-0.6, 0.0, 0.3), name="ball")
    bob = world.add_body(Sphere(0.15), mass=1.0, position=(0.6, 0.0, 0.6), name="bob")
    world.add_joint(Hinge(None, bob, anchor=(0.6, 0.0, 1.0), axis=(0, 1, 0)))
'''


def test_render_draws_contacts_joints_shadows_and_quality_as_asked(tmp_path, capsys):
    """render's --contacts, --joints, --no-shadows and --quality reach the renderer (they were
    render_command options with no flag): a ball resting on the ground and a bob on a hinge,
    320x180. The contact marker is red (11 px), the hinge's anchor yellow (24 px), neither in
    the plain picture; without shadows the picture is lighter (2.7 levels on average), and
    full quality changes some 3,300 pixels. --quiet leaves stderr empty."""
    from render.imagefiles import read_png
    scene = tmp_path / "resting.py"
    scene.write_text(RESTING_SCENE)

    def render(*extra):
        out = tmp_path / f"still{len(list(tmp_path.glob('*.png')))}.png"
        assert main(["render", str(scene), "--seconds", "0.05", "--size", "320x180",
                     "--quiet", "--out", str(out), *extra]) == 0
        assert capsys.readouterr().err == ""
        return read_png(out).astype(int)

    def red(img):
        return int(np.sum((img[..., 0] > 200) & (img[..., 1] < 90) & (img[..., 2] < 90)))

    def yellow(img):
        return int(np.sum((img[..., 0] > 200) & (img[..., 1] > 160) & (img[..., 2] < 90)))

    plain = render()
    assert red(plain) == 0 and yellow(plain) == 0
    assert red(render("--contacts")) >= 5
    assert yellow(render("--joints")) >= 10
    assert (render("--no-shadows") - plain).sum(2).mean() > 1.0
    full = render("--quality", "full")
    assert np.sum(np.abs(full - plain).max(2) > 8) > 1000
    # a recording has no contacts to draw: refused in one line, as the viewer's C key is off
    assert main(["run", str(scene), "--seconds", "0.05", "--quiet", "--record",
                 str(tmp_path / "rec.npz")]) == 0
    capsys.readouterr()
    assert main(["render", str(tmp_path / "rec.npz"), "--contacts", "--out",
                 str(tmp_path / "x.png")]) == 2
    assert "--contacts cannot be used with a recording" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_render_follows_a_body_by_its_index_as_plot_takes_it(tmp_path, capsys):
    """A chain's links have no names: --follow 5 follows the fifth link (it was refused, "no
    body is called '5'"), as plot --body 5 plots it; the lookup is plot's (tools.bodies).
    Marbles' unknown name lists the first 10 of its 1005 bodies' names and how many more in a
    201-character line (it listed all: 13,000 characters)."""
    from render.imagefiles import read_png
    out = tmp_path / "link5.png"
    assert main(["render", "chain", "--follow", "5", "--seconds", "0.5", "--size", "160x90",
                 "--quiet", "--out", str(out)]) == 0
    assert read_png(out).shape == (90, 160, 3)
    capsys.readouterr()
    assert main(["render", "marbles", "--follow", "nosuch", "--seconds", "0", "--out",
                 str(tmp_path / "m.png")]) == 2
    err = capsys.readouterr().err
    assert len(err) < 300 and err.endswith("and 995 more; or an index from 0 to 1004)\n"), err


def test_render_follow_of_a_body_the_scene_removes_says_so_and_keeps_rendering(tmp_path,
                                                                               capsys):
    """--follow of a body the scene's controller removes part-way: a traceback (IndexError
    in offscreen.py's camera_now), or, where a later body took its index, that body followed
    without a word. The clip is written, the camera stays where it last was, and a note
    on stderr says from when; exit code 0."""
    scene = tmp_path / "removes.py"
    scene.write_text(
        "from physics import Plane, Sphere\n"
        "def build(world):\n"
        "    world.add_body(Plane(normal=(0, 0, 1)), name='ground')\n"
        "    world.add_body(Sphere(0.2), mass=1, position=(-0.6, 0, 0.2), name='stays')\n"
        "    goes = world.add_body(Sphere(0.2), mass=1, position=(0.6, 0, 0.2), name='goes')\n"
        "    left = [goes]\n"
        "    def controller(world):\n"
        "        if left and world.time > 0.25:\n"
        "            world.remove_body(left.pop())\n"
        "    return controller\n")
    out = tmp_path / "clip.gif"
    assert main(["render", str(scene), "--follow", "goes", "--seconds", "0.5", "--fps", "10",
                 "--size", "80x45", "--quiet", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"wrote {out} (5 frames at 10 fps")
    assert captured.err == ("maxcoord: note: --follow: the scene removed 'goes' by t=0.3 s; "
                            "the camera stayed where it last was from there\n")
    assert out.exists()


def _full_disk(tmp_path, name):
    """``tmp_path / name``, a link to /dev/full: every write to it fails with ENOSPC, as on
    a full disk (what the explorer saw on a 200 KB tmpfs)."""
    import os
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full to stand for a full disk")
    path = tmp_path / name
    path.symlink_to("/dev/full")
    return path


@pytest.mark.parametrize("name, extra", [
    ("clip.mp4", []),
    ("clip.gif", []),
    ("still.png", ["--seconds", "0"]),
])
def test_render_onto_a_full_disk_is_one_line_exit_1_and_no_partial_file(tmp_path, capsys,
                                                                         name, extra):
    """A full disk while writing: an .mp4 was reported written (exit 0) and left corrupt
    (imageio-ffmpeg's writer ignored ffmpeg's exit status); a GIF or PNG raised the
    OSError's traceback. Now one line naming the file and the reason, exit code 1, and the
    partial file removed."""
    out = _full_disk(tmp_path, name)
    assert main(["render", "pendulum", "--seconds", "0.2", "--size", "64x36", "--quiet",
                 "--out", str(out), *extra]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(f"maxcoord: error: could not write {out}: ")
    assert "No space left on device" in captured.err
    assert captured.err.endswith("; the partial file is removed\n")
    assert captured.err.count("\n") == 1 and "wrote" not in captured.out
    assert not out.exists() and not out.is_symlink()


def test_the_built_in_gif_writer_on_a_full_disk_removes_its_partial_file(tmp_path):
    from render.imagefiles import GifWriter, WriteFailed
    out = _full_disk(tmp_path, "clip.gif")
    writer = GifWriter(out, 10, use_pillow=False)
    frame = np.zeros((36, 64, 3), np.uint8)
    with pytest.raises(WriteFailed, match="No space left on device; the partial file is "
                                          "removed"):
        for _ in range(3):
            writer.append(frame)
    writer.close()                                 # (nothing more to do)
    assert not out.is_symlink()


def test_a_frames_folder_on_a_full_disk_keeps_the_whole_frames_and_says_so(tmp_path, capsys,
                                                                          monkeypatch):
    """The disk fills at the fourth frame: the frame partly written is removed, the three
    before it are kept, and one line says so (a traceback before)."""
    import errno
    from pathlib import Path
    write_bytes = Path.write_bytes

    def filling(path, data):
        if path.name == "frame_00003.png":
            write_bytes(path, data[:100])              # (part of it, then the disk is full)
            raise OSError(errno.ENOSPC, "No space left on device")
        return write_bytes(path, data)

    monkeypatch.setattr(Path, "write_bytes", filling)
    out = tmp_path / "frames"
    assert main(["render", "pendulum", "--seconds", "0.5", "--fps", "10", "--size", "64x36",
                 "--quiet", "--out", str(out)]) == 1
    assert capsys.readouterr().err == (
        f"maxcoord: error: could not write {out / 'frame_00003.png'}: No space left on "
        "device; the partial file is removed; frame_00000.png to frame_00002.png before it "
        "are kept\n")
    assert sorted(p.name for p in out.iterdir()) == [f"frame_{k:05d}.png" for k in range(3)]


def test_run_record_onto_a_full_disk_still_writes_the_png_and_says_which_failed(tmp_path,
                                                                               capsys):
    out = _full_disk(tmp_path, "rec.npz")
    png = tmp_path / "last.png"
    assert main(["run", "pendulum", "--seconds", "0.1", "--quiet", "--record", str(out),
                 "--png", str(png)]) == 1
    err = capsys.readouterr().err
    assert err == (f"maxcoord: error: could not write {out}: No space left on device; the "
                   "partial file is removed\n")
    assert not out.is_symlink() and png.exists()


def test_an_mp4_whose_ffmpeg_fails_at_the_end_is_not_reported_written(tmp_path, capsys,
                                                                      monkeypatch):
    """On a disk that fills while ffmpeg writes the trailer, ffmpeg took every frame and then
    exited with an error, which imageio-ffmpeg's writer ignored: 'wrote x.mp4 (90 frames
    ...)', exit code 0, a corrupt file. An ffmpeg (IMAGEIO_FFMPEG_EXE) that does that now
    gives one line with its error, exit code 1, and no file."""
    pytest.importorskip("imageio_ffmpeg")
    fake = tmp_path / "ffmpeg"
    fake.write_text('#!/bin/sh\nfor last; do :; done\ncat > /dev/null\nprintf corrupt > "$last"\n'
                    'echo "[out#0/mp4 @ 0x5560] Error writing trailer: No space left on '
                    'device" >&2\nexit 228\n')
    fake.chmod(0o755)
    monkeypatch.setenv("IMAGEIO_FFMPEG_EXE", str(fake))
    out = tmp_path / "clip.mp4"
    assert main(["render", "pendulum", "--seconds", "0.2", "--size", "64x36", "--quiet",
                 "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.err == (f"maxcoord: error: could not write {out}: ffmpeg: Error writing "
                            "trailer: No space left on device; the partial file is removed\n")
    assert captured.out == "" and not out.exists()


def test_the_viewer_extra_brings_pillow_for_compressed_gifs():
    """GIFs without Pillow are about 9 times larger (62.7 against 7.2 MB for a 4 s 1280x720
    pendulum), and the README's set-up line installs only .[viewer]: Pillow is part of it."""
    import tomllib
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert any(dep.lower().startswith("pillow") for dep in extras["viewer"])
    assert "pip install -e '.[viewer]'" in (root / "README.md").read_text()


def test_render_to_gif_without_pillow_says_the_file_will_be_large(tmp_path, capsys,
                                                                  monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "PIL", None)              # (as if not installed)
    out = tmp_path / "clip.gif"
    assert main(["render", "pendulum", "--seconds", "0.1", "--size", "64x36", "--quiet",
                 "--out", str(out)]) == 0
    assert capsys.readouterr().err == (
        "maxcoord: note: Pillow is not installed (it comes with the [viewer] extra): the GIF "
        "is written with a fixed palette and no compression, about 9 times larger (pip "
        "install pillow)\n")
    from render.imagefiles import gif_frame_count
    assert gif_frame_count(out) == 3
