"""The capacity and cost model: per-route and per-consumer costs measured here, priced at 1M,
10M and 100M daily users.

    python -m bench.capacity               # measure, then model: docs/capacity.md's tables, chart
    python -m bench.capacity --model-only  # the model again from bench/results/capacity.json

**Measure.** On the benchmarks' stores (PostgreSQL, Redis, a moto server; ``bench.stack``) a
seeded population (``infra.local.seed``, 400 users) is served by the functions' own handlers,
called in this process with API Gateway's events: each route of the load test's mix a number
of times, warm (each viewer's second request: at scale the caches are warm), then every stream
record those requests made is fed to the consumers the template wires to its stream (with the
mapping's filter). Per call: CPU time (``time.process_time``), peak Python allocation
(tracemalloc, in a second pass), and the store operations it made: Redis commands and round
trips, PostgreSQL queries, DynamoDB calls and the read and write units they cost. moto answers
``ReturnConsumedCapacity`` with constants, so units are computed with DynamoDB's published
rules from the items' sizes: a read is 4 KB (half for an eventually consistent one, twice in a
transaction), a write 1 KB (twice in a transaction), a missing key of a batch still one read.

**Model.** ``model()`` turns them, with the traffic per daily user (the load test's mix,
``bench/load/locustfile.py``, from the seeds) and the public prices below, into what each
scale needs and costs a month; see docs/capacity.md for the reading.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
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
RESULTS = ROOT / "bench" / "results" / "capacity.json"
DOC = ROOT / "docs" / "capacity.md"
CHART = ROOT / "docs" / "capacity-cost.png"


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
    peak_kb: float = 0.0
    by_operation: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def per_call(self) -> dict[str, Any]:
        n = max(self.calls, 1)
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        out = {k: round(v / n, 3) for k, v in values.items() if isinstance(v, float)}
        out["peak_kb"] = round(self.peak_kb, 1)
        out["calls"] = self.calls
        out["by_operation"] = {k: round(v / n, 3) for k, v in sorted(self.by_operation.items())}
        return out


@contextmanager
def count_stores(ops: Ops) -> Iterator[None]:
    """Count every Redis command and round trip, PostgreSQL query and DynamoDB call (with its
    units) made in the block, in this process."""
    import botocore.client
    import psycopg
    import redis
    import redis.client

    originals: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, wrapper: Callable[[Any], Any]) -> None:
        original = owner.__dict__[name]
        originals.append((owner, name, original))
        setattr(owner, name, wrapper(original))

    def command(original: Any) -> Any:
        def wrapped(self: Any, *args: Any, **options: Any) -> Any:
            ops.redis_commands += 1
            ops.redis_round_trips += 1
            ops.by_operation[f"redis {str(args[0]).upper()}"] += 1
            return original(self, *args, **options)

        return wrapped

    def pipeline(original: Any) -> Any:
        def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
            if self.command_stack:
                ops.redis_round_trips += 1
                ops.redis_commands += len(self.command_stack)
                for entry in self.command_stack:
                    ops.by_operation[f"redis {str(entry[0][0]).upper()}"] += 1
            return original(self, *args, **kwargs)

        return wrapped

    def query(original: Any) -> Any:
        def wrapped(self: Any, statement: Any, *args: Any, **kwargs: Any) -> Any:
            ops.pg_queries += 1
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

    patch(redis.Redis, "execute_command", command)
    patch(redis.client.Pipeline, "execute", pipeline)
    patch(psycopg.Cursor, "execute", query)
    patch(botocore.client.BaseClient, "_make_api_call", api)
    try:
        yield
    finally:
        for owner, name, original in reversed(originals):
            setattr(owner, name, original)


def measured(ops: Ops, call: Callable[[], Any], memory: bool = False) -> Any:
    """Run ``call`` once, adding its CPU and store operations (and peak allocation) to ops."""
    if memory:
        tracemalloc.start()
    started = time.process_time()
    with count_stores(ops):
        result = call()
    ops.cpu_ms += (time.process_time() - started) * 1000
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


def measure_routes(handlers: Handlers, world: World, rounds: int) -> dict[str, Ops]:
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
            _answer_ok(measured(ops, partial(handler, event, _context())), route.name)
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


def measure_websocket(handlers: Handlers, world: World, rounds: int) -> Ops:
    """sendMessage over the WebSocket API: the authorizer and $connect once, then messages."""
    from infra.local.events import (
        WebSocketConnection,
        websocket_authorizer_event,
        websocket_connect_event,
        websocket_message_event,
    )
    from infra.local.lambdas import InvokeResult
    from infra.local.ws_gateway import authorizer_decision

    handler = handlers.handler("WebSocketFunction")
    ops = Ops()
    for index in range(rounds):
        conversation, sender, _ = world.conversations[index % len(world.conversations)]
        token = next(u["token"] for u in world.users if u["id"] == sender)
        connection = WebSocketConnection(
            connection_id=f"cap{uuid.uuid4().hex[:12]}=", api_id="capacity", stage="live",
            domain_name="127.0.0.1", source_ip="127.0.0.1", user_agent=None,
            connected_at_ms=int(time.time() * 1000), raw_query_string=f"token={token}",
        )  # fmt: skip
        authorize = websocket_authorizer_event(connection)
        allowed = InvokeResult(True, handler(authorize, _context()), None, 0.0, False)
        refused, connection.authorizer = authorizer_decision(allowed, authorize["methodArn"], 0)
        if refused is not None:
            raise RuntimeError(f"$connect authorizer: {refused}")
        _answer_ok(handler(websocket_connect_event(connection), _context()), "$connect")
        frame = {"action": "sendMessage", "conversation_id": str(conversation),
                 "text": f"capacity {index}", "client_id": uuid.uuid4().hex}  # fmt: skip
        event = websocket_message_event(connection, "sendMessage", json.dumps(frame))
        measured(ops, partial(handler, event, _context()))
    return ops


def measure_consumers(handlers: Handlers, stack: Any) -> dict[str, dict[str, Any]]:
    """Every stream record the measured requests made, through each consumer the template wires
    to its table (with the mapping's filter): per consumer and record kind, the cost per record."""
    import boto3

    from infra.local.event_filters import matches_filters
    from infra.local.stream_mappings import stream_mappings
    from infra.local.stream_records import to_lambda_record
    from infra.local.template import ResolveContext

    context = ResolveContext(stack_name="warble-bench")
    from infra.local.provisioning import provision

    provision(handlers.template, stack.moto_url, context)
    streams = boto3.client("dynamodbstreams", endpoint_url=stack.moto_url, region_name="us-east-1")
    records: dict[str, list[dict[str, Any]]] = {}
    for mapping in stream_mappings(handlers.template, context):
        if mapping.stream_arn in records:
            continue
        described = streams.describe_stream(StreamArn=mapping.stream_arn)["StreamDescription"]
        found: list[dict[str, Any]] = []
        for shard in described["Shards"]:
            iterator = streams.get_shard_iterator(
                StreamArn=mapping.stream_arn, ShardId=shard["ShardId"],
                ShardIteratorType="TRIM_HORIZON",
            )["ShardIterator"]  # fmt: skip
            while iterator:
                page = streams.get_records(ShardIterator=iterator, Limit=1000)
                found += [to_lambda_record(r, mapping.stream_arn) for r in page["Records"]]
                if not page["Records"]:
                    break
                iterator = page.get("NextShardIterator")
        records[mapping.stream_arn] = found

    out: dict[str, dict[str, Any]] = {}
    for mapping in stream_mappings(handlers.template, context):
        mine = [r for r in records[mapping.stream_arn]
                if not mapping.filters or matches_filters(r, mapping.filters)]  # fmt: skip
        by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in mine:
            by_kind[_kind(record)].append(record)
        handler = handlers.handler(mapping.function_name)
        for kind, group in by_kind.items():
            ops = Ops()
            for start in range(0, len(group), mapping.batch_size):
                batch = {"Records": group[start : start + mapping.batch_size]}
                measured(ops, partial(handler, batch, _context()))
            per_record = ops.per_call()
            per_record.update({k: round(v * ops.calls / len(group), 4)
                               for k, v in per_record.items() if isinstance(v, float)})  # fmt: skip
            per_record["records"] = len(group)
            per_record["batch_size"] = mapping.batch_size
            out[f"{mapping.function_name} <- {kind}"] = per_record
    return out


def _kind(record: dict[str, Any]) -> str:
    keys = record["dynamodb"]["Keys"]
    table = record["eventSourceARN"].split("/")[1].rsplit("-", 1)[-1]
    sk = next(iter(keys.get("sk", {}).values()), "") if "sk" in keys else ""
    prefix = sk.split("#", 1)[0] + "#" if "#" in sk else ("tweet" if table == "tweets" else sk)
    return f"{table} {record['eventName']} {prefix}"


# --------------------------------------------------------------------------------------------
# Redis memory per key family (the encodings Warble's keys use, at the sizes scale gives them)
# --------------------------------------------------------------------------------------------


def measure_redis_memory(client: Any) -> dict[str, float]:
    """Bytes per entry of the big per-user keys, measured with MEMORY USAGE on keys built with
    Warble's member formats at their scale sizes (a full 800-entry timeline, a 200-field
    following hash, 600 recent likes), and bytes per cached profile/session/counts value."""
    import random

    rng = random.Random(3)
    prefix = f"capacity:{uuid.uuid4().hex[:6]}"
    sizes: dict[str, float] = {}
    timeline = {f"{rng.getrandbits(62):019d}:{rng.getrandbits(62)}": 0 for _ in range(800)}
    client.zadd(f"{prefix}:home", timeline)
    sizes["timeline_entry"] = client.memory_usage(f"{prefix}:home", samples=0) / 800
    following = {str(rng.getrandbits(62)): str(rng.getrandbits(62)) for _ in range(200)}
    client.hset(f"{prefix}:following", mapping=following)
    sizes["following_field"] = client.memory_usage(f"{prefix}:following", samples=0) / 200
    liked = {str(rng.getrandbits(62)): str(rng.getrandbits(62)) for _ in range(600)}
    client.hset(f"{prefix}:liked", mapping=liked)
    sizes["liked_field"] = client.memory_usage(f"{prefix}:liked", samples=0) / 600
    profile = json.dumps({"id": str(rng.getrandbits(62)), "username": "someone_12345",
                          "display_name": "Someone Name", "bio": "x" * 80,
                          "created_at": "2026-11-25T12:00:00.000Z"})  # fmt: skip
    client.set(f"{prefix}:profile", profile)
    sizes["profile"] = client.memory_usage(f"{prefix}:profile", samples=0)
    client.delete(f"{prefix}:home", f"{prefix}:following", f"{prefix}:liked", f"{prefix}:profile")
    return {k: round(v, 1) for k, v in sizes.items()}


def measure(rounds: int, users: int) -> dict[str, Any]:
    os.environ.setdefault("WARBLE_BENCH_DB", "warble_capacity")
    from bench import stack as bench_stack  # puts the shared layer on sys.path

    started = time.time()
    stack = bench_stack.start()
    try:
        world = seed_world(stack, users)
        handlers = Handlers()
        routes = measure_routes(handlers, world, rounds)
        routes["WS sendMessage"] = measure_websocket(handlers, world, rounds)
        consumers = measure_consumers(handlers, stack)
        memory = measure_redis_memory(_container().redis)
        authors_followers = statistics.mean(world.followers_of.get(u["id"], 0) for u in world.users)
        functions = {name: handlers.routes[(r.method, r.path)] for r in ROUTES for name in [r.name]}
        functions["WS sendMessage"] = "WebSocketFunction"
        return {
            "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
            "machine": "shared 2-core VM (load from 4 other agents), Python "
            + ".".join(map(str, sys.version_info[:3])),
            "users": users,
            "rounds": rounds,
            "mean_followers_measured": round(authors_followers, 1),
            "routes": {name: ops.per_call() for name, ops in routes.items()},
            "route_functions": functions,
            "memory_mb": {f: handlers.memory_mb(f) for f in set(functions.values())}
            | {c.split(" <- ")[0]: handlers.memory_mb(c.split(" <- ")[0]) for c in consumers},
            "consumers": consumers,
            "redis_bytes": memory,
        }
    finally:
        stack.close()


# --------------------------------------------------------------------------------------------
# The report: docs/capacity.md's generated section and the chart
# --------------------------------------------------------------------------------------------

START, END = "<!-- capacity:model:start -->", "<!-- capacity:model:end -->"


def _peak(kb: float) -> str:
    return f"{kb:.0f}" if kb else "n/a"


def _money(value: float) -> str:
    return f"${value:,.0f}"


def _si(value: float) -> str:
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{value / size:,.1f}{unit}"
    return f"{value:,.1f}"


def report(m: dict[str, Any]) -> str:
    from bench import capacity_model as cm

    lines = [
        f"Measured {m['measured_at']} on a {m['machine']}; {m['users']} seeded users, "
        f"{m['rounds']} calls per route (reads warm). Regenerate: `python -m bench.capacity`.",
        "",
        "#### Per route, per call (measured)",
        "",
        "| route | function (MB) | CPU ms | peak alloc KB | Redis cmds / round trips | DynamoDB calls | RCU | WCU | PG queries |",  # noqa: E501
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for route, c in m["routes"].items():
        fn = m["route_functions"][route]
        lines.append(
            f"| {route} | {fn} ({m['memory_mb'][fn]}) | {c['cpu_ms']:.2f}"
            f" | {_peak(c['peak_kb'])}"
            f" | {c['redis_commands']:.1f} / {c['redis_round_trips']:.1f}"
            f" | {c['dynamodb_calls']:.2f} | {c['rcu']:.2f} | {c['wcu']:.2f} | {c['pg_queries']:.2f} |"  # noqa: E501
        )
    lines += [
        "",
        "#### Per stream record, per consumer (measured; records of the requests above)",
        "",
        "| consumer <- record | records | batch | CPU ms | Redis cmds | DynamoDB calls | RCU | WCU |",  # noqa: E501
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, c in sorted(m["consumers"].items()):
        lines.append(
            f"| {name} | {c['records']} | {c['batch_size']} | {c['cpu_ms']:.2f}"
            f" | {c['redis_commands']:.2f} | {c['dynamodb_calls']:.2f} | {c['rcu']:.2f}"
            f" | {c['wcu']:.2f} |"
        )
    b = m["redis_bytes"]
    lines += [
        "",
        f"Redis bytes (MEMORY USAGE): {b['timeline_entry']:.0f} per timeline entry (800-entry"
        f" timeline), {b['following_field']:.0f} per following-hash field,"
        f" {b['liked_field']:.0f} per recent-like field, {b['profile']:.0f} per cached profile."
        f" The measured tweets' authors had {m['mean_followers_measured']} followers on average;"
        f" the model fans out to {cm.FOLLOWERS_PER_TWEET}.",
        "",
        "#### What each scale needs",
        "",
        "| | " + " | ".join(f"{d / 1e6:,.0f}M DAU" for d in cm.SCALES) + " |",
        "|---|" + "---:|" * len(cm.SCALES),
    ]
    all_needs = [cm.needs(m, d) for d in cm.SCALES]
    rows = [
        ("requests a month (HTTP + WebSocket)", lambda n: _si(n.requests_month)),
        ("peak requests/s", lambda n: _si(n.peak_rps)),
        ("Lambda invocations a month", lambda n: _si(n.lambda_invocations)),
        ("Lambda GB-seconds a month", lambda n: _si(n.lambda_gb_s)),
        ("Lambda peak concurrency", lambda n: f"{n.peak_concurrency:,.0f}"),
        ("DynamoDB read units a month", lambda n: _si(n.rru_month)),
        ("DynamoDB write units a month", lambda n: _si(n.wru_month)),
        (f"DynamoDB storage ({cm.RETENTION_MONTHS} months of history), GB",
         lambda n: f"{n.storage_gb:,.0f}"),
        ("Redis commands/s at peak", lambda n: _si(n.redis_peak_ops)),
        ("Redis memory (timelines, sets, caches), GB", lambda n: f"{n.redis_gb:,.0f}"),
        ("ElastiCache shards (r7g.4xlarge, 1 replica each)", lambda n: f"{n.redis_shards}"),
        ("PostgreSQL queries/s at peak", lambda n: f"{n.pg_peak_qps:,.0f}"),
        ("Aurora Serverless v2 ACU (writer + reader)", lambda n: f"{n.aurora_acu:,.1f} x 2"),
        ("WebSocket messages a month", lambda n: _si(n.ws_messages_month)),
    ]  # fmt: skip
    for label, fmt in rows:
        lines.append(f"| {label} | " + " | ".join(fmt(n) for n in all_needs) + " |")
    costs = [cm.cost(n) for n in all_needs]
    clones = [cm.clone_cost(d) for d in cm.SCALES]
    lines += ["", "#### Monthly cost (us-east-1, on-demand prices listed in 2025)", "",
              "| item | " + " | ".join(f"{d / 1e6:,.0f}M DAU" for d in cm.SCALES) + " |",
              "|---|" + "---:|" * len(cm.SCALES)]  # fmt: skip
    for item in costs[0]:
        lines.append(f"| {item} | " + " | ".join(_money(c[item]) for c in costs) + " |")
    lines.append(
        "| **Warble total** | " + " | ".join(f"**{_money(sum(c.values()))}**" for c in costs) + " |"
    )
    lines.append(
        "| per daily user a month | "
        + " | ".join(f"${sum(c.values()) / d:,.4f}" for c, d in zip(costs, cm.SCALES, strict=True))
        + " |"
    )
    lines += ["", "#### The same traffic on appsyncmasterclass-backend's design", "",
              "| item | " + " | ".join(f"{d / 1e6:,.0f}M DAU" for d in cm.SCALES) + " |",
              "|---|" + "---:|" * len(cm.SCALES)]  # fmt: skip
    for item in clones[0]:
        lines.append(f"| {item} | " + " | ".join(_money(c[item]) for c in clones) + " |")
    lines.append(
        "| **clone total** | " + " | ".join(f"**{_money(sum(c.values()))}**" for c in clones) + " |"
    )
    top = sorted(costs[-1].items(), key=lambda kv: -kv[1])[:3]
    lines += ["", "Largest items at 100M DAU: "
              + ", ".join(f"{k} ({_money(v)})" for k, v in top) + ".", "",
              "#### Where it stops scaling (at 100M DAU, peak)", "",
              "| hot spot | load | limit | then |", "|---|---:|---:|---|"]  # fmt: skip
    for what, load, limit, then in cm.hot_spots(cm.SCALES[-1]):
        if "concurrency" in what:
            load = all_needs[-1].peak_concurrency
        lines.append(f"| {what} | {_si(load)} | {_si(limit)} | {then} |")
    chart(costs, clones)
    return "\n".join(lines)


def chart(costs: list[dict[str, float]], clones: list[dict[str, float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bench import capacity_model as cm

    scales = [d / 1e6 for d in cm.SCALES]
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    ax.plot(scales, [sum(c.values()) for c in costs], "o-", label="Warble (total)", linewidth=2)
    ax.plot(scales, [sum(c.values()) for c in clones], "s--",
            label="appsyncmasterclass design, same traffic")  # fmt: skip
    for item in sorted(costs[-1], key=lambda k: -costs[-1][k])[:4]:
        ax.plot(scales, [c[item] for c in costs], ":", label=f"Warble: {item}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("daily active users (millions)")
    ax.set_ylabel("US$ a month (on-demand, us-east-1)")
    ax.set_title("Monthly AWS cost against daily users")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(CHART)
    plt.close(fig)


def write_doc(section: str) -> None:
    text = DOC.read_text() if DOC.exists() else f"{START}\n{END}\n"
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{START}\n{section}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.capacity", description=__doc__)
    parser.add_argument("--model-only", action="store_true", help="reuse the last measurement")
    parser.add_argument("--rounds", type=int, default=20, help="measured calls per route")
    parser.add_argument("--users", type=int, default=400, help="the measured population")
    args = parser.parse_args(argv)
    if args.model_only:
        m = json.loads(RESULTS.read_text())
    else:
        m = measure(args.rounds, args.users)
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(m, indent=2))
    section = report(m)
    write_doc(section)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
