"""``maxcoord plot rec.npz --out plot.png``: energy, constraint error and joint coordinates of
a recording made by ``maxcoord run --record``. Uses matplotlib (the [plot] extra)."""
from __future__ import annotations

import sys

import numpy as np

MAX_LEGEND_ENTRIES = 12     # beyond this a legend covers the curves it names


def plot_recording(path: str, out: str) -> str:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("plotting needs matplotlib: pip install 'maxcoord[plot]'") from None
    from render.playback import Recording
    rec = Recording.load(path)          # (checked: one-line errors naming the file)
    missing = [name for name in ("energy", "constraint_error") if name not in rec.series]
    if missing:
        raise ValueError(f"{path} has no {' or '.join(missing)} series to plot (one per sample)")
    t = rec.time
    energy, error = (_finite(path, name, rec.series[name])
                     for name in ("energy", "constraint_error"))
    with np.load(path, allow_pickle=False) as data:
        coords = data["joint_coordinate"] if "joint_coordinate" in data.files else None
        names = (data["joint_coordinate_name"] if "joint_coordinate_name" in data.files
                 else None)
    if coords is not None and (coords.ndim != 2 or len(coords) != len(t)):
        _warn(path, f"joint_coordinate has shape {coords.shape}, not one row per sample "
                    f"({len(t)}): not plotted")
        coords = None                   # optional: left out rather than refused
    elif coords is not None and coords.size:
        coords = _finite(path, "joint_coordinate", coords.astype(float))
        if names is not None and len(names) != coords.shape[1]:
            _warn(path, f"joint_coordinate has {coords.shape[1]} columns but "
                        f"joint_coordinate_name names {len(names)}: they are labelled "
                        "coordinate 0, 1, ...")
    rows = 3 if coords is not None and coords.size else 2
    fig, axes = plt.subplots(rows, 1, figsize=(9, 2.6 * rows), sharex=True)
    finite = energy[np.isfinite(energy)]
    axes[0].plot(t, energy - (finite[0] if finite.size else 0.0))
    axes[0].set_ylabel("energy - E0 (J)")
    axes[1].semilogy(t, np.maximum(error, 1e-16))
    axes[1].set_ylabel("constraint error (m)")
    if rows == 3:
        lines = axes[2].plot(t, coords)
        axes[2].set_ylabel("joint coordinates\n(rad or m, from creation)")
        if names is None or len(names) != coords.shape[1]:
            names = [f"coordinate {k}" for k in range(coords.shape[1])]
        if len(lines) <= MAX_LEGEND_ENTRIES:
            axes[2].legend(lines, list(names), fontsize="small", ncol=min(len(lines), 4),
                           loc="upper left")
    axes[-1].set_xlabel("time (s)")
    fig.suptitle(f"{rec.scene}  (dt = {rec.dt * 1e3:.3f} ms)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _warn(path: str, text: str):
    sys.stderr.write(f"maxcoord: warning: {path}: {text}\n")


def _finite(path: str, name: str, values: np.ndarray) -> np.ndarray:
    """``values`` with NaN where they are not finite (gaps in a curve), after a warning
    naming the array when there are any."""
    bad = ~np.isfinite(values)
    if bad.all():
        _warn(path, f"{name} is NaN or infinite throughout: its panel is empty")
    elif bad.any():
        _warn(path, f"{name} is NaN or infinite in {bad.sum()} of its {bad.size} values: "
                    "gaps in its curve")
    return np.where(bad, np.nan, values)
