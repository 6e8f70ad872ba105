"""DegreesFunction: the scheduled (and on-demand) rebuild of the second-degree sets."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.schedules import refresh_degrees as handler

__all__ = ["handler"]
