"""What the capacity benchmarks measure with (``bench.capacity``, ``bench.celebrities``): the
store operations a call makes, counted (Redis commands and round trips, PostgreSQL queries,
DynamoDB calls and their units), the routes of the load test's mix called through the
functions' own handlers, and the seeded world they read."""

from __future__ import annotations

import io
import json
import math
import time
import tracemalloc
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------------------------
# Counting store operations
# --------------------------------------------------------------------------------------------


def _value_size(value: dict[str, Any]) -> int:
    ((kind, raw),) = value.items()
    if kind == "S":
        return len(str(raw).encode())
    if kind == "N":
        return (len(str(raw).lstrip("-").replace(".", "")) + 1) // 2 + 1
    if kind == "B":
        return len(raw) if isinstance(raw, bytes | bytearray) else len(str(raw)) * 3 // 4
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "L":
        return 3 + sum(_value_size(v) + 1 for v in raw)
    if kind == "M":
        return 3 + sum(len(k) + _value_size(v) + 1 for k, v in raw.items())
    return sum(len(str(v)) for v in raw)  # SS, NS, BS


def item_size(item: dict[str, Any] | None) -> int:
    """DynamoDB's size of an item: attribute names plus values (its published rules)."""
    if not item:
        return 0
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def _reads(size: int, consistent: bool, factor: float = 1.0) -> float:
    units = max(1, math.ceil(size / 4096))
    return units * (1.0 if consistent else 0.5) * factor


def _writes(size: int, factor: float = 1.0) -> float:
    return max(1, math.ceil(size / 1024)) * factor


def capacity_units(op: str, params: dict[str, Any], result: dict[str, Any]) -> tuple[float, float]:
    """(read units, write units) of one DynamoDB call."""
    consistent = bool(params.get("ConsistentRead"))
    if op == "GetItem":
        return _reads(item_size(result.get("Item")), consistent), 0.0
    if op == "BatchGetItem":
        rcu = 0.0
        found = result.get("Responses") or {}
        for table, request in (params.get("RequestItems") or {}).items():
            strong = bool(request.get("ConsistentRead"))
            items = found.get(table) or []
            rcu += sum(_reads(item_size(i), strong) for i in items)
            rcu += _reads(0, strong) * max(0, len(request.get("Keys") or []) - len(items))
        return rcu, 0.0
    if op in ("Query", "Scan"):
        size = sum(item_size(i) for i in result.get("Items") or [])
        return _reads(size, consistent), 0.0
    if op == "PutItem":
        return 0.0, _writes(item_size(params.get("Item")))
    if op in ("UpdateItem", "DeleteItem"):
        return 0.0, 1.0  # Warble's updated and deleted items are all under 1 KB
    if op == "BatchWriteItem":
        wcu = 0.0
        for requests in (params.get("RequestItems") or {}).values():
            for request in requests:
                put = request.get("PutRequest")
                wcu += _writes(item_size(put["Item"])) if put else 1.0
        return 0.0, wcu
    if op == "TransactWriteItems":
        wcu = 0.0
        for action in params.get("TransactItems") or []:
            put = action.get("Put")
            wcu += _writes(item_size(put["Item"]), 2.0) if put else 2.0
        return 0.0, wcu
    if op == "TransactGetItems":
        return 2.0 * len(params.get("TransactItems") or []), 0.0
    return 0.0, 0.0


@dataclass
class Ops:
    """Store operations (and CPU) of one or more calls."""

    calls: int = 0
    cpu_ms: float = 0.0
    redis_commands: float = 0.0
    redis_round_trips: float = 0.0
    pg_queries: float = 0.0
    dynamodb_calls: float = 0.0
    rcu: float = 0.0
    wcu: float = 0.0
    pg_writes: float = 0.0
    ws_posts: float = 0.0
    push_bytes: float = 0.0
    log_bytes: float = 0.0
    response_bytes: float = 0.0
    redis_server_us: float = 0.0
    redis_net_bytes: float = 0.0
    peak_kb: float = 0.0
    by_operation: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    # The Redis server's calls and microseconds per command (INFO commandstats).
    redis_server: dict[str, list[float]] = field(default_factory=dict)
    # Commands per key, when asked for (bench.celebrities: which keys a request touches).
    by_key: dict[str, float] | None = None

    def per_call(self) -> dict[str, Any]:
        n = max(self.calls, 1)
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        out = {k: round(v / n, 3) for k, v in values.items() if isinstance(v, float)}
        out["peak_kb"] = round(self.peak_kb, 1)
        # The same call on a cluster (ElastiCache Serverless): each MGET a GET per key.
        spread = self.by_operation.get("redis MGET keys", 0.0) - self.by_operation.get(
            "redis MGET", 0.0
        )
        out["cluster_commands"] = round((self.redis_commands + spread) / n, 3)
        out["calls"] = self.calls
        out["by_operation"] = {k: round(v / n, 3) for k, v in sorted(self.by_operation.items())}
        out["redis_server"] = {
            k: [round(calls / n, 3), round(usec / n, 2)]
            for k, (calls, usec) in sorted(self.redis_server.items())
        }
        if self.by_key is not None:
            out["by_key"] = {k: round(v / n, 3) for k, v in sorted(self.by_key.items())}
        return out


_MULTI_KEY = {"MGET", "DEL", "EXISTS", "UNLINK", "TOUCH", "WATCH"}
_NO_KEY = {"SCRIPT", "INFO", "PING", "CLIENT", "CONFIG", "SELECT", "FLUSHDB", "MULTI", "EXEC"}


def command_keys(args: tuple[Any, ...] | list[Any]) -> list[str]:
    """The keys a Redis command names (EVALSHA's KEYS, MGET's names, else its first argument)."""
    name = str(args[0]).upper()
    if name in _NO_KEY or len(args) < 2:
        return []
    if name in ("EVALSHA", "EVAL", "FCALL", "FCALL_RO", "EVALSHA_RO", "EVAL_RO"):
        count = int(args[2])
        return [str(k) for k in args[3 : 3 + count]]
    if name in _MULTI_KEY:
        return [str(k) for k in args[1:]]
    if name == "MSET":
        return [str(k) for k in args[1::2]]
    return [str(args[1])]


def _is_write(statement: Any) -> bool:
    text = statement if isinstance(statement, str) else getattr(statement, "_obj", "")
    head = str(text).lstrip().split(None, 1)[:1]
    return bool(head) and head[0].upper() in ("INSERT", "UPDATE", "DELETE")


@contextmanager
def count_stores(ops: Ops) -> Iterator[None]:
    """Count every Redis command and round trip (by key too when ``ops.by_key`` is a dict),
    PostgreSQL query (and which of them write), DynamoDB call (with its units) and WebSocket
    push (with its request's bytes) made in the block, in this process."""
    import botocore.client
    import psycopg
    import redis
    import redis.client
    from warble.dal import redis as warble_redis
    from warble.dal import websocket as warble_websocket

    originals: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, wrapper: Callable[[Any], Any]) -> None:
        original = owner.__dict__[name]
        originals.append((owner, name, original))
        setattr(owner, name, wrapper(original))

    def seen(args: tuple[Any, ...] | list[Any]) -> None:
        ops.redis_commands += 1
        name = str(args[0]).upper()
        ops.by_operation[f"redis {name}"] += 1
        if name == "MGET":  # on a cluster (ElastiCache Serverless): one GET per key
            ops.by_operation["redis MGET keys"] += len(args) - 1
        if ops.by_key is not None:
            for key in command_keys(args):
                ops.by_key[key] = ops.by_key.get(key, 0.0) + 1

    def command(original: Any) -> Any:
        def wrapped(self: Any, *args: Any, **options: Any) -> Any:
            ops.redis_round_trips += 1
            seen(args)
            return original(self, *args, **options)

        return wrapped

    def pipeline(original: Any) -> Any:
        def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
            if self.command_stack:
                ops.redis_round_trips += 1
                for entry in self.command_stack:
                    seen(entry[0])
            return original(self, *args, **kwargs)

        return wrapped

    def batch(original: Any) -> Any:
        # warble.dal.redis.send_pipelined: the warm path's batches, below redis-py's pipeline.
        def wrapped(client: Any, commands: Any) -> Any:
            ops.redis_round_trips += 1
            for entry in commands:
                seen(entry)
            return original(client, commands)

        return wrapped

    def query(original: Any) -> Any:
        def wrapped(self: Any, statement: Any, *args: Any, **kwargs: Any) -> Any:
            ops.pg_queries += 1
            ops.pg_writes += 1 if _is_write(statement) else 0
            return original(self, statement, *args, **kwargs)

        return wrapped

    def api(original: Any) -> Any:
        def wrapped(self: Any, operation: str, params: Any) -> Any:
            result = original(self, operation, params)
            if self.meta.service_model.service_name == "dynamodb":
                rcu, wcu = capacity_units(operation, params, result)
                ops.dynamodb_calls += 1
                ops.rcu += rcu
                ops.wcu += wcu
                ops.by_operation[f"dynamodb {operation}"] += 1
            return result

        return wrapped

    def signed(original: Any) -> Any:
        # Every @connections POST (or DELETE) is signed once per attempt: its size is what the
        # NAT carries.
        def wrapped(self: Any, url: str, data: bytes, method: str = "POST") -> Any:
            request = original(self, url, data, method)
            ops.ws_posts += 1
            ops.push_bytes += (
                len(data)
                + len(url)
                + sum(len(k) + len(str(v)) + 4 for k, v in request.headers.items())
            )
            return request

        return wrapped

    patch(redis.Redis, "execute_command", command)
    patch(redis.client.Pipeline, "execute", pipeline)
    patch(warble_redis, "send_pipelined", batch)
    patch(psycopg.Cursor, "execute", query)
    patch(botocore.client.BaseClient, "_make_api_call", api)
    patch(warble_websocket.WebSocketSender, "signed", signed)
    try:
        yield
    finally:
        for owner, name, original in reversed(originals):
            setattr(owner, name, original)


class CountingStream(io.TextIOBase):
    """Stands in for stdout while measuring: counts what the functions log (Powertools' JSON
    lines and EMF metrics), as CloudWatch Logs would ingest it, and keeps none of it."""

    def __init__(self) -> None:
        self.bytes = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.bytes += len(text.encode())
        return len(text)


STDOUT = CountingStream()


class RedisMeter:
    """The Redis server's own counters around a call (INFO commandstats and the bytes in and
    out), less what reading them costs: the model prices ECPUs from them."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._client.set("capacity:ref", "x" * 300)
        before = self._stats()
        for _ in range(2000):
            self._client.get("capacity:ref")
        after = self._stats()
        # a fresh server has no GET line before its first GET
        was_calls, was_usec = before[0].get("get", (0, 0.0))
        calls = after[0]["get"][0] - was_calls
        self.get_usec = max(0.05, (after[0]["get"][1] - was_usec) / max(calls, 1))
        empties = sorted(self._delta(self._stats(), self._stats()) for _ in range(5))
        self._self_cost = empties[2]

    def _stats(self) -> tuple[dict[str, tuple[int, float]], int]:
        commands = {
            name.removeprefix("cmdstat_"): (int(v["calls"]), float(v["usec"]))
            for name, v in self._client.info("commandstats").items()
        }
        net = self._client.info("stats")
        return commands, int(net["total_net_input_bytes"]) + int(net["total_net_output_bytes"])

    @staticmethod
    def _delta(a: Any, b: Any) -> tuple[float, float, dict[str, tuple[int, float]]]:
        by: dict[str, tuple[int, float]] = {}
        for name, (calls, usec) in b[0].items():
            was = a[0].get(name, (0, 0.0))
            if name != "info" and calls > was[0]:
                by[name] = (calls - was[0], usec - was[1])
        return sum(u for _, u in by.values()), float(b[1] - a[1]), by

    def start(self) -> Any:
        return self._stats()

    def add(self, ops: Ops, started: Any) -> None:
        usec, net, by = self._delta(started, self._stats())
        ops.redis_server_us += usec
        ops.redis_net_bytes += max(0.0, net - self._self_cost[1])
        for name, (calls, spent) in by.items():
            total = ops.redis_server.setdefault(name, [0.0, 0.0])
            total[0] += calls
            total[1] += spent


def response_size(answer: Any) -> int:
    """Bytes an answer sends to the client: its body and headers, plus API Gateway's own
    (status line, date, content-length, apigw-requestid: ~150 bytes)."""
    if not isinstance(answer, dict) or "statusCode" not in answer:
        return 0
    body = answer.get("body") or ""
    headers = answer.get("headers") or {}
    return 150 + len(str(body).encode()) + sum(len(k) + len(str(v)) + 4 for k, v in headers.items())


def measured(
    ops: Ops, call: Callable[[], Any], memory: bool = False, meter: RedisMeter | None = None
) -> Any:
    """Run ``call`` once, adding its CPU, store operations, log and response bytes (and peak
    allocation, and the Redis server's side when a meter is given) to ops."""
    if memory:
        tracemalloc.start()
    logged = STDOUT.bytes
    server = meter.start() if meter is not None else None
    started = time.process_time()
    with count_stores(ops):
        result = call()
    ops.cpu_ms += (time.process_time() - started) * 1000
    if meter is not None:
        meter.add(ops, server)
    ops.log_bytes += STDOUT.bytes - logged
    ops.response_bytes += response_size(result)
    ops.calls += 1
    if memory:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        ops.peak_kb = max(ops.peak_kb, peak / 1024)
    return result


# --------------------------------------------------------------------------------------------
# Driving the handlers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    name: str  # as in the load test's table
    method: str
    path: str  # the template's path, with {params}
    mix: str  # the key of the per-DAU rate (TRAFFIC)


ROUTES = (
    Route("GET /v1/users/{id}", "GET", "/v1/users/{user_id}", "profile"),
    Route("GET /v1/timeline/home", "GET", "/v1/timeline/home", "home"),
    Route("GET /v1/notifications/unread-counts", "GET", "/v1/notifications/unread-counts",
          "unread"),
    Route("GET /v1/notifications", "GET", "/v1/notifications", "notifications"),
    Route("GET /v1/tweets/{id}", "GET", "/v1/tweets/{tweet_id}", "tweet"),
    Route("POST /v1/tweets", "POST", "/v1/tweets", "post"),
    Route("PUT /v1/tweets/{id}/like", "PUT", "/v1/tweets/{tweet_id}/like", "like"),
    Route("PUT /v1/users/me/following/{id}", "PUT", "/v1/users/me/following/{user_id}", "follow"),
    Route("GET /v1/discover", "GET", "/v1/discover", "discover"),
    Route("POST /v1/auth/login", "POST", "/v1/auth/login", "login"),
)  # fmt: skip


class Handlers:
    """Each function's handler loaded once, and the function serving each route."""

    def __init__(self) -> None:
        from bench.stack import load_function
        from infra.local.template import load_template

        self.template = load_template(ROOT / "template.yaml")
        self._modules: dict[str, Any] = {}
        self._load = load_function
        self.routes: dict[tuple[str, str], str] = {}
        for name, spec in self.template.functions.items():
            for event in spec.events.values():
                props = event.get("Properties") or {}
                if event.get("Type") == "HttpApi":
                    self.routes[(str(props.get("Method")).upper(), str(props.get("Path")))] = name

    def memory_mb(self, function: str) -> int:
        return int(self.template.functions[function].memory)

    def handler(self, function: str) -> Callable[[dict[str, Any], Any], Any]:
        if function not in self._modules:
            spec = self.template.functions[function]
            module_name, _, attribute = spec.handler.rpartition(".")
            module = self._load(function, Path(spec.code_uri) / f"{module_name}.py")
            self._modules[function] = getattr(module, attribute)
        return self._modules[function]  # type: ignore[no-any-return]


def http_event(route: Route, params: dict[str, str], token: str | None, body: Any = None,
               query: str = "") -> dict[str, Any]:  # fmt: skip
    from infra.local.events import HttpRequest, http_api_event

    path = route.path
    for key, value in params.items():
        path = path.replace("{" + key + "}", value)
    headers = [("content-type", "application/json")]
    if token:
        headers.append(("authorization", f"Bearer {token}"))
    if route.method == "POST" and token:
        headers.append(("idempotency-key", uuid.uuid4().hex))
    request = HttpRequest(route.method, path, query, headers,
                          json.dumps(body).encode() if body is not None else b"")  # fmt: skip
    return http_api_event(request, route_key=f"{route.method} {route.path}", api_id="capacity",
                          path_parameters=params or None)  # fmt: skip


@dataclass
class World:
    users: list[dict[str, Any]]  # {"id", "username", "token"}
    tweets: list[int]
    located: list[int]
    conversations: list[tuple[int, int, int]]
    followers_of: dict[int, int]


def seed_world(stack: Any, users: int) -> World:
    """A population of ``users`` on the benchmark stores, and a session for each of them."""
    from warble import services

    from infra.local.seed import ImportWriter, Progress, Sizes, plan_population, write_population

    container = services.container()
    sizes = Sizes(users=users, follows=users * 15, tweets=users * 8, likes=users * 10,
                  conversations=max(5, users // 40))  # fmt: skip
    s = container.settings
    plan = plan_population(sizes, s.follow_limit, 11, s.celebrity_followers)
    writer = ImportWriter(stack.moto_url, "us-east-1")
    try:
        written = write_population(plan, container, writer, Progress(False))
    finally:
        writer.close()
    people = []
    for uid, name in zip(written.user_ids, written.usernames, strict=True):
        issued = container.accounts.login(name, "password1", "capacity")
        people.append({"id": uid, "username": name, "token": issued.token})
    followers: dict[int, int] = defaultdict(int)
    for _, b in plan.follows:
        followers[written.user_ids[b]] += 1
    conversations = [
        (cid, written.user_ids[a], written.user_ids[b])
        for cid, (a, b, _) in zip(written.conversation_ids, plan.conversations, strict=True)
    ]
    located = [written.user_ids[u] for u, _, _ in plan.located]
    return World(people, written.tweet_ids, located, conversations, dict(followers))


def _answer_ok(answer: Any, route: str) -> None:
    status = int(answer.get("statusCode", 0)) if isinstance(answer, dict) else 0
    if status >= 500 or status == 0:
        raise RuntimeError(f"{route}: {answer}")


WRITES = ("post", "like", "follow", "login")


def _route_event(route: Route, world: World, viewer: dict[str, Any], rng: Any) -> dict[str, Any]:
    params: dict[str, str] = {}
    body: Any = None
    query = ""
    token: str | None = viewer["token"]
    if "{user_id}" in route.path:
        params["user_id"] = str(rng.choice(world.users)["id"])
    if "{tweet_id}" in route.path:
        params["tweet_id"] = str(rng.choice(world.tweets))
    if route.mix == "post":
        body = {"text": f"capacity {uuid.uuid4().hex[:8]} hello"}
    elif route.mix in ("home", "notifications"):
        query = "limit=20"
    elif route.mix == "discover":
        query = "radius_km=50&limit=20"
    elif route.mix == "login":
        token = None
        body = {"login": viewer["username"], "password": "password1"}
    return http_event(route, params, token, body, query)


def measure_routes(
    handlers: Handlers, world: World, rounds: int, meter: RedisMeter | None = None
) -> dict[str, Ops]:
    """Each route ``rounds`` times; a read is measured warm (the viewer's second request: at
    scale the caches are warm), a write as it comes. The last call is measured again under
    tracemalloc for its peak allocation."""
    import random

    rng = random.Random(5)
    located = {u["id"] for u in world.users if u["id"] in set(world.located)}
    results: dict[str, Ops] = {}
    for route in ROUTES:
        handler = handlers.handler(handlers.routes[(route.method, route.path)])
        pool = (
            [u for u in world.users if u["id"] in located]
            if route.mix == "discover"
            else world.users
        )
        ops = Ops()
        for viewer in rng.sample(pool, min(rounds, len(pool))):
            event = _route_event(route, world, viewer, rng)
            # Warm: the same read once before (its caches), or for a write the viewer's session
            # (its once-a-minute last_seen_at touch is modelled apart, per active minute).
            warm = event if route.mix not in WRITES else _route_event(ROUTES[0], world, viewer, rng)
            if route.mix != "login":
                _answer_ok(warm_handler(warm, handlers), route.name)
            _answer_ok(measured(ops, partial(handler, event, _context()), meter=meter), route.name)
        viewer = rng.choice(pool)
        event = _route_event(route, world, viewer, rng)
        if route.mix not in WRITES:
            warm_handler(event, handlers)
        peak = Ops()
        measured(peak, partial(handler, event, _context()), memory=True)
        ops.peak_kb = peak.peak_kb
        results[route.name] = ops
    return results


def warm_handler(event: dict[str, Any], handlers: Handlers) -> Any:
    """Serve ``event`` unmeasured (a copy: handlers may change what they are given)."""
    route = event["routeKey"].split(" ", 1)
    function = handlers.routes[(route[0], route[1])]
    return handlers.handler(function)(json.loads(json.dumps(event)), _context())


def _container() -> Any:
    from warble import services  # after bench.stack has put the shared layer on sys.path

    return services.container()


def _context() -> Any:
    from bench.stack import Context

    return Context()
