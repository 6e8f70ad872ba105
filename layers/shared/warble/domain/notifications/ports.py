"""What notifications and unread counts need of their stores (``warble.dal.notifications``)
and of the other features (home timelines, direct messages, the user directory, blocks)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from warble.domain.shared import Later, ReadBatch


# Each notification's dedupe key, named by what caused it (one notification per cause and
# recipient). Shown to the other features so they can find the notifications an action of theirs
# caused: an account's deletion removes those its account caused.
def follow_cause(follower: int) -> str:
    return f"F#{follower}"


def match_cause(other: int) -> str:
    return f"MA#{other}"


def like_cause(user_id: int, tweet_id: int) -> str:
    return f"L#{user_id}#{tweet_id}"


def reply_cause(tweet_id: int) -> str:
    return f"R#{tweet_id}"


def retweet_cause(author_id: int, original_id: int) -> str:
    return f"RT#{author_id}#{original_id}"


def mention_cause(tweet_id: int) -> str:
    return f"M#{tweet_id}"


@dataclass(frozen=True)
class StoredNotification:
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

    def create(self, notification: StoredNotification, dedupe: str) -> tuple[int, bool]:
        """Store it unless ``dedupe`` was stored: (the stored id, whether it was stored now)."""
        ...

    def create_many(
        self, drafts: list[tuple[StoredNotification, str]]
    ) -> list[tuple[int, bool] | None]:
        """``create`` for a batch, in transactions of up to 100 items (the dedupe items inside);
        None for one whose transaction kept failing."""
        ...

    def existing(self, recipient: int, dedupe: str) -> int | None: ...
    def existing_many(self, causes: list[tuple[int, str]]) -> dict[tuple[int, str], int]: ...
    def page(
        self, recipient: int, kinds: list[str], before_id: int | None, limit: int
    ) -> list[StoredNotification]: ...
    def system_page(
        self, before_id: int | None, after_id: int, limit: int
    ) -> list[StoredNotification]: ...
    def post_system(self, notification: StoredNotification) -> None: ...
    def system_ids(self) -> list[int]: ...
    def unread_ids(
        self, recipient: int, positions: dict[str, int], cap: int
    ) -> dict[str, list[int]]: ...
    def positions(self, user_id: int) -> dict[str, int]: ...
    def save_positions(self, user_id: int, positions: dict[str, int]) -> None: ...


class UnreadStore(Protocol):
    """Unread counts in Redis (``warble.dal.notifications.RedisUnread``)."""

    cap: int

    def batch(self) -> ReadBatch: ...
    def admit(self, recipient: int, window: int, cap: int) -> bool:
        """Take a place under the recipient's cap for this window; False when it is full."""
        ...

    def release(self, recipient: int, window: int) -> None: ...
    def admit_later(
        self, batch: ReadBatch, recipient: int, window: int, wanted: int
    ) -> Later[int]: ...
    def release_later(self, batch: ReadBatch, recipient: int, window: int, places: int) -> None: ...
    def add_later(
        self, batch: ReadBatch, recipient: int, kind: str, notification_id: int
    ) -> Later[int]: ...
    def snapshots_later(self, batch: ReadBatch, user_ids: list[int]) -> Later[dict[int, Snapshot]]:
        """Round trips 1 of several users queued in ``batch``; the reader sends their round
        trips 2 in one pipeline."""
        ...

    def add(self, recipient: int, kind: str, notification_id: int) -> int:
        """1 counted now, 0 counted before (or already read), -1 not in Redis (rebuilt later)."""
        ...

    def snapshot(self, user_id: int) -> Snapshot: ...
    def snapshot_later(self, batch: ReadBatch, user_id: int) -> Later[Snapshot]:
        """``snapshot``'s first round trip queued in ``batch`` (the HTTP gate's)."""
        ...

    def lease(self, user_id: int) -> str | None: ...
    def fill(
        self, user_id: int, token: str, positions: dict[str, int], unread: dict[str, list[int]]
    ) -> bool: ...
    def mark_read(self, user_id: int, kinds: list[str], position: int) -> dict[str, int] | None: ...
    def set_home_position(self, user_id: int, position: int) -> None: ...
    def positions(self, user_id: int) -> dict[str, int] | None: ...
    def add_system(self, notification_id: int) -> None: ...
    def rebuild_system(self, load: Callable[[], list[int]]) -> None: ...


class BatchPushes(Protocol):
    """Pushes of a stream batch (``warble.domain.push.Pusher``): the recipients' connections in
    one lookup, then every post at once."""

    def connected(self, user_ids: list[int]) -> dict[int, list[str]]: ...
    def post_all(self, posts: list[tuple[str, dict[str, Any]]]) -> Any: ...


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


class Directory(Protocol):
    """Usernames (any case) -> user ids, for mentions (``warble.dal.accounts.UserRepository``)."""

    def ids_by_usernames(self, usernames: list[str]) -> dict[str, int]: ...


class TextFilter(Protocol):
    """A user's muted words, compiled (``warble.domain.muted_words.matcher.Matcher``)."""

    def hides(self, text: str, hashtags: Iterable[str] = ()) -> bool: ...


class MutedWordLists(Protocol):
    """Recipients' muted words (``MutedWordService.many_later``): a mention or reply holding
    one is not made (one MGET in the batch's first round trip)."""

    def many_later(
        self, batch: ReadBatch, user_ids: list[int]
    ) -> Later[Mapping[int, TextFilter]]: ...


class Separations(Protocol):
    """Blocks and mutes (``Shields``): which (recipient, actor) pairs must not be notified, and
    a user's blocks hash rebuilt (the home count leaves out what it hides)."""

    def hidden_pairs(self, pairs: list[tuple[int, int]]) -> set[tuple[int, int]]: ...
    def hidden_pairs_later(
        self, batch: ReadBatch, pairs: list[tuple[int, int]]
    ) -> Later[set[tuple[int, int]]]: ...
    def rebuild(self, owner: int) -> Any: ...
