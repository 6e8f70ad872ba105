"""ReconcileFunction: recompute every counter from the tables and repair drift."""

from warble.entrypoints.schedules import reconcile_counters as handler

__all__ = ["handler"]
