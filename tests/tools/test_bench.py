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
