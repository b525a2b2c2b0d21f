"""``maxcoord plot rec.npz --out plot.png``: energy, constraint error and joint coordinates of
a recording made by ``maxcoord run --record``, or (``--body``) chosen bodies' positions and
velocities. Uses matplotlib (the [plot] extra)."""
from __future__ import annotations

import os
import sys

import numpy as np

from tools.bodies import body_index

MAX_LEGEND_ENTRIES = 12     # beyond this a legend covers the curves it names

# what --series may name: the recorded array, its component (None: the vector's length), and
# the panel it is drawn in (one panel per unit)
BODY_SERIES = {
    "x": ("position", 0), "y": ("position", 1), "z": ("position", 2),
    "vx": ("linear_velocity", 0), "vy": ("linear_velocity", 1), "vz": ("linear_velocity", 2),
    "speed": ("linear_velocity", None),
    "wx": ("angular_velocity", 0), "wy": ("angular_velocity", 1), "wz": ("angular_velocity", 2),
}
PANELS = {"position": "position (m)", "linear_velocity": "velocity (m/s)",
          "angular_velocity": "angular velocity\n(rad/s, world frame)"}
DEFAULT_SERIES = "z,vz"     # a body's height and its vertical velocity


def series_names(text: str) -> list[str]:
    """--series: comma-separated names of BODY_SERIES, checked (a ValueError naming --series
    and the names it takes)."""
    names = [name.strip().lower() for name in text.split(",")]
    unknown = [name for name in names if name not in BODY_SERIES]
    if unknown:
        raise ValueError(f"--series takes a comma-separated list of {', '.join(BODY_SERIES)}; "
                         f"got {unknown[0]!r}")
    return list(dict.fromkeys(names))


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("plotting needs matplotlib: pip install -e '.[plot]' (in the "
                         "checkout), or pip install matplotlib") from None
    return plt


def plot_recording(path: str, out: str, bodies: list[str] | None = None,
                   series: list[str] | None = None) -> str:
    """Plot a recording to ``out``: its energy, constraint error and joint coordinates, or,
    given ``bodies`` (names or indices), those bodies' ``series`` (BODY_SERIES names)."""
    plt = _pyplot()
    from render.playback import Recording
    rec = Recording.load(path)          # (checked: one-line errors naming the file)
    if bodies:
        fig = _plot_bodies(plt, path, rec, bodies, series or series_names(DEFAULT_SERIES))
    else:
        fig = _plot_overview(plt, path, rec)
    fig.axes[-1].set_xlabel("time (s)")
    fig.suptitle(f"{scene_label(rec.scene)}  (dt = {rec.dt * 1e3:.3f} ms)")
    fig.tight_layout()
    from render.imagefiles import writing
    try:
        with writing(out):
            fig.savefig(out, dpi=110)
    finally:
        plt.close(fig)
    return out


def scene_label(scene: str) -> str:
    """A recorded scene's name as a title shows it: a scene file's stem (the recording keeps
    its absolute path, which says little on a slide), a ready scene's name."""
    return os.path.splitext(os.path.basename(scene))[0] if scene.endswith(".py") else scene


def _plot_overview(plt, path: str, rec):
    """The figure without --body: energy, constraint error and joint coordinates."""
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
    # (a log axis has no 0: exact zeros, a mechanism without joints or one they hold
    # exactly, are left out of the curve and said so, not drawn at a floor as if measured)
    axes[1].semilogy(t, np.where(error > 0.0, error, np.nan))
    axes[1].set_ylabel("constraint error (m)")
    zeros = np.count_nonzero(error == 0.0)
    if zeros:
        axes[1].text(0.01, 0.95, "exactly 0 throughout" if zeros == error.size else
                     f"exactly 0 at {zeros} of {error.size} samples (not drawn)",
                     transform=axes[1].transAxes, va="top", fontsize="small")
    if rows == 3:
        lines = axes[2].plot(t, coords)
        axes[2].set_ylabel("joint coordinates\n(rad or m, from creation)")
        if names is None or len(names) != coords.shape[1]:
            names = [f"coordinate {k}" for k in range(coords.shape[1])]
        if len(lines) <= MAX_LEGEND_ENTRIES:
            axes[2].legend(lines, list(names), fontsize="small", ncol=min(len(lines), 4),
                           loc="upper left")
    return fig


def _plot_bodies(plt, path: str, rec, bodies: list[str], series: list[str]):
    """The figure with --body: a panel per kind of quantity asked (position, velocity,
    angular velocity), a curve per body and series."""
    with np.load(path, allow_pickle=False) as data:
        recorded = [str(n) for n in data["body_name"]] if "body_name" in data.files else None
    chosen = [body_index("--body", text, recorded, rec.n_bodies, path) for text in bodies]
    panels = list(dict.fromkeys(BODY_SERIES[name][0] for name in series))
    for array in panels:
        if getattr(rec, array) is None:
            raise ValueError(f"--series: {path} holds no {array.replace('_', ' ')} (finite, "
                             "one per body and sample): plot x, y or z")
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 2.8 * len(panels)), sharex=True,
                             squeeze=False)
    for axis, array in zip(axes[:, 0], panels):
        for index in chosen:
            label = (recorded[index] if recorded and recorded[index] else f"body {index}")
            for name in (n for n in series if BODY_SERIES[n][0] == array):
                axis.plot(rec.time, _body_series(getattr(rec, array)[:, index], name),
                          label=f"{label} {name}")
        axis.set_ylabel(PANELS[array])
        axis.grid(True, alpha=0.3)
        if len(chosen) * len(series) <= MAX_LEGEND_ENTRIES:
            axis.legend(fontsize="small", loc="upper right")
    return fig


def _body_series(values: np.ndarray, name: str) -> np.ndarray:
    """One body's (k, 3) recorded vectors as the series ``name``: a component, or the
    length (speed)."""
    component = BODY_SERIES[name][1]
    return np.linalg.norm(values, axis=1) if component is None else values[:, component]


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
