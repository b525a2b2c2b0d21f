"""GLSL 330 core sources."""

MESH_VS = """
#version 330 core
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in float a_sgn;
layout(location = 3) in vec4 i_m0;
layout(location = 4) in vec4 i_m1;
layout(location = 5) in vec4 i_m2;
layout(location = 6) in vec4 i_m3;
layout(location = 7) in vec4 i_scale;
layout(location = 8) in vec4 i_color;

uniform mat4 u_viewproj;
uniform mat4 u_light_viewproj;
uniform float u_normal_offset;

out vec3 v_world;
out vec3 v_normal;
out vec4 v_color;
out vec4 v_light;

void main() {
    mat4 M = mat4(i_m0, i_m1, i_m2, i_m3);
    vec3 local = a_pos * i_scale.xyz + vec3(0.0, 0.0, a_sgn * i_scale.w);
    vec4 world = M * vec4(local, 1.0);
    vec3 n = normalize(mat3(M) * normalize(a_normal / max(i_scale.xyz, vec3(1e-9))));
    v_world = world.xyz;
    v_normal = n;
    v_color = i_color;
    v_light = u_light_viewproj * vec4(world.xyz + n * u_normal_offset, 1.0);
    gl_Position = u_viewproj * world;
}
"""

# Shared lighting: a key light with a shadow map, a hemisphere ambient (sky above, warm
# bounce below) and distance fog into the horizon colour; linear-light maths, sRGB out.
LIGHTING = """
uniform vec3 u_light_dir;        // unit, towards the light
uniform vec3 u_eye;
uniform sampler2DShadow u_shadow_map;
uniform int u_shadows;
uniform float u_shadow_texel;    // 1 / shadow map size
uniform vec3 u_fog_color;        // sRGB
uniform vec2 u_fog;              // start, end distance

const vec3 SKY = vec3(0.50, 0.58, 0.72) * 0.55;
const vec3 BOUNCE = vec3(0.28, 0.25, 0.22) * 0.55;
const vec3 SUN = vec3(1.0, 0.96, 0.88) * 1.05;

// one bilinear-filtered comparison (hardware 2x2 PCF): soft enough at 1024^2 over the
// bodies' bounding sphere, and each extra tap costs llvmpipe several ms per frame
float shadow_factor(vec4 lp) {
    if (u_shadows == 0) return 1.0;
    vec3 p = lp.xyz / lp.w * 0.5 + 0.5;
    if (p.z >= 1.0 || p.x <= 0.0 || p.y <= 0.0 || p.x >= 1.0 || p.y >= 1.0) return 1.0;
    return texture(u_shadow_map, p);
}

// gamma 2 instead of 2.2: squares and square roots are far cheaper than pow() in llvmpipe
vec3 to_linear(vec3 c) { return c * c; }

vec4 finish(vec3 c_linear, vec3 world) {
    vec3 c = sqrt(clamp(c_linear, 0.0, 1.0));
    float d = length(u_eye - world);
    float f = clamp((d - u_fog.x) / max(u_fog.y - u_fog.x, 1e-6), 0.0, 1.0);
    return vec4(mix(c, u_fog_color, f * f), 1.0);
}
"""

MESH_FS = """
#version 330 core
in vec3 v_world;
in vec3 v_normal;
in vec4 v_color;
in vec4 v_light;
out vec4 frag;
""" + LIGHTING + """
void main() {
    vec3 N = normalize(v_normal);
    if (!gl_FrontFacing) N = -N;
    vec3 c;
    if (v_color.a < 0.5) {          // overlays: flat colour, lightly shaded, no shadows
        vec3 V = normalize(u_eye - v_world);
        c = to_linear(v_color.rgb) * (0.55 + 0.45 * abs(dot(N, V)));
        frag = vec4(pow(c, vec3(1.0 / 2.2)), 1.0);
        return;
    }
    vec3 base = to_linear(v_color.rgb);
    vec3 L = u_light_dir;
    vec3 V = normalize(u_eye - v_world);
    vec3 H = normalize(L + V);
    float ndl = dot(N, L);
    float sh = ndl > 0.0 ? shadow_factor(v_light) : 0.0;
    vec3 ambient = mix(BOUNCE, SKY, 0.5 + 0.5 * N.z);
    float nh = max(dot(N, H), 0.0);
    float nh2 = nh * nh, nh4 = nh2 * nh2, nh8 = nh4 * nh4, nh16 = nh8 * nh8;
    float spec = nh16 * nh16 * 0.3;                        // (N.H)^32
    c = base * (ambient + SUN * max(ndl, 0.0) * sh) + SUN * spec * sh;
    frag = finish(c, v_world);
}
"""

DEPTH_VS = """
#version 330 core
layout(location = 0) in vec3 a_pos;
layout(location = 2) in float a_sgn;
layout(location = 3) in vec4 i_m0;
layout(location = 4) in vec4 i_m1;
layout(location = 5) in vec4 i_m2;
layout(location = 6) in vec4 i_m3;
layout(location = 7) in vec4 i_scale;
uniform mat4 u_light_viewproj;
void main() {
    mat4 M = mat4(i_m0, i_m1, i_m2, i_m3);
    vec3 local = a_pos * i_scale.xyz + vec3(0.0, 0.0, a_sgn * i_scale.w);
    gl_Position = u_light_viewproj * (M * vec4(local, 1.0));
}
"""

DEPTH_FS = """
#version 330 core
void main() { }
"""

GROUND_VS = """
#version 330 core
layout(location = 0) in vec2 a_uv;
uniform vec3 u_center;           // quad centre (on the plane)
uniform vec3 u_axis_u;           // unit in-plane axes
uniform vec3 u_axis_v;
uniform float u_extent;          // half size of the quad
uniform mat4 u_viewproj;
uniform mat4 u_light_viewproj;
out vec3 v_world;
out vec4 v_light;
void main() {
    vec3 w = u_center + (a_uv.x * u_axis_u + a_uv.y * u_axis_v) * u_extent;
    v_world = w;
    v_light = u_light_viewproj * vec4(w, 1.0);
    gl_Position = u_viewproj * vec4(w, 1.0);
}
"""

GROUND_FS = """
#version 330 core
in vec3 v_world;
in vec4 v_light;
out vec4 frag;
uniform vec3 u_normal;
uniform vec3 u_origin;           // point of the plane nearest the world origin
uniform vec3 u_axis_u;
uniform vec3 u_axis_v;
uniform float u_spacing;         // minor grid spacing, m
uniform float u_alpha;
""" + LIGHTING + """
uniform vec3 u_ground_ambient;   // linear light on the plane: ambient, and sun * (N.L)
uniform vec3 u_ground_sun;
float grid(vec2 coord, vec2 w) {
    vec2 g = abs(fract(coord - 0.5) - 0.5) / max(w, vec2(1e-6));
    float line = 1.0 - min(min(g.x, g.y), 1.0);
    // fade lines out where they get denser than a few pixels
    return line * clamp(1.0 - 2.5 * max(w.x, w.y), 0.0, 1.0);
}
void main() {
    vec3 rel = v_world - u_origin;
    vec2 p = vec2(dot(rel, u_axis_u), dot(rel, u_axis_v));
    vec2 w = fwidth(p);
    float minor = grid(p / u_spacing, w / u_spacing);
    float major = grid(p / (u_spacing * 10.0), w / (u_spacing * 10.0));
    vec3 base = vec3(0.80, 0.80, 0.78);
    base = mix(base, vec3(0.62, 0.63, 0.64), minor * 0.55);
    base = mix(base, vec3(0.46, 0.47, 0.50), major * 0.85);
    // world axes through the origin: x reddish, y greenish
    float ax = 1.0 - clamp(abs(p.y) / max(w.y, 1e-6) - 0.5, 0.0, 1.0);
    float ay = 1.0 - clamp(abs(p.x) / max(w.x, 1e-6) - 0.5, 0.0, 1.0);
    base = mix(base, vec3(0.78, 0.33, 0.30), ax * 0.8);
    base = mix(base, vec3(0.35, 0.66, 0.35), ay * 0.8);
    float sh = shadow_factor(v_light);
    vec3 c = to_linear(base) * (u_ground_ambient + u_ground_sun * sh);
    vec4 o = finish(c, v_world);
    frag = vec4(o.rgb, u_alpha);
}
"""

SKY_VS = """
#version 330 core
out vec2 v_ndc;
void main() {
    vec2 p = vec2((gl_VertexID == 1) ? 3.0 : -1.0, (gl_VertexID == 2) ? 3.0 : -1.0);
    v_ndc = p;
    gl_Position = vec4(p, 1.0, 1.0);      // on the far plane: passes GL_LEQUAL where empty
}
"""

# The sky's colour for a unit view direction d (z up): horizon to zenith above, horizon to
# nadir below; one function for both qualities' skies.
SKY_COLOR = """
uniform vec3 u_horizon;
uniform vec3 u_zenith;
uniform vec3 u_nadir;
vec3 sky_color(vec3 d) {
    return d.z >= 0.0 ? mix(u_horizon, u_zenith, pow(d.z, 0.6))
                      : mix(u_horizon, u_nadir, pow(-d.z, 0.5));
}
"""

SKY_FS = """
#version 330 core
in vec2 v_ndc;
out vec4 frag;
uniform mat4 u_inv_viewproj;
""" + SKY_COLOR + """
void main() {
    vec4 a = u_inv_viewproj * vec4(v_ndc, -1.0, 1.0);
    vec4 b = u_inv_viewproj * vec4(v_ndc, 1.0, 1.0);
    frag = vec4(sky_color(normalize(b.xyz / b.w - a.xyz / a.w)), 1.0);
}
"""


# --------------------------------------------------------------------------------------
# The "fast" path (the default on software rasterisers such as llvmpipe): everything that
# was per pixel and did not need to be moves to the vertex stage or to the CPU. No shadow
# map: contact shadows are soft elliptic blobs on the ground (see BLOB_*), bodies darken
# near the ground (a cheap ambient-occlusion term), fog is per vertex, the ground grid is
# procedural with pre-lit colours (a mipmapped grid texture costs llvmpipe more: ~10 ms per
# 1280x720 frame for the texture fetches alone), the world axes are thin quads, and the sky
# is a vertex-coloured grid clipped to above the horizon.
# --------------------------------------------------------------------------------------

FAST_MESH_VS = """
#version 330 core
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in float a_sgn;
layout(location = 3) in vec4 i_m0;
layout(location = 4) in vec4 i_m1;
layout(location = 5) in vec4 i_m2;
layout(location = 6) in vec4 i_m3;
layout(location = 7) in vec4 i_scale;
layout(location = 8) in vec4 i_color;

uniform mat4 u_viewproj;
uniform vec3 u_eye;
uniform vec3 u_light_dir;
uniform vec2 u_fog;              // start, 1 / (end - start)
uniform vec4 u_ground;           // plane normal, offset (ambient occlusion near it)
uniform float u_ao_range;        // 0: off, else the height over which occlusion fades

out vec3 v_normal;
out vec3 v_half;
out vec3 v_base;                 // linear colour
out float v_fog;
out float v_ao;

void main() {
    mat4 M = mat4(i_m0, i_m1, i_m2, i_m3);
    vec3 local = a_pos * i_scale.xyz + vec3(0.0, 0.0, a_sgn * i_scale.w);
    vec4 world = M * vec4(local, 1.0);
    v_normal = mat3(M) * (a_normal / max(i_scale.xyz, vec3(1e-9)));
    vec3 to_eye = u_eye - world.xyz;
    float d = length(to_eye);
    v_half = u_light_dir + to_eye / max(d, 1e-9);
    v_base = i_color.rgb * i_color.rgb;
    float f = clamp((d - u_fog.x) * u_fog.y, 0.0, 1.0);
    v_fog = f * f;
    float h = dot(world.xyz, u_ground.xyz) - u_ground.w;
    v_ao = u_ao_range > 0.0 ? 0.45 + 0.55 * clamp(h / u_ao_range, 0.0, 1.0) : 1.0;
    gl_Position = u_viewproj * world;
}
"""

FAST_MESH_FS = """
#version 330 core
in vec3 v_normal;
in vec3 v_half;
in vec3 v_base;
in float v_fog;
in float v_ao;
out vec4 frag;
uniform vec3 u_light_dir;
uniform vec3 u_fog_color;
uniform int u_overlay;
const vec3 SKY = vec3(0.50, 0.58, 0.72) * 0.55;
const vec3 BOUNCE = vec3(0.28, 0.25, 0.22) * 0.55;
const vec3 SUN = vec3(1.0, 0.96, 0.88) * 1.05;
void main() {
    vec3 N = normalize(v_normal);
    if (u_overlay != 0) {           // contacts, joints: flat colour, lightly shaded
        float nv = abs(dot(N, normalize(v_half - u_light_dir)));
        frag = vec4(pow(v_base * (0.55 + 0.45 * nv), vec3(1.0 / 2.2)), 1.0);
        return;
    }
    float ndl = max(dot(N, u_light_dir), 0.0);
    float nh = max(dot(N, normalize(v_half)), 0.0);
    float nh2 = nh * nh, nh4 = nh2 * nh2, nh8 = nh4 * nh4, nh16 = nh8 * nh8;
    vec3 ambient = mix(BOUNCE, SKY, 0.5 + 0.5 * N.z) * v_ao;
    vec3 c = v_base * (ambient + SUN * ndl) + SUN * (nh16 * nh16 * 0.3 * step(0.0, ndl - 1e-4));
    frag = vec4(mix(sqrt(min(c, vec3(1.0))), u_fog_color, v_fog), 1.0);
}
"""

FAST_GROUND_VS = """
#version 330 core
layout(location = 0) in vec2 a_uv;
uniform vec3 u_center;
uniform vec3 u_axis_u;
uniform vec3 u_axis_v;
uniform vec3 u_origin;
uniform float u_extent;
uniform float u_inv_spacing;     // 1 / minor grid spacing
uniform mat4 u_viewproj;
uniform vec3 u_eye;
uniform vec2 u_fog;              // start, 1 / (end - start)
out vec2 v_cell;                 // plane coordinates in minor cells
out float v_fog;
void main() {
    vec3 w = u_center + (a_uv.x * u_axis_u + a_uv.y * u_axis_v) * u_extent;
    vec3 rel = w - u_origin;
    v_cell = vec2(dot(rel, u_axis_u), dot(rel, u_axis_v)) * u_inv_spacing;
    float f = clamp((length(u_eye - w) - u_fog.x) * u_fog.y, 0.0, 1.0);
    v_fog = f * f;
    gl_Position = u_viewproj * vec4(w, 1.0);
}
"""

# The full path's grid without its shadow lookup and lighting: the colours come lit from the
# CPU (the plane's light is uniform without a shadow map; sqrt(c^2 k) = c sqrt(k), so mixing
# lit colours is the same as lighting the mix) and fog is interpolated from the vertices.
# The world axes are drawn as lines (LINE_*): in here they would cost every pixel.
FAST_GROUND_FS = """
#version 330 core
in vec2 v_cell;
in float v_fog;
out vec4 frag;
uniform vec3 u_col_base;
uniform vec3 u_col_minor;
uniform vec3 u_col_major;
uniform vec3 u_fog_color;
uniform float u_alpha;
void main() {
    vec2 w = fwidth(v_cell);                        // minor cells per pixel
    vec2 iw = 1.0 / max(w, vec2(1e-6));
    float wm = max(w.x, w.y);
    vec2 g1 = abs(fract(v_cell - 0.5) - 0.5) * iw;
    vec2 g2 = abs(fract(v_cell * 0.1 - 0.5) - 0.5) * iw * 10.0;
    float minor = (1.0 - min(min(g1.x, g1.y), 1.0)) * clamp(1.0 - 2.5 * wm, 0.0, 1.0);
    float major = (1.0 - min(min(g2.x, g2.y), 1.0)) * clamp(1.0 - 0.25 * wm, 0.0, 1.0);
    vec3 c = mix(mix(u_col_base, u_col_minor, minor * 0.55), u_col_major, major * 0.85);
    frag = vec4(mix(c, u_fog_color, v_fog), u_alpha);
}
"""

# Lines on a plane (the world axes): one instanced quad per segment, a few pixels wide in
# screen space, blended over the plane; only the line pixels are shaded, fully covered near
# the line and fading out over a pixel. The distance across the line must interpolate
# linearly on screen: it goes out multiplied by w and is divided back per pixel (llvmpipe
# got `noperspective` wrong for some of these quads).
LINE_VS = """
#version 330 core
layout(location = 0) in vec4 i_a;        // end A, opacity
layout(location = 1) in vec4 i_b;        // end B, half width (px) of the full cover
layout(location = 2) in vec4 i_color;    // lit colour
uniform mat4 u_viewproj;
uniform vec2 u_viewport;                 // half the viewport size, pixels
out vec3 v_world;
out vec2 v_side;                         // (pixels from the centre line) * w, w
out vec4 v_color;                        // rgb, opacity
out float v_core;
void main() {
    float t = (gl_VertexID & 1) == 0 ? 0.0 : 1.0;
    float side = (gl_VertexID & 2) == 0 ? -1.0 : 1.0;
    vec4 ca = u_viewproj * vec4(i_a.xyz, 1.0);
    vec4 cb = u_viewproj * vec4(i_b.xyz, 1.0);
    vec2 d = (cb.xy / cb.w - ca.xy / ca.w) * u_viewport;
    float len = length(d);
    vec2 dir = len > 1e-6 ? d / len : vec2(1.0, 0.0);
    float half_px = 1.0 + i_b.w;
    vec4 c = mix(ca, cb, t);
    c.xy += vec2(-dir.y, dir.x) * side * half_px / u_viewport * c.w;
    v_world = mix(i_a.xyz, i_b.xyz, t);
    v_side = vec2(side * half_px, 1.0) * c.w;   // perspective-divided back in the FS
    v_color = vec4(i_color.rgb, i_a.w);
    v_core = i_b.w;
    gl_Position = c;
}
"""

LINE_FS = """
#version 330 core
in vec3 v_world;
in vec2 v_side;
in vec4 v_color;
in float v_core;
out vec4 frag;
uniform vec3 u_eye;
uniform vec2 u_fog;
void main() {
    float cover = clamp(1.0 + v_core - abs(v_side.x / v_side.y), 0.0, 1.0);
    float f = clamp((length(v_world - u_eye) - u_fog.x) * u_fog.y, 0.0, 1.0);
    frag = vec4(v_color.rgb, cover * v_color.a * (1.0 - f * f));
}
"""

# Contact shadows, built in the vertex shader straight from the bodies' instance buffers: for
# each body above the plane (normal n, offset d) and not much higher than its own size, one
# quad on the plane holding two soft ellipses, multiplied into the framebuffer:
# - its shadow: the body's support extents projected along the light (u_light_dir, or the
#   normal where the light grazes the plane), darkest for bodies resting on the plane, fading
#   out and softening as the gap grows to u_strength.z times the body's size;
# - an occlusion blob around its footprint straight below, which shows contact from every
#   side (the shadow hides behind the body when the camera looks along the light), fading
#   out within one body size of the plane.
BLOB_VS = """
#version 330 core
layout(location = 3) in vec4 i_m0;
layout(location = 4) in vec4 i_m1;
layout(location = 5) in vec4 i_m2;
layout(location = 6) in vec4 i_m3;
layout(location = 7) in vec4 i_scale;
uniform mat4 u_viewproj;
uniform vec3 u_eye;
uniform vec2 u_fog;
uniform int u_kind;              // 0 sphere, 1 box, 2 capsule, 3 cylinder
uniform vec4 u_plane;            // unit normal n, offset d
uniform vec3 u_light_dir;        // projection direction (unit, n . L > 0)
uniform vec3 u_axis1;            // in-plane unit axis along the light, and across it
uniform vec3 u_axis2;
uniform vec3 u_shadow_dir;       // w1 = a1 - n (a1 . L) / (n . L): shadow length along a1
uniform vec3 u_strength;         // shadow, occlusion, reach (in body sizes)
out vec2 v_q1;                   // position in the shadow ellipse (1 on its rim)
out vec2 v_q2;                   // ... in the occlusion ellipse
out vec4 v_blob;                 // strength and softness of each

float support(vec3 w) {          // max over the shape of w . (x - centre)
    vec3 r = abs(vec3(dot(i_m0.xyz, w), dot(i_m1.xyz, w), dot(i_m2.xyz, w)));
    float wn = length(w);
    if (u_kind == 0) return i_scale.x * wn;
    if (u_kind == 1) return dot(i_scale.xyz, r);
    if (u_kind == 2) return i_scale.w * r.z + i_scale.x * wn;
    return i_scale.z * r.z + i_scale.x * sqrt(max(wn * wn - r.z * r.z, 0.0));
}

void main() {
    vec3 n = u_plane.xyz;
    vec3 p = i_m3.xyz;
    float h = dot(p, n) - u_plane.w;
    float low = support(n);                     // centre to lowest point
    float f1 = support(u_axis1), e2 = support(u_axis2), e1 = support(u_shadow_dir);
    float size = max(sqrt(f1 * e2), 1e-6);
    float gap = max(h - low, 0.0);
    float fade1 = clamp(1.0 - gap / (u_strength.z * max(size, low)), 0.0, 1.0);
    float fade2 = clamp(1.0 - gap / max(size, low), 0.0, 1.0);
    float s1 = u_strength.x * fade1 * sqrt(fade1);
    float s2 = u_strength.y * fade2 * sqrt(fade2);
    float soft1 = clamp(0.25 + 0.3 * gap / size, 0.25, 0.9);
    float soft2 = clamp(0.5 + 0.5 * gap / size, 0.25, 0.9);
    // plane coordinates (along axis 1, axis 2) about the footprint centre
    float ndl = dot(n, u_light_dir);
    float o1 = -h * dot(u_light_dir, u_axis1) / ndl;  // shadow centre along axis 1
    vec2 ax1 = vec2(e1, e2) / (1.0 + 0.5 * soft1);    // keep the half-dark rim inside
    vec2 ax2 = vec2(f1, e2) * 1.35;
    vec2 r1 = ax1 * (1.0 + soft1), r2 = ax2 * (1.0 + soft2);
    vec2 lo = min(vec2(o1, 0.0) - r1, -r2), hi = max(vec2(o1, 0.0) + r1, r2);
    vec2 corner = vec2((gl_VertexID & 1) == 0 ? lo.x : hi.x,
                       (gl_VertexID & 2) == 0 ? lo.y : hi.y);
    vec3 foot = p - n * h;
    vec3 w = foot + corner.x * u_axis1 + corner.y * u_axis2 + n * (1e-4 * size);
    float f = clamp((length(u_eye - foot) - u_fog.x) * u_fog.y, 0.0, 1.0);
    float keep = (h > -0.5 * low && max(s1, s2) > 0.02) ? 1.0 - f * f : 0.0;
    v_q1 = (corner - vec2(o1, 0.0)) / ax1;
    v_q2 = corner / ax2;
    v_blob = vec4(s1 * keep, soft1, s2 * keep, soft2);
    gl_Position = keep > 0.0 ? u_viewproj * vec4(w, 1.0) : vec4(2.0, 2.0, 2.0, 1.0);
}
"""

BLOB_FS = """
#version 330 core
in vec2 v_q1;
in vec2 v_q2;
in vec4 v_blob;
out vec4 frag;
uniform vec3 u_tint;             // shadow colour (multiplied in)
void main() {
    float a1 = v_blob.x * clamp((1.0 + v_blob.y - length(v_q1)) / (2.0 * v_blob.y), 0.0, 1.0);
    float a2 = v_blob.z * clamp((1.0 + v_blob.w - length(v_q2)) / (2.0 * v_blob.w), 0.0, 1.0);
    a1 = a1 * a1 * (3.0 - 2.0 * a1);
    a2 = a2 * a2 * (3.0 - 2.0 * a2);
    frag = vec4(mix(vec3(1.0), u_tint, 1.0 - (1.0 - a1) * (1.0 - a2)), 1.0);
}
"""

# The sky as an 8 x 8 grid of cells over the screen at the far plane (drawn last, where
# nothing else is), clipped to the part of the screen above the horizon when a ground plane
# covers the rest. The colour is per pixel: a colour per vertex, interpolated across the cell
# the horizon crosses, mixed in the nadir's grey from its vertices below the horizon and left
# a step of 13 levels, (206, 215, 228) to the horizon's (219, 227, 237), along the horizon.
# The view direction is interpolated instead: b.xyz - eye b.w, with b the far-plane point
# before its division by w, is affine in screen position, so interpolating it is exact.
FAST_SKY_VS = """
#version 330 core
uniform mat4 u_inv_viewproj;
uniform vec3 u_eye;
uniform vec4 u_clip;             // gl_ClipDistance[0] = dot(u_clip, (x, y, 1, 0)) in NDC
out vec3 v_dir;
const int N = 8;
void main() {
    int cell = gl_VertexID / 6, corner = gl_VertexID % 6;
    int ci = cell % N, cj = cell / N;
    int dx = (corner == 1 || corner == 2 || corner == 4) ? 1 : 0;
    int dy = (corner == 2 || corner == 4 || corner == 5) ? 1 : 0;
    vec2 p = vec2(float(ci + dx), float(cj + dy)) * (2.0 / float(N)) - 1.0;
    vec4 b = u_inv_viewproj * vec4(p, 1.0, 1.0);
    v_dir = (b.xyz - u_eye * b.w) * sign(b.w);
    gl_ClipDistance[0] = dot(u_clip.xyz, vec3(p, 1.0));
    gl_Position = vec4(p, 1.0, 1.0);
}
"""

FAST_SKY_FS = """
#version 330 core
in vec3 v_dir;
out vec4 frag;
""" + SKY_COLOR + """
void main() { frag = vec4(sky_color(normalize(v_dir)), 1.0); }
"""
