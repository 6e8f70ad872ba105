"""What follows a change of counters (a counter consumer's batch, the reconciler's repairs): the
cached copies of the changed users' and tweets' counts dropped in one round trip, and each
changed user's followers_count copied to the search index, which orders its candidates."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from warble.domain.counters.ports import CounterStore, owner_of, user_counter
from warble.domain.shared import Cache

log = logging.getLogger(__name__)

CountsSubject = tuple[str, int]  # ("user" | "tweet", id): whose counts a cached copy holds


class CountersChanged:
    """``on_applied`` of the counter consumer and ``on_repaired`` of the reconciler.

    ``counts``: one cache over both kinds of counts (users' and tweets'), so that both go in one
    round trip; ``followers_changed``: the search index's copy; ``unavailable``: the store
    errors that only delay the copy (the next change of the count copies it)."""

    def __init__(
        self,
        counts: Cache[CountsSubject],
        counters: CounterStore,
        followers_changed: Callable[[Mapping[int, int]], Any],
        unavailable: Callable[[], tuple[type[Exception], ...]],
    ) -> None:
        self._counts = counts
        self._counters = counters
        self._followers_changed = followers_changed
        self._unavailable = unavailable

    def __call__(self, counter_keys: set[str]) -> None:
        owners = [owner for key in counter_keys if (owner := owner_of(key)) is not None]
        self._counts.invalidate_many(owners)
        users = [uid for kind, uid in owners if kind == "user"]
        try:
            # Read once from the counters (strongly consistent), not through the counts cache
            # just dropped: the copy needs no cache refill.
            derived = self._counters.read([user_counter(uid) for uid in users])
            followers = {
                uid: max(0, derived[user_counter(uid)].get("followers_count", 0)) for uid in users
            }
            self._followers_changed(followers)
        except self._unavailable():
            log.warning("search index not updated", exc_info=True)
