"""An account's items in DynamoDB, deleted a bounded slice at a time (the deletion workflow,
``warble.domain.deletion``; docs/accounts.md lists every family and how it goes).

Each slice is one Query of the account's own partition (the first ``limit`` items still
there: what a slice deleted is not found again, so a slice needs no cursor and a repeated one
finds less), then its deletes: BatchWriteItem where no count depends on the items (25 to a
call, unprocessed items sent again), TransactWriteItems where one does. The counters the
streams keep (followers_count, like_count, tweet_count, ...) move through the stream records
of the items deleted here exactly as after the users' own unfollows, unlikes and deletions;
a delete of what is gone makes no stream record, so a repeated slice counts nothing twice.
``following_count`` is the one count a stream does not keep: it is lowered in the same
transaction that deletes the follow, on the condition that the follow is still there.

Each store erases its own items (``GraphErasure`` in warble.dal.graph, ``LikeErasure``,
``TweetErasure``, ``ConversationErasure``, ``DiscoverErasure``, ``NotificationErasure``,
``CounterErasure``, ``ConnectionErasure``), over the raw operations of ``warble.dal.erasing``:
only the store that writes an item spells its keys. This module puts them together as the
workflow's ``TableErasure``, with the rules that cross stores (who reacted to a tweet, which
counters have settled).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from warble.dal.connections import ConnectionErasure
from warble.dal.conversations import ConversationErasure
from warble.dal.counters import CounterErasure
from warble.dal.discover_table import DiscoverErasure
from warble.dal.erasing import Items
from warble.dal.graph import GraphErasure
from warble.dal.likes import LikeErasure
from warble.dal.notifications import NotificationErasure
from warble.dal.tweets import TweetErasure
from warble.domain.counters.ports import owner_of, tweet_counter, user_counter
from warble.domain.deletion.ports import Conversations, Places, Tweets, Unread
from warble.settings import Settings, get_settings

# The counts a deleted account's counter items wait for: 0 once the streams applied every
# removal (a tweet's reply_count is not among them: others' replies stay when a tweet goes).
_WAITED_FOR = ("followers_count", "tweet_count", "like_count", "retweet_count")
# Users whose recent likes and retweets one slice drops at most (a celebrity's tweets may each
# have a million likers; past this, a liker's removal mark goes with the hash's TTL), and the
# likers read of each tweet.
REACTORS_PER_SLICE = 50_000
LIKERS_PER_TWEET = 10_000


class DynamoErasure:
    """``warble.domain.deletion.ports.TableErasure`` on the stack's tables."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._items = Items(settings or get_settings())

    @cached_property
    def _graph(self) -> GraphErasure:
        return GraphErasure(self._items)

    @cached_property
    def _likes(self) -> LikeErasure:
        return LikeErasure(self._items)

    @cached_property
    def _tweets(self) -> TweetErasure:
        return TweetErasure(self._items)

    @cached_property
    def _conversations(self) -> ConversationErasure:
        return ConversationErasure(self._items)

    @cached_property
    def _discover(self) -> DiscoverErasure:
        return DiscoverErasure(self._items)

    @cached_property
    def _notifications(self) -> NotificationErasure:
        return NotificationErasure(self._items)

    @cached_property
    def _counters(self) -> CounterErasure:
        return CounterErasure(self._items)

    # ---- the follow graph ------------------------------------------------------------------
    def followers(self, user_id: int, limit: int) -> list[int]:
        return self._graph.followers(user_id, limit)

    def following(self, user_id: int, limit: int) -> list[int]:
        return self._graph.following(user_id, limit)

    def restrictions(self, user_id: int, limit: int) -> tuple[int, list[int]]:
        return self._graph.restrictions(user_id, limit)

    # ---- likes and tweets ------------------------------------------------------------------
    def likes(self, user_id: int, limit: int) -> list[tuple[int, int]]:
        return self._likes.likes(user_id, limit)

    def tweets(self, user_id: int, limit: int) -> Tweets:
        """Each tweet with its index items, and who liked or retweeted them (read before their
        likes go)."""
        erased, doomed = self._tweets.found(user_id, limit)
        reactors = self.reactors([t.tweet_id for t in erased])
        self._items.delete(doomed)
        return Tweets(erased, reactors)

    def reactors(self, tweet_ids: Sequence[int]) -> list[int]:
        """The counters say which tweets have likes or retweets (one BatchGetItem a hundred);
        only those are looked into: their likers' items, their retweets' index entries."""
        reacted: list[tuple[int, bool, bool]] = []
        counted = self._counters.read(
            [tweet_counter(t) for t in tweet_ids], ("like_count", "retweet_count")
        )
        for pk, (counts, _subs) in counted.items():
            liked, retweeted = counts["like_count"], counts["retweet_count"]
            owner = owner_of(pk)
            if (liked or retweeted) and owner is not None:
                reacted.append((owner[1], liked > 0, retweeted > 0))
        users: list[int] = []
        for tweet, liked, retweeted in reacted:
            if len(users) >= REACTORS_PER_SLICE:
                break  # the rest's removal marks age out with their hashes (bounded memory)
            if liked:
                users += self._likes.likers(tweet, LIKERS_PER_TWEET)
            if retweeted:
                users += self._tweets.retweeters(tweet)
        return list(dict.fromkeys(u for u in users if u))

    # ---- conversations and Discover --------------------------------------------------------
    def conversations(self, user_id: int, limit: int) -> Conversations:
        return self._conversations.conversations(user_id, limit)

    def places(self, user_id: int, limit: int) -> Places:
        """The location and swipes (Discover table), then the matches: the pair's record,
        both users' list items, the conversations table's MATCH item and the other's swipe."""
        places, doomed = self._discover.found(user_id, limit)
        doomed += [self._conversations.match_item(user_id, other) for other in places.matched]
        self._items.delete(doomed)
        return places

    # ---- notifications ---------------------------------------------------------------------
    def notifications_caused(self, causes: Sequence[tuple[int, str, str]]) -> list[Unread]:
        return self._notifications.caused(causes)

    # ---- what is left under the account's own keys -----------------------------------------
    def partitions(self, user_id: int, limit: int) -> int:
        """A slice of the first store that still holds something under the account's keys."""
        for erase in (
            self._notifications.erase_own,
            self._graph.erase_own,
            self._likes.erase_own,
            self._discover.erase_own,
            self._conversations.erase_own,
            self._graph.erase_degrees,
            ConnectionErasure(self._items).erase_own,
        ):
            gone = erase(user_id, limit)
            if gone:
                return gone
        return 0

    # ---- counters --------------------------------------------------------------------------
    def settle_counters(self, user_id: int | None, tweet_ids: Sequence[int]) -> list[int]:
        """Counter items whose counts are all 0 (or absent) are deleted, with their sub-items;
        the others are answered (a user's as -1). A tweet's reply_count is not waited for:
        replies of others stay when a tweet goes."""
        moving: list[int] = []
        settled: dict[str, tuple[dict[str, int], list[str]]] = {}
        for pk, (counts, subs) in self._counters.read(
            _keys(user_id, tweet_ids), _WAITED_FOR
        ).items():
            if any(counts.values()):
                owner = owner_of(pk)
                moving.append(owner[1] if owner is not None and owner[0] == "tweet" else -1)
            else:
                settled[pk] = (counts, subs)
        self._counters.drop(settled)
        return moving

    def drop_counters(self, user_id: int | None, tweet_ids: Sequence[int]) -> None:
        self._counters.drop(self._counters.read(_keys(user_id, tweet_ids), ()))


def _keys(user_id: int | None, tweet_ids: Sequence[int]) -> list[str]:
    return ([user_counter(user_id)] if user_id is not None else []) + [
        tweet_counter(t) for t in tweet_ids
    ]
