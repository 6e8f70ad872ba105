"""The counters' builders: which events change which counters, the stream consumer that applies
them, the reconciler that repairs drift, and what follows a change (``CountersChanged``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from warble import keys
from warble.services.parts import Parts

if TYPE_CHECKING:
    from warble.dal.streams import StreamDecoder
    from warble.domain.counters.listener import CountersChanged, CountsSubject
    from warble.domain.counters.reconcile import Reconciler
    from warble.domain.counters.service import CounterRules, StreamCounterProcessor


def _counts_key(subject: CountsSubject) -> keys.CacheKey:
    kind, uid = subject
    return keys.counts(uid) if kind == "user" else keys.tweet_counts(uid)


def rules() -> CounterRules:
    """Which events change which counters (one rule per event type, beside its feature)."""
    from warble.domain.counters.service import CounterRules
    from warble.domain.graph.service import followers_counted
    from warble.domain.likes.service import likes_counted
    from warble.domain.tweets.service import tweets_counted
    from warble.events import Followed, Liked, TweetDeleted, TweetPosted, Unfollowed, Unliked

    found = CounterRules()
    for followed in (Followed, Unfollowed):
        found.on(followed, followers_counted)
    for tweeted in (TweetPosted, TweetDeleted):
        found.on(tweeted, tweets_counted)
    for liked in (Liked, Unliked):
        found.on(liked, likes_counted)
    return found


def changed(c: Parts) -> CountersChanged:
    from warble.dal import store_unavailable
    from warble.domain.counters.listener import CountersChanged

    counts = c.stores.cache(c.settings.counts_cache_ttl_seconds, _counts_key)
    return CountersChanged(
        counts,
        c.stores.counters(),
        lambda followers: c.search.followers_changed(followers),
        store_unavailable,
    )


def processor(c: Parts, **options: Any) -> StreamCounterProcessor:
    """The counter consumer (``options``: its retries, for tests)."""
    from warble.domain.counters.reconcile import sampled
    from warble.domain.counters.service import StreamCounterProcessor

    marks, share = c.stores.counter_marks(), c.settings.reconcile_mark_share
    options.setdefault("on_applied", c.counters_changed)
    options.setdefault("on_touched", _best_effort(lambda keys: marks.mark(sampled(keys, share))))
    options.setdefault("on_failed", _best_effort(marks.mark))
    return StreamCounterProcessor(c.stores.counters(), c.counter_rules, **options)


def _best_effort(mark: Callable[[set[str]], None]) -> Callable[[set[str]], None]:
    """Marks for reconciliation that never hold the counters back: with the cache down, the
    counters are still applied, and the rolling sweep reaches them in time."""
    from warble.dal import store_unavailable

    def marked(counter_keys: set[str]) -> None:
        try:
            mark(counter_keys)
        except store_unavailable():
            return

    return marked


def reconciler(c: Parts, on_repaired: Callable[[set[str]], None] | None = None) -> Reconciler:
    from warble.domain.counters.reconcile import Pace, Reconciler

    stores, s = c.stores, c.settings
    return Reconciler(
        graph=stores.graph(),
        tweets=stores.tweets(),
        likes=stores.likes(),
        counters=stores.counters(),
        marks=stores.counter_marks(),
        settle_seconds=s.reconcile_settle_seconds,
        pace=Pace(
            page=s.reconcile_page,
            pause_seconds=s.reconcile_pause_seconds,
            budget_seconds=s.reconcile_budget_seconds,
            sweep=s.reconcile_sweep,
            duty=s.reconcile_duty,
        ),
        on_repaired=on_repaired or c.counters_changed,
        sleep=stores.sleep,
    )


def _decoder(store: str) -> Callable[[dict[str, Any]], Any]:
    """``warble.dal.<store>.decode_record``, imported on its first record."""
    found: list[Callable[[dict[str, Any]], Any]] = []

    def decode(record: dict[str, Any]) -> Any:
        if not found:
            import importlib

            found.append(importlib.import_module(f"warble.dal.{store}").decode_record)
        return found[0](record)

    return decode


def stream_decoder(c: Parts) -> StreamDecoder:
    """Which tables' streams the consumers read, and the store that decodes each (imported
    with the first record of its table: a consumer pays only for the tables it reads)."""
    from warble.dal.streams import StreamDecoder

    s = c.settings
    return StreamDecoder(
        {
            s.graph_table: _decoder("graph"),
            s.tweets_table: _decoder("tweets"),
            s.likes_table: _decoder("likes"),
            s.matches_table: _decoder("discover_table"),
        }
    )
