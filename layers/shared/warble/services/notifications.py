"""The notifications' builders: which events notify whom (one producer per notification type)
and the notification service."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from warble.services.deferred import deferred
from warble.services.parts import Parts

if TYPE_CHECKING:
    from warble.domain.notifications.service import NotificationService, Producers


def _ids_of(read: Callable[[], list[Any]]) -> Callable[[], set[int]]:
    return lambda: {t.id for t in read()}


def producers() -> Producers:
    """Which events notify whom: one producer per notification type (Discover adds ``match``
    here)."""
    from warble.domain.notifications.service import (
        Producers,
        follow_notified,
        like_notified,
        match_notified,
        mention_notified,
        reply_notified,
        retweet_notified,
    )
    from warble.events import Followed, Liked, Matched, TweetPosted

    found = Producers()
    found.on(Followed, follow_notified)
    found.on(Liked, like_notified)
    found.on(TweetPosted, reply_notified)
    found.on(TweetPosted, mention_notified)
    found.on(TweetPosted, retweet_notified)
    found.on(Matched, match_notified)
    return found


def notifications(c: Parts) -> NotificationService:
    from warble.domain.notifications.service import NotificationPolicy, NotificationService

    s = c.settings
    tweets = c.tweets
    return NotificationService(
        store=c.stores.notifications(),
        unread=c.stores.unread(),
        producers=producers(),
        directory=c.stores.users(),
        profiles=c.profiles,
        existing_tweets=lambda pairs: {t.id for t in tweets.load(pairs)},
        home=c.timelines,
        # Built on first use: an all-cached unread-counts read needs neither the
        # conversations' table nor the WebSocket pusher (pynamodb, botocore). Marking all read
        # includes the messages.
        messages=deferred(lambda: c.conversations),
        ids=c.ids,
        push=lambda user_ids, message: c.pusher.push(user_ids, message),
        push_each=lambda user_ids, frames: c.pusher.push_each(user_ids, frames),
        shields=c.shields,
        muted=c.muted_words,
        pushes=deferred(lambda: c.pusher),
        existing_later=lambda batch, pairs: _ids_of(tweets.load_later(batch, pairs, fill=False)),
        policy=NotificationPolicy(
            cap_per_window=s.notification_recipient_cap,
            cap_window_seconds=s.notification_cap_window_seconds,
            admins=c.admin_usernames,
        ),
    )
