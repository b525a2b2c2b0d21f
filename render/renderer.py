"""The OpenGL part: instanced shaded bodies, shadows, the ground grid, debug overlays.

One instanced draw per shape kind and detail level for the bodies, one ground draw per plane and
one sky draw, so thousands of bodies cost a handful of draw calls. Per-instance data is a rigid
model matrix as four vec4 attributes, a scale vec4 and a colour vec4 (pyglet 2.1 has no mat4
vertex attribute, so the buffers are set up with raw GL: ``glVertexAttribDivisor`` and
``glDrawElementsInstanced``).

Two quality levels (``Renderer(quality=...)``, or ``MAXCOORD_RENDER_QUALITY=fast|full``):

- ``"full"``: a shadow map (bodies and ground receive shadows), per-pixel fog, a procedural
  anti-aliased ground grid and a per-pixel sky;
- ``"fast"``: the default on software rasterisers (llvmpipe, softpipe), where every shaded
  pixel costs CPU time: soft contact shadows (one blended ellipse per body on each plane, no
  shadow map), a darkening of bodies near the ground, per-vertex fog, a mipmapped grid
  texture on a tessellated plane with pre-lit colours, and a vertex-coloured sky.

Needs a current OpenGL 3.3 core context (see ``backend``); import only after
``backend.load_pyglet()``.
"""
from __future__ import annotations

import ctypes
import math
import time

import numpy as np

from . import meshes, shaders
from .backend import load_pyglet
from .camera import look_at, orthographic
from .scenedata import INSTANCE_FLOATS, KINDS, frame_to_z, instance_rows

pyglet = load_pyglet()
gl = pyglet.gl

SKY_ZENITH = (0.47, 0.60, 0.78)
SKY_HORIZON = (0.86, 0.89, 0.93)
SKY_NADIR = (0.55, 0.56, 0.58)
LIGHT_DIR = np.array([0.6, -0.3, 0.7]) / np.linalg.norm([0.6, -0.3, 0.7])
# lighting constants shared with the shaders (linear light)
AMBIENT_SKY = np.array([0.50, 0.58, 0.72]) * 0.55
AMBIENT_BOUNCE = np.array([0.28, 0.25, 0.22]) * 0.55
SUN = np.array([1.0, 0.96, 0.88]) * 1.05
# ground grid colours (sRGB, before lighting): plane, minor lines, major lines, x and y axes
GRID_BASE = np.array([0.80, 0.80, 0.78])
GRID_MINOR = np.array([0.62, 0.63, 0.64])
GRID_MAJOR = np.array([0.46, 0.47, 0.50])
AXIS_X = np.array([0.78, 0.33, 0.30])
AXIS_Y = np.array([0.35, 0.66, 0.35])
QUALITIES = ("fast", "full")
# bodies farther than this many camera distances from the camera's target are left out of
# the fit of fog, shadows and grid spacing (one body flung 1 km away made the grid lines and
# shadows of everything near the camera vanish)
VIEW_REACH = 8.0
SOFTWARE_RENDERERS = ("llvmpipe", "softpipe", "swrast", "software")


def is_software_renderer(name: str | None = None) -> bool:
    """True when the current context's GL_RENDERER (or ``name``) is a software rasteriser."""
    if name is None:
        name = pyglet.gl.gl_info.get_renderer()
    return any(k in str(name).lower() for k in SOFTWARE_RENDERERS)


def default_quality() -> str:
    """``MAXCOORD_RENDER_QUALITY`` if set, else "fast" on a software rasteriser and "full"
    on a GPU (needs a current context)."""
    from .backend import forced_quality
    return forced_quality() or ("fast" if is_software_renderer() else "full")


def resolve_quality(quality: str | None) -> str:
    if quality is None or str(quality).lower() == "auto":
        return default_quality()
    q = str(quality).lower()
    if q not in QUALITIES:
        raise ValueError(f"quality must be 'fast', 'full' or None (auto), got {quality!r}")
    return q


class Program:
    """A linked GLSL program with cached uniform locations (raw GL: pyglet 2.1's
    ShaderProgram cannot introspect ``sampler2DShadow`` uniforms)."""

    def __init__(self, vs: str, fs: str):
        self.id = gl.glCreateProgram()
        shaders_ = [self._compile(vs, gl.GL_VERTEX_SHADER), self._compile(fs, gl.GL_FRAGMENT_SHADER)]
        for sh in shaders_:
            gl.glAttachShader(self.id, sh)
        gl.glLinkProgram(self.id)
        ok = gl.GLint()
        gl.glGetProgramiv(self.id, gl.GL_LINK_STATUS, ctypes.byref(ok))
        if not ok.value:
            raise RuntimeError("shader link failed: " + self._log(self.id, program=True))
        for sh in shaders_:
            gl.glDetachShader(self.id, sh)
            gl.glDeleteShader(sh)
        self._loc = {}

    @staticmethod
    def _log(handle, program=False) -> str:
        n = gl.GLint()
        (gl.glGetProgramiv if program else gl.glGetShaderiv)(handle, gl.GL_INFO_LOG_LENGTH,
                                                            ctypes.byref(n))
        buf = ctypes.create_string_buffer(max(n.value, 1))
        (gl.glGetProgramInfoLog if program else gl.glGetShaderInfoLog)(handle, n.value, None, buf)
        return buf.value.decode(errors="replace")

    def _compile(self, src: str, kind) -> int:
        sh = gl.glCreateShader(kind)
        data = src.encode()
        arr = ctypes.cast(ctypes.pointer(ctypes.c_char_p(data)),
                          ctypes.POINTER(ctypes.POINTER(gl.GLchar)))
        gl.glShaderSource(sh, 1, arr, None)
        gl.glCompileShader(sh)
        ok = gl.GLint()
        gl.glGetShaderiv(sh, gl.GL_COMPILE_STATUS, ctypes.byref(ok))
        if not ok.value:
            raise RuntimeError("shader compile failed: " + self._log(sh))
        return sh

    def use(self):
        gl.glUseProgram(self.id)

    def location(self, name: str) -> int:
        loc = self._loc.get(name)
        if loc is None:
            loc = self._loc[name] = gl.glGetUniformLocation(self.id, name.encode())
        return loc

    def set(self, **values):
        """Set uniforms of the program in use (unknown or unused names are ignored): ints ->
        int/sampler, floats -> float, 2/3/4 sequences -> vecN, 16 -> mat4 (column-major)."""
        for name, v in values.items():
            loc = self.location(name)
            if loc < 0:
                continue
            if isinstance(v, (bool, int, np.integer)):
                gl.glUniform1i(loc, int(v))
            elif isinstance(v, (float, np.floating)):
                gl.glUniform1f(loc, float(v))
            elif len(v) == 16:
                gl.glUniformMatrix4fv(loc, 1, gl.GL_FALSE, (gl.GLfloat * 16)(*v))
            else:
                getattr(gl, f"glUniform{len(v)}f")(loc, *(float(x) for x in v))


def _program(vs, fs) -> Program:
    return Program(vs, fs)


def _mat(m) -> tuple:
    """numpy row-major 4x4 -> column-major tuple for glUniformMatrix4fv."""
    return tuple(float(x) for x in np.asarray(m, dtype=float).T.reshape(-1))


def set_uniforms(program: Program, **values):
    program.set(**values)


def _cross(a, b) -> np.ndarray:
    """Cross product of two 3-vectors (np.cross is slow for single vectors)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]], dtype=float)


def _gen(fn) -> int:
    h = gl.GLuint()
    fn(1, ctypes.byref(h))
    return h.value


class InstancedMesh:
    """A static mesh plus a per-instance stream buffer, in one vertex array object."""

    def __init__(self, vertices: np.ndarray, indices: np.ndarray):
        self.count = int(len(indices))
        self.vao = _gen(gl.glGenVertexArrays)
        gl.glBindVertexArray(self.vao)
        self.vbo = _gen(gl.glGenBuffers)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vbo)
        v = np.ascontiguousarray(vertices, dtype=np.float32)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, v.nbytes, v.ctypes.data, gl.GL_STATIC_DRAW)
        stride = 7 * 4
        for loc, size, off in ((0, 3, 0), (1, 3, 12), (2, 1, 24)):
            gl.glEnableVertexAttribArray(loc)
            gl.glVertexAttribPointer(loc, size, gl.GL_FLOAT, gl.GL_FALSE, stride,
                                     ctypes.c_void_p(off))
        self.ibo = _gen(gl.glGenBuffers)
        gl.glBindBuffer(gl.GL_ELEMENT_ARRAY_BUFFER, self.ibo)
        i = np.ascontiguousarray(indices, dtype=np.uint32)
        gl.glBufferData(gl.GL_ELEMENT_ARRAY_BUFFER, i.nbytes, i.ctypes.data, gl.GL_STATIC_DRAW)
        self.inst = _gen(gl.glGenBuffers)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.inst)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, INSTANCE_FLOATS * 4, None, gl.GL_STREAM_DRAW)
        istride = INSTANCE_FLOATS * 4
        for k in range(6):                      # locations 3..8: m0 m1 m2 m3 scale color
            loc = 3 + k
            gl.glEnableVertexAttribArray(loc)
            gl.glVertexAttribPointer(loc, 4, gl.GL_FLOAT, gl.GL_FALSE, istride,
                                     ctypes.c_void_p(16 * k))
            gl.glVertexAttribDivisor(loc, 1)
        gl.glBindVertexArray(0)
        self.n_instances = 0

    def upload(self, rows: np.ndarray):
        rows = np.ascontiguousarray(rows, dtype=np.float32)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.inst)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, max(rows.nbytes, 4), rows.ctypes.data if len(rows)
                        else None, gl.GL_STREAM_DRAW)
        self.n_instances = len(rows)

    def draw(self):
        if self.n_instances == 0:
            return
        gl.glBindVertexArray(self.vao)
        gl.glDrawElementsInstanced(gl.GL_TRIANGLES, self.count, gl.GL_UNSIGNED_INT,
                                   ctypes.c_void_p(0), self.n_instances)

    def draw_quads(self):
        """One 4-vertex triangle strip per instance, with only the instance attributes
        (locations 3..8) bound: for shaders that build their quads from ``gl_VertexID``."""
        if self.n_instances == 0:
            return
        if getattr(self, "quad_vao", None) is None:
            self.quad_vao = _gen(gl.glGenVertexArrays)
            gl.glBindVertexArray(self.quad_vao)
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.inst)
            for k in range(6):
                gl.glEnableVertexAttribArray(3 + k)
                gl.glVertexAttribPointer(3 + k, 4, gl.GL_FLOAT, gl.GL_FALSE, INSTANCE_FLOATS * 4,
                                         ctypes.c_void_p(16 * k))
                gl.glVertexAttribDivisor(3 + k, 1)
        gl.glBindVertexArray(self.quad_vao)
        gl.glDrawArraysInstanced(gl.GL_TRIANGLE_STRIP, 0, 4, self.n_instances)

    def delete(self):
        for b in (self.vbo, self.ibo, self.inst):
            gl.glDeleteBuffers(1, ctypes.byref(gl.GLuint(b)))
        for vao in (self.vao, getattr(self, "quad_vao", None)):
            if vao is not None:
                gl.glDeleteVertexArrays(1, ctypes.byref(gl.GLuint(vao)))


class ShadowMap:
    def __init__(self, size: int = 2048):
        self.size = size
        self.tex = _gen(gl.glGenTextures)
        gl.glBindTexture(gl.GL_TEXTURE_2D, self.tex)
        gl.glTexImage2D(gl.GL_TEXTURE_2D, 0, gl.GL_DEPTH_COMPONENT24, size, size, 0,
                        gl.GL_DEPTH_COMPONENT, gl.GL_FLOAT, None)
        for pname, value in ((gl.GL_TEXTURE_MIN_FILTER, gl.GL_LINEAR),
                             (gl.GL_TEXTURE_MAG_FILTER, gl.GL_LINEAR),
                             (gl.GL_TEXTURE_WRAP_S, gl.GL_CLAMP_TO_BORDER),
                             (gl.GL_TEXTURE_WRAP_T, gl.GL_CLAMP_TO_BORDER),
                             (gl.GL_TEXTURE_COMPARE_MODE, gl.GL_COMPARE_REF_TO_TEXTURE),
                             (gl.GL_TEXTURE_COMPARE_FUNC, gl.GL_LEQUAL)):
            gl.glTexParameteri(gl.GL_TEXTURE_2D, pname, value)
        gl.glTexParameterfv(gl.GL_TEXTURE_2D, gl.GL_TEXTURE_BORDER_COLOR,
                            (gl.GLfloat * 4)(1, 1, 1, 1))
        self.fbo = _gen(gl.glGenFramebuffers)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, self.fbo)
        gl.glFramebufferTexture2D(gl.GL_FRAMEBUFFER, gl.GL_DEPTH_ATTACHMENT, gl.GL_TEXTURE_2D,
                                  self.tex, 0)
        gl.glDrawBuffer(gl.GL_NONE)
        gl.glReadBuffer(gl.GL_NONE)
        status = gl.glCheckFramebufferStatus(gl.GL_FRAMEBUFFER)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)
        if status != gl.GL_FRAMEBUFFER_COMPLETE:
            raise RuntimeError(f"shadow map framebuffer incomplete (0x{status:x})")


class RenderTarget:
    """An offscreen framebuffer (RGBA8 colour, 24-bit depth), optionally multisampled with a
    resolve target; ``read()`` returns the image as (h, w, 3) uint8, top row first."""

    def __init__(self, width: int, height: int, samples: int = 0):
        self.width, self.height = int(width), int(height)
        max_samples = gl.GLint()
        gl.glGetIntegerv(gl.GL_MAX_SAMPLES, ctypes.byref(max_samples))
        self.samples = min(int(samples), max_samples.value) if samples else 0
        self.fbo, self.color, self.depth = self._make(self.samples)
        self.resolve = self._make(0) if self.samples else None

    def _make(self, samples):
        fbo = _gen(gl.glGenFramebuffers)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, fbo)
        bufs = []
        for fmt, attach in ((gl.GL_RGBA8, gl.GL_COLOR_ATTACHMENT0),
                            (gl.GL_DEPTH_COMPONENT24, gl.GL_DEPTH_ATTACHMENT)):
            rb = _gen(gl.glGenRenderbuffers)
            gl.glBindRenderbuffer(gl.GL_RENDERBUFFER, rb)
            if samples:
                gl.glRenderbufferStorageMultisample(gl.GL_RENDERBUFFER, samples, fmt,
                                                    self.width, self.height)
            else:
                gl.glRenderbufferStorage(gl.GL_RENDERBUFFER, fmt, self.width, self.height)
            gl.glFramebufferRenderbuffer(gl.GL_FRAMEBUFFER, attach, gl.GL_RENDERBUFFER, rb)
            bufs.append(rb)
        status = gl.glCheckFramebufferStatus(gl.GL_FRAMEBUFFER)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)
        if status != gl.GL_FRAMEBUFFER_COMPLETE:
            raise RuntimeError(f"offscreen framebuffer incomplete (0x{status:x})")
        return fbo, bufs[0], bufs[1]

    def bind(self):
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, self.fbo)
        gl.glViewport(0, 0, self.width, self.height)

    def read(self) -> np.ndarray:
        src = self.fbo
        if self.resolve is not None:
            gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, self.fbo)
            gl.glBindFramebuffer(gl.GL_DRAW_FRAMEBUFFER, self.resolve[0])
            gl.glBlitFramebuffer(0, 0, self.width, self.height, 0, 0, self.width, self.height,
                                 gl.GL_COLOR_BUFFER_BIT, gl.GL_NEAREST)
            src = self.resolve[0]
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, src)
        img = read_pixels(0, 0, self.width, self.height)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)
        return img

    def delete(self):
        for fbo, color, depth in [(self.fbo, self.color, self.depth)] + (
                [self.resolve] if self.resolve else []):
            gl.glDeleteRenderbuffers(1, ctypes.byref(gl.GLuint(color)))
            gl.glDeleteRenderbuffers(1, ctypes.byref(gl.GLuint(depth)))
            gl.glDeleteFramebuffers(1, ctypes.byref(gl.GLuint(fbo)))


def read_pixels(x: int, y: int, width: int, height: int) -> np.ndarray:
    """Read the bound read framebuffer: (h, w, 3) uint8 with the top row first."""
    buf = np.empty((height, width, 4), dtype=np.uint8)
    gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 1)
    gl.glReadPixels(x, y, width, height, gl.GL_RGBA, gl.GL_UNSIGNED_BYTE, buf.ctypes.data)
    return np.ascontiguousarray(buf[::-1, :, :3])


class InstanceStream:
    """A vertex array with one per-instance float buffer (attributes 0.. of ``sizes``
    floats each, divisor 1) and no per-vertex data: shaders build their vertices from
    ``gl_VertexID``. Used for the fast path's world axes."""

    def __init__(self, sizes=(4, 4, 4)):
        self.floats = int(sum(sizes))
        self.vao = _gen(gl.glGenVertexArrays)
        gl.glBindVertexArray(self.vao)
        self.vbo = _gen(gl.glGenBuffers)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vbo)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, self.floats * 4, None, gl.GL_STREAM_DRAW)
        off = 0
        for loc, size in enumerate(sizes):
            gl.glEnableVertexAttribArray(loc)
            gl.glVertexAttribPointer(loc, size, gl.GL_FLOAT, gl.GL_FALSE, self.floats * 4,
                                     ctypes.c_void_p(4 * off))
            gl.glVertexAttribDivisor(loc, 1)
            off += size
        gl.glBindVertexArray(0)
        self.n = 0

    def upload(self, rows: np.ndarray):
        rows = np.ascontiguousarray(rows, dtype=np.float32)
        self.n = len(rows)
        if self.n:
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vbo)
            gl.glBufferData(gl.GL_ARRAY_BUFFER, rows.nbytes, rows.ctypes.data,
                            gl.GL_STREAM_DRAW)

    def draw(self, vertices: int = 4):
        """One triangle strip of ``vertices`` per instance."""
        if self.n:
            gl.glBindVertexArray(self.vao)
            gl.glDrawArraysInstanced(gl.GL_TRIANGLE_STRIP, 0, vertices, self.n)


def viewed_sphere(geometry, camera) -> tuple[np.ndarray, float]:
    """Centre and radius (m) of the bodies the camera looks at: the bounding sphere of the
    shaped bodies within ``VIEW_REACH`` camera distances of its target (all of them in a
    framed scene); fog, shadows and the grid's spacing are fitted to it, so far outliers do
    not stretch them. With shaped bodies but none in reach, a sphere about the target."""
    geometry.refresh()
    shaped = geometry.has_shape
    if not np.any(shaped):
        return geometry.bounding_sphere()
    x = np.asarray(geometry.world.positions)[shaped]
    r = geometry.radius[shaped]
    near = np.linalg.norm(x - camera.target, axis=1) - r <= VIEW_REACH * camera.distance
    if not np.any(near):
        return np.array(camera.target, float), max(0.5 * camera.distance, 0.05)
    lo = (x[near] - r[near, None]).min(0)
    hi = (x[near] + r[near, None]).max(0)
    return 0.5 * (lo + hi), max(0.5 * float(np.linalg.norm(hi - lo)), 0.05)


def ground_grid_vertices(n: int = 16) -> np.ndarray:
    """Triangles (k, 2) float32 over [-1, 1]^2 for the fast ground plane: an n x n grid whose
    lines crowd towards the centre (t -> t|t|), so that per-vertex fog is smooth where it
    changes (the square reaches far past the fog's end)."""
    t = np.linspace(-1.0, 1.0, n + 1)
    t = t * np.abs(t)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    corners = []
    for di, dj in ((0, 0), (1, 0), (1, 1), (0, 0), (1, 1), (0, 1)):
        corners.append(np.stack([t[i + di], t[j + dj]], -1))
    return np.stack(corners, 2).reshape(-1, 2).astype(np.float32)


def _clip_segment(a, b, viewproj, margin: float = 1.2):
    """The part (a', b') of the world segment a-b inside the view frustum widened to
    ``margin`` times the screen in x and y, or None (the line quads are widened on screen,
    which needs both ends in front of the camera; and GL need not clip them)."""
    ca = viewproj @ np.r_[a, 1.0]
    cb = viewproj @ np.r_[b, 1.0]
    t0, t1 = 0.0, 1.0
    # each plane: f(t) = dot(k, c(t)) >= 0 with c(t) = ca + t (cb - ca)
    for k in ((0, 0, 1, 1), (0, 0, -1, 1), (1, 0, 0, margin), (-1, 0, 0, margin),
              (0, 1, 0, margin), (0, -1, 0, margin)):
        fa, fb = float(np.dot(k, ca)), float(np.dot(k, cb))
        if fa < 0 and fb < 0:
            return None
        if fa < 0:
            t0 = max(t0, fa / (fa - fb))
        elif fb < 0:
            t1 = min(t1, fa / (fa - fb))
    if t1 <= t0:
        return None
    d = np.asarray(b, float) - np.asarray(a, float)
    return a + t0 * d, a + t1 * d


def axis_line_rows(frame, viewproj, colors) -> np.ndarray:
    """Rows (k, 12) for the fast path's world axes on one plane (x along u, y along v, through
    the point of the plane nearest the origin), across the drawn square and clipped to the
    view. ``frame`` is ``(u, v, centre, extent, origin)`` of the plane, ``colors`` the lit x
    and y axis colours."""
    u, v, c, extent, origin = frame
    c_uv = np.array([(c - origin) @ u, (c - origin) @ v])
    lo, hi = c_uv - extent, c_uv + extent
    rows = []
    for axis, color in enumerate(colors):
        along = u if axis == 0 else v
        if not lo[1 - axis] <= 0.0 <= hi[1 - axis]:
            continue
        seg = _clip_segment(origin + along * lo[axis], origin + along * hi[axis], viewproj)
        if seg is None:
            continue
        row = np.zeros(12)
        row[0:3], row[4:7] = seg
        row[3] = 0.8                                    # opacity, as in GROUND_FS
        row[7] = 0.8                                    # full cover within 0.8 px
        row[8:11] = color
        rows.append(row)
    return np.array(rows, np.float32).reshape(-1, 12)


def contact_shadow_frame(normal, light_dir):
    """Uniforms for the contact shadows on a plane of unit ``normal``: the direction shadows
    are cast along (the light, or the normal where the light grazes the plane), in-plane unit
    axes along and across it, and w1 = a1 - n (a1 . L) / (n . L), whose support gives the
    shadow's half length along a1 (see BLOB_VS)."""
    n = np.asarray(normal, float)
    n = n / np.linalg.norm(n)
    L = np.asarray(light_dir, float)
    Ld = L if float(n @ L) > 0.3 else n
    ndl = float(n @ Ld)
    a1 = Ld - n * ndl
    if np.linalg.norm(a1) < 1e-6:
        a1 = _cross(n, (1.0, 0.0, 0.0) if abs(n[0]) < 0.9 else (0.0, 1.0, 0.0))
    a1 = a1 / np.linalg.norm(a1)
    a2 = _cross(n, a1)
    w1 = a1 - n * (a1 @ Ld) / ndl
    return n, Ld, a1, a2, w1


class DrawOptions:
    """What to draw besides the bodies."""

    def __init__(self, wireframe=False, contacts=False, joints=False, shadows=True,
                 grid=True, highlight=None, drag=None):
        self.wireframe = wireframe
        self.contacts = contacts
        self.joints = joints
        self.shadows = shadows
        self.grid = grid
        self.highlight = highlight or {}
        self.drag = drag              # (grab point, target) world points or None


class Renderer:
    """Draws a :class:`~render.scenedata.WorldGeometry` with a camera into the currently
    bound framebuffer. Create it with a current GL context.

    ``quality``: "fast", "full" or None (``default_quality()``: fast on a software
    rasteriser); may be changed between frames. Set ``profile = True`` to time every pass
    (with a glFinish after each, which costs a little) into ``stats["pass_ms"]`` (wall) and
    ``stats["pass_cpu_ms"]`` (CPU of all threads: robust on a loaded machine).
    """

    def __init__(self, shadow_size: int = 1024, quality: str | None = None):
        self.quality = resolve_quality(quality)
        self.body_meshes = {}
        for level in range(len(meshes.LOD_SEGMENTS)):
            for kind, (v, i) in meshes.shape_meshes(level).items():
                self.body_meshes[kind, level] = InstancedMesh(v, i)
                self.body_meshes[kind, level].kind = kind
        sv, si = meshes.sphere(16, 8)
        cv, ci = meshes.cylinder(12)
        self.overlay_sphere = InstancedMesh(sv, si)
        self.overlay_cylinder = InstancedMesh(cv, ci)
        self.empty_vao = _gen(gl.glGenVertexArrays)
        gl.glBindVertexArray(0)
        self.shadow_size = int(shadow_size)
        self.light_dir = LIGHT_DIR.copy()
        self.profile = False
        self.stats = {}
        self._full = None               # GL objects of each path, made on first use
        self._fast = None
        self._shadow_key = None

    @property
    def quality(self) -> str:
        return self._quality

    @quality.setter
    def quality(self, value):
        self._quality = resolve_quality(value)

    # -- GL objects of each path ---------------------------------------------------------
    def _full_objects(self):
        if self._full is None:
            f = {"mesh": _program(shaders.MESH_VS, shaders.MESH_FS),
                 "depth": _program(shaders.DEPTH_VS, shaders.DEPTH_FS),
                 "ground": _program(shaders.GROUND_VS, shaders.GROUND_FS),
                 "sky": _program(shaders.SKY_VS, shaders.SKY_FS)}
            # coarse copies for the shadow pass (a 1024^2 map cannot show finer facets)
            level = meshes.LOD_SEGMENTS.index(8)
            f["shadow_meshes"] = {kind: InstancedMesh(v, i) for kind, (v, i)
                                  in meshes.shape_meshes(level).items()}
            quad = np.array([[-1, -1], [1, -1], [1, 1], [-1, -1], [1, 1], [-1, 1]], np.float32)
            f["quad_vao"], f["quad_vbo"] = self._static_2d(quad)
            f["quad_n"] = len(quad)
            f["shadow"] = ShadowMap(self.shadow_size)
            self._full = f
        return self._full

    def _fast_objects(self):
        if self._fast is None:
            f = {"mesh": _program(shaders.FAST_MESH_VS, shaders.FAST_MESH_FS),
                 "ground": _program(shaders.FAST_GROUND_VS, shaders.FAST_GROUND_FS),
                 "blob": _program(shaders.BLOB_VS, shaders.BLOB_FS),
                 "sky": _program(shaders.FAST_SKY_VS, shaders.FAST_SKY_FS),
                 "lines": _program(shaders.LINE_VS, shaders.LINE_FS),
                 "lines_buf": InstanceStream()}
            tris = ground_grid_vertices()
            f["ground_vao"], f["ground_vbo"] = self._static_2d(tris)
            f["ground_n"] = len(tris)
            self._fast = f
        return self._fast

    @staticmethod
    def _static_2d(points: np.ndarray):
        vao = _gen(gl.glGenVertexArrays)
        gl.glBindVertexArray(vao)
        vbo = _gen(gl.glGenBuffers)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, vbo)
        pts = np.ascontiguousarray(points, dtype=np.float32)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, pts.nbytes, pts.ctypes.data, gl.GL_STATIC_DRAW)
        gl.glEnableVertexAttribArray(0)
        gl.glVertexAttribPointer(0, 2, gl.GL_FLOAT, gl.GL_FALSE, 8, ctypes.c_void_p(0))
        gl.glBindVertexArray(0)
        return vao, vbo

    # -- helpers -------------------------------------------------------------------------
    def _light_matrix(self, center, radius):
        """Orthographic light view-projection around the bodies' bounding sphere, snapped to
        texels and to radius steps so shadows do not shimmer as bodies move."""
        r = 2.0 ** (math.ceil(math.log2(max(radius, 1e-3)) * 8) / 8)   # 9% radius steps
        L = self.light_dir
        up = (0.0, 0.0, 1.0) if abs(L[2]) < 0.99 else (0.0, 1.0, 0.0)
        view = look_at(np.zeros(3), -L, up)
        c = view[:3, :3] @ np.asarray(center, float)
        texel = 2 * r / self.shadow_size
        c[:2] = np.round(c[:2] / texel) * texel
        proj = orthographic(c[0] - r, c[0] + r, c[1] - r, c[1] + r, -c[2] - 3 * r, -c[2] + 3 * r)
        return proj @ view, texel

    def _lighting_uniforms(self, prog, eye, light_vp, texel, fog, shadows):
        set_uniforms(prog, u_light_dir=tuple(self.light_dir), u_eye=tuple(float(x) for x in eye),
                     u_shadow_map=1, u_shadows=int(shadows),
                     u_shadow_texel=1.0 / self.shadow_size, u_fog_color=SKY_HORIZON,
                     u_fog=fog, u_light_viewproj=_mat(light_vp),
                     u_normal_offset=float(1.5 * texel))

    def _mark(self, name):
        """End of a pass: with ``profile`` on, wait for it and record its wall time and the
        CPU time of the whole process (rasteriser threads included) spent on it."""
        if self.profile:
            gl.glFinish()
            now, cpu = time.perf_counter(), time.process_time()
            self._pass_ms[name] = self._pass_ms.get(name, 0.0) + (now - self._t_pass) * 1e3
            self._pass_cpu[name] = self._pass_cpu.get(name, 0.0) + (cpu - self._c_pass) * 1e3
            self._t_pass, self._c_pass = now, cpu

    @staticmethod
    def _ground_planes(geometry, opt):
        """[(normal, offset)], alpha: the world's planes, else the reference grid."""
        planes = list(geometry.planes)
        if not planes and opt.grid:                 # a reference grid under the scene
            return [(np.array([0.0, 0.0, 1.0]), geometry.reference_z)], 0.85
        return planes, 1.0

    @staticmethod
    def _plane_frame(normal, offset, camera, fog):
        """In-plane axes (u, v), the centre of the drawn square (under the camera target),
        its half size and the plane point nearest the origin."""
        n = np.asarray(normal, float)
        origin = n * offset                                  # point of the plane nearest 0
        helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        u = _cross(n, _cross(helper, n))
        if abs(n[2]) > 0.9:                                  # keep grid lines along x and y
            u = np.array([1.0, 0.0, 0.0]) - n * n[0]
        u /= np.linalg.norm(u)
        v = _cross(n, u)
        focus = camera.target
        c = focus - n * (n @ focus - offset)                 # project onto the plane
        extent = fog[1] * 1.5 + float(np.linalg.norm(camera.eye - c))
        return u, v, c, extent, origin

    def _plane_light(self, n, camera, offset):
        """Linear ambient and sun light on the side of plane ``n`` that the camera sees."""
        n_lit = -n if n @ (camera.eye - n * offset) < 0 else n
        ambient = AMBIENT_BOUNCE + (AMBIENT_SKY - AMBIENT_BOUNCE) * (0.5 + 0.5 * n_lit[2])
        sun = SUN * max(float(n_lit @ self.light_dir), 0.0)
        return ambient, sun

    @staticmethod
    def _grid_spacing(radius):
        spacing = 10.0 ** math.floor(math.log10(max(radius, 1e-3) * 0.4))
        return min(max(spacing, 0.01), 100.0)

    # -- the frame -----------------------------------------------------------------------
    def draw(self, geometry, camera, width: int, height: int, options: DrawOptions | None = None,
             target_fbo: int = 0):
        """Draw one frame into framebuffer ``target_fbo`` (0: the window) of size w x h."""
        opt = options or DrawOptions()
        self._pass_ms, self._pass_cpu = {}, {}
        self._n_blobs = 0
        if self.profile:
            gl.glFinish()
        # (process_time sums every thread's CPU time: slow enough to skip when not profiling)
        self._t_pass = time.perf_counter()
        self._c_pass = time.process_time() if self.profile else 0.0
        aspect = width / max(height, 1)
        view = camera.view_matrix()
        proj = camera.projection_matrix(aspect)
        vp = proj @ view
        eye = camera.eye
        # (a body far beyond float32's range, 3.4e38 m, from a recording of a run that blew
        # up, packs to an infinite position and depth: an outlier out of reach and clipped
        # by the GPU, not drawn, as any far out of view is; numpy's overflow and invalid-value
        # warnings each frame would say nothing more)
        with np.errstate(over="ignore", invalid="ignore"):
            inst = geometry.instances(opt.highlight)
            center, radius = viewed_sphere(geometry, camera)
            meshes_used = self._upload_lod(inst, camera, eye, height)
        n_total = sum(len(v) for v in inst.values())
        d_cam = float(np.linalg.norm(eye - center))
        fog = (d_cam + 4.0 * radius + 4.0 * camera.distance,
               d_cam + 14.0 * radius + 14.0 * camera.distance)

        gl.glDisable(gl.GL_BLEND)
        gl.glDisable(gl.GL_SCISSOR_TEST)
        gl.glEnable(gl.GL_DEPTH_TEST)
        gl.glDepthFunc(gl.GL_LEQUAL)
        gl.glDepthMask(gl.GL_TRUE)
        gl.glPolygonMode(gl.GL_FRONT_AND_BACK, gl.GL_FILL)
        gl.glColorMask(gl.GL_TRUE, gl.GL_TRUE, gl.GL_TRUE, gl.GL_TRUE)
        self._mark("cpu")

        if self.quality == "fast":
            mesh_prog = self._draw_fast(geometry, camera, opt, inst, meshes_used, vp, eye,
                                        center, radius, fog, width, height, target_fbo)
        else:
            mesh_prog = self._draw_full(geometry, camera, opt, inst, meshes_used, vp, eye,
                                        center, radius, fog, width, height, target_fbo,
                                        n_total)

        # overlays: always visible (drawn over a cleared depth buffer)
        over_s, over_c = self._overlays(geometry, opt)
        if len(over_s) or len(over_c):
            gl.glClear(gl.GL_DEPTH_BUFFER_BIT)
            mesh_prog.use()
            if self.quality == "fast":
                set_uniforms(mesh_prog, u_overlay=1)
            gl.glEnable(gl.GL_CULL_FACE)
            for mesh, rows in ((self.overlay_sphere, over_s), (self.overlay_cylinder, over_c)):
                if len(rows):
                    mesh.upload(rows)
                    mesh.draw()
            gl.glDisable(gl.GL_CULL_FACE)
        gl.glBindVertexArray(0)
        gl.glUseProgram(0)
        self._mark("overlays")
        self.stats = {"instances": n_total, "quality": self.quality,
                      "lod": {f"{k}{lvl}": m.n_instances for (k, lvl), m in
                              self.body_meshes.items() if m.n_instances},
                      "triangles": int(sum(m.count // 3 * m.n_instances
                                           for m in meshes_used)),
                      "contact_shadows": self._n_blobs}
        if self.profile:
            self.stats["pass_ms"] = {k: round(v, 3) for k, v in self._pass_ms.items()}
            self.stats["pass_cpu_ms"] = {k: round(v, 3) for k, v in self._pass_cpu.items()}

    def _draw_bodies(self, meshes_used, opt):
        gl.glEnable(gl.GL_CULL_FACE)
        gl.glCullFace(gl.GL_BACK)
        if opt.wireframe:
            gl.glPolygonMode(gl.GL_FRONT_AND_BACK, gl.GL_LINE)
        for m in meshes_used:
            m.draw()
        gl.glPolygonMode(gl.GL_FRONT_AND_BACK, gl.GL_FILL)
        gl.glDisable(gl.GL_CULL_FACE)

    # -- fast path -----------------------------------------------------------------------
    def _draw_fast(self, geometry, camera, opt, inst, meshes_used, vp, eye, center, radius,
                   fog, width, height, target_fbo):
        f = self._fast_objects()
        fog_u = (float(fog[0]), 1.0 / max(fog[1] - fog[0], 1e-6))
        eye_t = tuple(float(x) for x in eye)
        vp_m = _mat(vp)
        planes, alpha = self._ground_planes(geometry, opt)

        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, target_fbo)
        gl.glViewport(0, 0, width, height)
        gl.glClearColor(*SKY_HORIZON, 1.0)
        gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)
        self._mark("clear")

        # bodies (front to back, before the ground: the ground then shades fewer pixels)
        prog = f["mesh"]
        prog.use()
        ground = next(((np.asarray(n, float), float(d)) for n, d in planes if n[2] > 0.5), None)
        ao = 0.0
        if ground is not None and opt.shadows:
            ao = max(geometry.typical_size(), 1e-6)
        else:
            ground = (np.array([0.0, 0.0, 1.0]), 0.0)
        set_uniforms(prog, u_viewproj=vp_m, u_eye=eye_t, u_light_dir=tuple(self.light_dir),
                     u_fog=fog_u, u_fog_color=SKY_HORIZON, u_overlay=0,
                     u_ground=(*ground[0], ground[1]), u_ao_range=float(ao))
        self._draw_bodies(meshes_used, opt)
        self._mark("bodies")

        # ground planes: the procedural grid with pre-lit colours and per-vertex fog
        if planes:
            prog = f["ground"]
            prog.use()
            spacing = self._grid_spacing(radius)
            set_uniforms(prog, u_viewproj=vp_m, u_eye=eye_t, u_fog=fog_u,
                         u_fog_color=SKY_HORIZON, u_alpha=float(alpha),
                         u_inv_spacing=1.0 / spacing)
            if alpha < 1:
                gl.glEnable(gl.GL_BLEND)
                gl.glBlendFunc(gl.GL_SRC_ALPHA, gl.GL_ONE_MINUS_SRC_ALPHA)
            gl.glBindVertexArray(f["ground_vao"])
            axes = []
            for normal, offset in planes:
                n = np.asarray(normal, float)
                frame = self._plane_frame(n, offset, camera, fog)
                u, v, c, extent, origin = frame
                ambient, sun = self._plane_light(n, camera, offset)
                k = np.sqrt(ambient + sun)          # sqrt(lin(c) * light) = c * sqrt(light)
                lit = [tuple(np.clip(col * k, 0.0, 1.0))
                       for col in (GRID_BASE, GRID_MINOR, GRID_MAJOR, AXIS_X, AXIS_Y)]
                set_uniforms(prog, u_center=tuple(c), u_axis_u=tuple(u), u_axis_v=tuple(v),
                             u_origin=tuple(origin), u_extent=float(extent),
                             u_col_base=lit[0], u_col_minor=lit[1], u_col_major=lit[2])
                gl.glDrawArrays(gl.GL_TRIANGLES, 0, f["ground_n"])
                axes.append(axis_line_rows(frame, vp, lit[3:]))
            gl.glDisable(gl.GL_BLEND)
            self._mark("ground")

            # decals on the planes: depth tested against bodies and planes, not written
            gl.glDepthMask(gl.GL_FALSE)
            gl.glEnable(gl.GL_POLYGON_OFFSET_FILL)
            gl.glPolygonOffset(-1.0, -2.0)
            gl.glEnable(gl.GL_BLEND)
            rows = np.concatenate(axes)
            if len(rows):
                prog = f["lines"]
                prog.use()
                set_uniforms(prog, u_viewproj=vp_m, u_eye=eye_t, u_fog=fog_u,
                             u_viewport=(0.5 * width, 0.5 * height))
                gl.glBlendFunc(gl.GL_SRC_ALPHA, gl.GL_ONE_MINUS_SRC_ALPHA)
                f["lines_buf"].upload(rows)
                f["lines_buf"].draw()
            self._mark("axes")
            # contact shadows, multiplied into the planes (see BLOB_VS)
            if opt.shadows and meshes_used:
                prog = f["blob"]
                prog.use()
                set_uniforms(prog, u_viewproj=vp_m, u_eye=eye_t, u_fog=fog_u,
                             u_tint=(0.50, 0.53, 0.60), u_strength=(0.9, 0.6, 5.0))
                gl.glBlendFunc(gl.GL_ZERO, gl.GL_SRC_COLOR)
                for normal, offset in planes:
                    n, Ld, a1, a2, w1 = contact_shadow_frame(normal, self.light_dir)
                    d = float(offset) / float(np.linalg.norm(normal))
                    if float(n @ eye) < d:              # seen from below: no sun there
                        continue
                    set_uniforms(prog, u_plane=(*n, d), u_light_dir=tuple(Ld),
                                 u_axis1=tuple(a1), u_axis2=tuple(a2), u_shadow_dir=tuple(w1))
                    for m in meshes_used:
                        set_uniforms(prog, u_kind=KINDS.index(m.kind))
                        m.draw_quads()
                        self._n_blobs += m.n_instances
                self._mark("contact_shadows")
            gl.glDisable(gl.GL_BLEND)
            gl.glDisable(gl.GL_POLYGON_OFFSET_FILL)
            gl.glDepthMask(gl.GL_TRUE)

        # sky: a vertex-coloured grid on the far plane behind everything, clipped to above
        # the horizon when a ground plane below the eye covers the rest of the screen
        inv_vp = np.linalg.inv(vp)
        clip = np.array([0.0, 0.0, 1.0])
        if any(n[2] > 0.9 and float(np.asarray(n) @ eye) > d for n, d in planes):
            r = inv_vp[2] - eye[2] * inv_vp[3]        # P.z - eye.z P.w at the far plane
            w0 = inv_vp[3] @ (0.0, 0.0, 1.0, 1.0)
            clip = np.array([r[0], r[1], r[2] + r[3]]) * (1.0 if w0 > 0 else -1.0)
            clip /= max(np.abs(clip).max(), 1e-30)
        corners = np.array([[x, y, 1.0] for x in (-1.0, 1.0) for y in (-1.0, 1.0)])
        if np.any(corners @ clip > 0):
            gl.glDepthMask(gl.GL_FALSE)
            gl.glEnable(gl.GL_CLIP_DISTANCE0)
            f["sky"].use()
            set_uniforms(f["sky"], u_inv_viewproj=_mat(inv_vp), u_clip=(*clip, 0.0),
                         u_eye=eye_t, u_horizon=SKY_HORIZON, u_zenith=SKY_ZENITH,
                         u_nadir=SKY_NADIR)
            gl.glBindVertexArray(self.empty_vao)
            gl.glDrawArrays(gl.GL_TRIANGLES, 0, 6 * 8 * 8)
            gl.glDisable(gl.GL_CLIP_DISTANCE0)
            gl.glDepthMask(gl.GL_TRUE)
        self._mark("sky")
        return f["mesh"]

    # -- full path -----------------------------------------------------------------------
    def _draw_full(self, geometry, camera, opt, inst, meshes_used, vp, eye, center, radius,
                   fog, width, height, target_fbo, n_total):
        f = self._full_objects()
        light_vp, texel = self._light_matrix(center, radius)
        shadow = f["shadow"]

        # 1. shadow map (kept while neither the bodies nor the light box change)
        shadows = bool(opt.shadows and n_total)
        if shadows:
            key = (light_vp.tobytes(), tuple((k, v.tobytes()) for k, v in inst.items()))
            if key != self._shadow_key:
                gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, shadow.fbo)
                gl.glViewport(0, 0, shadow.size, shadow.size)
                gl.glClear(gl.GL_DEPTH_BUFFER_BIT)
                gl.glEnable(gl.GL_CULL_FACE)         # closed meshes: back faces suffice
                gl.glCullFace(gl.GL_FRONT)
                gl.glEnable(gl.GL_POLYGON_OFFSET_FILL)
                gl.glPolygonOffset(1.5, 3.0)
                f["depth"].use()
                set_uniforms(f["depth"], u_light_viewproj=_mat(light_vp))
                for kind, rows in inst.items():
                    m = f["shadow_meshes"][kind]
                    m.upload(rows)
                    m.draw()
                gl.glDisable(gl.GL_POLYGON_OFFSET_FILL)
                gl.glCullFace(gl.GL_BACK)
                gl.glDisable(gl.GL_CULL_FACE)
                self._shadow_key = key
        else:
            self._shadow_key = None
        self._mark("shadow_map")

        # 2. clear (the sky is drawn last, only where nothing else covers it)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, target_fbo)
        gl.glViewport(0, 0, width, height)
        gl.glClearColor(*SKY_HORIZON, 1.0)
        gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)
        gl.glActiveTexture(gl.GL_TEXTURE1)
        gl.glBindTexture(gl.GL_TEXTURE_2D, shadow.tex)
        gl.glActiveTexture(gl.GL_TEXTURE0)
        self._mark("clear")

        # 3. bodies
        prog = f["mesh"]
        prog.use()
        set_uniforms(prog, u_viewproj=_mat(vp))
        self._lighting_uniforms(prog, eye, light_vp, texel, fog, shadows)
        self._draw_bodies(meshes_used, opt)
        self._mark("bodies")

        # 4. ground planes (after the bodies: fewer shaded fragments)
        planes, alpha = self._ground_planes(geometry, opt)
        if planes:
            prog = f["ground"]
            prog.use()
            set_uniforms(prog, u_viewproj=_mat(vp))
            self._lighting_uniforms(prog, eye, light_vp, texel, fog, shadows)
            if alpha < 1:
                gl.glEnable(gl.GL_BLEND)
                gl.glBlendFunc(gl.GL_SRC_ALPHA, gl.GL_ONE_MINUS_SRC_ALPHA)
            for normal, offset in planes:
                self._draw_plane(normal, offset, camera, radius, fog, alpha)
            gl.glDisable(gl.GL_BLEND)
        self._mark("ground")

        # 5. sky behind everything (depth test against the far plane)
        gl.glDepthMask(gl.GL_FALSE)
        f["sky"].use()
        set_uniforms(f["sky"], u_inv_viewproj=_mat(np.linalg.inv(vp)),
                     u_horizon=SKY_HORIZON, u_zenith=SKY_ZENITH, u_nadir=SKY_NADIR)
        gl.glBindVertexArray(self.empty_vao)
        gl.glDrawArrays(gl.GL_TRIANGLES, 0, 3)
        gl.glDepthMask(gl.GL_TRUE)
        self._mark("sky")
        return f["mesh"]

    def _upload_lod(self, inst, camera, eye, height):
        """Split each kind's instances by projected size into detail levels and upload them
        (front to back within each); returns the meshes to draw. A level is used while the
        silhouette of its polygon stays within a pixel of the true circle (see
        ``meshes.lod_level``)."""
        used = []
        fwd = camera.basis()[2]
        focal = 0.5 * height / math.tan(math.radians(camera.fov) / 2)
        near = camera.clip_range()[0]
        for (kind, level), m in self.body_meshes.items():
            m.n_instances = 0
        for kind, rows in inst.items():
            depth = (rows[:, 12:15] - eye) @ fwd
            if len(rows) > 1:                       # front to back: early depth test
                order = np.argsort(depth)
                rows, depth = rows[order], depth[order]
            if kind == "box":                       # one mesh serves every size
                m = self.body_meshes[kind, 0]
                m.upload(rows)
                used.append(m)
                continue
            radius = rows[:, 16:18].max(1)          # radius of the round cross-section
            pixels = radius * focal / np.maximum(depth, near)
            level = meshes.lod_level(pixels)
            for lvl in range(len(meshes.LOD_SEGMENTS)):
                sel = level == lvl
                if np.any(sel):
                    m = self.body_meshes[kind, lvl]
                    m.upload(rows[sel] if not np.all(sel) else rows)
                    used.append(m)
        return used

    def _draw_plane(self, normal, offset, camera, radius, fog, alpha):
        n = np.asarray(normal, float)
        ambient, sun = self._plane_light(n, camera, offset)
        prog = self._full["ground"]
        set_uniforms(prog, u_ground_ambient=tuple(ambient), u_ground_sun=tuple(sun))
        u, v, c, extent, origin = self._plane_frame(n, offset, camera, fog)
        set_uniforms(prog, u_center=tuple(c), u_axis_u=tuple(u), u_axis_v=tuple(v),
                     u_extent=float(extent), u_normal=tuple(n), u_origin=tuple(origin),
                     u_spacing=float(self._grid_spacing(radius)), u_alpha=float(alpha))
        gl.glBindVertexArray(self._full["quad_vao"])
        gl.glDrawArrays(gl.GL_TRIANGLES, 0, self._full["quad_n"])

    def _overlays(self, geometry, opt):
        """Instance rows (spheres, cylinders) for contacts, joints and the drag spring."""
        size = geometry.typical_size()
        spheres, cylinders = [], []

        def add_points(points, radius, color):
            p = np.atleast_2d(np.asarray(points, float))
            if len(p):
                k = len(p)
                spheres.append(instance_rows(np.tile(np.eye(3), (k, 1, 1)), p,
                                             np.tile((radius, radius, radius, 0.0), (k, 1)),
                                             np.tile((*color, 0.0), (k, 1))))

        def add_segments(a, b, radius, color):
            a, b = np.atleast_2d(np.asarray(a, float)), np.atleast_2d(np.asarray(b, float))
            if len(a) == 0:
                return
            d = b - a
            length = np.linalg.norm(d, axis=1)
            ok = length > 1e-9
            if not np.any(ok):
                return
            a, d, length = a[ok], d[ok], length[ok]
            k = len(a)
            cylinders.append(instance_rows(frame_to_z(d), a + 0.5 * d,
                                           np.c_[np.full(k, radius), np.full(k, radius),
                                                 0.5 * length, np.zeros(k)],
                                           np.tile((*color, 0.0), (k, 1))))

        world = geometry.world
        if opt.contacts:
            contacts = getattr(world, "contacts", None)
            pts = getattr(contacts, "point", None) if contacts is not None else None
            if pts is not None and len(pts):
                pts = np.asarray(pts, float).reshape(-1, 3)
                add_points(pts, 0.14 * size, (0.95, 0.12, 0.08))
                normal = getattr(contacts, "normal", None)
                force = getattr(contacts, "normal_force", None)
                if normal is not None:
                    normal = np.asarray(normal, float).reshape(-1, 3)
                    if force is not None and len(force):
                        f = np.asarray(force, float).reshape(-1)
                        dyn = geometry.dynamic & geometry.has_shape
                        masses = np.asarray(world.masses)[dyn]
                        g = float(np.linalg.norm(getattr(world, "gravity", (0, 0, 9.81)))) or 9.81
                        ref = (float(np.median(masses)) if len(masses) else 1.0) * g
                        length = np.clip(f / ref, 0.0, 4.0) * 1.5 * size
                    else:
                        length = np.full(len(pts), 1.5 * size)
                    tips = pts + normal * length[:, None]
                    add_segments(pts, tips, 0.045 * size, (1.0, 0.55, 0.1))
                    add_points(tips[length > 0], 0.09 * size, (1.0, 0.55, 0.1))
        if opt.joints and world.joints:
            anchors, points, axes = geometry.joint_marks()
            add_points(anchors, 0.2 * size, (1.0, 0.85, 0.1))
            if len(axes):
                add_segments(points - axes * 1.3 * size, points + axes * 1.3 * size,
                             0.04 * size, (0.1, 0.8, 0.95))
        if opt.drag is not None:
            a, b = opt.drag
            add_segments([a], [b], 0.03 * size, (1.0, 1.0, 1.0))
            add_points([a], 0.1 * size, (1.0, 1.0, 1.0))
            add_points([b], 0.07 * size, (0.2, 0.2, 0.2))
        s = np.concatenate(spheres) if spheres else np.zeros((0, INSTANCE_FLOATS), np.float32)
        c = np.concatenate(cylinders) if cylinders else np.zeros((0, INSTANCE_FLOATS), np.float32)
        return s, c
