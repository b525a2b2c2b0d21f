# A 0.4 m box (2 kg) resting across the join of the middle of three flush tiles and its right
# neighbour; the left and right tiles are moved 5 m down together. Its height over the next second.
import sys; sys.path.insert(0, '.')
from physics import World, Box
w = World()
ts = [w.add_body(Box((0.5, 1, 0.25)), static=True, position=(i, 0, -0.25), friction=0.5) for i in (-1, 0, 1)]
box = w.add_body(Box((0.2, 0.2, 0.1)), mass=2.0, position=(0.55, 0, 0.1))
w.step(60); print("rest z", round(box.position[2], 4), "dt", w.dt)
ts[0].position = (-1, 0, -5.25); ts[2].position = (1, 0, -5.25)
for k in range(4):
    w.step(60); print(f"t +{(k+1)*60*w.dt:.2f} s: z {box.position[2]:.4f}, tilt cos {box.rotation[2,2]:.3f}, contacts {len(w.contacts.depth)}")
