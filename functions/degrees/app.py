"""DegreesFunction: the scheduled (and on-demand) rebuild of the second-degree sets."""

from warble.jobs import refresh_degrees as handler

__all__ = ["handler"]
