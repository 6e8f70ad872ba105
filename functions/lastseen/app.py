"""LastSeenFunction: the sessions seen since the last run, written to PostgreSQL in batches."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.schedules import flush_last_seen as handler

__all__ = ["handler"]
