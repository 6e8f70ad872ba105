"""The stores benchmarks run against, set up like the tests set up theirs.

A dedicated PostgreSQL database (``warble_bench``, dropped, created and migrated with yoyo from
infra/migrations on every run), Redis index 15 (flushed), and a moto server holding the
template's tables. Settings reach Warble through the same environment variables the tests use.

Also here: loading a function's ``app.py`` the way the integration tests do, building sample
events from events/, and ``StoreTrace``, which records the store round trips a call makes (so a
benchmark can check its raw baseline still does what the path does).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ROOT / "events"
FUNCTIONS = ROOT / "functions"
SHARED = ROOT / "layers" / "shared"

# As pytest's pythonpath does for the tests: the shared layer and the repo (for infra.local).
for _path in (str(SHARED), str(ROOT)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

# Overridable so that two benchmark runs on one machine do not share stores.
BENCH_DB = os.environ.get("WARBLE_BENCH_DB", "warble_bench")
BENCH_REDIS_DB = int(os.environ.get("WARBLE_BENCH_REDIS_DB", "15"))
# Another checkout's benches on the same machine can use their own Redis.
BENCH_REDIS_PORT = int(os.environ.get("WARBLE_BENCH_REDIS_PORT", "6379"))
BENCH_REDIS_URL = f"redis://127.0.0.1:{BENCH_REDIS_PORT}/{BENCH_REDIS_DB}"

BENCH_BUDGET = 1_000_000_000

# What the code under test reads (through warble.settings). PASSWORD_HASH_ROUNDS is the
# production cost: login is measured at it (a user with a cost-4 hash is made for the test cost).
ENV = {
    "DB_SECRET_ARN": "",
    "DB_HOST": "127.0.0.1",
    "DB_PORT": "5432",
    "DB_NAME": BENCH_DB,
    "DB_USER": "postgres",
    "DB_SSLMODE": "disable",
    "REDIS_URL": BENCH_REDIS_URL,
    "REDIS_CLUSTER": "false",
    "PASSWORD_HASH_ROUNDS": "12",
    # Benchmarks repeat requests as one user from one address: budgets out of reach (they are
    # still spent, so their round trip is measured).
    "RATE_LIMIT_USER_REQUESTS": str(BENCH_BUDGET),
    "RATE_LIMIT_SIGNUP_IP_REQUESTS": str(BENCH_BUDGET),
    "RATE_LIMIT_LOGIN_IP_REQUESTS": str(BENCH_BUDGET),
    "RATE_LIMIT_AUTH_FAILURES_IP_REQUESTS": str(BENCH_BUDGET),
    "POWERTOOLS_TRACE_DISABLED": "1",
    "POWERTOOLS_SERVICE_NAME": "warble-bench",
    "POWERTOOLS_METRICS_NAMESPACE": "WarbleBench",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
}


def _env_name(logical_id: str) -> str:
    """GraphTable -> GRAPH_TABLE: the settings name of a table's logical id."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", logical_id).upper()


@dataclass
class Stack:
    env: dict[str, str]  # everything set in os.environ, for subprocesses too
    moto_url: str
    tables: dict[str, str]  # logical id -> table name
    _stop: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        while self._stop:
            self._stop.pop()()


def start() -> Stack:
    """Set the environment, prepare PostgreSQL, Redis and moto; reset Warble's cached clients."""
    os.environ.update(ENV)

    import redis

    from infra.local.database import drop_database, prepare_database
    from infra.local.moto_server import start_moto
    from infra.local.provisioning import provision
    from infra.local.template import ResolveContext, load_template

    drop_database(BENCH_DB)
    prepare_database(BENCH_DB)
    redis.Redis.from_url(BENCH_REDIS_URL).flushdb()

    template = load_template(ROOT / "template.yaml")
    context = ResolveContext(stack_name="warble-bench")
    server = start_moto(port=0)
    provision(template, server.url, context)
    tables = {
        logical_id: values["Ref"]
        for logical_id, values in context.values.items()
        if template.resources[logical_id]["Type"] == "AWS::DynamoDB::Table"
    }
    env = dict(ENV)
    env["AWS_ENDPOINT_URL"] = server.url
    env["WEBSOCKET_CALLBACK_URL"] = server.url  # moto's @connections stand-in answers
    env.update({_env_name(logical_id): name for logical_id, name in tables.items()})
    os.environ.update(env)
    reset_clients()
    stack = Stack(env=env, moto_url=server.url, tables=tables)
    stack._stop.append(server.stop)
    stack._stop.append(reset_clients)
    return stack


def shared(run: Any) -> Stack:
    """The run's stack (a ``bench.harness.Run``): started on first use, closed with the run."""

    def start_and_register() -> Stack:
        started = start()
        run.cleanups.append(started.close)
        return started

    result: Stack = run.resource("stack", start_and_register)
    return result


def raw_clients(run: Any, bench_stack: Stack) -> tuple[Any, Any]:
    """A bare Redis client (configured like the app's) and a bare DynamoDB client, for the raw
    operations a path is compared with; closed with the run."""
    import boto3
    import redis

    raw = redis.Redis.from_url(
        BENCH_REDIS_URL,
        decode_responses=True,
        socket_timeout=2.0,
        socket_connect_timeout=2.0,
        health_check_interval=30,
    )
    ddb = boto3.client("dynamodb", endpoint_url=bench_stack.moto_url, region_name="us-east-1")
    run.cleanups += [raw.close, ddb.close]
    return raw, ddb


SESSION_CHECK = "raw gate EVALSHA (session, last-seen throttle, budget)"


def session_check(
    raw: Any, issued: Any, reads: Callable[[Any], Any] | None = None
) -> Callable[[], Any]:
    """The handler skeleton's round trip before routing, raw: one pipeline of the gate's script
    (the cached session of the bearer token, its last-seen throttle and the user's request
    budget, warble.dal.account_state) and ``reads(pipe)``, the route's first reads when it
    sends them with the gate (``issued``: an IssuedSession)."""
    import time

    from warble import keys, security
    from warble.dal.account_state import _GATE

    user_id = int(issued.user["id"])
    digest = security.token_hash(issued.token).hex()
    gate_keys = [
        keys.session(digest, user_id).value,
        keys.session_seen(digest, user_id),
        keys.user_budget(user_id),
    ]
    sha = raw.script_load(_GATE)

    def check() -> Any:
        pipe = raw.pipeline(transaction=False)
        now_ms = int(time.time() * 1000)
        args = [keys.SEEN_THROTTLE_SECONDS, now_ms, BENCH_BUDGET, 300_000]
        pipe.execute_command("EVALSHA", sha, len(gate_keys), *gate_keys, *args)
        if reads is not None:
            reads(pipe)
        return pipe.execute()

    return check


def budget_spend(raw: Any, key: str) -> Callable[[], Any]:
    """One request of a budget, raw: the window counter's script (warble.dal.rate_limit) on
    the bare client, with the benchmarks' budget."""
    from warble.dal.rate_limit import _TAKE

    take = raw.register_script(_TAKE)

    def spend() -> Any:
        return take(keys=[key], args=[BENCH_BUDGET, 300_000])

    return spend


def reset_clients() -> None:
    """Forget every client and service Warble built, so the next use reads the environment."""
    from warble import services

    services.reset()


# ---- functions and events ----------------------------------------------------------------------


class Context:
    """A Lambda context with the attributes Powertools reads."""

    function_name = "bench"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench"
    memory_limit_in_mb = 1024
    aws_request_id = "c6af9ac6-7b61-11e6-9a41-93e812345678"
    log_group_name = "/aws/lambda/bench"
    log_stream_name = "stream"

    def get_remaining_time_in_millis(self) -> int:
        return 10_000


def load_function(name: str, path: Path | None = None) -> ModuleType:
    """functions/<name>/app.py (or the handler module at ``path``) as its own module (as
    tests/integration does)."""
    path = path or FUNCTIONS / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"bench_fn_{name}_{uuid.uuid4().hex}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def event(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return result


def as_session(evt: dict[str, Any], issued: Any) -> dict[str, Any]:
    """The event as API Gateway passes it with ``issued``'s token (the handler checks it)."""
    evt = copy.deepcopy(evt)
    evt.setdefault("headers", {})["authorization"] = f"Bearer {issued.token}"
    return evt


def with_path_id(evt: dict[str, Any], param: str, value: int) -> dict[str, Any]:
    """The event with ``{param}`` in its path set to ``value``."""
    evt = copy.deepcopy(evt)
    old = evt["pathParameters"][param]
    evt["pathParameters"][param] = str(value)
    evt["rawPath"] = evt["rawPath"].replace(old, str(value))
    evt["requestContext"]["http"]["path"] = evt["requestContext"]["http"]["path"].replace(
        old, str(value)
    )
    return evt


# ---- which store round trips a call makes -------------------------------------------------------


@dataclass
class StoreTrace:
    """Store round trips in order, e.g. ``redis pipeline(EXISTS SET)``, ``dynamodb GetItem``."""

    calls: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return ", ".join(self.calls) if self.calls else "(none)"


@contextmanager
def trace_stores() -> Iterator[StoreTrace]:
    """Record the Redis, PostgreSQL and DynamoDB calls made inside the block (this thread)."""
    import botocore.client
    import psycopg
    import redis
    import redis.client
    from warble.dal import redis as redis_dal

    trace = StoreTrace()
    originals: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, wrapper: Callable[[Any], Any]) -> None:
        original = owner.__dict__[name]
        originals.append((owner, name, original))
        setattr(owner, name, wrapper(original))

    def redis_command(original: Any) -> Any:
        def wrapped(self: Any, *args: Any, **options: Any) -> Any:
            trace.calls.append(f"redis {str(args[0]).upper()}")
            return original(self, *args, **options)

        return wrapped

    def redis_pipeline(original: Any) -> Any:
        def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
            names = " ".join(str(c[0][0]).upper() for c in self.command_stack)
            if names:
                trace.calls.append(f"redis pipeline({names})")
            return original(self, *args, **kwargs)

        return wrapped

    def pg_execute(original: Any) -> Any:
        def wrapped(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            text = query if isinstance(query, str) else repr(query)
            words = text.split()
            table = next(
                (
                    words[i + 1]
                    for i, w in enumerate(words[:-1])
                    if w.upper() in ("FROM", "INTO", "UPDATE")
                ),
                "",
            )
            trace.calls.append(f"postgres {words[0].upper()} {table}".rstrip())
            return original(self, query, *args, **kwargs)

        return wrapped

    def aws_call(original: Any) -> Any:
        def wrapped(self: Any, operation: str, params: Any) -> Any:
            service = self.meta.service_model.service_name
            trace.calls.append(f"{service} {operation}")
            return original(self, operation, params)

        return wrapped

    def batch_send(original: Any) -> Any:  # a ReadBatch's round trip on a single node
        def wrapped(client: Any, commands: Any) -> Any:
            names = " ".join(str(c[0]).upper() for c in commands)
            trace.calls.append(f"redis pipeline({names})")
            return original(client, commands)

        return wrapped

    patch(redis.Redis, "execute_command", redis_command)
    patch(redis.client.Pipeline, "execute", redis_pipeline)
    patch(redis_dal, "send_pipelined", batch_send)
    patch(psycopg.Cursor, "execute", pg_execute)
    patch(botocore.client.BaseClient, "_make_api_call", aws_call)
    try:
        yield trace
    finally:
        for owner, name, original in reversed(originals):
            setattr(owner, name, original)


def traced(fn: Callable[[], Any]) -> StoreTrace:
    with trace_stores() as trace:
        fn()
    return trace


def compare_traces(path: Callable[[], Any], raw: Callable[[], Any], what: str) -> list[str]:
    """A warning when ``raw`` no longer makes the store calls ``path`` makes."""
    got, expected = traced(path), traced(raw)
    if got.calls == expected.calls:
        return []
    return [
        f"{what}: the path now makes [{got}] but its raw baseline makes [{expected}]; "
        "update the baseline in bench/ so the ratio compares like with like"
    ]
