"""A four-wheeled car with motor-driven rear wheels and servo-steered front knuckles, driving a
slalom through a line of cones."""
import numpy as np

from physics import Box, Cylinder, Hinge, Plane, Slider

TITLE = "Car slalom"
DESCRIPTION = ("A box chassis on four cylinder wheels with sprung sliders: rear axle hinges "
               "with velocity motors, front wheels on steering knuckles (vertical hinges with "
               "servos); a pure-pursuit controller weaves it through a line of light cones.")
PARAMS = {"speed": 5.0, "cones": 6, "cone_spacing": 7.0, "amplitude": 1.6, "torque": 400.0,
          "friction": 1.0}
CAMERA = {"target": (8.0, 0.0, 0.5), "distance": 14.0, "yaw": -110, "pitch": 35}

WHEEL_RADIUS, WHEEL_HALF_WIDTH = 0.3, 0.1
WHEELBASE, TRACK = 1.4, 1.14           # axle to axle; wheel centre to wheel centre (m)
MAX_STEER = 0.5                        # rad
STEER_STIFFNESS, STEER_DAMPING = 3000.0, 100.0          # N m/rad, N m s/rad
SPRING_STIFFNESS, SPRING_DAMPING = 40000.0, 3000.0      # N/m, N s/m per wheel
SPRING_PRELOAD = 0.025      # m: the servo's rest length is this far below the start (the sag)


def build(world, speed=5.0, cones=6, cone_spacing=7.0, amplitude=1.6, torque=400.0,
          friction=1.0):
    """speed: target speed (m/s) the rear motors drive at; cones: number of cones, the first at
    x = 8 m, ``cone_spacing`` apart on y = 0; amplitude: sideways swing of the path (m) that
    passes them alternately left and right; torque: limit of each rear motor (N m)."""
    cones = int(cones)
    if cones < 0 or cone_spacing <= 0 or torque <= 0:
        raise ValueError("need cones >= 0, cone_spacing > 0 and torque > 0")
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
    for i in range(cones):
        world.add_body(Box((0.1, 0.1, 0.25)), mass=0.5, position=(x0 + i * cone_spacing, 0, 0.25),
                       friction=0.6, name=f"cone{i}")

    def path_y(x):
        """The slalom line: passes cone i at y = +amplitude for even i, -amplitude for odd."""
        ramp = np.clip((x - (x0 - 1.5 * cone_spacing)) / cone_spacing, 0.0, 1.0)
        fade = np.clip((x0 + (cones - 0.5) * cone_spacing - x) / cone_spacing + 1.0, 0.0, 1.0)
        return amplitude * ramp * fade * np.cos(np.pi * (x - x0) / cone_spacing)

    def pure_pursuit(world):
        R = chassis.rotation
        heading = R[:, 0]
        rear = chassis.position + R @ np.array([x_rear, 0.0, 0.0])
        look = max(3.0, 0.8 * speed)
        tx = rear[0] + look
        alpha = np.arctan2(path_y(tx) - rear[1], tx - rear[0]) - np.arctan2(heading[1], heading[0])
        delta = np.clip(np.arctan2(2 * WHEELBASE * np.sin(alpha), look), -MAX_STEER, MAX_STEER)
        # Ackermann: the inner wheel turns more, both wheels' axes meet on the rear axle line
        if abs(delta) > 1e-4:
            turn = WHEELBASE / np.tan(delta)                     # signed radius, + turns left
            angles = (np.arctan(WHEELBASE / (turn - y_side)), np.arctan(WHEELBASE / (turn + y_side)))
        else:
            angles = (delta, delta)
        for joint, a in zip(steer, angles):
            joint.set_servo(float(a), STEER_STIFFNESS, STEER_DAMPING, 1000.0)

    pure_pursuit.path_y = path_y          # for tests and plots
    return pure_pursuit
