"""An orbit camera: a target point, a distance, and two angles. Pure numpy (no OpenGL).

Angles: ``yaw`` and ``pitch`` (degrees) give the direction from the target to the eye,

    eye = target + distance * (cos(pitch) cos(yaw), cos(pitch) sin(yaw), sin(pitch)),

so ``pitch > 0`` looks down from above and ``yaw = -90`` puts the eye on the -y side looking
along +y with +x to the right. The world is z up.

A camera spec (what a scene's ``camera`` attribute or the ``camera=`` argument may be) is any of

- a :class:`Camera`;
- a dict ``{"target": (x, y, z), "distance": d, "yaw": deg, "pitch": deg}`` (any subset;
  optional ``"fov"``, the vertical field of view, from 1 to 170 degrees), or
  ``{"eye": (x, y, z), "target": (x, y, z)}``; either may add ``"fit": True``: the view is
  kept while every body's centre is in it, and otherwise frames them all, its angles kept
  (the ready scenes' cameras fit, being made for their default sizes);
- a tuple ``(target, distance, yaw, pitch)``;
- ``None``: frame all bodies from the default direction.

Matrices follow the OpenGL convention for column vectors (``clip = P @ V @ [x, y, z, 1]``) and
are returned as row-major numpy arrays; pass ``M.T`` flattened to GL.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

DEFAULT_YAW = -60.0
DEFAULT_PITCH = 25.0
DEFAULT_FOV = 45.0
# the vertical fields of view (degrees) a perspective draws sanely: 0 divides by zero, and
# toward 180 the picture is a smear of the few pixels in the middle
MIN_FOV, MAX_FOV = 1.0, 170.0
CAMERA_KEYS = {"target", "distance", "yaw", "pitch", "fov", "eye", "fit"}
MAX_DISTANCE = 1e6          # m, the farthest the eye goes from its target


def _finite(value, key: str) -> float:
    """A camera setting's number; a ValueError naming ``key`` unless it is finite."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise ValueError(f"camera {key} must be a finite number, got {value!r}")
    return number


def _point(value, key: str) -> np.ndarray:
    """A camera point (target, eye); a ValueError naming ``key`` unless it is three finite
    numbers."""
    try:
        point = np.array(value, dtype=float).reshape(3)
    except (TypeError, ValueError):
        point = np.full(3, np.nan)
    if not np.all(np.isfinite(point)):
        raise ValueError(f"camera {key} must be a point (x, y, z) of finite numbers, got "
                         f"{value!r}")
    return point


def _cross(a, b) -> np.ndarray:
    """Cross product of two 3-vectors (np.cross is slow for single vectors)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]], dtype=float)


def look_at(eye, target, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    eye, target, up = (np.asarray(v, dtype=float) for v in (eye, target, up))
    f = target - eye
    f /= np.linalg.norm(f)
    s = _cross(f, up)
    if np.linalg.norm(s) < 1e-9:           # looking straight along up
        s = _cross(f, (0.0, 1.0, 0.0))
    s /= np.linalg.norm(s)
    u = _cross(s, f)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = s, u, -f
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def perspective(fovy_deg: float, aspect: float, near: float, far: float) -> np.ndarray:
    f = 1.0 / math.tan(math.radians(fovy_deg) / 2)
    m = np.zeros((4, 4))
    m[0, 0] = f / aspect
    m[1, 1] = f
    m[2, 2] = (far + near) / (near - far)
    m[2, 3] = 2 * far * near / (near - far)
    m[3, 2] = -1.0
    return m


def orthographic(left, right, bottom, top, near, far) -> np.ndarray:
    m = np.eye(4)
    m[0, 0] = 2 / (right - left)
    m[1, 1] = 2 / (top - bottom)
    m[2, 2] = -2 / (far - near)
    m[0, 3] = -(right + left) / (right - left)
    m[1, 3] = -(top + bottom) / (top - bottom)
    m[2, 3] = -(far + near) / (far - near)
    return m


@dataclass(frozen=True)
class CameraLimits:
    """Where the mouse may take an orbit camera (``Camera.limits``; the viewer makes them
    from the scene, ``WorldGeometry.camera_limits``): the target within the box ``lo``-
    ``hi`` (m), the distance from ``min_distance`` to ``max_distance`` (m), and, where
    ``floor`` is a height (m: a ground plane's), the eye at least ``eye_height`` above it
    (the pitch held up so). Without them a small orbit put the eye under the ground (the
    whole view its underside), a pan took the target to z = -42 m, and the zoom went from
    1 mm (inside the bodies) to 1e6 m."""
    lo: np.ndarray
    hi: np.ndarray
    min_distance: float
    max_distance: float
    floor: float | None = None
    eye_height: float = 0.0


class Camera:
    """Orbit camera. ``frame_on_load`` is True when the camera should frame the scene's bodies
    when first shown (no spec was given); ``fit_on_load``, when it should frame them only if
    some body's centre is out of its view (a spec with ``"fit": True``). ``limits`` (a
    :class:`CameraLimits`, or None: only the distance's 1 mm to MAX_DISTANCE) bound what
    ``orbit``, ``pan``, ``zoom`` and the framing methods may do; setting them moves
    nothing until one of those is called."""

    def __init__(self, target=(0.0, 0.0, 0.0), distance: float = 5.0, yaw: float = DEFAULT_YAW,
                 pitch: float = DEFAULT_PITCH, fov: float = DEFAULT_FOV):
        self.target = _point(target, "target")
        self.distance = _finite(distance, "distance")
        self.yaw = _finite(yaw, "yaw")
        self.pitch = _finite(pitch, "pitch")
        self.fov = _finite(fov, "fov")
        self.frame_on_load = False
        self.fit_on_load = False
        self.limits: CameraLimits | None = None
        if not -90.0 <= self.pitch <= 90.0:
            # (beyond, the eye passes over the top and looks back upside down: a typo for a
            # pitch within +-90 more likely than meant)
            raise ValueError(f"camera pitch must be from -90 to 90 degrees (90: straight down "
                             f"from above), got {pitch!r}")
        if not self.distance > 0:
            raise ValueError(f"camera distance must be > 0 (metres), got {distance!r}")
        if not MIN_FOV <= self.fov <= MAX_FOV:
            raise ValueError(f"camera fov must be from {MIN_FOV:g} to {MAX_FOV:g} degrees, got "
                             f"{fov!r}")
        self._clamp()

    # -- construction --------------------------------------------------------------------
    @classmethod
    def look_from(cls, eye, target, fov: float = DEFAULT_FOV) -> "Camera":
        eye, target = _point(eye, "eye"), _point(target, "target")
        d = eye - target
        dist = float(np.linalg.norm(d))
        if dist <= 0:
            raise ValueError("camera eye and target coincide")
        pitch = math.degrees(math.asin(np.clip(d[2] / dist, -1, 1)))
        yaw = math.degrees(math.atan2(d[1], d[0]))
        return cls(target, dist, yaw, pitch, fov)

    @classmethod
    def from_spec(cls, spec) -> "Camera":
        """A Camera from any camera spec (see the module docstring); a fresh copy."""
        if spec is None:
            cam = cls()
            cam.frame_on_load = True
            return cam
        if isinstance(spec, Camera):
            return spec.copy()
        if isinstance(spec, dict):
            unknown = sorted(set(spec) - CAMERA_KEYS)
            if unknown:
                raise ValueError(f"camera has no key {unknown[0]!r}; its keys are "
                                 f"{', '.join(sorted(CAMERA_KEYS))}")
            fov = spec.get("fov", DEFAULT_FOV)
            fit = spec.get("fit", False)
            if not isinstance(fit, bool):
                raise ValueError(f"camera fit must be True or False, got {fit!r}")
            cam = cls._from_dict(spec, fov)
            cam.fit_on_load = fit and not cam.frame_on_load
            return cam
        if isinstance(spec, (tuple, list)) and len(spec) == 4:
            return cls(*spec)
        # duck typing: something with eye/target or target/distance attributes
        if hasattr(spec, "target") and hasattr(spec, "distance"):
            return cls(spec.target, spec.distance, getattr(spec, "yaw", DEFAULT_YAW),
                       getattr(spec, "pitch", DEFAULT_PITCH), getattr(spec, "fov", DEFAULT_FOV))
        if hasattr(spec, "eye") and hasattr(spec, "target"):
            return cls.look_from(spec.eye, spec.target)
        raise ValueError("camera must be a Camera, a dict with target/distance/yaw/pitch or "
                         f"eye/target, or a (target, distance, yaw, pitch) tuple; got {spec!r}")

    @classmethod
    def _from_dict(cls, spec: dict, fov: float) -> "Camera":
        """A Camera from a dict spec's target/distance/yaw/pitch or eye/target."""
        if "eye" in spec:
            aimed = sorted({"distance", "yaw", "pitch"} & set(spec))
            if aimed:
                raise ValueError(f"camera gives both eye and {aimed[0]}: an eye (with its "
                                 "target) sets the distance, yaw and pitch; give one or "
                                 "the other")
            return cls.look_from(spec["eye"], spec.get("target", (0, 0, 0)), fov)
        cam = cls(spec.get("target", (0, 0, 0)), spec.get("distance", 5.0),
                  spec.get("yaw", DEFAULT_YAW), spec.get("pitch", DEFAULT_PITCH), fov)
        cam.frame_on_load = "distance" not in spec and "target" not in spec
        return cam

    def copy(self) -> "Camera":
        c = Camera(self.target, self.distance, self.yaw, self.pitch, self.fov)
        c.frame_on_load = self.frame_on_load
        c.fit_on_load = self.fit_on_load
        c.limits = self.limits
        return c

    def spec(self) -> dict:
        return {"target": tuple(float(x) for x in self.target), "distance": self.distance,
                "yaw": self.yaw, "pitch": self.pitch, "fov": self.fov}

    def __repr__(self):
        t = ", ".join(f"{x:.3g}" for x in self.target)
        return (f"Camera(target=({t}), distance={self.distance:.3g}, yaw={self.yaw:.1f}, "
                f"pitch={self.pitch:.1f})")

    # -- geometry ------------------------------------------------------------------------
    def _clamp(self):
        self.yaw = (self.yaw + 180.0) % 360.0 - 180.0
        lim = self.limits
        if lim is None:
            self.pitch = float(np.clip(self.pitch, -89.0, 89.0))
            self.distance = float(np.clip(self.distance, 1e-3, MAX_DISTANCE))
            return
        self.distance = float(np.clip(self.distance, lim.min_distance, lim.max_distance))
        self.target = np.clip(self.target, lim.lo, lim.hi)
        lowest = -89.0
        if lim.floor is not None:
            # eye z = target z + distance sin(pitch) >= floor + eye_height
            rise = (lim.floor + lim.eye_height - self.target[2]) / self.distance
            lowest = max(lowest, math.degrees(math.asin(min(max(rise, -1.0), 1.0))))
        self.pitch = float(np.clip(self.pitch, min(lowest, 89.0), 89.0))

    @property
    def offset_direction(self) -> np.ndarray:
        """Unit vector from the target to the eye."""
        y, p = math.radians(self.yaw), math.radians(self.pitch)
        return np.array([math.cos(p) * math.cos(y), math.cos(p) * math.sin(y), math.sin(p)])

    @property
    def eye(self) -> np.ndarray:
        return self.target + self.distance * self.offset_direction

    def basis(self):
        """(right, up, forward) unit vectors of the view, world frame."""
        f = -self.offset_direction
        r = _cross(f, (0.0, 0.0, 1.0))
        r /= np.linalg.norm(r)
        return r, _cross(r, f), f

    def clip_range(self):
        near = max(1e-3, 0.01 * self.distance)
        far = max(200.0, 200.0 * self.distance)
        return near, far

    def view_matrix(self) -> np.ndarray:
        return look_at(self.eye, self.target)

    def projection_matrix(self, aspect: float) -> np.ndarray:
        return perspective(self.fov, aspect, *self.clip_range())

    def view_projection(self, aspect: float) -> np.ndarray:
        return self.projection_matrix(aspect) @ self.view_matrix()

    # -- interaction ---------------------------------------------------------------------
    def orbit(self, dyaw: float, dpitch: float):
        self.yaw += dyaw
        self.pitch += dpitch
        self._clamp()

    def pan(self, dx_px: float, dy_px: float, viewport_height: int):
        """Move the target so that the scene follows the cursor by (dx, dy) pixels."""
        r, u, _ = self.basis()
        scale = 2 * self.distance * math.tan(math.radians(self.fov) / 2) / max(viewport_height, 1)
        self.target = self.target - (dx_px * r + dy_px * u) * scale
        if self.limits is not None:
            self._clamp()

    def zoom(self, factor: float):
        self.distance *= factor
        self._clamp()

    def frame(self, center, radius: float, aspect: float = 16 / 9):
        """Keep the angles; move target and distance so a sphere fills the view."""
        self.target = np.array(center, dtype=float)
        half = math.radians(self.fov) / 2
        half_x = math.atan(math.tan(half) * aspect)
        self.distance = max(float(radius), 1e-3) / math.sin(min(half, half_x)) * 1.05
        self._clamp()

    def frame_spheres(self, centers, radii, aspect: float = 16 / 9, margin: float = 1.12):
        """Keep the angles; aim at the middle of the spheres' bounding box and move in as
        close as possible with every sphere (k, 3) / (k,) still in view."""
        c = np.atleast_2d(np.asarray(centers, dtype=float))
        r = np.broadcast_to(np.asarray(radii, dtype=float), (len(c),))
        if len(c) == 0:
            return
        lo, hi = (c - r[:, None]).min(0), (c + r[:, None]).max(0)
        self.target = 0.5 * (lo + hi)
        d = self._distance_to_see(c, r, aspect) * margin
        self.distance = max(d, float(np.max(r)) * 2.0, 1e-3)
        self._clamp()

    def sees_spheres(self, centers, radii, aspect: float = 16 / 9) -> bool:
        """Whether every sphere (k, 3) / (k,) lies wholly in view, as the camera stands."""
        c = np.atleast_2d(np.asarray(centers, dtype=float))
        r = np.broadcast_to(np.asarray(radii, dtype=float), (len(c),))
        return len(c) == 0 or self._distance_to_see(c, r, aspect) <= self.distance

    def _distance_to_see(self, c, r, aspect: float) -> float:
        """The least distance (m) from the target, along the present view direction, at
        which every sphere (k, 3) / (k,) is wholly in view."""
        right, up, fwd = self.basis()
        o = c - self.target
        tv = math.tan(math.radians(self.fov) / 2)
        th = tv * aspect
        need = []
        for axis, t in ((right, th), (up, tv)):
            # |o.a| + r / cos(half angle) <= t (d + o.f)
            need.append((np.abs(o @ axis) + r * math.sqrt(1 + t * t)) / t - o @ fwd)
        return float(np.max(need))

    def ray(self, x: float, y: float, width: int, height: int):
        """World ray (origin, unit direction) through window pixel (x, y); y counts from the
        bottom, as pyglet's mouse events do."""
        r, u, f = self.basis()
        t = math.tan(math.radians(self.fov) / 2)
        nx = 2.0 * x / width - 1.0
        ny = 2.0 * y / height - 1.0
        d = f + nx * t * (width / height) * r + ny * t * u
        return self.eye, d / np.linalg.norm(d)

    def project(self, points, width: int, height: int) -> np.ndarray:
        """Window pixel coordinates (x from the left, y from the bottom) of world points (k, 3);
        rows behind the camera are NaN."""
        p = np.atleast_2d(np.asarray(points, dtype=float))
        clip = np.c_[p, np.ones(len(p))] @ self.view_projection(width / height).T
        w = clip[:, 3:4]
        ndc = np.where(w > 1e-9, clip[:, :3] / np.where(w > 1e-9, w, 1.0), np.nan)
        return np.c_[(ndc[:, 0] + 1) * 0.5 * width, (ndc[:, 1] + 1) * 0.5 * height]
