"""Every adapter the builders wire: the stores in ``warble.dal``, each built from the container's
shared clients and typed as the port it fills, so mypy checks each against its port. This is
the one seam the unit tier replaces (``tests/unit/fakes.py`` ``MemoryStores``: the same builders
on in-memory stores).

The DynamoDB stores are built on their first use (``deferred``): a warm read served from Redis
never imports pynamodb and botocore.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from warble.services.deferred import deferred

if TYPE_CHECKING:
    from warble import keys
    from warble.dal.account_state import LoginThrottle, RedisLastSeen, SessionLookups
    from warble.dal.accounts import DeletedAccountsRepository, SessionRepository, UserRepository
    from warble.dal.cache import Codec, LeasedCache
    from warble.dal.connections import ConnectionRegistry
    from warble.dal.conversations import ConversationStore
    from warble.dal.discover import GeoIndex, SeenFilter, SwipeLedger
    from warble.dal.discover_table import DiscoverRecords
    from warble.dal.dm_unread import UnreadMessageCache
    from warble.dal.erasure import DynamoErasure
    from warble.dal.hashtags import DynamoHashtagIndex, RedisTrends
    from warble.dal.hot import HotCache
    from warble.dal.idempotency import IdempotencyStore
    from warble.dal.leftovers import RedisErasure
    from warble.dal.mail import SesMailer
    from warble.dal.notifications import NotificationTable
    from warble.dal.passwords import PasswordRepository
    from warble.dal.postgres import Database
    from warble.dal.queue import SqsResetRequests, SqsStepQueue
    from warble.dal.redis import RedisClient
    from warble.dal.unread import RedisUnread
    from warble.domain.accounts.ports import Profiles, SocketTickets
    from warble.domain.blocks.ports import BlockSets, BlockStore
    from warble.domain.counters.ports import CounterMarks, CounterStore
    from warble.domain.graph.ports import GraphStore
    from warble.domain.likes.ports import LikeStore
    from warble.domain.media.ports import MediaStore, ObjectStore
    from warble.domain.muted_words.ports import MutedWordStore
    from warble.domain.rate_limits import WindowCounter
    from warble.domain.reports.ports import ReportStore
    from warble.domain.search.ports import PeopleIndex, Snapshots
    from warble.domain.shared import IdGenerator, Memberships
    from warble.domain.suspensions.ports import SuspensionStore
    from warble.domain.timelines.ports import TimelineStore
    from warble.domain.tweets.ports import TweetStore
    from warble.ids import WorkerLeases
    from warble.settings import Settings

K = TypeVar("K")


class Clients(Protocol):
    """What the adapters are built from: the container's settings and shared clients."""

    settings: Settings

    @property
    def redis(self) -> RedisClient: ...
    @property
    def database(self) -> Database: ...
    @property
    def hot(self) -> HotCache | None: ...
    @property
    def accounts(self) -> Profiles: ...


class Stores:
    """The production adapters of container ``c``; each call builds a new one (the container
    keeps the services that hold them)."""

    def __init__(self, c: Clients) -> None:
        self._c = c

    # ---- shared -----------------------------------------------------------------------------
    def ids(self) -> IdGenerator:
        from warble.ids import LeasedWorker, Snowflake

        def build() -> WorkerLeases:
            from warble.dal.worker_lease import DynamoWorkerLeases

            return DynamoWorkerLeases(self._c.settings)

        # Claimed on the first id (warble.ids.LeasedWorker): a function whose requests mint
        # none never imports pynamodb for it.
        return Snowflake(LeasedWorker(deferred(build)))

    def profiles(self) -> Profiles:
        """What the other features read of the accounts: the cached profiles."""
        return self._c.accounts

    def cache(
        self, ttl_seconds: int, key: Callable[[K], keys.CacheKey], codec: Codec | None = None
    ) -> LeasedCache[K]:
        from warble.dal.cache import JSON, LeasedCache

        return LeasedCache(self._c.redis, ttl_seconds, key, codec=codec or JSON)

    def memberships(self, kind: str) -> Memberships:
        from warble.dal.memberships import MembershipSets

        return MembershipSets(self._c.redis, kind, self._c.settings.membership_ttl_seconds)

    def counters(self) -> CounterStore:
        def build() -> CounterStore:
            from warble.dal.counters import DynamoCounterStore

            s = self._c.settings
            return DynamoCounterStore(s.counter_claim_ttl_seconds, s)

        return deferred(build)

    def idempotency(self) -> IdempotencyStore:
        from warble.dal.idempotency import IdempotencyStore

        s = self._c.settings
        return IdempotencyStore(
            self._c.redis, s.idempotency_ttl_seconds, s.idempotency_pending_seconds
        )

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    # ---- accounts and passwords -------------------------------------------------------------
    def users(self) -> UserRepository:
        from warble.dal.accounts import UserRepository

        return UserRepository(self._c.database)

    def sessions(self) -> SessionRepository:
        from warble.dal.accounts import SessionRepository

        return SessionRepository(self._c.database)

    def deleted_accounts(self) -> DeletedAccountsRepository:
        from warble.dal.accounts import DeletedAccountsRepository

        return DeletedAccountsRepository(self._c.database)

    def muted_words(self) -> MutedWordStore:
        from warble.dal.muted_words import MutedWordRepository

        return MutedWordRepository(self._c.database)

    def window_counter(self) -> WindowCounter:
        """The request budgets' window counters (Redis)."""
        from warble.dal.rate_limit import RedisWindowCounter

        return RedisWindowCounter(self._c.redis)

    def reports(self) -> ReportStore:
        from warble.dal.reports import ReportRepository

        return ReportRepository(self._c.database)

    def suspensions(self) -> SuspensionStore:
        from warble.dal.suspensions import SuspensionRepository

        return SuspensionRepository(self._c.database)

    def login_throttle(self) -> LoginThrottle:
        from warble.dal.account_state import LoginThrottle

        s = self._c.settings
        return LoginThrottle(
            self._c.redis,
            s.login_max_failures,
            s.login_window_seconds,
            s.login_max_account_failures,
        )

    def session_lookups(self) -> SessionLookups:
        from warble.dal.account_state import SessionLookups

        return SessionLookups(self._c.redis)

    def socket_tickets(self) -> SocketTickets:
        from warble.dal.account_state import RedisSocketTickets

        return RedisSocketTickets(self._c.redis)

    def counter_marks(self) -> CounterMarks:
        from warble.dal.counter_marks import RedisCounterMarks

        return RedisCounterMarks(self._c.redis)

    def last_seen(self) -> RedisLastSeen:
        from warble.dal.account_state import RedisLastSeen

        return RedisLastSeen(self._c.redis)

    def passwords(self) -> PasswordRepository:
        from warble.dal.passwords import PasswordRepository

        return PasswordRepository(self._c.database)

    def mailer(self) -> SesMailer:
        from warble.dal.mail import SesMailer

        return SesMailer(self._c.settings.email_sender, self._c.settings.aws_region)

    def reset_requests(self) -> SqsResetRequests:
        from warble.dal.queue import SqsResetRequests

        s = self._c.settings
        return SqsResetRequests(s.password_reset_queue_url, s.aws_region)

    # ---- graph and blocks -------------------------------------------------------------------
    def graph(self) -> GraphStore:
        def build() -> GraphStore:
            from warble.dal.graph import DynamoGraphStore

            return DynamoGraphStore(self._c.settings)

        return deferred(build)

    def blocks(self) -> BlockStore:
        """The graph table's blocks and mutes (``DynamoGraphStore`` too)."""

        def build() -> BlockStore:
            from warble.dal.graph import DynamoGraphStore

            return DynamoGraphStore(self._c.settings)

        return deferred(build)

    def block_sets(self) -> BlockSets:
        from warble.dal.blocks import BlockSets

        return BlockSets(self._c.redis, self._c.settings.membership_ttl_seconds)

    # ---- tweets, likes, media, timelines ----------------------------------------------------
    def tweets(self) -> TweetStore:
        def build() -> TweetStore:
            from warble.dal.tweets import TweetStore

            return TweetStore(self._c.settings)

        return deferred(build)

    def tweet_codec(self) -> Codec:
        from warble.dal.tweet_cache import TWEET_CODEC

        return TWEET_CODEC

    def likes(self) -> LikeStore:
        def build() -> LikeStore:
            from warble.dal.likes import LikeStore

            return LikeStore(self._c.settings)

        return deferred(build)

    def media(self) -> MediaStore:
        def build() -> MediaStore:
            from warble.dal.media import MediaTable

            return MediaTable(self._c.settings)

        return deferred(build)

    def bucket(self) -> ObjectStore:
        from warble.dal.media import MediaBucket

        return MediaBucket(self._c.settings)

    def timelines(self) -> TimelineStore:
        from warble.dal.timelines import TimelineStore

        s = self._c.settings
        return TimelineStore(
            self._c.redis,
            cap=s.timeline_cap,
            recent_cap=s.author_recent_cap,
            ttl_seconds=s.timeline_ttl_seconds,
            hot=self._c.hot,
        )

    # ---- conversations and discover ---------------------------------------------------------
    def conversations(self) -> ConversationStore:
        from warble.dal.conversations import ConversationStore

        return ConversationStore(self._c.settings)

    def unread_messages(self) -> UnreadMessageCache:
        from warble.dal.dm_unread import UnreadMessageCache

        return UnreadMessageCache(self._c.redis)

    def discover_records(self) -> DiscoverRecords:
        from warble.dal.discover_table import DiscoverRecords

        return DiscoverRecords(self._c.settings)

    def geo_index(self) -> GeoIndex:
        from warble.dal.discover import GeoIndex

        return GeoIndex(self._c.redis)

    def seen_filter(self) -> SeenFilter:
        from warble.dal.discover import SeenFilter

        s = self._c.settings
        return SeenFilter(self._c.redis, s.seen_filter_capacity, s.seen_filter_error)

    def swipe_ledger(self) -> SwipeLedger:
        from warble.dal.discover import SwipeLedger

        return SwipeLedger(self._c.redis)

    # ---- hashtags, search, notifications ----------------------------------------------------
    def hashtag_index(self) -> DynamoHashtagIndex:
        from warble.dal.hashtags import DynamoHashtagIndex

        return DynamoHashtagIndex(self._c.redis, self._c.settings)

    def trends(self) -> RedisTrends:
        from warble.dal.hashtags import RedisTrends
        from warble.domain.hashtags.service import WINDOW_MS

        return RedisTrends(self._c.redis, WINDOW_MS)

    def people_index(self) -> PeopleIndex:
        from warble.dal.search import PostgresPeopleIndex

        return PostgresPeopleIndex(self._c.database)

    def snapshots(self) -> Snapshots:
        from warble.dal.search import RedisSnapshots

        return RedisSnapshots(self._c.redis)

    def notifications(self) -> NotificationTable:
        def build() -> NotificationTable:
            from warble.dal.notifications import NotificationTable

            s = self._c.settings
            return NotificationTable(s.notification_ttl_days, s)

        return deferred(build)

    def unread(self) -> RedisUnread:
        from warble.dal.unread import RedisUnread

        s = self._c.settings
        return RedisUnread(self._c.redis, s.notification_unread_cap, hot=self._c.hot)

    # ---- push and account deletion ----------------------------------------------------------
    def connections(self) -> ConnectionRegistry:
        from warble.dal.connections import ConnectionRegistry

        return ConnectionRegistry(self._c.settings)

    def step_queue(self) -> SqsStepQueue:
        from warble.dal.queue import SqsStepQueue

        s = self._c.settings
        return SqsStepQueue(s.account_deletion_queue_url, s.aws_region)

    def table_erasure(self) -> DynamoErasure:
        from warble.dal.erasure import DynamoErasure

        return DynamoErasure(self._c.settings)

    def redis_erasure(self) -> RedisErasure:
        from warble.dal.leftovers import RedisErasure

        return RedisErasure(self._c.redis, self.trends())
