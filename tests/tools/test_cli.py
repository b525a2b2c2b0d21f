"""The command line: a run prints its summary; every error is one line and a non-zero exit."""
import numpy as np
import pytest

from tools.cli import main


def test_run_prints_a_summary_and_records(tmp_path, capsys):
    out = tmp_path / "rec.npz"
    assert main(["run", "pendulum", "--seconds", "0.5", "--quiet", "--record", str(out)]) == 0
    text = capsys.readouterr().out
    for label in ("real-time factor", "energy drift", "max constraint error", "120 steps"):
        assert label in text
    data = np.load(out)
    assert data["position"].shape[1:] == (2, 3)
    assert data["time"][-1] == pytest.approx(0.5)
    assert np.all(data["constraint_error"] < 1e-6)
    # the rod swung: its position changed
    assert np.linalg.norm(data["position"][-1, 1] - data["position"][0, 1]) > 0.05


@pytest.mark.parametrize("argv, message", [
    (["run", "nosuch"], "unknown scene 'nosuch'"),
    (["run", "chain", "--param", "foo=1"], "has no parameter 'foo'"),
    (["run", "chain", "--param", "links=abc"], "links='abc'"),
    (["run", "chain", "--param", "links"], "expects key=value"),
    (["run", "chain", "--seconds", "-1"], "--seconds must be positive"),
    (["run", "missing_file.py"], "does not exist"),
    (["bench", "nosuch"], "unknown benchmark"),
])
def test_errors_are_one_clear_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


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
