"""A step runs BLAS on one thread and gives the caller's thread count back."""
import pytest
from threadpoolctl import ThreadpoolController, threadpool_limits

import physics.step as step_module
from physics import Box, Hinge, World


def blas_thread_counts():
    return [lib.get_num_threads()
            for lib in ThreadpoolController().select(user_api="blas").lib_controllers]


@pytest.mark.parametrize("callers", [1, 2])
def test_a_step_runs_blas_on_one_thread_and_restores_the_callers(callers, monkeypatch):
    world = World()
    rod = world.add_body(Box((0.5, 0.02, 0.02)), mass=1.0, position=(0.5, 0, 1))
    world.add_joint(Hinge(None, rod, anchor=(0, 0, 1), axis=(0, 1, 0)))
    inside = []
    substep = step_module.SUBSTEPS["symplectic"]

    def watched(*args, **kwargs):
        inside.append(blas_thread_counts())
        return substep(*args, **kwargs)

    monkeypatch.setitem(step_module.SUBSTEPS, "symplectic", watched)
    with threadpool_limits(limits=callers, user_api="blas"):
        world.step(3)
        after = blas_thread_counts()
    assert inside and all(count == 1 for counts in inside for count in counts)
    assert after and all(count == callers for count in after)
