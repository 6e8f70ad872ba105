"""What tweets answer (API.md's objects): a Tweet (with its original when it is a retweet) and a
page of Tweets."""

from __future__ import annotations

from dataclasses import dataclass

from warble.domain.media.answers import Media, MediaJson
from warble.domain.shared import Page, UserSummary


@dataclass(slots=True)
class Tweet:
    """API.md's Tweet. A retweet carries its original (``retweet_of``) and the original's
    counters and flags: that is what a like or a retweet of it acts on."""

    id: str
    author: UserSummary
    text: str
    created_at: str
    reply_to: str | None
    retweet_of: Tweet | None
    media_ids: list[str]
    media: list[Media] | MediaJson  # the latter: a cached tweet's, written as it is
    hashtags: list[str]
    like_count: int
    retweet_count: int
    reply_count: int
    liked_by_me: bool
    retweeted_by_me: bool


@dataclass(slots=True)
class TweetPage(Page[Tweet]):
    """A page of Tweets, newest first."""

    items: list[Tweet]
