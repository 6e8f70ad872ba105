"""The composition root: one ``Container`` builds every client, store and service from one
``Settings``, each on first use, and keeps it while the container is warm.

Entry points reach services through the module functions (``services.tweets()``), which read the
current container. A test or a benchmark builds its own with other settings or stores
(``services.use(Container(settings, ...))``) or drops the current one (``services.reset()``):
nothing else holds a client, so nothing else needs resetting. Nothing runs at import time.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar, cast

from warble import keys

if TYPE_CHECKING:
    from warble.dal.accounts import DeletedAccountsRepository, UserRepository
    from warble.dal.cache import Codec, LeasedCache
    from warble.dal.connections import ConnectionRegistry
    from warble.dal.counters import DynamoCounterStore
    from warble.dal.erasure import DynamoErasure
    from warble.dal.graph import DynamoGraphStore
    from warble.dal.hot import HotCache
    from warble.dal.idempotency import IdempotencyStore
    from warble.dal.leftovers import RedisErasure
    from warble.dal.likes import LikeStore
    from warble.dal.memberships import MembershipSets
    from warble.dal.notifications import NotificationTable
    from warble.dal.postgres import Database
    from warble.dal.redis import RedisClient, WriteBatch
    from warble.dal.streams import StreamDecoder
    from warble.dal.tweets import TweetStore
    from warble.dal.websocket import WebSocketSender
    from warble.domain.accounts.answers import LiveSession, Me
    from warble.domain.accounts.service import AccountService
    from warble.domain.blocks.service import BlockService, Shields
    from warble.domain.conversations.service import ConversationService
    from warble.domain.counters.reconcile import Reconciler
    from warble.domain.counters.service import BatchOutcome, CounterRules, StreamCounterProcessor
    from warble.domain.deletion.service import AccountDeletion
    from warble.domain.discover.service import DiscoverService
    from warble.domain.export.service import ExportService
    from warble.domain.graph.service import GraphService
    from warble.domain.hashtags.service import HashtagService
    from warble.domain.likes.service import LikeService
    from warble.domain.media.service import MediaService
    from warble.domain.notifications.ports import MessageReads
    from warble.domain.notifications.service import NotificationService, Producers
    from warble.domain.passwords.service import PasswordService
    from warble.domain.push.service import Pusher
    from warble.domain.rate_limits import RateLimits
    from warble.domain.search.service import SearchService
    from warble.domain.timelines.service import TimelineService
    from warble.domain.tweets.service import TweetService
    from warble.ids import Snowflake
    from warble.settings import Settings

T = TypeVar("T")
K = TypeVar("K")


class Deferred:
    """A store built on its first use. A warm read finds what it needs in Redis and never calls
    the DynamoDB stores behind its service (they answer the misses), so a cold container whose
    first request is such a read does not import pynamodb and botocore (about one
    ``import boto3``) before answering; the first miss or write builds the store."""

    __slots__ = ("_build", "_built")

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._built: Any = None

    def __getattr__(self, name: str) -> Any:
        built = self._built
        if built is None:
            built = self._built = self._build()
        return getattr(built, name)


def deferred(build: Callable[[], T]) -> T:
    """``Deferred(build)``, typed as what it builds: the service it is given to checks it
    against its port (mypy), as it checks a store built at once."""
    return cast(T, Deferred(build))


def _graph_store(settings: Settings) -> DynamoGraphStore:
    from warble.dal.graph import DynamoGraphStore

    return DynamoGraphStore(settings)


def _tweet_store(settings: Settings) -> TweetStore:
    from warble.dal.tweets import TweetStore

    return TweetStore(settings)


def _tweet_codec() -> Codec:
    from warble.dal.tweet_cache import TWEET_CODEC

    return TWEET_CODEC


def _like_store(settings: Settings) -> LikeStore:
    from warble.dal.likes import LikeStore

    return LikeStore(settings)


def _notification_table(settings: Settings) -> NotificationTable:
    from warble.dal.notifications import NotificationTable

    return NotificationTable(settings.notification_ttl_days, settings)


# The keys of the caches whose subject is more than an id.
def _session_key(subject: tuple[bytes, int | None]) -> keys.CacheKey:
    token_hash, user_id = subject
    return keys.session(token_hash.hex(), user_id)


def _first_page_key(subject: tuple[int, str]) -> keys.CacheKey:
    return keys.first_page(*subject)


def _same_key(subject: keys.CacheKey) -> keys.CacheKey:
    """A cache addressed by its keys themselves (dropping several kinds of key at once)."""
    return subject


def _decoder(store: str) -> Callable[[dict[str, Any]], Any]:
    """``warble.dal.<store>.decode_record``, imported on its first record."""
    found: list[Callable[[dict[str, Any]], Any]] = []

    def decode(record: dict[str, Any]) -> Any:
        if not found:
            import importlib

            found.append(importlib.import_module(f"warble.dal.{store}").decode_record)
        return found[0](record)

    return decode


def _ids_of(read: Callable[[], list[Any]]) -> Callable[[], set[int]]:
    return lambda: {t.id for t in read()}


class Container:
    """Everything the functions use, built lazily from ``settings``.

    Imports are local to each builder so that a function pays only for what its requests use
    (the meta function imports no store at all), and its cold start does not pay for the
    settings before its first request reads them.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        from warble.settings import get_settings

        self.settings = settings or get_settings()

    # ---- clients ----------------------------------------------------------------------------
    @cached_property
    def redis(self) -> RedisClient:
        from warble.dal.redis import connect

        return connect(self.settings)

    def write_batch(self) -> WriteBatch:
        """A stream batch's writes to Redis, sent together (``warble.domain.shared.Writes``)."""
        from warble.dal.redis import WriteBatch

        return WriteBatch(self.redis)

    @cached_property
    def hot(self) -> HotCache | None:
        """Hot keys held in this container (HOT_KEY_CACHE_MS), shared by the stores that read
        them, so one store's write drops what another holds."""
        from warble.dal.hot import hot_cache

        return hot_cache(self.settings.hot_key_cache_ms)

    @cached_property
    def database(self) -> Database:
        from warble.dal.postgres import Database, conninfo

        return Database(lambda: conninfo(self.settings))

    def close(self) -> None:
        """Close what was opened (tests, benchmarks); a closed container can be dropped."""
        if "_push_pool" in self.__dict__:
            self._push_pool.shutdown(wait=False)
        if "database" in self.__dict__:
            self.database.close()
        if "redis" in self.__dict__:
            self.redis.close()

    # ---- shared pieces ----------------------------------------------------------------------
    @cached_property
    def ids(self) -> Snowflake:
        from warble.dal.worker_lease import RedisWorkerLease
        from warble.ids import Snowflake

        return Snowflake(RedisWorkerLease(self.redis))

    @cached_property
    def idempotency(self) -> IdempotencyStore:
        from warble.dal.idempotency import IdempotencyStore

        s = self.settings
        return IdempotencyStore(
            self.redis, s.idempotency_ttl_seconds, s.idempotency_pending_seconds
        )

    @cached_property
    def rate_limits(self) -> RateLimits:
        from warble.dal.rate_limit import RedisWindowCounter
        from warble.domain.rate_limits import Budget, RateLimits

        s = self.settings
        return RateLimits(
            RedisWindowCounter(self.redis),
            per_user=Budget(s.rate_limit_user_requests, s.rate_limit_user_window_seconds),
            signup_per_ip=Budget(
                s.rate_limit_signup_ip_requests, s.rate_limit_signup_ip_window_seconds
            ),
            login_per_ip=Budget(
                s.rate_limit_login_ip_requests, s.rate_limit_login_ip_window_seconds
            ),
            auth_failures_per_ip=Budget(
                s.rate_limit_auth_failures_ip_requests,
                s.rate_limit_auth_failures_ip_window_seconds,
            ),
            location_per_user=Budget(
                s.rate_limit_location_requests, s.rate_limit_location_window_seconds
            ),
        )

    def _cache(
        self, ttl_seconds: int, key: Callable[[K], keys.CacheKey], codec: Codec | None = None
    ) -> LeasedCache[K]:
        from warble.dal.cache import JSON, LeasedCache

        return LeasedCache(self.redis, ttl_seconds, key, codec=codec or JSON)

    def _memberships(self, kind: str) -> MembershipSets:
        from warble.dal.memberships import MembershipSets

        return MembershipSets(self.redis, kind, self.settings.membership_ttl_seconds)

    def _counter_store(self) -> DynamoCounterStore:
        def build() -> DynamoCounterStore:
            from warble.dal.counters import DynamoCounterStore

            return DynamoCounterStore(self.settings.counter_claim_ttl_seconds, self.settings)

        return deferred(build)

    # ---- WebSocket push ---------------------------------------------------------------------
    @cached_property
    def connections(self) -> ConnectionRegistry:
        from warble.dal.connections import ConnectionRegistry

        return ConnectionRegistry(self.settings)

    def sender(self, domain_name: str = "", stage: str = "") -> WebSocketSender:
        """Posts to connections; API Gateway's documented endpoint for the event's domain and
        stage unless WEBSOCKET_CALLBACK_URL names one."""
        from warble.dal.websocket import WebSocketSender, callback_url

        return WebSocketSender(
            callback_url(self.settings, domain_name, stage), self.settings.aws_region
        )

    @cached_property
    def _push_pool(self) -> ThreadPoolExecutor:
        from warble.dal.websocket import POOL_CONNECTIONS

        # Posts to a user's connections go out concurrently, not one after another; no more
        # threads than the sender keeps connections, or the extra posts would each reconnect.
        return ThreadPoolExecutor(max_workers=POOL_CONNECTIONS, thread_name_prefix="push")

    @cached_property
    def pusher(self) -> Pusher:
        from warble.domain.push.service import Pusher

        return Pusher(self.connections, self.sender(), self._push_pool)

    # ---- services ---------------------------------------------------------------------------
    @cached_property
    def admin_usernames(self) -> frozenset[str]:
        """ADMIN_USERNAMES, each folded as a login is (``domain.logins``)."""
        from warble.domain.logins import login_key

        names = self.settings.admin_usernames.split(",")
        return frozenset(login_key(name.strip()) for name in names if name.strip())

    @cached_property
    def accounts(self) -> AccountService:
        from warble.dal.account_state import LoginThrottle, RedisLastSeen, SessionLookups
        from warble.dal.accounts import SessionRepository, UserRepository
        from warble.domain.accounts.service import AccountPolicy, AccountService

        s = self.settings
        return AccountService(
            users=UserRepository(self.database),
            sessions=SessionRepository(self.database),
            profiles=self._cache(s.profile_cache_ttl_seconds, keys.profile),
            session_cache=self._cache(s.session_cache_ttl_seconds, _session_key),
            throttle=LoginThrottle(
                self.redis,
                s.login_max_failures,
                s.login_window_seconds,
                s.login_max_account_failures,
            ),
            lookups=SessionLookups(self.redis),
            ids=self.ids,
            policy=AccountPolicy(
                password_hash_rounds=s.password_hash_rounds,
                session_ttl=timedelta(days=s.session_ttl_days),
                admin_usernames=self.admin_usernames,
            ),
            # Built when a session first ends: the gate of every request needs neither the
            # connections' table nor the @connections sender (pynamodb, botocore).
            connections=Deferred(lambda: self.pusher),
            failures=Deferred(lambda: self.rate_limits),
            last_seen=RedisLastSeen(self.redis),
            deletions=Deferred(lambda: self.deletion),
        )

    @cached_property
    def passwords(self) -> PasswordService:
        from warble.dal.account_state import LoginThrottle
        from warble.dal.mail import SesMailer
        from warble.dal.passwords import PasswordRepository
        from warble.dal.queue import SqsResetRequests
        from warble.domain.passwords.service import PasswordPolicy, PasswordService

        s = self.settings
        store = PasswordRepository(self.database)
        return PasswordService(
            requests=SqsResetRequests(s.password_reset_queue_url, s.aws_region),
            credentials=store,
            tokens=store,
            mailer=SesMailer(s.email_sender, s.aws_region),
            sessions=self.accounts,
            throttle=LoginThrottle(
                self.redis,
                s.login_max_failures,
                s.login_window_seconds,
                s.login_max_account_failures,
            ),
            policy=PasswordPolicy(
                password_hash_rounds=s.password_hash_rounds,
                reset_page=f"{s.web_client_url.rstrip('/')}/#/reset-password",
            ),
        )

    @cached_property
    def deletion(self) -> AccountDeletion:
        """The account deletion workflow; its stores are built when a step first runs (the
        accounts function only sends the first step)."""
        from warble.dal.queue import SqsStepQueue
        from warble.domain.deletion.service import AccountDeletion, DeletionPolicy

        s = self.settings
        return AccountDeletion(
            queue=SqsStepQueue(s.account_deletion_queue_url, s.aws_region),
            tables=lambda: self._erasure,
            redis=lambda: self._redis_erasure,
            directory=lambda: self._users,
            outbox=lambda: self._deleted_accounts,
            policy=DeletionPolicy(
                slice_items=s.deletion_slice_items, slice_seconds=s.deletion_slice_seconds
            ),
        )

    @cached_property
    def export(self) -> ExportService:
        from warble.domain.export.service import ExportService, ExportSources

        return ExportService(
            ExportSources(
                owner=_ExportOwner(self),
                tweets=self.tweets,
                likes=self.likes,
                graph=self.graph,
                shields=self.blocks,
                conversations=self.conversations,
                notifications=self.notifications,
                media=self.media,
                discover=self.discover,
            )
        )

    @cached_property
    def _erasure(self) -> DynamoErasure:
        from warble.dal.erasure import DynamoErasure

        return DynamoErasure(self.settings)

    @cached_property
    def _redis_erasure(self) -> RedisErasure:
        from warble.dal.hashtags import RedisTrends
        from warble.dal.leftovers import RedisErasure
        from warble.domain.hashtags.service import WINDOW_MS

        return RedisErasure(self.redis, RedisTrends(self.redis, WINDOW_MS))

    @cached_property
    def _users(self) -> UserRepository:
        from warble.dal.accounts import UserRepository

        return UserRepository(self.database)

    @cached_property
    def _deleted_accounts(self) -> DeletedAccountsRepository:
        from warble.dal.accounts import DeletedAccountsRepository

        return DeletedAccountsRepository(self.database)

    @cached_property
    def graph(self) -> GraphService:
        from warble.domain.graph.service import GraphPolicy, GraphService

        s = self.settings
        return GraphService(
            store=deferred(lambda: _graph_store(s)),
            counters=self._counter_store(),
            profiles=self.accounts,
            counts_cache=self._cache(s.counts_cache_ttl_seconds, keys.counts),
            page_cache=self._cache(s.first_page_cache_ttl_seconds, _first_page_key),
            ids=self.ids,
            policy=GraphPolicy(
                follow_limit=s.follow_limit, big_account_followers=s.big_account_followers
            ),
            following=self._memberships("following"),
            friends_cache=self._cache(keys.FRIENDS_CACHE_SECONDS, keys.friends),
            degree2_cache=self._cache(keys.DEGREE2_CACHE_SECONDS, keys.degree2),
        )

    @cached_property
    def shields(self) -> Shields:
        """Every user's blocks and mutes from memory: the reader each feature filters with."""
        from warble.dal.blocks import BlockSets
        from warble.domain.blocks.service import Shields

        s = self.settings
        return Shields(
            BlockSets(self.redis, s.membership_ttl_seconds), deferred(lambda: _graph_store(s))
        )

    @cached_property
    def blocks(self) -> BlockService:
        from warble.dal.graph import DynamoGraphStore
        from warble.domain.blocks.service import BlockService

        return BlockService(
            store=DynamoGraphStore(self.settings),
            shields=self.shields,
            following=self._memberships("following"),
            graph=self.graph,
            profiles=self.accounts,
            ids=self.ids,
        )

    @cached_property
    def tweets(self) -> TweetService:
        from warble.domain.tweets.flags import ViewerFlags
        from warble.domain.tweets.service import TweetService

        s = self.settings
        store = deferred(lambda: _tweet_store(s))
        likes = deferred(lambda: _like_store(s))
        return TweetService(
            store=store,
            cache=self._cache(s.tweet_cache_ttl_seconds, keys.tweet, _tweet_codec()),
            accounts=self.accounts,
            ids=self.ids,
            tombstone_seconds=s.tweet_cache_ttl_seconds,
            counters=self._counter_store(),
            counts_cache=self._cache(s.counts_cache_ttl_seconds, keys.tweet_counts),
            likes=likes,
            flags=ViewerFlags(
                liked=self._memberships("liked"),
                retweeted=self._memberships("retweeted"),
                likes=likes,
                tweets=store,
                recent=s.recent_actions,
            ),
            shields=self.shields,
            # Built on first use: only a tweet with media_ids reads the media table.
            media=deferred(lambda: self.media),
            media_url=s.media_url.rstrip("/"),
        )

    @cached_property
    def media(self) -> MediaService:
        from warble.dal.media import MediaBucket, MediaTable
        from warble.domain.media.ports import MediaPolicy
        from warble.domain.media.service import MediaService
        from warble.imaging import process

        s = self.settings
        return MediaService(
            store=deferred(lambda: MediaTable(s)),
            objects=MediaBucket(s),
            process=process,
            ids=self.ids,
            policy=MediaPolicy(
                base_url=s.media_url.rstrip("/"),
                upload_seconds=s.media_upload_seconds,
                unattached_seconds=s.media_unattached_seconds,
            ),
            tweets=self.tweets,
        )

    @cached_property
    def likes(self) -> LikeService:
        from warble.domain.likes.service import LikeService

        return LikeService(
            store=deferred(lambda: _like_store(self.settings)),
            tweets=self.tweets,
            accounts=self.accounts,
            graph=self.graph,
            ids=self.ids,
        )

    @cached_property
    def timelines(self) -> TimelineService:
        from warble.dal.timelines import TimelineStore
        from warble.domain.timelines.service import TimelinePolicy, TimelineService

        s = self.settings
        return TimelineService(
            timelines=TimelineStore(
                self.redis,
                cap=s.timeline_cap,
                recent_cap=s.author_recent_cap,
                ttl_seconds=s.timeline_ttl_seconds,
                hot=self.hot,
            ),
            tweets=self.tweets,
            graph=self.graph,
            policy=TimelinePolicy(
                celebrity_followers=s.celebrity_followers,
                cap=s.timeline_cap,
                recent_cap=s.author_recent_cap,
                backfill=s.follow_backfill,
            ),
            shields=self.shields,
            followers=self._memberships("followers"),
        )

    @cached_property
    def conversations(self) -> ConversationService:
        from warble.dal.conversations import ConversationStore
        from warble.dal.dm_unread import UnreadMessageCache
        from warble.domain.conversations.service import ConversationService

        return ConversationService(
            store=ConversationStore(self.settings),
            unread=UnreadMessageCache(self.redis),
            profiles=self.accounts,
            graph=self.graph,
            ids=self.ids,
            pusher=self.pusher,
            shields=self.shields,
        )

    @cached_property
    def discover(self) -> DiscoverService:
        from warble.dal.discover import GeoIndex, SeenFilter, SwipeLedger
        from warble.dal.discover_table import DiscoverRecords
        from warble.domain.discover.service import Announcer, DiscoverService

        s = self.settings
        return DiscoverService(
            store=DiscoverRecords(s),
            index=GeoIndex(self.redis),
            seen=SeenFilter(self.redis, s.seen_filter_capacity, s.seen_filter_error),
            ledger=SwipeLedger(self.redis),
            # A match opens (or finds) the pair's conversation and lets them converse.
            conversations=self.conversations,
            profiles=self.accounts,
            people=self.graph,
            announcer=Announcer(self.pusher, self.accounts),
            ids=self.ids,
            shields=self.shields,
        )

    @cached_property
    def hashtags(self) -> HashtagService:
        from warble.dal.hashtags import DynamoHashtagIndex, RedisTrends
        from warble.domain.hashtags.service import WINDOW_MS, HashtagService

        return HashtagService(
            index=DynamoHashtagIndex(self.redis, self.settings),
            trends=RedisTrends(self.redis, WINDOW_MS),
            tweets=self.tweets,
            shields=self.shields,
        )

    @cached_property
    def search(self) -> SearchService:
        from warble.dal.search import PostgresPeopleIndex, RedisSnapshots
        from warble.domain.search.service import SearchService

        return SearchService(
            index=PostgresPeopleIndex(self.database),
            snapshots=RedisSnapshots(self.redis),
            network=self.graph,
            shields=self.shields,
        )

    # ---- streams ----------------------------------------------------------------------------
    @cached_property
    def stream_decoder(self) -> StreamDecoder:
        """Which tables' streams the consumers read, and the store that decodes each (imported
        with the first record of its table: a consumer pays only for the tables it reads)."""
        from warble.dal.streams import StreamDecoder

        s = self.settings
        return StreamDecoder(
            {
                s.graph_table: _decoder("graph"),
                s.tweets_table: _decoder("tweets"),
                s.likes_table: _decoder("likes"),
                s.matches_table: _decoder("discover_table"),
            }
        )

    @cached_property
    def counter_rules(self) -> CounterRules:
        """Which events change which counters (one rule per event type, beside its feature)."""
        from warble.domain.counters.service import CounterRules
        from warble.domain.graph.service import followers_counted
        from warble.domain.likes.service import likes_counted
        from warble.domain.tweets.service import tweets_counted
        from warble.events import Followed, Liked, TweetDeleted, TweetPosted, Unfollowed, Unliked

        rules = CounterRules()
        for followed in (Followed, Unfollowed):
            rules.on(followed, followers_counted)
        for tweeted in (TweetPosted, TweetDeleted):
            rules.on(tweeted, tweets_counted)
        for liked in (Liked, Unliked):
            rules.on(liked, likes_counted)
        return rules

    def counters_changed(self, counter_keys: set[str]) -> None:
        """Drop the cached copies of counters that changed (users' and tweets'), in one round
        trip, and copy followers_count to the search index."""
        from warble.dal import store_unavailable
        from warble.domain.counters.ports import owner_of, user_counter

        owners = [owner for key in counter_keys if (owner := owner_of(key)) is not None]
        dropped = [
            keys.counts(uid) if kind == "user" else keys.tweet_counts(uid) for kind, uid in owners
        ]
        # One cache over both kinds of key, so that both go in one round trip.
        self._cache(self.settings.counts_cache_ttl_seconds, _same_key).invalidate_many(dropped)
        users = [uid for kind, uid in owners if kind == "user"]
        try:
            # Read once from the counters (strongly consistent), not through the counts cache
            # just dropped: the copy needs no cache refill.
            derived = self._counter_store().read([user_counter(uid) for uid in users])
            followers = {
                uid: max(0, derived[user_counter(uid)].get("followers_count", 0)) for uid in users
            }
            self.search.followers_changed(followers)
        except store_unavailable():
            # Only the order of search candidates waits: the next change of the count copies it.
            import logging

            logging.getLogger(__name__).warning("search index not updated", exc_info=True)

    @cached_property
    def counter_processor(self) -> StreamCounterProcessor:
        from warble.domain.counters.service import StreamCounterProcessor

        return StreamCounterProcessor(
            self._counter_store(), self.counter_rules, on_applied=self.counters_changed
        )

    def count_batch(self, event: dict[str, Any]) -> BatchOutcome:
        """A Lambda batch of stream records through the counter consumer."""
        return self.counter_processor.process(self.stream_decoder.decode_batch(event))

    @cached_property
    def reconciler(self) -> Reconciler:
        from warble.dal.graph import DynamoGraphStore
        from warble.dal.likes import LikeStore
        from warble.dal.tweets import TweetStore
        from warble.domain.counters.reconcile import Reconciler

        s = self.settings
        return Reconciler(
            graph=DynamoGraphStore(s),
            tweets=TweetStore(s),
            likes=LikeStore(s),
            counters=self._counter_store(),
            rules=self.counter_rules,
            settle_seconds=s.reconcile_settle_seconds,
            on_repaired=self.counters_changed,
        )

    # ---- notifications ----------------------------------------------------------------------
    @cached_property
    def notification_producers(self) -> Producers:
        """Which events notify whom: one producer per notification type (Discover adds
        ``match`` here)."""
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

        producers = Producers()
        producers.on(Followed, follow_notified)
        producers.on(Liked, like_notified)
        producers.on(TweetPosted, reply_notified)
        producers.on(TweetPosted, mention_notified)
        producers.on(TweetPosted, retweet_notified)
        producers.on(Matched, match_notified)
        return producers

    @cached_property
    def message_reads(self) -> MessageReads:
        """Marks every conversation read ("mark all read" includes messages)."""
        return self.conversations

    @cached_property
    def notifications(self) -> NotificationService:
        from warble.dal.accounts import UserRepository
        from warble.dal.unread import RedisUnread
        from warble.domain.notifications.service import NotificationPolicy, NotificationService

        s = self.settings
        tweets = self.tweets
        return NotificationService(
            store=deferred(lambda: _notification_table(s)),
            unread=RedisUnread(self.redis, s.notification_unread_cap, hot=self.hot),
            producers=self.notification_producers,
            directory=UserRepository(self.database),
            profiles=self.accounts,
            existing_tweets=lambda pairs: {t.id for t in tweets.load(pairs)},
            home=self.timelines,
            # Built on first use: an all-cached unread-counts read needs neither the
            # conversations' table nor the WebSocket pusher (pynamodb, botocore).
            messages=deferred(lambda: self.message_reads),
            ids=self.ids,
            push=lambda user_ids, message: self.pusher.push(user_ids, message),
            push_each=lambda user_ids, frames: self.pusher.push_each(user_ids, frames),
            shields=self.shields,
            pushes=Deferred(lambda: self.pusher),
            existing_later=lambda batch, pairs: _ids_of(
                tweets.load_later(batch, pairs, fill=False)
            ),
            policy=NotificationPolicy(
                cap_per_window=s.notification_recipient_cap,
                cap_window_seconds=s.notification_cap_window_seconds,
                admins=self.admin_usernames,
            ),
        )


_current: Container | None = None


class _ExportOwner:
    """The export's owner: ``GET /v1/users/me``'s User and ``GET /v1/auth/sessions``' list."""

    def __init__(self, container: Container) -> None:
        self._c = container

    def me(self, user_id: int) -> Me:
        return self._c.graph.me(self._c.accounts.profile(user_id))

    def sessions(self, user_id: int, session_id: int) -> list[LiveSession]:
        from warble.domain.accounts.service import Principal

        return self._c.accounts.list_sessions(Principal(user_id, session_id)).items


def container() -> Container:
    """The container of this process (built from the environment's settings on first use)."""
    global _current
    if _current is None:
        _current = Container()
    return _current


def use(replacement: Container | None) -> None:
    """Make ``replacement`` the current container (None: build a new one on next use). The one
    it replaces is closed."""
    global _current
    if _current is not None and _current is not replacement:
        _current.close()
    _current = replacement


def reset() -> None:
    """Forget the settings and every client and service: the next use reads the environment
    again (tests and benchmarks that change it)."""
    from warble.settings import get_settings

    use(None)
    get_settings.cache_clear()


# The services, as entry points reach them.
def accounts() -> AccountService:
    return container().accounts


def graph() -> GraphService:
    return container().graph


def export() -> ExportService:
    return container().export


def passwords() -> PasswordService:
    return container().passwords


def tweets() -> TweetService:
    return container().tweets


def blocks() -> BlockService:
    return container().blocks


def likes() -> LikeService:
    return container().likes


def search() -> SearchService:
    return container().search


def hashtags() -> HashtagService:
    return container().hashtags


def media() -> MediaService:
    return container().media


def timelines() -> TimelineService:
    return container().timelines


def discover() -> DiscoverService:
    return container().discover


def conversations() -> ConversationService:
    return container().conversations


def idempotency() -> IdempotencyStore:
    return container().idempotency


def rate_limits() -> RateLimits:
    return container().rate_limits


def notifications() -> NotificationService:
    return container().notifications


def ids() -> Snowflake:
    return container().ids


def deletion() -> AccountDeletion:
    return container().deletion
