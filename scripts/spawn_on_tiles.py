# A ball spawned every step onto a floor of 40 flush 1 m tiles (200 balls resting there first):
# cProfile calls a step and sweep_and_prune calls over 60 steps (the carried sweep of the grown
# floor), and the contacts of the last step.
import sys, cProfile, pstats; sys.path.insert(0, '.')
import numpy as np
from physics import World, Box, Sphere
w = World(dt=1/60)
for i in range(40):
    w.add_body(Box((0.5, 2, 0.25)), static=True, position=(i - 20.0, 0, -0.25))
rng = np.random.default_rng(0)
for k in range(200):
    w.add_body(Sphere(0.1), mass=1, position=(rng.uniform(-19, 19), rng.uniform(-1.8, 1.8), 0.1))
w.step(60)
pr = cProfile.Profile(); pr.enable()
for k in range(60):
    w.add_body(Sphere(0.05), mass=0.1, position=(rng.uniform(-19, 19), rng.uniform(-1.8, 1.8), 0.5))
    w.step()
pr.disable()
st = pstats.Stats(pr)
sweeps = sum(v[1] for k, v in st.stats.items() if k[2] == "sweep_and_prune")
covered = sum(v[1] for k, v in st.stats.items() if k[2] == "covered_reach")
print(f"{st.total_calls / 60:.0f} calls a step, sweep_and_prune {sweeps} times in 60 steps, covered_reach {covered}; {len(w.contacts.depth)} contacts")
