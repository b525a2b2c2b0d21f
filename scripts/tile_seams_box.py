# A frictionless box (0.5 m cube, 2 kg) set sliding at v m/s over a floor of flush 1 m static box tiles (tops at z = 0),
# against one long static box as control. Expected (frictionless, flush floor): slides on at v, flat, x = v t.
# README (Contacts) documents only a rolling ball's 4-6 mm hops at the joins.
import numpy as np, sys
from physics import World, Box
for dt in [1/60, 1/240]:
  for tiles in [True, False]:
    row=[]
    for v in [0.5, 1.0, 3.0]:
        w = World(dt=dt)
        if tiles:
            for i in range(-2, 40): w.add_body(Box((0.5, 2, 0.5)), static=True, position=(i*1.0, 0, -0.5), friction=0.0)
        else: w.add_body(Box((21, 2, 0.5)), static=True, position=(19, 0, -0.5), friction=0.0)
        bx = w.add_body(Box((0.25,0.25,0.25)), mass=2, position=(0.0,0,0.25), friction=0.0)
        w.step(3); x0 = bx.position[0]; bx.linear_velocity=(v,0,0)
        wmax=0
        for k in range(int(1.5/dt)): w.step(); wmax=max(wmax, abs(bx.angular_velocity[1]))
        row.append(f"v {v}: travelled {bx.position[0]-x0:.2f} m (expect {1.5*v:.2f}), vx {bx.linear_velocity[0]:.2f}, max spin {wmax:.2f} rad/s, upright cos {bx.rotation[2,2]:.2f}")
    print(f"dt 1/{round(1/dt)} {'TILES  ' if tiles else 'one box'}: " + " | ".join(row))
