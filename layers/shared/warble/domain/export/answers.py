"""What the export answers (API.md "Accounts", Export): everything Warble holds about its
owner, each item in the shape API.md gives it elsewhere, every list complete."""

from __future__ import annotations

from dataclasses import dataclass

from warble.domain.accounts.answers import LiveSession, Me, SeenUser
from warble.domain.conversations.answers import Conversation, Message
from warble.domain.discover.answers import Location
from warble.domain.media.answers import Media
from warble.domain.notifications.answers import Notification, NotificationOfDeletedTweet
from warble.domain.reports.answers import Report
from warble.domain.tweets.answers import TweetAnswer


@dataclass(slots=True)
class ExportedConversation(Conversation):
    """A Conversation with every message of it, newest first."""

    messages: list[Message]


@dataclass(slots=True)
class Export:
    user: Me
    sessions: list[LiveSession]
    tweets: list[TweetAnswer]
    likes: list[TweetAnswer]
    following: list[SeenUser]
    followers: list[SeenUser]
    blocks: list[SeenUser]
    mutes: list[SeenUser]
    muted_words: list[str]
    reports: list[Report]  # the reports it made (never those about it)
    conversations: list[ExportedConversation]
    notifications: list[Notification | NotificationOfDeletedTweet]
    media: list[Media]
    location: Location | None
