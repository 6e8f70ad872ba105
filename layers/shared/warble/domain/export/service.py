"""The export (API.md "Accounts", ``GET /v1/users/me/export``): everything Warble holds about
its owner in one JSON document, read through each feature's own paged reads to the end, so
every item has the shape its route gives it and nothing secret is in it (no password hash,
token or other person's email: the routes never answer them).

Synchronous, within one HTTP API request (docs/accounts.md has the measured time and size): the
reads are the routes' own, ``PAGE`` items a call (ten times a route's largest page): a
10,000-tweet account is 10 Queries of its tweets (each within DynamoDB's 1 MB answer) and 10
hydrations of 1,000 tweets, a pipeline and a BatchGetItem series each. Reads of 5,000 were
measured slower (bench/export.py: 57 s against 33 s on the busy local stack, the raw Queries
the same): the hydration of 5,000 at once costs more than five of 1,000.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from warble.domain.accounts.answers import LiveSession, Me
from warble.domain.conversations.answers import Conversation, Message
from warble.domain.export.answers import Export, ExportedConversation
from warble.domain.export.ports import (
    OwnConversations,
    OwnDiscover,
    Owner,
    OwnGraph,
    OwnLikes,
    OwnMedia,
    OwnMutedWords,
    OwnNotifications,
    OwnReports,
    OwnShields,
    OwnTweets,
)
from warble.domain.shared import Page

T = TypeVar("T")

PAGE = 1000  # items per read (the routes' pages stop at 100)


def every(read: Callable[[str | None], Page[T]]) -> list[T]:
    """Every item of a paged read, page after page until its cursor is null."""
    items: list[T] = []
    cursor: str | None = None
    while True:
        page = read(cursor)
        items.extend(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return items


@dataclass(frozen=True)
class ExportOwner:
    """The export's ``Owner``: ``GET /v1/users/me``'s User (the profile, with the counts the
    graph adds) and ``GET /v1/auth/sessions``' list."""

    profile: Callable[[int], dict[str, Any]]
    counted: Callable[[dict[str, Any]], Me]
    live_sessions: Callable[[int, int], list[LiveSession]]

    def me(self, user_id: int) -> Me:
        return self.counted(self.profile(user_id))

    def sessions(self, user_id: int, session_id: int) -> list[LiveSession]:
        return self.live_sessions(user_id, session_id)


@dataclass(frozen=True)
class ExportSources:
    owner: Owner
    tweets: OwnTweets
    likes: OwnLikes
    graph: OwnGraph
    shields: OwnShields
    muted_words: OwnMutedWords
    reports: OwnReports
    conversations: OwnConversations
    notifications: OwnNotifications
    media: OwnMedia
    discover: OwnDiscover


class ExportService:
    def __init__(self, sources: ExportSources) -> None:
        self._s = sources

    def export(self, user_id: int, session_id: int) -> Export:
        s = self._s
        me = user_id

        def messages(conversation: Conversation) -> list[Message]:
            cid = int(conversation.id)
            return every(lambda cur: s.conversations.history(me, cid, PAGE, cur))

        conversations = [
            ExportedConversation(c.id, c.participants, c.last_message, c.unread_count, messages(c))
            for c in every(lambda cur: s.conversations.latest(me, PAGE, cur))
        ]
        return Export(
            user=s.owner.me(me),
            sessions=s.owner.sessions(me, session_id),
            tweets=every(lambda cur: s.tweets.user_timeline(me, me, PAGE, cur)),
            likes=every(lambda cur: s.likes.liked_tweets(me, me, PAGE, cur)),
            following=every(lambda cur: s.graph.following(me, me, PAGE, cur)),
            followers=every(lambda cur: s.graph.followers(me, me, PAGE, cur)),
            blocks=every(lambda cur: s.shields.listed(me, "blocks", PAGE, cur)),
            mutes=every(lambda cur: s.shields.listed(me, "mutes", PAGE, cur)),
            muted_words=s.muted_words.words(me).words,
            reports=every(lambda cur: s.reports.mine(me, PAGE, cur)),
            conversations=conversations,
            notifications=every(lambda cur: s.notifications.page(me, [], PAGE, cur)),
            media=s.media.owned(me),
            location=s.discover.location_of(me),
        )
