"""Reconciliation: every stream-maintained counter recomputed from the tables it counts.

The counters are exact by construction (warble.domain.counters), so drift means something outside
the design: a manual edit, a record that went to the on-failure queue and was never replayed,
a bug. The ReconcileFunction (nightly, and on demand) finds and repairs it:

1. recompute every counter from the source of truth in one pass over each table: follow edges
   (followers_count), tweets (tweet_count, reply_count, retweet_count) and like edges
   (like_count), each seen as the event that created it and counted by the consumer's own
   rules (``CounterRules``), so the two can never disagree on what counts; compare with the
   counters as the store reads them (a hot counter's sub-items summed into it: the store's
   concern, ``CounterStore.scan``);
2. wait ``settle_seconds``, then re-check each counter that differed with a targeted recount
   (one COUNT query) and a fresh read. A difference that a record still in flight explains
   closes by itself meanwhile; only one that persists, by the same amount, is drift;
3. repair it with a conditional write (``SET field = truth IF field = observed``), so a delta
   the consumer applies at the same moment is never overwritten, and report what was repaired.

Counters of deleted tweets are left alone: nothing shows them, and their likes and retweets are
being deleted by the cleanup consumer, whose decrements would race a repair.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from warble.domain.counters.ports import CounterStore, owner_of
from warble.domain.counters.service import CounterRules
from warble.domain.graph.ports import GraphStore
from warble.domain.likes.ports import LikeStore
from warble.domain.tweets.ports import TweetStore
from warble.events import Change, Event, Followed, Liked, TweetPosted

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


class Reconciler:
    def __init__(
        self,
        graph: GraphStore,
        tweets: TweetStore,
        likes: LikeStore,
        counters: CounterStore,
        rules: CounterRules,
        settle_seconds: float,
        on_repaired: Callable[[set[str]], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._graph = graph
        self._tweets = tweets
        self._likes = likes
        self._counters = counters
        self._rules = rules
        self._settle = settle_seconds
        self._on_repaired = on_repaired
        self._sleep = sleep

    def truth(self) -> tuple[Counter[CounterKey], set[int]]:
        """Every counter's true value (absent: 0), and the ids of the tweets that exist."""
        truth: Counter[CounterKey] = Counter()
        live: set[int] = set()

        def count(event: Event) -> None:
            for delta in self._rules.deltas(Change("", "", (event,))):
                truth[(delta.key, delta.field)] += delta.amount

        for follower, followee in self._graph.follow_edges():
            count(Followed(follower=follower, followee=followee))
        for author, tweet_id, reply_to, retweet_of in self._tweets.scan_links():
            live.add(tweet_id)
            count(TweetPosted(tweet_id, author, reply_to=reply_to, retweet_of=retweet_of))
        for user, tweet_id in self._likes.edges():
            count(Liked(user_id=user, tweet_id=tweet_id))
        return truth, live

    def drift(self) -> dict[CounterKey, int]:
        """Counters that differ from the truth now: {(key, field): truth - stored}."""
        truth, live = self.truth()
        stored = dict(self._counters.scan())
        found: dict[CounterKey, int] = {}
        for key in {k for k, _ in truth} | set(stored):
            owner = owner_of(key)
            if owner is None or (owner[0] == "tweet" and owner[1] not in live):
                continue
            for field in FIELDS[owner[0]]:
                difference = truth[(key, field)] - stored.get(key, {}).get(field, 0)
                if difference:
                    found[(key, field)] = difference
        return found

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

    def run(self) -> list[Repair]:
        candidates = self.drift()
        if not candidates:
            return []
        self._sleep(self._settle)
        repairs: list[Repair] = []
        for (key, field), difference in sorted(candidates.items()):
            stored = self._counters.current(key, field)
            true = self.recount(key, field)
            if true - (stored or 0) != difference:
                continue  # it moved: a record in flight, not drift (the next run looks again)
            if self._counters.repair(key, field, stored, true):
                repairs.append(Repair(key, field, stored or 0, true))
        if repairs and self._on_repaired is not None:
            self._on_repaired({r.key for r in repairs})
        return repairs
