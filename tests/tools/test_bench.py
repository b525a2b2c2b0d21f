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
