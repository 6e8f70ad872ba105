"""The composition root: builds each service from settings and stores on first use.

Nothing here runs at import time. A warm container reuses what it built; tests and benchmarks
can build their own services with other stores instead of patching these.
"""

from __future__ import annotations

from datetime import timedelta
from functools import lru_cache

from warble.counters import CounterRegistry, StreamCounterProcessor
from warble.dal.account_state import LoginThrottle, SessionMarkers
from warble.dal.accounts import SessionRepository, UserRepository
from warble.dal.cache import LeasedCache
from warble.dal.idempotency import IdempotencyStore
from warble.dal.postgres import get_database
from warble.dal.rate_limit import RedisWindowCounter
from warble.dal.redis import get_redis
from warble.dal.worker_lease import RedisWorkerLease
from warble.domain.accounts import AccountPolicy, AccountService
from warble.domain.graph import GraphPolicy, GraphService
from warble.domain.likes import LikeService
from warble.domain.rate_limits import Budget, RateLimits
from warble.domain.reconcile import Reconciler
from warble.domain.timelines import TimelinePolicy, TimelineService
from warble.domain.tweets import TweetService
from warble.ids import Snowflake
from warble.settings import get_settings


@lru_cache(maxsize=1)
def ids() -> Snowflake:
    return Snowflake(RedisWorkerLease(get_redis()))


@lru_cache(maxsize=1)
def idempotency() -> IdempotencyStore:
    settings = get_settings()
    return IdempotencyStore(
        get_redis(), settings.idempotency_ttl_seconds, settings.idempotency_pending_seconds
    )


@lru_cache(maxsize=1)
def rate_limits() -> RateLimits:
    settings = get_settings()
    return RateLimits(
        RedisWindowCounter(get_redis()),
        per_user=Budget(settings.rate_limit_user_requests, settings.rate_limit_user_window_seconds),
        signup_per_ip=Budget(
            settings.rate_limit_signup_ip_requests, settings.rate_limit_signup_ip_window_seconds
        ),
        login_per_ip=Budget(
            settings.rate_limit_login_ip_requests, settings.rate_limit_login_ip_window_seconds
        ),
    )


@lru_cache(maxsize=1)
def accounts() -> AccountService:
    settings = get_settings()
    redis = get_redis()
    db = get_database()
    return AccountService(
        users=UserRepository(db),
        sessions=SessionRepository(db),
        profiles=LeasedCache(redis, settings.profile_cache_ttl_seconds),
        session_cache=LeasedCache(redis, settings.session_cache_ttl_seconds),
        throttle=LoginThrottle(redis, settings.login_max_failures, settings.login_window_seconds),
        markers=SessionMarkers(redis),
        ids=ids(),
        policy=AccountPolicy(
            password_hash_rounds=settings.password_hash_rounds,
            session_ttl=timedelta(days=settings.session_ttl_days),
            revocation_marker_seconds=settings.auth_cache_ttl_seconds + 60,
        ),
    )


@lru_cache(maxsize=1)
def graph() -> GraphService:
    from warble.dal.counters import DynamoCounterStore
    from warble.dal.graph import DynamoGraphStore

    settings = get_settings()
    redis = get_redis()
    return GraphService(
        store=DynamoGraphStore(),
        counters=DynamoCounterStore(settings.counter_claim_ttl_seconds),
        profiles=accounts(),
        counts_cache=LeasedCache(redis, settings.counts_cache_ttl_seconds),
        page_cache=LeasedCache(redis, settings.first_page_cache_ttl_seconds),
        ids=ids(),
        policy=GraphPolicy(
            follow_limit=settings.follow_limit,
            big_account_followers=settings.big_account_followers,
        ),
    )


def counters_changed(counter_keys: set[str]) -> None:
    """Drop the cached copies of counters that changed (users' and tweets')."""
    graph().counters_applied(counter_keys)
    tweets().counters_applied(counter_keys)


def counter_registry() -> CounterRegistry:
    """Which tables' streams feed counters, and how each record becomes deltas."""
    from warble.domain.graph import graph_counter_deltas
    from warble.domain.likes import like_counter_deltas
    from warble.domain.tweets import tweet_counter_deltas

    settings = get_settings()
    registry = CounterRegistry()
    registry.register(settings.graph_table, graph_counter_deltas)
    registry.register(settings.tweets_table, tweet_counter_deltas)
    registry.register(settings.likes_table, like_counter_deltas)
    return registry


@lru_cache(maxsize=1)
def counter_processor() -> StreamCounterProcessor:
    """The stream counter consumer."""
    from warble.dal.counters import DynamoCounterStore

    return StreamCounterProcessor(
        DynamoCounterStore(get_settings().counter_claim_ttl_seconds),
        counter_registry(),
        on_applied=counters_changed,
    )


@lru_cache(maxsize=1)
def reconciler() -> Reconciler:
    from warble.dal.counters import DynamoCounterStore
    from warble.dal.graph import DynamoGraphStore
    from warble.dal.likes import LikeStore
    from warble.dal.tweets import TweetStore

    settings = get_settings()
    return Reconciler(
        graph=DynamoGraphStore(),
        tweets=TweetStore(),
        likes=LikeStore(),
        counters=DynamoCounterStore(settings.counter_claim_ttl_seconds),
        settle_seconds=settings.reconcile_settle_seconds,
        on_repaired=counters_changed,
    )


@lru_cache(maxsize=1)
def tweets() -> TweetService:
    from warble.dal.counters import DynamoCounterStore
    from warble.dal.likes import LikeStore
    from warble.dal.tweets import TweetStore

    settings = get_settings()
    redis = get_redis()
    return TweetService(
        store=TweetStore(),
        cache=LeasedCache(redis, settings.tweet_cache_ttl_seconds),
        accounts=accounts(),
        ids=ids(),
        tombstone_seconds=settings.tweet_cache_ttl_seconds,
        counters=DynamoCounterStore(settings.counter_claim_ttl_seconds),
        counts_cache=LeasedCache(redis, settings.counts_cache_ttl_seconds),
        likes=LikeStore(),
    )


@lru_cache(maxsize=1)
def likes() -> LikeService:
    from warble.dal.likes import LikeStore

    return LikeService(
        store=LikeStore(), tweets=tweets(), accounts=accounts(), graph=graph(), ids=ids()
    )


@lru_cache(maxsize=1)
def timelines() -> TimelineService:
    from warble.dal.graph import DynamoGraphStore
    from warble.dal.timelines import TimelineStore
    from warble.dal.tweets import TweetStore

    settings = get_settings()
    return TimelineService(
        timelines=TimelineStore(
            get_redis(),
            cap=settings.timeline_cap,
            recent_cap=settings.author_recent_cap,
            ttl_seconds=settings.timeline_ttl_seconds,
        ),
        tweets=tweets(),
        tweet_store=TweetStore(),
        graph=graph(),
        graph_store=DynamoGraphStore(),
        policy=TimelinePolicy(
            celebrity_followers=settings.celebrity_followers,
            cap=settings.timeline_cap,
            recent_cap=settings.author_recent_cap,
            backfill=settings.follow_backfill,
        ),
    )
