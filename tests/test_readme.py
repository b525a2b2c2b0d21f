"""README's examples run as written and print what README says they print."""
import contextlib
import io
import pathlib
import re

import numpy as np

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _examples():
    """(code, the text README says it prints or None) for each ```python block."""
    text = README.read_text()
    found = []
    for match in re.finditer(r"```python\n(.*?)```\n(.*?)(?=\n\n|\Z)", text, re.S):
        after = match.group(2).strip()
        claimed = re.findall(r"`([^`]*)`", after) if after.startswith("prints") else None
        found.append((match.group(1), claimed))
    return found


def _run(code):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    return out.getvalue()


def test_readme_has_its_four_examples():
    assert len(_examples()) == 4


def test_the_joint_example_runs_and_keeps_its_joints():
    printed = _run(_examples()[0][0])
    error = float(re.search(r"joint error \(m\): (\S+)", printed).group(1))
    assert error < 1e-6


def test_the_contact_example_prints_what_readme_says():
    code, claimed = _examples()[1]
    printed = _run(code).splitlines()
    assert claimed == printed
    # and that is physics: the 2 kg crate's four corners carry m g, the motor turns at its
    # 2 rad/s and needs no torque to keep it
    carried = float(re.search(r"carrying (\S+) N", printed[0]).group(1))
    assert abs(carried - 2.0 * 9.81) < 0.01
    rate, torque = map(float, re.search(r"(\S+) rad/s, (\S+) N m", printed[1]).groups())
    assert abs(rate - 2.0) < 0.01 and abs(torque) < 0.01


def test_the_joint_space_example_agrees_with_the_engine_as_readme_says():
    code, claimed = _examples()[2]
    printed = _run(code).splitlines()
    assert claimed == printed
    joint_space, engine = map(float, re.findall(r"(\S+) rad", printed[0]))
    assert abs(joint_space - engine) < 1e-3


def test_the_urdf_example_prints_what_readme_says(recwarn):
    code, claimed = _examples()[3]
    printed = _run(code).splitlines()
    assert claimed == printed
    # the merged tool flange is also the one warning; and that is physics: the lifting arm's
    # shoulder turns at its motor's 0.5 rad/s, and the elbow's motor holds the 1 kg lower
    # link, centre 0.2 m out, against gravity: m g r cos(angle), to first order in dt
    assert [str(w.message).count("\n  ") for w in recwarn.list] == [1]
    angle, rate, effort = map(float, re.search(
        r"shoulder (\S+) rad at (\S+) rad/s, elbow held with (\S+) N m", printed[1]).groups())
    assert abs(rate - 0.5) < 1e-6
    assert abs(effort - 1.0 * 9.81 * 0.2 * np.cos(angle)) < 0.005
