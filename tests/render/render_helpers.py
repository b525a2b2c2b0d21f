"""Helpers shared by the render tests (scenes and image masks)."""
import colorsys

import numpy as np

from physics import Box, Plane, Sphere, World


def drop_world(gravity=(0, 0, -9.81), body="sphere", position=(0.0, 0.0, 2.0)):
    """A ground plane (body 0, grey) and one dynamic body (body 1, coloured)."""
    world = World(gravity=gravity, dt=1 / 240)
    world.add_body(Plane(normal=(0, 0, 1), offset=0.0))
    shape = Sphere(0.4) if body == "sphere" else Box((0.5, 0.5, 0.5))
    world.add_body(shape, mass=1.0, position=position)
    return world


def colour_mask(img, rgb, hue_tol=0.06, min_sat=0.25):
    """Pixels whose hue is within ``hue_tol`` of the colour ``rgb`` and that are clearly
    saturated: the body of that colour, whatever its shading (grey ground, sky, shadows and
    the HUD are unsaturated)."""
    f = img[:, :, :3].astype(float) / 255.0
    mx, mn = f.max(2), f.min(2)
    sat = (mx - mn) / np.maximum(mx, 1e-6)
    r, g, b = f[:, :, 0], f[:, :, 1], f[:, :, 2]
    d = np.maximum(mx - mn, 1e-6)
    h = np.where(mx == r, ((g - b) / d) % 6, np.where(mx == g, (b - r) / d + 2, (r - g) / d + 4)) / 6
    h0 = colorsys.rgb_to_hsv(*rgb)[0]
    dh = np.abs(h - h0)
    dh = np.minimum(dh, 1 - dh)
    return (sat > min_sat) & (dh < hue_tol) & (mx > 0.08)


def centroid(mask):
    ys, xs = np.nonzero(mask)
    assert len(xs) > 20, f"expected a body blob, found {len(xs)} pixels"
    return np.array([xs.mean(), ys.mean()])


def polygon_mask(points, shape):
    """Pixels (h, w) whose centres lie inside the convex hull of ``points`` (k, 2) given as
    (column, row) image coordinates."""
    pts = np.asarray(points, float)
    hull = _convex_hull(pts)
    c = hull.mean(0)
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w]
    px, py = xx + 0.5, yy + 0.5
    inside = np.ones(shape, bool)
    n = len(hull)
    for i in range(n):
        a, b = hull[i], hull[(i + 1) % n]
        cross = (b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0])
        s = np.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))
        inside &= (cross * s >= 0)
    return inside


def _convex_hull(pts):
    pts = sorted(map(tuple, pts))

    def half(points):
        out = []
        for p in points:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (p[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(reversed(pts))
    return np.array(lower[:-1] + upper[:-1])
