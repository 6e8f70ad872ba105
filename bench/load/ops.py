"""The load test's store operations, counted by the stores themselves, for the capacity model.

    python -m bench.load.ops start  [--env-vars FILE] [--endpoint-url URL]   # by hand
    python -m bench.load.ops finish [--env-vars FILE] [--endpoint-url URL]   # after Locust

``start`` reads the stack's Redis (INFO commandstats, INFO stats) and PostgreSQL
(pg_stat_database, and the sessions table's updated rows) counters. Under ``make load`` the
locustfile takes that snapshot itself (``start``) when its warm-up ends, with the window it
measures (warm-up, window, how targets are drawn), so the counts cover the warm window only,
as Locust's request counts do (they are reset at the same moment). ``finish`` waits for the
streams to settle (Redis quiet), reads them again before the check's own requests, and writes
``bench/results/load-ops.json``: what the run cost each store (Redis commands and bytes,
PostgreSQL transactions and the rows updated in ``sessions``: the ``last_seen_at`` touches,
counted apart), the requests Locust made by route, what the in-process measurement
(``bench/results/capacity.json``) predicts for those requests, and measured over predicted, which
``python -m bench.capacity`` then applies to every route's figure (docs/capacity.md, "The load
test's operation counts"). The stream consumers' work is in the measured counts, and is predicted
from each write's records. Run on a quiet machine with the stack alone: the counters are the
server's, so anything else using the same Redis or database counts too.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
START = RESULTS / "load-ops-start.json"
OUT = RESULTS / "load-ops.json"


def snapshot(env: dict[str, str]) -> dict[str, Any]:
    import psycopg
    import redis

    client = redis.Redis.from_url(env["REDIS_URL"])
    commands = {k.removeprefix("cmdstat_"): int(v["calls"])
                for k, v in client.info("commandstats").items()}  # fmt: skip
    stats = client.info("stats")
    info = f"host={env.get('DB_HOST', '127.0.0.1')} port={env.get('DB_PORT', '5432')}"
    info += f" dbname={env['DB_NAME']} user={env.get('DB_USER', 'postgres')}"
    if env.get("DB_PASSWORD"):
        info += f" password={env['DB_PASSWORD']}"
    with psycopg.connect(info, autocommit=True) as conn:
        xacts = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
            (env["DB_NAME"],),
        ).fetchone()
        sessions = conn.execute(
            "SELECT n_tup_upd, n_tup_ins FROM pg_stat_user_tables WHERE relname = 'sessions'"
        ).fetchone()
    return {
        "at": time.time(),
        "redis_commands": sum(v for k, v in commands.items() if k not in ("info", "ping")),
        "redis_by_command": commands,
        "redis_bytes": int(stats["total_net_input_bytes"]) + int(stats["total_net_output_bytes"]),
        "pg_transactions": int(xacts[0]) if xacts else 0,
        "sessions_updated": int(sessions[0]) if sessions else 0,
        "sessions_inserted": int(sessions[1]) if sessions else 0,
    }


def requests_by_route(csv_prefix: Path) -> dict[str, int]:
    with open(f"{csv_prefix}_stats.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {row["Name"]: int(row["Request Count"]) for row in rows if row["Name"] != "Aggregated"}


def _server_commands(cost: dict[str, Any]) -> float:
    """The commands the Redis server counted for a call (INFO commandstats: a script's inner
    calls too, as the stack's counters count them)."""
    server = cost.get("redis_server") or {}
    if not server:
        return float(cost["redis_commands"])
    return sum(float(calls) for name, (calls, _) in server.items() if name != "info")


def post_followers(population: dict[str, Any]) -> dict[str, float]:
    """The followers a post of each posting route reaches, in the seeded population: a daily
    user posts as a user drawn uniformly (the mean), the fan-out probe as its author."""
    counts = population.get("counts") or {}
    mean = float(counts.get("follows", 0)) / max(1, int(counts.get("users", 1)))
    out = {"POST /v1/tweets": mean}
    if population.get("probe"):
        out["POST /v1/tweets (probe)"] = float(population["probe"]["followers"])
    return out


def predicted(
    requests: dict[str, int], m: dict[str, Any], followers: dict[str, float] | None = None
) -> dict[str, float]:
    """What the model says those requests cost: each route's commands (as the server counts
    them) and queries, the model's cache misses of profile and tweet reads (``CACHE_MISS``, a
    profile's reading PostgreSQL: the ratio then corrects them too, instead of scaling them by
    a ratio that left them out), plus the consumers' per record for each write's records. A
    post's fan-out is priced at the followers it reached (``followers``, by posting route: the
    probe's author has a thousand and more), none of them with a home timeline built (seeded
    accounts that never read theirs), as the model prices it at scale with its own figures."""
    from bench import capacity_model as cm

    redis_cmds = pg = 0.0
    actions: dict[str, float] = {}
    posts: list[tuple[int, float]] = []
    for name, count in requests.items():
        route = name.replace(" (probe)", "")
        if route.startswith("WS") or route.startswith("sendMessage"):
            route = "WS sendMessage"
        cost = m["routes"].get(route)
        if cost is None:
            continue
        redis_cmds += count * _server_commands(cost)
        pg += count * float(cost["pg_queries"])
        mix = cm.ROUTE_MIX.get(route)
        if mix is not None and (miss := cm.miss_cost(mix)) is not None:
            redis_cmds += count * cm.CACHE_MISS * miss["redis_commands"]
            pg += count * cm.CACHE_MISS * miss["pg_queries"]
        if mix in cm.RECORDS:
            actions[mix] = actions.get(mix, 0.0) + count
        if mix == "post":
            reached = (followers or {}).get(name, float(m["mean_followers_measured"]))
            posts.append((count, reached))
    for action, consumers in cm._consumer_costs(m).items():
        for consumer, kind, cost in consumers:
            if action == "post":
                for count, reached in posts:
                    fanned = cm._fanout_adjusted(consumer, kind, cost, m, reached, built=0.0)
                    redis_cmds += count * _server_commands(fanned)
            else:
                redis_cmds += actions.get(action, 0.0) * _server_commands(cost)
            pg += actions.get(action, 0.0) * float(cost["pg_queries"])
    return {"redis": redis_cmds, "postgres": pg}


def settled(env: dict[str, str], most: float) -> dict[str, Any]:
    """The counters once the stream consumers are done: when Redis has served no more than a few
    commands in 4 s (or after ``most`` seconds)."""
    deadline = time.monotonic() + most
    last = snapshot(env)
    while time.monotonic() < deadline:
        time.sleep(4)
        now = snapshot(env)
        if now["redis_commands"] - last["redis_commands"] <= QUIET_COMMANDS:
            return now
        last = now
    return last


QUIET_COMMANDS = 20  # in 4 s: the snapshots' own and the pollers' idle traffic
SNAPSHOT_TRANSACTIONS = 2  # each snapshot's own queries


def start(env: dict[str, str], window: dict[str, Any] | None = None) -> None:
    """The counters where the measured window begins, with what the window is."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    START.write_text(json.dumps({**snapshot(env), "window": window or {}}))


def close_window(ended_at: float) -> None:
    """Records when Locust stopped (the window's end; ``finish`` snapshots after the streams)."""
    if START.exists():
        before = json.loads(START.read_text())
        before.setdefault("window", {})["ended_at"] = ended_at
        START.write_text(json.dumps(before))


def _window(before: dict[str, Any], csv_prefix: Path) -> dict[str, Any]:
    """What was measured: the warm-up before the window (its requests and 5xx, not counted in
    the window's), the window's planned and actual seconds, and how targets were drawn."""
    from bench.load.check import route_table

    window = dict(before.get("window") or {})
    ended = window.pop("ended_at", None)
    if ended is not None:
        window["measured_s"] = round(ended - before["at"], 1)
    warmup = Path(f"{csv_prefix}_warmup")
    if window.get("warmup_s") and Path(f"{warmup}_stats.csv").exists():
        window["warmup_requests"] = sum(requests_by_route(warmup).values())
        window["warmup_failures_5xx"] = route_table(warmup)[1].get("5xx", 0)
    return window


def finish(env: dict[str, str], csv_prefix: Path, settle: float) -> dict[str, Any]:
    from bench.load.check import route_table

    before = json.loads(START.read_text())
    after = settled(env, settle)
    requests = requests_by_route(csv_prefix)
    _, failures = route_table(csv_prefix)
    capacity = RESULTS / "capacity.json"
    m = json.loads(capacity.read_text()) if capacity.exists() else None
    touches = after["sessions_updated"] - before["sessions_updated"]
    measured = {
        "redis": after["redis_commands"] - before["redis_commands"],
        # last_seen_at touches are modelled apart (once per active minute): not in the ratio
        "postgres": after["pg_transactions"]
        - before["pg_transactions"]
        - touches
        - SNAPSHOT_TRANSACTIONS,
    }
    manifest = Path(os.environ.get("LOAD_MANIFEST", RESULTS / "population.json"))
    followers = post_followers(json.loads(manifest.read_text())) if manifest.exists() else {}
    expected = predicted(requests, m, followers) if m else {}
    by_command = {
        k: v - before["redis_by_command"].get(k, 0)
        for k, v in after["redis_by_command"].items()
        if v - before["redis_by_command"].get(k, 0) > 0
    }
    return {
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(before["at"])),
        "window": _window(before, csv_prefix),
        "seconds": round(after["at"] - before["at"], 1),  # to the settled streams
        "load_average": os.getloadavg()[0],
        "requests": sum(requests.values()),
        "requests_by_route": requests,
        "failures_5xx": failures.get("5xx", 0),
        "measured": measured,
        "post_followers": followers,
        "predicted": expected,
        "ratio": {k: measured[k] / expected[k] for k in measured if expected.get(k)},
        "redis_by_command": by_command,
        "redis_bytes": after["redis_bytes"] - before["redis_bytes"],
        "last_seen_updates": touches,
        "sessions_created": after["sessions_inserted"] - before["sessions_inserted"],
    }


def options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.load.ops", description=__doc__)
    parser.add_argument("step", choices=("start", "finish"))
    parser.add_argument("--csv", type=Path, default=RESULTS / "load")
    parser.add_argument("--endpoint-url", default="http://127.0.0.1:5005")
    parser.add_argument("--env-vars", default=None)
    parser.add_argument("--stack-name", default="warble-local")
    parser.add_argument("--settle", type=float, default=60.0, help="most seconds for the streams")
    args, _ = parser.parse_known_args(argv)
    return args


def stack(args: argparse.Namespace) -> dict[str, str]:
    """The running stack's settings (its Redis and database), as its functions see them."""
    from infra.local.stack_environment import stack_environment

    return stack_environment(argparse.Namespace(
        template="template.yaml", stack_name=args.stack_name, region="us-east-1",
        env_vars=args.env_vars, endpoint_url=args.endpoint_url,
    ))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = options(argv)
    env = stack(args)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.step == "start":
        start(env)
        return 0
    result = finish(env, args.csv, args.settle)
    OUT.write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if k != "redis_by_command"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
