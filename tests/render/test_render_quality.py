"""The two render qualities: "fast" (the default on llvmpipe: contact shadows, cheap per-pixel
work) and "full" (shadow map), level of detail, and the per-pass profile."""
import numpy as np
import pytest

from render.camera import Camera
from render_helpers import drop_world

CAMERA = {"eye": (3.5, -4.5, 3.0), "target": (0.0, 0.0, 0.8)}


def _image(world, quality, camera=CAMERA, size=(320, 240), **draw):
    from render.offscreen import render_image
    return render_image(world, camera=camera, size=size, samples=0, quality=quality,
                        **draw).astype(int)


def test_quality_names_and_default(gl_mode, monkeypatch):
    from render import renderer
    assert renderer.resolve_quality("FULL") == "full"
    assert renderer.resolve_quality("fast") == "fast"
    with pytest.raises(ValueError):
        renderer.resolve_quality("ultra")
    monkeypatch.setenv("MAXCOORD_RENDER_QUALITY", "full")
    assert renderer.resolve_quality(None) == "full"
    monkeypatch.setenv("MAXCOORD_RENDER_QUALITY", "auto")
    want = "fast" if renderer.is_software_renderer() else "full"
    assert renderer.resolve_quality(None) == want
    assert renderer.is_software_renderer("llvmpipe (LLVM 15.0.6, 256 bits)")
    assert not renderer.is_software_renderer("NVIDIA GeForce RTX 3060/PCIe/SSE2")


def test_fast_and_full_agree_apart_from_shadows(gl_mode):
    """Same sky, ground grid, axes and body shading within a few levels."""
    for camera in (CAMERA, {"target": (0, 0, 0.5), "distance": 6, "yaw": -70, "pitch": 8}):
        world = drop_world(body="box", position=(0.0, 0.0, 1.0))
        fast = _image(world, "fast", camera, shadows=False)
        full = _image(world, "full", camera, shadows=False)
        d = np.abs(fast - full).max(axis=2)
        assert d.mean() < 3, d.mean()
        assert np.mean(d > 8) < 0.06, np.mean(d > 8)


def test_contact_shadow_darkens_the_ground_around_a_resting_body(gl_mode):
    world = drop_world(body="box", position=(0.0, 0.0, 0.5))         # resting on z = 0
    on = _image(world, "fast").sum(axis=2)
    off = _image(world, "fast", shadows=False).sum(axis=2)
    w, h = 320, 240
    cam = Camera.from_spec(CAMERA)
    corners = np.array([[x, y, 0.0] for x in (-0.5, 0.5) for y in (-0.5, 0.5)])
    px = cam.project(corners, w, h)
    cols = np.clip([int(px[:, 0].min()) - 15, int(px[:, 0].max()) + 15], 0, w)
    rows = np.clip([int(h - px[:, 1].max()) - 15, int(h - px[:, 1].min()) + 15], 0, h)
    near = (slice(*rows), slice(*cols))
    darker = (off[near] - on[near]) / 3.0
    assert darker.max() > 40 and darker.mean() > 4, (darker.max(), darker.mean())
    assert np.abs(on[:40, :80] - off[:40, :80]).max() <= 3 * 2     # far away: untouched


def test_full_quality_reuses_the_shadow_map_only_while_nothing_moves(gl_mode):
    from render.offscreen import OffscreenRenderer
    from render.scenedata import WorldGeometry
    world = drop_world(body="box", position=(0.0, 0.0, 1.0))
    geometry = WorldGeometry(world)
    cam = Camera.from_spec(CAMERA)
    off = OffscreenRenderer((160, 120), samples=0, quality="full")
    try:
        a = off.render(geometry, cam)
        assert np.array_equal(off.render(geometry, cam), a)          # cached map, same frame
        world.bodies[1].position = (0.6, 0.3, 1.4)
        moved = off.render(geometry, cam)
        off.renderer._shadow_key = None                              # force a fresh map
        assert np.array_equal(off.render(geometry, cam), moved)
        assert not np.array_equal(moved, a)
    finally:
        off.close()


def test_fast_quality_draws_both_world_axes(gl_mode):
    """A top view puts the y axis (green) vertical through the middle of the image and the x
    axis (red) horizontal: both must show (screen-space line quads)."""
    world = drop_world(body="sphere", position=(3.0, 3.0, 0.4))
    camera = {"target": (0, 0, 0), "distance": 6, "yaw": -90, "pitch": 70}
    img = _image(world, "fast", camera)
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    greenish = (g - r > 12) & (g - b > 12)
    reddish = (r - g > 12) & (r - b > 12)
    assert greenish[:, 150:170].sum(axis=1).astype(bool).mean() > 0.8
    assert reddish[100:140, :].sum(axis=0).astype(bool).mean() > 0.8


def test_profile_and_stats(gl_mode):
    from render.offscreen import OffscreenRenderer, benchmark_world
    from render.scenedata import WorldGeometry
    geometry = WorldGeometry(benchmark_world(20))
    cam = Camera.from_spec(None)
    geometry.frame(cam, 4 / 3)
    for quality, passes in (("fast", {"bodies", "ground", "contact_shadows", "sky"}),
                            ("full", {"shadow_map", "bodies", "ground", "sky"})):
        off = OffscreenRenderer((160, 120), samples=0, quality=quality)
        try:
            off.renderer.profile = True
            off.render(geometry, cam)
            stats = off.renderer.stats
            off.renderer.profile = False
        finally:
            off.close()
        assert stats["quality"] == quality and stats["instances"] == 20
        assert passes <= set(stats["pass_ms"]) and set(stats["pass_cpu_ms"]) == set(stats["pass_ms"])
        assert sum(stats["lod"].values()) == 20 and stats["triangles"] > 0


def test_bench_reports_its_quality(gl_mode):
    from render import renderer
    from render.commands import bench_render
    r = bench_render((5,), size="64x48", frames=2, quality="full")
    assert r["quality"] == "full"
    r = bench_render((5,), size="64x48", frames=2)
    assert r["quality"] == renderer.default_quality()


def test_viewer_toggles_quality(make_viewer, gl_mode):
    from render.backend import load_pyglet
    key = load_pyglet().window.key
    v = make_viewer(drop_world(), quality="fast")
    assert v.renderer.quality == "fast"
    v.on_key_press(key.Q, 0)
    assert v.renderer.quality == "full"
    assert v.draw_frame(read=True).std() > 5
    v.on_key_press(key.Q, 0)
    assert v.renderer.quality == "fast"


@pytest.mark.parametrize("quality", ["fast", "full"])
def test_the_sky_runs_smoothly_into_the_horizon(gl_mode, quality):
    """Down a column of sky from the top of the picture to the horizon no row differs
    from the next by more than 4 levels, and just above the horizon the sky is the horizon's
    colour that the fogged ground fades into. The fast sky, coloured per vertex of an 8 x 8
    grid, mixed the nadir's grey into the cell the horizon crosses: a step of 13 levels,
    (206, 215, 228) to (219, 227, 237), along the horizon (pendulum at 1280x720, y 207)."""
    from render.renderer import SKY_HORIZON
    w, h = 640, 360
    camera = {"target": (0.0, 0.0, 1.0), "distance": 5.0, "yaw": -90.0, "pitch": 4.0}
    world = drop_world(body="box", position=(1.5, 0.0, 0.5))
    img = _image(world, quality, camera, size=(w, h))
    cam = Camera.from_spec(camera)
    far = cam.eye + 1e4 * np.array([0.0, 1.0, 0.0])          # straight ahead, level
    horizon_row = int(round(h - cam.project(far, w, h)[0, 1]))
    assert 100 < horizon_row < 260
    column = img[:horizon_row + 2, 20]          # (below, the ground's fog and grid begin)
    steps = np.abs(np.diff(column, axis=0)).max(axis=1)
    # (full: 4 at the horizon, into 3 rows of far ground up to 6 levels darker than the sky)
    assert steps.max() <= 4, (steps.max(), steps.argmax())
    horizon = np.round(np.array(SKY_HORIZON) * 255)
    assert np.abs(column[horizon_row - 2] - horizon).max() <= 3, column[horizon_row - 2]
    assert np.abs(column[0] - horizon).max() > 20           # (the zenith's blue at the top)
