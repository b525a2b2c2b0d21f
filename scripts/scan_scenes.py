# Which ready scenes (and bench scenes) have static boxes that grow across covered faces.
import sys; sys.path.insert(0, '.')
import numpy as np, scenes
from tools.bench import CONTACT_SCENES
names = [(n, {}) for n in scenes.names()] + [(n, p) for _, n, p, *_ in CONTACT_SCENES]
for name, params in names:
    s = scenes.load(name, **params); s.step(1)
    f = s.world._model().pair_cache.faces
    grown = None if f is None or f.grown is None else np.flatnonzero(f.grown)
    n_static_boxes = 0 if f is None else len(f.rows)
    print(name, params, "static boxes", n_static_boxes, "grown", None if grown is None else len(grown),
          "" if grown is None else f.reach[grown].reshape(len(grown), 6).round(3).tolist())
