"""The viewer when a scene's controller removes bodies: the selection, the camera's follow and
the mouse's drag hold the body itself, not its index (a viewer explorer's finding: the HUD
raised IndexError past the end of world.bodies, a drag raised "... has been removed" and
paused the viewer as if the engine had failed, and the selection moved on to whichever body
took the removed one's index)."""
import numpy as np

from physics import Ball, Plane, Sphere, World


def removing_scene(removed_name: str, at: float = 0.1, pair=False):
    """Ground, 'early' and 'late' spheres (and with ``pair`` a 'partner' jointed to 'late'
    by a ball joint); a controller removes the body ``removed_name`` once t > ``at``."""
    world = World(gravity=(0, 0, 0), dt=1 / 240)
    world.add_body(Plane(normal=(0, 0, 1)), name="ground")
    world.add_body(Sphere(0.2), mass=1.0, position=(-1.0, 0, 1.0), name="early")
    late = world.add_body(Sphere(0.3), mass=1.0, position=(0.6, 0, 1.0), name="late")
    if pair:
        partner = world.add_body(Sphere(0.2), mass=3.0, position=(1.2, 0, 1.0), name="partner")
        world.add_joint(Ball(late, partner, anchor=(0.9, 0, 1.0)))
    state = {"body": world.body(removed_name)}

    def controller(world):
        if state["body"] is not None and world.time > at:
            world.remove_body(state["body"])
            state["body"] = None

    return {"world": world, "title": "removal", "controller": controller,
            "camera": {"target": (0, 0, 1), "distance": 6, "yaw": -90, "pitch": 0}}


def grab(v, mouse, key, name):
    """Ctrl-press on the body ``name``: selects it and starts a drag."""
    w, h = v.window.get_size()
    body = v.world.body(name)
    x, y = v.camera.project(body.position, w, h)[0]
    v.on_mouse_press(x, y, mouse.LEFT, key.MOD_CTRL)
    assert v.world.bodies[v.selected] is body and v.sim.drag is not None
    return x, y


def test_removing_the_selected_followed_dragged_body_drops_it_with_a_note(make_viewer, mouse,
                                                                          key):
    v = make_viewer(removing_scene("late"))
    x, y = grab(v, mouse, key, "late")
    v.on_key_press(key.T, 0)
    assert v.follow
    for k in range(30):                      # 0.5 s: removed at 0.1 s
        v.on_mouse_drag(x, y + k, 0, 1, mouse.LEFT, key.MOD_CTRL)
        v.tick(1 / 60)
        v.draw_frame()
    assert v.world.time > 0.4, "the viewer stopped stepping"
    assert v.sim.error is None and not v.sim.paused
    assert v.selected is None and v.selected_body is None and not v.follow
    assert v.sim.drag is None
    hud = v.hud_text()
    assert "selected #" not in hud
    assert "the scene removed the body 'late' (selected, followed, dragged)" in hud
    v.on_mouse_release(x, y, mouse.LEFT, key.MOD_CTRL)


def test_the_selection_and_follow_stay_on_their_body_when_an_earlier_one_goes(make_viewer,
                                                                             mouse, key):
    v = make_viewer(removing_scene("early"))
    v.selected = 2                         # 'late', as a ctrl-click selects it
    late = v.world.body("late")
    late.linear_velocity = (0.5, 0, 0)
    v.on_key_press(key.T, 0)
    for _ in range(12):                    # 0.2 s: 'early' (index 1) removed at 0.1 s
        v.tick(1 / 60)
    assert v.selected_body is late and v.selected == 1 and v.follow
    np.testing.assert_allclose(v.camera.target, late.position)
    assert "selected #1 'late' Sphere  (following)" in v.hud_text()
    assert "removed" not in v.hud_text()


def test_a_drag_keeps_damping_its_own_island_when_an_earlier_body_goes(make_viewer, mouse, key):
    """The drag's island (here 'late' and its jointed 'partner') is held by handles: by
    indices, the damping pushed the bodies that took them, or indexed past the end."""
    v = make_viewer(removing_scene("early", pair=True))
    x, y = grab(v, mouse, key, "late")
    drag = v.sim.drag
    assert sorted(drag.island.tolist()) == [2, 3]
    for k in range(24):                    # 0.4 s: 'early' removed at 0.1 s
        v.on_mouse_drag(x, y + 2 * k, 0, 2, mouse.LEFT, key.MOD_CTRL)
        v.tick(1 / 60)
    assert v.sim.error is None and v.sim.drag is drag
    assert sorted(drag.island.tolist()) == [1, 2]
    assert [b.name for b in drag.island_bodies] == ["late", "partner"]
    ground = v.world.body("ground")
    assert np.all(ground.position == 0)
    # pulled up the screen: the pair has risen (no other body took its pull)
    assert v.world.body("late").position[2] > 1.05


def test_r_on_a_world_whose_controller_removed_a_body_says_so_instead_of_raising(make_viewer,
                                                                               key, capsys):
    """A World handed to the Viewer with a controller gets its start snapshot back on R; once
    the controller had removed a body, set_state's ValueError went out of the key handler
    (closing the viewer). It is shown as other errors are, paused."""
    spec = removing_scene("late")
    v = make_viewer(spec["world"], controller=spec["controller"])
    for _ in range(12):
        v.tick(1 / 60)
    assert len(v.world.bodies) == 2
    assert v.on_key_press(key.R, 0)
    assert v.sim.paused and "restoring the start (R): ValueError: state was taken" in \
        v.hud_text()
    assert "Bodies removed since cannot be restored" in capsys.readouterr().err
    v.draw_frame()
