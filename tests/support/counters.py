"""The counters' reconciliation for tests: built as ``services.container().reconciler`` builds it,
with nothing to wait for (no record is in flight when a test runs it), and a sweep that goes
round the whole counters table in one run (a test edits counters nobody touches)."""

from __future__ import annotations

from typing import Any


def reconciler() -> Any:
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
        pace=Pace(page=1000, pause_seconds=0, sweep=10_000_000),
        on_repaired=services.container().counters_changed,
    )
