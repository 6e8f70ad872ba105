"""In-memory fakes of the ports in ``warble.domain.<feature>.ports``, for the unit tier.

Each fake keeps the documented behaviour of its real store in ``warble.dal`` (ordering, paging,
idempotency, the conditional failures it raises in the domain's words) and nothing of its
layout. They are test code: plain dicts and sets, no concurrency, no clocks.

``World`` is ``warble.services.Container`` with these fakes as its adapters (``MemoryStores``):
the production builders wire the real services (``TweetService``, ``TimelineService``,
``GraphService``, ``LikeService``, ``Reconciler``, ``StreamCounterProcessor``) to them, so the
unit tier cannot drift from production's wiring; a test states its world in a few lines and
runs the rules with no network.
"""

from __future__ import annotations

import itertools
import json
import secrets
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from warble import keys
from warble.domain.accounts.ports import TicketClaim
from warble.domain.blocks.ports import Shield
from warble.domain.counters.ports import ClaimsTaken, TransactionRetry
from warble.domain.counters.service import CounterRules, StreamCounterProcessor
from warble.domain.graph.ports import FollowRejected
from warble.domain.likes.ports import Like, Liker, TweetMissing
from warble.domain.media.ports import READY, AttachedMedia, StoredMedia
from warble.domain.reports.ports import Closing, Opening, StoredCase, StoredReport
from warble.domain.shared import Held, RequestKey
from warble.domain.suspensions.ports import Account
from warble.domain.timelines.service import parse_entry
from warble.domain.tweets.ports import (
    AlreadyRetweeted,
    MediaTaken,
    ParentMissing,
    Repeated,
    StoredTweet,
    TweetGone,
)
from warble.errors import NotFound
from warble.events import Change, Event, Followed
from warble.services import Container
from warble.services import counters as counter_wiring
from warble.services.stores import Clients, Stores
from warble.settings import Settings

MEDIA_URL = "https://cdn.example"

T = TypeVar("T")

# The counter attributes ``warble.dal.counters.CounterItem`` declares.
COUNTER_FIELDS = frozenset(
    {"followers_count", "tweet_count", "like_count", "retweet_count", "reply_count"}
)
TRANSACT_LIMIT = 100  # actions per TransactWriteItems, as DynamoDB (and DynamoCounterStore) say


# ---- ids and caches ---------------------------------------------------------------------------
class FakeIds:
    """``IdGenerator``: increasing ids, as Snowflakes are."""

    def __init__(self, start: int = 1_000) -> None:
        self._next = itertools.count(start)

    def next_id(self) -> int:
        return next(self._next)


class FakeBatch:
    """``ReadBatch``: the fakes answer at once, so there is nothing to send."""

    def run(self) -> None:
        pass


class FakeKeyspace:
    """What the caches hold, by key: one keyspace, as Redis is, so a cache that drops a key drops
    it for every other cache reading it (the counters' listener and the graph's counts)."""

    def __init__(self) -> None:
        self.values: dict[Any, str] = {}
        self.leases: dict[Any, str] = {}
        self.ttls: dict[Any, int] = {}


class FakeCache:
    """``Cache`` and ``ObjectCache`` (``warble.dal.cache.LeasedCache``), by subject: values go
    through JSON as they do in Redis, so a test sees what a reader of the real cache would see.
    Leases are kept, so a fill after an invalidation fails as it does there. ``key`` names a
    subject's key in ``space`` (``warble.keys``); without it the subject is its key."""

    def __init__(
        self, key: Callable[[Any], keys.CacheKey] | None = None, space: FakeKeyspace | None = None
    ) -> None:
        self.space = space or FakeKeyspace()
        self._key = key

    def _k(self, subject: Any) -> Any:
        return subject if self._key is None else self._key(subject).value

    def _put(self, subject: Any, value: Any) -> None:
        self.space.values[self._k(subject)] = json.dumps(value, separators=(",", ":"), default=str)

    def get(self, subject: Any) -> Any | None:
        raw = self.space.values.get(self._k(subject))
        return None if raw is None else json.loads(raw)

    def get_many(self, subjects: Sequence[Any]) -> list[Any | None]:
        return [self.get(subject) for subject in subjects]

    def get_many_or_load(
        self, subjects: Sequence[Any], loader: Callable[[list[int]], list[Any | None]]
    ) -> list[Any | None]:
        values = self.get_many(subjects)
        missing = [i for i, value in enumerate(values) if value is None]
        if not missing:
            return values
        tokens = [self.lease(subjects[i]) for i in missing]
        for index, token, value in zip(missing, tokens, loader(missing), strict=True):
            values[index] = value
            if token is not None and value is not None:
                self.fill(subjects[index], token, value)
        return values

    def batch(self) -> FakeBatch:
        return FakeBatch()

    def get_many_later(
        self,
        batch: Any,
        subjects: Sequence[Any],
        loader: Callable[[list[int]], list[Any | None]],
        fill: bool = True,
    ) -> Callable[[], list[Any | None]]:
        if not fill:
            return lambda: [
                found if found is not None else loader([i])[0]
                for i, found in enumerate(self.get_many(subjects))
            ]
        return lambda: self.get_many_or_load(subjects, loader)

    def get_or_load(self, subject: Any, loader: Callable[[], T | None]) -> T | Any | None:
        cached = self.get(subject)
        if cached is not None:
            return cached
        token = self.lease(subject)
        value = loader()
        if token is not None and value is not None:
            self.fill(subject, token, value)
        return value

    def lease(self, subject: Any) -> str | None:
        leases = self.space.leases
        if self._k(subject) in leases:
            return None
        leases[self._k(subject)] = token = secrets.token_hex(8)
        return token

    def fill(self, subject: Any, token: str, value: Any) -> bool:
        if self.space.leases.get(self._k(subject)) != token:
            return False
        del self.space.leases[self._k(subject)]
        self._put(subject, value)
        return True

    def fill_missing(self, entries: Sequence[tuple[Any, Any]]) -> None:
        for subject, value in entries:
            if self._k(subject) not in self.space.values:  # SET NX: never over a tombstone
                self._put(subject, value)

    def tombstone(self, subject: Any, marker: Any, ttl_seconds: int) -> None:
        self._put(subject, marker)
        self.space.ttls[self._k(subject)] = ttl_seconds
        self.space.leases.pop(self._k(subject), None)

    def invalidate(self, subject: Any) -> None:
        self.space.values.pop(self._k(subject), None)
        self.space.leases.pop(self._k(subject), None)

    def invalidate_many(self, subjects: Sequence[Any]) -> None:
        for subject in subjects:
            self.invalidate(subject)


class FakeSocketTickets:
    """``SocketTickets``: claims by user and ticket hash, each taken once. No clock: the real
    store's expiry drops a claim (``drop``), and a store lagging behind its expiry still gives
    it (``lapse``: the claim's own time has passed)."""

    def __init__(self) -> None:
        self.claims: dict[tuple[int, bytes], TicketClaim] = {}
        self.ttls: list[int] = []

    def put(self, ticket_hash: bytes, claim: TicketClaim, ttl_ms: int) -> None:
        self.claims[(claim.user_id, ticket_hash)] = claim
        self.ttls.append(ttl_ms)

    def take(self, ticket_hash: bytes, user_id: int) -> TicketClaim | None:
        return self.claims.pop((user_id, ticket_hash), None)

    def drop(self) -> None:
        self.claims.clear()

    def lapse(self) -> None:
        self.claims = {k: replace(c, expires_at_ms=0) for k, c in self.claims.items()}


class FakeProfiles:
    """``Profiles`` (the accounts service's cached profile reads): users by id."""

    def __init__(self) -> None:
        self.users: dict[int, dict[str, Any]] = {}

    def add(self, user_id: int, username: str | None = None) -> int:
        name = username or f"user{user_id}"
        self.users[user_id] = {
            "id": user_id,
            "username": name,
            "email": f"{name}@example.com",
            "display_name": name,
            "bio": "",
            "created_at": "2026-01-01T00:00:00.000Z",
        }
        return user_id

    def profile(self, user_id: int) -> dict[str, Any]:
        if user_id not in self.users:
            raise NotFound("No such user.")
        return dict(self.users[user_id])

    def profiles(self, user_ids: list[int]) -> dict[int, dict[str, Any]]:
        return {uid: dict(self.users[uid]) for uid in user_ids if uid in self.users}

    def profiles_later(
        self, batch: Any, user_ids: list[int], fill: bool = True
    ) -> Callable[[], dict[int, dict[str, Any]]]:
        return lambda: self.profiles(user_ids)


def _order(seq: int, present: bool) -> tuple[int, int]:
    """Versions order as the real ones: (seq, added) < (seq, removed) < (later seq, added)."""
    return seq, 0 if present else 1


class FakeMemberships:
    """``Memberships`` (``warble.dal.memberships.MembershipSets``): per owner, a floor and each
    member's latest version ``(seq, added)``; a change applies to a loaded owner only, and only
    if newer than the version held. ``drop`` is a lost hash (a Redis flush)."""

    def __init__(self) -> None:
        self.held: dict[int, tuple[int, dict[int, tuple[int, bool]]]] = {}
        self.rebuilds: list[int] = []

    def batch(self) -> FakeBatch:
        return FakeBatch()

    def check_later(
        self, batch: Any, owner: int, members: Iterable[int]
    ) -> Callable[[], Held | None]:
        wanted = list(members)

        def held() -> Held | None:
            if owner not in self.held:
                return None
            floor, versions = self.held[owner]
            present = {m for m in wanted if versions.get(m, (0, False))[1]}
            return Held(floor, frozenset(present))

        return held

    def rebuild(self, owner: int, load: Callable[[], tuple[dict[int, int], int]]) -> Held:
        self.rebuilds.append(owner)
        members, floor = load()
        self.held[owner] = (floor, {m: (seq, True) for m, seq in members.items()})
        return Held(floor, frozenset(members))

    def apply(self, owner: int, member: int, seq: int, present: bool) -> None:
        if owner not in self.held:
            return
        versions = self.held[owner][1]
        held = versions.get(member)
        if held is None or _order(seq, present) > _order(*held):
            versions[member] = (seq, present)

    def apply_later(self, writes: Any, owner: int, member: int, seq: int, present: bool) -> None:
        self.apply(owner, member, seq, present)  # the fakes write at once

    def members_later(self, batch: Any, owner: int) -> Callable[[], Held | None]:
        def held() -> Held | None:
            if owner not in self.held:
                return None
            floor, versions = self.held[owner]
            return Held(floor, frozenset(m for m, (_, present) in versions.items() if present))

        return held

    def drop(self, owner: int | None = None) -> None:
        if owner is None:
            self.held.clear()
        else:
            self.held.pop(owner, None)


class FakeBlockSets:
    """``BlockSets`` (``warble.dal.blocks.BlockSets``): every user's Shield, loaded."""

    def __init__(self) -> None:
        self.held: dict[int, Shield] = {}

    def batch(self) -> FakeBatch:
        return FakeBatch()

    def read_later(self, batch: Any, owner: int) -> Callable[[], Shield | None]:
        return lambda: self.held.get(owner, Shield())

    def check_later(
        self, batch: Any, owner: int, others: Iterable[int]
    ) -> Callable[[], Shield | None]:
        return lambda: self.held.get(owner, Shield())

    def rebuild(self, owner: int, load: Callable[[], list[tuple[str, int, int]]]) -> Shield:
        return self.held.get(owner, Shield())

    def apply(self, owner: int, kind: str, other: int, seq: int, present: bool) -> None:
        raise NotImplementedError("blocks are not faked beyond reading")

    def apply_later(
        self, writes: Any, owner: int, kind: str, other: int, seq: int, present: bool
    ) -> None:
        raise NotImplementedError("blocks are not faked beyond reading")


# ---- tweets and likes -------------------------------------------------------------------------
class FakeMediaStore:
    """``MediaStore`` (``warble.dal.media.MediaTable``), and the claims a tweet's transaction
    makes (``warble.dal.media.claim``): all or none."""

    def __init__(self) -> None:
        self.items: dict[int, StoredMedia] = {}

    def create(self, media: StoredMedia) -> None:
        self.items[media.id] = media

    def get(self, media_id: int) -> StoredMedia | None:
        return self.items.get(media_id)

    def get_many(self, media_ids: list[int]) -> list[StoredMedia]:
        return [self.items[m] for m in media_ids if m in self.items]

    def set_alt_text(self, owner_id: int, media_id: int, alt_text: str) -> StoredMedia | None:
        media = self.items.get(media_id)
        if media is None or media.owner_id != owner_id:
            return None
        media = self.items[media_id] = replace(media, alt_text=alt_text, rev=media.rev + 1)
        return media

    def finish(self, media: StoredMedia) -> bool:
        if self.items.get(media.id) is None or self.items[media.id].status != "pending":
            return False
        self.items[media.id] = media
        return True

    def delete_many(self, media_ids: list[int]) -> None:
        for media_id in media_ids:
            self.items.pop(media_id, None)

    def owned_ids(self, owner_id: int) -> list[int]:
        return sorted((m.id for m in self.items.values() if m.owner_id == owner_id), reverse=True)

    def claim(self, tweet: StoredTweet) -> None:
        taken = [
            m.id
            for m in tweet.media
            if (item := self.items.get(m.id)) is None
            or item.owner_id != tweet.author_id
            or item.status != READY
            or item.tweet_id is not None
            or item.rev != m.rev
        ]
        if taken:
            raise MediaTaken(taken)
        for m in tweet.media:
            self.items[m.id] = replace(self.items[m.id], tweet_id=tweet.id, expires_at=None)


class FakeBucket:
    """``ObjectStore`` (``warble.dal.media.MediaBucket``): files by key, and which are kept."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[bytes, str]] = {}
        self.kept: set[str] = set()

    def upload_form(
        self, key: str, content_type: str, max_bytes: int, expires_seconds: int
    ) -> tuple[str, dict[str, str]]:
        return "https://bucket.example", {"key": key, "Content-Type": content_type}

    def read(self, key: str) -> bytes | None:
        found = self.files.get(key)
        return None if found is None else found[0]

    def put(self, key: str, body: bytes, content_type: str) -> None:
        self.files[key] = (body, content_type)

    def keep(self, keys: list[str]) -> None:
        self.kept.update(keys)

    def delete(self, keys: list[str]) -> None:
        for key in keys:
            self.files.pop(key, None)


class FakeTweetStore:
    """``TweetStore`` (``warble.dal.tweets.TweetStore``): a tweet's write checks its parent and
    the one-retweet-per-user rule atomically; deleting a gone tweet is ``TweetGone``."""

    def __init__(self) -> None:
        self.tweets: dict[int, StoredTweet] = {}
        self.retweets: dict[tuple[int, int], int] = {}  # (user, original) -> retweet id
        # (author, key) -> (tweet id, fingerprint): the keyed posts' claims
        self.repeats: dict[tuple[int, str], tuple[int, str]] = {}

    def author_of(self, tweet_id: int) -> int | None:
        tweet = self.tweets.get(tweet_id)
        return None if tweet is None else tweet.author_id

    def retweet_by(self, user_id: int, original_id: int) -> int | None:
        return self.retweets.get((user_id, original_id))

    media: FakeMediaStore | None = None  # the media a tweet's transaction claims

    def create(self, tweet: StoredTweet, repeat: RequestKey | None = None) -> None:
        if tweet.id in self.tweets:
            raise RuntimeError(f"tweet {tweet.id} exists")  # the real store's condition too
        if repeat is not None and (tweet.author_id, repeat.key) in self.repeats:
            raise Repeated(*self.repeats[(tweet.author_id, repeat.key)])
        if tweet.media and self.media is not None:
            self.media.claim(tweet)
        parent = tweet.reply_to or tweet.retweet_of
        if parent is not None and parent not in self.tweets:
            raise ParentMissing()
        if tweet.retweet_of is not None:
            existing = self.retweets.get((tweet.author_id, tweet.retweet_of))
            if existing is not None:
                raise AlreadyRetweeted(existing)
            self.retweets[(tweet.author_id, tweet.retweet_of)] = tweet.id
        if repeat is not None:
            self.repeats[(tweet.author_id, repeat.key)] = (tweet.id, repeat.fingerprint)
        self.tweets[tweet.id] = tweet

    def update_media(self, author_id: int, tweet_id: int, media: AttachedMedia) -> bool:
        tweet = self.tweets.get(tweet_id)
        if tweet is None:
            return False
        copies = [media if m.id == media.id and m.rev < media.rev else m for m in tweet.media]
        if copies == list(tweet.media):
            return False
        self.tweets[tweet_id] = msgspec.structs.replace(tweet, media=tuple(copies))
        return True

    def delete(self, tweet: StoredTweet) -> None:
        stored = self.tweets.get(tweet.id)
        if stored is None or stored.author_id != tweet.author_id:
            raise TweetGone()
        del self.tweets[tweet.id]
        if tweet.retweet_of is not None:
            self.retweets.pop((tweet.author_id, tweet.retweet_of), None)

    def get(self, author_id: int, tweet_id: int) -> StoredTweet | None:
        tweet = self.tweets.get(tweet_id)
        return tweet if tweet is not None and tweet.author_id == author_id else None

    def get_many(self, keys: list[tuple[int, int]]) -> list[StoredTweet]:
        found = (self.get(author, tid) for author, tid in dict.fromkeys(keys))
        return [tweet for tweet in found if tweet is not None]

    def _newest(self, match: Callable[[StoredTweet], bool], before_id: int | None) -> list[Any]:
        below = (t for t in self.tweets.values() if before_id is None or t.id < before_id)
        return sorted((t for t in below if match(t)), key=lambda t: t.id, reverse=True)

    def by_author(self, author_id: int, before_id: int | None, limit: int) -> list[StoredTweet]:
        return self._newest(lambda t: t.author_id == author_id, before_id)[:limit]

    def newest_of(self, author_ids: list[int], limit: int) -> dict[int, list[StoredTweet]]:
        return {author: self.by_author(author, None, limit) for author in author_ids}

    def recent_retweets(self, user_id: int, limit: int) -> tuple[dict[int, int], int]:
        newest = self.by_author(user_id, None, limit)
        retweets = {t.retweet_of: t.id for t in newest if t.retweet_of is not None}
        return retweets, (newest[-1].id if len(newest) >= limit else 0)

    def reply_keys(
        self, parent_id: int, before_id: int | None, limit: int
    ) -> list[tuple[int, int]]:
        replies = self._newest(lambda t: t.reply_to == parent_id, before_id)[:limit]
        return [(t.author_id, t.id) for t in replies]

    def retweet_keys(self, original_id: int) -> list[tuple[int, int]]:
        return [(t.author_id, t.id) for t in self.tweets.values() if t.retweet_of == original_id]

    def scan_links(self) -> Iterator[tuple[int, int, int | None, int | None]]:
        for t in list(self.tweets.values()):
            yield t.author_id, t.id, t.reply_to, t.retweet_of

    def count_by_author(self, author_id: int) -> int:
        return sum(1 for t in self.tweets.values() if t.author_id == author_id)

    def count_replies(self, tweet_id: int) -> int:
        return sum(1 for t in self.tweets.values() if t.reply_to == tweet_id)

    def count_retweets(self, tweet_id: int) -> int:
        return sum(1 for t in self.tweets.values() if t.retweet_of == tweet_id)


class FakeLikeStore:
    """``LikeStore`` (``warble.dal.likes.LikeStore``): a like checks that its tweet exists in the
    tweet store (``TweetMissing``); a repeat like is False; an unlike of a like that changed
    since it was read is False."""

    def __init__(self, tweets: FakeTweetStore) -> None:
        self._tweets = tweets
        self.likes: dict[tuple[int, int], Like] = {}  # (user, tweet) -> the edge

    def edge(self, user_id: int, tweet_id: int) -> Like | None:
        return self.likes.get((user_id, tweet_id))

    def like(self, user_id: int, tweet_id: int, author_id: int, seq: int) -> bool:
        if tweet_id not in self._tweets.tweets:
            raise TweetMissing()
        if (user_id, tweet_id) in self.likes:
            return False
        self.likes[(user_id, tweet_id)] = Like(user_id, tweet_id, seq, author_id)
        return True

    def unlike(self, like: Like) -> bool:
        current = self.likes.get((like.user_id, like.tweet_id))
        if current is None or current.seq != like.seq:
            return False
        del self.likes[(like.user_id, like.tweet_id)]
        return True

    def liked_page(
        self, user_id: int, before_seq: int | None, limit: int
    ) -> list[tuple[int, int, int]]:
        mine = [
            like
            for like in self.likes.values()
            if like.user_id == user_id and (before_seq is None or like.seq < before_seq)
        ]
        mine.sort(key=lambda like: like.seq, reverse=True)
        return [(like.seq, like.author_id, like.tweet_id) for like in mine[:limit]]

    def recent_likes(self, user_id: int, limit: int) -> tuple[dict[int, int], int]:
        newest = self.liked_page(user_id, None, limit)
        likes = {tweet_id: seq for seq, _, tweet_id in newest}
        return likes, (newest[-1][0] if len(newest) >= limit else 0)

    def likers_page(
        self, tweet_id: int, before_seq: int | None, limit: int
    ) -> list[tuple[int, int]]:
        rows = [r for r in self.all_likers(tweet_id) if before_seq is None or r.seq < before_seq]
        return [(r.seq, r.user_id) for r in sorted(rows, reverse=True)[:limit]]

    def count_likers(self, tweet_id: int) -> int:
        return sum(1 for _ in self.all_likers(tweet_id))

    def all_likers(self, tweet_id: int) -> Iterator[Liker]:
        """Oldest like first (a partition's sort-key order, as the Query returns)."""
        likes = [like for like in self.likes.values() if like.tweet_id == tweet_id]
        yield from sorted(Liker(like.seq, like.user_id) for like in likes)

    def delete_likes(self, tweet_id: int, likes: list[Liker]) -> None:
        for _, user_id, _ in likes:
            self.likes.pop((user_id, tweet_id), None)  # deleting what is gone is a no-op

    def existing_tweets(self, tweet_ids: Iterable[int]) -> set[int]:
        return {t for t in tweet_ids if t in self._tweets.tweets}

    def edges(self) -> Iterator[tuple[int, int]]:
        yield from list(self.likes)

    def viewer_flags(self, viewer: int, tweet_ids: list[int]) -> tuple[set[int], set[int]]:
        liked = {tid for tid in tweet_ids if (viewer, tid) in self.likes}
        retweeted = {tid for tid in tweet_ids if self._tweets.retweet_by(viewer, tid) is not None}
        return liked, retweeted


# ---- counters ---------------------------------------------------------------------------------
class FakeCounterMarks:
    """``CounterMarks`` (``warble.dal.counter_marks.RedisCounterMarks``): the keys marked, taken
    in key order; the sweep's cursor."""

    def __init__(self) -> None:
        self.marked: set[str] = set()
        self.cursor: str | None = None

    def mark(self, counter_keys: Collection[str]) -> None:
        self.marked.update(counter_keys)

    def take(self, limit: int) -> list[str]:
        taken = sorted(self.marked)[:limit]
        self.marked.difference_update(taken)
        return taken

    def sweep_cursor(self) -> str | None:
        return self.cursor

    def save_sweep_cursor(self, cursor: str | None) -> None:
        self.cursor = cursor


class FakeCounterStore:
    """``CounterStore`` (``warble.dal.counters.DynamoCounterStore``): ``apply`` claims every
    record and adds every delta, all or nothing; claims that exist already are ``ClaimsTaken``
    with their indexes. ``failures`` are raised by the next ``apply`` calls, one each (a
    ``TransactionRetry`` for a throttled or conflicting transaction); ``transactions`` records
    every applied one."""

    def __init__(self) -> None:
        self.counters: dict[str, dict[str, int]] = {}
        self.claims: set[str] = set()
        self.failures: list[Exception] = []
        self.transactions: list[tuple[list[str], dict[tuple[str, str], int]]] = []
        self.calls = 0

    def apply(self, claims: list[str], deltas: dict[tuple[str, str], int]) -> None:
        self.calls += 1
        if len(claims) + len({key for key, _ in deltas}) > TRANSACT_LIMIT:
            raise ValueError("more actions than one transaction holds")
        if unknown := {f for _, f in deltas} - COUNTER_FIELDS:
            raise ValueError(f"unknown counters {sorted(unknown)}")
        if self.failures:
            raise self.failures.pop(0)
        taken = [index for index, claim in enumerate(claims) if claim in self.claims]
        if taken:
            raise ClaimsTaken(taken)
        self.claims.update(claims)
        for (key, name), amount in deltas.items():
            item = self.counters.setdefault(key, {})
            item[name] = item.get(name, 0) + amount
        self.transactions.append((list(claims), dict(deltas)))

    def read(self, keys: list[str]) -> dict[str, dict[str, int]]:
        return {
            key: {name: self.counters[key].get(name, 0) for name in COUNTER_FIELDS}
            if key in self.counters
            else {}
            for key in keys
        }

    def scan(self) -> Iterator[tuple[str, dict[str, int]]]:
        for key, values in list(self.counters.items()):
            yield key, dict(values)

    def current(self, key: str, field: str) -> int | None:
        return self.counters.get(key, {}).get(field)

    def keys_page(self, start: str | None, limit: int) -> tuple[list[str], str | None]:
        ordered = sorted(self.counters)
        rest = [key for key in ordered if start is None or key > start]
        page = rest[:limit]
        return page, page[-1] if len(rest) > limit else None

    def repair(self, key: str, field: str, observed: int | None, value: int) -> bool:
        if self.current(key, field) != observed:
            return False  # it moved: never overwrite a delta applied meanwhile
        self.counters.setdefault(key, {})[field] = value
        return True


def retry() -> TransactionRetry:
    return TransactionRetry("TransactionConflict")


# ---- the follow graph -------------------------------------------------------------------------
@dataclass(frozen=True)
class FakeEdge:
    seq: int
    friend: bool


class FakeGraphStore:
    """``GraphStore`` (``warble.dal.graph.DynamoGraphStore``): follow edges with their ``seq``;
    lists newest first by ``seq``; friends in id order; a follow over the limit or of an edge
    that exists is ``FollowRejected``."""

    def __init__(self) -> None:
        self.edges: dict[tuple[int, int], int] = {}  # (follower, followee) -> seq
        self.spreads: dict[int, int] = {}  # user -> followers shards (``spread``)
        self.reads = 0

    def _edge(self, a: int, b: int) -> FakeEdge | None:
        seq = self.edges.get((a, b))
        return None if seq is None else FakeEdge(seq, (b, a) in self.edges)

    def pair(self, a: int, b: int) -> tuple[Any, Any]:
        self.reads += 1
        return self._edge(a, b), self._edge(b, a)

    def statuses(self, viewer: int, others: list[int]) -> dict[int, tuple[bool, bool]]:
        return {o: ((viewer, o) in self.edges, (o, viewer) in self.edges) for o in others}

    def restrictions(self, user_id: int) -> list[tuple[str, int, int]]:
        return []  # the unit tier's world has no blocks or mutes

    def restricted_pairs(self, pairs: list[tuple[int, int]]) -> set[tuple[int, int]]:
        return set()

    def followers_among(self, user_id: int, others: list[int]) -> set[int]:
        return {o for o in others if (o, user_id) in self.edges}

    def following_counts(self, user_ids: list[int]) -> dict[int, int]:
        return {uid: sum(1 for a, _ in self.edges if a == uid) for uid in user_ids}

    def follow(self, a: int, b: int, seq: int, reverse: Any, limit: int) -> bool:
        if (a, b) in self.edges:
            raise FollowRejected(FollowRejected.EXISTS)
        if self.following_counts([a])[a] >= limit:
            raise FollowRejected(FollowRejected.LIMIT)
        if (reverse is None) != ((b, a) not in self.edges):
            raise FollowRejected(FollowRejected.RACED)
        self.edges[(a, b)] = seq
        return reverse is not None

    def unfollow(self, a: int, b: int, edge: Any, reverse: Any) -> None:
        if self._edge(a, b) != edge:
            raise FollowRejected(FollowRejected.RACED)
        del self.edges[(a, b)]

    def page(
        self, user_id: int, which: str, limit: int, before_seq: int | None
    ) -> tuple[list[tuple[int, int]], bool]:
        if which == "following":
            rows = [(b, seq) for (a, b), seq in self.edges.items() if a == user_id]
        else:
            rows = [(a, seq) for (a, b), seq in self.edges.items() if b == user_id]
        rows = [r for r in rows if before_seq is None or r[1] < before_seq]
        rows.sort(key=lambda row: row[1], reverse=True)
        return rows[:limit], len(rows) > limit

    def friends(self, user_id: int) -> list[int]:
        return sorted(b for (a, b) in self.edges if a == user_id and (b, a) in self.edges)

    def friends_of(self, user_ids: list[int]) -> dict[int, list[int]]:
        return {uid: self.friends(uid) for uid in user_ids}

    def following_seqs(self, user_id: int) -> dict[int, int]:
        self.reads += 1
        return {b: seq for (a, b), seq in self.edges.items() if a == user_id}

    def friends_page(
        self, user_id: int, limit: int, after_id: int | None
    ) -> tuple[list[int], bool]:
        ids = [uid for uid in self.friends(user_id) if after_id is None or uid > after_id]
        return ids[:limit], len(ids) > limit

    def follow_edges(self) -> Iterator[tuple[int, int]]:
        yield from list(self.edges)

    def count_followers(self, user_id: int) -> int:
        return sum(1 for _, b in self.edges if b == user_id)

    def follower_pages(self, user_id: int, size: int) -> Iterator[list[tuple[int, int]]]:
        rows = [(a, seq) for (a, b), seq in self.edges.items() if b == user_id]
        for start in range(0, len(rows), size):
            yield rows[start : start + size]

    def spread(self, user_id: int, shards: int) -> None:
        self.spreads[user_id] = max(shards, self.spreads.get(user_id, 1))


# ---- muted words ------------------------------------------------------------------------------
class FakeMutedWordStore:
    """``MutedWordStore`` (``warble.dal.muted_words``): each user's list; ``reads`` counts the
    table's reads (a warm home read makes none)."""

    def __init__(self) -> None:
        self.lists_: dict[int, list[str]] = {}
        self.reads = 0

    def words(self, user_id: int) -> list[str]:
        self.reads += 1
        return list(self.lists_.get(user_id, []))

    def lists(self, user_ids: list[int]) -> dict[int, list[str]]:
        self.reads += 1
        return {uid: list(self.lists_[uid]) for uid in user_ids if uid in self.lists_}

    def replace(self, user_id: int, words: list[str]) -> None:
        if words:
            self.lists_[user_id] = list(words)
        else:
            self.lists_.pop(user_id, None)


class FakeSuspensionStore:
    """``SuspensionStore`` (``warble.dal.suspensions``) over the World's profiles: a suspended
    account has no profile, as ``warble.dal.accounts`` reads none for it."""

    def __init__(self, profiles: FakeProfiles) -> None:
        self._profiles = profiles
        self.suspended: dict[int, dict[str, Any]] = {}

    def account(self, user_id: int) -> Account | None:
        record = self._profiles.users.get(user_id) or self.suspended.get(user_id)
        if record is None:
            return None
        return Account(user_id, str(record["username"]), user_id in self.suspended)

    def set_suspended(self, user_id: int, suspended: bool) -> bool:
        source, target = (
            (self._profiles.users, self.suspended)
            if suspended
            else (self.suspended, self._profiles.users)
        )
        if user_id not in source:
            return False
        target[user_id] = source.pop(user_id)
        return True


class FakeSessionEnder:
    """``SessionEnder`` (``AccountService.end_sessions``): which users' sessions were ended."""

    def __init__(self) -> None:
        self.ended: list[int] = []

    def end_sessions(
        self, user_id: int, session_ids: Any = None, *, keep: int | None = None
    ) -> list[int]:
        self.ended.append(user_id)
        return []


# ---- timelines --------------------------------------------------------------------------------
class FakeTimelineStore:
    """``TimelineStore`` (``warble.dal.timelines.TimelineStore``): sets of entries, newest first
    by tweet id. A timeline exists once built; pushes and backfills go to built ones only;
    both kinds of list keep their newest ``cap`` / ``recent_cap`` entries."""

    def __init__(self, cap: int = 800, recent_cap: int = 100) -> None:
        self.cap = cap
        self.recent_cap = recent_cap
        self.home: dict[int, set[str]] = {}
        self.recent: dict[int, set[str]] = {}
        self.celebrity_sets: dict[int, set[str]] = {}  # the sets on the celebrities' tag
        self.celebrities: dict[int, list[int]] = {}
        self.marks: dict[int, bool] = {}

    @staticmethod
    def _newest(entries: Iterable[str], before: int | None, limit: int) -> list[str]:
        kept = (e for e in entries if before is None or parse_entry(e)[1] < before)
        return sorted(kept, reverse=True)[:limit]

    def _trimmed(self, entries: set[str], cap: int) -> set[str]:
        return set(sorted(entries, reverse=True)[:cap])

    def push(self, user_ids: Iterable[int], entry: str) -> int:
        pushed = 0
        for user_id in user_ids:
            if user_id in self.home:
                self.home[user_id] = self._trimmed(self.home[user_id] | {entry}, self.cap)
                pushed += 1
        return pushed

    def remove(self, user_ids: Iterable[int], entry: str) -> None:
        for user_id in user_ids:
            self.home.get(user_id, set()).discard(entry)

    def _sets(self, celebrity: bool) -> dict[int, set[str]]:
        return self.celebrity_sets if celebrity else self.recent

    def remember_recent(self, author_id: int, entry: str, celebrity: bool = False) -> None:
        for sets in (self.recent, self.celebrity_sets) if celebrity else (self.recent,):
            if author_id in sets:  # only a built set takes pushes
                sets[author_id] = self._trimmed(sets[author_id] | {entry}, self.recent_cap)

    def forget_recent(self, author_id: int, entry: str) -> None:
        self.recent.get(author_id, set()).discard(entry)
        self.celebrity_sets.get(author_id, set()).discard(entry)

    def recent_built(self, author_ids: list[int], celebrity: bool = False) -> dict[int, bool]:
        return {a: a in self._sets(celebrity) for a in author_ids}

    def fill_recent(self, author_id: int, entries: list[str], celebrity: bool = False) -> None:
        sets = self._sets(celebrity)
        sets[author_id] = self._trimmed(sets.get(author_id, set()) | set(entries), self.recent_cap)

    def add(self, user_id: int, entries: list[str]) -> bool:
        if not entries:
            return True
        if user_id not in self.home:
            return False
        self.home[user_id] = self._trimmed(self.home[user_id] | set(entries), self.cap)
        return True

    def remove_author(self, user_id: int, author_id: int) -> None:
        if user_id in self.home:
            self.home[user_id] = {e for e in self.home[user_id] if parse_entry(e)[0] != author_id}

    def page(self, user_id: int, before_tweet_id: int | None, limit: int) -> list[str] | None:
        if user_id not in self.home:
            return None
        return self._newest(self.home[user_id], before_tweet_id, limit)

    def recent_pages(
        self,
        author_ids: list[int],
        before_tweet_id: int | None,
        limit: int,
        celebrity: bool = False,
    ) -> dict[int, list[str]]:
        sets = self._sets(celebrity)
        return {a: self._newest(sets.get(a, set()), before_tweet_id, limit) for a in author_ids}

    def start_rebuild(self, user_id: int) -> None:
        self.home.setdefault(user_id, set())

    def finish_rebuild(self, user_id: int, entries: list[str]) -> None:
        merged = self.home.get(user_id, set()) | set(entries)
        self.home[user_id] = self._trimmed(merged, self.cap)

    def batch(self) -> FakeBatch:
        return FakeBatch()

    def home_page_later(
        self, batch: Any, user_id: int, before_tweet_id: int | None, limit: int
    ) -> Callable[[], tuple[list[str] | None, list[int] | None]]:
        page = self.page(user_id, before_tweet_id, limit)
        celebrities = self.celebrities.get(user_id)
        return lambda: (page, None if celebrities is None else list(celebrities))

    def followed_celebrities(self, user_id: int) -> list[int] | None:
        cached = self.celebrities.get(user_id)
        return None if cached is None else list(cached)

    def remember_celebrities(self, user_id: int, celebrities: list[int], ttl: int) -> None:
        self.celebrities[user_id] = list(celebrities)

    def forget_celebrities(self, user_id: int) -> None:
        self.celebrities.pop(user_id, None)

    # A stream batch's writes: the fake applies each at once, in order.
    def push_later(self, writes: Any, user_ids: Iterable[int], entry: str) -> None:
        self.push(user_ids, entry)

    def remove_later(self, writes: Any, user_ids: Iterable[int], entry: str) -> None:
        self.remove(user_ids, entry)

    def remember_recent_later(
        self, writes: Any, author_id: int, entry: str, celebrity: bool
    ) -> None:
        self.remember_recent(author_id, entry, celebrity)

    def forget_recent_later(self, writes: Any, author_id: int, entry: str) -> None:
        self.forget_recent(author_id, entry)

    def add_later(self, writes: Any, user_id: int, entries: list[str]) -> None:
        self.add(user_id, entries)

    def remove_author_later(self, writes: Any, user_id: int, author_id: int) -> None:
        self.remove_author(user_id, author_id)

    def forget_celebrities_later(self, writes: Any, user_id: int) -> None:
        self.forget_celebrities(user_id)

    def mark_celebrity_later(self, writes: Any, author_id: int, big: bool) -> None:
        self.marks[author_id] = big
        self.celebrity_sets.pop(author_id, None)

    def celebrity_marks_later(
        self, batch: Any, author_ids: list[int]
    ) -> Callable[[], dict[int, bool | None]]:
        marks = {a: self.marks.get(a) for a in author_ids}
        return lambda: marks

    def recent_later(
        self, batch: Any, author_ids: list[int], limit: int
    ) -> Callable[[], dict[int, list[str] | None]]:
        built = self.recent_built(author_ids)
        pages = self.recent_pages([a for a in author_ids if built[a]], None, limit)
        return lambda: {a: pages.get(a) if built[a] else None for a in author_ids}


# ---- the world: the production builders on fakes ---------------------------------------------
class FakePeopleIndex:
    """``PeopleIndex`` (``warble.dal.search.PostgresPeopleIndex``): the followers_count copies the
    counters' listener makes; no candidates (search is not faked beyond them)."""

    def __init__(self) -> None:
        self.followers: dict[int, int] = {}

    def candidates(self, query: str, friends: list[int], limit: int) -> list[tuple[int, bool]]:
        return []

    def set_followers(self, counts: dict[int, int]) -> int:
        changed = {uid: n for uid, n in counts.items() if self.followers.get(uid) != n}
        self.followers.update(changed)
        return len(changed)


class FakeSnapshots:
    """``Snapshots`` (``warble.dal.search.RedisSnapshots``): search's ranked pages, by token."""

    def __init__(self) -> None:
        self.saved: dict[tuple[int, int], list[tuple[int, Any]]] = {}

    def save_later(
        self, batch: Any, viewer: int, token: int, entries: list[tuple[int, Any]]
    ) -> None:
        self.saved[(viewer, token)] = list(entries)

    def load(self, viewer: int, token: int) -> list[tuple[int, Any]] | None:
        return self.saved.get((viewer, token))


@dataclass(frozen=True)
class Taken:
    """``Spent``: a window counter's answer."""

    allowed: bool
    used: int
    reset_ms: int


class FakeWindowCounter:
    """``WindowCounter``: fixed windows that never end (a unit test spends within one)."""

    def __init__(self) -> None:
        self.used: dict[str, int] = {}

    def _take(self, key: str, limit: int, window_ms: int) -> Taken:
        used = self.used.get(key, 0)
        if used >= limit:
            return Taken(False, used, window_ms)
        self.used[key] = used + 1
        return Taken(True, used + 1, window_ms)

    def take_user(self, user_id: int, limit: int, window_ms: int) -> Taken:
        return self._take(f"user:{user_id}", limit, window_ms)

    def take_location(self, user_id: int, limit: int, window_ms: int) -> Taken:
        return self._take(f"location:{user_id}", limit, window_ms)

    def take_reports(self, user_id: int, limit: int, window_ms: int) -> Taken:
        return self._take(f"reports:{user_id}", limit, window_ms)

    def give_back_report(self, user_id: int) -> None:
        key = f"reports:{user_id}"
        self.used[key] = max(0, self.used.get(key, 0) - 1)

    def take_address(self, budget: str, network: str, limit: int, window_ms: int) -> Taken:
        return self._take(f"{budget}:{network}", limit, window_ms)

    def peek_address(self, budget: str, network: str) -> tuple[int, int]:
        return self.used.get(f"{budget}:{network}", 0), 0


class FakeReportStore:
    """``ReportStore``: one open case per target, one report per reporter and case."""

    def __init__(self) -> None:
        self.cases: dict[int, StoredCase] = {}
        self.reports: dict[int, StoredReport] = {}
        self.racing_twin: StoredReport | None = None  # filed first by "another request"

    def _open_case(self, target_type: str, target_id: int) -> StoredCase | None:
        found = [
            c for c in self.cases.values()
            if (c.target_type, c.target_id, c.status) == (target_type, target_id, "open")
        ]  # fmt: skip
        return found[0] if found else None

    def open_report(
        self, reporter_id: int, target_type: str, target_id: int
    ) -> StoredReport | None:
        case = self._open_case(target_type, target_id)
        held = [
            r for r in self.reports.values()
            if case is not None and (r.case_id, r.reporter_id) == (case.id, reporter_id)
        ]  # fmt: skip
        return held[0] if held else None

    def file(self, report: StoredReport, opening: Opening) -> tuple[StoredReport, bool]:
        if self.racing_twin is not None:  # a twin committed between the check and this write
            twin, self.racing_twin = self.racing_twin, None
            self.file(twin, opening)
        case = self._open_case(report.target_type, report.target_id)
        if case is None:
            case = StoredCase(
                opening.case_id, report.target_type, report.target_id, opening.conversation_id,
                opening.subject_id, opening.subject, opening.snapshot, 0, {}, "open", None,
                None, None,
            )  # fmt: skip
        held = self.open_report(report.reporter_id, report.target_type, report.target_id)
        if held is not None:
            return held, False
        report = replace(report, case_id=case.id)
        self.reports[report.id] = report
        reasons = dict(case.reasons)
        reasons[report.reason] = reasons.get(report.reason, 0) + 1
        self.cases[case.id] = replace(case, reporter_count=case.reporter_count + 1, reasons=reasons)
        return report, True

    def reports_page(
        self, reporter_id: int, before_id: int | None, limit: int
    ) -> list[StoredReport]:
        mine = sorted(
            (r for r in self.reports.values()
             if r.reporter_id == reporter_id and (before_id is None or r.id < before_id)),
            key=lambda r: -r.id,
        )  # fmt: skip
        return mine[:limit]

    def open_cases(self, after: tuple[int, int] | None, limit: int) -> list[StoredCase]:
        ordered = sorted(
            (c for c in self.cases.values() if c.status == "open"),
            key=lambda c: (-c.reporter_count, c.id),
        )
        if after is not None:
            ordered = [c for c in ordered if (-c.reporter_count, c.id) > (-after[0], after[1])]
        return ordered[:limit]

    def closed_cases(self, before: tuple[int, int] | None, limit: int) -> list[StoredCase]:
        ordered = sorted(
            (c for c in self.cases.values() if c.status == "closed"),
            key=lambda c: (c.closed_at_ms or 0, c.id),
            reverse=True,
        )
        if before is not None:
            ordered = [c for c in ordered if ((c.closed_at_ms or 0), c.id) < before]
        return ordered[:limit]

    def case(self, case_id: int) -> StoredCase | None:
        return self.cases.get(case_id)

    def resolve(
        self, case_id: int, closing: Closing, act: Callable[[StoredCase], None]
    ) -> tuple[StoredCase, bool] | None:
        case = self.cases.get(case_id)
        if case is None:
            return None
        if case.status != "open":
            return case, False
        act(case)
        closed = replace(
            case, status="closed", action=closing.action, note=closing.note,
            closed_at_ms=closing.at_ms,
        )  # fmt: skip
        self.cases[case_id] = closed
        for r in list(self.reports.values()):
            if r.case_id == case_id and r.status == "open":
                self.reports[r.id] = replace(
                    r, status=closing.report_status, resolved_at_ms=closing.at_ms
                )
        return closed, True

    def purge_closed(self, closed_before_ms: int, limit: int) -> int:
        doomed = [
            c.id for c in self.cases.values()
            if c.status == "closed" and (c.closed_at_ms or 0) < closed_before_ms
        ][:limit]  # fmt: skip
        for case_id in doomed:
            del self.cases[case_id]
            for r in [r for r in self.reports.values() if r.case_id == case_id]:
                del self.reports[r.id]
        return len(doomed)


class MemoryStores(Stores):
    """The adapters of ``world``, in memory, for the production builders
    (``warble.services.<feature>``); the features no unit test reaches keep the production
    adapters, which the unit tier's switched-off network refuses."""

    def __init__(self, c: Clients, world: World) -> None:
        super().__init__(c)
        self._w = world

    def ids(self) -> FakeIds:
        return self._w.ids

    def profiles(self) -> FakeProfiles:
        return self._w.profiles

    def cache(self, ttl_seconds: int, key: Any, codec: Any = None) -> Any:
        return FakeCache(key, self._w.keyspace)

    def memberships(self, kind: str) -> FakeMemberships:
        return self._w.memberships[kind]

    def counters(self) -> FakeCounterStore:
        return self._w.counters

    def counter_marks(self) -> FakeCounterMarks:
        return self._w.marks

    def sleep(self, seconds: float) -> None:
        self._w.sleeps.append(seconds)
        if self._w.on_sleep is not None:
            self._w.on_sleep()

    def graph(self) -> FakeGraphStore:
        return self._w.graph_store

    def blocks(self) -> Any:
        # The fake graph store writes no block records (no unit test blocks): Shields read its
        # restrictions, none.
        return self._w.graph_store

    def block_sets(self) -> FakeBlockSets:
        return self._w.block_sets

    def muted_words(self) -> FakeMutedWordStore:
        return self._w.muted_word_store

    def tweets(self) -> FakeTweetStore:
        return self._w.tweet_store

    def suspensions(self) -> FakeSuspensionStore:
        return self._w.suspension_store

    def likes(self) -> FakeLikeStore:
        return self._w.like_store

    def media(self) -> FakeMediaStore:
        return self._w.media_store

    def bucket(self) -> FakeBucket:
        return self._w.bucket

    def timelines(self) -> FakeTimelineStore:
        return self._w.timeline_store

    def people_index(self) -> FakePeopleIndex:
        return self._w.people

    def snapshots(self) -> FakeSnapshots:
        return FakeSnapshots()

    def window_counter(self) -> FakeWindowCounter:
        return self._w.window_counter

    def reports(self) -> FakeReportStore:
        return self._w.report_store

    def socket_tickets(self) -> FakeSocketTickets:
        return self._w.socket_tickets


@dataclass
class World:
    """The services as ``warble.services.Container`` builds them (the same builders), on the
    fakes above; ``container`` is that container."""

    celebrity_followers: int = 10_000
    backfill: int = 20
    settle_seconds: float = 5.0
    reconcile_page: int = 100
    reconcile_sweep: int = 2000
    mark_share: float = 1.0
    ids: FakeIds = field(default_factory=FakeIds)
    profiles: FakeProfiles = field(default_factory=FakeProfiles)
    tweet_store: FakeTweetStore = field(default_factory=FakeTweetStore)
    counters: FakeCounterStore = field(default_factory=FakeCounterStore)
    marks: FakeCounterMarks = field(default_factory=FakeCounterMarks)
    graph_store: FakeGraphStore = field(default_factory=FakeGraphStore)
    timeline_store: FakeTimelineStore = field(default_factory=FakeTimelineStore)
    keyspace: FakeKeyspace = field(default_factory=FakeKeyspace)
    following: FakeMemberships = field(default_factory=FakeMemberships)
    followers: FakeMemberships = field(default_factory=FakeMemberships)
    liked: FakeMemberships = field(default_factory=FakeMemberships)
    retweeted: FakeMemberships = field(default_factory=FakeMemberships)
    recent_actions: int = 1000
    sleeps: list[float] = field(default_factory=list)
    repaired: list[set[str]] = field(default_factory=list)
    on_sleep: Callable[[], None] | None = None
    media_store: FakeMediaStore = field(default_factory=FakeMediaStore)
    bucket: FakeBucket = field(default_factory=FakeBucket)
    block_sets: FakeBlockSets = field(default_factory=FakeBlockSets)
    people: FakePeopleIndex = field(default_factory=FakePeopleIndex)
    muted_word_store: FakeMutedWordStore = field(default_factory=FakeMutedWordStore)
    window_counter: FakeWindowCounter = field(default_factory=FakeWindowCounter)
    report_store: FakeReportStore = field(default_factory=FakeReportStore)
    admins: str = "warble_admin"
    socket_tickets: FakeSocketTickets = field(default_factory=FakeSocketTickets)

    def ready_media(self, owner_id: int, alt_text: str = "") -> str:
        """A Media of ``owner_id``, processed and ready to attach; its id."""
        media_id = self.ids.next_id()
        self.media_store.create(
            StoredMedia(
                id=media_id,
                owner_id=owner_id,
                content_type="image/png",
                size=100,
                alt_text=alt_text,
                created_at_ms=1_790_000_000_000,
                token="t",
                status=READY,
                expires_at=None,
                width=4,
                height=3,
                original_key=f"media/{media_id}/t.png",
                preview_key=f"media/{media_id}/t.preview.webp",
                blurhash="L00000fQfQfQfQfQfQfQfQfQfQfQ",
            )
        )
        return str(media_id)

    def __post_init__(self) -> None:
        self.like_store = FakeLikeStore(self.tweet_store)
        self.suspension_store = FakeSuspensionStore(self.profiles)
        self.tweet_store.media = self.media_store  # the media a tweet's transaction claims
        self.memberships = {
            "following": self.following,
            "followers": self.followers,
            "liked": self.liked,
            "retweeted": self.retweeted,
        }
        self.tweet_cache = FakeCache(keys.tweet, self.keyspace)
        settings = Settings(
            celebrity_followers=self.celebrity_followers,
            follow_backfill=self.backfill,
            reconcile_settle_seconds=self.settle_seconds,
            reconcile_pause_seconds=0.0,
            reconcile_page=self.reconcile_page,
            reconcile_sweep=self.reconcile_sweep,
            reconcile_mark_share=self.mark_share,
            recent_actions=self.recent_actions,
            timeline_cap=self.timeline_store.cap,
            author_recent_cap=self.timeline_store.recent_cap,
            media_url=MEDIA_URL,
            admin_usernames=self.admins,
        )
        self.container = c = Container(settings, stores=lambda c: MemoryStores(c, self))
        self.shields, self.graph, self.tweets = c.shields, c.graph, c.tweets
        self.media, self.likes, self.timelines = c.media, c.likes, c.timelines
        self.muted_words = c.muted_words
        self.reports = c.reports
        self.tickets = c.tickets
        self.rules: CounterRules = c.counter_rules
        self.counters_changed = c.counters_changed
        self.reconciler = counter_wiring.reconciler(c, on_repaired=self._repaired)

    def _repaired(self, counter_keys: set[str]) -> None:
        self.repaired.append(counter_keys)
        self.counters_changed(counter_keys)

    def counter_processor(self, **options: Any) -> StreamCounterProcessor:
        options.setdefault("backoff_seconds", 0.0)
        return counter_wiring.processor(self.container, **options)

    def deliver(self, *events: Event) -> None:
        """Events through the counter consumer, as the stream would bring them."""
        changes = [Change(f"ev{self.ids.next_id()}", str(i), (e,)) for i, e in enumerate(events)]
        outcome = self.counter_processor().process(changes)
        assert outcome.failures == []

    def user(self, name: str | None = None) -> int:
        return self.profiles.add(self.ids.next_id(), name)

    def follow(self, follower: int, followee: int) -> None:
        """A follow, and its followers_count from the counter consumer (the celebrity threshold
        reads it). The timeline consumer's part is the test's to call."""
        self.graph.follow(follower, followee)
        self.deliver(Followed(follower=follower, followee=followee))


if TYPE_CHECKING:  # each fake is its port (checked by ``mypy tests/unit/fakes.py``)
    from warble.domain import shared
    from warble.domain.accounts.ports import Profiles, SocketTickets
    from warble.domain.counters.ports import CounterMarks, CounterStore
    from warble.domain.graph.ports import GraphStore
    from warble.domain.likes.ports import LikeStore
    from warble.domain.muted_words.ports import MutedWordStore
    from warble.domain.rate_limits import WindowCounter
    from warble.domain.reports.ports import ReportStore
    from warble.domain.suspensions.ports import SessionEnder, SuspensionStore
    from warble.domain.timelines.ports import TimelineStore
    from warble.domain.tweets.ports import TweetStore

    _ids: shared.IdGenerator = FakeIds()
    _cache: shared.ObjectCache[int] = FakeCache()
    _profiles: Profiles = FakeProfiles()
    _memberships: shared.Memberships = FakeMemberships()
    _tweets: TweetStore = FakeTweetStore()
    _likes: LikeStore = FakeLikeStore(FakeTweetStore())
    _counters: CounterStore = FakeCounterStore()
    _marks: CounterMarks = FakeCounterMarks()
    _graph: GraphStore = FakeGraphStore()
    _timelines: TimelineStore = FakeTimelineStore()
    _muted_words: MutedWordStore = FakeMutedWordStore()
    _reports: ReportStore = FakeReportStore()
    _counter: WindowCounter = FakeWindowCounter()
    _suspensions: SuspensionStore = FakeSuspensionStore(FakeProfiles())
    _sessions: SessionEnder = FakeSessionEnder()
    _tickets: SocketTickets = FakeSocketTickets()
