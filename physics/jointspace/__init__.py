"""Joint-space views of a maximal-coordinate World (the null-space projection,
Featherstone's gamma_q and Gauss's principle).

``ArticulatedView(world)`` reads a tree of hinge / slider / cylindrical / ball / universal /
fixed joints rooted at the world frame (and at floating bases: a free base body joined to the
world frame by a 6-DOF ``FloatingBase``, as a legged robot's) and gives joint coordinates q, qd
(read and write), the joint-space mass matrix, bias forces, Jacobians, forward and inverse
dynamics, and their constrained versions (loop-closing joints, point contacts, points on
planes) with the null-space projection P, Featherstone's FDgq (by gamma_q) and the KKT form of
Gauss's principle.

Sign of the multipliers everywhere: M qdd + bias = tau + A^T lambda, lambda being the force
the constraint applies to the mechanism, exactly the engine's lambda for the same rows.
"""
from .coordinates import FloatingBase, TreeJoint
from .tools import (apply_joint_torques, constraint_gamma, joint_rows,
                    least_constraint_accelerations, maximal_accelerations, simulate_gq,
                    trivial_gamma_q, whiteboard_torques)
from .view import ArticulatedView, Constraint

__all__ = ["ArticulatedView", "Constraint", "FloatingBase", "TreeJoint", "apply_joint_torques",
           "constraint_gamma", "joint_rows", "least_constraint_accelerations",
           "maximal_accelerations", "simulate_gq", "trivial_gamma_q", "whiteboard_torques"]
