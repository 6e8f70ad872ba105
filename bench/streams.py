"""Stream readers: store round trips per batch of 100 records, counted (not timed).

Each scenario writes 100 operations through the services (100 likes of 10 authors' tweets, 100
follows of 10 authors, 100 tweets by 25 followed authors, 100 replies that mention someone, 100
deleted tweets), taps the table's real stream and hands the records to each reader of that stream
as Lambda would (the mapping's FilterCriteria applied), warm (a batch of the same kind first):

- **new**: the reader's handler (functions/fanout, functions/reactions) on the whole batch;
- **old**: the consumers of the base tree (``WARBLE_STREAMS_BASE``, default dc784f3, the commit
  issue 29 reviewed: CounterConsumerFunction, TimelineFunction, TweetCleanupFunction and
  NotificationsConsumerFunction, one record at a time as they were written), each on a batch of
  the same kind with its own mapping's filter, in a child process running the base tree's shared
  layer against the same stores (``git archive``);
- **raw**: the batch's writes sent raw in the fewest calls: as many items as the new path wrote,
  in BatchWriteItems of 25, and as many Redis commands as it sent, in one pipeline.

Calls are counted by wrapping the clients' send paths (``bench.stack.trace_stores``; the
``@connections`` posts at botocore's HTTP session). The goal (issue 29): a batch of 100 costs at
most 10 DynamoDB calls and 3 Redis round trips in each reader, and the notification consumer's
100 likes within 1.5x its raw batched writes. The figures also go to
``bench/results/streams.json``, which the stream simulation (``bench/streams_sim.py``) reads.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Any

from bench import stack
from bench.harness import Item, Precomputed, Run, group

BATCH = 100
BASE = os.environ.get("WARBLE_STREAMS_BASE", "dc784f3")
RESULTS = stack.ROOT / "bench" / "results" / "streams.json"
# The base tree's consumers (functions/<dir>) by logical id.
OLD_FUNCTIONS = {
    "CounterConsumerFunction": "counters",
    "TimelineFunction": "timeline",
    "TweetCleanupFunction": "cleanup",
    "NotificationsConsumerFunction": "notifier",
}
NEW_FUNCTIONS = {"FanoutConsumerFunction": "fanout", "ReactionsConsumerFunction": "reactions"}


@dataclass
class Calls:
    """Store calls of one run: DynamoDB calls, Redis round trips (a pipeline is one), PostgreSQL
    queries, ``@connections`` posts; and what was written (for the raw baseline)."""

    dynamodb: int = 0
    redis: int = 0
    postgres: int = 0
    posts: int = 0
    items_written: int = 0
    redis_commands: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process's CPU (the consumer's own, not moto's or Redis's)
    detail: dict[str, int] = field(default_factory=dict)

    def add(self, other: Calls) -> None:
        for name in ("dynamodb", "redis", "postgres", "posts", "items_written", "redis_commands"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.seconds += other.seconds
        self.cpu_seconds += other.cpu_seconds
        for key, n in other.detail.items():
            self.detail[key] = self.detail.get(key, 0) + n


_WRITES = {"PutItem": 1, "UpdateItem": 1, "DeleteItem": 1}


@contextmanager
def counting() -> Iterator[Calls]:
    """Count the calls made inside the block (this process, every thread)."""
    import botocore.client
    from botocore.httpsession import URLLib3Session

    calls = Calls()
    originals: list[tuple[Any, str, Any]] = []

    def aws(original: Any) -> Any:
        def wrapped(self: Any, operation: str, params: Any) -> Any:
            if operation == "TransactWriteItems":
                calls.items_written += len(params.get("TransactItems", []))
            elif operation == "BatchWriteItem":
                calls.items_written += sum(len(v) for v in params.get("RequestItems", {}).values())
            else:
                calls.items_written += _WRITES.get(operation, 0)
            return original(self, operation, params)

        return wrapped

    def post(original: Any) -> Any:
        def wrapped(self: Any, request: Any) -> Any:
            if "/@connections/" in str(getattr(request, "url", "")):
                calls.posts += 1
            return original(self, request)

        return wrapped

    for owner, name, wrapper in (
        (botocore.client.BaseClient, "_make_api_call", aws),
        (URLLib3Session, "send", post),
    ):
        original = owner.__dict__[name]
        originals.append((owner, name, original))
        setattr(owner, name, wrapper(original))
    started, cpu = time.perf_counter(), time.process_time()
    try:
        with stack.trace_stores() as trace:
            yield calls
    finally:
        calls.seconds = time.perf_counter() - started
        calls.cpu_seconds = time.process_time() - cpu
        for owner, name, original in reversed(originals):
            setattr(owner, name, original)
    for call in trace.calls:
        kind, _, what = call.partition(" ")
        if kind == "dynamodb":
            calls.dynamodb += 1
        elif kind == "redis":
            calls.redis += 1
            calls.redis_commands += len(what.split()) if what.startswith("pipeline(") else 1
        elif kind == "postgres":
            calls.postgres += 1
        calls.detail[call if kind != "redis" else f"redis {what.split('(')[0]}"] = (
            calls.detail.get(call if kind != "redis" else f"redis {what.split('(')[0]}", 0) + 1
        )


# ---- the template's mappings: which records each reader gets ------------------------------------
def _filters(template_path: Path) -> dict[tuple[str, str], list[Any]]:
    """(function logical id, table logical id) -> its mapping's FilterCriteria patterns."""
    from infra.local.template import load_template

    template = load_template(template_path)
    out: dict[tuple[str, str], list[Any]] = {}
    for name, spec in template.functions.items():
        for event in spec.events.values():
            if not isinstance(event, dict) or event.get("Type") != "DynamoDB":
                continue
            props = event["Properties"]
            filters = (props.get("FilterCriteria") or {}).get("Filters", [])
            table = props["Stream"]["Fn::GetAtt"][0]
            out[(name, table)] = [json.loads(f["Pattern"]) for f in filters]
    return out


def _for(records: list[dict[str, Any]], patterns: list[Any]) -> list[dict[str, Any]]:
    from infra.local.event_filters import matches_filters

    return [r for r in records if matches_filters(r, patterns)]


# ---- the base tree's consumers, in a child process ----------------------------------------------
def _base_tree(run: Run) -> Path:
    def extract() -> Path:
        out = Path(tempfile.mkdtemp(prefix="warble-streams-base-"))
        archive = subprocess.run(
            ["git", "archive", BASE, "layers/shared", "functions", "template.yaml"],
            cwd=stack.ROOT, capture_output=True, check=True,
        ).stdout  # fmt: skip
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(out, filter="data")
        return out

    path: Path = run.resource("streams-base", extract)
    return path


_CHILD = """
import json, sys, importlib.util, warnings
base, root = sys.argv[1], sys.argv[2]
sys.path.insert(0, root)
from bench import stack
from bench.streams import counting
# bench.stack put this tree's shared layer first: the base tree's goes before it.
sys.path[:] = [base + "/layers/shared"] + [p for p in sys.path if p != str(stack.SHARED)]
warnings.filterwarnings("ignore", message="No application metrics to publish")
jobs = json.load(sys.stdin)
out = []
for job in jobs:
    spec = importlib.util.spec_from_file_location(
        "old_" + job["dir"], f"{base}/functions/{job['dir']}/app.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, f"{base}/functions/{job['dir']}")
    spec.loader.exec_module(module)
    if job["warm"]:
        module.handler({"Records": job["warm"]}, stack.Context())
    with counting() as calls:
        if job["records"]:
            module.handler({"Records": job["records"]}, stack.Context())
    out.append(calls.__dict__)
print("STREAMS-CHILD " + json.dumps(out))
"""


def _old(run: Run, jobs: list[dict[str, Any]]) -> list[Calls]:
    base = _base_tree(run)
    answer = subprocess.run(
        [sys.executable, "-c", _CHILD, str(base), str(stack.ROOT)],
        input=json.dumps(jobs), capture_output=True, text=True, cwd=stack.ROOT, env=os.environ,
        timeout=900,
    )  # fmt: skip
    line = next((x for x in answer.stdout.splitlines() if x.startswith("STREAMS-CHILD ")), None)
    if line is None:
        raise RuntimeError(f"the base tree's consumers failed:\n{answer.stderr[-4000:]}")
    return [Calls(**c) for c in json.loads(line.removeprefix("STREAMS-CHILD "))]


# ---- raw batched writes --------------------------------------------------------------------------
def _raw(ddb: Any, raw: Any, table: str, items: int, commands: int, serial: Iterator[int]) -> Calls:
    """``items`` items in BatchWriteItems of 25 and ``commands`` Redis SETs in one pipeline."""
    with counting() as calls:
        pending = [
            {"PutRequest": {"Item": {"pk": {"S": f"RAW#{next(serial)}"}, "sk": {"S": "x"},
                                     "kind": {"S": "like"}}}}
            for _ in range(items)
        ]  # fmt: skip
        for start in range(0, len(pending), 25):
            ddb.batch_write_item(RequestItems={table: pending[start : start + 25]})
        if commands:
            pipe = raw.pipeline(transaction=False)
            for _ in range(commands):
                pipe.set(f"bench:raw:{next(serial)}", "x", ex=60)
            pipe.execute()
    return calls


# ---- the scenarios -------------------------------------------------------------------------------
@dataclass
class World:
    authors: list[int]
    fans: list[int]
    followed: list[int]  # authors with followers whose timelines are built
    serial: Iterator[int]


def _world(run: Run) -> World:
    from warble import services

    from bench.timeline import make_user

    graph, timelines = services.graph(), services.timelines()
    serial = itertools.count(1)
    authors = [make_user(f"st_author{i}") for i in range(10)]
    fans = [make_user(f"st_fan{i}") for i in range(BATCH)]
    followed = [make_user(f"st_followed{i}") for i in range(25)]
    readers = [make_user(f"st_reader{i}") for i in range(12)]
    for author in followed:
        for reader in readers:
            graph.follow(reader, author)
    for reader in readers:
        timelines.rebuild(reader)
    # The authors of likes and replies have an open connection each (pushes go out).
    connections = services.container().connections
    for author in authors:
        connections.add(author, f"st-conn-{author}", int(time.time() * 1000), 7200)
    return World(authors, fans, followed, serial)


def _likes(world: World) -> Callable[[], None]:
    from warble import services

    def write() -> None:
        tweets, likes = services.tweets(), services.likes()
        liked = [int(tweets.post(a, f"like me {next(world.serial)}", None, []).id)
                 for a in world.authors]  # fmt: skip
        for i, fan in enumerate(world.fans):
            likes.like(fan, liked[i % len(liked)])

    return write


def _follows(world: World) -> Callable[[], None]:
    from warble import services

    from bench.timeline import make_user

    def write() -> None:
        graph, tweets, timelines = services.graph(), services.tweets(), services.timelines()
        followees = [make_user(f"st_followee{next(world.serial)}") for _ in range(10)]
        for followee in followees:
            tweets.post(followee, "backfill me", None, [])
        timelines.ensure_recent(followees)  # active authors: their recent sets are built
        for i, fan in enumerate(world.fans):
            graph.follow(fan, followees[i % len(followees)])

    return write


def _tweets(world: World) -> Callable[[], None]:
    from warble import services

    def write() -> None:
        tweets = services.tweets()
        for i in range(BATCH):
            tweets.post(world.followed[i % len(world.followed)], f"news {next(world.serial)}",
                        None, [])  # fmt: skip

    return write


def _replies(world: World) -> Callable[[], None]:
    from warble import services

    def write() -> None:
        tweets = services.tweets()
        originals = [int(tweets.post(a, f"reply to me {next(world.serial)}", None, []).id)
                     for a in world.authors]  # fmt: skip
        for i, fan in enumerate(world.fans):
            tweets.post(fan, f"@st_author{(i + 1) % 10} look at this", originals[i % 10], [])

    return write


def _deletes(world: World) -> Callable[[], None]:
    from warble import services

    def write() -> None:
        tweets = services.tweets()
        posted = [
            (a, int(tweets.post(a, f"gone soon {next(world.serial)}", None, []).id))
            for a in (world.followed[i % len(world.followed)] for i in range(BATCH))
        ]
        for author, tweet_id in posted:
            tweets.delete(author, tweet_id)

    return write


# (name, table, make writes, which records count: INSERT or REMOVE of the scenario's kind)
SCENARIOS: list[tuple[str, str, Callable[[World], Callable[[], None]], str]] = [
    ("100 likes of 10 authors' tweets", "LikesTable", _likes, "INSERT"),
    ("100 follows of 10 authors", "GraphTable", _follows, "INSERT"),
    ("100 tweets by 25 authors with 12 followers", "TweetsTable", _tweets, "INSERT"),
    ("100 replies mentioning someone", "TweetsTable", _replies, "INSERT"),
    ("100 deleted tweets", "TweetsTable", _deletes, "REMOVE"),
]


class Tap:
    """The records written to a table's stream since the last ``drain``, in Lambda's shape."""

    def __init__(self, table: str) -> None:
        import boto3

        arn = boto3.client("dynamodb").describe_table(TableName=table)["Table"]["LatestStreamArn"]
        self._arn, self._streams = arn, boto3.client("dynamodbstreams")
        shard = self._streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
        self._iterator: str | None = self._streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="LATEST"
        )["ShardIterator"]

    def drain(self) -> list[dict[str, Any]]:
        from infra.local.stream_records import to_lambda_record

        records: list[dict[str, Any]] = []
        while self._iterator:
            answer = self._streams.get_records(ShardIterator=self._iterator, Limit=1000)
            records += [to_lambda_record(raw, self._arn) for raw in answer["Records"]]
            self._iterator = answer.get("NextShardIterator")
            if not answer["Records"]:
                break
        return records


def _records(tap: Any, write: Callable[[], None], event_name: str) -> list[dict[str, Any]]:
    tap.drain()
    write()
    return [r for r in tap.drain() if r["eventName"] == event_name]


@group("streams", "stream readers: store calls per batch of 100 (new, old per record, raw)")
def streams_group(run: Run) -> Iterator[Item]:
    bench_stack = stack.shared(run)
    raw, ddb = stack.raw_clients(run, bench_stack)
    world = _world(run)
    new_filters = _filters(stack.ROOT / "template.yaml")
    old_filters = _filters(_base_tree(run) / "template.yaml")
    handlers = {name: stack.load_function(d).handler for name, d in NEW_FUNCTIONS.items()}
    summary: list[dict[str, Any]] = []
    for title, table, make, event_name in SCENARIOS:
        if run.only and not any(text in title for text in run.only):
            continue
        write = make(world)
        tap = Tap(bench_stack.tables[table])
        # Four batches of the same kind: warm-up and measured for each tree.
        batches = [_records(tap, write, event_name) for _ in range(4)]
        for reader in NEW_FUNCTIONS:
            patterns = new_filters.get((reader, table))
            if patterns is None:
                continue
            warm, measured = (_for(b, patterns)[:BATCH] for b in batches[:2])
            handlers[reader]({"Records": warm}, stack.Context())
            with counting() as new:
                answer = handlers[reader]({"Records": measured}, stack.Context())
            assert answer == {"batchItemFailures": []}, answer
            olds = [
                name for name in OLD_FUNCTIONS
                if (name, table) in old_filters and _old_owner(name) == reader
            ]  # fmt: skip
            jobs = [
                {"dir": OLD_FUNCTIONS[name],
                 "warm": _for(batches[2], old_filters[(name, table)])[:BATCH],
                 "records": _for(batches[3], old_filters[(name, table)])[:BATCH]}
                for name in olds
            ]  # fmt: skip
            old = Calls()
            try:
                for calls in _old(run, jobs) if jobs else []:
                    old.add(calls)
            except RuntimeError as exc:
                # The base tree cannot read every item today's code writes (a tweet's media,
                # cached): its row says so, and the new reader's counts still stand.
                print(str(exc)[:2000], file=sys.stderr)
                olds = [f"{name} (failed: see the run's log)" for name in olds]
            baseline = _raw(
                ddb, raw, bench_stack.tables["NotificationsTable"], new.items_written,
                new.redis_commands, world.serial,
            )  # fmt: skip
            row = _row(title, reader, len(measured), new, old, baseline, olds)
            summary.append(row)
            yield Precomputed(
                f"{reader} <- {title}",
                ("new reader, one batch", [int(new.seconds * 1e9)]),
                baselines=[
                    ("old consumers, per record", [int(max(old.seconds, 1e-6) * 1e9)]),
                    ("raw batched writes", [int(baseline.seconds * 1e9)]),
                ],
                notes=_notes(row),
            )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"base": BASE, "rows": summary}, indent=1))
    print(markdown(summary))


def _old_owner(old_function: str) -> str:
    """Which new reader took over an old consumer's work."""
    if old_function in ("CounterConsumerFunction", "TimelineFunction"):
        return "FanoutConsumerFunction"
    return "ReactionsConsumerFunction"


def _row(
    title: str, reader: str, records: int, new: Calls, old: Calls, raw: Calls, olds: list[str]
) -> dict[str, Any]:
    raw_calls = raw.dynamodb + raw.redis
    return {
        "scenario": title,
        "reader": reader,
        "records": records,
        "old_consumers": olds,
        "new": asdict(new),
        "old": asdict(old),
        "raw": asdict(raw),
        "ratio_to_raw": (new.dynamodb + new.redis) / raw_calls if raw_calls else None,
        "goal_met": new.dynamodb <= 10 and new.redis <= 3,
    }


def _notes(row: dict[str, Any]) -> list[str]:
    new, old, raw = row["new"], row["old"], row["raw"]
    ratio = row["ratio_to_raw"]
    return [
        f"{row['records']} records. new: {new['dynamodb']} DynamoDB calls, {new['redis']} Redis "
        f"round trips, {new['postgres']} PostgreSQL queries, {new['posts']} posts; old "
        f"({', '.join(row['old_consumers']) or 'none'}): {old['dynamodb']} / {old['redis']} / "
        f"{old['postgres']} / {old['posts']}; raw: {raw['dynamodb']} BatchWriteItems for "
        f"{new['items_written']} items + {raw['redis']} pipeline of {new['redis_commands']}",
        f"calls / raw batched writes: {ratio:.2f}x" if ratio is not None else "no writes",
        "goal (<= 10 DynamoDB calls, <= 3 Redis round trips): "
        + ("met" if row["goal_met"] else "MISSED"),
        "new calls: " + ", ".join(f"{k} x{n}" for k, n in sorted(new["detail"].items())),
    ]


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| reader <- batch | records | new: DynamoDB / Redis / PG / posts | old per record: "
        "DynamoDB / Redis / PG / posts | raw: DynamoDB / Redis | new / raw | goal |",
        "|---|---:|---|---|---|---:|---|",
    ]
    for r in rows:
        n, o, w = r["new"], r["old"], r["raw"]
        ratio = f"{r['ratio_to_raw']:.2f}x" if r["ratio_to_raw"] is not None else "n/a"
        lines.append(
            f"| {r['reader'].removesuffix('ConsumerFunction')} <- {r['scenario']} | "
            f"{r['records']} | {n['dynamodb']} / {n['redis']} / {n['postgres']} / {n['posts']} | "
            f"{o['dynamodb']} / {o['redis']} / {o['postgres']} / {o['posts']} | "
            f"{w['dynamodb']} / {w['redis']} | {ratio} | {'met' if r['goal_met'] else 'MISSED'} |"
        )
    return "\n".join(lines)
