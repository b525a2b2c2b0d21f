# A yaw-locked capsule character (r 0.3, half length 0.6, 80 kg) run at v m/s (velocity set every frame, vz kept) over flush
# 1 m static box tiles (tops at z=0), friction 0.5. Expected: z stays 0.9 (flat, flush floor). Control: one long static box.
import numpy as np
from physics import World, Capsule, Box, RotationLock
for dt in [1/60, 1/240]:
  for tiles in [True, False]:
    row=[]
    for speed in [3.0, 5.0, 8.0]:
        w = World(dt=dt)
        if tiles:
            for i in range(-2, 40): w.add_body(Box((0.5, 2, 0.5)), static=True, position=(i*1.0, 0, -0.5))
        else: w.add_body(Box((21, 2, 0.5)), static=True, position=(19, 0, -0.5))
        ch = w.add_body(Capsule(0.3, 0.6), mass=80, position=(0.3, 0, 0.9)); w.add_joint(RotationLock(None, ch))
        w.step(10); zs=[]
        for k in range(int(3/dt)):
            v=ch.linear_velocity; ch.linear_velocity=(speed,0,v[2]); w.step(); zs.append(ch.position[2])
        zs=np.array(zs); air = np.mean(zs > 0.905)
        row.append(f"v {speed:g}: max hop {(zs.max()-0.9)*1000:6.1f} mm, airborne {air*100:4.1f} % of frames")
    print(f"dt 1/{round(1/dt)} {'tiles' if tiles else 'one box'}: " + " | ".join(row))
