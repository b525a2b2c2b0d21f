"""Benchmarks that print figures (never timed tests). ``maxcoord bench [NAME]``."""
from __future__ import annotations

import json
import time

import numpy as np

from physics import Ball, Capsule, World


def hanging_chain(links: int) -> World:
    """Ball-joint chain of 0.1 m, 0.1 kg capsule links hanging straight down, swinging gently."""
    world = World(dt=1 / 240)
    prev = None
    for i in range(links):
        b = world.add_body(Capsule(0.01, 0.05), mass=0.1, position=(0, 0, -0.1 * i - 0.05))
        world.add_joint(Ball(prev, b, anchor=(0, 0, -0.1 * i)))
        prev = b
    for b in world.bodies:   # a small sideways push so the joints carry changing loads
        b.linear_velocity = (0.05, 0.0, 0.0)
    return world


def time_steps(world: World, min_seconds: float = 1.0, max_steps: int = 2000) -> float:
    """Median microseconds per step over batches (after one warm-up step)."""
    world.step()
    samples = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_seconds and len(samples) < max_steps:
        t0 = time.perf_counter()
        world.step()
        samples.append(time.perf_counter() - t0)
    return float(np.median(samples) * 1e6)


def bench_chain(sizes=(10, 100, 1000, 10000)) -> dict:
    results = {}
    for n in sizes:
        world = hanging_chain(n)
        us = time_steps(world, min_seconds=2.0 if n < 10000 else 4.0)
        results[str(n)] = {"us_per_step": round(us, 1), "real_time_factor": round(world.dt * 1e6 / us, 2),
                           "constraint_error": world.constraint_error()}
    if "1000" in results and "10000" in results:
        results["ratio_10000_over_1000"] = round(results["10000"]["us_per_step"]
                                                  / results["1000"]["us_per_step"], 2)
    return results


BENCHES = {"chain": bench_chain}


def run(names: list[str] | None = None, out: str | None = None) -> dict:
    chosen = names or list(BENCHES)
    report = {}
    for name in chosen:
        if name not in BENCHES:
            raise ValueError(f"unknown benchmark {name!r}; choose from {', '.join(BENCHES)}")
        report[name] = BENCHES[name]()
    text = json.dumps(report, indent=2)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
    return report
