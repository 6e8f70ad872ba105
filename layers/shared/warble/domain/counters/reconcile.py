"""Reconciliation: the stream-maintained counters checked against the tables they count, a
bounded slice at a time (issue 46: never a full recount).

The counters are exact by construction (warble.domain.counters), so drift means something outside
the design: a manual edit, a record that went to the on-failure queue and was never replayed,
a bug. The ReconcileFunction (every 15 minutes, and on demand) finds and repairs it, looking only
at counters that can have drifted:

1. the counters a stream batch touched since the last run: the counter consumer marks the keys
   its batch's rules name *before* applying them (``CounterMarks``; every one in dev, a uniform
   sample of the profile's ``reconcile_mark_share`` at scale: ``sampled``), and every key of a
   chunk it failed to apply (the records that go to the on-failure queue: the drift the design
   knows of); and a page of a rolling sweep of every counter (its cursor kept between runs),
   which reaches drift nobody touches (a manual edit) in time;
2. each counter of those keys recounted from its source of truth (one COUNT query) and read as
   stored; a page at a time, with a pause between pages and a time budget per invocation, so a
   run never holds a store (locally, moto's single lock) and what it did not reach waits in the
   marks for the next run;
3. wait ``settle_seconds``, then re-check each counter that differed. A difference that a record
   still in flight explains closes by itself meanwhile; only one that persists, by the same
   amount, is drift. Repaired with a conditional write (``SET field = truth IF field =
   observed``), so a delta the consumer applies at the same moment is never overwritten; a
   counter that moved is marked again, for the next run.

Counters of deleted tweets are left alone: nothing shows them, and their likes and retweets are
being deleted by the cleanup consumer, whose decrements would race a repair.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from warble.domain.counters.ports import CounterMarks, CounterStore, owner_of
from warble.domain.graph.ports import GraphStore
from warble.domain.likes.ports import LikeStore
from warble.domain.tweets.ports import TweetStore

FIELDS = {
    "user": ("followers_count", "tweet_count"),
    "tweet": ("like_count", "retweet_count", "reply_count"),
}
CounterKey = tuple[str, str]  # ("T#<id>", "like_count")


@dataclass(frozen=True)
class Repair:
    key: str
    field: str
    was: int
    now: int

    def as_dict(self) -> dict[str, object]:
        return {"key": self.key, "field": self.field, "was": self.was, "now": self.now}


def sampled(
    counter_keys: set[str], share: float, draw: Callable[[], float] = random.random
) -> set[str]:
    """The touched counters reconciliation will look at: every one (``share`` 1), or each with
    probability ``share``, so the marks a run takes stay within what its budget checks at the
    profile's traffic (docs/capacity.md, "Offline jobs")."""
    if share >= 1:
        return counter_keys
    return {key for key in counter_keys if draw() < share}


@dataclass(frozen=True)
class Pace:
    """How hard a run leans on the stores: ``page`` counters checked between pauses of at least
    ``pause_seconds``, and long enough that the run works at most ``duty`` of its time (a page
    that took 1 s at a duty of 0.25 is followed by 3 s of pause: backpressure from the stores'
    own latency), at most ``budget_seconds`` an invocation, ``sweep`` counters of the rolling
    sweep a run."""

    page: int = 100
    pause_seconds: float = 0.05
    budget_seconds: float = 600.0
    sweep: int = 2000
    duty: float = 1.0

    def pause_after(self, worked_seconds: float) -> float:
        return max(self.pause_seconds, worked_seconds * (1 / self.duty - 1))


class Reconciler:
    def __init__(
        self,
        graph: GraphStore,
        tweets: TweetStore,
        likes: LikeStore,
        counters: CounterStore,
        marks: CounterMarks,
        settle_seconds: float,
        pace: Pace | None = None,
        on_repaired: Callable[[set[str]], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._graph = graph
        self._tweets = tweets
        self._likes = likes
        self._counters = counters
        self._marks = marks
        self._settle = settle_seconds
        self._pace = pace or Pace()
        self._on_repaired = on_repaired
        self._sleep = sleep
        self._clock = clock
        self.checked = 0  # counter keys the last run looked at

    def recount(self, key: str, field: str) -> int:
        """One counter's true value, from one COUNT query."""
        owner = owner_of(key)
        assert owner is not None
        entity = owner[1]
        if field == "followers_count":
            return self._graph.count_followers(entity)
        if field == "tweet_count":
            return self._tweets.count_by_author(entity)
        if field == "like_count":
            return self._likes.count_likers(entity)
        if field == "retweet_count":
            return self._tweets.count_retweets(entity)
        return self._tweets.count_replies(entity)

    def differences(self, counter_keys: Iterable[str]) -> dict[CounterKey, int]:
        """Each counter of these keys that differs from its recount: {(key, field): truth -
        stored}. A deleted tweet's counters are left alone."""
        found: dict[CounterKey, int] = {}
        owned = [(key, owner) for key in counter_keys if (owner := owner_of(key)) is not None]
        stored = self._counters.read([key for key, _ in owned])  # a BatchGetItem a hundred
        for key, (kind, entity) in owned:
            if kind == "tweet" and self._tweets.author_of(entity) is None:
                continue
            for field in FIELDS[kind]:
                difference = self.recount(key, field) - stored.get(key, {}).get(field, 0)
                if difference:
                    found[(key, field)] = difference
        return found

    def drift(self, budget_seconds: float | None = None) -> dict[CounterKey, int]:
        """The differences of the counters touched since the last run, then of a page of the
        sweep, paced; what the budget did not reach stays marked for the next run."""
        pace = self._pace
        deadline = self._clock() + min(pace.budget_seconds, budget_seconds or pace.budget_seconds)
        found: dict[CounterKey, int] = {}
        seen: set[str] = set()  # a key both touched and swept is checked once
        self.checked = 0

        def check(counter_keys: list[str]) -> None:
            started = self._clock()
            fresh = [key for key in counter_keys if key not in seen]
            seen.update(fresh)
            found.update(self.differences(fresh))
            self.checked += len(fresh)
            now = self._clock()
            pause = min(pace.pause_after(now - started), max(0.0, deadline - now))
            if pause:
                self._sleep(pause)  # the serving path's turn at the stores

        while self._clock() < deadline:
            touched = self._marks.take(pace.page)
            if not touched:
                break
            check(touched)
        cursor, swept = self._marks.sweep_cursor(), 0
        while swept < pace.sweep and self._clock() < deadline:
            page, cursor = self._counters.keys_page(cursor, min(pace.page, pace.sweep - swept))
            swept += pace.page
            check(page)
            if cursor is None:
                break  # the sweep went round: the next run starts it again
        self._marks.save_sweep_cursor(cursor)
        return found

    def run(self, budget_seconds: float | None = None) -> list[Repair]:
        candidates = self.drift(budget_seconds)
        if not candidates:
            return []
        self._sleep(self._settle)
        repairs: list[Repair] = []
        moved: set[str] = set()
        for (key, field), difference in sorted(candidates.items()):
            stored = self._counters.current(key, field)
            true = self.recount(key, field)
            if true - (stored or 0) != difference:
                moved.add(key)  # a record in flight, not drift: the next run looks again
                continue
            if self._counters.repair(key, field, stored, true):
                repairs.append(Repair(key, field, stored or 0, true))
            else:
                moved.add(key)
        if moved:
            self._marks.mark(moved)
        if repairs and self._on_repaired is not None:
            self._on_repaired({r.key for r in repairs})
        return repairs
