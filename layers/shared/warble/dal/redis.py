"""The Redis client: built by the composition root (``warble.services``) on first use, and
reused while the container is warm. On AWS it signs in as the caches' one IAM-enabled user
(``IamCredentials``) over TLS (``rediss://``, verified).

Several caches as one keyspace. One cluster-mode cache stops at 250 shards (500 nodes), short of
the event peaks at 10M and 100M daily users (docs/capacity.md, "The cache at the event peak").
So the client may be given several (REDIS_URL, then REDIS_MORE_URLS): each of the 16384 cluster
slots belongs to one cache, slot ``s`` to cache ``s % N``, and the cluster client routes every
key by its slot as it always does (``SlotMap`` builds its slot table from every cache's). Every
multi-key operation shares a hash tag, so it stays in one slot, on one cache; pipelines,
scripts, ``mget_nonatomic`` and ``ReadBatch`` need no change.

Why every N-th slot and not N contiguous ranges: a node-based cache spreads its slots evenly
over its shards (ElastiCache's default, and what online resharding restores), so with a range
of a fourth of the slots a cache would take all its traffic on a fourth of its shards; every
N-th slot falls on all of them alike. Each cache still holds all 16384 slots, most of them
empty.

Changing N changes which cache owns most slots: their keys are not moved, they are left behind
(unread until they expire) while the new owner starts empty and fills from the sources of truth,
as after a flush. With N = 1 the client is the plain cluster client.

Every command within the request's deadline (``command_window``): a command, its retries and, on
a cluster, the re-reading of the slots map after a failure take at most half of what is left of
the deadline (``warble.deadline.time_left``), so a cache that is down or paused fails as a Redis
error while the caller still has time for what it does then (a miss read from the source of
truth, or 503 with Retry-After), instead of running the request into its deadline. A command
that spent its whole window leaves the request's later commands none: a stalled cache is waited
on once per request.
"""

from __future__ import annotations

import math
import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.cluster import (
    ClusterNode,
    ClusterPipeline,
    LoadBalancingStrategy,
    NodesManager,
    RedisCluster,
    cleanup_kwargs,
    get_node_name,
)
from redis.commands.core import Script
from redis.connection import Connection, HiredisRespSerializer, SSLConnection, parse_url
from redis.crc import REDIS_CLUSTER_HASH_SLOTS
from redis.credentials import CredentialProvider
from redis.event import AfterSlotsCacheRefreshEvent
from redis.exceptions import NoScriptError, RedisClusterException
from redis.retry import Retry

from warble.deadline import rings_at, time_left
from warble.settings import Settings, SettingsError

if TYPE_CHECKING:
    from warble.domain import shared

RedisClient: TypeAlias = "redis.Redis | RedisCluster"

_HIREDIS_PACK: Callable[..., bytes] | None
try:  # what redis-py packs commands with when hiredis is installed (the layer has it)
    from hiredis import pack_command as _hiredis_pack

    _HIREDIS_PACK = _hiredis_pack
except ImportError:  # pragma: no cover
    _HIREDIS_PACK = None

# Failures a handler turns into 503 unavailable: the cache unreachable or slow, and on a cluster
# what a failover shows: no node reachable or the slots map unknown (RedisClusterException, which
# redis-py raises outside RedisError), a shard without a primary (ClusterDownError, MasterDown),
# a slot moving (TryAgain) or a write reaching a node just demoted (ReadOnly).
UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (
    redis.ConnectionError,
    redis.TimeoutError,
    RedisClusterException,
    redis.exceptions.ClusterError,
    redis.exceptions.TryAgainError,
    redis.exceptions.ReadOnlyError,
)


class IamCredentials(CredentialProvider):
    """ElastiCache's IAM authentication: the cache user's id, and a token signed with the
    function's credentials as its password (``warble.dal.aws_auth``), made anew before it
    expires; every new connection asks for one. The token names the cache it signs in to
    (``cache_name``, by default REDIS_CACHE_NAME), so each cache has its own provider."""

    _REUSE_SECONDS = 600  # of the token's 900

    def __init__(self, settings: Settings, cache_name: str | None = None) -> None:
        self._settings = settings
        self.cache_name = settings.redis_cache_name if cache_name is None else cache_name
        self._token = ""
        self._made = -math.inf

    def get_credentials(self) -> tuple[str, str]:
        if time.monotonic() - self._made > self._REUSE_SECONDS:
            from warble.dal.aws_auth import elasticache_token

            s = self._settings
            self._token = elasticache_token(
                self.cache_name, s.redis_iam_user, s.aws_region, s.redis_serverless
            )
            self._made = time.monotonic()
        return self._settings.redis_iam_user, self._token


def caches(settings: Settings) -> list[tuple[str, str]]:
    """(URL, cache name) of each cache, the first REDIS_URL's. REDIS_MORE_URLS and
    REDIS_MORE_CACHE_NAMES are comma-separated and aligned; a pair whose URL is empty is
    skipped (the template joins the endpoints of replication groups a profile may not create)."""
    urls = settings.redis_more_urls.split(",") if settings.redis_more_urls else []
    names = settings.redis_more_cache_names.split(",") if settings.redis_more_cache_names else []
    if names and len(names) != len(urls):
        raise SettingsError("REDIS_MORE_CACHE_NAMES: one entry for each of REDIS_MORE_URLS")
    pairs = zip(urls, names or [""] * len(urls), strict=True)
    more = [(url.strip(), name.strip()) for url, name in pairs if url.strip()]
    if settings.redis_iam_user and not all(name for _, name in more):
        raise SettingsError("REDIS_MORE_CACHE_NAMES: each cache's name (its IAM token names it)")
    return [(settings.redis_url, settings.redis_cache_name), *more]


# ---- every command within the request's deadline ----------------------------------------------
SOCKET_TIMEOUT_SECONDS = 2.0  # connect, and each read or write: a cache answers in milliseconds
# A command (its attempts, the backoffs between them, a cluster's re-reading of its slots map)
# takes at most this share of what is left of the request's deadline, and at most
# COMMAND_SECONDS: the rest stays for the caller's answer to a failed cache. Each command may
# take half of what is left, so no sequence of them reaches the deadline.
DEADLINE_SHARE = 0.5
COMMAND_SECONDS = 2.0
# A single node's client retries a connection refused or reset (a stale pooled connection, a
# node restarting) three times, after a backoff with full jitter (10 ms doubling), while the
# command's window can hold the backoff and a short attempt. A timeout is not retried: the
# cache is slow, and a read that timed out may have run. redis-py's default (10 retries, up
# to 1 s apart) is not what ``Redis.from_url`` gives: it gave no retry at all.
RETRIES = 3
SHORTEST_ATTEMPT_SECONDS = 0.01


class _Window(threading.local):
    ends: float | None = None  # time.monotonic() by which the running command gives up
    stalled: float | None = None  # the deadline (``rings_at``) of a request the cache stalled


_window = _Window()


class command_window:  # a context manager, named as a function
    """The command run inside ends by ``DEADLINE_SHARE`` of what is left of the deadline (at
    most ``COMMAND_SECONDS``): its connections wait no longer, its retries stop. Nested
    windows are the outermost's; none where no deadline is armed (a stream consumer, a
    schedule), where the clients' own timeouts hold.

    A command that fails with its whole window spent (the cache took the connection and did
    not answer: paused, overloaded, a black hole) leaves the request's later commands no time:
    they fail at once, unsent, so a request whose every store call falls back to its source of
    truth pays the stalled cache once, not once per call."""

    __slots__ = ("_opened",)

    def __enter__(self) -> None:
        self._opened = False
        if _window.ends is None and (left := time_left()) is not None:
            now = time.monotonic()
            stalled = _window.stalled is not None and _window.stalled == rings_at()
            _window.ends = now if stalled else now + min(COMMAND_SECONDS, left * DEADLINE_SHARE)
            self._opened = True

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if self._opened:
            ends, _window.ends = _window.ends, None
            spent = ends is not None and time.monotonic() >= ends
            if spent and kind is not None and issubclass(kind, UNAVAILABLE_ERRORS):
                _window.stalled = rings_at()


def window_left() -> float | None:
    """Seconds left to the running command's window; None outside one."""
    ends = _window.ends
    return None if ends is None else ends - time.monotonic()


class DeadlineRetry(Retry):
    """redis-py's retry loop (``Retry.call_with_retry`` as of 8.1.0) run in a command window,
    with no retry once the window cannot hold the backoff and a short attempt. A single node's
    client runs every command, pipeline, connect and health check through it."""

    def call_with_retry(
        self,
        do: Callable[[], Any],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> Any:
        with command_window():
            self._backoff.reset()
            failures = 0
            while True:
                try:
                    return do()
                except self._supported_errors as error:
                    if is_retryable and not is_retryable(error):
                        raise
                    failures += 1
                    if with_failure_count:
                        fail(error, failures)
                    else:
                        fail(error)
                    backoff = self._backoff.compute(failures)
                    left = window_left()
                    if failures > self._retries or (
                        left is not None and left < backoff + SHORTEST_ATTEMPT_SECONDS
                    ):
                        raise error
                    if backoff > 0:
                        time.sleep(backoff)


class _WithinWindow(Connection):
    """A connection that waits no longer than the running command's window: its connect
    timeout, and its socket's timeout for each command sent (and the replies read after it).
    A command sent when the window has closed fails at once, unsent. Outside a window the
    configured timeouts hold. (A TLS handshake keeps the configured read timeout.)"""

    _tightened = False

    @property  # type: ignore[override]
    def socket_connect_timeout(self) -> float | None:
        left = window_left()
        configured: float | None = self._socket_connect_timeout
        if left is None:
            return configured
        left = max(left, 0.001)  # a timeout of zero would make the socket non-blocking
        return left if configured is None else min(configured, left)

    @socket_connect_timeout.setter
    def socket_connect_timeout(self, value: float | None) -> None:
        self._socket_connect_timeout = value

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        if not self._sock:
            self.connect_check_health(check_health=False)
        sock = cast(Any, self._sock)
        left = window_left()
        if left is not None:
            if left <= 0:
                raise redis.TimeoutError("the request's deadline leaves the cache no more time")
            configured = self._socket_timeout
            sock.settimeout(left if configured is None else min(configured, left))
            self._tightened = True
        elif self._tightened:
            sock.settimeout(self._socket_timeout)
            self._tightened = False
        super().send_packed_command(command, check_health)


class _SSLWithinWindow(_WithinWindow, SSLConnection):
    """The same over TLS (``rediss://``)."""


def _connection_class(url: str) -> type[Connection]:
    return _SSLWithinWindow if url.startswith("rediss://") else _WithinWindow


class _WindowedPipeline(ClusterPipeline):
    def execute(self, raise_on_error: bool = True) -> list[Any]:
        with command_window():
            return super().execute(raise_on_error)


class DeadlineCluster(RedisCluster):
    """The cluster client with each command and pipeline in a command window. Its own retries
    (10, made at once, each after re-reading the slots map) stop there: in a closed window an
    attempt fails unsent, and the re-reading with it (``RedisClusterException``)."""

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        with command_window():
            return super().execute_command(*args, **kwargs)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        pipe = super().pipeline(transaction, shard_hint)
        pipe.__class__ = _WindowedPipeline  # the pipeline redis-py built, its execute windowed
        return pipe


def url_options(url: str) -> dict[str, Any]:
    """``parse_url``'s options but its connection class (``rediss://`` would name redis-py's
    SSLConnection, which the cluster client lets override ours)."""
    options = cleanup_kwargs(**parse_url(url))
    options.pop("connection_class", None)
    return options


def connect(settings: Settings, replica_reads: bool = False) -> RedisClient:
    """The client of the caches. ``replica_reads``: a cluster client whose reads go to a replica
    of their shard where it has one (READONLY connections; the primary where it has none), for
    the keys every container holds a copy of (warble.dal.hot): their reads leave the primaries
    to the rest. A single node is its own replica."""
    url = settings.redis_url
    options: dict[str, Any] = {
        "decode_responses": True,
        "socket_timeout": SOCKET_TIMEOUT_SECONDS,
        "socket_connect_timeout": SOCKET_TIMEOUT_SECONDS,
        "connection_class": _connection_class(url),
    }
    if replica_reads and settings.redis_cluster:
        options["load_balancing_strategy"] = LoadBalancingStrategy.RANDOM_REPLICA
    if settings.redis_iam_user:
        options["credential_provider"] = IamCredentials(settings)
    if settings.redis_ca_certs:
        options["ssl_ca_certs"] = settings.redis_ca_certs
    several = caches(settings)
    if len(several) > 1 and not settings.redis_cluster:
        raise SettingsError("REDIS_MORE_URLS: several caches are cluster-mode caches")
    if settings.redis_cluster:
        # The cluster client reads its slots map as it is made: within the deadline too. Its
        # URL's TLS is named by the connection class (a ``rediss://`` URL would replace it).
        with command_window():
            plain = "redis://" + url.removeprefix("rediss://").removeprefix("redis://")
            client = DeadlineCluster.from_url(plain, **options)
            client.commands_parser = cast(Any, KeysAskedLocally(client))  # the parser, wrapped
            if len(several) > 1:
                client.nodes_manager = SlotMap.of(client.nodes_manager, several[1:], settings)
        return client
    backoff = ExponentialWithJitterBackoff(base=0.01, cap=1.0)
    retry = DeadlineRetry(backoff, RETRIES, supported_errors=(redis.ConnectionError,))
    return redis.Redis.from_url(url, health_check_interval=30, retry=retry, **options)


class KeysAskedLocally:
    """A cluster client's command parser (shared by its pipelines) that names a script's keys
    itself, as redis-py does for a lone EVALSHA but not for one in a pipeline: there it sends
    ``COMMAND GETKEYS`` to the client's default node, a round trip more per script, and one
    that fails while that node is a dead primary (a failover), before the pipeline's own
    recovery runs, so the worker went on failing after the replica took over
    (docs/reliability.md, cache-failover). The stores send no other command whose keys only
    the server can name."""

    def __init__(self, client: RedisCluster) -> None:
        self._parser = client.commands_parser

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parser, name)

    def get_keys(self, redis_conn: Any, *args: Any) -> Any:
        if len(args) > 2 and str(args[0]).upper() in ("EVAL", "EVALSHA"):
            return list(args[3 : 3 + int(args[2])])
        return self._parser.get_keys(redis_conn, *args)


def cache_of(slot: int, count: int) -> int:
    """The index of the cache that holds ``slot`` among ``count`` caches."""
    return slot % count


class CacheMove:
    """A cache added to the keyspace, its slots moved a stage at a time (REDIS_MOVE_*).

    Going from N caches to N + 1, ``slot % N`` and ``slot % (N + 1)`` differ for most slots (four
    in five from 4 to 5), and a slot that changes cache is empty in its new one: its keys stay
    behind. Moved at once, that is most of the cache emptied in a moment, and every profile's
    first view after it reads PostgreSQL (docs/capacity.md: 342 ACU at 100M at the event,
    against Aurora's 256). Moved in ``STAGES`` stages over ``seconds``, each stage empties its
    share only: 0.8 / 60 of the keys every 30 s over half an hour.

    Every container derives the same stage from the same clock and settings, so no
    coordination is needed: a slot's cache changes for all of them within their clocks' skew,
    which the cache's own reads-from-the-table absorb as any miss. A stage takes slots spread
    over the whole slot range (``slot x STRIDE``, mod 16384: a permutation), so every shard
    of the new cache fills evenly. The keys a moved slot leaves in its old cache are not
    read again and expire with their TTLs; shrinking the keyspace is not staged (losing one
    cache of N empties 1/N of the keys, which the capacity checks hold).
    """

    STAGES = 60
    STRIDE = 5_003  # odd: slot x STRIDE mod 2^14 is a permutation of the slots

    def __init__(self, before: int, starts: float, seconds: float) -> None:
        if before < 1 or seconds <= 0:
            raise SettingsError("REDIS_MOVE_FROM and REDIS_MOVE_MINUTES: at least 1 and above 0")
        self.before = before
        self.starts = starts
        self.stage_seconds = seconds / self.STAGES

    @classmethod
    def of(cls, settings: Settings, count: int) -> CacheMove | None:
        if not settings.redis_move_from:
            return None
        if settings.redis_move_from >= count:
            raise SettingsError("REDIS_MOVE_FROM: fewer caches than REDIS_MORE_URLS gives")
        return cls(
            settings.redis_move_from, settings.redis_move_start, settings.redis_move_minutes * 60
        )

    def stage(self, slot: int) -> int:
        """The stage at whose start ``slot`` moves (0 to STAGES - 1)."""
        return (
            (slot * self.STRIDE % REDIS_CLUSTER_HASH_SLOTS)
            * self.STAGES
            // REDIS_CLUSTER_HASH_SLOTS
        )

    def stages_begun(self, now: float) -> int:
        """How many stages have begun at ``now`` (0 before the move, STAGES after it)."""
        if now < self.starts:
            return 0
        return min(self.STAGES, int((now - self.starts) // self.stage_seconds) + 1)

    def next_change(self, now: float) -> float | None:
        """When the next stage begins after ``now``; None once every slot has moved."""
        begun = self.stages_begun(now)
        return None if begun >= self.STAGES else self.starts + begun * self.stage_seconds

    def cache(self, slot: int, count: int, now: float) -> int:
        """The index of the cache that holds ``slot`` at ``now``."""
        if self.stage(slot) < self.stages_begun(now):
            return cache_of(slot, count)
        return cache_of(slot, self.before)


class SlotMap(NodesManager):
    """A cluster client's nodes and slot table over several caches: slot ``s`` is served by the
    node that owns it in cache ``cache_of(s, N)``.

    Each cache keeps its own ``NodesManager`` (its startup nodes, its CLUSTER SLOTS, its nodes'
    connections, made with its own credentials); this one merges their tables. The cluster
    client calls ``initialize`` after a connection error, a MOVED past ``reinitialize_steps``
    or CLUSTERDOWN, and ``move_slot`` on the other MOVED: each is passed to the caches
    concerned and the merged table made again the same way, so a refresh never mixes caches.
    It overrides NodesManager's methods as redis-py 8.1.0 calls them (the version pinned in
    layers/dependencies/requirements.txt): tests/integration/test_redis_caches.py runs each
    path on real servers, so an upgrade that changes them fails there.
    """

    def __init__(self, managers: Sequence[NodesManager], move: CacheMove | None = None) -> None:
        self.caches = list(managers)
        self._move = move
        self._restage_at: float | None = None  # when the move's next stage begins
        first = self.caches[0]
        # NodesManager's own set-up (its locks, epoch and attributes), with the first cache's
        # connection settings; it ends by calling ``initialize``, which merges the tables the
        # caches' managers have just built (``_built`` stops it refreshing them).
        self._built = False
        super().__init__(
            startup_nodes=list(first.startup_nodes.values()),
            from_url=first.from_url,
            require_full_coverage=True,
            event_dispatcher=first._event_dispatcher,
            himport_registry=first.himport_registry,
            **first.connection_kwargs,
        )

    @classmethod
    def of(
        cls, first: NodesManager, more: Sequence[tuple[str, str]], settings: Settings
    ) -> SlotMap:
        """The first cache's manager (the one the cluster client built) and one per further
        (URL, cache name), with the first's connection settings but its own address and its
        own IAM credentials."""
        managers = [first]
        for url, name in more:
            options = {**first.connection_kwargs, **url_options(url)}
            if settings.redis_iam_user:
                options["credential_provider"] = IamCredentials(settings, name)
            address = parse_url(url)
            managers.append(
                NodesManager(
                    startup_nodes=[ClusterNode(address["host"], address.get("port", 6379))],
                    from_url=True,
                    require_full_coverage=True,
                    himport_registry=first.himport_registry,
                    **options,
                )
            )
        return cls(managers, CacheMove.of(settings, len(managers)))

    def owner(self, slot: int, now: float) -> NodesManager:
        """The cache that holds ``slot`` at ``now`` (Unix seconds)."""
        if self._move is None:
            return self.caches[cache_of(slot, len(self.caches))]
        return self.caches[self._move.cache(slot, len(self.caches), now)]

    def _merged(self) -> dict[int, list[ClusterNode]]:
        """Each slot's nodes, from the cache that holds it now (and when that next changes)."""
        now = time.time()
        self._restage_at = self._move.next_change(now) if self._move is not None else None
        return {
            slot: self.owner(slot, now).slots_cache[slot]
            for slot in range(REDIS_CLUSTER_HASH_SLOTS)
        }

    def get_node_from_slot(self, slot: int, *args: Any, **kwargs: Any) -> ClusterNode:
        """The node of ``slot``, the table merged again first when a move's stage has begun
        (one comparison a command otherwise)."""
        if self._restage_at is not None and time.time() >= self._restage_at:
            slots = self._merged()
            with self._lock:
                self.slots_cache = slots
        return super().get_node_from_slot(slot, *args, **kwargs)

    def initialize(
        self,
        additional_startup_nodes_info: list[tuple[str, int]] | None = None,
        disconnect_startup_nodes_pools: bool = True,
        last_failed_node_name: str | None = None,
    ) -> None:
        epoch = self._get_epoch()
        with self._initialization_lock:
            with self._lock:
                if epoch != self._epoch:
                    return  # another thread has just done it
            self.reset()
            failure = None
            if self._built:
                failure = self._refresh(
                    additional_startup_nodes_info or [],
                    disconnect_startup_nodes_pools,
                    last_failed_node_name,
                )
            self._built = True
            slots = self._merged()
            nodes = {
                name: node for cache in self.caches for name, node in cache.nodes_cache.items()
            }
            with self._lock:
                self.nodes_cache = nodes
                self.slots_cache = slots
                self.startup_nodes = dict(nodes)
                self.default_node = self.caches[0].default_node
                self._epoch += 1
        self._event_dispatcher.dispatch(AfterSlotsCacheRefreshEvent())
        if failure is not None:
            raise failure

    def _refresh(
        self, extra: list[tuple[str, int]], disconnect: bool, failed: str | None
    ) -> Exception | None:
        """Each cache concerned re-reads its CLUSTER SLOTS: the one that holds the failed node
        or the MOVED's target, or every cache when none does (a node no cache knows yet, or
        CLUSTERDOWN). A cache is only ever asked about its own nodes, with its own credentials.
        A cache that cannot be reached keeps its table, the others are refreshed all the same,
        and its error is returned for ``initialize`` to raise, as one cluster's would be."""
        names = {get_node_name(host, port) for host, port in extra}
        if failed is not None:
            names.add(failed)
        concerned = [cache for cache in self.caches if names & cache.nodes_cache.keys()]
        failure: Exception | None = None
        for cache in concerned or self.caches:
            try:
                cache.initialize(
                    additional_startup_nodes_info=[
                        (host, port)
                        for host, port in extra
                        if get_node_name(host, port) in cache.nodes_cache
                    ],
                    disconnect_startup_nodes_pools=disconnect,
                    last_failed_node_name=failed if failed in cache.nodes_cache else None,
                )
            except (RedisClusterException, redis.RedisError) as exc:
                failure = failure or exc
        return failure

    def move_slot(self, e: Any) -> None:
        """A MOVED within the slot's cache (a failover, a resharding): that cache's table is
        patched, and the slot here follows it."""
        owner = self.owner(e.slot_id, time.time())
        owner.move_slot(e)
        with self._lock:
            self.slots_cache[e.slot_id] = owner.slots_cache[e.slot_id]
            for node in owner.slots_cache[e.slot_id]:
                self.nodes_cache.setdefault(node.name, node)

    def create_redis_connections(self, nodes: list[ClusterNode]) -> None:
        """A node's connections are made by its own cache's manager: with its credentials.
        (Every node here came from a cache's table; one none knows would get the first's.)"""
        left = list(nodes)
        for cache in self.caches:
            mine = [node for node in left if node.name in cache.nodes_cache]
            if mine:
                cache.create_redis_connections(mine)
                left = [node for node in left if node not in mine]
        if left:
            super().create_redis_connections(left)

    def move_node_to_end_of_cached_nodes(self, node_name: str) -> None:
        super().move_node_to_end_of_cached_nodes(node_name)
        for cache in self.caches:
            cache.move_node_to_end_of_cached_nodes(node_name)

    def close(self) -> None:
        super().close()
        for cache in self.caches:
            cache.close()


# RedisCluster is a typing.Protocol's subclass: ``isinstance`` of a plain client against it goes
# through the Protocol's slow check (1 µs), which every batch of a warm read paid twice.
_CLUSTER_TYPES: dict[type, bool] = {}


def is_cluster(client: RedisClient) -> bool:
    """Whether ``client`` is a cluster client (decided once per client class)."""
    kind = type(client)
    known = _CLUSTER_TYPES.get(kind)
    if known is None:
        known = _CLUSTER_TYPES[kind] = isinstance(client, RedisCluster)
    return known


def mget(client: RedisClient, names: list[str]) -> list[str | None]:
    """MGET of keys that may live in different slots.

    A single node answers one MGET. On a cluster, MGET across slots is refused (CROSSSLOT), so
    the cluster client's ``mget_nonatomic`` splits the keys by slot and pipelines one MGET per
    slot group. Callers never rely on atomicity across the keys.
    """
    values = (
        client.mget_nonatomic(names) if isinstance(client, RedisCluster) else client.mget(names)
    )
    return [None if value is None else str(value) for value in values]


# A pipeline that finds a script gone (SCRIPT FLUSH, a restarted or failed-over node) loads it
# and runs the failed calls again; twice more at most, then the NOSCRIPT error stands.
SCRIPT_LOAD_ATTEMPTS = 3


def eval_pipelined(
    client: RedisClient, script: Script, calls: Sequence[tuple[Sequence[str], Sequence[Any]]]
) -> list[Any]:
    """Run ``script`` once per ``(keys, args)`` in one pipeline (one round trip per node)."""
    return eval_scripts(client, [(script, keys, args) for keys, args in calls])


def eval_scripts(
    client: RedisClient, calls: Sequence[tuple[Script, Sequence[str], Sequence[Any]]]
) -> list[Any]:
    """Run each ``(script, keys, args)`` in one pipeline (one round trip per node).

    redis-py blocks ``evalsha`` in cluster pipelines and has no NOSCRIPT recovery there (a
    single-node pipeline instead asks SCRIPT EXISTS before every execute: one more round trip).
    So the EVALSHAs are sent as raw commands, routed by their keys' slot, and only the calls a
    node answered NOSCRIPT to are sent again, after SCRIPT LOAD on every primary: NOSCRIPT means
    the call did not run, so no call runs twice.
    """
    results: list[Any] = [None] * len(calls)
    pending = list(range(len(calls)))
    for _ in range(SCRIPT_LOAD_ATTEMPTS):
        pipe = client.pipeline(transaction=False)
        for index in pending:
            script, keys, args = calls[index]
            pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
        missing: list[int] = []
        for index, answer in zip(pending, pipe.execute(raise_on_error=False), strict=True):
            if isinstance(answer, NoScriptError):
                missing.append(index)
            elif isinstance(answer, Exception):
                raise answer
            else:
                results[index] = answer
        if not missing:
            return results
        for script in {calls[index][0].sha: calls[index][0] for index in missing}.values():
            client.script_load(script.script)  # on a cluster: every primary
        pending = missing
    raise NoScriptError(f"{len(pending)} script calls kept finding their script gone")


def scripted(
    batch: shared.ReadBatch, script: Script, keys: Sequence[str], args: Sequence[Any]
) -> Callable[[], Any]:
    """``script`` queued in ``batch`` as an EVALSHA; its reader gives the script's answer. A
    node that finds the script gone (flushed, restarted, failed over) did not run it: the batch
    loads it and sends those calls again together; one lost again the reader runs on its own."""
    read = queued(batch).add_script(script, keys, args)

    def answer() -> Any:
        try:
            return read()
        except NoScriptError:
            return script(keys=keys, args=args)

    return answer


# Each thread's connection for batches, per client (pool): see ``send_pipelined``.
_held = threading.local()


def _batch_connection(client: redis.Redis) -> Any:
    pool = client.connection_pool
    held: weakref.WeakKeyDictionary[Any, Any] | None = getattr(_held, "connections", None)
    if held is None:
        held = _held.connections = weakref.WeakKeyDictionary()
    conn = held.get(pool)
    if conn is None or conn.pid != os.getpid():
        conn = held[pool] = pool.get_connection()
    return conn


def _packed(conn: Any, commands: Sequence[tuple[Any, ...]]) -> list[bytes]:
    """The commands in the protocol, as the connection's packer writes them: hiredis's
    ``pack_command`` called on each command directly, without redis-py's wrapper around it
    (which copies every command twice to split a command name holding a space, as none of a
    batch's does, and to turn views into bytes)."""
    if _HIREDIS_PACK is None or not isinstance(conn._command_packer, HiredisRespSerializer):
        return conn.pack_commands(commands)  # type: ignore[no-any-return]
    pack = _HIREDIS_PACK
    if any(" " in command[0] for command in commands):
        return conn.pack_commands(commands)  # type: ignore[no-any-return]
    try:
        return [b"".join([pack(command) for command in commands])]  # one sendall
    except TypeError:  # a bytearray (which redis-py turns into bytes), or a value it refuses
        return conn.pack_commands(commands)  # type: ignore[no-any-return]


def _replies(conn: Any, client: redis.Redis, commands: Sequence[tuple[Any, ...]]) -> list[Any]:
    """Each command's reply, as ``client.parse_response`` gives it (the client's reply
    callbacks), or the ResponseError it got; read from the connection's parser, failures named
    as ``Connection.read_response`` names them (so the client's retries see the same errors),
    without its per-reply checks, which cost more than a reply's parse."""
    parser = conn._parser
    # A CaseInsensitiveDict, whose keys are upper case: read as the dict it is (its own get is
    # a Python call per reply).
    callback_of = dict.get
    callbacks = client.response_callbacks
    answers: list[Any] = []
    try:
        for command in commands:
            reply = parser.read_response()
            if isinstance(reply, redis.ResponseError):
                answers.append(reply)
                continue
            callback = callback_of(callbacks, command[0].upper())
            answers.append(reply if callback is None else callback(reply))
    except TimeoutError:  # socket.timeout
        raise redis.TimeoutError(f"Timeout reading from {conn._host_error()}") from None
    except OSError as exc:
        raise redis.ConnectionError(
            f"Error while reading from {conn._host_error()} : {exc.args}"
        ) from exc
    if conn.health_check_interval:
        conn.next_health_check = time.monotonic() + conn.health_check_interval
    return answers


def send_pipelined(client: redis.Redis, commands: Sequence[tuple[Any, ...]]) -> list[Any]:
    """``commands`` in one round trip on a single node, as a non-transactional redis-py pipeline
    sends them (the client's retries on a connection error, its reply parsing), without the
    pipeline's per-command bookkeeping and the pool's checks around every use, which together
    cost a warm read more than its own code (a fifth of a profile read's handler), nor the
    connection's per-command packing and per-reply checks (``_packed``, ``_replies``). The
    connection is this thread's own, taken from the client's pool once and kept: nothing else
    uses it, so nothing else can leave a reply unread on it, and any failure disconnects it
    (the next batch reconnects). Each answer is the command's reply or the ResponseError it
    got."""
    conn = _batch_connection(client)

    def send() -> list[Any]:
        conn.send_packed_command(_packed(conn, commands))
        return _replies(conn, client, commands)

    try:
        answers: list[Any] = conn.retry.call_with_retry(send, lambda _: conn.disconnect())
    except BaseException:
        conn.disconnect()  # whatever was left unread goes with the socket
        raise
    return answers


class ReadBatch:
    """Reads of several stores sent in one round trip (one per node on a cluster).

    Each store queues its commands and gets back a reader of its answers; ``run`` sends them
    all; then each store reads its answers (and loads its misses from its source of truth).
    With Redis unreachable, ``run`` does not raise: every reader raises the connection error,
    which each store treats as it treats one of its own calls failing (a miss, mostly).
    """

    def __init__(self, client: RedisClient) -> None:
        self._client = client
        self._cluster = is_cluster(client)
        self._commands: list[tuple[Any, ...]] = []
        self._answers: list[Any] | None = None
        self._scripts: dict[str, Script] = {}  # by SHA: the EVALSHAs queued (``scripted``)
        self._error: Exception | None = None

    def add(self, *command: Any) -> Callable[[], Any]:
        """Queue one single-slot command; the reader returns its answer after ``run``."""
        index = len(self._commands)
        self._commands.append(command)
        return lambda: self._answer(index)

    def add_script(
        self, script: Script, keys: Sequence[str], args: Sequence[Any]
    ) -> Callable[[], Any]:
        """``script`` as an EVALSHA, which ``run`` sends again where a node lost the script."""
        self._scripts[script.sha] = script
        return self.add("EVALSHA", script.sha, len(keys), *keys, *args)

    def mget(self, names: list[str]) -> Callable[[], list[str | None]]:
        """Values of keys in any slots: one MGET on a single node, one GET per key on a
        cluster (the pipeline sends each node its keys together)."""
        if not self._cluster:  # the client decodes its replies: the values are str already
            return self.add("MGET", *names) if names else (lambda: [])
        readers = [self.add("GET", name) for name in names]
        return lambda: [None if (v := read()) is None else str(v) for read in readers]

    def run(self) -> None:
        if self._answers is not None or self._error is not None:
            return
        if not self._commands:
            self._answers = []
            return
        try:
            self._answers = self._send(self._commands)
            self._reload_lost_scripts()
        except UNAVAILABLE_ERRORS as exc:
            self._error = exc

    def _send(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        if self._cluster:  # one pipeline per node, sent at once
            pipe = self._client.pipeline(transaction=False)
            for command in commands:
                pipe.execute_command(*command)
            try:
                return cast(list[Any], pipe.execute(raise_on_error=False))
            finally:
                pipe.reset()
        return send_pipelined(cast(redis.Redis, self._client), commands)

    def _reload_lost_scripts(self) -> None:
        """The EVALSHAs a node answered NOSCRIPT (flushed, restarted, failed over: they did not
        run) sent again together after their scripts are loaded: one round trip more for the
        batch, not one for each call (a batch of 30 reactions made 35 after a SCRIPT FLUSH)."""
        assert self._answers is not None
        lost = [
            index
            for index, answer in enumerate(self._answers)
            if isinstance(answer, NoScriptError) and self._commands[index][1] in self._scripts
        ]
        if not lost:
            return
        for sha in dict.fromkeys(self._commands[index][1] for index in lost):
            self._client.script_load(self._scripts[sha].script)  # on a cluster: every primary
        for index, answer in zip(lost, self._send([self._commands[i] for i in lost]), strict=True):
            self._answers[index] = answer

    def _answer(self, index: int) -> Any:
        if self._error is not None:
            raise self._error
        if self._answers is None:
            raise RuntimeError("ReadBatch read before run()")
        answer = self._answers[index]
        if isinstance(answer, Exception):
            raise answer
        return answer


def written(writes: shared.Writes) -> WriteBatch:
    """The batch behind the domain's ``Writes`` (made by ``services.Container.write_batch``)."""
    return cast(WriteBatch, writes)


def queued(batch: shared.ReadBatch) -> ReadBatch:
    """The batch behind the domain's ``ReadBatch``, which names only ``run``: every batch the
    rules hold was made by a store's ``batch()`` here, so it is this class (a cast, no check: it
    sits on every warm read)."""
    return cast(ReadBatch, batch)


class WriteBatch:
    """Writes of several stores (a stream batch's), sent in one pipeline per ``flush_at``
    commands (one round trip per node), in the order they were queued.

    Every write a stream consumer queues is idempotent (an add of a present member, a versioned
    change), so a chunk whose scripts a node had lost (NOSCRIPT: those calls did not run) is sent
    again from its first such call on, after SCRIPT LOAD: order is kept, and what ran twice
    changed nothing the second time. Any other error raises from ``run`` (the records fail and
    Lambda retries them).
    """

    def __init__(self, client: RedisClient, flush_at: int = 20_000) -> None:
        self._client = client
        self._flush_at = flush_at
        self._queued: list[tuple[Any, ...]] = []
        self._scripts: dict[str, Script] = {}
        self.round_trips = 0

    def add(self, *command: Any) -> None:
        self._queued.append(command)
        if len(self._queued) >= self._flush_at:
            self.run()

    def script(self, script: Script, keys: Sequence[str], args: Sequence[Any]) -> None:
        self._scripts[script.sha] = script
        self.add("EVALSHA", script.sha, len(keys), *keys, *args)

    def __len__(self) -> int:
        return len(self._queued)

    def run(self) -> None:
        pending, self._queued = self._queued, []
        for _ in range(SCRIPT_LOAD_ATTEMPTS):
            if not pending:
                return
            pipe = self._client.pipeline(transaction=False)
            for command in pending:
                pipe.execute_command(*command)
            answers = pipe.execute(raise_on_error=False)
            self.round_trips += 1
            lost = next((i for i, a in enumerate(answers) if isinstance(a, NoScriptError)), None)
            failed = [a for a in answers[:lost] if isinstance(a, Exception)]
            if failed:
                raise failed[0]
            if lost is None:
                return
            for script in self._scripts.values():
                self._client.script_load(script.script)  # on a cluster: every primary
            pending = pending[lost:]
        raise NoScriptError("a write batch kept finding its scripts gone")
