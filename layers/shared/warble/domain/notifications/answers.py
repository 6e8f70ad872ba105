"""What notifications answer (API.md's objects): a Notification, a page of them, the unread
counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from warble.domain.shared import Page, UserSummary

NotificationType = Literal["follow", "like", "reply", "mention", "retweet", "match", "system"]


@dataclass(slots=True)
class Notification:
    """API.md's Notification: ``actor`` null for a system one, ``title`` and ``body`` set only
    on those; ``read`` when it is at or below its type's read position."""

    id: str
    type: NotificationType
    actor: UserSummary | None
    tweet_id: str | None
    title: str | None
    body: str | None
    created_at: str
    read: bool


@dataclass(slots=True)
class NotificationOfDeletedTweet(Notification):
    """A notification whose tweet is gone: ``tweet_id`` null and ``tweet_deleted`` true, so no
    client follows it to a 404 (the field is absent on every other notification)."""

    tweet_deleted: bool


@dataclass(slots=True)
class NotificationPage(Page[Notification | NotificationOfDeletedTweet]):
    items: list[Notification | NotificationOfDeletedTweet]


@dataclass(slots=True)
class UnreadCounts:
    """API.md's unread counts: per type, ``message`` (unread direct messages), ``home`` (new
    tweets of the people followed), and ``total``, the sum of the others."""

    follow: int
    like: int
    reply: int
    mention: int
    retweet: int
    message: int
    match: int
    system: int
    home: int
    total: int
