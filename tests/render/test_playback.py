"""Playing back recordings: interpolation, the time <-> sample mapping, scrubbing into a world,
the viewer's timeline in a real window (under Xvfb) and offscreen renders of a recording."""
import math

import numpy as np
import pytest

from physics import Box, Plane, Sphere, World
from render.playback import Playback, Recording, open_recording, slerp
from render.scenedata import body_color
from render_helpers import centroid, colour_mask
from tools.cli import main


def quat_z(angle):
    return np.array([math.cos(angle / 2), 0.0, 0.0, math.sin(angle / 2)])


def angle_about_z(q):
    return 2 * math.atan2(q[3], q[0])


def three_body_world():
    world = World(gravity=(0, 0, 0), dt=0.01)
    world.add_body(Plane(normal=(0, 0, 1), offset=0.0))
    world.add_body(Sphere(0.2), mass=1.0, position=(0, 0, 1))
    world.add_body(Box((0.2, 0.1, 0.3)), mass=2.0, position=(1, 0, 1))
    return world


def synthetic_recording(k=5, seed=0):
    """k samples at uneven times of 3 bodies (plane, sphere, box) with random poses; the box
    turns about z by 0.3 rad per sample."""
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.05, 0.2, size=k))
    x = rng.normal(size=(k, 3, 3))
    x[:, 0] = 0.0
    q = rng.normal(size=(k, 3, 4))
    q /= np.linalg.norm(q, axis=2, keepdims=True)
    q[:, 0] = (1, 0, 0, 0)
    q[:, 2] = [quat_z(0.3 * i) for i in range(k)]
    v = rng.normal(size=(k, 3, 3))
    w = rng.normal(size=(k, 3, 3))
    energy = np.linspace(10.0, 9.0, k)
    return Recording.from_arrays({"scene": np.array("synthetic"), "params": np.array("{}"),
                                  "dt": np.array(0.01), "time": t, "position": x,
                                  "orientation": q, "linear_velocity": v,
                                  "angular_velocity": w, "energy": energy,
                                  "contacts": np.arange(k)})


# -- interpolation ---------------------------------------------------------------------------

def test_sample_times_give_the_recorded_poses_exactly():
    rec = synthetic_recording()
    world = three_body_world()
    pb = Playback(rec, world)
    for i, t in enumerate(rec.time):
        x, q = pb.pose_at(t)
        np.testing.assert_array_equal(x, rec.position[i])
        np.testing.assert_array_equal(q, rec.orientation[i])
        v, w = pb.velocity_at(t)
        np.testing.assert_array_equal(v, rec.linear_velocity[i])
        np.testing.assert_array_equal(w, rec.angular_velocity[i])
        pb.seek(t)
        np.testing.assert_array_equal(world.positions, rec.position[i])
        np.testing.assert_array_equal(world.orientations, rec.orientation[i])
        np.testing.assert_array_equal(world.linear_velocities, rec.linear_velocity[i])
        assert world.time == t
        assert pb.sample_index() == i
        assert pb.series_at("energy") == rec.series["energy"][i]
        assert pb.series_at("contacts") == i


def test_midpoints_lie_between_the_samples():
    rec = synthetic_recording()
    pb = Playback(rec, three_body_world())
    for i in range(rec.n_samples - 1):
        t0, t1 = rec.time[i], rec.time[i + 1]
        x, q = pb.pose_at(0.5 * (t0 + t1))
        np.testing.assert_allclose(x, 0.5 * (rec.position[i] + rec.position[i + 1]),
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-12)
        # the box turns about z from 0.3 i to 0.3 (i + 1): halfway is 0.3 i + 0.15
        assert angle_about_z(q[2]) == pytest.approx(0.3 * i + 0.15, abs=1e-12)
        # a quarter of the way, slerp turns at a constant rate
        _, q = pb.pose_at(t0 + 0.25 * (t1 - t0))
        assert angle_about_z(q[2]) == pytest.approx(0.3 * i + 0.075, abs=1e-12)
        # a random orientation (the sphere's): the midpoint is as far from both ends
        _, qm = pb.pose_at(0.5 * (t0 + t1))
        d0 = abs(float(qm[1] @ rec.orientation[i, 1]))
        d1 = abs(float(qm[1] @ rec.orientation[i + 1, 1]))
        assert d0 == pytest.approx(d1, abs=1e-12) and d0 < 1.0
        assert pb.series_at("energy", 0.5 * (t0 + t1)) == pytest.approx(
            0.5 * (rec.series["energy"][i] + rec.series["energy"][i + 1]), abs=1e-12)


def test_slerp_takes_the_short_arc_and_is_exact_at_the_ends():
    q0 = np.array([quat_z(0.2), quat_z(-1.0)])
    q1 = np.array([-quat_z(0.8), quat_z(-1.0 + 1e-9)])   # -q: the same rotation
    np.testing.assert_array_equal(slerp(q0, q1, 0.0), q0)
    np.testing.assert_allclose(slerp(q0, q1, 1.0), [quat_z(0.8), quat_z(-1.0 + 1e-9)],
                               atol=1e-15)
    mid = slerp(q0, q1, 0.5)
    assert angle_about_z(mid[0]) == pytest.approx(0.5, abs=1e-12)      # not the long way
    assert angle_about_z(mid[1]) == pytest.approx(-1.0 + 0.5e-9, abs=1e-12)


def test_time_and_sample_mapping_stepping_and_the_clock():
    rec = synthetic_recording(k=4)
    t = rec.time
    pb = Playback(rec, three_body_world())
    assert (pb.start, pb.end) == (t[0], t[-1])
    assert pb.t == t[0] and pb.fraction == 0.0
    assert pb.locate(t[0] - 5) == (0, 0.0) and pb.locate(t[-1] + 5) == (3, 0.0)
    i, f = pb.locate(t[1] + 0.25 * (t[2] - t[1]))
    assert i == 1 and f == pytest.approx(0.25, abs=1e-12)
    assert pb.time_at_fraction(0.5) == pytest.approx(0.5 * (t[0] + t[-1]), abs=1e-15)
    assert pb.time_at_fraction(-1) == t[0] and pb.time_at_fraction(2) == t[-1]
    # stepping from between samples 1 and 2
    pb.seek(0.5 * (t[1] + t[2]))
    pb.step_forward()
    assert pb.t == t[2] and pb.paused
    pb.seek(0.5 * (t[1] + t[2]))
    pb.step_back()
    assert pb.t == t[1]
    pb.step_back()
    pb.step_back()
    pb.step_back()
    assert pb.t == t[0]
    pb.seek_end()
    pb.step_forward()
    assert pb.t == t[-1] and pb.fraction == 1.0
    pb.seek_start()
    assert pb.t == t[0]
    # the clock: real time, scaled, paused, looping and stopping
    pb.paused = False
    pb.advance(0.01)
    assert pb.t == pytest.approx(t[0] + 0.01, abs=1e-15)
    pb.faster()
    assert pb.time_scale == 2.0
    pb.advance(0.01)
    assert pb.t == pytest.approx(t[0] + 0.03, abs=1e-15)
    pb.slower()
    pb.toggle_pause()
    assert pb.advance(0.1) == 0 and pb.t == pytest.approx(t[0] + 0.03, abs=1e-15)
    pb.toggle_pause()
    pb.seek(t[-1] - 0.01)
    pb.advance(0.03)                               # loops: 0.02 s past the start
    assert pb.loop and pb.t == pytest.approx(t[0] + 0.02, abs=1e-12) and not pb.paused
    pb.toggle_loop()
    pb.seek(t[-1] - 0.01)
    pb.advance(0.03)                               # stops at the end and pauses
    assert pb.t == t[-1] and pb.paused
    pb.toggle_pause()                              # play again from the start
    assert pb.t == t[0] and not pb.paused
    pb.scrubbing = True
    assert pb.advance(0.1) == 0 and pb.t == t[0]


def test_a_recording_needs_the_scenes_body_count():
    rec = synthetic_recording()
    world = World()
    world.add_body(Sphere(0.1), mass=1.0)
    with pytest.raises(ValueError, match="recording has 3 bodies but scene 'synthetic'"):
        Playback(rec, world)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("orientation"), "missing orientation"),
    (lambda d: d.update(time=d["time"][::-1].copy()), "not strictly increasing"),
    (lambda d: d.update(position=d["position"][:, :, :2].copy()), "position must have shape"),
    (lambda d: d.update(orientation=2 * d["orientation"]), "not unit length"),
    (lambda d: d.update(params=np.array("{not json")), "params is not JSON"),
    (lambda d: d.update(time=np.zeros(0)), "non-empty"),
    # (it said only "could not convert string to float", not which array)
    (lambda d: d.update(energy=np.array(["a"] * len(d["time"]))),
     r"is not a valid maxcoord recording \(its energy array holds something other than "
     r"numbers \(could not convert string to float"),
    (lambda d: d.update(position=np.where(np.arange(3) == 1, "x", d["position"].astype(str))),
     r"its position array holds something other than numbers \(could not convert string to "
     r"float: np.str_\('x'\)\)"),
])
def test_bad_recordings_are_refused_with_one_line(tmp_path, change, message):
    rec = synthetic_recording()
    d = {"scene": np.array("synthetic"), "params": np.array("{}"), "dt": np.array(0.01),
         "time": rec.time, "position": rec.position, "orientation": rec.orientation}
    change(d)
    path = tmp_path / "bad.npz"
    np.savez(path, **d)
    with pytest.raises(ValueError, match=message) as info:
        Recording.load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_a_folder_given_as_a_recording_is_called_a_folder(tmp_path):
    """A folder named x.npz was reported as a recording that 'does not exist'."""
    (tmp_path / "x.npz").mkdir()
    with pytest.raises(ValueError, match=r"^recording '.*x.npz' is a folder, not a file: give "
                                         r"the .npz file that maxcoord run --record wrote$"):
        Recording.load(tmp_path / "x.npz")
    with pytest.raises(ValueError, match=r"^recording '.*y.npz' does not exist$"):
        Recording.load(tmp_path / "y.npz")


# -- a real recording ------------------------------------------------------------------------

SCENE_FILE = """
from physics import Plane, Sphere
CAMERA = {"target": (0.75, 0.0, 1.4), "distance": 6.0, "yaw": -90, "pitch": 10}
def build(world):
    world.add_body(Plane(normal=(0, 0, 1), offset=0.0))
    world.add_body(Sphere(0.4), mass=1.0, position=(0.0, 0.0, 2.5), linear_velocity=(1.5, 0, 0))
"""


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """A recording of a ball thrown sideways (0.6 s), made with `maxcoord run --record`."""
    d = tmp_path_factory.mktemp("rec")
    scene = d / "throw.py"
    scene.write_text(SCENE_FILE)
    out = d / "throw.npz"
    assert main(["run", str(scene), "--seconds", "0.6", "--quiet", "--record", str(out)]) == 0
    return out


def test_scrubbing_a_real_recording_sets_the_world_poses(recording):
    scene, pb = open_recording(recording)
    world = scene.world
    data = np.load(recording)
    assert pb.n_samples == len(data["time"]) == 145      # the start, then 144 steps
    assert world.time == data["time"][0]
    np.testing.assert_array_equal(world.positions, data["position"][0])
    pb.seek_fraction(0.5)
    t = pb.t
    assert t == pytest.approx(0.5 * (data["time"][0] + data["time"][-1]), abs=1e-15)
    i = int(np.searchsorted(data["time"], t)) - 1
    f = (t - data["time"][i]) / (data["time"][i + 1] - data["time"][i])
    np.testing.assert_allclose(world.positions,
                               (1 - f) * data["position"][i] + f * data["position"][i + 1],
                               rtol=0, atol=1e-12)
    # the ball is in free flight: x = 1.5 t, z = 2.5 - g t^2 / 2 (to the integrator's accuracy)
    assert world.positions[1, 0] == pytest.approx(1.5 * t, abs=1e-9)
    assert world.positions[1, 2] == pytest.approx(2.5 - 0.5 * 9.81 * t * t, abs=0.01)
    assert world.time == t
    pb.seek_end()
    np.testing.assert_array_equal(world.positions, data["position"][-1])


# -- the viewer ------------------------------------------------------------------------------

@pytest.fixture
def key(gl_mode):
    from render.backend import load_pyglet
    return load_pyglet().window.key


def test_the_viewer_plays_and_scrubs_a_recording(make_viewer, key, recording):
    from render.viewer import PLAYBACK_KEY_BINDINGS, TIMELINE_HEIGHT
    scene, pb = open_recording(recording)
    world = scene.world
    data = np.load(recording)
    times = data["time"]
    v = make_viewer(scene, playback=pb)
    assert v.sim is pb and "Keys (playing a recording)" in v.help_text_shown()
    for b in PLAYBACK_KEY_BINDINGS:
        assert b.help in v.help_text_shown()
    w, h = v.window.get_framebuffer_size()
    rgb = body_color(1)

    def ball_on_screen():
        img = v.draw_frame(read=True)
        c = centroid(colour_mask(img, rgb))
        p = v.camera.project(world.positions[1], w, h)[0]
        assert np.linalg.norm(c - (p[0], h - p[1])) < 4, (c, p)
        return img, c

    v.show_hud = False
    img0, c0 = ball_on_screen()
    # a click at the middle of the timeline shows the middle of the recording
    v.show_hud = True
    x0, y0, x1, y1 = v.timeline_rect()
    assert 0 < x0 < x1 <= w and 0 < y0 < y1 <= TIMELINE_HEIGHT
    v.on_mouse_press((x0 + x1) / 2, TIMELINE_HEIGHT / 2, 1, 0)
    assert pb.scrubbing
    assert pb.t == pytest.approx(0.5 * (times[0] + times[-1]), abs=1e-12)
    v.on_mouse_drag(x1 + 50, 10, 100, 0, 1, 0)      # dragging past the end clamps to it
    assert pb.t == times[-1]
    np.testing.assert_array_equal(world.positions, data["position"][-1])
    v.on_mouse_drag(x0 + 0.75 * (x1 - x0), 10, -100, 0, 1, 0)
    v.on_mouse_release(x0 + 0.75 * (x1 - x0), 10, 1, 0)
    assert not pb.scrubbing
    t = pb.t
    assert t == pytest.approx(times[0] + 0.75 * (times[-1] - times[0]), abs=1e-12)
    # the timeline's fill reaches the handle at 3/4 of the track
    img = v.draw_frame(read=True)
    row = img[h - (y0 + y1) // 2]
    blue = (row[:, 2] > 200) & (row[:, 0] < 120)
    assert abs(np.flatnonzero(blue).max() - (x0 + 0.75 * (x1 - x0))) < 5
    assert abs(blue.sum() - 0.75 * (x1 - x0)) < 6
    v.show_hud = False
    img1, c1 = ball_on_screen()
    assert np.abs(img1.astype(int) - img0).max() > 100, "the frame did not change"
    p0 = v.camera.project(data["position"][0, 1], w, h)[0]
    p1 = v.camera.project(world.positions[1], w, h)[0]
    expected = np.array([p1[0] - p0[0], p0[1] - p1[1]])   # image rows grow downwards
    assert expected[0] > 20 and expected[1] > 10            # right and down the screen
    np.testing.assert_allclose(c1 - c0, expected, atol=4)
    # keys: one sample either way, Home, End, play in real time
    v.on_key_press(key.RIGHT, 0)
    i = int(np.searchsorted(times, t))
    assert pb.paused and pb.t == times[i]
    v.on_key_press(key.LEFT, 0)
    v.on_key_press(key.LEFT, 0)
    assert pb.t == times[i - 2]
    np.testing.assert_array_equal(world.positions, data["position"][i - 2])
    v.on_key_press(key.HOME, 0)
    assert pb.t == times[0]
    v.on_key_press(key.END, 0)
    assert pb.t == times[-1]
    v.on_key_press(key.L, 0)
    assert not pb.loop
    v.on_key_press(key.SPACE, 0)                    # at the end, stopped: plays from the start
    assert not pb.paused and pb.t == times[0]
    for _ in range(6):
        v.tick(1 / 60)
    assert pb.t == pytest.approx(times[0] + 0.1, abs=1e-12)
    assert world.time == pb.t
    assert "playing x1" in v.hud_text() and "stop at end" in v.hud_text()
    # selecting works, but a recording cannot be dragged
    p = v.camera.project(world.positions[1], *v.window.get_size())[0]
    v.on_mouse_press(p[0], p[1], 1, key.MOD_CTRL)
    assert v.selected == 1 and v.sim.drag is None


def test_a_recording_renders_offscreen(recording, tmp_path, gl_mode, capsys):
    from render.imagefiles import read_png
    out = tmp_path / "frames"
    assert main(["render", str(recording), "--out", str(out) + "/", "--fps", "10"]) == 0
    assert f"wrote {out}/ (6 frames" in capsys.readouterr().out
    frames = sorted(out.glob("*.png"))
    data = np.load(recording)
    duration = data["time"][-1] - data["time"][0]
    assert len(frames) == round(duration * 10) == 6
    imgs = [read_png(f) for f in frames]
    rgb = body_color(1)
    cs = np.array([centroid(colour_mask(img, rgb)) for img in imgs])
    dx = np.diff(cs[:, 0])
    assert np.all(dx > 3), cs                         # the ball moves right frame by frame
    assert cs[-1, 1] - cs[0, 1] > 10                  # and falls down the screen


def test_playback_does_not_offer_contacts_it_cannot_draw(make_viewer, key, recording):
    scene, pb = open_recording(recording)
    v = make_viewer(scene, playback=pb)
    assert "show contacts" not in v.help_text_shown()
    v.on_key_press(key.C, 0)
    assert not v.options.contacts
    assert "(recorded count, not drawn)" in v.hud_text()


def test_the_hud_time_is_the_time_of_the_pose_drawn(make_viewer, recording):
    """The HUD's text is refreshed a few times a second; its time must still be the drawn
    pose's, which the timeline shows every frame (it lagged the timeline by up to 0.25 s)."""
    scene, pb = open_recording(recording)
    v = make_viewer(scene, playback=pb)
    for _ in range(10):
        v.tick(1 / 60)
        v.draw_frame()
        assert v.timeline_label.text.split()[0] == f"{pb.t:.3f}"
        assert f"t {pb.t:.3f} / " in v.hud_label.text, (pb.t, v.hud_label.text)


@pytest.mark.parametrize("size", [(1280, 720), (800, 450)])
def test_the_help_leaves_a_recordings_timeline_uncovered(make_viewer, key, recording, size):
    """At 800x450 the help's two columns went below the HUD and down over the timeline's
    30 px, hiding the bar that the help's own "Click / drag timeline" line points at."""
    from render.viewer import TIMELINE_HEIGHT
    scene, pb = open_recording(recording)
    v = make_viewer(scene, playback=pb, size=size)
    v.on_key_press(key.H, 0)
    v.draw_frame()
    assert v.show_help and v.help_bg.y >= TIMELINE_HEIGHT, (v.help_bg.y, v.help_bg.height)
    assert v.help_label.font_size >= 9


@pytest.mark.parametrize("size", [(640, 360), (200, 120), (120, 80)])
def test_the_timeline_track_stays_in_small_windows(make_viewer, recording, size):
    """At 120x80 the time label took the window and the track began past its right edge
    (nothing to click); the label now takes a smaller font, or none, to leave the track
    room, and a click near its end still scrubs to the end."""
    scene, pb = open_recording(recording)
    v = make_viewer(scene, playback=pb, size=size)
    w, _ = v.window.get_size()
    v.draw_frame()
    x0, _, x1, _ = v.timeline_rect()
    assert 0 < x0 and x1 <= w and x1 - x0 >= min(60, w - 26), (x0, x1, w)
    label = v.timeline_label
    assert label.text == "" or label.x + label.content_width < x0
    v.on_mouse_press(x1 - 1, 10, 1, 0)
    v.on_mouse_release(x1 - 1, 10, 1, 0)
    assert pb.t > 0.95 * pb.end
