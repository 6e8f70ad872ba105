"""ReconcileFunction: recompute every counter from the tables and repair drift."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.schedules import reconcile_counters as handler

__all__ = ["handler"]
