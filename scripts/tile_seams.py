# Character (yaw-locked capsule) and a sliding box moved over a floor of flush 1 m static box tiles (no plane).
# Expected: z constant (0.9 / 0.25), speed kept. README documents hops only for a rolling ball (4-6 mm).
import numpy as np, sys
from physics import World, Capsule, Box, Sphere, RotationLock
for dt in [1/60, 1/240]:
  for speed in [3.0, 8.0]:
    w = World(dt=dt)
    for i in range(-2, 40):
        w.add_body(Box((0.5, 2, 0.5)), static=True, position=(i*1.0, 0, -0.5), friction=0.0)
    ch = w.add_body(Capsule(0.3, 0.6), mass=80, position=(0,-1,0.9), friction=0.0); w.add_joint(RotationLock(None, ch))
    bx = w.add_body(Box((0.25,0.25,0.25)), mass=2, position=(0,1,0.25), friction=0.0)
    bx.linear_velocity=(speed,0,0)
    w.step(int(0.3/dt))
    zc=[]; zb=[]; vb=[]
    for k in range(int(3/dt)):
        v=ch.linear_velocity; ch.linear_velocity=(speed,0,v[2]); w.step()
        zc.append(ch.position[2]); zb.append(bx.position[2]); vb.append(bx.linear_velocity[0])
    zc=np.array(zc); zb=np.array(zb)
    print(f"dt 1/{round(1/dt)} v={speed}: capsule z {zc.min():.4f}..{zc.max():.4f} (0.9); sliding box z {zb.min():.4f}..{zb.max():.4f} (0.25), its vx {min(vb):.3f}..{max(vb):.3f} (frictionless: {speed}), box tilt cos {bx.rotation[2,2]:.4f}")
