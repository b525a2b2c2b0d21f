"""Benchmarks that print figures (never timed tests). ``maxcoord bench [NAME]``."""
from __future__ import annotations

import json
import time

import numpy as np

from physics import Ball, Box, Capsule, Plane, Sphere, World
from physics.stages import STAGES
from tools import load_scene


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


def time_steps(world: World, min_seconds: float = 1.0, max_steps: int = 2000) -> tuple[float, float]:
    """Median microseconds per step over single steps (after one warm-up step): wall clock
    and this process's CPU time. On a busy machine the wall time also counts other jobs
    taking the core; the CPU time does not."""
    world.step()
    wall, cpu = [], []
    start = time.perf_counter()
    while time.perf_counter() - start < min_seconds and len(wall) < max_steps:
        t0, c0 = time.perf_counter(), time.process_time()
        world.step()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    return float(np.median(wall) * 1e6), float(np.median(cpu) * 1e6)


def bench_chain(sizes=(10, 100, 1000, 10000)) -> dict:
    results = {}
    for n in sizes:
        world = hanging_chain(n)
        us, cpu = time_steps(world, min_seconds=2.0 if n < 10000 else 4.0)
        results[str(n)] = {"us_per_step": round(us, 1), "cpu_us_per_step": round(cpu, 1),
                           "real_time_factor": round(world.dt * 1e6 / us, 2),
                           "constraint_error": world.constraint_error()}
    if "1000" in results and "10000" in results:
        results["ratio_10000_over_1000"] = round(results["10000"]["us_per_step"]
                                                  / results["1000"]["us_per_step"], 2)
    return results


def _run_scene(scene, settle_steps: int, timed_steps: int, repeats: int = 5) -> dict:
    """Microseconds per step over ``timed_steps`` after ``settle_steps`` (JSON-ready): the
    median of ``repeats`` runs of that window, each from the state saved one step before it
    (a run replays bitwise from ``get_state`` while no controller acts, as none does in the
    contact benchmarks' windows (the pyramid's shot comes at 1 s), so every repeat times the
    same steps; one run alone moved by several per cent with what else the machine did),
    and the fastest of them (``best_us_per_step``: on a shared machine whose speed swings
    from minute to minute, by up to 1.7 times within a minute on the one where this was
    written, the figure that moves least between runs of the same code), and where a step's
    time went by stage of the pipeline (``World.profile``). The untimed step
    after each restore rebuilds what a restore leaves stale (the broadphase's pairs, the
    last factorisation). The world ends as after one run."""
    world = scene.world
    scene.step(settle_steps - 1)
    start_state = world.get_state()
    wall, cpu = [], []
    stages = dict.fromkeys(STAGES, 0.0)
    for _ in range(repeats):
        world.set_state(start_state)
        scene.step(1)
        world.reset_profile()
        start, cpu_start = time.perf_counter(), time.process_time()
        scene.step(timed_steps)
        wall.append((time.perf_counter() - start) / timed_steps * 1e6)
        cpu.append((time.process_time() - cpu_start) / timed_steps * 1e6)
        profile = world.profile
        for stage in STAGES:
            stages[stage] += profile[stage]
    us, best = float(np.median(wall)), min(wall)
    return {"bodies": len(world.bodies), "joints": len(world.joints), "contacts": len(world.contacts),
            "us_per_step": round(us, 1), "cpu_us_per_step": round(float(np.median(cpu)), 1),
            "real_time_factor": round(world.dt * 1e6 / us, 3),
            "best_us_per_step": round(best, 1),
            "best_real_time_factor": round(world.dt * 1e6 / best, 3),
            # where a step's time went, by stage of the pipeline (World.profile), mean of all
            # timed windows
            "stages_us_per_step": {stage: round(seconds / (repeats * timed_steps) * 1e6, 1)
                                   for stage, seconds in stages.items()},
            "sim_seconds_timed": round(timed_steps * world.dt, 3), "repeats": repeats}


def bench_machine(repeats: int = 7) -> dict:
    """How fast this machine runs the three kinds of work a step is made of, to compare
    figures taken on different machines or days (the fastest of ``repeats``, in us): a pure
    Python loop (10^5 additions), numpy's per-call cost (1000 additions of two 8-vectors),
    and scipy's sparse product on a contact pile's scale (a fixed random 8000 x 6000 CSR
    matrix with 50k entries times a vector). Read them beside the scenes' figures, not as a
    correction factor: on a shared machine they caught one slow spell (twice as long, with
    the scenes) and missed another (the scenes 1.5 times as long, these unchanged)."""
    from scipy import sparse
    from scipy.sparse._sparsetools import csr_matvec
    rng = np.random.default_rng(0)
    small = np.ones(8)
    M = sparse.random(8000, 6000, density=50_000 / (8000 * 6000), format="csr", random_state=rng)
    x, y = rng.random(6000), np.zeros(8000)

    def python_loop():
        total = 0
        for i in range(100_000):
            total += i

    def numpy_calls():
        for _ in range(1000):
            np.add(small, small)

    def sparse_product():
        csr_matvec(8000, 6000, M.indptr, M.indices, M.data, x, y)

    def fastest(work):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            work()
            times.append(time.perf_counter() - start)
        return round(min(times) * 1e6, 1)

    return {"python_loop_1e5_us": fastest(python_loop), "numpy_1000_calls_us": fastest(numpy_calls),
            "csr_product_50k_us": fastest(sparse_product)}


# the contact benchmarks: label, scene, parameters, steps before the timed window, steps in
# it, and the real-time factor the project aims at (the contact issue's targets)
CONTACT_SCENES = (("pyramid_55", "box_pyramid", {"base": 10}, 24, 48, 3.0),
                  ("spheres_1000", "marbles", {"count": 1000}, 120, 24, 0.5),
                  ("ragdolls_10", "ragdoll_pile", {"count": 10}, 120, 24, 1.0))


def bench_contacts() -> dict:
    """The contact benchmarks of the contact issue: a 55-box pyramid, 1000 spheres into a
    bin, and 10 capsule ragdolls dropped in a pile (dt 1/240), each with its target
    real-time factor and whether the fastest window met it."""
    import scenes
    out = {}
    for label, name, params, settle, timed, target in CONTACT_SCENES:
        if name not in scenes.names():
            out[label] = {"skipped": f"scene {name!r} is not available"}
            continue
        scene = load_scene(name, **params)    # (as maxcoord run loads it)
        report = _run_scene(scene, settle, timed)
        report["target_real_time_factor"] = target
        report["target_met"] = report["best_real_time_factor"] >= target
        out[label] = report
    return out


def bench_chain_energy(links: int = 100, seconds: float = 60.0) -> dict:
    """The core issue's energy criterion: the chain of ``links`` thin rods released
    horizontal (self-collision off) for ``seconds`` at dt 1/240. Reports the largest rise and
    the final change of the energy in % of E_s = m g L / 2, the largest constraint error, and
    how many steps had to be split."""
    scene = load_scene("chain", links=links, self_collision=False)    # (as maxcoord run loads it)
    world = scene.world
    e_s = links * 0.1 * 9.81 * links * 0.1 / 2
    e0, highest, worst = world.energy(), -np.inf, 0.0
    start = time.perf_counter()
    for step in range(int(round(seconds / world.dt))):
        world.step()
        highest = max(highest, world.energy() - e0)
        if step % 24 == 0:
            worst = max(worst, world.constraint_error())
    wall = time.perf_counter() - start
    return {"links": links, "seconds": seconds, "max_rise_percent_Es": round(100 * highest / e_s, 4),
            "end_change_percent_Es": round(100 * (world.energy() - e0) / e_s, 4),
            "max_constraint_error": worst, "split_steps": world.stats["splits"],
            "energy_restores": world.stats["energy_restores"], "wall_seconds": round(wall, 1)}


def scattered_boxes(n: int, seed: int = 0) -> World:
    """A ground plane and ``n`` static 0.4 m boxes scattered over 100 x 100 m (a level's
    props, as a game's ray casts and overlap queries meet them)."""
    rng = np.random.default_rng(seed)
    world = World(dt=1 / 60)
    world.add_body(Plane((0, 0, 1), 0.0))
    for _ in range(n):
        world.add_body(Box((0.2, 0.2, 0.2)), static=True,
                       position=(rng.uniform(-50, 50), rng.uniform(-50, 50), 0.2))
    return world


def _median_cpu_ms(call, repeats: int) -> float:
    """Median CPU milliseconds of ``call()`` over ``repeats`` calls (after one warm-up)."""
    call()
    times = []
    for _ in range(repeats):
        c0 = time.process_time()
        call()
        times.append(time.process_time() - c0)
    return round(float(np.median(times)) * 1e3, 3)


def bench_queries(sizes=(100, 1000, 5000), repeats: int = 15) -> dict:
    """CPU ms of the game queries among ``scattered_boxes``: 100 short (2 m) rays down, 100
    long (no end) rays along x, one short ray, one 0.5 m sphere's overlap query."""
    rng = np.random.default_rng(1)
    origins = np.c_[rng.uniform(-50, 50, (100, 2)), np.full(100, 1.0)]
    down, along = np.tile([0.0, 0.0, -1.0], (100, 1)), np.tile([1.0, 0.0, 0.0], (100, 1))
    results = {}
    for n in sizes:
        world = scattered_boxes(n)
        results[str(n)] = {
            "100_short_rays_ms": _median_cpu_ms(
                lambda: world.ray_casts(origins, down, max_distance=2.0), repeats),
            "100_long_rays_ms": _median_cpu_ms(lambda: world.ray_casts(origins, along),
                                               repeats),
            "one_ray_ms": _median_cpu_ms(
                lambda: world.ray_cast(origins[0], down[0], max_distance=2.0), repeats),
            "one_overlap_ms": _median_cpu_ms(
                lambda: world.overlapping(Sphere(0.5), origins[0]), repeats)}
    return results


def bench_render() -> dict:
    """The render benchmark (``render.commands.bench_render``: ms per frame drawing 100,
    1000 and 5000 bodies at 1280x720, no physics). Needs the [viewer] extra and an OpenGL
    driver (EGL without a display, or an X server), so it runs only when asked for by name."""
    from render.commands import bench_render as measure
    return measure()


# the benchmarks a bare ``maxcoord bench`` runs (physics only: no OpenGL needed)
BENCHES = {"chain": bench_chain, "chain_energy": bench_chain_energy, "contacts": bench_contacts,
           "machine": bench_machine}
# run only when named (render: needs OpenGL; queries: the game queries, not the step)
ON_REQUEST = {"render": bench_render, "queries": bench_queries}


# what each benchmark measures, one line each (the command line's help)
ABOUT = {"chain": "us per step of hanging ball-joint chains of 10 to 10000 links",
         "chain_energy": "energy drift of a 100-rod chain over 60 simulated s",
         "contacts": "us per step of a 55-box pyramid, 1000 spheres and 10 ragdolls",
         "queries": "ms of ray casts and overlap queries among 100 to 5000 static boxes",
         "machine": "this machine's speed at a Python loop, numpy calls and a sparse product",
         "render": "ms per frame drawing 100, 1000 and 5000 bodies (needs OpenGL)"}


def all_names() -> list[str]:
    """Every benchmark's name: those run by default, then those run only when named."""
    return [*BENCHES, *ON_REQUEST]


def check_names(names_asked: list[str]):
    """ValueError naming the first benchmark that does not exist, with the choices."""
    for name in names_asked:
        if name not in BENCHES and name not in ON_REQUEST:
            raise ValueError(f"unknown benchmark {name!r}; choose from {', '.join(all_names())}")


def run(names: list[str] | None = None, out: str | None = None, progress=None) -> dict:
    """The ``names`` benchmarks (default: all of ``BENCHES``; ``ON_REQUEST`` ones only when
    named), each report under its name, and always the machine's own figures
    (``bench_machine``) beside them; written as JSON to ``out`` too when given.
    ``progress(text)``: told as each benchmark starts and ends (the whole set takes minutes)."""
    chosen = names or list(BENCHES)
    check_names(chosen)
    todo = [name for name in dict.fromkeys(chosen) if name != "machine"]
    start = time.perf_counter()
    if progress:
        progress("bench: the machine's own figures ...")
    report = {"machine": bench_machine()}
    if progress:
        progress(f"bench: the machine's own figures took {time.perf_counter() - start:.1f} s")
    for i, name in enumerate(todo, 1):
        start = time.perf_counter()
        if progress:
            progress(f"bench {i}/{len(todo)}: {name} ...")
        report[name] = {**BENCHES, **ON_REQUEST}[name]()
        if progress:
            progress(f"bench {i}/{len(todo)}: {name} took {time.perf_counter() - start:.0f} s")
    text = json.dumps(report, indent=2)
    if out:
        from render.imagefiles import writing
        with writing(out), open(out, "w") as f:
            f.write(text + "\n")
    return report
