"""What the export needs of the other features: their own paged reads (the routes' answers, so
each item has the shape API.md gives it), read to the end. Each is a narrow Protocol that the
feature's service answers as it is (the container wires them)."""

from __future__ import annotations

from typing import Protocol

from warble.domain.accounts.answers import LiveSession, Me, UserPage
from warble.domain.conversations.answers import ConversationPage, MessagePage
from warble.domain.discover.answers import Location
from warble.domain.media.answers import Media
from warble.domain.muted_words.answers import MutedWords
from warble.domain.notifications.answers import NotificationPage
from warble.domain.reports.answers import ReportPage
from warble.domain.tweets.answers import TweetPage


class Owner(Protocol):
    """The owner as ``GET /v1/users/me`` answers, and the live sessions as
    ``GET /v1/auth/sessions`` lists them (``current`` for the session asking)."""

    def me(self, user_id: int) -> Me: ...
    def sessions(self, user_id: int, session_id: int) -> list[LiveSession]: ...


class OwnTweets(Protocol):
    def user_timeline(
        self, viewer: int, user_id: int, limit: int, cursor: str | None
    ) -> TweetPage: ...


class OwnLikes(Protocol):
    def liked_tweets(
        self, viewer: int, user_id: int, limit: int, cursor: str | None
    ) -> TweetPage: ...


class OwnGraph(Protocol):
    def following(self, viewer: int, user_id: int, limit: int, cursor: str | None) -> UserPage: ...
    def followers(self, viewer: int, user_id: int, limit: int, cursor: str | None) -> UserPage: ...


class OwnShields(Protocol):
    def listed(self, viewer: int, which: str, limit: int, cursor: str | None) -> UserPage: ...


class OwnMutedWords(Protocol):
    def words(self, user_id: int) -> MutedWords: ...


class OwnReports(Protocol):
    def mine(self, reporter: int, limit: int, cursor: str | None) -> ReportPage: ...


class OwnConversations(Protocol):
    def latest(self, me: int, limit: int, cursor: str | None) -> ConversationPage: ...
    def history(
        self, me: int, conversation_id: int, limit: int, cursor: str | None
    ) -> MessagePage: ...


class OwnNotifications(Protocol):
    def page(
        self, user_id: int, kinds: list[str], limit: int, cursor: str | None
    ) -> NotificationPage: ...


class OwnMedia(Protocol):
    def owned(self, owner_id: int) -> list[Media]: ...


class OwnDiscover(Protocol):
    def location_of(self, user_id: int) -> Location | None: ...
