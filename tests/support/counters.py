"""The counters' reconciliation for tests: built as ``services.container().reconciler`` builds it,
with nothing to wait for (no record is in flight when a test runs it)."""

from __future__ import annotations

from typing import Any


def reconciler() -> Any:
    from warble import services
    from warble.dal.counters import DynamoCounterStore
    from warble.dal.graph import DynamoGraphStore
    from warble.dal.likes import LikeStore
    from warble.dal.tweets import TweetStore
    from warble.domain.counters.reconcile import Reconciler

    return Reconciler(
        graph=DynamoGraphStore(),
        tweets=TweetStore(),
        likes=LikeStore(),
        counters=DynamoCounterStore(3600),
        rules=services.container().counter_rules,
        settle_seconds=0,
        on_repaired=services.container().counters_changed,
    )
