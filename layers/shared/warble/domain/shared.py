"""What every feature's ports share: batched reads (``ReadBatch``, ``Later``), the caches, the
versioned membership hashes, id generation, and the answers every feature embeds."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")
K = TypeVar("K", contravariant=True)


class EncodedJson:
    """A part of an answer already encoded as JSON (a cached tweet's media, encoded when the
    tweet was cached): the answer encoder writes it as it is (``warble.http.render``)."""

    __slots__ = ("json",)

    def __init__(self, json: Any) -> None:
        self.json = json  # the text: a str, or bytes-like as a cache read it (no copy made)


class ReadBatch(Protocol):
    """Reads of several stores in one round trip: stores queue reads (their ``*_later``
    methods return readers), ``run`` sends them, then the readers give the answers."""

    def run(self) -> None: ...


Later = Callable[[], T]


class Writes(Protocol):
    """A stream batch's writes to memory (``warble.dal.redis.WriteBatch``): stores queue them
    (their ``*_later`` methods taking ``writes``) in stream order; ``run`` sends them in one
    round trip (per node, per 20,000 commands) and raises if any failed."""

    def run(self) -> None: ...


def at_once(batch: ReadBatch, queue: Callable[[ReadBatch], Later[T]]) -> T:
    """A ``*_later`` read sent on its own: queued in ``batch``, sent, answered."""
    later = queue(batch)
    batch.run()
    return later()


class Cache(Protocol[K]):
    """A lease-guarded cache of one kind of value (``warble.dal.cache.LeasedCache``), read and
    dropped by its subject: a user id for profiles, a tweet id for tweets. The store names the
    subject's key (``warble.keys``); the rules never do."""

    def batch(self) -> ReadBatch: ...
    def get_many_later(
        self,
        batch: ReadBatch,
        subjects: Sequence[K],
        loader: Callable[[list[int]], list[Any | None]],
        fill: bool = True,
    ) -> Later[list[Any | None]]: ...
    def get_or_load(self, subject: K, loader: Callable[[], T | None]) -> T | Any | None: ...
    def get_many(self, subjects: Sequence[K]) -> list[Any | None]: ...
    def get_many_or_load(
        self, subjects: Sequence[K], loader: Callable[[list[int]], list[Any | None]]
    ) -> list[Any | None]: ...
    def lease(self, subject: K) -> str | None: ...
    def fill(self, subject: K, token: str, value: Any) -> bool: ...
    def invalidate(self, subject: K) -> None: ...
    def invalidate_many(self, subjects: Sequence[K]) -> None: ...


class ObjectCache(Cache[K], Protocol[K]):
    """A cache of stored objects that can also be primed and tombstoned (tweets)."""

    def get(self, subject: K) -> Any | None: ...
    def fill_missing(self, entries: Sequence[tuple[K, Any]]) -> None: ...
    def tombstone(self, subject: K, marker: Any, ttl_seconds: int) -> None: ...


@dataclass(frozen=True)
class Held:
    """What a loaded membership hash says of some members: those ``present``, and its
    ``floor``: it knows every member at or above it (0: it knows every member)."""

    floor: int
    present: frozenset[int]

    def knows(self, member: int) -> bool:
        return member >= self.floor


class Memberships(Protocol):
    """Versioned membership hashes in memory (``warble.dal.memberships``): who a user follows,
    what they liked, what they retweeted. ``seq`` is the change's version (the follow's,
    like's or retweet's Snowflake; its removal carries the same)."""

    def batch(self) -> ReadBatch: ...
    def check_later(
        self, batch: ReadBatch, owner: int, members: Iterable[int]
    ) -> Later[Held | None]: ...
    def rebuild(self, owner: int, load: Callable[[], tuple[dict[int, int], int]]) -> Held: ...
    def apply_later(
        self, writes: Writes, owner: int, member: int, seq: int, present: bool
    ) -> None: ...
    def members_later(self, batch: ReadBatch, owner: int) -> Later[Held | None]: ...
    def apply(self, owner: int, member: int, seq: int, present: bool) -> None: ...


class IdGenerator(Protocol):
    def next_id(self) -> int: ...


@dataclass(frozen=True)
class RequestKey:
    """A POST's Idempotency-Key (``key``: its SHA-256, hex) and what the request asked
    (``fingerprint``). The HTTP gate replays repeats from Redis; a store that creates something
    also claims the key durably in its own write, so a repeat after Redis lost the record
    (a failover to an empty node) still creates nothing new."""

    key: str
    fingerprint: str


# ---- what every feature answers with (API.md's objects; warble.http.render writes their JSON) ----
# Answers are slotted dataclasses, built once and never changed, but not ``frozen``: a frozen
# dataclass sets each field through ``object.__setattr__``, 2.5 µs for a Tweet against 0.9 µs,
# which a page of 20 pays 20 times on the warm path (issue 20).
@dataclass(slots=True)
class UserSummary:
    """A user as another object names them: a tweet's author, a notification's actor, a
    conversation's participant."""

    id: str
    username: str
    display_name: str


def user_summary(profile: dict[str, Any]) -> UserSummary:
    """The summary of a profile record (``warble.domain.accounts``' cached form)."""
    return UserSummary(str(profile["id"]), profile["username"], profile["display_name"])


@dataclass(slots=True)
class Page(Generic[T]):
    """A page of a list; ``next_cursor`` is opaque, null when there is nothing more. A feature's
    page is its subclass, which names its items again (``class TweetPage(Page[Tweet])`` with
    ``items: list[Tweet]``): pydantic reads a subclass's inherited ``list[T]`` as a list of
    anything, which the document would show as such and the serializer would have to guess."""

    items: list[T]
    next_cursor: str | None
