"""Internal faces of static boxes (collision.internal_faces): a floor of flush box tiles, and
walls standing on a floor, meet bodies as the union of their boxes."""
import numpy as np
import pytest

from physics import Box, Capsule, Plane, RotationLock, Sphere, World
from physics.collision.internal_faces import EXTENSION, covered_reach
from physics.math3d import quat_to_matrix


def _tiles(world, count=40, size=1.0, friction=0.0, start=-2, raised=None, thickness=0.5):
    """Flush static tiles ``size`` m long along x (2 m wide, ``thickness`` m deep, tops at
    z = 0), the first centred at x = start * size; ``raised``: (index, dz m) one tile set
    that much higher (and as much thicker, so that it stands on the same bottom)."""
    tiles = []
    for i in range(start, start + count):
        half, z = (size / 2, 1.0, thickness / 2), -thickness / 2
        if raised is not None and raised[0] == i:
            half, z = (size / 2, 1.0, (thickness + raised[1]) / 2), (raised[1] - thickness) / 2
        tiles.append(world.add_body(Box(half), static=True, position=(i * size, 0, z),
                                    friction=friction))
    return tiles


def _slide_cube(world, speed, seconds=1.5):
    """A frictionless 0.5 m cube (2 kg) settled on the floor at x = 0 and set sliding at
    ``speed`` m/s along +x: (distance travelled m, its x speed at the end m/s, its largest spin
    rad/s, the cosine of its tilt at the end)."""
    cube = world.add_body(Box((0.25, 0.25, 0.25)), mass=2.0, position=(0.0, 0, 0.25),
                          friction=0.0)
    world.step(3)
    start = cube.position[0]
    cube.linear_velocity = (speed, 0, 0)
    spin = 0.0
    for _ in range(round(seconds / world.dt)):
        world.step()
        spin = max(spin, np.linalg.norm(cube.angular_velocity))
    return cube.position[0] - start, cube.linear_velocity[0], spin, cube.rotation[2, 2]


@pytest.mark.parametrize("dt", [1 / 60, 1 / 240])
@pytest.mark.parametrize("speed", [0.5, 1.0, 3.0])
def test_frictionless_cube_slides_on_over_flush_tiles(speed, dt):
    # before: it caught its leading edge on the first join's side face and travelled 0.38,
    # 0.58, 1.43 m in 1.5 s (at 3 m/s it tipped over)
    world = World(dt=dt)
    _tiles(world)
    travelled, vx, spin, upright = _slide_cube(world, speed)
    assert travelled == pytest.approx(1.5 * speed, rel=0.01)
    assert vx == pytest.approx(speed, rel=1e-3)
    assert spin < 1e-3
    assert upright > 1.0 - 1e-6


@pytest.mark.parametrize("dt", [1 / 60, 1 / 240])
def test_ball_rolls_over_joins_without_hopping(dt):
    # before: a ball at 2 m/s over 0.5 m tiles hopped 4-6 mm at each join and was at 1.90
    # m/s after 3 s at dt 1/240, 1.20 at 1/60
    world = World(dt=dt)
    _tiles(world, count=32, size=0.5, friction=0.5)
    r = 0.1
    ball = world.add_body(Sphere(r), mass=1.0, position=(0, 0, r))
    ball.linear_velocity, ball.angular_velocity = (2, 0, 0), (0, 2 / r, 0)
    heights = []
    for _ in range(round(3 / dt)):
        world.step()
        heights.append(ball.position[2])
    assert max(heights) - r < 1e-4
    assert np.linalg.norm(ball.linear_velocity) == pytest.approx(2.0, rel=1e-3)


@pytest.mark.parametrize("dt", [1 / 60, 1 / 240])
def test_capsule_character_runs_over_joins_without_hopping(dt):
    # before: a yaw-locked capsule run at 3, 5 and 8 m/s hopped 5 to 91 mm at dt 1/60
    for speed in (3.0, 8.0):
        world = World(dt=dt)
        _tiles(world, friction=0.5)
        body = world.add_body(Capsule(0.3, 0.6), mass=80, position=(0.3, 0, 0.9))
        world.add_joint(RotationLock(None, body))
        world.step(10)
        heights = []
        for _ in range(round(3 / dt)):
            body.linear_velocity = (speed, 0, body.linear_velocity[2])
            world.step()
            heights.append(body.position[2])
        assert max(heights) - 0.9 < 1e-4, speed


def test_box_rests_across_a_join():
    world = World()
    _tiles(world, count=2, start=0, friction=0.5)
    box = world.add_body(Box((0.2, 0.2, 0.1)), mass=5.0, position=(0.5, 0.1, 0.1))
    world.step(240)
    assert 0.1 - box.position[2] < 1e-3
    assert np.linalg.norm(box.linear_velocity) < 1e-3
    assert box.rotation[2, 2] > 1.0 - 1e-6
    # each point is found once, by the tile it lies on
    assert len(world.contacts.point) == 4
    assert world.contacts.normal_force.sum() == pytest.approx(5.0 * 9.81, rel=1e-3)


def test_ball_into_the_corner_of_a_wall_standing_on_a_floor():
    # a wall standing on a floor box (its bottom face covered by the floor's top) against
    # the same wall sunk into a plane: one L-shaped solid. A frictionless ball slid along
    # the floor into the wall rebounds and rests alike
    results = []
    for floor in ("box", "plane"):
        world = World(dt=1 / 120)
        if floor == "box":
            world.add_body(Box((2.0, 2.0, 0.25)), static=True, position=(0, 0, -0.25),
                           friction=0.0)
            world.add_body(Box((0.1, 2.0, 0.5)), static=True, position=(1.0, 0, 0.5),
                           friction=0.0, restitution=0.5)
        else:
            world.add_body(Plane(), friction=0.0)
            world.add_body(Box((0.1, 2.0, 0.75)), static=True, position=(1.0, 0, 0.25),
                           friction=0.0, restitution=0.5)
        ball = world.add_body(Sphere(0.05), mass=1.0, position=(0.5, 0, 0.05), friction=0.0,
                              restitution=0.5)
        ball.linear_velocity = (2.0, 0, 0)
        track = []
        for _ in range(120):
            world.step()
            track.append(np.concatenate([ball.position, ball.linear_velocity]))
        results.append(np.array(track))
    box, plane = results
    assert np.abs(box - plane).max() < 1e-6
    assert box[-1, 3] == pytest.approx(-1.0, abs=0.02)    # rebounded at half its speed
    assert np.abs(box[:, 2] - 0.05).max() < 1e-4          # on the floor all along


def _pushed_out_of_face(world, tile):
    """The x velocity (m/s) of a ball made 5 mm into ``tile``'s +x face, below its top, after
    a step (a face pushes it out along +x; a face taken for covered does not). The ball
    collides with bodies of group 1 alone."""
    edge = tile.position[0] + 0.5
    ball = world.add_body(Sphere(0.05), mass=1.0, position=(edge + 0.045, 0, -0.2))
    ball.collision_mask = 1
    world.step()
    return ball.linear_velocity[0]


def test_step_up_is_still_met():
    # a tile 1 cm higher (and as much thicker) covers its lower neighbour's face, not the
    # other way round: a cube slid at 1 m/s trips on the step's face
    world = World()
    _tiles(world, raised=(2, 0.01))
    travelled, vx, _, _ = _slide_cube(world, 1.0)
    assert travelled < 1.26           # the step's face is at x = 1.5, the cube's front at 0.25
    assert vx < 0.5


def test_faces_covered_in_part_are_not_grown():
    # tiles offset sideways by 0.5 m: each +x face is half covered, and keeps its face
    half = np.array([[0.5, 1.0, 0.25]] * 2)
    position = np.array([[0.0, 0.0, -0.25], [1.0, 0.5, -0.25]])
    rotation = np.repeat(np.eye(3)[None], 2, axis=0)
    assert not covered_reach(half, position, rotation).any()
    # the flush pair: each grows across the face the other covers, by EXTENSION at most
    position[1, 1] = 0.0
    reach = covered_reach(half, position, rotation)
    assert reach[0, 1, 0] == EXTENSION and reach[1, 0, 0] == EXTENSION
    assert np.count_nonzero(reach) == 2
    # a thin neighbour: by its thickness
    half[1, 0], position[1, 0] = 0.02, 0.52
    assert covered_reach(half, position, rotation)[0, 1, 0] == pytest.approx(0.04)
    # a neighbour turned a quarter turn about z (its y axis along x) is aligned; one turned
    # 10 degrees is not
    half[1] = (1.0, 0.5, 0.25)
    position[1] = (1.0, 0.0, -0.25)
    quarter = quat_to_matrix(np.array([[np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]]))[0]
    rotation[1] = quarter
    assert covered_reach(half, position, rotation)[0, 1, 0] == EXTENSION
    rotation[1] = quat_to_matrix(np.array([[np.cos(0.087), 0, 0, np.sin(0.087)]]))[0]
    assert not covered_reach(half, position, rotation)[0, 1, 0]


def test_partly_covered_join_still_trips():
    # the second tile shifted 0.5 m sideways: its join is not internal (the guard above, in
    # motion), and a cube slid over it at 1 m/s trips as it did before
    world = World()
    world.add_body(Box((0.5, 1.0, 0.25)), static=True, position=(0, 0, -0.25), friction=0.0)
    world.add_body(Box((0.5, 1.0, 0.25)), static=True, position=(1.0, 0.5, -0.25),
                   friction=0.0)
    travelled, vx, _, _ = _slide_cube(world, 1.0)
    assert vx < 0.5


def test_removing_or_moving_a_tile_exposes_the_face_again():
    for change in ("remove", "move", "kinematic"):
        world = World()
        first, second = _tiles(world, count=2, start=0)
        world.step()                                 # (the join found internal)
        if change == "remove":
            world.remove_body(second)
        elif change == "move":
            second.position = second.position + (0, 3.0, 0)
        else:
            # a static body that moves neither grows nor covers: one sliding sideways (in
            # a group the ball does not meet)
            second.collision_group = 2
            second.linear_velocity = (0, 1e-3, 0)
            world.step()
        assert _pushed_out_of_face(world, first) > 0.05, change


def test_kinematic_tile_does_not_cover():
    # a tile sliding sideways in its own plane stays flush but moves: the join keeps its
    # face, and the cube trips on it as it did on any join before
    world = World()
    tiles = _tiles(world)
    tiles[3].linear_velocity = (0, 1e-4, 0)
    travelled, vx, _, _ = _slide_cube(world, 1.0)
    assert vx < 0.5


def test_tile_added_later_joins_the_floor():
    world = World()
    _tiles(world, count=1, start=0)
    world.step()
    _tiles(world, count=30, start=1)
    travelled, vx, _, upright = _slide_cube(world, 3.0)
    assert travelled == pytest.approx(4.5, rel=0.01)
    assert upright > 1.0 - 1e-6


def test_floor_stays_joined_as_bodies_come_and_go():
    # bodies added (the grown floor is carried to the new model) and removed before the
    # tiles (their rows move down: the floor is found again)
    world = World()
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(-1.0, 0, 0.1))
    _tiles(world)
    world.step()
    for k in range(3):
        world.add_body(Sphere(0.05), mass=0.1, position=(-1.5, 0.5 + 0.2 * k, 0.05))
        world.step()
    world.remove_body(ball)
    travelled, vx, _, upright = _slide_cube(world, 3.0)
    assert travelled == pytest.approx(4.5, rel=0.01)
    assert upright > 1.0 - 1e-6


def test_box_over_a_removed_tile_falls():
    # a box resting across the join of the middle tile and its right neighbour, whose
    # neighbours are both moved away (the middle tile's grown box shrinks about the same
    # centre, so the resting pair would keep the contacts it found on it, those over the
    # moved tile included): from the next step it has no contact beyond the tile, and it
    # tips off the edge
    world = World()
    left, middle, right = _tiles(world, count=3, start=-1, friction=0.5)
    box = world.add_body(Box((0.2, 0.2, 0.1)), mass=2.0, position=(0.55, 0, 0.1))
    world.step(60)
    assert box.position[2] == pytest.approx(0.1, abs=1e-3)
    left.position = (-1.0, 0, -5.25)
    right.position = (1.0, 0, -5.25)
    world.step()
    assert world.contacts.point[:, 0].max() <= 0.5 + 1e-6
    world.step(120)
    assert box.position[2] < -0.2


def _slide_over(world, speed, direction=1.0, start=0.3):
    """A frictionless 0.5 m cube (2 kg) settled at x = ``start`` and slid at ``speed`` m/s
    along ``direction`` * x for 1.5 s: (distance m, its largest spin rad/s)."""
    cube = world.add_body(Box((0.25, 0.25, 0.25)), mass=2.0, position=(start, 0, 0.25),
                          friction=0.0)
    world.step(3)
    x0 = cube.position[0]
    cube.linear_velocity = (direction * speed, 0, 0)
    spin = 0.0
    for _ in range(round(1.5 / world.dt)):
        world.step()
        spin = max(spin, np.linalg.norm(cube.angular_velocity))
    return abs(cube.position[0] - x0), spin


@pytest.mark.parametrize("dt", [1 / 60, 1 / 240])
@pytest.mark.parametrize("thick", [(0.01, 0.5), (0.1, 0.11), (0.001, 0.1)])
def test_flush_tops_of_different_thickness_join(thick, dt):
    # 1 m tiles of alternate thicknesses, tops at z = 0: the thin tile's face is wholly
    # covered, the thick one's only in its top band. before: the cube slid at 3 m/s tripped
    # on the first join (1.72 m travelled at dt 1/60, 1.94 at 1/240, spun at 4.5 rad/s) and
    # a ball rolled at 2 m/s hopped 7.06 mm (0.52 at 1/240)
    def level():
        world = World(dt=dt)
        for i in range(8):
            t = thick[i % 2]
            world.add_body(Box((0.5, 0.5, t / 2)), static=True, position=(i + 0.5, 0, -t / 2),
                           friction=0.0)
        return world
    for direction, start in ((1.0, 0.3), (-1.0, 7.7)):
        travelled, spin = _slide_over(level(), 3.0, direction, start)
        assert travelled == pytest.approx(4.5, rel=1e-3)
        assert spin < 1e-3
    world = level()
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(0.3, 0, 0.1), friction=0.5)
    ball.linear_velocity, ball.angular_velocity = (2, 0, 0), (0, 20, 0)
    heights = []
    for _ in range(round(1.5 / dt)):
        world.step()
        heights.append(ball.position[2])
    assert max(heights) - 0.1 < 1e-4


def test_two_tiles_beside_one_long_tile_join():
    # two 1 m tiles side by side flush with a 2 m tile: each small tile's face is wholly
    # covered by the long one's, which is covered by the two together. before: the cube slid
    # at 1 m/s tripped (0.72 m travelled, 0.26 m/s), at 3 m/s travelled 1.72 m and spun
    for y in (0.0, 0.5):
        world = World(dt=1 / 60)
        for x in (0.5, 2.5):
            for side in (-0.5, 0.5):
                world.add_body(Box((0.5, 0.5, 0.25)), static=True, position=(x, side, -0.25),
                               friction=0.0)
        world.add_body(Box((0.5, 1.0, 0.25)), static=True, position=(1.5, 0, -0.25),
                       friction=0.0)
        world.add_body(Box((2.0, 1.0, 0.25)), static=True, position=(5.0, 0, -0.25),
                       friction=0.0)
        cube = world.add_body(Box((0.25, 0.25, 0.25)), mass=2.0, position=(0.3, y, 0.25),
                              friction=0.0)
        world.step(3)
        cube.linear_velocity = (3.0, 0, 0)
        spin = 0.0
        for _ in range(90):
            world.step()
            spin = max(spin, np.linalg.norm(cube.angular_velocity))
        assert cube.position[0] == pytest.approx(4.8, abs=5e-3)
        assert spin < 1e-3


def test_box_against_a_wall_on_a_floor_keeps_its_floor():
    # the floor's top is covered in part by the wall's bottom: a box resting on the floor
    # and pushed against the wall keeps the floor under its corners at the wall (a guard:
    # its corners there are claimed by the wall's region unless no further from the wall's
    # side than they are deep, PartCover)
    world = World()
    world.add_body(Box((2, 2, 0.25)), static=True, position=(0, 0, -0.25))
    world.add_body(Box((0.1, 2, 0.5)), static=True, position=(1.0, 0, 0.5))
    box = world.add_body(Box((0.2, 0.2, 0.2)), mass=2.0, position=(0.7, 0, 0.2),
                         friction=0.0)
    for _ in range(240):
        box.apply_force((20.0, 0, 0))
        world.step()
    assert box.position[2] == pytest.approx(0.2, abs=1e-3)
    assert box.rotation[2, 2] > 1.0 - 1e-6
    assert world.contacts.normal_force[world.contacts.normal[:, 2] > 0.9].sum() == \
        pytest.approx(2.0 * 9.81, rel=1e-3)


def _slide_along(world, direction, start, speed=3.0, seconds=1.5):
    """A frictionless 0.5 m cube (2 kg) turned like the tiles (yaw about z), settled at
    ``start`` (m, on tiles with tops at z = 0) and slid at ``speed`` m/s along ``direction``
    (unit, horizontal): (distance along it m, its largest spin rad/s)."""
    yaw = np.arctan2(direction[1], direction[0])
    cube = world.add_body(Box((0.25, 0.25, 0.25)), mass=2.0,
                          position=(start[0], start[1], 0.25),
                          orientation=(np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)), friction=0.0)
    world.step(3)
    p0 = cube.position.copy()
    cube.linear_velocity = speed * np.asarray(direction)
    spin = 0.0
    for _ in range(round(seconds / world.dt)):
        world.step()
        spin = max(spin, np.linalg.norm(cube.angular_velocity))
    return (cube.position - p0) @ np.asarray(direction), spin


@pytest.mark.parametrize("level", ["turned 2e-9 rad", "room yawed 30 deg, float32",
                                   "0.3 m tiles at x = 300 m, float32"])
def test_joins_survive_float_rounding_of_level_data(level):
    # before: the join was lost (alignment tested entry by entry to 1e-9, faces to 1 um):
    # the cube tripped and spun at 4.6 rad/s (3.10, 2.41, 0.98 m travelled of 4.5)
    world = World(dt=1 / 60)
    direction, start = np.array([1.0, 0.0, 0.0]), np.zeros(3)
    if level == "turned 2e-9 rad":
        for i in range(8):
            yaw = 2e-9 if i == 1 else 0.0
            world.add_body(Box((0.5, 1.0, 0.05)), static=True, position=(i, 0, -0.05),
                           orientation=(np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)),
                           friction=0.0)
    elif level == "room yawed 30 deg, float32":
        th = np.radians(30.0)
        direction = np.array([np.cos(th), np.sin(th), 0.0])
        for i in range(8):
            yaw = th + (i % 4) * np.pi / 2                    # tiles turned for variety
            q = np.array([np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)], dtype=np.float32)
            world.add_body(Box((0.5, 0.5, 0.05)), static=True,
                           position=direction * i + (0, 0, -0.05),
                           orientation=q.astype(float), friction=0.0)
    else:
        x0 = 300.0
        for i in range(24):
            x = np.float32(x0 + 0.3 * i)
            world.add_body(Box((0.15, 1.0, 0.05)), static=True,
                           position=(float(x), 0, -0.05), friction=0.0)
        start = np.array([x0, 0.0, 0.0])
    travelled, spin = _slide_along(world, direction, start)
    assert travelled == pytest.approx(4.5, rel=1e-3)
    assert spin < 1e-3


def test_tile_turned_a_milliradian_is_not_joined():
    # its corners move 0.5 mm: beyond COVER_TOL, so its join keeps its face
    half = np.array([[0.5, 0.5, 0.25]] * 2)
    position = np.array([[0.0, 0.0, -0.25], [1.0, 0.0, -0.25]])
    rotation = np.repeat(np.eye(3)[None], 2, axis=0)
    rotation[1] = quat_to_matrix(np.array([[np.cos(5e-4), 0, 0, np.sin(5e-4)]]))[0]
    assert not covered_reach(half, position, rotation).any()
    rotation[1] = quat_to_matrix(np.array([[np.cos(5e-5), 0, 0, np.sin(5e-5)]]))[0]
    assert covered_reach(half, position, rotation)[0, 1, 0] == EXTENSION


def test_faces_found_again_around_changed_boxes_match_a_full_recompute():
    # a floor of 12 x 12 tiles of two thicknesses (faces covered wholly and in part), a
    # wall on it and tiles turned a quarter: one tile teleported, one slid a little, one
    # made thinner, one wall block turned; the update (only around them) matches
    # covered_reach of the whole level bit for bit
    from physics.collision.internal_faces import Faces, updated_reach
    rng = np.random.default_rng(7)
    half, position, rotation = [], [], []
    quarter = quat_to_matrix(np.array([[np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]]))[0]
    for ix in range(12):
        for iy in range(12):
            t = (0.05, 0.3)[(ix + iy) % 2]
            half.append((0.5, 0.5, t / 2))
            position.append((ix, iy, -t / 2))
            rotation.append(quarter if rng.random() < 0.3 else np.eye(3))
    for iy in range(12):
        half.append((0.1, 0.5, 0.5))
        position.append((3.0, iy, 0.5))
        rotation.append(np.eye(3))
    half, position, rotation = np.array(half), np.array(position), np.array(rotation)
    faces = Faces(np.arange(len(half)), position, rotation, half,
                  *covered_reach(half, position, rotation, parts=True))
    assert faces.cover.claims_b.size and faces.reach.any()
    half2, position2, rotation2 = half.copy(), position.copy(), rotation.copy()
    position2[17] += (40.0, 3.0, 0.0)                      # teleported
    position2[30, 0] += 0.3                                # slid half way over a neighbour
    half2[50, 2], position2[50, 2] = 0.01, -0.01           # made thin, top kept
    rotation2[150] = quarter                               # a wall block turned
    updated = updated_reach(faces, half2, position2, rotation2)
    full = covered_reach(half2, position2, rotation2, parts=True)
    assert updated is not None
    assert np.array_equal(updated[0], full[0])
    for name in ("part", "low", "high", "claims_b", "claims_a", "claims_face"):
        assert np.array_equal(getattr(updated[1], name), getattr(full[1], name)), name
    assert not np.array_equal(full[0], faces.reach)


def test_level_edited_between_steps_is_found_again_around_the_edits(monkeypatch):
    # tiles removed, added and moved between steps: the faces are found again around them
    # alone (no full recompute) and match a full recompute bit for bit
    from physics.collision import internal_faces
    world = World()
    ball = world.add_body(Sphere(0.1), mass=1.0, position=(2.0, 2.0, 0.1))
    tiles = []
    for ix in range(8):
        for iy in range(8):
            t = (0.05, 0.3)[(ix * 3 + iy) % 2]
            tiles.append(world.add_body(Box((0.5, 0.5, t / 2)), static=True,
                                        position=(ix, iy, -t / 2)))
    world.step()
    full = internal_faces.covered_reach

    def no_full_recompute(*args, **kwargs):
        raise AssertionError("found again in full")
    monkeypatch.setattr(internal_faces, "covered_reach", no_full_recompute)
    for edit in ("remove", "remove two", "add", "move", "remove a dynamic body"):
        if edit == "remove":
            world.remove_body(tiles.pop(20))
        elif edit == "remove two":
            world.remove_body(tiles.pop(40))
            world.remove_body(tiles.pop(3))
        elif edit == "add":
            tiles.append(world.add_body(Box((0.5, 0.5, 0.025)), static=True,
                                        position=(8, 3, -0.025)))
        elif edit == "move":
            tiles[10].position = tiles[10].position + (0.0, 0.0, 0.02)
        else:
            world.remove_body(ball)
        world.step()
        faces = world._compiled.pair_cache.faces
        assert np.array_equal(faces.rows, [t.row for t in tiles]), edit
        reach, cover = full(faces.half, faces.position, faces.rotation, parts=True)
        assert np.array_equal(faces.reach, reach), edit
        for name in ("part", "low", "high", "claims_b", "claims_a", "claims_face"):
            assert np.array_equal(getattr(faces.cover, name), getattr(cover, name)), (edit, name)
