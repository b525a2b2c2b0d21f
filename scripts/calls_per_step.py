# cProfile total function calls a step (load-independent) for the bench contact scenes and a
# tiled floor: 30 steps after 150 of settling.
import sys, cProfile, pstats; sys.path.insert(0, '.')
import scenes
from tools.bench import CONTACT_SCENES
for lab, name, params, *_ in CONTACT_SCENES:
    s = scenes.load(name, **params); s.step(150)
    pr = cProfile.Profile(); pr.enable(); s.step(30); pr.disable()
    print(lab, round(pstats.Stats(pr).total_calls / 30, 1), "calls a step")
