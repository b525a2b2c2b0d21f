"""The benchmark command's report (its figures are measured, never asserted)."""
from tools import bench


def test_the_chain_benchmark_reports_wall_and_cpu_time_and_the_joint_error():
    report = bench.bench_chain(sizes=(10,))["10"]
    assert report["us_per_step"] > 0 and report["cpu_us_per_step"] > 0
    assert report["real_time_factor"] > 0
    assert report["constraint_error"] < 1e-6


def test_unknown_benchmarks_are_named():
    import pytest
    with pytest.raises(ValueError, match="unknown benchmark 'nope'"):
        bench.run(["nope"])
