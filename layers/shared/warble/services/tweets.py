"""The tweets' builders: tweets (with the viewer's flags), their media, and likes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from warble import keys
from warble.services.deferred import deferred
from warble.services.parts import Parts

if TYPE_CHECKING:
    from warble.domain.likes.service import LikeService
    from warble.domain.media.service import MediaService
    from warble.domain.tweets.service import TweetService
    from warble.settings import Settings


def media_base(s: Settings) -> str:
    """MEDIA_URL without its trailing slash: what the media's URLs start with."""
    return s.media_url.rstrip("/")


def tweets(c: Parts) -> TweetService:
    from warble.domain.tweets.flags import ViewerFlags
    from warble.domain.tweets.service import TweetService

    s, stores = c.settings, c.stores
    store, likes = stores.tweets(), stores.likes()
    return TweetService(
        store=store,
        cache=stores.cache(s.tweet_cache_ttl_seconds, keys.tweet, stores.tweet_codec()),
        accounts=c.profiles,
        ids=c.ids,
        tombstone_seconds=s.tweet_cache_ttl_seconds,
        counters=stores.counters(),
        counts_cache=stores.cache(s.counts_cache_ttl_seconds, keys.tweet_counts),
        likes=likes,
        flags=ViewerFlags(
            liked=stores.memberships("liked"),
            retweeted=stores.memberships("retweeted"),
            likes=likes,
            tweets=store,
            recent=s.recent_actions,
        ),
        shields=c.shields,
        muted=c.muted_words,
        # Built on first use: only a tweet with media_ids reads the media table.
        media=deferred(lambda: c.media),
        media_url=media_base(s),
    )


def media(c: Parts) -> MediaService:
    from warble.domain.media.ports import MediaPolicy
    from warble.domain.media.service import MediaService
    from warble.imaging import process

    s = c.settings
    return MediaService(
        store=c.stores.media(),
        objects=c.stores.bucket(),
        process=process,
        ids=c.ids,
        policy=MediaPolicy(
            base_url=media_base(s),
            upload_seconds=s.media_upload_seconds,
            unattached_seconds=s.media_unattached_seconds,
        ),
        tweets=c.tweets,
    )


def likes(c: Parts) -> LikeService:
    from warble.domain.likes.service import LikeService

    return LikeService(
        store=c.stores.likes(), tweets=c.tweets, accounts=c.profiles, graph=c.graph, ids=c.ids
    )
