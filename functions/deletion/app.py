"""AccountDeletionFunction: the account deletion workflow's steps (SQS) and its stalled-start
sweep (schedule)."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.deletion import handler

__all__ = ["handler"]
