"""The OpenGL part: instanced shaded bodies, a shadow map, the ground grid, debug overlays.

One instanced draw per shape kind (sphere, box, capsule, cylinder) for the bodies, the same
again into the shadow map, one quad per ground plane and one sky triangle, so thousands of
bodies cost a handful of draw calls. Per-instance data is a rigid model matrix as four vec4
attributes, a scale vec4 and a colour vec4 (pyglet 2.1 has no mat4 vertex attribute, so the
buffers are set up with raw GL: ``glVertexAttribDivisor`` and ``glDrawElementsInstanced``).

Needs a current OpenGL 3.3 core context (see ``backend``); import only after
``backend.load_pyglet()``.
"""
from __future__ import annotations

import ctypes
import math

import numpy as np

from . import meshes, shaders
from .backend import load_pyglet
from .camera import look_at, orthographic
from .scenedata import INSTANCE_FLOATS, frame_to_z, instance_rows

pyglet = load_pyglet()
gl = pyglet.gl

SKY_ZENITH = (0.47, 0.60, 0.78)
SKY_HORIZON = (0.86, 0.89, 0.93)
SKY_NADIR = (0.55, 0.56, 0.58)
LIGHT_DIR = np.array([0.6, -0.3, 0.7]) / np.linalg.norm([0.6, -0.3, 0.7])


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

    def delete(self):
        for b in (self.vbo, self.ibo, self.inst):
            gl.glDeleteBuffers(1, ctypes.byref(gl.GLuint(b)))
        gl.glDeleteVertexArrays(1, ctypes.byref(gl.GLuint(self.vao)))


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
    bound framebuffer. Create it with a current GL context."""

    def __init__(self, shadow_size: int = 1024):
        self.mesh_prog = _program(shaders.MESH_VS, shaders.MESH_FS)
        self.depth_prog = _program(shaders.DEPTH_VS, shaders.DEPTH_FS)
        self.ground_prog = _program(shaders.GROUND_VS, shaders.GROUND_FS)
        self.sky_prog = _program(shaders.SKY_VS, shaders.SKY_FS)
        self.body_meshes = {}
        for level in range(len(meshes.LOD_SEGMENTS)):
            for kind, (v, i) in meshes.shape_meshes(level).items():
                self.body_meshes[kind, level] = InstancedMesh(v, i)
        # coarse copies for the shadow pass (a 1024^2 map cannot show finer facets)
        self.shadow_meshes = {kind: InstancedMesh(v, i)
                              for kind, (v, i) in meshes.shape_meshes(2).items()}
        sv, si = meshes.sphere(16, 8)
        cv, ci = meshes.cylinder(12)
        self.overlay_sphere = InstancedMesh(sv, si)
        self.overlay_cylinder = InstancedMesh(cv, ci)
        quad = np.array([[-1, -1], [1, -1], [1, 1], [-1, -1], [1, 1], [-1, 1]], np.float32)
        self.quad_vao = _gen(gl.glGenVertexArrays)
        gl.glBindVertexArray(self.quad_vao)
        self.quad_vbo = _gen(gl.glGenBuffers)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.quad_vbo)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, quad.nbytes, quad.ctypes.data, gl.GL_STATIC_DRAW)
        gl.glEnableVertexAttribArray(0)
        gl.glVertexAttribPointer(0, 2, gl.GL_FLOAT, gl.GL_FALSE, 8, ctypes.c_void_p(0))
        self.empty_vao = _gen(gl.glGenVertexArrays)
        gl.glBindVertexArray(0)
        self.shadow = ShadowMap(shadow_size)
        self.light_dir = LIGHT_DIR.copy()
        self.stats = {}

    # -- helpers -------------------------------------------------------------------------
    def _light_matrix(self, center, radius):
        """Orthographic light view-projection around the bodies' bounding sphere, snapped to
        texels and to radius steps so shadows do not shimmer as bodies move."""
        r = 2.0 ** (math.ceil(math.log2(max(radius, 1e-3)) * 8) / 8)   # 9% radius steps
        L = self.light_dir
        up = (0.0, 0.0, 1.0) if abs(L[2]) < 0.99 else (0.0, 1.0, 0.0)
        view = look_at(np.zeros(3), -L, up)
        c = view[:3, :3] @ np.asarray(center, float)
        texel = 2 * r / self.shadow.size
        c[:2] = np.round(c[:2] / texel) * texel
        proj = orthographic(c[0] - r, c[0] + r, c[1] - r, c[1] + r, -c[2] - 3 * r, -c[2] + 3 * r)
        return proj @ view, texel

    def _lighting_uniforms(self, prog, eye, light_vp, texel, fog, shadows):
        set_uniforms(prog, u_light_dir=tuple(self.light_dir), u_eye=tuple(float(x) for x in eye),
                     u_shadow_map=1, u_shadows=int(shadows),
                     u_shadow_texel=1.0 / self.shadow.size, u_fog_color=SKY_HORIZON,
                     u_fog=fog, u_light_viewproj=_mat(light_vp),
                     u_normal_offset=float(1.5 * texel))

    # -- the frame -----------------------------------------------------------------------
    def draw(self, geometry, camera, width: int, height: int, options: DrawOptions | None = None,
             target_fbo: int = 0):
        """Draw one frame into framebuffer ``target_fbo`` (0: the window) of size w x h."""
        opt = options or DrawOptions()
        aspect = width / max(height, 1)
        view = camera.view_matrix()
        proj = camera.projection_matrix(aspect)
        vp = proj @ view
        eye = camera.eye
        inst = geometry.instances(opt.highlight)
        center, radius = geometry.bounding_sphere()
        light_vp, texel = self._light_matrix(center, radius)
        n_total = sum(len(v) for v in inst.values())
        meshes_used = self._upload_lod(inst, camera, eye, height)

        gl.glDisable(gl.GL_BLEND)
        gl.glDisable(gl.GL_SCISSOR_TEST)
        gl.glEnable(gl.GL_DEPTH_TEST)
        gl.glDepthFunc(gl.GL_LEQUAL)
        gl.glDepthMask(gl.GL_TRUE)
        gl.glPolygonMode(gl.GL_FRONT_AND_BACK, gl.GL_FILL)
        gl.glColorMask(gl.GL_TRUE, gl.GL_TRUE, gl.GL_TRUE, gl.GL_TRUE)

        # 1. shadow map
        shadows = bool(opt.shadows and n_total)
        if shadows:
            gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, self.shadow.fbo)
            gl.glViewport(0, 0, self.shadow.size, self.shadow.size)
            gl.glClear(gl.GL_DEPTH_BUFFER_BIT)
            gl.glEnable(gl.GL_CULL_FACE)         # closed meshes: back faces suffice
            gl.glCullFace(gl.GL_FRONT)
            gl.glEnable(gl.GL_POLYGON_OFFSET_FILL)
            gl.glPolygonOffset(1.5, 3.0)
            self.depth_prog.use()
            set_uniforms(self.depth_prog, u_light_viewproj=_mat(light_vp))
            for kind, rows in inst.items():
                m = self.shadow_meshes[kind]
                m.upload(rows)
                m.draw()
            gl.glDisable(gl.GL_POLYGON_OFFSET_FILL)
            gl.glCullFace(gl.GL_BACK)
            gl.glDisable(gl.GL_CULL_FACE)

        # 2. clear (the sky is drawn last, only where nothing else covers it)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, target_fbo)
        gl.glViewport(0, 0, width, height)
        gl.glClearColor(*SKY_HORIZON, 1.0)
        gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)

        gl.glActiveTexture(gl.GL_TEXTURE1)
        gl.glBindTexture(gl.GL_TEXTURE_2D, self.shadow.tex)
        gl.glActiveTexture(gl.GL_TEXTURE0)
        d_cam = float(np.linalg.norm(eye - center))
        fog = (d_cam + 4.0 * radius + 4.0 * camera.distance,
               d_cam + 14.0 * radius + 14.0 * camera.distance)

        # 3. bodies
        self.mesh_prog.use()
        set_uniforms(self.mesh_prog, u_viewproj=_mat(vp))
        self._lighting_uniforms(self.mesh_prog, eye, light_vp, texel, fog, shadows)
        gl.glEnable(gl.GL_CULL_FACE)
        gl.glCullFace(gl.GL_BACK)
        if opt.wireframe:
            gl.glPolygonMode(gl.GL_FRONT_AND_BACK, gl.GL_LINE)
        for m in meshes_used:
            m.draw()
        gl.glPolygonMode(gl.GL_FRONT_AND_BACK, gl.GL_FILL)
        gl.glDisable(gl.GL_CULL_FACE)

        # 4. ground planes (after the bodies: fewer shaded fragments)
        planes = list(geometry.planes)
        if not planes and opt.grid:                 # a reference grid under the scene
            planes = [(np.array([0.0, 0.0, 1.0]), geometry.reference_z)]
            alpha = 0.85
        else:
            alpha = 1.0
        if planes:
            self.ground_prog.use()
            set_uniforms(self.ground_prog, u_viewproj=_mat(vp))
            self._lighting_uniforms(self.ground_prog, eye, light_vp, texel, fog, shadows)
            if alpha < 1:
                gl.glEnable(gl.GL_BLEND)
                gl.glBlendFunc(gl.GL_SRC_ALPHA, gl.GL_ONE_MINUS_SRC_ALPHA)
            for normal, offset in planes:
                self._draw_plane(normal, offset, camera, center, radius, fog, alpha)
            gl.glDisable(gl.GL_BLEND)

        # 5. sky behind everything (depth test against the far plane)
        gl.glDepthMask(gl.GL_FALSE)
        self.sky_prog.use()
        set_uniforms(self.sky_prog, u_inv_viewproj=_mat(np.linalg.inv(vp)),
                     u_horizon=SKY_HORIZON, u_zenith=SKY_ZENITH, u_nadir=SKY_NADIR)
        gl.glBindVertexArray(self.empty_vao)
        gl.glDrawArrays(gl.GL_TRIANGLES, 0, 3)
        gl.glDepthMask(gl.GL_TRUE)

        # 6. overlays: always visible (drawn over a cleared depth buffer)
        over_s, over_c = self._overlays(geometry, opt)
        if len(over_s) or len(over_c):
            gl.glClear(gl.GL_DEPTH_BUFFER_BIT)
            self.mesh_prog.use()
            gl.glEnable(gl.GL_CULL_FACE)
            for mesh, rows in ((self.overlay_sphere, over_s), (self.overlay_cylinder, over_c)):
                if len(rows):
                    mesh.upload(rows)
                    mesh.draw()
            gl.glDisable(gl.GL_CULL_FACE)
        gl.glBindVertexArray(0)
        gl.glUseProgram(0)
        self.stats = {"instances": n_total,
                      "lod": {f"{k}{lvl}": m.n_instances for (k, lvl), m in
                              self.body_meshes.items() if m.n_instances}}

    def _upload_lod(self, inst, camera, eye, height):
        """Split each kind's instances by projected size into detail levels (spheres that
        cover a few pixels get 8 segments, big ones 32) and upload them; returns the meshes
        to draw."""
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
            radius = rows[:, 16:19].max(1) + rows[:, 19]
            pixels = radius * focal / np.maximum(depth, near)
            level = np.where(pixels > 40, 0, np.where(pixels > 10, 1, 2))
            for lvl in range(3):
                sel = level == lvl
                if np.any(sel):
                    m = self.body_meshes[kind, lvl]
                    m.upload(rows[sel] if not np.all(sel) else rows)
                    used.append(m)
        return used

    def _draw_plane(self, normal, offset, camera, center, radius, fog, alpha):
        n = np.asarray(normal, float)
        if n @ (camera.eye - n * offset) < 0:      # seen from below: light that side
            n_lit = -n
        else:
            n_lit = n
        sky = np.array([0.50, 0.58, 0.72]) * 0.55
        bounce = np.array([0.28, 0.25, 0.22]) * 0.55
        ambient = bounce + (sky - bounce) * (0.5 + 0.5 * n_lit[2])
        sun = np.array([1.0, 0.96, 0.88]) * 1.05 * max(float(n_lit @ self.light_dir), 0.0)
        set_uniforms(self.ground_prog, u_ground_ambient=tuple(ambient), u_ground_sun=tuple(sun))
        origin = n * offset                                  # point of the plane nearest 0
        helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        u = np.cross(n, np.cross(helper, n))
        if abs(n[2]) > 0.9:                                  # keep grid lines along x and y
            u = np.array([1.0, 0.0, 0.0]) - n * n[0]
        u /= np.linalg.norm(u)
        v = np.cross(n, u)
        focus = camera.target
        c = focus - n * (n @ focus - offset)                 # project onto the plane
        extent = fog[1] * 1.5 + float(np.linalg.norm(camera.eye - c))
        spacing = 10.0 ** math.floor(math.log10(max(radius, 1e-3) * 0.4))
        spacing = min(max(spacing, 0.01), 100.0)
        set_uniforms(self.ground_prog, u_center=tuple(c), u_axis_u=tuple(u), u_axis_v=tuple(v),
                     u_extent=float(extent), u_normal=tuple(n), u_origin=tuple(origin),
                     u_spacing=float(spacing), u_alpha=float(alpha))
        gl.glBindVertexArray(self.quad_vao)
        gl.glDrawArrays(gl.GL_TRIANGLES, 0, 6)

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
                        masses = np.array([b.mass for b, d in zip(world.bodies, dyn) if d])
                        g = float(np.linalg.norm(getattr(world, "gravity", (0, 0, 9.81)))) or 9.81
                        ref = (float(np.median(masses)) if len(masses) else 1.0) * g
                        length = np.clip(f / ref, 0.0, 4.0) * 1.5 * size
                    else:
                        length = np.full(len(pts), 1.5 * size)
                    tips = pts + normal * length[:, None]
                    add_segments(pts, tips, 0.045 * size, (1.0, 0.55, 0.1))
                    add_points(tips[length > 0], 0.09 * size, (1.0, 0.55, 0.1))
        if opt.joints and world.joints:
            anchors, axis_a, axis_b = [], [], []
            for j in world.joints:
                try:
                    p = np.asarray(j.anchor, float)
                except Exception:
                    continue
                anchors.append(p)
                ax = getattr(j, "axis", None)
                if ax is not None:
                    ax = np.asarray(ax, float)
                    axis_a.append(p - ax * 1.3 * size)
                    axis_b.append(p + ax * 1.3 * size)
            add_points(anchors, 0.2 * size, (1.0, 0.85, 0.1))
            if axis_a:
                add_segments(axis_a, axis_b, 0.04 * size, (0.1, 0.8, 0.95))
        if opt.drag is not None:
            a, b = opt.drag
            add_segments([a], [b], 0.03 * size, (1.0, 1.0, 1.0))
            add_points([a], 0.1 * size, (1.0, 1.0, 1.0))
            add_points([b], 0.07 * size, (0.2, 0.2, 0.2))
        s = np.concatenate(spheres) if spheres else np.zeros((0, INSTANCE_FLOATS), np.float32)
        c = np.concatenate(cylinders) if cylinders else np.zeros((0, INSTANCE_FLOATS), np.float32)
        return s, c
