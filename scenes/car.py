"""A four-wheeled car with motor-driven rear wheels and servo-steered front knuckles, driving a
slalom through a line of gates, then braking to a stop past the last one.

Gate i is the opening between cone i (a light box on y = 0 at x = 8 + i * cone_spacing) and a
static post ``gate_width`` further out, on the left (+y) for even i and on the right for odd i;
the car has to pass through each with its wheels clear of both (its width over the wheels is
TRACK + 2 WHEEL_HALF_WIDTH = 1.34 m). The controller returned by ``build`` carries ``gates``
(x, side, inner edge y, outer edge y), ``path_y``, ``chassis``, ``wheels``, ``drive``,
``steer`` and ``stop_x`` (past it the rear motors hold their wheels still) for tests and plots.
"""
import numpy as np

from physics import Box, Cylinder, Hinge, Plane, Slider

TITLE = "Car slalom"
DESCRIPTION = ("A box chassis on four cylinder wheels with sprung sliders: rear axle hinges "
               "with velocity motors, front wheels on steering knuckles (vertical hinges with "
               "servos); a Stanley controller weaves it through gates left and right of a "
               "line of light cones, and it brakes to a stop past the last.")
PARAMS = {"speed": 5.0, "cones": 5, "cone_spacing": 7.0, "amplitude": 1.6, "torque": 400.0,
          "friction": 1.0, "gate_width": 3.0}
CAMERA = {"target": (20.0, 0.0, 0.0), "distance": 33.0, "yaw": -90, "pitch": 40}

WHEEL_RADIUS, WHEEL_HALF_WIDTH = 0.3, 0.1
WHEELBASE, TRACK = 1.4, 1.14           # axle to axle; wheel centre to wheel centre (m)
MAX_STEER = 0.5                        # rad
STEER_STIFFNESS, STEER_DAMPING = 3000.0, 100.0          # N m/rad, N m s/rad
SPRING_STIFFNESS, SPRING_DAMPING = 40000.0, 3000.0      # N/m, N s/m per wheel
SPRING_PRELOAD = 0.025      # m: the servo's rest length is this far below the start (the sag)
CONE_HALF, POST_HALF = 0.1, 0.05       # half sizes of the cones and the gates' outer posts (m)
STANLEY_GAIN, STANLEY_SOFT = 3.0, 1.0  # cross-track gain (1/s) and softening speed (m/s)


def build(world, speed=5.0, cones=5, cone_spacing=7.0, amplitude=1.6, torque=400.0,
          friction=1.0, gate_width=3.0):
    """A 300 kg box chassis on four 15 kg cylinder wheels (radius 0.3 m) on sprung sliders,
    rear wheels driven by motors and front ones steered by servos, driven by a Stanley
    controller through a slalom of gates along +x; once its back is past the last gate, the
    rear motors brake it to a stop (3 m on, with the defaults).

    Parameters:
        speed (m/s): the target speed the rear motors drive at (wheel rate speed / 0.3 m,
            split between the two by an electronic differential in turns).
        cones (count): how many cones and gates (0 to 100), the first at x = 8 m.
        cone_spacing (m): distance between cones along x (on y = 0).
        amplitude (m): the sideways swing of the line the controller follows, which passes
            the cones alternately left and right (1.6 m is the middle of a 3 m gate).
        torque (N m): the most each rear motor applies.
        friction (-): Coulomb friction coefficient of the ground (the wheels have the
            same).
        gate_width (m): the clear opening between a cone and its gate's outer post.
    """
    cones = int(cones)
    if not 0 <= cones <= 100 or cone_spacing <= 0 or torque <= 0 or gate_width <= 0:
        raise ValueError(f"need 0 <= cones <= 100, cone_spacing > 0, torque > 0 and "
                         f"gate_width > 0, got {cones}, {cone_spacing}, {torque}, {gate_width}")
    world.add_body(Plane(), friction=friction, name="ground")
    r = WHEEL_RADIUS
    chassis = world.add_body(Box((1.0, 0.45, 0.15)), mass=300.0, position=(0, 0, r + 0.15),
                             friction=0.5, name="chassis")
    axis_y = (0.0, 1.0, 0.0)
    wheel_q = (np.cos(-np.pi / 4), np.sin(-np.pi / 4), 0.0, 0.0)     # local z onto world y
    x_front, x_rear, y_side = 0.5 * WHEELBASE, -0.5 * WHEELBASE, 0.5 * TRACK
    drive, steer, wheels = [], [], {}
    up = (0.0, 0.0, 1.0)
    for label, x in (("front", x_front), ("rear", x_rear)):
        for side, y in (("l", y_side), ("r", -y_side)):
            c = np.array([x, y, r])
            wheel = world.add_body(Cylinder(r, WHEEL_HALF_WIDTH), mass=15.0, position=c,
                                   orientation=wheel_q, friction=friction,
                                   name=f"wheel_{label}_{side}")
            wheels[f"{label}_{side}"] = wheel
            # suspension: a shapeless hub on a vertical slider with a spring-damper servo,
            # so each wheel carries its own load (four rigid wheels would make the contact
            # forces indeterminate); the front hubs hang from steering knuckles
            mount = chassis
            if label == "front":
                knuckle = world.add_body(None, mass=3.0, inertia=(0.02, 0.02, 0.02), position=c,
                                         name=f"knuckle_{side}")
                k = world.add_joint(Hinge(chassis, knuckle, anchor=c, axis=(0, 0, 1),
                                          limits=(-MAX_STEER - 0.05, MAX_STEER + 0.05),
                                          name=f"steer_{side}"))
                k.set_servo(0.0, STEER_STIFFNESS, STEER_DAMPING, 1000.0)
                steer.append(k)
                mount = knuckle
                world.ignore_collision(chassis, wheel)     # it swings close when steered
            hub = world.add_body(None, mass=3.0, inertia=(0.02, 0.02, 0.02), position=c,
                                 name=f"hub_{label}_{side}")
            spring = world.add_joint(Slider(mount, hub, anchor=c, axis=up,
                                            limits=(-0.08, 0.08), name=f"spring_{label}_{side}"))
            spring.set_servo(SPRING_PRELOAD, SPRING_STIFFNESS, SPRING_DAMPING)
            world.ignore_collision(chassis, wheel)
            j = world.add_joint(Hinge(hub, wheel, anchor=c, axis=axis_y,
                                      name=f"axle_{label}_{side}"))
            if label == "rear":
                j.set_motor(speed / r, torque)
                drive.append(j)
    x0 = 8.0
    gates = []
    for i in range(cones):
        x, side = x0 + i * cone_spacing, (1.0 if i % 2 == 0 else -1.0)
        world.add_body(Box((CONE_HALF, CONE_HALF, 0.25)), mass=0.5, position=(x, 0, 0.25),
                       friction=0.6, name=f"cone{i}")
        # the gate's outer post: static, so it costs no contacts until something hits it
        outer = side * (CONE_HALF + gate_width)
        world.add_body(Box((POST_HALF, POST_HALF, 0.5)), static=True,
                       position=(x, outer + side * POST_HALF, 0.5), name=f"post{i}")
        gates.append((x, side, side * CONE_HALF, outer))

    def path_y(x):
        """The slalom line: passes cone i at y = +amplitude for even i, -amplitude for odd."""
        ramp = np.clip((x - (x0 - 1.5 * cone_spacing)) / cone_spacing, 0.0, 1.0)
        fade = np.clip((x0 + (cones - 0.5) * cone_spacing - x) / cone_spacing + 1.0, 0.0, 1.0)
        return amplitude * ramp * fade * np.cos(np.pi * (x - x0) / cone_spacing)

    # where the car brakes: its back (1 m behind the chassis' centre) half a metre past the
    # last gate (with no gates, where one would have been)
    stop_x = x0 + (cones - 1) * cone_spacing + 1.5

    def controller(world):
        """Stanley steering (Hoffmann et al. 2007): the front axle's velocity is turned onto the
        line's heading plus a cross-track correction; Ackermann front angles; an electronic
        differential on the rear motors."""
        R = chassis.rotation
        heading = np.arctan2(R[1, 0], R[0, 0])
        front = chassis.position + R @ np.array([x_front, 0.0, 0.0])
        e = 0.05
        ys = path_y(np.array([front[0] - e, front[0], front[0] + e]))
        path_heading = np.arctan((ys[2] - ys[0]) / (2 * e))
        cross_track = (front[1] - ys[1]) * np.cos(path_heading)     # + : left of the line
        v = abs(float(chassis.linear_velocity @ R[:, 0]))
        heading_error = np.angle(np.exp(1j * (heading - path_heading)))
        delta = -heading_error - np.arctan2(STANLEY_GAIN * cross_track, v + STANLEY_SOFT)
        delta = float(np.clip(delta, -MAX_STEER, MAX_STEER))
        # Ackermann: the inner wheel turns more, both wheels' axes meet on the rear axle line
        turn = WHEELBASE / np.tan(delta) if abs(delta) > 1e-4 else np.inf   # + turns left
        if np.isfinite(turn):
            angles = (np.arctan(WHEELBASE / (turn - y_side)),
                      np.arctan(WHEELBASE / (turn + y_side)))
        else:
            angles = (delta, delta)
        for joint, a in zip(steer, angles):
            joint.set_servo(float(a), STEER_STIFFNESS, STEER_DAMPING, 1000.0)
        # past the course, a brake: the rear motors hold their wheels still
        if chassis.position[0] > stop_x:
            for joint in drive:
                joint.set_motor(0.0, torque)
            return
        # electronic differential: each rear wheel at the speed of its own arc about the
        # turn centre, so the wheels do not scrub against each other
        for joint, y in zip(drive, (y_side, -y_side)):
            scale = 1.0 - y / turn if np.isfinite(turn) else 1.0
            joint.set_motor(speed * scale / r, torque)

    controller.path_y = path_y            # for tests and plots
    controller.gates = gates              # (x, side, inner edge y, outer edge y) per gate
    controller.drive, controller.steer, controller.wheels = drive, steer, wheels
    controller.chassis, controller.stop_x = chassis, stop_x
    return controller
