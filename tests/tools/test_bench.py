"""The benchmark command's report (its figures are measured, never asserted)."""
from tools import bench


def test_the_chain_benchmark_reports_wall_and_cpu_time_and_holds_the_joints():
    report = bench.bench_chain(sizes=(10,))["10"]
    assert set(report) == {"us_per_step", "cpu_us_per_step", "real_time_factor",
                           "constraint_error"}
    assert abs(report["real_time_factor"] - 1e6 / 240 / report["us_per_step"]) <= 0.01
    assert report["constraint_error"] < 1e-6     # the swinging chain keeps its joints


def test_unknown_benchmarks_are_named():
    import pytest
    with pytest.raises(ValueError, match="unknown benchmark 'nope'"):
        bench.run(["nope"])


def test_a_scene_window_is_timed_again_from_its_saved_start():
    """The contact benchmarks time their window of steps several times, each from the state
    saved where it starts (runs replay bit for bit): the world ends exactly as after
    stepping the window once."""
    import scenes
    from snapshot_helpers import assert_same_state
    timed, plain = (scenes.load("box_pyramid", base=3) for _ in range(2))
    report = bench._run_scene(timed, 20, 10, repeats=2)
    plain.step(30)
    assert_same_state(timed.world.get_state(), plain.world.get_state())
    assert report["repeats"] == 2
    assert report["contacts"] == len(plain.world.contacts) > 0
    # the fastest repeat beside the median, each with its real-time factor
    assert 0 < report["best_us_per_step"] <= report["us_per_step"]
    # and where a step's time went, by stage (World.profile)
    stages = report["stages_us_per_step"]
    assert set(stages) == {"collide", "rows", "impacts", "solve", "integrate", "other"}
    assert min(stages.values()) >= 0 and stages["collide"] > 0 and stages["solve"] > 0
    assert abs(report["best_real_time_factor"] - 1e6 / 240 / report["best_us_per_step"]) <= 0.01


def test_the_contact_benchmarks_report_their_targets(monkeypatch):
    """Each contact benchmark carries the real-time factor it aims at and whether its fastest
    window met it (a 3-box pyramid meets 0.001x and misses 10^6 x)."""
    monkeypatch.setattr(bench, "CONTACT_SCENES", (
        ("easy", "box_pyramid", {"base": 2}, 5, 5, 1e-3),
        ("impossible", "box_pyramid", {"base": 2}, 5, 5, 1e6)))
    report = bench.bench_contacts()
    assert report["easy"]["target_real_time_factor"] == 1e-3 and report["easy"]["target_met"]
    assert not report["impossible"]["target_met"]
    assert report["impossible"]["best_real_time_factor"] < 1e6


def test_every_report_carries_the_machine_speed(monkeypatch):
    """Figures from different machines or days are compared through the machine's own
    speed at a Python loop, numpy calls and a sparse product, which every report carries
    beside the benchmarks asked for."""
    monkeypatch.setitem(bench.BENCHES, "chain", lambda: bench.bench_chain(sizes=(10,)))
    report = bench.run(["chain"])
    assert set(report) == {"machine", "chain"}
    assert set(report["machine"]) == {"python_loop_1e5_us", "numpy_1000_calls_us",
                                      "csr_product_50k_us"}
    assert all(v > 0 for v in report["machine"].values())


def test_bench_render_writes_its_report_with_the_machine_speed(tmp_path, monkeypatch, capsys):
    """``maxcoord bench render --out r.json`` writes the file, and its report carries the
    machine's speed as every other benchmark's does (it printed the render figures alone
    and wrote nothing). The render figures here are a stand-in: the real ones take 27 s."""
    import json
    from tools.cli import main
    figures = {"results": {"100": {"ms_per_frame": 12.5, "fps": 80.0}}}
    monkeypatch.setitem(bench.ON_REQUEST, "render", lambda: figures)
    out = tmp_path / "render_bench.json"
    assert main(["bench", "render", "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert set(written) == {"machine", "render"} and written["render"] == figures
    # (the whole set takes minutes: each benchmark says when it starts and ends, on stderr)
    told = capsys.readouterr()
    assert "bench 1/1: render ..." in told.err and "bench 1/1: render took" in told.err
    # (the machine's own figures too: `bench machine` alone said nothing on stderr)
    assert "bench: the machine's own figures took" in told.err
    assert all(v > 0 for v in written["machine"].values())
    assert json.loads(told.out) == written


def test_bench_render_checks_its_output_before_the_work(tmp_path, monkeypatch, capsys):
    """A wrong --out is refused in one line before the 27 s of rendering, not after."""
    from tools.cli import main
    ran = []
    monkeypatch.setitem(bench.ON_REQUEST, "render", lambda: ran.append(1) or {})
    assert main(["bench", "render", "--out", str(tmp_path / "bad.txt")]) == 2
    assert main(["bench", "render", "--out", str(tmp_path / "missing" / "r.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "give a name ending in .json" in err[0] and "missing' does not exist" in err[1]
    assert ran == []


def test_a_bare_bench_runs_the_physics_benchmarks_only():
    """render needs OpenGL: it runs when named, never by default, as do the queries; every
    name is known."""
    assert bench.all_names() == ["chain", "chain_energy", "contacts", "machine", "render",
                                 "queries"]
    bench.check_names(["render", "machine"])
    import pytest
    with pytest.raises(ValueError, match="choose from chain, chain_energy, contacts, machine, "
                                         "render, queries"):
        bench.check_names(["renders"])


def test_the_query_benchmark_reports_each_query_per_body_count():
    report = bench.bench_queries(sizes=(20,), repeats=1)
    assert set(report["20"]) == {"100_short_rays_ms", "100_long_rays_ms", "one_ray_ms",
                                 "one_overlap_ms"}
    assert all(v >= 0.0 for v in report["20"].values())
