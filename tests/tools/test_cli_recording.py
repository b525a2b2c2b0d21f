"""`maxcoord view/render RECORDING`: a recording opens as a playback; a bad one is one line on
stderr and exit code 2."""
import json

import numpy as np
import pytest

from tools.cli import main


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    out = tmp_path_factory.mktemp("rec") / "pendulum.npz"
    assert main(["run", "pendulum", "--seconds", "0.25", "--quiet", "--param", "angle=0.5",
                 "--record", str(out)]) == 0
    return out


def _rewrite(src, dst, **changes):
    d = dict(np.load(src))
    for k, v in changes.items():
        if v is None:
            d.pop(k)
        else:
            d[k] = v
    np.savez(dst, **d)
    return dst


def test_view_opens_a_recording_as_a_playback(recording, monkeypatch):
    import render.commands
    seen = {}

    def fake_view(target, **opts):
        seen.update(target=target, **opts)
        return 0

    monkeypatch.setattr(render.commands, "view_command", fake_view)
    assert main(["view", str(recording)]) == 0
    pb, scene = seen["playback"], seen["target"]
    assert pb.world is scene.world and scene.name == "pendulum"
    assert scene.params == {"angle": 0.5, "length": 1.0}
    assert "recording pendulum.npz" in scene.title
    data = np.load(recording)
    assert pb.n_samples == len(data["time"]) == 61       # the start, then 60 steps
    assert data["time"][0] == 0.0
    np.testing.assert_array_equal(scene.world.positions, data["position"][0])
    # a recording without the .npz suffix is recognised by its content
    plain = recording.parent / "pendulum_recording"
    plain.write_bytes(recording.read_bytes())
    seen.clear()
    assert main(["view", str(plain)]) == 0
    assert seen["playback"].n_samples == 61


def test_render_of_a_recording_defaults_to_its_whole_length(recording, monkeypatch):
    import render.commands
    seen = {}
    monkeypatch.setattr(render.commands, "render_command",
                        lambda target, **kw: seen.update(target=target, **kw) or
                        {"out": kw["out"], "kind": "gif", "frames": 2, "fps": kw["fps"],
                         "duration": 2 / kw["fps"], "sim_time": 2 / kw["fps"]})
    assert main(["render", str(recording), "--out", "clip.gif"]) == 0
    data = np.load(recording)
    assert seen["seconds"] == pytest.approx(data["time"][-1] - data["time"][0], abs=1e-12)
    assert seen["playback"].world is seen["target"].world
    assert main(["render", str(recording), "--out", "clip.gif", "--seconds", "0.1"]) == 0
    assert seen["seconds"] == 0.1


def _not_npz(p, rec):
    p.write_text("not a recording")


def _truncated(p, rec):
    p.write_bytes(rec.read_bytes()[:300])


BAD = [
    (_not_npz, "is not a maxcoord recording (not a .npz archive)"),
    (_truncated, "is not a readable maxcoord recording (BadZipFile"),
    (lambda p, rec: _rewrite(rec, p, position=None),
     "is not a maxcoord recording (missing position)"),
    (lambda p, rec: _rewrite(rec, p, scene=np.array("nosuch")),
     "cannot rebuild the recorded scene: unknown scene 'nosuch'"),
    (lambda p, rec: _rewrite(rec, p, params=np.array(json.dumps({"wheels": 3}))),
     "has no parameter 'wheels'"),
    (lambda p, rec: _rewrite(rec, p, scene=np.array("double_pendulum"), params=np.array("{}")),
     "the recording has 2 bodies but scene 'double_pendulum' rebuilt"),
    (lambda p, rec: _rewrite(rec, p, time=np.zeros(61)), "time is not strictly increasing"),
    (lambda p, rec: _rewrite(rec, p, params=np.array('{"angle": NaN}')),
     "parameter angle=nan of scene 'pendulum' must be a finite number"),
]


@pytest.mark.parametrize("make, message", BAD)
@pytest.mark.parametrize("command", ["view", "render"])
def test_bad_recordings_are_one_clear_line(recording, tmp_path, capsys, make, message, command):
    path = tmp_path / "bad.npz"
    make(path, recording)
    argv = [command, str(path)]
    if command == "render":
        argv += ["--out", str(tmp_path / "x.png")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and str(path) in err
    assert err.startswith("maxcoord: error: ") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("argv, message", [
    (["view", "missing.npz"], "recording 'missing.npz' does not exist"),
    (["render", "missing.npz", "--out", "x.gif"], "recording 'missing.npz' does not exist"),
    (["view", "REC", "--param", "angle=1"], "--param cannot be used with a recording"),
    (["view", "REC", "--sleeping"], "--sleeping cannot be used with a recording"),
    (["render", "REC", "--out", "x.gif", "--seconds", "100"], "--seconds 100 is longer than the "
                                                               "recording"),
    (["render", "REC", "--out", "x.gif", "--dt", "1/60"], "--dt cannot be used with a "
                                                          "recording"),
])
def test_usage_errors_with_recordings(recording, argv, message, capsys):
    argv = [str(recording) if a == "REC" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


SCENE_FILE = """from physics import Box, Plane
def build(world):
    world.add_body(Plane())
    world.add_body(Box((0.2, 0.2, 0.2)), mass=1.0, position=(0, 0, 1.0))
"""


def test_a_recorded_scene_file_plays_back_from_another_directory(tmp_path, monkeypatch, capsys):
    import render.commands
    seen = {}
    monkeypatch.setattr(render.commands, "view_command",
                        lambda target, **opts: seen.update(target=target, **opts) or 0)
    (tmp_path / "myscenes").mkdir()
    (tmp_path / "myscenes" / "drop.py").write_text(SCENE_FILE)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "myscenes/drop.py", "--seconds", "0.05", "--quiet",
                 "--record", "myscenes/drop.npz"]) == 0
    stored = str(np.load(tmp_path / "myscenes" / "drop.npz")["scene"])
    assert stored == str(tmp_path / "myscenes" / "drop.py")        # absolute
    monkeypatch.chdir(tmp_path / "myscenes")
    assert main(["view", "drop.npz"]) == 0 and seen["playback"].n_samples > 1
    # moved away together with its scene file: found next to the recording
    (tmp_path / "moved").mkdir()
    for name in ("drop.py", "drop.npz"):
        (tmp_path / "myscenes" / name).rename(tmp_path / "moved" / name)
    seen.clear()
    assert main(["view", str(tmp_path / "moved" / "drop.npz")]) == 0 and seen["playback"]
    # the scene file nowhere: one line naming both places tried
    (tmp_path / "moved" / "drop.py").unlink()
    capsys.readouterr()
    assert main(["view", str(tmp_path / "moved" / "drop.npz")]) == 2
    err = capsys.readouterr().err
    assert stored in err and str(tmp_path / "moved" / "drop.py") in err
    assert len(err.strip().splitlines()) == 1


def test_a_scene_file_edited_since_its_recording_is_refused_at_playback(tmp_path, monkeypatch,
                                                                      capsys):
    """Playback builds the scene again and poses its bodies from the recording: a file
    edited since (the box made bigger) or one that builds at random played back silently
    with other shapes, drawn floating or sunk. The shapes as built are recorded and
    compared; a changed one is one line."""
    import render.commands
    seen = {}
    monkeypatch.setattr(render.commands, "view_command",
                        lambda target, **opts: seen.update(target=target, **opts) or 0)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "drop.py").write_text(SCENE_FILE)
    assert main(["run", "drop.py", "--seconds", "0.05", "--quiet", "--record", "drop.npz"]) == 0
    assert main(["view", "drop.npz"]) == 0 and seen["playback"].n_samples > 1
    (tmp_path / "drop.py").write_text(SCENE_FILE.replace("(0.2, 0.2, 0.2)", "(0.5, 0.5, 0.5)"))
    capsys.readouterr()
    assert main(["view", "drop.npz"]) == 2
    err = capsys.readouterr().err
    assert "gives 1 body another shape than were recorded (body 1: Box(" in err
    assert "record it again" in err and len(err.strip().splitlines()) == 1


def test_render_of_a_recording_of_bodies_beyond_float32_warns_nothing(recording, tmp_path,
                                                                       capsys):
    """Positions of 1e300 m (a run that blew up) are finite and load, but pack to infinity
    in the renderer's float32 rows: the render printed numpy's 'overflow encountered in
    cast' and 'in multiply' (and 'invalid value in matmul' for a GIF) before drawing the
    bodies out of view. It draws the same without them."""
    import warnings
    far = _rewrite(recording, tmp_path / "far.npz",
                   position=np.load(recording)["position"] * 1e300)
    out = tmp_path / "far.gif"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert main(["render", str(far), "--out", str(out), "--size", "64x36",
                     "--seconds", "0.1"]) == 0
    assert out.stat().st_size > 0 and capsys.readouterr().out.startswith(f"wrote {out} (")
