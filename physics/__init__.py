"""maxcoord physics: maximal-coordinate rigid bodies, joints and a sparse Lagrange-multiplier
solver. Never imports a display or OpenGL library."""
from .allocator import freeze_built_objects, keep_freed_memory
from .body import Body
from .couplings import Coupling, Gear, PointOnPlane
from .raycast import RayHit, RayHits
from .rolling import Rolling
from .joints import (Ball, Cylindrical, Distance, Fixed, Hinge, Joint, RotationLock, Slider,
                     Universal)
from .shapes import Box, Capsule, Cylinder, Plane, Shape, Sphere
from .step import StepError
from .world import World
from .jointspace import ArticulatedView


__all__ = ["World", "Body", "Shape", "Sphere", "Box", "Capsule", "Cylinder", "Plane",
           "Joint", "Ball", "Hinge", "Slider", "Fixed", "RotationLock", "Universal", "Cylindrical",
           "Distance",
           "Coupling", "Gear", "PointOnPlane", "Rolling", "ArticulatedView", "StepError",
           "RayHit", "RayHits",
           "keep_freed_memory", "freeze_built_objects"]
