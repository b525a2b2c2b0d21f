"""Offscreen stills and clips, image files, and the render benchmark."""
import numpy as np
import pytest

from render.camera import Camera
from render.imagefiles import (GifWriter, gif_frame_count, gif_frame_delays, read_png,
                               write_png)
from render.scenedata import body_color
from render_helpers import centroid, colour_mask, drop_world, polygon_mask

CAMERA = {"eye": (3.5, -4.5, 3.0), "target": (0.0, 0.0, 0.8)}


def test_still_matches_the_projected_box_silhouette(gl_mode, tmp_path):
    from render import render_offscreen
    world = drop_world(body="box", position=(0.0, 0.0, 1.0))
    out = tmp_path / "still.png"
    w, h = 320, 240
    r = render_offscreen(world, seconds=0.0, out=out, size=(w, h), camera=CAMERA,
                         samples=0, progress=False)
    assert r["frames"] == 1 and r["kind"] == "png"
    img = read_png(out)
    assert img.shape == (h, w, 3)
    got = colour_mask(img, body_color(1))
    corners = np.array([[sx, sy, sz] for sx in (-.5, .5) for sy in (-.5, .5) for sz in (-.5, .5)])
    px = Camera.from_spec(CAMERA).project(corners + (0, 0, 1.0), w, h)
    want = polygon_mask(np.c_[px[:, 0], h - px[:, 1]], (h, w))
    inter, union = np.sum(got & want), np.sum(got | want)
    assert want.sum() > 2000
    assert inter / union > 0.95, f"IoU {inter / union:.3f}"
    # whatever disagrees lies on the outline (within a pixel or two of the silhouette edge)
    from numpy.lib.stride_tricks import sliding_window_view
    edge = np.pad(want, 2, mode="edge")
    win = sliding_window_view(edge, (5, 5))
    border = win.any(axis=(2, 3)) & ~win.all(axis=(2, 3))
    assert not np.any((got ^ want) & ~border)


def test_a_distance_joint_is_drawn_as_a_string(gl_mode):
    """A ball hung from a bar by a Distance joint: the pixels along the line between the two
    anchors are the string's dark grey, and a little to the side they are the light sky and
    ground (the ball looked as if it floated under the bar)."""
    from physics import Box, Distance, Sphere, World
    from render.offscreen import render_image
    world = World()
    bar = world.add_body(Box((0.5, 0.05, 0.05)), static=True, position=(0, 0, 2.0))
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0, 0, 1.0))
    world.add_joint(Distance(bar, ball, anchor_a=(0, 0, 1.95), anchor_b=(0, 0, 1.1)))
    camera = {"eye": (0.0, -3.0, 1.5), "target": (0.0, 0.0, 1.5)}
    w, h = 320, 240
    img = render_image(world, camera=camera, size=(w, h), samples=0).astype(int)
    along = np.array([(0, 0, z) for z in (1.3, 1.5, 1.7)])
    px = np.round(Camera.from_spec(camera).project(along, w, h)).astype(int)
    for x, y in px:
        row = h - 1 - y
        assert img[row, x, :3].max() < 110, img[row, x]             # the string
        assert img[row, x + 12, :3].min() > 150, img[row, x + 12]   # beside it


def test_clip_frame_counts(gl_mode, tmp_path):
    from render import render_offscreen
    world = drop_world()
    r = render_offscreen(world, seconds=0.25, out=tmp_path / "clip.gif", fps=20,
                         size=(96, 64), camera=CAMERA, progress=False)
    assert r["frames"] == 5 and gif_frame_count(tmp_path / "clip.gif") == 5
    # frame k shows t = k / fps, for 1 / fps: the clip plays, and the world has run, 0.25 s
    assert r["duration"] == 0.25 and abs(world.time - 0.25) < world.dt / 2
    r = render_offscreen(drop_world(), seconds=0.1, out=str(tmp_path / "frames") + "/", fps=30,
                         size=(96, 64), progress=True)
    files = sorted((tmp_path / "frames").glob("frame_*.png"))
    assert r["frames"] == 3 and len(files) == 3
    a, c = read_png(files[0]), read_png(files[-1])
    assert a.shape == (64, 96, 3) and np.any(a != c)          # the ball moved


def test_a_clip_into_a_missing_folder_is_refused_before_any_work(tmp_path):
    """The folder an output goes in must exist (it was made quietly); the world is not
    stepped. A folder of frames is made itself, but not its parent."""
    from render import render_offscreen
    world = drop_world()
    for out in ("clip.gif", "still.png", "frames/"):
        with pytest.raises(ValueError, match=f"out: the folder '{tmp_path / 'no'}' does not"):
            render_offscreen(world, seconds=0.5, out=tmp_path / "no" / out, progress=False)
    assert world.time == 0.0 and not (tmp_path / "no").exists()


def test_a_one_second_gif_plays_one_second(gl_mode, tmp_path):
    """30 frames at 30 fps: stored delays of 3 and 4 cs that sum to 100 cs (a fixed 3 cs
    played it in 0.9 s), each frame starting within half a centisecond of k / 30; the world
    is simulated through the whole second asked (it stopped at the last frame's 0.967 s,
    which was the time reported)."""
    from render import render_offscreen
    world = drop_world()
    r = render_offscreen(world, seconds=1.0, out=tmp_path / "clip.gif", fps=30,
                         size=(48, 32), camera=CAMERA, progress=False)
    assert r["frames"] == 30 and r["duration"] == 1.0
    # (Pillow merges a run of identical frames, the ball at rest, into one, adding delays)
    delays = gif_frame_delays(tmp_path / "clip.gif")
    assert sum(delays) == 100
    starts = np.cumsum([0] + delays[:-1])
    clock = 100 * np.arange(30) / 30
    assert np.all(np.min(np.abs(starts[:, None] - clock[None, :]), axis=1) <= 0.5)
    assert abs(r["sim_time"] - 1.0) <= world.dt / 2 and abs(world.time - 1.0) <= world.dt / 2


def test_a_gif_faster_than_50_fps_is_refused_before_any_work(tmp_path):
    """A GIF's delays are whole centiseconds and players slow delays under 2 cs: 60 fps
    cannot be stored (it was written as 2 cs frames, played at 50 fps)."""
    from render import render_offscreen
    world = drop_world()
    with pytest.raises(ValueError, match="fps must be above 0 and at most 50 for a GIF"):
        render_offscreen(world, seconds=0.5, out=tmp_path / "clip.gif", fps=60, progress=False)
    assert world.time == 0.0 and not (tmp_path / "clip.gif").exists()


def test_mp4(gl_mode, tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    from render import render_offscreen
    r = render_offscreen(drop_world(), seconds=0.1, out=tmp_path / "clip.mp4", fps=30,
                         size=(97, 64), progress=False)
    assert r["frames"] == 3 and (tmp_path / "clip.mp4").stat().st_size > 100


@pytest.mark.parametrize("use_pillow", [False, True])
def test_gif_writers(tmp_path, use_pillow):
    if use_pillow:
        pytest.importorskip("PIL")
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, size=(37, 53, 3), dtype=np.uint8) for _ in range(4)]
    g = GifWriter(tmp_path / "x.gif", fps=10, use_pillow=use_pillow)
    for f in frames:
        g.append(f)
    g.close()
    assert gif_frame_count(tmp_path / "x.gif") == 4
    assert gif_frame_delays(tmp_path / "x.gif") == [10, 10, 10, 10]     # cs, at 10 fps
    for fps, want in ((30, [3, 4, 3]), (24, [4, 4, 5]), (50, [2, 2, 2])):
        g = GifWriter(tmp_path / "y.gif", fps=fps, use_pillow=use_pillow)
        for f in frames[:3]:
            g.append(f)
        g.close()
        assert gif_frame_delays(tmp_path / "y.gif") == want      # the rounded clock's steps
    try:
        from PIL import Image
    except ImportError:
        return
    im = Image.open(tmp_path / "x.gif")                       # a real decoder accepts it
    assert im.n_frames == 4 and im.size == (53, 37)
    if not use_pillow:                                        # fixed palette: close colours
        im.seek(2)
        back = np.asarray(im.convert("RGB"), dtype=float)
        assert np.abs(back - frames[2]).mean() < 30


def test_png_roundtrip(tmp_path):
    img = np.random.default_rng(1).integers(0, 256, size=(17, 23, 3), dtype=np.uint8)
    write_png(tmp_path / "a.png", img)
    np.testing.assert_array_equal(read_png(tmp_path / "a.png"), img)


def test_frame_times_and_bench_render(gl_mode):
    from render import frame_times
    from render.commands import bench_render
    r = frame_times((10, 40), size=(160, 90), frames=3)
    assert set(r["results"]) == {10, 40}
    for v in r["results"].values():
        assert v["ms_per_frame"] > 0 and v["fps"] > 0
    assert r["mode"] == {"window": "window", "headless": "headless-egl"}[gl_mode]
    import json
    b = bench_render((5,), size="64x48", frames=2)
    assert json.loads(json.dumps(b))["results"]["5"]["fps"] > 0
    # it draws as render does: 4x multisampling (it drew none, and reported 2-3 times less
    # than render spends on llvmpipe); asked, with none
    import inspect
    from render import render_offscreen
    assert b["samples"] == inspect.signature(render_offscreen).parameters["samples"].default
    assert b["samples"] == 4
    assert bench_render((5,), size="64x48", frames=1, samples=0)["samples"] == 0


def test_rotation_locks_are_drawn_by_the_joints_layer(gl_mode):
    """A RotationLock has no anchor: the joints layer (the viewer's J key) marks body_b's
    centre and draws a held axis through it (a character's yaw axis), and a lock of the
    whole orientation with the mark alone."""
    from physics import Box, Capsule, Plane, RotationLock, World
    from render.offscreen import render_image
    world = World()
    world.add_body(Plane(normal=(0, 0, 1), offset=0.0))
    hero = world.add_body(Capsule(radius=0.3, half_length=0.6), mass=80.0, position=(0, 0, 0.9))
    crate = world.add_body(Box((0.3, 0.2, 0.1)), mass=2.0, position=(1.0, 0, 0.6))
    world.add_joint(RotationLock(None, hero, axis=(0, 0, 1)))
    world.add_joint(RotationLock(hero, crate))
    camera = {"eye": (0.0, -4.0, 1.5), "target": (0.5, 0.0, 0.9)}
    w, h = 320, 240
    plain, marked = (render_image(world, camera=camera, size=(w, h), samples=0, joints=flag,
                                  wireframe=True).astype(int) for flag in (False, True))
    px = np.round(Camera.from_spec(camera).project(
        np.array([(0, 0, 0.9), (1.0, 0, 0.6), (0, 0, 1.3)]), w, h)).astype(int)
    for (x, y), colour in zip(px, ("yellow", "yellow", "cyan")):
        got = marked[h - 1 - y, x, :3]
        if colour == "yellow":
            assert got[0] > 180 and got[1] > 140 and got[2] < 90, got
        else:
            assert got[0] < 90 and got[1] > 140 and got[2] > 170, got
        assert np.abs(got - plain[h - 1 - y, x, :3]).max() > 60


def test_a_gif_keeps_the_cradle_balls_colours_apart(gl_mode, tmp_path):
    """The cradle's five balls, 400x225: a GIF frame keeps each ball's colour close to the
    PNG's, and the balls apart (one median cut over the whole frame left the balls 13-25
    off per channel, balls 1 and 3 within 14 of each other)."""
    pytest.importorskip("PIL")
    from PIL import Image

    from render import render_offscreen
    from tools import load_scene
    scene = load_scene("newtons_cradle")
    size = (400, 225)
    render_offscreen(scene, seconds=0.0, out=tmp_path / "still.png", size=size, progress=False)
    render_offscreen(scene, seconds=0.02, fps=50, out=tmp_path / "clip.gif", size=size,
                     progress=False)
    png = read_png(tmp_path / "still.png").astype(int)
    gif = np.asarray(Image.open(tmp_path / "clip.gif").convert("RGB")).astype(int)
    ball_means = []
    for index in range(2, 7):                           # bodies 2-6: ground, frame, ball1...
        ball = colour_mask(png.astype(np.uint8), body_color(index))
        assert ball.sum() > 100
        error = np.abs(gif - png)[ball].mean()
        assert error < 8, f"ball {index - 1}: {error:.1f} per channel off"
        ball_means.append(gif[ball].mean(axis=0))
    ball_means = np.array(ball_means)
    apart = np.abs(ball_means[:, None] - ball_means[None]).max(axis=-1)
    assert apart[~np.eye(5, dtype=bool)].min() > 40          # (were 14 apart, balls 1 and 3)


def test_a_clip_can_follow_a_body(gl_mode, tmp_path):
    """The car's own camera shows its whole 40 m course: the car was some 70 px wide at
    1280x720 and left the middle. Following its chassis, every frame has it in the middle,
    its bounding sphere a third of the picture high (the chassis 47 px wide of 320),
    2 s down the course as at the start."""
    from render import render_offscreen
    from render_helpers import centroid
    from tools import load_scene
    scene = load_scene("car")
    assert scene.world.bodies[1].name == "chassis"
    w, h = 320, 180
    r = render_offscreen(scene, seconds=2.0, fps=2, out=tmp_path / "frames", size=(w, h),
                         follow="chassis", progress=False)
    assert r["frames"] == 4 and scene.world.positions[1][0] > 5.0     # it drove on
    for k in range(4):
        chassis = colour_mask(read_png(tmp_path / "frames" / f"frame_{k:05d}.png"),
                              body_color(1))
        x, y = centroid(chassis)
        assert abs(x - w / 2) < 0.08 * w and abs(y - h / 2) < 0.1 * h, (k, x, y)
        columns = np.nonzero(chassis.any(axis=0))[0]
        assert columns.max() - columns.min() > 0.12 * w              # (was 18 px of 320)
    with pytest.raises(ValueError, match="no body is called 'chasis'; did you mean 'chassis'"):
        render_offscreen(scene, seconds=0.0, out=tmp_path / "x.png", follow="chasis",
                         progress=False)


def test_a_clip_follows_a_body_given_by_its_index(gl_mode, tmp_path):
    """A chain's links have no names: followed by its index (5), the fifth link is in the
    middle of every frame as the chain swings (by name it could not be followed)."""
    from render import render_offscreen
    from tools import load_scene
    scene = load_scene("chain")
    assert scene.world.bodies[5].name is None
    w, h = 320, 180
    render_offscreen(scene, seconds=1.5, fps=2, out=tmp_path / "frames", size=(w, h),
                     follow=5, samples=0, progress=False)
    for k in range(3):
        link = colour_mask(read_png(tmp_path / "frames" / f"frame_{k:05d}.png"),
                           body_color(5))
        x, y = centroid(link)
        assert abs(x - w / 2) < 0.08 * w and abs(y - h / 2) < 0.1 * h, (k, x, y)
    with pytest.raises(ValueError, match="follow: body index must be from 0 to 30, got 31"):
        render_offscreen(scene, seconds=0.0, out=tmp_path / "x.png", follow=31,
                         progress=False)


def _removing_scene(removed: str, at: float):
    """Ground, 'early' (x = -1.5) and 'late' (moving along x) spheres, no gravity; the
    controller removes the body ``removed`` once t > ``at``."""
    from physics import Plane, Sphere, World
    world = World(gravity=(0, 0, 0), dt=1 / 120)
    world.add_body(Plane(normal=(0, 0, 1)), name="ground")
    world.add_body(Sphere(0.2), mass=1.0, position=(-1.5, 0, 0.5), name="early")
    late = world.add_body(Sphere(0.2), mass=1.0, position=(1.0, 0, 0.5), name="late")
    late.linear_velocity = (1.0, 0, 0)
    state = {"body": world.body(removed)}

    def controller(world):
        if state["body"] is not None and world.time > at:
            world.remove_body(state["body"])
            state["body"] = None

    return {"world": world, "controller": controller,
            "camera": {"yaw": -90, "pitch": 10, "target": (0, 0, 0.5), "distance": 6}}


def test_a_followed_body_stays_followed_when_an_earlier_one_is_removed(gl_mode, tmp_path):
    """--follow held the body's index: once 'early' (index 1) was removed, index 2 was past
    the end (IndexError, a traceback from render). 'late' stays in the middle."""
    from render import render_offscreen
    scene = _removing_scene("early", at=0.2)
    w, h = 160, 90
    r = render_offscreen(scene, seconds=1.0, fps=4, out=tmp_path / "frames", size=(w, h),
                         follow="late", samples=0, progress=False)
    assert r["frames"] == 4 and r["notes"] == [] and len(scene["world"].bodies) == 2
    for k in range(4):
        late = colour_mask(read_png(tmp_path / "frames" / f"frame_{k:05d}.png"),
                           body_color(2))
        x, y = centroid(late)
        assert abs(x - w / 2) < 0.08 * w and abs(y - h / 2) < 0.1 * h, (k, x, y)


def test_a_followed_body_the_scene_removes_leaves_the_camera_where_it_was(gl_mode, tmp_path):
    """Following 'late' until the scene removes it: the camera stays on its last place
    (frames after the removal are the same picture) and ``notes`` says so."""
    from render import render_offscreen
    scene = _removing_scene("late", at=0.3)
    r = render_offscreen(scene, seconds=1.0, fps=4, out=tmp_path / "frames", size=(160, 90),
                         follow="late", samples=0, progress=False)
    assert r["frames"] == 4
    assert r["notes"] == ["the scene removed 'late' by t=0.5 s; the camera stayed where it "
                          "last was from there"]
    frames = [read_png(tmp_path / "frames" / f"frame_{k:05d}.png") for k in range(4)]
    np.testing.assert_array_equal(frames[2], frames[3])
    green = [int(colour_mask(f, body_color(2)).sum()) for f in frames]
    assert min(green[:2]) > 3 * max(green[2:]), green      # (the y axis is green too)


def test_a_box_dropped_from_10_m_stays_in_every_frame_and_the_still_matches_the_clip(
        gl_mode, tmp_path):
    """A scene with no camera: a 0.4 m box dropped from 10 m onto the ground. The clip's
    camera, as the viewer's first view, frames the box and the ground under it, so the box
    is in every frame (framed on the box alone, frame 0 was a close-up, 28,000 of 130,000
    pixels, and from 0.75 s on the box was out of the picture); a still of the end is drawn
    from that same camera (it was framed again, on the box at rest, a close-up), so it shows
    the box where the clip's last frame does."""
    from render import render_offscreen
    w, h = 480, 270
    world = drop_world(body="box", position=(0.0, 0.0, 10.0))
    render_offscreen(world, seconds=1.75, out=str(tmp_path / "frames") + "/", fps=4,
                     size=(w, h), samples=0, progress=False)
    frames = sorted((tmp_path / "frames").glob("frame_*.png"))     # t = 0, 0.25, ... 1.5 s
    assert len(frames) == 7
    blobs = [colour_mask(read_png(f), body_color(1)) for f in frames]
    pixels = [int(b.sum()) for b in blobs]
    # the box is seen in each (500 to 740 pixels at this size), small (not a close-up)
    assert all(20 < p < 0.02 * w * h for p in pixels), pixels
    rows = [centroid(b)[1] for b in blobs]
    assert rows[-1] - rows[0] > 0.4 * h, rows               # it falls down the picture
    still = render_offscreen(drop_world(body="box", position=(0.0, 0.0, 10.0)), seconds=1.5,
                             out=tmp_path / "end.png", size=(w, h), samples=0, progress=False)
    assert still["kind"] == "png"
    end = colour_mask(read_png(tmp_path / "end.png"), body_color(1))
    assert np.abs(centroid(end) - centroid(blobs[-1])).max() < 1    # both at t = 1.5 s


BAD_SIZE = r"size must be two positive integers \(w, h\) or .WxH., got"


@pytest.mark.parametrize("size", [(0, 10), (10, 0), (-4, 4)])
def test_a_bad_picture_size_is_refused_before_any_drawing_or_warning(gl_mode, tmp_path, size):
    """render_image(world, size=(0, 10)) warned "divide by zero" (the camera's aspect) before
    its ValueError; render_offscreen's (10, 0) raised ZeroDivisionError."""
    import warnings
    from render import render_image, render_offscreen
    world = drop_world()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=BAD_SIZE):
            render_image(world, size=size)
        with pytest.raises(ValueError, match=BAD_SIZE):
            render_offscreen(world, seconds=0.0, out=tmp_path / "x.png", size=size,
                             progress=False)
    assert world.time == 0.0
