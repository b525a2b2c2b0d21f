"""Separate chains hung from the static world, as joint rows (shared by the tests of the joints'
factorisation and of the iterative solve)."""
import numpy as np


def hung_chains(lengths):
    """Body pairs (a, b) of the joint rows of separate chains of ``lengths`` links each, the
    bodies numbered 1, 2, ... chain after chain, each chain's first link joined to the world
    (body 0): three rows per joint, a ball joint's."""
    a, b, first = [], [], 1
    for length in lengths:
        bodies = np.arange(first, first + length)
        a.append(np.concatenate([[0], bodies[:-1]]))
        b.append(bodies)
        first += length
    return np.repeat(np.concatenate(a), 3), np.repeat(np.concatenate(b), 3)
