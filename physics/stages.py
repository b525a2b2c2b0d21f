"""Where the steps' time goes: wall-clock seconds by stage of the pipeline, summed over steps.

The step marks the end of each stage it runs (``StageClock.lap``): everything since the last
mark is that stage's. Stages, in the order a sub-step runs them:

    collide    broadphase pairs and narrowphase contacts
    rows       contact, limit, motor and joint rows; the joints' system factorised
    impacts    the restitution pass before the step
    solve      the multipliers: the bounded solve with the joints, or the joints' seed solve
    integrate  kicks, drift, the joints' position (SHAKE) and velocity corrections (with
               World(integrator="rk4"): all four of its evaluations)
    other      the rest of ``World.step``: applied loads, angle tracking, sleeping, checks

A mark costs a clock read (well under a microsecond): the profile is always on.
"""
from __future__ import annotations

import time

STAGES = ("collide", "rows", "impacts", "solve", "integrate", "other")


class StageClock:
    """Seconds by stage (``STAGES``) and whole steps, summed since made or ``reset``."""

    def __init__(self):
        self.reset()
        self._mark = time.perf_counter()

    def reset(self):
        self.seconds = dict.fromkeys(STAGES, 0.0)
        self.steps = 0

    def lap(self, stage: str):
        """Count the time since the last mark to ``stage`` and mark now."""
        now = time.perf_counter()
        self.seconds[stage] += now - self._mark
        self._mark = now

    def step_started(self):
        """Mark the start of a step."""
        self._mark = time.perf_counter()

    def step_ended(self, completed: bool = True):
        """Close a step: what no stage claimed is ``other``. A step that failed (``completed``
        False) adds its time, but not to the steps."""
        self.lap("other")
        self.steps += completed

    def report(self) -> dict:
        """{"steps": n, "total": s, stage: s, ...}: seconds (the total is the stages' sum: every
        moment of a step is some stage's), a copy."""
        return {"steps": self.steps, "total": sum(self.seconds.values()), **self.seconds}
