"""The capacity and cost model: per-route and per-consumer costs measured here, priced at 1M,
10M and 100M daily users.

    python -m bench.capacity               # measure, then model: docs/capacity.md's tables, chart
    python -m bench.capacity --model-only  # the model again from docs/capacity-measurements.json
    python -m bench.capacity --model-only --with-results  # ... with the other benches' new results

**Committed.** The measurements the document is generated from are committed beside it
(``docs/capacity-measurements.json``: this per-call run, the celebrity sweep, the Redis
throughput and the load test's counts, each as its bench wrote it), so ``--model-only``
regenerates the document byte for byte on any machine (tests/unit/test_capacity_doc.py checks
it). A measuring run replaces the per-call part, and takes each other part from
``bench/results/`` when its bench has written one there.

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
import logging
import os
import statistics
import sys
import time
import uuid
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any

from bench.measuring import (
    ROUTES,
    STDOUT,
    Handlers,
    Ops,
    RedisMeter,
    World,
    _answer_ok,
    _container,
    _context,
    measure_routes,
    measured,
    seed_world,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "capacity.json"
MEASUREMENTS = ROOT / "docs" / "capacity-measurements.json"
DOC = ROOT / "docs" / "capacity.md"
CHART = ROOT / "docs" / "capacity-cost.png"


def measure_websocket(
    handlers: Handlers, world: World, rounds: int, meter: RedisMeter | None = None
) -> dict[str, Ops]:
    """sendMessage and ping over the WebSocket API: the authorizer and $connect once per round,
    then each frame."""
    from infra.local.events import (
        WebSocketConnection,
        websocket_authorizer_event,
        websocket_connect_event,
        websocket_message_event,
    )
    from infra.local.lambdas import InvokeResult
    from infra.local.ws_gateway import authorizer_decision

    handler = handlers.handler("WebSocketFunction")
    send, ping = Ops(), Ops()
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
        measured(send, partial(handler, event, _context()), meter=meter)
        event = websocket_message_event(connection, "ping", json.dumps({"action": "ping"}))
        measured(ping, partial(handler, event, _context()), meter=meter)
    return {"WS sendMessage": send, "WS ping": ping}


def measure_consumers(
    handlers: Handlers, stack: Any, meter: RedisMeter | None = None
) -> dict[str, dict[str, Any]]:
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
                measured(ops, partial(handler, batch, _context()), meter=meter)
            per_record = ops.per_call()
            share = ops.calls / len(group)  # per batch -> per record
            per_record.update({k: round(v * share, 4)
                               for k, v in per_record.items() if isinstance(v, float)})  # fmt: skip
            per_record["by_operation"] = {
                k: round(v * share, 4) for k, v in per_record["by_operation"].items()
            }
            per_record["redis_server"] = {
                k: [round(calls * share, 4), round(usec * share, 2)]
                for k, (calls, usec) in per_record["redis_server"].items()
            }
            per_record["records"] = len(group)
            per_record["batch_size"] = mapping.batch_size
            per_record["batch_window"] = mapping.batching_window
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


def _production_password_hashes() -> int:
    """The seed hashes every password at cost 4 (one bcrypt for the whole population); login is
    measured at the production cost (PASSWORD_HASH_ROUNDS), so the users get such a hash."""
    from warble import security

    rounds = _container().settings.password_hash_rounds
    hashed = security.hash_password("password1", rounds)
    _container().database.run(
        lambda conn: conn.execute("UPDATE users SET password_hash = %s", (hashed,))
    )
    return rounds


def measure(rounds: int, users: int) -> dict[str, Any]:
    os.environ.setdefault("WARBLE_BENCH_DB", "warble_capacity")
    from bench import stack as bench_stack  # puts the shared layer on sys.path

    started = time.time()
    load_before = os.getloadavg()[0]
    stack = bench_stack.start()
    # Production's level (template.yaml Globals), so the log bytes are those Lambda ingests;
    # every logger is made after this (the functions are loaded below).
    os.environ["POWERTOOLS_LOG_LEVEL"] = "INFO"
    stdout, sys.stdout = sys.stdout, STDOUT
    try:
        import redis

        meter = RedisMeter(redis.Redis.from_url(bench_stack.BENCH_REDIS_URL))
        world = seed_world(stack, users)
        bcrypt_rounds = _production_password_hashes()
        handlers = Handlers()
        from warble import skeleton  # made with the functions: it logs into STDOUT

        if isinstance(skeleton.logger.registered_handler, logging.StreamHandler):
            skeleton.logger.registered_handler.setStream(STDOUT)
        routes = measure_routes(handlers, world, rounds, meter)
        routes |= measure_websocket(handlers, world, rounds, meter)
        consumers = measure_consumers(handlers, stack, meter)
        memory = measure_redis_memory(_container().redis)
        authors_followers = statistics.mean(world.followers_of.get(u["id"], 0) for u in world.users)
        functions = {name: handlers.routes[(r.method, r.path)] for r in ROUTES for name in [r.name]}
        functions["WS sendMessage"] = functions["WS ping"] = "WebSocketFunction"
        load_after = os.getloadavg()[0]
        return {
            "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
            "machine": f"shared 2-core VM (load average {load_before:.0f} at the start,"
            f" {load_after:.0f} at the end), Python " + ".".join(map(str, sys.version_info[:3])),
            "users": users,
            "rounds": rounds,
            "log_level": "INFO",
            "password_hash_rounds": bcrypt_rounds,
            "redis_get_usec": round(meter.get_usec, 3),
            "mean_followers_measured": round(authors_followers, 1),
            "routes": {name: ops.per_call() for name, ops in routes.items()},
            "route_functions": functions,
            "memory_mb": {f: handlers.memory_mb(f) for f in set(functions.values())}
            | {c.split(" <- ")[0]: handlers.memory_mb(c.split(" <- ")[0]) for c in consumers},
            "consumers": consumers,
            "redis_bytes": memory,
        }
    finally:
        sys.stdout = stdout
        stack.close()


# --------------------------------------------------------------------------------------------
# The report: docs/capacity.md's generated section and the chart
# --------------------------------------------------------------------------------------------

START, END = "<!-- capacity:model:start -->", "<!-- capacity:model:end -->"
CELEBRITIES = ROOT / "bench" / "results" / "celebrities.json"
THROUGHPUT = ROOT / "bench" / "results" / "redis-throughput.json"
LOAD_OPS = ROOT / "bench" / "results" / "load-ops.json"


def _peak(kb: float) -> str:
    return f"{kb:.0f}" if kb else "n/a"


def _money(value: float) -> str:
    return f"${value:,.0f}"


def _si(value: float) -> str:
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{value / size:,.1f}{unit}"
    return f"{value:,.1f}"


def _optional(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path.exists() else None


def _load_ops(m: dict[str, Any], load: dict[str, Any] | None) -> dict[str, Any] | None:
    """The load test's counts, with what these per-call figures predict for its requests:
    predicted again from the figures the model uses now (the load test may have run before
    them, or with none)."""
    from bench.load.ops import predicted

    if load is not None:
        load = dict(load)
        load["predicted"] = expected = predicted(
            load["requests_by_route"], m, load.get("post_followers")
        )
        load["ratio"] = {k: v / expected[k] for k, v in load["measured"].items() if expected[k]}
    return load


# The parts of the committed measurements, and where each bench writes its own.
PARTS = {"celebrities": CELEBRITIES, "redis_throughput": THROUGHPUT, "load_ops": LOAD_OPS}


def saved_measurements(path: Path = MEASUREMENTS) -> dict[str, Any]:
    """The committed measurements: {"capacity": the per-call run, and each part of PARTS or
    None}."""
    saved: dict[str, Any] = json.loads(path.read_text())
    return saved


def measurements_with(m: dict[str, Any], path: Path = MEASUREMENTS) -> dict[str, Any]:
    """A new per-call run with the other parts: each bench's own last result when it wrote one
    in bench/results/, else the committed one."""
    committed = saved_measurements(path) if path.exists() else {}
    return {"capacity": m} | {
        part: _optional(result) if result.exists() else committed.get(part)
        for part, result in PARTS.items()
    }


def inputs_from(saved: dict[str, Any]) -> Any:
    from bench import capacity_model as cm

    m = saved["capacity"]
    return cm.Inputs(m=m, celebrities=saved.get("celebrities"),
                     throughput=saved.get("redis_throughput"),
                     load=_load_ops(m, saved.get("load_ops")),
                     profiles=cm.template_profiles(),
                     memory_mb=cm.template_memory(), lanes=cm.template_lanes(),
                     schedules=cm.template_schedules(),
                     minters=cm.template_minters())  # fmt: skip


def inputs_from_results(m: dict[str, Any]) -> Any:
    return inputs_from(measurements_with(m))


# What lowers each cost item (the five largest at 100M are listed with these).
LOWER = {
    "API Gateway HTTP requests": "fewer reads of the unread counts still: the web client"
    " trusts the pushed `unread_counts` (issue 41) and reads them at each connection, at each"
    " return to the tab and every 10 live minutes (9 a day, from seed 004's 144); past that, an"
    " Application Load Balancer prices per LCU-hour, not per request",
    "API Gateway WebSocket": "fewer heartbeats (one every 5 minutes and at each return to the"
    " tab, answered by API Gateway's MOCK route: the idle timeout is 10 minutes) or a longer"
    " connection lifetime; the connection minutes are the larger part",
    "Lambda requests": "fewer HTTP requests; the heartbeats already need no Lambda (a MOCK"
    " route), and a ping runs once per connection",
    "Lambda compute (GB-s)": "login at 1,769 MB (a full vCPU: bcrypt at cost 12 is ~0.2 s of"
    " CPU either way, billed at 1,024 MB over 0.58 of a vCPU); the rest is round trips: fewer"
    " of them per read",
    "CloudWatch Logs (Lambda, tiered)": "LoggingConfig SystemLogLevel WARN drops the START/"
    "END/REPORT lines (most of the bytes: the code logs nothing at INFO on a request)",
    "CloudWatch Logs (HTTP API access log)": "sample it, or keep it only on errors (a filter"
    " in a Firehose subscription), or drop fields",
    "X-Ray traces": "the 10M and 100M profiles trace nothing (PassThrough); at 1M, a sampling"
    " rule under 5% once tracing is read through the ADOT layer",
    "DynamoDB reads (on-demand)": "provisioned capacity with auto scaling (the table below),"
    " then reserved capacity for the night's floor",
    "DynamoDB writes (on-demand)": "one counter claim per stream batch instead of one per"
    " record (issue 29's batch consumers); the like's LT# item outside the transaction;"
    " provisioned and reserved capacity (the table below)",
    "DynamoDB storage": "TTL or Standard-IA for history older than a few months",
    "DynamoDB point-in-time backups": "PITR on the tables that are the source of truth only"
    " (not counters, notifications or degrees: rebuildable)",
    "ElastiCache for Valkey (the profile's cache)": "the memory (30-day users' home timelines:"
    " most of the GB) and the daily peak's commands hold about as many r7g.2xlarge shards at"
    " 100M, so both must fall: fewer bytes a timeline entry or a shorter timeline for users away"
    " a week, or data tiering (r6gd: the cold timelines on SSD; not priced here), and fewer"
    " commands a home read (its render: one GET a key on the cluster); a three-year reservation"
    " is up to 55% below on-demand, the one-year one priced here about a third",
    "Aurora Serverless v2 (ACU)": "last_seen_at kept in Redis and flushed in batches (item 5)",
    "Aurora I/O and storage": "Aurora I/O-Optimized once I/O passes a quarter of the bill",
    "RDS Proxy": "fewer ACUs (above)",
    "NAT gateway": "fewer pushes (pings): the gateways' hours and addresses are a few dollars;"
    " what grows is the pushes' bytes",
    "Images: S3 storage (12 months of images)": "S3 Intelligent-Tiering (images a month old are"
    " rarely opened: the infrequent tier is 45% cheaper) and originals capped at 2,048 px a side"
    " (a 12 MP phone photo kept whole is most of the bytes)",
    "Images: CloudFront egress": "previews as WebP or AVIF (about 30% and 50% fewer bytes than"
    " JPEG at the same quality); a CloudFront savings bundle or private pricing at this volume",
    "CloudWatch Logs (WebSocket access log)": "drop the ping route's lines (a filter in a"
    " subscription) or log errors only",
    "KMS (the stack's key: log streams)": "none needed (a few dollars)",
    "Internet egress": "smaller home pages (20 tweets with their authors: most of the bytes);"
    " gzip on JSON answers",
    "Cross-AZ (Lambda <-> cache)": "read from the replica in the caller's AZ (the serverless"
    " cache's reader endpoint)",
}


def report(m: dict[str, Any], inputs: Any = None) -> str:
    """docs/capacity.md's generated section, and the chart."""
    text, costs, clones = generated(m, inputs)
    chart(costs, clones)
    return text


def generated(
    m: dict[str, Any], inputs: Any = None
) -> tuple[str, list[dict[str, float]], list[dict[str, float]]]:
    """The generated section's text, with the costs the chart draws (no file written)."""
    from bench import capacity_model as cm

    inputs = inputs or inputs_from_results(m)
    all_needs = [cm.needs(inputs, d) for d in cm.SCALES]
    lines = _measured_section(m, inputs)
    lines += _sweep_section(inputs) + _throughput_section(inputs) + _load_section(inputs)
    lines += _needs_section(all_needs)
    costs, clones, money_lines = _money_sections(inputs, all_needs)
    lines += money_lines + _hot_section(inputs, all_needs[-1]) + _nodes_section(inputs, all_needs)
    lines += _beside_section(all_needs, costs)
    lines += _checks_section(inputs, all_needs)
    lines += _reading_figures(inputs, all_needs, costs)
    lines += _unpriced_figures(inputs, all_needs, costs)
    lines += ["", "#### Prices used", "", "| price | source |", "|---|---|"]
    for what, source in cm.PRICE_SOURCES.items():
        lines.append(f"| {what} | {source} |")
    return "\n".join(lines), costs, clones


def _measured_section(m: dict[str, Any], inputs: Any) -> list[str]:
    """What the run measured: per route, per stream record, and Redis's bytes per entry."""
    from bench import capacity_model as cm

    lines = [
        f"Measured {m['measured_at']} on a {m['machine']}; {m['users']} seeded users, "
        f"{m['rounds']} calls per route (reads warm), functions logging at"
        f" {m.get('log_level', 'WARNING')}, passwords at bcrypt cost"
        f" {m.get('password_hash_rounds', 4)}. Regenerate: `python -m bench.capacity`.",
        "",
        "#### Per route, per call (measured)",
        "",
        "| route | function (MB) | CPU ms | peak alloc KB | Redis cmds / round trips | Redis server µs | ECPU | DynamoDB calls | RCU | WCU | PG queries (writes) | log B | response B |",  # noqa: E501
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for route, c in m["routes"].items():
        fn = m["route_functions"][route]
        lines.append(
            f"| {route} | {fn} ({m['memory_mb'][fn]}) | {c['cpu_ms']:.2f}"
            f" | {_peak(c['peak_kb'])}"
            f" | {c['redis_commands']:.1f} / {c['redis_round_trips']:.1f}"
            f" | {c.get('redis_server_us', 0):.0f} | {cm.ecpus(c, inputs):.1f}"
            f" | {c['dynamodb_calls']:.2f} | {c['rcu']:.2f} | {c['wcu']:.2f}"
            f" | {c['pg_queries']:.2f} ({c.get('pg_writes', 0):.2f})"
            f" | {c.get('log_bytes', 0):.0f} | {c.get('response_bytes', 0):.0f} |"
        )
    lines += [
        "",
        "#### Per stream record, per consumer (measured; records of the requests above)",
        "",
        "| consumer <- record | records | batch | CPU ms | Redis cmds | ECPU | DynamoDB calls | RCU | WCU | log B |",  # noqa: E501
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, c in sorted(m["consumers"].items()):
        lines.append(
            f"| {name} | {c['records']} | {c['batch_size']} | {c['cpu_ms']:.2f}"
            f" | {c['redis_commands']:.2f} | {cm.ecpus(c, inputs):.1f}"
            f" | {c['dynamodb_calls']:.2f} | {c['rcu']:.2f}"
            f" | {c['wcu']:.2f} | {c.get('log_bytes', 0):.0f} |"
        )
    b = m["redis_bytes"]
    lines += [
        "",
        f"Redis bytes (MEMORY USAGE): {b['timeline_entry']:.0f} per timeline entry (800-entry"
        f" timeline), {b['following_field']:.0f} per following-hash field,"
        f" {b['liked_field']:.0f} per recent-like field, {b['profile']:.0f} per cached profile."
        f" The measured tweets' authors had {m['mean_followers_measured']} followers on average;"
        f" the model fans out to {cm.FOLLOWERS_PER_TWEET}. Logs: the bytes the code writes at"
        f" INFO (EMF metrics), to which Lambda adds {cm.PLATFORM_LOG_BYTES} bytes of START/END/"
        f"REPORT lines per invocation; the HTTP API's access log line is"
        f" {cm.ACCESS_LOG_BYTES} bytes. ECPUs: {cm.command_overhead_us(inputs):.1f} µs of I/O"
        f" per command and a 300-byte GET's {m.get('redis_get_usec', 0.3):.2f} µs of execution"
        f" make one ECPU.",
    ]
    return lines


def _needs_section(all_needs: list[Any]) -> list[str]:
    """What each scale needs, from the daily peak to the event."""
    from bench import capacity_model as cm

    head = "| | " + " | ".join(f"{d / 1e6:,.0f}M DAU" for d in cm.SCALES) + " |"
    rule = "|---|" + "---:|" * len(cm.SCALES)
    lines = ["", f"#### What each scale needs (daily peak = {cm.PEAK:g}x the mean; event ="
              f" {cm.EVENT_PEAK:.2f}x on all traffic for minutes, and posts at"
              f" {cm.EVENT_BURST:g}x for a second)", "", head, rule]  # fmt: skip
    spike = cm.EVENT_PEAK / cm.PEAK
    rows = [
        ("HTTP requests a month", lambda n: _si(n.http_requests_month)),
        ("HTTP requests/s at the daily peak / an event", lambda n: f"{_si(n.peak_rps)} / "
         f"{_si(n.peak_rps * spike)}"),
        ("API Gateway requests/s (HTTP + WebSocket messages + @connections), daily peak /"
         " event", lambda n: f"{_si(cm.api_gateway_rps(n))} /"
         f" {_si(cm.api_gateway_rps(n) * spike)}"),
        (f"POST /v1/tweets/s in the one-second burst ({cm.EVENT_BURST:g}x the mean)",
         lambda n: _si(n.post_burst_rps)),
        ("... TweetsFunction environments it adds (a post's billed time each)",
         lambda n: f"{n.post_burst_environments:,.0f}"),
        ("Lambda invocations a month", lambda n: _si(n.lambda_invocations)),
        ("Lambda GB-seconds a month", lambda n: _si(n.lambda_gb_s)),
        ("Lambda concurrency, daily peak / event", lambda n: f"{n.peak_concurrency:,.0f} / "
         f"{n.peak_concurrency * spike:,.0f}"),
        ("Lambda logs a month, GB", lambda n: f"{n.lambda_log_gb:,.0f}"),
        ("X-Ray traces a month", lambda n: _si(n.traces_month)),
        ("DynamoDB read units a month", lambda n: _si(n.rru_month)),
        ("DynamoDB write units a month", lambda n: _si(n.wru_month)),
        ("DynamoDB write units/s, daily peak", lambda n: _si(n.peak_wru_s)),
        (f"DynamoDB storage ({cm.RETENTION_MONTHS} months of history), GB",
         lambda n: f"{n.storage_gb:,.0f}"),
        ("Redis commands/s, daily peak", lambda n: _si(n.redis_peak_ops)),
        ("Redis ECPU/s, daily peak / event", lambda n: f"{_si(n.redis_peak_ecpu_s)} / "
         f"{_si(n.redis_peak_ecpu_s * spike)}"),
        ("Redis memory (timelines of 30-day users, sets, caches), GB",
         lambda n: f"{n.redis_gb:,.0f}"),
        ("serverless caches holding the event peak (5,000 GB and 15M ECPU/s each)",
         lambda n: f"{n.caches}"),
        ("or: r7g.4xlarge shards, half busy at the daily peak / 90% busy at the event, and the"
         " memory's (1 replica each; Valkey's I/O threads: the cache options below)",
         lambda n: f"{n.redis_shards_daily:,} / {n.redis_shards_event:,}"),
        ("... clusters of 250 such shards (500 nodes: ElastiCache's most), daily peak / event",
         lambda n: f"{_clusters(n.redis_shards_daily)} / {_clusters(n.redis_shards_event)}"),
        ("PostgreSQL queries/s at peak (writes)", lambda n: f"{n.pg_peak_qps:,.0f}"
         f" ({n.pg_peak_writes:,.0f})"),
        ("Aurora ACU needed at peak (max 256 an instance)", lambda n: f"{n.aurora_acu:,.1f}"),
        ("... with an UPDATE per active minute (before issue 30)",
         lambda n: f"{n.aurora_acu_per_minute_updates:,.1f}"),
        ("WebSocket messages a month", lambda n: _si(n.ws_messages_month)),
        ("internet egress a month, GB", lambda n: f"{n.egress_gb:,.0f}"),
        ("NAT gateway data a month, GB", lambda n: f"{n.nat_gb:,.0f}"),
    ]  # fmt: skip
    for label, fmt in rows:
        lines.append(f"| {label} | " + " | ".join(fmt(n) for n in all_needs) + " |")
    return lines


def _money_sections(
    inputs: Any, all_needs: list[Any]
) -> tuple[list[dict[str, float]], list[dict[str, float]], list[str]]:
    """The monthly cost per scale, its largest items, DynamoDB's options, the cache's and the
    clone's: (Warble's costs, the clone's, the lines)."""
    from bench import capacity_model as cm

    rule = "|---|" + "---:|" * len(cm.SCALES)
    lines: list[str] = []
    # Images (docs/media.md: their own section and assumptions) are in the total too.
    costs = [
        {**cm.cost(n, inputs.profiles), **{f"Images: {k}": v for k, v in cm.media_cost(d).items()}}
        for n, d in zip(all_needs, cm.SCALES, strict=True)
    ]
    clones = [cm.clone_cost(d, inputs) for d in cm.SCALES]
    money_head = "| item | " + " | ".join(f"{d / 1e6:,.0f}M DAU" for d in cm.SCALES) + " |"
    lines += ["", "#### Monthly cost (us-east-1; the profile's deployment; prices below)", "",
              money_head, rule]  # fmt: skip
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
    top = sorted(costs[-1].items(), key=lambda kv: -kv[1])[:5]
    total = sum(costs[-1].values())
    lines += ["", "**The five largest items at 100M DAU, and the change that lowers each:**", ""]
    for i, (item, value) in enumerate(top, 1):
        lines.append(f"{i}. {item}: {_money(value)} ({value / total:.0%}): {LOWER.get(item, '')}")
    options = [cm.dynamodb_options(n) for n in all_needs]
    lines += ["", "#### DynamoDB reads and writes: on-demand, provisioned, reserved", "",
              money_head, rule]  # fmt: skip
    for option in options[0]:
        lines.append(f"| {option} | " + " | ".join(_money(o[option]) for o in options) + " |")
    lines += _cache_section(inputs, all_needs, money_head, rule)
    lines += _clone_section(inputs, costs, clones, money_head, rule)
    return costs, clones, lines


def _clone_section(
    inputs: Any, costs: list[dict[str, float]], clones: list[dict[str, float]], head: str,
    rule: str,
) -> list[str]:  # fmt: skip
    """The clone's month like for like (the same traffic, graph, fan-out and images), what it
    leaves out, and Warble against it."""
    from bench import capacity_model as cm

    followers = cm.clone_followers_per_tweet(inputs)
    warble = [cm.following(inputs, d) for d in cm.SCALES]
    fanned = ", ".join(f"{f.per_tweet:,.0f}" if f else f"{cm.FOLLOWERS_PER_TWEET:g}"
                       for f in warble)  # fmt: skip
    lines = ["", "#### The same traffic on appsyncmasterclass-backend's design", "",
             f"Like for like: Warble's operations a daily user (the rates above), the same graph"
             f" (a tweet written to all its author's followers, {followers:,.0f} on the mean of"
             f" the celebrity sweep's graph, where Warble fans out to {fanned} at 1M, 10M and"
             f" 100M and merges the celebrities' on read), a new follower's backfill of"
             f" {cm.CLONE_BACKFILL} tweets, timelines kept {cm.RETENTION_MONTHS} months, the same"
             f" pushes and connected minutes on AppSync's real-time, and the same images. The"
             f" event adds requests, not capacity (both bill by request there). Left out, each"
             f" in the clone's favour: its Cognito user pool (billed by monthly active user),"
             f" resolver logs and tracing, point-in-time backups, unread counts (priced as one"
             f" Query a poll), search, rate limits and moderation.", "", head, rule]  # fmt: skip
    for item in clones[0]:
        lines.append(f"| {item} | " + " | ".join(_money(c[item]) for c in clones) + " |")
    lines.append(
        "| **clone total** | " + " | ".join(f"**{_money(sum(c.values()))}**" for c in clones) + " |"
    )
    lines.append(
        "| per daily user a month | "
        + " | ".join(f"${sum(c.values()) / d:,.4f}" for c, d in zip(clones, cm.SCALES, strict=True))
        + " |"
    )
    lines.append(
        "| Warble over the clone | "
        + " | ".join(
            f"{sum(w.values()) / sum(c.values()):.2f}x" for w, c in zip(costs, clones, strict=True)
        )
        + " |"
    )
    images = "Images (as Warble's: S3, CloudFront, the resizing function)"
    lines.append(
        "| without the images: Warble / the clone | "
        + " | ".join(
            f"{_money(sum(v for k, v in w.items() if not k.startswith('Images')))} /"
            f" {_money(sum(c.values()) - c[images])}"
            for w, c in zip(costs, clones, strict=True)
        )
        + " |"
    )
    top = max(clones[-1].items(), key=lambda kv: kv[1])
    lines += ["", f"The clone's largest item at 100M is {top[0]} ({_money(top[1])},"
              f" {top[1] / sum(clones[-1].values()):.0%}): AppSync's"
              f" ${cm.PRICES['appsync_request_per_m']:g} a million requests against API Gateway's"
              f" ${cm.PRICES['http_api_per_m']:g} plus Lambda; its DynamoDB reads replace Warble's"
              " cache."]  # fmt: skip
    return lines


def _checks_section(inputs: Any, all_needs: list[Any]) -> list[str]:
    """Every check, at the daily peak and at the event, per profile, with its margin."""
    from bench import capacity_model as cm

    lines = ["", "#### Every check, at the daily peak and at the event, per profile", "",
             f"Limits are the account's default quotas, Lambda's fixed scaling rate, the stores'"
             f" hard limits and the profile's own settings; the event is"
             f" {cm.EVENT_PEAK / cm.PEAK:.2f}x the daily peak for minutes (the burst's rows: its"
             f" second). Margin: the limit over the larger need, less one.", "",
             "| profile | kind | check | limit | daily peak | event | margin | then |",
             "|---|---|---|---:|---:|---:|---:|---|"]  # fmt: skip
    for d, n in zip(cm.SCALES, all_needs, strict=True):
        name = cm.PROFILES[d]
        for c in cm.checks(inputs, n, inputs.profiles.get(name, {})):
            status = f"{c.margin:+.0%}" if c.holds else f"**{c.margin:+.0%}**"
            lines.append(f"| {name} | {c.kind} | {c.what} | {_si(c.limit)} | {_si(c.daily)} |"
                         f" {_si(c.event)} | {status} | {'' if c.holds else c.then} |")  # fmt: skip
    return lines


IMAGES_STORAGE = "Images: S3 storage (12 months of images)"


def _beside_section(all_needs: list[Any], costs: list[dict[str, float]]) -> list[str]:
    """What is priced beside the deployment (not in template.yaml): a CloudFront + WAF front for
    the HTTP API, and the images on S3 Intelligent-Tiering."""
    from bench import capacity_model as cm

    head = "| item | " + " | ".join(f"{d / 1e6:,.0f}M DAU" for d in cm.SCALES) + " |"
    fronts = [cm.waf_front_cost(n) for n in all_needs]
    lines = ["", "#### Priced beside the deployment (not in template.yaml)", "", head,
             "|---|" + "---:|" * len(cm.SCALES)]  # fmt: skip
    for item in fronts[0]:
        lines.append(f"| WAF front: {item} | " + " | ".join(_money(f[item]) for f in fronts) + " |")
    lines.append("| **with a CloudFront + WAF front: the total, per daily user** | " + " | ".join(
        f"**{_money(sum(c.values()) + sum(f.values()))}**,"
        f" ${(sum(c.values()) + sum(f.values())) / d:,.4f}"
        for c, f, d in zip(costs, fronts, cm.SCALES, strict=True)) + " |")  # fmt: skip
    tiering = [cm.s3_intelligent_tiering_cost(d) for d in cm.SCALES]
    standard = [c[IMAGES_STORAGE] for c in costs]
    cells = [f"{_money(t)} (now {_money(now)})" for t, now in zip(tiering, standard, strict=True)]
    lines.append("| images on S3 Intelligent-Tiering instead of Standard (a month of storage) | "
                 + " | ".join(cells) + " |")  # fmt: skip
    return lines


def _unpriced_figures(
    inputs: Any, all_needs: list[Any], costs: list[dict[str, float]]
) -> list[str]:
    """Issue 42 items 6 and 7: Lambda on arm64 and what the model did not price before, each
    with its figure (or why it is small)."""
    from bench import capacity_model as cm

    sizes = [cm.PROFILES[d] for d in cm.SCALES]
    big, cost_big = all_needs[-1], costs[-1]
    gb_s = cm.PRICES["lambda_gb_s_arm"]
    spike = cm.EVENT_PEAK / cm.PEAK

    def each(fmt: Any) -> str:
        return ", ".join(f"{fmt(n)} at {name}" for n, name in zip(all_needs, sizes, strict=True))

    def init(n: Any) -> str:
        share = n.cold_starts_month / max(n.lambda_invocations, 1.0)
        per_start = n.init_gb_s / max(n.cold_starts_month, 1.0)  # GB-s a cold start
        at_one_percent = n.lambda_invocations * 0.01 * per_start * gb_s
        return (f"{_si(n.cold_starts_month)} cold starts ({share:.4%} of invocations),"
                f" {_money(n.init_gb_s * gb_s)} (at AWS's 1%:"
                f" {_money(at_one_percent)})")  # fmt: skip

    batches = "; ".join(
        f"{r.replace('ConsumerFunction', '').lower()} {big.stream_batch[r]:,.1f}"
        f" ({big.stream_shards[r]:,} lanes)"
        for r in sorted(big.stream_batch)
    )
    others = "; ".join(
        f"{name} {_si(inv)} invocations, {_money(seconds * gb_s)}"
        for name, (inv, seconds) in sorted(big.other_functions.items())
    )
    overhead = big.storage_overhead_gb / big.storage_gb if big.storage_gb else 0.0
    authorizer = big.dau * cm.CONNECTIONS_PER_DAY * cm.MONTH_DAYS
    return [
        f"- **Lambda on arm64** (item 6): CPU timed here on x86 is taken at"
        f" {cm.GRAVITON_CPU_FACTOR:.2f}x on Graviton2 (its source: Prices used); the runtime"
        f" adds {cm.RUNTIME_INVOKE_MS:g} ms an invocation and the billing's rounding"
        f" {cm.BILLING_ROUNDING_MS:g} ms: {each(lambda n: _money(n.runtime_gb_s * gb_s))} a"
        f" month; INIT, billed since August 2025, {cm.INIT_S * 1000:.0f} ms on x86 here"
        f" ({cm.INIT_S * cm.GRAVITON_CPU_FACTOR * 1000:.0f} ms on arm64) a cold start, each"
        f" environment replaced every {cm.ENVIRONMENT_LIFETIME_H:g} h and those of the daily"
        f" climb added: {each(init)} a month.",
        f"- **Stream batches as the simulation fills them** (records an invocation on the day's"
        f" mean, a year's tables, at {sizes[-1]}): {batches}.",
        f"- **The functions off the routes** at {sizes[-1]} (search {cm.SEARCHES_PER_DAU:g} a"
        f" daily user a day, exports {cm.EXPORTS_PER_USER_MONTH:.1%} and deletions"
        f" {cm.DELETIONS_PER_USER_MONTH:.1%} of users a month; scheduled runs at their"
        f" Timeout): {others}. `$connect`'s authorizer: {_si(authorizer)} invocations a month"
        " (in Lambda requests).",
        f"- **DynamoDB's 100 bytes an item** are in its storage and its point-in-time backups:"
        f" {each(lambda n: f'{n.storage_overhead_gb:,.0f} GB')} of the stored GB"
        f" ({overhead:.0%}). **KMS**: {each(lambda n: f'{_si(cm.kms_requests(n))} requests')}"
        f" a month, {_money(cost_big.get(cm.KMS_ITEM, 0.0))} at {sizes[-1]}. **The WebSocket"
        f" access log**: {each(lambda n: f'{n.ws_access_log_gb:,.0f} GB')} a month.",
        f"- **The NAT gateways at the event** ({cm.NAT_GATEWAYS}, one in each zone): connections"
        f" to the @connections endpoint {each(lambda n: _si(cm.nat_connections(n) * spike))}"
        f" against {cm.NAT_CONNECTIONS_PER_DESTINATION:,} a destination and address, with"
        f" {each(lambda n: str(cm.nat_ips(inputs.profiles.get(cm.PROFILES[n.dau], {}))))}"
        " addresses on each gateway (the profiles' NatGatewayIps); packets/s"
        f" {each(lambda n: _si(n.pushes_peak_s * cm.PACKETS_PER_POST * spike))} against"
        f" {_si(cm.NAT_PACKETS_S)}.",
    ]


def _best(n: Any) -> str:
    from bench import capacity_model as cm

    o = cm.best_cache(n)
    if o.kind == "serverless":
        return f"{o.name} ({_money(o.month)})"
    return f"{o.shards:,} {o.node_type} shards, {o.pricing} ({_money(o.month)}, {o.bound}-bound)"


def _largest_fanout(n: Any) -> str:
    followers, seconds = n.largest_fanout
    return f"{followers:,.0f} followers in {seconds:.2f} s"


def _reading_figures(inputs: Any, all_needs: list[Any], costs: list[dict[str, float]]) -> list[str]:
    """The figures the hand-written reading below the section quotes, generated, so that no
    figure in the prose can disagree with the tables."""
    from bench import capacity_model as cm

    spike = cm.EVENT_PEAK / cm.PEAK
    sizes = [cm.PROFILES[d] for d in cm.SCALES]
    big = all_needs[-1]

    def each(fmt: Any) -> str:
        return ", ".join(f"{fmt(n)} at {name}" for n, name in zip(all_needs, sizes, strict=True))

    m = inputs.m
    login = m["routes"].get("POST /v1/auth/login", {}).get("cpu_ms", 0.0)
    fanout_mb = big.fanout_memory_mb
    per_follower = cm.arm_cpu_s(cm.FANOUT_S_PER_FOLLOWER, fanout_mb)
    at_1024 = cm.arm_cpu_s(cm.FANOUT_S_PER_FOLLOWER, 1024)
    absorbed = cm.QUOTAS["lambda_scaling_per_10s"] / max(big.post_duration_s, 1e-9)
    admitted = cm.post_admitted(inputs.profiles.get(cm.PROFILES[big.dau], {}))
    most = absorbed + big.post_burst_rps / cm.EVENT_BURST * cm.EVENT_PEAK
    likers, read, follows, _follow_reads = cm.hot_partitions(big.dau)
    cross_az = costs[-1].get("Cross-AZ (Lambda <-> cache)", 0.0)
    lines = [
        "",
        "#### The figures the reading quotes (generated)",
        "",
        f"- **The model's assumptions** (named constants in bench/capacity_model.py):"
        f" {cm.CACHE_MISS:.0%} of tweet reads missing a cache; the celebrity list read afresh"
        f" {cm.CELEBRITY_LIST_REFRESHES:g} times a user a day; {cm.REBUILDS_PER_DAU:g} home"
        f" timelines rebuilt a user a day; {cm.ACTIVE_MINUTES} active minutes a user a day;"
        f" {cm.CONNECTED_MINUTES} connected WebSocket minutes ({cm.CONNECTIONS_PER_DAY}"
        f" connections, a ping each; a heartbeat answered by API Gateway every"
        f" {cm.HEARTBEAT_EVERY_MINUTES:g} minutes and at each of {cm.TAB_RETURNS_PER_DAY} returns"
        f" to the tab; the unread counts read at each connection and return and every"
        f" {cm.COUNTS_SAFETY_NET_MINUTES:g} live minutes: {cm.TRAFFIC['unread']:g} a day) and"
        f" {cm.PUSHES_PER_DAY} pushed frames a user a day; home timelines kept for"
        f" {cm.MAU_PER_DAU:g} users a daily user; {cm.PG_QPS_PER_ACU} queries/s an Aurora ACU;"
        f" {cm.AURORA_IO_PER_WRITE:g} Aurora I/Os a written row; X-Ray sampling"
        f" {cm.XRAY_SAMPLED:.0%}; {cm.AZ_CROSS_SHARE:.0%} of the Lambda-to-cache bytes crossing"
        f" an AZ; {cm.RETENTION_MONTHS} months of table history; a node the one-core mix with"
        f" its I/O share ({cm.io_share(inputs):.0%}) sped up by Valkey's published I/O-thread"
        f" gain ({', '.join(f'{g:g}x at {v} vCPUs' for v, g in cm.IO_THREADS_GAIN.items())}),"
        f" at most {cm.SHARD_TARGET:.0%} busy at the daily peak and"
        f" {cm.SHARD_EVENT_TARGET:.0%} at the event; a one-year reservation"
        f" {1 - cm.RESERVED_1Y_FACTOR:.0%} below on-demand; round trips of"
        f" {cm.RTT_MS['redis']:g} ms (Redis), {cm.RTT_MS['dynamodb']:g} ms (DynamoDB) and"
        f" {cm.RTT_MS['postgres']:g} ms (PostgreSQL); one vCPU at"
        f" {cm.LAMBDA_FULL_VCPU_MB:,} MB.",
        f"- **One traffic basis.** The daily peak is {cm.PEAK:g}x the mean. The sustained event"
        f" is the most tweeted one the sources give, the 2012 US election night's"
        f" {cm.ELECTION_2012_TWEETS_PER_MINUTE:,} tweets a minute, over that year's"
        f" {cm.TWITTER_2012_TWEETS_PER_DAY / 1e6:,.0f}M tweets a day:"
        f" {cm.EVENT_OVER_MEAN:.2f}x the mean, taken whole on top of the daily peak:"
        f" {cm.EVENT_PEAK:.2f}x the mean on all traffic for minutes ({spike:.2f}x the daily"
        f" peak). The burst: posts at {cm.EVENT_BURST:g}x the mean for one second.",
        f"- **API Gateway's account quota** ({_si(cm.QUOTAS['http_api_rps'])} requests/s,"
        f" shared by the HTTP API, the WebSocket API's messages and the @connections"
        f" callbacks), needed at the daily peak / the event: "
        + each(lambda n: f"{_si(cm.api_gateway_rps(n))} / {_si(cm.api_gateway_rps(n) * spike)}")
        + f"; the HTTP requests alone at the daily peak: {each(lambda n: _si(n.peak_rps))}.",
        f"- **Lambda's scaling rate** ({cm.QUOTAS['lambda_scaling_per_10s']:,} new"
        f" environments per function per 10 s, fixed): the TweetsFunction environments the"
        f" posts' burst would add unthrottled (a post holds one"
        f" {big.post_duration_s * 1000:.0f} ms):"
        f" {each(lambda n: f'{n.post_burst_environments:,.0f}')}. At {sizes[-1]} the"
        f" {cm.QUOTAS['lambda_scaling_per_10s']:,} new environments take {_si(absorbed)}"
        f" posts/s more than the event's, {_si(most)}/s in all: POST /v1/tweets' own throttle"
        f" (the profile's PostThrottleRate and PostThrottleBurst) admits {_si(admitted)}/s"
        " and API Gateway answers the rest 429; the web client sends a 429 or 503 post again"
        " with the same Idempotency-Key (web/src/api.js), so the burst's"
        f" {_si(big.post_burst_rps)} posts are taken in"
        f" {max(1.0, big.post_burst_rps / max(admitted, 1.0)):.0f} s and none twice.",
        f"- **The fan-out's time** at its CPU share: {cm.FANOUT_S_PER_FOLLOWER * 1e6:.0f} µs of"
        f" a full x86 vCPU a follower"
        f" ({cm.FANOUT_S_PER_FOLLOWER * cm.GRAVITON_CPU_FACTOR * 1e6:.1f} µs on arm64) is"
        f" {at_1024 * 1e6:.1f} µs at 1,024 MB (the largest account"
        f" fanned out in {cm.FANOUT_BUDGET_S:g} s: {cm.FANOUT_BUDGET_S / at_1024:,.0f}"
        f" followers) and {per_follower * 1e6:.1f} µs at the template's {fanout_mb:,} MB"
        f" ({cm.FANOUT_BUDGET_S / per_follower:,.0f} followers); the largest fanned out on"
        f" write: {each(_largest_fanout)}.",
        "- **The cold-cache surge** (the whole profile cache emptied at the daily peak: each"
        " account's first view reads PostgreSQL): PostgreSQL reads/s over its first second /"
        " its first minute: "
        + each(
            lambda n: (
                f"{_si(cm.cold_cache_pg_qps(n, seconds=1.0))}"
                f" ({cm.cold_cache_pg_qps(n, seconds=1.0) / cm.PG_QPS_PER_ACU:,.0f} ACU) /"
                f" {_si(cm.cold_cache_pg_qps(n))}"
                f" ({cm.cold_cache_pg_qps(n) / cm.PG_QPS_PER_ACU:,.0f} ACU)"
            )
        )
        + f", against {cm.AURORA_MAX_ACU} ACU an instance; in steady state Aurora needs"
        f" {each(lambda n: f'{n.aurora_acu:,.1f} / {n.aurora_acu_event:,.1f} ACU')} (daily"
        f" peak / event).",
        f"- **Redis** commands/s at the daily peak: {each(lambda n: _si(n.redis_peak_ops))};"
        f" r7g.4xlarge shards needed at the daily peak / the event (with the memory's):"
        f" {each(lambda n: f'{n.redis_shards_daily:,} / {n.redis_shards_event:,}')}; the"
        f" cheapest cache that holds both: {each(lambda n: _best(n))}.",
        f"- **Hot partitions at {sizes[-1]}** (daily peak / event): a viral tweet's likers"
        f" partition {_si(likers[1])} / {_si(likers[1] * spike)} write units/s of"
        f" {_si(likers[2])}, its tweet-index item {_si(read[1])} / {_si(read[1] * spike)} read"
        f" units/s of {_si(read[2])}, each of the top account's followers partitions"
        f" {_si(follows[1])} / {_si(follows[1] * spike)} of {_si(follows[2])}.",
        f"- **Login** at bcrypt cost {m.get('password_hash_rounds', 4)}: {login:.0f} ms of CPU"
        f" here. **Cross-AZ** traffic between Lambda and the cache at {sizes[-1]}:"
        f" {_money(cross_az)} a month.",
    ]
    return lines


def _clusters(shards: int) -> int:
    from bench import capacity_model as cm

    return -(-shards * (1 + cm.REPLICAS_PER_SHARD) // cm.CLUSTER_MAX_NODES)


def _cache_section(inputs: Any, all_needs: list[Any], head: str, rule: str) -> list[str]:
    """What each profile deploys as its cache and its month, beside every option that holds
    both peaks: each node type on-demand and reserved, and serverless caches."""
    from bench import capacity_model as cm

    deployed = [cm.cache_deployment(n.dau, inputs.profiles) for n in all_needs]
    options = [cm.cache_options(n) for n in all_needs]
    best = [cm.best_cache(n) for n in all_needs]
    lines = ["", "#### ElastiCache: the options that hold both peaks, and what each ScaleProfile"
             " deploys", "",
             f"Each node type at the measured mix (the one-core figure, its I/O share sped up by"
             f" the published I/O-thread gain), with as many shards as hold the daily peak"
             f" {cm.SHARD_TARGET:.0%} busy, the event {cm.SHARD_EVENT_TARGET:.0%} busy and the"
             f" memory (75% of a node's), a replica each; serverless caches (at most"
             f" {cm.ELASTICACHE_MAX_GB:,} GB and {cm.ELASTICACHE_MAX_ECPU_S / 1e6:g}M ECPU/s each,"
             f" 100 MB billed at least) by use, and with a minimum ECPU/s at the daily peak and"
             f" at the event (below its minimum a cache grows behind a surge, doubling in"
             f" minutes where an event peaks in one). Cell: the month (shards, what sets"
             f" them; nodes in clusters of {cm.CLUSTER_MAX_NODES} at most). The winner: the"
             f" cheapest that holds the event from its first second, the fewest nodes among"
             f" those within {cm.TIE_SHARE:.0%} of it.", "",
             head.replace("| item |", "| option (commands/s a node) |"), rule]  # fmt: skip
    for i, option in enumerate(options[0]):
        if option.kind == "nodes":
            label = f"{option.name} ({_si(cm.node_ops(inputs, option.node_type))})"
        else:
            label = option.name
        cells = []
        for row in options:
            o = row[i]
            where = (f"{o.shards:,}, {o.bound}; {o.clusters}" if o.kind == "nodes"
                     else f"{o.caches} cache{'s' if o.caches > 1 else ''}")  # fmt: skip
            cells.append(f"{_money(o.month)} ({where})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += [
        "| **the cheapest that holds the event** | "
        + " | ".join(f"**{b.name}**" for b in best)
        + " |",
        "| the profile's cache (template.yaml) | "
        + " | ".join(d.describe() for d in deployed)
        + " |",
        "| its month (priced in the cost table) | "
        + " | ".join(_money(cm.deployed_cache(n, inputs.profiles)) for n in all_needs)
        + " |",
    ]
    return lines


def _sweep_section(inputs: Any) -> list[str]:
    sweep = inputs.celebrities
    if not sweep:
        return ["", "(No celebrity sweep: run `python -m bench.celebrities`; the model uses the"
                " 400-user measurement for home and unread reads.)"]  # fmt: skip
    g = sweep["graph"]
    lines = [
        "",
        f"#### Celebrities and cold paths (bench/celebrities.py, {sweep['measured_at']})",
        "",
        f"A {g['users']:,}-user graph: {g['celebrities']:,} accounts above"
        f" {g['threshold']:,} followers at 100M users (Zipf exponent {g['zipf_exponent']} over"
        f" them, the top one followed by {g['top_share']:.0%} of users); users follow"
        f" {g['mean_following']:.0f} accounts on average, {g['mean_celebrities_followed']:.1f}"
        f" of them celebrities (quartiles {g['celebrity_quartiles']}; {g['share_none']:.0%}"
        f" follow none, {g['share_120']:.1%} 120 or more). Redis state written directly; each"
        f" point is one reader with c celebrities and f other accounts followed. Per call:",
        "",
        "| path | metric | intercept | per celebrity | per other followed | R² | points |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for path, metrics in sweep["formulas"].items():
        for metric, fit in metrics.items():
            if not isinstance(fit, dict):
                continue
            r2 = "const." if fit.get("r2") is None else f"{fit['r2']:.3f}"
            if not fit.get("varies", True):
                r2 += " (flat)"
            lines.append(
                f"| {path} | {metric} | {fit['intercept']:.2f} | {fit['per_celebrity']:.3f}"
                f" | {fit['per_following']:.4f} | {r2} | {fit['points']} |"
            )
    return lines


def _throughput_section(inputs: Any) -> list[str]:
    t = inputs.throughput
    if not t:
        return ["", "(No Redis throughput measurement: run `python -m bench.redis_throughput`;"
                " the model assumes 150,000 commands/s a shard.)"]  # fmt: skip
    server = t.get("server", "Redis 7.0")
    repeat = int(t.get("repeat", 1))
    spread = repeat > 1 and "least" in t["runs"][0]
    lines = ["", f"#### Redis throughput on one core (bench/redis_throughput.py,"
             f" {t['measured_at']}; {server}; {t['machine']})", "",
             (f"Each figure the median of {repeat} rounds of the whole table, with its least and"
              f" most (a shared machine: the spread is other engineers' load as much as the"
              f" server's)." if spread else "One round."), "",
             "| command | keys | pipeline | per second of the server's CPU | per wall-clock"
             " second |", "|---|---|---:|---:|---:|"]  # fmt: skip
    for row in t["runs"]:
        wall = row.get("wall_ops_per_s", 0)
        cpu = f"{row['ops_per_s']:,.0f}"
        if spread:
            cpu += f" ({row['least']:,.0f}-{row['most']:,.0f})"
            wall_cell = f"{wall:,.0f} ({row['wall_least']:,.0f}-{row['wall_most']:,.0f})"
        else:
            wall_cell = f"{wall:,.0f}"
        lines.append(f"| {row['name']} | {row['keys']} | {row['pipeline']} | {cpu} |"
                     f" {wall_cell} |")  # fmt: skip
    from bench import capacity_model as cm

    io = cm.pipelined_io_us(inputs)
    overhead = cm.command_overhead_us(inputs) if io is None else io
    mix, note = cm.mix_ops(inputs.m, cm.pipelined(t), overhead)
    lines += ["", f"The measured mix (the routes' commands as the client sends them, weighted by"
              f" the traffic, each at its benchmarked time at 4 a round trip, or its measured"
              f" execution plus a command's I/O at the routes' {cm.mix_depth(inputs.m):.1f}"
              f" commands a round trip, {overhead:.1f} µs, solved from GET alone and 4 a round"
              f" trip): {mix:,.0f} commands/s on one core ({note}). A GET alone costs"
              f" {t['command_overhead_us']:.1f} µs of I/O and parsing. The mix's I/O share:"
              f" {cm.io_share(inputs):.0%}, the part Valkey's I/O threads take off the main"
              f" thread; the scripts and range reads stay on it."]  # fmt: skip
    engines = t.get("engines") or []
    if engines:
        lines += ["", "| server | I/O threads | the mix, commands/s a core, from the medians"
                  " (each round's: least-most) | GET,"
                  " no pipelining: per CPU second / per wall-clock second (least-most) | where |",
                  "|---|---:|---:|---:|---|"]  # fmt: skip
        for e in engines:
            lines.append(
                f"| {e['server']} | {e['io_threads']} | {e['mix_ops_per_s']:,.0f}"
                f" ({e['mix_least']:,.0f}-{e['mix_most']:,.0f}) | {e['get_p1_cpu']:,.0f} /"
                f" {e['get_p1_wall']:,.0f} ({e['get_p1_wall_least']:,.0f}-"
                f"{e['get_p1_wall_most']:,.0f}) | {e['machine']} |"
            )
        lines += ["", "With I/O threads the server's CPU time counts the threads' polling, so"
                  " only the wall clock compares, and on 2 shared cores the I/O thread, the main"
                  " thread and the benchmark's client take turns on the same two cores: what"
                  " these rows can show is that the threads serve Warble's scripts and"
                  " pipelines, not how they scale. Larger nodes' gain is taken from published"
                  " figures (Prices used: IO_THREADS_GAIN), applied to the mix's I/O share"
                  " only."]  # fmt: skip
    return lines


def _load_section(inputs: Any) -> list[str]:
    load = inputs.load
    if not load:
        return [
            "",
            "(No load-test operation counts: `make load` writes"
            " bench/results/load-ops.json; the model uses the in-process counts alone.)",
        ]
    window = load.get("window") or {}
    measured = (f"{load['requests']:,} requests in a {window.get('measured_s', 0):.0f} s window"
                f" after a {window['warmup_s']} s warm-up; targets: {window.get('targets')}"
                if window.get("warmup_s") else
                f"{load['requests']:,} requests from a cold start")  # fmt: skip
    lines = ["", f"#### The load test's operation counts ({load['measured_at']}: "
             f"{measured}; {load['failures_5xx'] + window.get('warmup_failures_5xx', 0)} 5xx)",
             "",
             "| store | measured | predicted (per-call figures, the model's cache misses) |"
             " ratio (used) |",
             "|---|---:|---:|---:|"]  # fmt: skip
    for store, ratio in (load.get("ratio") or {}).items():
        lines.append(f"| {store} | {load['measured'][store]:,.0f} |"
                     f" {load['predicted'][store]:,.0f} | {ratio:.2f} |")  # fmt: skip
    return lines


def _hot_section(inputs: Any, n: Any) -> list[str]:
    from bench import capacity_model as cm

    keys = cm.hot_keys(inputs, cm.SCALES[-1], n)
    lines = ["", "#### Hot keys at 100M DAU (daily peak): every key above 50,000 commands/s",
             "", "| key | read by | before, ops/s | share of one shard | fix | after, ops/s |"
             " share of one shard |", "|---|---|---:|---:|---|---:|---:|"]  # fmt: skip
    for k in keys:
        if k["before"] < cm.HOT_KEY_LIMIT:
            continue
        lines.append(
            f"| `{k['key']}` | {k['who']} | {_si(k['before'])} | {k['share_before']:.0%} |"
            f" {k['fix']} | {_si(k['after'])} | {k['share_after']:.1%} |"
        )
    lines += [
        "",
        "#### Hot partitions at 100M DAU (daily peak)",
        "",
        "| partition or item | units/s | limit | then |",
        "|---|---:|---:|---|",
    ]
    for what, load, limit, then in cm.hot_partitions(cm.SCALES[-1]):
        flag = " **over**" if load > limit else ""
        lines.append(f"| {what} | {_si(load)}{flag} | {_si(limit)} | {then} |")
    return lines


def _nodes_section(inputs: Any, all_needs: list[Any]) -> list[str]:
    """The cache nodes a request touches and the connections, per profile (issue 41)."""
    from bench import capacity_model as cm

    made = [cm.connections(inputs, n, inputs.profiles.get(cm.PROFILES[n.dau], {}))
            for n in all_needs]  # fmt: skip
    head = "| item | " + " | ".join(f"{n.dau // 1_000_000}M DAU" for n in all_needs) + " |"
    rows = [
        ("cache primaries a client connects to (a serverless cache: one endpoint)",
         [f"{c.primaries:,}" for c in made]),
        (f"nodes a warm unread poll touches (its reader's tag, `{{cel}}`, `{{sys}}`: at most"
         f" {cm.READER_SLOTS}, whatever it follows)", [f"{c.unread_nodes}" for c in made]),
        (f"nodes a warm home read touches: those {cm.READER_SLOTS}, and the page's render"
         f" ({cm.PAGE_TWEETS} tweets' tags and about {cm.PAGE_RENDER_KEYS - cm.PAGE_TWEETS}"
         " authors' profiles, on random slots; expected)", [f"{c.home_nodes:.1f}" for c in made]),
        (f"connections one function environment holds (Lambda: {cm.LAMBDA_FILE_DESCRIPTORS:,}"
         " file descriptors)", [f"{c.per_environment:,}" for c in made]),
        (f"clients of one node at the event (every warm environment; {cm.NODE_MAX_CLIENTS:,} a"
         " node)", [_si(c.per_node_event) if c.per_node_event else "n/a" for c in made]),
        ("the celebrities' slot `{cel}` at the event, commands/s on its shard's replica (share of"
         " one node)",
         [f"{_si(c.celebrity_slot_event)} ({c.celebrity_slot_event / c.slot_capacity:.0%})"
          for c in made]),
    ]  # fmt: skip
    lines = ["", "#### The cache nodes a request touches, and the connections (issue 41)", "",
             "A reader's own keys (its home timeline, read position and celebrity list beside its"
             " session, blocks and mutes) share its tag, and every celebrity's recent set shares"
             " the tag `{cel}`, so the part of a home read or an unread poll that depends on whom"
             " the reader follows is three slots whatever it follows (counted from a server's"
             " own view in tests/integration/test_read_nodes.py, for 0 and 200 celebrities)."
             " Functions hold the celebrities' sets and keep them by the sets' log (one pipeline"
             " a second a container; a set is read again only when missing, or after an hour),"
             " through a client that reads from the shards' replicas (READONLY), so every"
             " container's copies cost the primaries nothing."
             " The page's render reads each tweet's tag and its author's profile: bounded by the"
             " page, not by the follows. Every environment keeps one connection to each primary"
             " it has used, and a render reaches random primaries, so over its life an"
             " environment connects to every primary, and every node serves every warm"
             " environment: the checks below hold those two counts under half of their fixed"
             " limits.", "", head, "|---|" + "---:|" * len(all_needs)]  # fmt: skip
    lines += [f"| {what} | " + " | ".join(values) + " |" for what, values in rows]
    return lines


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
    for item in sorted(costs[-1], key=lambda k: -costs[-1][k])[:5]:
        ax.plot(scales, [c[item] for c in costs], ":", label=f"Warble: {item}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("daily active users (millions)")
    ax.set_ylabel("US$ a month (us-east-1)")
    ax.set_title("Monthly AWS cost against daily users")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(CHART)
    plt.close(fig)


def doc_section(text: str) -> str:
    """What the document holds between the markers (the generated section)."""
    _, _, rest = text.partition(START)
    section, _, _ = rest.partition(END)
    return section.removeprefix("\n").removesuffix("\n")


def write_doc(section: str) -> None:
    text = DOC.read_text() if DOC.exists() else f"{START}\n{END}\n"
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{START}\n{section}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.capacity", description=__doc__)
    parser.add_argument("--model-only", action="store_true", help="reuse the last measurements")
    parser.add_argument(
        "--all",
        action="store_true",
        help="also run the celebrity sweep and the Redis throughput first",
    )
    parser.add_argument(
        "--with-results",
        action="store_true",
        help="with --model-only: first take into docs/capacity-measurements.json each other"
        " bench's result found in bench/results/ (the celebrity sweep, the Redis throughput,"
        " `make load`'s counts)",
    )
    parser.add_argument("--rounds", type=int, default=20, help="measured calls per route")
    parser.add_argument("--users", type=int, default=400, help="the measured population")
    args = parser.parse_args(argv)
    if args.all:
        from bench import celebrities, redis_throughput

        celebrities.main([])
        redis_throughput.main([])
    if args.model_only and args.with_results:
        saved = measurements_with(saved_measurements()["capacity"])
        MEASUREMENTS.write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n")
    elif args.model_only:
        saved = saved_measurements()
    else:
        m = measure(args.rounds, args.users)
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(m, indent=2))
        saved = measurements_with(m)
        MEASUREMENTS.write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n")
    section = report(saved["capacity"], inputs_from(saved))
    write_doc(section)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
