"""The composition root: one ``Container`` holds the shared clients (Redis, PostgreSQL, ids, the
WebSocket pusher) and gathers each feature's builder (``warble.services.<feature>``), building
every service on its first use from one ``Settings`` and keeping it while the container is warm.
The adapters come from ``stores`` (``warble.services.stores.Stores``): the unit tier passes
in-memory ones to the same builders (``tests/unit/fakes.py``).

Entry points reach services through the module functions (``services.tweets()``), which read the
current container. A test or a benchmark builds its own with other settings or stores
(``services.use(Container(settings, ...))``) or drops the current one (``services.reset()``):
nothing else holds a client, so nothing else needs resetting. Nothing runs at import time.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from warble.services import accounts as _accounts
from warble.services import conversations as _conversations
from warble.services import counters as _counters
from warble.services import deletion as _deletion
from warble.services import graph as _graph
from warble.services import notifications as _notifications
from warble.services import push as _push
from warble.services import reports as _reports
from warble.services import search as _search
from warble.services import suspensions as _suspensions
from warble.services import timelines as _timelines
from warble.services import tweets as _tweets
from warble.services.deferred import Deferred, deferred
from warble.services.stores import Stores

if TYPE_CHECKING:
    from warble.dal.hot import HotCache
    from warble.dal.idempotency import IdempotencyStore
    from warble.dal.postgres import Database
    from warble.dal.redis import RedisClient, WriteBatch
    from warble.dal.websocket import WebSocketSender
    from warble.domain.accounts.ports import Profiles
    from warble.domain.counters.service import BatchOutcome, CounterRules
    from warble.domain.push.service import Pusher
    from warble.domain.rate_limits import RateLimits
    from warble.domain.shared import IdGenerator
    from warble.settings import Settings

__all__ = ["Container", "Deferred", "deferred"]

T = TypeVar("T")


class Container:
    """Everything the functions use, built lazily from ``settings`` (``stores``: the adapters,
    given a container; the production ones by default).

    Imports are local to each builder so that a function pays only for what its requests use
    (the meta function imports no store at all), and its cold start does not pay for the
    settings before its first request reads them.
    """

    def __init__(
        self, settings: Settings | None = None, stores: Callable[[Container], Stores] = Stores
    ) -> None:
        from warble.settings import get_settings

        self.settings = settings or get_settings()
        self.stores = stores(self)

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
        them, so one store's write drops what another holds; read from the shards' replicas."""
        from warble.dal.hot import hot_cache
        from warble.dal.redis import connect

        s = self.settings
        reader = connect(s, replica_reads=True) if s.redis_cluster and s.hot_key_cache_ms else None
        return hot_cache(s.hot_key_cache_ms, reader=reader)

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
        if "hot" in self.__dict__ and self.hot is not None and self.hot.reader is not None:
            self.hot.reader.close()

    # ---- shared pieces ----------------------------------------------------------------------
    @cached_property
    def ids(self) -> IdGenerator:
        return self.stores.ids()

    @cached_property
    def profiles(self) -> Profiles:
        return self.stores.profiles()

    @cached_property
    def admin_usernames(self) -> frozenset[str]:
        return _accounts.admin_usernames(self)

    @cached_property
    def idempotency(self) -> IdempotencyStore:
        return self.stores.idempotency()

    @cached_property
    def rate_limits(self) -> RateLimits:
        return _accounts.rate_limits(self)

    # ---- WebSocket push ---------------------------------------------------------------------
    connections = cached_property(_push.connections)
    _push_pool = cached_property(_push.pool)

    def sender(self, domain_name: str = "", stage: str = "") -> WebSocketSender:
        return _push.sender(self, domain_name, stage)

    @cached_property
    def pusher(self) -> Pusher:
        return _push.pusher(self, self.connections, self._push_pool)

    # ---- each feature's builder -------------------------------------------------------------
    accounts = cached_property(_accounts.accounts)
    passwords = cached_property(_accounts.passwords)
    tickets = cached_property(_accounts.tickets)
    deletion = cached_property(_deletion.deletion)
    export = cached_property(_deletion.export)
    graph = cached_property(_graph.graph)
    shields = cached_property(_graph.shields)
    blocks = cached_property(_graph.blocks)
    muted_words = cached_property(_graph.muted_words)
    suspensions = cached_property(_suspensions.suspensions)
    tweets = cached_property(_tweets.tweets)
    media = cached_property(_tweets.media)
    likes = cached_property(_tweets.likes)
    timelines = cached_property(_timelines.timelines)
    conversations = cached_property(_conversations.conversations)
    discover = cached_property(_conversations.discover)
    hashtags = cached_property(_search.hashtags)
    search = cached_property(_search.search)
    notifications = cached_property(_notifications.notifications)
    reports = cached_property(_reports.reports)

    # ---- streams ----------------------------------------------------------------------------
    stream_decoder = cached_property(_counters.stream_decoder)
    counters_changed = cached_property(_counters.changed)
    counter_processor = cached_property(_counters.processor)
    reconciler = cached_property(_counters.reconciler)

    @cached_property
    def counter_rules(self) -> CounterRules:
        return _counters.rules()

    def count_batch(self, event: dict[str, Any]) -> BatchOutcome:
        """A Lambda batch of stream records through the counter consumer."""
        return self.counter_processor.process(self.stream_decoder.decode_batch(event))


_current: Container | None = None


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


def _reach(member: cached_property[T]) -> Callable[[], T]:
    """The current container's ``member``, as a function of this module."""
    name = member.attrname or ""
    return lambda: getattr(container(), name)  # type: ignore[no-any-return]


# The services, as entry points reach them (``services.tweets()``).
accounts = _reach(Container.accounts)
graph = _reach(Container.graph)
export = _reach(Container.export)
passwords = _reach(Container.passwords)
tickets = _reach(Container.tickets)
tweets = _reach(Container.tweets)
blocks = _reach(Container.blocks)
muted_words = _reach(Container.muted_words)
suspensions = _reach(Container.suspensions)
likes = _reach(Container.likes)
search = _reach(Container.search)
hashtags = _reach(Container.hashtags)
media = _reach(Container.media)
timelines = _reach(Container.timelines)
discover = _reach(Container.discover)
conversations = _reach(Container.conversations)
notifications = _reach(Container.notifications)
deletion = _reach(Container.deletion)
reports = _reach(Container.reports)


def idempotency() -> IdempotencyStore:
    return container().idempotency


def rate_limits() -> RateLimits:
    return container().rate_limits


def ids() -> IdGenerator:
    return container().ids
