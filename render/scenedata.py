"""What the renderer reads from a World, as arrays (numpy only, no OpenGL).

:class:`WorldGeometry` caches each body's shape kind, size and colour (rebuilt when the set of
bodies changes) and each frame turns ``world.positions`` / ``world.orientations`` into
per-instance rows for the GPU: a model matrix (16 floats, column-major, rigid), a scale
``(sx, sy, sz, stretch)`` (see ``meshes``) and an RGBA colour, 24 float32 per instance.
It also ray-casts the real shapes for mouse picking.
"""
from __future__ import annotations

import colorsys

import numpy as np

KINDS = ("sphere", "box", "capsule", "cylinder")
INSTANCE_FLOATS = 24
STATIC_COLOR = (0.62, 0.62, 0.64)
STRING_COLOR = (0.22, 0.22, 0.25)       # Distance joints, drawn as strings
STRING_RADIUS = 0.04                     # of the bodies' typical size


def quat_to_matrix(q) -> np.ndarray:
    """(n, 4) unit quaternions (w, x, y, z) -> (n, 3, 3) rotation matrices."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    R = np.empty((len(q), 3, 3))
    R[:, 0, 0] = 1 - 2 * (y * y + z * z)
    R[:, 0, 1] = 2 * (x * y - w * z)
    R[:, 0, 2] = 2 * (x * z + w * y)
    R[:, 1, 0] = 2 * (x * y + w * z)
    R[:, 1, 1] = 1 - 2 * (x * x + z * z)
    R[:, 1, 2] = 2 * (y * z - w * x)
    R[:, 2, 0] = 2 * (x * z - w * y)
    R[:, 2, 1] = 2 * (y * z + w * x)
    R[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def body_color(index: int) -> tuple:
    """A deterministic, well separated colour for body ``index`` (golden-ratio hues)."""
    h = (0.08 + index * 0.618033988749895) % 1.0
    s = 0.55 + 0.15 * ((index * 7) % 3) / 2
    v = 0.88 - 0.12 * ((index * 5) % 2)
    return colorsys.hsv_to_rgb(h, s, v)


def instance_rows(R: np.ndarray, t: np.ndarray, scale: np.ndarray, color: np.ndarray,
                  out: np.ndarray | None = None) -> np.ndarray:
    """Pack (k,3,3) rotations, (k,3) translations, (k,4) scales and (k,4) colours into
    (k, 24) float32 instance rows."""
    k = len(t)
    if out is None or out.shape[0] != k:
        out = np.zeros((k, INSTANCE_FLOATS), dtype=np.float32)
    # column j of the model matrix sits at floats 4j..4j+3
    out[:, 0:3] = R[:, :, 0]
    out[:, 4:7] = R[:, :, 1]
    out[:, 8:11] = R[:, :, 2]
    out[:, 12:15] = t
    out[:, 3] = out[:, 7] = out[:, 11] = 0.0
    out[:, 15] = 1.0
    out[:, 16:20] = scale
    out[:, 20:24] = color
    return out


def frame_to_z(direction) -> np.ndarray:
    """(k,3) directions -> (k,3,3) rotations taking local +z onto each unit direction."""
    d = np.atleast_2d(np.asarray(direction, dtype=float))
    n = np.linalg.norm(d, axis=1, keepdims=True)
    z = d / np.where(n > 0, n, 1.0)
    z[n[:, 0] == 0] = (0.0, 0.0, 1.0)
    helper = np.where(np.abs(z[:, 2:3]) < 0.9, [[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.cross(z, x)
    return np.stack([x, y, z], axis=2)


class WorldGeometry:
    """Per-body render data of one world."""

    def __init__(self, world):
        self.world = world
        self._key = None
        self._rows = {}
        # each body's colour (the index body_color takes) by its handle: by index, removing
        # a body repainted every body after it in the colour of the one before
        self._colour_index = {}
        self._next_colour = 0
        self.refresh()

    # -- topology ------------------------------------------------------------------------
    def refresh(self):
        bodies = self.world.bodies
        key = (len(bodies), tuple(id(b) for b in bodies[:1]), tuple(id(b) for b in bodies[-1:]))
        if key == self._key:
            return
        self._key = key
        n = len(bodies)
        self.n = n
        self.kind = np.full(n, -1, dtype=np.int64)      # index into KINDS, -1 none/plane
        self.scale = np.zeros((n, 4))
        self.radius = np.zeros(n)                       # bounding radius
        self.static = np.zeros(n, dtype=bool)
        self.color = np.ones((n, 4))
        self.planes = []                                # (normal (3,), offset)
        colours = {}
        for i, b in enumerate(bodies):
            s = b.shape
            name = type(s).__name__ if s is not None else None
            self.static[i] = b.static
            # a body first seen takes its index's colour, or, where the index held another
            # body before, the next colour no body has had
            c = self._colour_index.get(b)
            if c is None:
                c = i if i >= self._next_colour else self._next_colour
                self._next_colour = max(self._next_colour, c + 1)
            colours[b] = c
            self.color[i, :3] = STATIC_COLOR if b.static else body_color(c)
            if name == "Sphere":
                self.kind[i] = 0
                self.scale[i] = (s.radius,) * 3 + (0.0,)
            elif name == "Box":
                self.kind[i] = 1
                self.scale[i] = (*s.half_extents, 0.0)
            elif name == "Capsule":
                self.kind[i] = 2
                self.scale[i] = (s.radius, s.radius, s.radius, s.half_length)
            elif name == "Cylinder":
                self.kind[i] = 3
                self.scale[i] = (s.radius, s.radius, s.half_length, 0.0)
            elif name == "Plane":
                self.planes.append((np.array(s.normal, float), float(s.offset)))
            if s is not None and name != "Plane":
                self.radius[i] = float(s.bounding_radius())
        self._colour_index = colours
        self.members = {k: np.flatnonzero(self.kind == j) for j, k in enumerate(KINDS)}
        self.has_shape = self.kind >= 0
        # height of the reference grid drawn when the world has no ground plane: z = 0, or
        # below the lowest body as it was when the bodies were first seen, and under where
        # the framing takes a free body's fall (see ``fall_points``: the ball fell through
        # the grid at z = 0 and was drawn under it)
        lo = self.bounds()
        self.reference_z = min(0.0, float(lo[0][2]) - 0.05) if lo is not None else 0.0
        falls = self.fall_points(np.flatnonzero(self.has_shape))
        if len(falls) and not self.planes:
            below = float((falls[:, 2] - self.radius[self._falling]).min()) - 0.05
            self.reference_z = min(self.reference_z, below)
        self._rows = {}
        self._typical = None

    @property
    def dynamic(self) -> np.ndarray:
        return ~self.static

    # -- per frame -----------------------------------------------------------------------
    def instances(self, highlight: dict | None = None) -> dict:
        """{kind: (k, 24) float32} for the current state. ``highlight`` maps body index to an
        RGB colour added to that body's colour (selection, drag)."""
        self.refresh()
        x = np.asarray(self.world.positions)
        q = np.asarray(self.world.orientations)
        asleep = self.world.asleep if self.world.sleeping else None
        out = {}
        for kind in KINDS:
            idx = self.members[kind]
            if len(idx) == 0:
                continue
            color = self.color[idx]
            if asleep is not None:
                # sleeping bodies drawn paler, most of the way to the static grey
                dim = asleep[idx]
                if dim.any():
                    color = color.copy()
                    color[dim, :3] = 0.3 * color[dim, :3] + 0.7 * np.asarray(STATIC_COLOR)
            if highlight:
                color = color.copy()
                for i, rgb in highlight.items():
                    hit = np.flatnonzero(idx == i)
                    if len(hit):
                        color[hit[0], :3] = np.clip(color[hit[0], :3] * 0.6 + np.asarray(rgb), 0, 1)
            self._rows[kind] = instance_rows(quat_to_matrix(q[idx]), x[idx], self.scale[idx],
                                             color, self._rows.get(kind))
            out[kind] = self._rows[kind]
        strings = self._strings()
        if strings is not None:
            out["cylinder"] = (np.concatenate([out["cylinder"], strings]) if "cylinder" in out
                               else strings)
        return out

    def _strings(self):
        """(k, 24) instance rows of thin cylinders along the Distance joints (a cradle's
        strings, which would otherwise leave its balls floating), or None."""
        from physics import Distance
        links = [j for j in self.world.joints if isinstance(j, Distance)]
        if not links:
            return None
        a = np.array([j.anchor_a for j in links])
        d = np.array([j.anchor for j in links]) - a
        half = 0.5 * np.linalg.norm(d, axis=1)
        r = np.full(len(links), STRING_RADIUS * self.typical_size())
        return instance_rows(frame_to_z(d), a + 0.5 * d, np.c_[r, r, half, np.zeros_like(r)],
                             np.tile((*STRING_COLOR, 1.0), (len(links), 1)))

    def bounds(self):
        """(lo, hi) corners of the box around all shaped bodies (planes excluded), or None."""
        self.refresh()
        m = self.has_shape
        if not np.any(m):
            if self.n == 0:
                return None
            x = np.asarray(self.world.positions)
            return x.min(0) - 0.5, x.max(0) + 0.5
        x = np.asarray(self.world.positions)[m]
        r = self.radius[m, None]
        return (x - r).min(0), (x + r).max(0)

    def bounding_sphere(self):
        b = self.bounds()
        if b is None:
            return np.zeros(3), 1.0
        lo, hi = b
        return 0.5 * (lo + hi), max(0.5 * float(np.linalg.norm(hi - lo)), 0.05)

    def frame(self, camera, aspect: float):
        """Point ``camera`` (keeping its angles) so that every shaped body is in view."""
        self.refresh()
        m = self.has_shape
        x = np.asarray(self.world.positions)
        if np.any(m):
            camera.frame_spheres(x[m], self.radius[m], aspect)
        elif len(x):
            camera.frame_spheres(x, np.full(len(x), 0.5), aspect)
        else:
            camera.frame(np.zeros(3), 2.0, aspect)

    def centres_in_view(self, camera, aspect: float) -> bool:
        """Whether the centre of every shaped body is in ``camera``'s view (their bounding
        spheres would be too strict: stewart's flat base pokes out of its own view)."""
        self.refresh()
        return camera.sees_spheres(np.asarray(self.world.positions)[self.has_shape], 0.0,
                                   aspect)

    FALL_SECONDS = 1.5      # s of free fall framed for a body with no ground under it

    def fall_points(self, candidates) -> np.ndarray:
        """(k, 3) m: where FALL_SECONDS of free fall from rest take those of the bodies
        ``candidates`` (indices) that are dynamic and in no joint (jointed ones hang or are
        held: a pendulum with no ground was framed 11 m down); their indices are left in
        ``self._falling``."""
        joined = np.zeros(len(self.static), dtype=bool)
        ends = [b.index for j in self.world.joints
                for b in (getattr(j, "body_a", None), getattr(j, "body_b", None)) if b is not None]
        joined[np.asarray(ends, dtype=int)] = True
        idx = np.asarray(candidates, dtype=int)
        self._falling = idx[self.dynamic[idx] & ~joined[idx]]
        gravity = np.asarray(getattr(self.world, "gravity", np.zeros(3)), float)
        x = np.asarray(self.world.positions)[self._falling]
        return x + 0.5 * gravity * self.FALL_SECONDS ** 2

    def frame_with_ground(self, camera, aspect: float):
        """Point ``camera`` (keeping its angles) at every shaped body and the ground under
        each dynamic one, so a body dropped from a height stays in view as it falls: the
        first view of a scene that gives no camera, in the viewer and in ``render``. A body
        with no ground under it is framed with where it falls to in FALL_SECONDS from rest
        (framed on the body alone, a ball dropped with no ground was in extreme close-up and
        left the view in 0.1 s)."""
        self.refresh()
        shaped = self.has_shape
        if not np.any(shaped):
            self.frame(camera, aspect)
            return
        x = np.asarray(self.world.positions)
        levels = [offset / n[2] for n, offset in self.planes if n[2] > 0.99]
        centres, radii = [x[shaped]], [self.radius[shaped]]
        landing = []
        for i in np.flatnonzero(shaped & self.dynamic):
            under = [z for z in levels if z <= x[i, 2]]
            if under:
                centres.append([(x[i, 0], x[i, 1], max(under))])
                radii.append([self.radius[i]])
            else:
                landing.append(i)
        falls = self.fall_points(np.array(landing, dtype=int))
        centres.append(falls)
        radii.append(self.radius[self._falling])
        camera.frame_spheres(np.concatenate(centres), np.concatenate(radii), aspect)

    def typical_size(self) -> float:
        """Median bounding radius of the shaped bodies (for overlay sizes), metres."""
        self.refresh()
        if self._typical is None:
            r = self.radius[self.has_shape]
            self._typical = float(np.median(r)) if len(r) else 0.25
        return self._typical

    def joint_marks(self):
        """What the J overlay draws, now: ``(anchors (J, 3), axis_points (k, 3),
        axis_directions (k, 3))``, m and unit vectors, world frame: every joint's anchor
        (``World.joint_anchors``), and the axis of each of the k joints that has one (a
        Hinge's, Slider's, Cylindrical's, or an axis-holding RotationLock's: fixed in
        body_a) through its anchor. Joint by joint (``joint.anchor``, ``joint.axis``, each a
        body's quaternion made a matrix) 2000 joints took 52-62 ms a frame; each joint's
        axis in body_a's frame is now found once per set of joints and bodies."""
        world = self.world
        joints = world.joints
        self.refresh()
        key = (self._key, len(joints), tuple(id(j) for j in joints[:1] + joints[-1:]))
        if getattr(self, "_axes_key", None) != key:
            self._axes_key = key
            axes, rows, local = [], [], []
            for k, joint in enumerate(joints):
                axis = getattr(joint, "axis", None)
                if axis is None:
                    continue
                body = joint.body_a
                turn = np.eye(3) if body is None else body.rotation
                axes.append(k)
                rows.append(-1 if body is None else body.index)
                local.append(turn.T @ np.asarray(axis, float))
            self._axes = (np.array(axes, dtype=np.intp), np.array(rows, dtype=np.intp),
                          np.array(local, dtype=float).reshape(-1, 3))
        anchors = world.joint_anchors if joints else np.zeros((0, 3))
        which, rows, local = self._axes
        turns = np.broadcast_to(np.eye(3), (len(rows), 3, 3)).copy()
        on_body = rows >= 0
        if on_body.any():
            turns[on_body] = quat_to_matrix(np.asarray(world.orientations)[rows[on_body]])
        return anchors, anchors[which], np.einsum("nij,nj->ni", turns, local)

    # the mouse's camera limits (camera_limits), in the scene's radius S (its bodies'
    # bounding sphere) and the median body's bounding radius
    ZOOM_OUT = 50.0         # the eye at most 50 S from the target (or twice the first view's)
    ZOOM_IN_BODIES = 1.0    # and at least a median body's radius, or 2 % of S, from it
    ZOOM_IN_SCENE = 0.02
    PAN_ROOM = 1.0          # the target within S of the box around the bodies
    EYE_HEIGHT = 0.25       # the eye at least a quarter of the least distance over the ground

    def camera_limits(self, start) -> "CameraLimits":
        """Where the mouse may take the camera (``render.camera.CameraLimits``), from the
        bodies as they are now and the first view ``start`` (a Camera, always within them).
        The floor is the highest ground plane (normal within 8 degrees of +z) under the
        first view's eye; a scene without one has none (its reference grid may be seen
        from below)."""
        from .camera import CameraLimits
        centre, radius = self.bounding_sphere()
        b = self.bounds()
        lo, hi = (centre - radius, centre + radius) if b is None else b
        room = self.PAN_ROOM * radius
        lo = np.minimum(lo - room, start.target)
        hi = np.maximum(hi + room, start.target)
        near = max(self.ZOOM_IN_BODIES * self.typical_size(), self.ZOOM_IN_SCENE * radius)
        near = min(near, start.distance)
        far = max(self.ZOOM_OUT * radius, 2.0 * start.distance)
        levels = [offset / n[2] for n, offset in self.planes if n[2] > 0.99]
        under = [z for z in levels if z <= start.eye[2]]
        floor = max(under) if under else None
        if floor is not None:
            lo[2] = max(lo[2], min(floor, start.target[2]))
            hi[2] = max(hi[2], lo[2])
        height = 0.0 if floor is None else min(self.EYE_HEIGHT * near, start.eye[2] - floor)
        return CameraLimits(lo=lo, hi=hi, min_distance=float(near), max_distance=float(far),
                            floor=floor, eye_height=float(height))

    # -- picking -------------------------------------------------------------------------
    def ray_cast(self, origin, direction):
        """First body hit by the ray: (body index, distance t, world point) or None.
        Exact for spheres, boxes (slab test in the body frame), capsules and cylinders."""
        self.refresh()
        o = np.asarray(origin, float)
        d = np.asarray(direction, float)
        d = d / np.linalg.norm(d)
        x = np.asarray(self.world.positions)
        q = np.asarray(self.world.orientations)
        best = (np.inf, -1)
        for kind in KINDS:
            idx = self.members[kind]
            if len(idx) == 0:
                continue
            R = quat_to_matrix(q[idx])
            lo = np.einsum("nji,nj->ni", R, o - x[idx])        # R^T (o - x)
            ld = np.einsum("nji,j->ni", R, d)
            sc = self.scale[idx]
            if kind == "sphere":
                t = _ray_spheres(lo, ld, np.zeros_like(lo), sc[:, 0])
            elif kind == "box":
                t = _ray_boxes(lo, ld, sc[:, :3])
            elif kind == "cylinder":
                t = _ray_cylinders(lo, ld, sc[:, 0], sc[:, 2], caps=True)
            else:
                r, a = sc[:, 0], sc[:, 3]
                t = np.minimum(_ray_cylinders(lo, ld, r, a, caps=False), np.minimum(
                    _ray_spheres(lo, ld, np.c_[0 * a, 0 * a, a], r),
                    _ray_spheres(lo, ld, np.c_[0 * a, 0 * a, -a], r)))
            j = int(np.argmin(t))
            if t[j] < best[0]:
                best = (float(t[j]), int(idx[j]))
        if not np.isfinite(best[0]):
            return None
        t, i = best
        return i, t, o + t * d


def _first_positive(t1, t2):
    t = np.where(t1 >= 0, t1, t2)
    return np.where(t >= 0, t, np.inf)


def _ray_spheres(o, d, c, r):
    oc = o - c
    b = np.einsum("ij,ij->i", oc, d)
    cc = np.einsum("ij,ij->i", oc, oc) - r * r
    disc = b * b - cc
    s = np.sqrt(np.maximum(disc, 0))
    t = _first_positive(-b - s, -b + s)
    return np.where(disc >= 0, t, np.inf)


def _ray_boxes(o, d, h):
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / np.where(d == 0, 1e-300, d)
        t1 = (-h - o) * inv
        t2 = (h - o) * inv
    tmin = np.minimum(t1, t2).max(1)
    tmax = np.maximum(t1, t2).min(1)
    hit = (tmax >= np.maximum(tmin, 0))
    return np.where(hit, np.where(tmin >= 0, tmin, tmax), np.inf)


def _ray_cylinders(o, d, r, a, caps: bool):
    A = d[:, 0] ** 2 + d[:, 1] ** 2
    B = o[:, 0] * d[:, 0] + o[:, 1] * d[:, 1]
    C = o[:, 0] ** 2 + o[:, 1] ** 2 - r * r
    disc = B * B - A * C
    s = np.sqrt(np.maximum(disc, 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        ts = [(-B - s) / A, (-B + s) / A]
    best = np.full(len(o), np.inf)
    for t in ts:
        z = o[:, 2] + t * d[:, 2]
        ok = (disc >= 0) & (A > 1e-15) & (t >= 0) & (np.abs(z) <= a)
        best = np.where(ok & (t < best), t, best)
    if caps:
        for sign in (1.0, -1.0):
            with np.errstate(divide="ignore", invalid="ignore"):
                t = (sign * a - o[:, 2]) / d[:, 2]
                px = o[:, 0] + t * d[:, 0]
                py = o[:, 1] + t * d[:, 1]
                ok = np.isfinite(t) & (t >= 0) & (px * px + py * py <= r * r)
            best = np.where(ok & (t < best), t, best)
    return best


def initial_camera(spec_camera, geometry: WorldGeometry, aspect: float,
                   frame: bool = False):
    """The first camera on a scene, the same in the viewer, ``render`` and ``run --png``: the
    scene's camera spec (see ``render.camera``); where it gives no target and distance, its
    angles kept and pointed at the bodies and the ground under each falling one
    (``WorldGeometry.frame_with_ground``); where it fits (``"fit": True``, the ready scenes'),
    at every body alone if some body's centre is out of its view; with ``frame``, at every
    body alone (the viewer's F key), whatever the spec's target and distance."""
    from .camera import MAX_DISTANCE, Camera
    cam = Camera.from_spec(spec_camera)
    if frame:
        geometry.frame(cam, aspect)
    elif cam.frame_on_load:
        geometry.frame_with_ground(cam, aspect)
    elif cam.fit_on_load:
        with np.errstate(all="ignore"):          # (bodies flung 1e300 m off overflow here)
            framed = None if geometry.centres_in_view(cam, aspect) else cam.copy()
            if framed is not None:
                geometry.frame(framed, aspect)
        # (bodies beyond the camera's reach, flung off, are left out of view as before)
        if framed is not None and max(framed.distance, *np.abs(framed.target)) < MAX_DISTANCE:
            cam = framed
    cam.frame_on_load = cam.fit_on_load = False     # pointed now: given again, it stays put
    return cam
