# Ragdoll down the stairs (scenes.ragdoll, whose treads grow into the step above them) for
# 600 steps: a hash of the state and where the pelvis ends; run in main and in this clone.
import sys, hashlib; sys.path.insert(0, '.')
import numpy as np, scenes
for steps in (120, 600):
    s = scenes.load("ragdoll"); w = s.world
    s.step(steps)
    m = hashlib.sha1()
    for a in (w.positions, w.orientations, w.linear_velocities, w.angular_velocities):
        m.update(np.ascontiguousarray(a).tobytes())
    dyn = ~np.isinf([b.mass for b in w.bodies])
    x = w.positions[dyn]
    print(steps, m.hexdigest()[:12], "dynamic bodies mean x", x.mean(axis=0).round(3), "min z", x[:, 2].min().round(3))
