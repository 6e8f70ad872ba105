"""The counters' reconciliation for tests: built as ``services.container().reconciler`` builds it,
with nothing to wait for (no record is in flight when a test runs it), and by default a sweep that
goes round the whole counters table in one run (a test edits counters nobody touches).

The table holds every counter the session made, so a whole sweep costs a COUNT query per counter
of the session: a test that checks a repair, not the sweep's reach, runs ``sweep=0`` and marks
the counters it edited (``mark``), as the sweep's page would name them (the sweep's coverage is
tests/integration/test_reconcile_marks.py's)."""

from __future__ import annotations

from typing import Any


def reconciler(sweep: int = 10_000_000) -> Any:
    from warble import services
    from warble.dal.counter_marks import RedisCounterMarks
    from warble.dal.counters import DynamoCounterStore
    from warble.dal.graph import DynamoGraphStore
    from warble.dal.likes import LikeStore
    from warble.dal.tweets import TweetStore
    from warble.domain.counters.reconcile import Pace, Reconciler

    return Reconciler(
        graph=DynamoGraphStore(),
        tweets=TweetStore(),
        likes=LikeStore(),
        counters=DynamoCounterStore(3600),
        marks=RedisCounterMarks(services.container().redis),
        settle_seconds=0,
        pace=Pace(page=1000, pause_seconds=0, sweep=sweep),
        on_repaired=services.container().counters_changed,
    )


def mark(*counter_keys: str) -> None:
    """Name counters to the next run, as a stream batch or the sweep's page would."""
    from warble import services
    from warble.dal.counter_marks import RedisCounterMarks

    RedisCounterMarks(services.container().redis).mark(set(counter_keys))
