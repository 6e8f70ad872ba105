"""DegreesFunction: the scheduled (and on-demand) rebuild of the second-degree sets."""

from warble.entrypoints.schedules import refresh_degrees as handler

__all__ = ["handler"]
