"""The Redis client: built by the composition root (``warble.services``) on first use, and
reused while the container is warm. On AWS it signs in as the cache's one IAM-enabled user
(``IamCredentials``) over TLS (``rediss://``, verified)."""

from __future__ import annotations

import math
import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import redis
from redis.cluster import RedisCluster
from redis.commands.core import Script
from redis.credentials import CredentialProvider
from redis.exceptions import NoScriptError

from warble.settings import Settings

if TYPE_CHECKING:
    from warble.domain import shared

RedisClient: TypeAlias = "redis.Redis | RedisCluster"

# Connection failures a handler turns into 503 unavailable.
UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (redis.ConnectionError, redis.TimeoutError)


class IamCredentials(CredentialProvider):
    """ElastiCache's IAM authentication: the cache user's id, and a token signed with the
    function's credentials as its password (``warble.dal.aws_auth``), made anew before it
    expires; every new connection asks for one."""

    _REUSE_SECONDS = 600  # of the token's 900

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._token = ""
        self._made = -math.inf

    def get_credentials(self) -> tuple[str, str]:
        if time.monotonic() - self._made > self._REUSE_SECONDS:
            from warble.dal.aws_auth import elasticache_token

            s = self._settings
            self._token = elasticache_token(
                s.redis_cache_name, s.redis_iam_user, s.aws_region, s.redis_serverless
            )
            self._made = time.monotonic()
        return self._settings.redis_iam_user, self._token


def connect(settings: Settings) -> RedisClient:
    options: dict[str, Any] = {
        "decode_responses": True,
        "socket_timeout": 2.0,
        "socket_connect_timeout": 2.0,
    }
    if settings.redis_iam_user:
        options["credential_provider"] = IamCredentials(settings)
    if settings.redis_ca_certs:
        options["ssl_ca_certs"] = settings.redis_ca_certs
    if settings.redis_cluster:
        return RedisCluster.from_url(settings.redis_url, **options)
    return redis.Redis.from_url(settings.redis_url, health_check_interval=30, **options)


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
    node that finds the script gone (flushed, restarted, failed over) did not run it: the reader
    then runs it once more on its own, loading it."""
    read = queued(batch).add("EVALSHA", script.sha, len(keys), *keys, *args)

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


def send_pipelined(client: redis.Redis, commands: Sequence[tuple[Any, ...]]) -> list[Any]:
    """``commands`` in one round trip on a single node, as a non-transactional redis-py pipeline
    sends them (the client's retries on a connection error, its reply parsing), without the
    pipeline's per-command bookkeeping and the pool's checks around every use, which together
    cost a warm read more than its own code (a fifth of a profile read's handler). The
    connection is this thread's own, taken from the client's pool once and kept: nothing else
    uses it, so nothing else can leave a reply unread on it, and any failure disconnects it
    (the next batch reconnects). Each answer is the command's reply or the ResponseError it
    got."""
    conn = _batch_connection(client)

    def send() -> list[Any]:
        conn.send_packed_command(conn.pack_commands(commands))
        answers: list[Any] = []
        for command in commands:
            try:
                answers.append(client.parse_response(conn, command[0]))
            except redis.ResponseError as exc:
                answers.append(exc)
        return answers

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
        self._cluster = isinstance(client, RedisCluster)
        self._commands: list[tuple[Any, ...]] = []
        self._answers: list[Any] | None = None
        self._error: Exception | None = None

    def add(self, *command: Any) -> Callable[[], Any]:
        """Queue one single-slot command; the reader returns its answer after ``run``."""
        index = len(self._commands)
        self._commands.append(command)
        return lambda: self._answer(index)

    def mget(self, names: list[str]) -> Callable[[], list[str | None]]:
        """Values of keys in any slots: one MGET on a single node, one GET per key on a
        cluster (the pipeline sends each node its keys together)."""
        if not self._cluster:
            answer = self.add("MGET", *names) if names else (lambda: [])
            return lambda: [None if v is None else str(v) for v in answer()]
        readers = [self.add("GET", name) for name in names]
        return lambda: [None if (v := read()) is None else str(v) for read in readers]

    def run(self) -> None:
        if self._answers is not None or self._error is not None:
            return
        if not self._commands:
            self._answers = []
            return
        try:
            if isinstance(self._client, RedisCluster):  # one pipeline per node, sent at once
                pipe = self._client.pipeline(transaction=False)
                for command in self._commands:
                    pipe.execute_command(*command)
                try:
                    self._answers = pipe.execute(raise_on_error=False)
                finally:
                    pipe.reset()
            else:
                self._answers = send_pipelined(self._client, self._commands)
        except UNAVAILABLE_ERRORS as exc:
            self._error = exc

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
