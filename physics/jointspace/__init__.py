"""Joint-space views of a maximal-coordinate World (seeds 000_*, 002_*, 004_*).

``ArticulatedView(world)`` reads a tree of hinge / slider / cylindrical / ball / universal /
fixed joints rooted at the world frame and gives joint coordinates q, qd (read and write), the
joint-space mass matrix, bias forces, Jacobians, forward and inverse dynamics, and their
constrained versions (loop-closing joints, point contacts, points on planes) with the
projection P of 000_*, FDgq of 002_* and the KKT form of Gauss's principle of 004_*.

Sign of the multipliers everywhere: M qdd + bias = tau + A^T lambda, lambda being the force
the constraint applies to the mechanism, exactly the engine's lambda for the same rows.
"""
from .coordinates import TreeJoint
from .tools import (apply_joint_torques, constraint_gamma, joint_rows,
                    least_constraint_accelerations, maximal_accelerations, simulate_gq,
                    trivial_gamma_q, whiteboard_torques)
from .view import ArticulatedView, Constraint

__all__ = ["ArticulatedView", "Constraint", "TreeJoint", "apply_joint_torques",
           "constraint_gamma", "joint_rows", "least_constraint_accelerations",
           "maximal_accelerations", "simulate_gq", "trivial_gamma_q", "whiteboard_torques"]
