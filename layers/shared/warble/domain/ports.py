"""The small interfaces the domain needs from its stores (implemented in ``warble.dal``), and
the errors a store raises that the domain understands. The domain imports nothing else."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from warble.ids import decompose
from warble.keys import CacheKey

if TYPE_CHECKING:
    from warble.domain.tweets import StoredTweet

T = TypeVar("T")


class ReadBatch(Protocol):
    """Reads of several stores in one round trip: stores queue reads (their ``*_later``
    methods return readers), ``run`` sends them, then the readers give the answers."""

    def run(self) -> None: ...


Later = Callable[[], T]


def at_once(batch: ReadBatch, queue: Callable[[ReadBatch], Later[T]]) -> T:
    """A ``*_later`` read sent on its own: queued in ``batch``, sent, answered."""
    later = queue(batch)
    batch.run()
    return later()


class Cache(Protocol):
    def batch(self) -> ReadBatch: ...
    def get_many_later(
        self,
        batch: ReadBatch,
        cache_keys: list[CacheKey],
        loader: Callable[[list[int]], list[Any | None]],
    ) -> Later[list[Any | None]]: ...
    def get_or_load(self, key: CacheKey, loader: Callable[[], T | None]) -> T | Any | None: ...
    def get_many(self, cache_keys: list[CacheKey]) -> list[Any | None]: ...
    def get_many_or_load(
        self, cache_keys: list[CacheKey], loader: Callable[[list[int]], list[Any | None]]
    ) -> list[Any | None]: ...
    def lease(self, key: CacheKey) -> str | None: ...
    def fill(self, key: CacheKey, token: str, value: Any) -> bool: ...
    def invalidate(self, key: CacheKey) -> None: ...
    def invalidate_many(self, cache_keys: list[CacheKey]) -> None: ...


class ObjectCache(Cache, Protocol):
    """A cache of stored objects that can also be primed and tombstoned (tweets)."""

    def get(self, key: CacheKey) -> Any | None: ...
    def fill_missing(self, entries: list[tuple[CacheKey, Any]]) -> None: ...
    def tombstone(self, key: CacheKey, marker: Any, ttl_seconds: int) -> None: ...


@dataclass(frozen=True)
class Held:
    """What a loaded membership hash says of some members: those ``present``, and its
    ``floor``: it knows every member at or above it (0: it knows every member)."""

    floor: int
    present: frozenset[int]

    def knows(self, member: int) -> bool:
        return member >= self.floor


@dataclass(frozen=True)
class Shield:
    """A user's blocks and mutes as held in memory: whom the user blocks, who blocks the user,
    whom the user mutes (warble.dal.blocks)."""

    blocking: frozenset[int] = frozenset()
    blocked_by: frozenset[int] = frozenset()
    muting: frozenset[int] = frozenset()

    @property
    def blocked(self) -> frozenset[int]:
        """Either side of a block: the people whose tweets and replies the user never sees."""
        return self.blocking | self.blocked_by

    @property
    def hidden(self) -> frozenset[int]:
        """Blocked either way or muted: left out of the home timeline and its count."""
        return self.blocking | self.blocked_by | self.muting


class BlockSets(Protocol):
    """Each user's blocks hash in memory (``warble.dal.blocks``)."""

    def batch(self) -> ReadBatch: ...
    def read_later(self, batch: ReadBatch, owner: int) -> Later[Shield | None]: ...
    def check_later(
        self, batch: ReadBatch, owner: int, others: Iterable[int]
    ) -> Later[Shield | None]: ...
    def rebuild(self, owner: int, load: Callable[[], list[tuple[str, int, int]]]) -> Shield: ...
    def apply(self, owner: int, kind: str, other: int, seq: int, present: bool) -> None: ...


class Memberships(Protocol):
    """Versioned membership hashes in memory (``warble.dal.memberships``): who a user follows,
    what they liked, what they retweeted. ``seq`` is the change's version (the follow's,
    like's or retweet's Snowflake; its removal carries the same)."""

    def batch(self) -> ReadBatch: ...
    def check_later(
        self, batch: ReadBatch, owner: int, members: Iterable[int]
    ) -> Later[Held | None]: ...
    def rebuild(self, owner: int, load: Callable[[], tuple[dict[int, int], int]]) -> Held: ...
    def apply(self, owner: int, member: int, seq: int, present: bool) -> None: ...


class IdGenerator(Protocol):
    def next_id(self) -> int: ...


class Session(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def user_id(self) -> int: ...
    @property
    def token_hash(self) -> bytes: ...
    @property
    def device(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def last_seen_at(self) -> datetime: ...
    @property
    def expires_at(self) -> datetime: ...
    @property
    def revoked_at(self) -> datetime | None: ...


class DuplicateAccount(Exception):
    """Raised by the user store when a unique username or email is already taken."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


class UserStore(Protocol):
    def insert(
        self, user_id: int, username: str, email: str, password_hash: str, display_name: str
    ) -> dict[str, Any]: ...
    def get(self, user_id: int) -> dict[str, Any] | None: ...
    def get_many(self, user_ids: list[int]) -> list[dict[str, Any]]: ...
    def id_by_username(self, username: str) -> int | None: ...
    def credentials_by_login(self, login: str) -> dict[str, Any] | None: ...
    def update_profile(self, user_id: int, changes: dict[str, str]) -> dict[str, Any] | None: ...


class SessionStore(Protocol):
    def insert(
        self, session_id: int, user_id: int, token_hash: bytes, device: str, expires_at: datetime
    ) -> Session: ...
    def by_token_hash(self, token_hash: bytes) -> Session | None: ...
    def by_id(self, session_id: int) -> Session | None: ...
    def live_for_user(self, user_id: int) -> Sequence[Session]: ...
    def revoke(self, session_id: int, user_id: int) -> Session | None: ...
    def touch(self, session_id: int) -> bool: ...


class LoginAttempts(Protocol):
    """Failed-login throttle: attempts reserved before the password check."""

    def reserve(self, login: str) -> int: ...
    def release(self, login: str) -> None: ...


@dataclass(frozen=True)
class GateAnswer:
    """What the HTTP gate's one call found: the cached session record; for a live one, whether
    its ``last_seen_at`` is due for a touch and the user budget's answer (counted, used, ms
    until the window ends)."""

    record: dict[str, Any]
    due_for_touch: bool = False
    spent: tuple[bool, int, int] | None = None


class SessionLookups(Protocol):
    """The cached session of a token (by its hash) and whether its ``last_seen_at`` is due for
    a touch, read together; None when the session is not cached. ``gate_later`` adds the user's
    budget, spent only for a live session, queued in the request's first round trip."""

    def batch(self) -> ReadBatch: ...
    def gate_later(
        self,
        batch: ReadBatch,
        user_id: int,
        token_hash_hex: str,
        now_ms: int,
        limit: int,
        window_ms: int,
    ) -> Later[GateAnswer | None]: ...
    def cached(
        self, token_hash_hex: str, user_id: int | None = None
    ) -> tuple[dict[str, Any], bool] | None: ...
    def due_for_touch(self, token_hash_hex: str, user_id: int | None = None) -> bool: ...


class TweetStore(Protocol):
    def author_of(self, tweet_id: int) -> int | None: ...
    def retweet_by(self, user_id: int, original_id: int) -> int | None: ...
    def create(self, tweet: StoredTweet) -> None: ...
    def delete(self, tweet: StoredTweet) -> None: ...
    def get(self, author_id: int, tweet_id: int) -> StoredTweet | None: ...
    def get_many(self, keys: list[tuple[int, int]]) -> list[StoredTweet]: ...
    def by_author(self, author_id: int, before_id: int | None, limit: int) -> list[StoredTweet]: ...
    def recent_retweets(self, user_id: int, limit: int) -> tuple[dict[int, int], int]: ...
    def reply_keys(
        self, parent_id: int, before_id: int | None, limit: int
    ) -> list[tuple[int, int]]: ...
    def retweet_keys(self, original_id: int) -> list[tuple[int, int]]: ...
    def scan_links(self) -> Iterator[tuple[int, int, int | None, int | None]]: ...
    def count_by_author(self, author_id: int) -> int: ...
    def count_replies(self, tweet_id: int) -> int: ...
    def count_retweets(self, tweet_id: int) -> int: ...


@dataclass(frozen=True)
class Like:
    """A like as stored: ``seq`` orders it in both time lists."""

    user_id: int
    tweet_id: int
    seq: int
    author_id: int


class LikeStore(Protocol):
    def edge(self, user_id: int, tweet_id: int) -> Like | None: ...
    def like(self, user_id: int, tweet_id: int, author_id: int, seq: int) -> bool: ...
    def unlike(self, like: Like) -> bool: ...
    def liked_page(
        self, user_id: int, before_seq: int | None, limit: int
    ) -> list[tuple[int, int, int]]: ...
    def likers_page(
        self, tweet_id: int, before_seq: int | None, limit: int
    ) -> list[tuple[int, int]]: ...
    def count_likers(self, tweet_id: int) -> int: ...
    def all_likers(self, tweet_id: int) -> Iterator[tuple[int, int]]: ...
    def delete_likes(self, tweet_id: int, likes: list[tuple[int, int]]) -> None: ...
    def edges(self) -> Iterator[tuple[int, int]]: ...
    def viewer_flags(self, viewer: int, tweet_ids: list[int]) -> tuple[set[int], set[int]]: ...
    def recent_likes(self, user_id: int, limit: int) -> tuple[dict[int, int], int]: ...


class CounterStore(Protocol):
    def apply(self, claims: list[str], deltas: dict[tuple[str, str], int]) -> None: ...
    def read(self, keys: list[str]) -> dict[str, dict[str, int]]: ...
    def scan(self) -> Iterator[tuple[str, dict[str, int]]]: ...
    def current(self, key: str, field: str) -> int | None: ...
    def repair(self, key: str, field: str, observed: int | None, value: int) -> bool: ...


class GraphStore(Protocol):
    reads: int

    def pair(self, a: int, b: int) -> tuple[Any, Any]: ...
    def statuses(self, viewer: int, others: list[int]) -> dict[int, tuple[bool, bool]]: ...
    def followers_among(self, user_id: int, others: list[int]) -> set[int]: ...
    def following_counts(self, user_ids: list[int]) -> dict[int, int]: ...
    def follow(self, a: int, b: int, seq: int, reverse: Any, limit: int) -> bool: ...
    def unfollow(self, a: int, b: int, edge: Any, reverse: Any) -> None: ...
    def page(
        self, user_id: int, which: str, limit: int, before_seq: int | None
    ) -> tuple[list[tuple[int, int]], bool]: ...
    def friends_page(
        self, user_id: int, limit: int, after_id: int | None
    ) -> tuple[list[int], bool]: ...
    def friends(self, user_id: int) -> list[int]: ...
    def following_seqs(self, user_id: int) -> dict[int, int]: ...
    def friend_edges(self) -> Iterable[tuple[int, int]]: ...
    def follow_edges(self) -> Iterator[tuple[int, int]]: ...
    def restriction(self, a: int, b: int, kind: str) -> int | None: ...
    def restrictions(self, user_id: int) -> list[tuple[str, int, int]]: ...
    def block(self, a: int, b: int, seq: int, out: Any, into: Any) -> None: ...
    def unblock(self, a: int, b: int, seq: int) -> None: ...
    def mute(self, a: int, b: int, seq: int) -> None: ...
    def unmute(self, a: int, b: int, seq: int) -> None: ...
    def count_followers(self, user_id: int) -> int: ...
    def second_degree(self, user_id: int) -> set[int]: ...
    def save_second_degree(self, sets: Iterable[tuple[int, set[int]]]) -> int: ...
    def users_with_second_degree(self) -> set[int]: ...


class Profiles(Protocol):
    def profile(self, user_id: int) -> dict[str, Any]: ...
    def profiles(self, user_ids: list[int]) -> dict[int, dict[str, Any]]: ...
    def profiles_later(
        self, batch: ReadBatch, user_ids: list[int]
    ) -> Later[dict[int, dict[str, Any]]]: ...


class ConnectionStore(Protocol):
    """Open WebSocket connections by user (``warble.dal.connections``)."""

    def for_user(self, user_id: int) -> list[str]: ...
    def remove(self, connection_id: str) -> str | None: ...


class FrameSender(Protocol):
    """Posts a frame to one connection (API Gateway's ``@connections``); raises ConnectionGone."""

    def send(self, connection_id: str, frame: dict[str, Any]) -> None: ...


class TimelineStore(Protocol):
    """Home timelines and authors' recent tweets, as sortable entries (``timelines.entry``)."""

    def push(self, user_ids: Iterable[int], entry: str) -> int: ...
    def remove(self, user_ids: Iterable[int], entry: str) -> None: ...
    def remember_recent(self, author_id: int, entry: str) -> None: ...
    def forget_recent(self, author_id: int, entry: str) -> None: ...
    def recent_built(self, author_ids: list[int]) -> dict[int, bool]: ...
    def fill_recent(self, author_id: int, entries: list[str]) -> None: ...
    def add(self, user_id: int, entries: list[str]) -> bool: ...
    def remove_author(self, user_id: int, author_id: int) -> None: ...
    def page(self, user_id: int, before_tweet_id: int | None, limit: int) -> list[str] | None: ...
    def batch(self) -> ReadBatch: ...
    def home_page_later(
        self, batch: ReadBatch, user_id: int, before_tweet_id: int | None, limit: int
    ) -> Later[tuple[list[str] | None, list[int] | None]]: ...
    def recent_pages(
        self, author_ids: list[int], before_tweet_id: int | None, limit: int
    ) -> dict[int, list[str]]: ...
    def start_rebuild(self, user_id: int) -> None: ...
    def finish_rebuild(self, user_id: int, entries: list[str]) -> None: ...
    def followed_celebrities(self, user_id: int) -> list[int] | None: ...
    def remember_celebrities(self, user_id: int, celebrities: list[int], ttl: int) -> None: ...
    def forget_celebrities(self, user_id: int) -> None: ...


# ---- notifications (warble.domain.notifications) ----------------------------------------------
@dataclass(frozen=True)
class Notification:
    """As stored. ``recipient`` 0 is the shared system list."""

    id: int
    recipient: int
    kind: str
    actor: int | None = None
    tweet_id: int | None = None
    tweet_author: int | None = None
    title: str | None = None
    body: str | None = None


@dataclass
class Snapshot:
    """What the two Redis round trips of an unread-counts read found. ``None``: not in Redis."""

    built: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    system_position: int | None = None
    system: int | None = None
    message: int | None = None
    home_position: int | None = None
    home_built: bool = False
    home: int = 0
    celebrities: list[int] | None = None
    celebrities_unbuilt: list[int] = field(default_factory=list)
    # The user's blocks and mutes (warble.dal.blocks): their entries are not counted in home.
    hidden: frozenset[int] | None = None


class NotificationStore(Protocol):
    """Stored notifications, their dedupe items, the system list and durable read positions."""

    def create(self, notification: Notification, dedupe: str) -> tuple[int, bool]:
        """Store it unless ``dedupe`` was stored: (the stored id, whether it was stored now)."""
        ...

    def existing(self, recipient: int, dedupe: str) -> int | None: ...
    def page(
        self, recipient: int, kinds: list[str], before_id: int | None, limit: int
    ) -> list[Notification]: ...
    def system_page(
        self, before_id: int | None, after_id: int, limit: int
    ) -> list[Notification]: ...
    def post_system(self, notification: Notification) -> None: ...
    def system_ids(self) -> list[int]: ...
    def unread_ids(
        self, recipient: int, positions: dict[str, int], cap: int
    ) -> dict[str, list[int]]: ...
    def positions(self, user_id: int) -> dict[str, int]: ...
    def save_positions(self, user_id: int, positions: dict[str, int]) -> None: ...


class UnreadStore(Protocol):
    """Unread counts in Redis (``warble.dal.notifications.RedisUnread``)."""

    cap: int

    def admit(self, recipient: int, window: int, cap: int) -> bool:
        """Take a place under the recipient's cap for this window; False when it is full."""
        ...

    def release(self, recipient: int, window: int) -> None: ...
    def add(self, recipient: int, kind: str, notification_id: int) -> int:
        """1 counted now, 0 counted before (or already read), -1 not in Redis (rebuilt later)."""
        ...

    def snapshot(self, user_id: int) -> Snapshot: ...
    def lease(self, user_id: int) -> str | None: ...
    def fill(
        self, user_id: int, token: str, positions: dict[str, int], unread: dict[str, list[int]]
    ) -> bool: ...
    def mark_read(self, user_id: int, kinds: list[str], position: int) -> dict[str, int] | None: ...
    def set_home_position(self, user_id: int, position: int) -> None: ...
    def positions(self, user_id: int) -> dict[str, int] | None: ...
    def add_system(self, notification_id: int) -> None: ...
    def rebuild_system(self, load: Callable[[], list[int]]) -> None: ...


class HomeTimelines(Protocol):
    """What the home count needs of the home timelines (``warble.domain.timelines``)."""

    def rebuild(self, user_id: int) -> None: ...
    def celebrities_followed(self, user_id: int) -> list[int]: ...
    def ensure_recent(self, authors: list[int]) -> None: ...


class MessageReads(Protocol):
    """Direct messages' side of the unread counts: the unread messages by conversation
    (``dm_unread``, rebuilt when missing), and "mark all read": every conversation of the user
    becomes read (durably) and its unread count leaves ``dm_unread``."""

    def unread_counts(self, me: int) -> dict[int, int]: ...
    def read_all(self, user_id: int) -> None: ...


# ---- Discover (people nearby) ------------------------------------------------------------------
@dataclass(frozen=True)
class StoredLocation:
    user_id: int
    lat: float
    lon: float
    cell: str


@dataclass(frozen=True)
class MatchRecord:
    """A match as stored: ``a`` and ``b`` (in a user's list, ``a`` is that user), the pair's
    conversation, when (epoch ms), and ``seq`` (the list position; 0 for the pair record)."""

    a: int
    b: int
    conversation_id: int
    matched_at_ms: int
    seq: int


@dataclass(frozen=True)
class FeedTake:
    """What a discover page took off the user's feed of candidates, and the feed's state for
    a refill when it ran dry."""

    entries: list[tuple[int, float]]  # (user id, km), nearest first
    reached_km: float  # every candidate up to here has been queued (-1: nothing yet)
    count: int  # the per-cell GEOSEARCH count the feed was last filled with
    exhausted: bool  # the last fill reached the end of every cell: nothing more to fetch


class DiscoverStore(Protocol):
    """Durable locations, swipes and matches (``warble.dal.discover_table``)."""

    def save_location(
        self, user_id: int, lat: float, lon: float, cell: str, at_ms: int
    ) -> str | None: ...
    def save_locations(
        self, entries: Iterable[tuple[int, float, float, str]], at_ms: int
    ) -> None: ...
    def location(self, user_id: int) -> StoredLocation | None: ...
    def all_locations(self) -> Iterator[StoredLocation]: ...
    def record_swipe(self, me: int, other: int, value: str, at_ms: int) -> None: ...
    def pair_swipes(self, me: int, other: int) -> tuple[str, str]: ...
    def swiped_ids(self, user_id: int) -> list[int]: ...
    def create_match(self, a: int, b: int, conversation_id: int, seq: int, at_ms: int) -> bool: ...
    def match(self, a: int, b: int) -> MatchRecord | None: ...
    def are_matched(self, a: int, b: int) -> bool: ...
    def matches_page(
        self, user_id: int, before_seq: int | None, limit: int
    ) -> list[MatchRecord]: ...


class GeoIndex(Protocol):
    """Located users by cell in Redis (``warble.dal.discover``)."""

    def place(
        self, user_id: int, lat: float, lon: float, cell: str, old_cell: str | None
    ) -> None: ...
    def place_many(self, entries: Iterable[tuple[int, float, float, str]]) -> None: ...
    def cached_location(self, user_id: int) -> tuple[float, float] | None: ...
    def cache_location(self, user_id: int, lat: float, lon: float) -> None: ...
    def nearby(
        self, cells: Sequence[str], lat: float, lon: float, radius_km: float, count: int
    ) -> list[list[tuple[int, float]]]: ...


class SeenFilter(Protocol):
    """People already shown (Bloom filter) or swiped (exact), checked and added atomically."""

    def take(self, user_id: int, query: str, limit: int) -> FeedTake | str: ...
    def refill(
        self,
        user_id: int,
        query: str,
        before: float,
        entries: Sequence[tuple[int, float]],
        reached: float,
        count: int,
        exhausted: bool,
    ) -> bool: ...
    def load_swiped(self, user_id: int, swiped: Iterable[int]) -> None: ...
    def add_swiped(self, user_id: int, other: int) -> None: ...


class SwipeLedger(Protocol):
    def swipe(
        self, me: int, other: int, direction: str, durable: tuple[str, str] | None = None
    ) -> tuple[str, str]: ...


class ConversationOpener(Protocol):
    """Opens (or finds) the pair's direct-message conversation on a match; its id
    (``ConversationService.open_for_match``)."""

    def open_for_match(self, a: int, b: int) -> str: ...


@dataclass(frozen=True)
class StoredMessage:
    """A direct message as stored; its time is its Snowflake id's."""

    id: int
    conversation_id: int
    sender_id: int
    text: str
    created_at_ms: int

    @classmethod
    def of(cls, message_id: int, conversation_id: int, sender_id: int, text: str) -> StoredMessage:
        return cls(message_id, conversation_id, sender_id, text, decompose(message_id)[0])

    def record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "conversation_id": self.conversation_id,
            "sender_id": self.sender_id,
            "text": self.text,
            "created_at_ms": self.created_at_ms,
        }


@dataclass(frozen=True)
class Membership:
    """One participant's side of a conversation: read position, unread count, last message."""

    user_id: int
    conversation_id: int
    other_id: int
    last_id: int  # the newest message's id (the conversation's own before any message)
    last_read: int
    unread: int
    last_message: StoredMessage | None


class ConversationStore(Protocol):
    """Conversations, messages and matches (``warble.dal.conversations``)."""

    def conversation_of(self, a: int, b: int) -> int | None: ...
    def create(self, conversation_id: int, a: int, b: int) -> int: ...
    def record_match(self, a: int, b: int, matched_at_ms: int) -> bool: ...
    def matched(self, a: int, b: int) -> bool: ...
    def membership(self, user_id: int, conversation_id: int) -> Membership | None: ...
    def memberships_page(
        self, user_id: int, before_last_id: int | None, limit: int
    ) -> list[Membership]: ...
    def all_memberships(self, user_id: int) -> Iterator[Membership]: ...
    def mark_read(self, membership: Membership) -> bool: ...
    def append(self, message: StoredMessage, recipient: int, client_id: str | None) -> None: ...
    def resent(
        self, conversation_id: int, sender_id: int, client_id: str
    ) -> StoredMessage | None: ...
    def history(
        self, conversation_id: int, before_id: int | None, limit: int
    ) -> list[StoredMessage]: ...


class UnreadMessages(Protocol):
    """The ``dm_unread`` hash per user (``warble.dal.dm_unread``): a cache of the memberships'
    unread counters, rebuilt from them when missing."""

    def counts(self, user_id: int) -> dict[int, int] | None: ...
    def rebuild(self, user_id: int, load: Callable[[], dict[int, int]]) -> dict[int, int]: ...
    def increment(self, user_id: int, conversation_id: int) -> None: ...
    def clear(self, user_id: int, conversation_id: int) -> None: ...


class Pushes(Protocol):
    """Real-time push (``warble.domain.push.Pusher``)."""

    def push(
        self, user_ids: Iterable[int], frame: dict[str, Any], skip: str | None = None
    ) -> Any: ...


# ---- errors a store raises, in the domain's words --------------------------------------------
class FollowRejected(Exception):
    """The follow/unfollow transaction was cancelled; ``reason`` says why."""

    LIMIT = "limit"  # following_count is at the limit
    EXISTS = "exists"  # the edge appeared meanwhile (a concurrent identical follow)
    RACED = "raced"  # an edge changed since it was read: read again and retry
    BLOCKED = "blocked"  # a block stands between the two users
    CONFLICT = "conflict"  # another transaction held an item, or throttling: retry

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ParentMissing(Exception):
    """The tweet named by reply_to / retweet_of does not exist (or was just deleted)."""


class AlreadyRetweeted(Exception):
    def __init__(self, retweet_id: int) -> None:
        super().__init__(retweet_id)
        self.retweet_id = retweet_id


class TweetGone(Exception):
    """The tweet to delete does not exist any more."""


class TweetMissing(Exception):
    """The tweet to like does not exist (or was deleted a moment ago)."""


class ClaimsTaken(Exception):
    """The claims at ``indexes`` exist already (those records were applied before)."""

    def __init__(self, indexes: list[int]) -> None:
        super().__init__(indexes)
        self.indexes = indexes


class TransactionRetry(Exception):
    """Cancelled for another reason (conflict, throttling); try again."""


class ConnectionGone(Exception):
    """The client behind a connection has gone (``410 GoneException``)."""


class PushFailed(Exception):
    """A post to a connection failed for another reason (throttled, unreachable)."""


class BlockedByAuthor(Exception):
    """A like, reply or retweet refused in its transaction: the tweet's author blocks the user."""


class PairBlocked(Exception):
    """A message refused in its transaction: a block stands between the two users."""


class MessageRaced(Exception):
    """A message with a larger id committed first in this conversation: send with a new id."""


class DuplicateClientId(Exception):
    """The sender's ``client_id`` already names a message in this conversation."""
