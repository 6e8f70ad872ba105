"""PasswordResetFunction: the password resets asked for (SQS), looked up and mailed."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.passwords import handler

__all__ = ["handler"]
