"""The engine's own exceptions."""


class StepError(FloatingPointError):
    """A step failed (non-finite result or singular constraints); the world is unchanged."""
