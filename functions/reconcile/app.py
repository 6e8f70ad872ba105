"""ReconcileFunction: recompute every counter from the tables and repair drift (warble.jobs)."""

from warble.jobs import reconcile_counters as handler

__all__ = ["handler"]
