"""`make chaos`: issue 40's faults under the load test's traffic, one table row per fault.

    python -m bench.chaos                      # every fault
    python -m bench.chaos --only pg-down       # one (repeat --only for several)

The stack (bench/chaos/stack.py) runs on free ports with its own Redis (or Redis Cluster),
database and PostgreSQL proxy; the load test's users (bench/load/locustfile.py) drive it
through Locust, `--before` seconds, the fault, `--after` seconds. Then the checks of
bench/load/check.py (every acknowledged write in its table, every touched counter equal to a
recount once the streams settle, home timelines) and a count of notifications stored twice.
Each fault's picture goes to docs/chaos/<fault>.svg, the table to bench/results/chaos.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from bench.chaos import measure
from bench.chaos.faults import FAULTS, Fault, SwitchMissing
from bench.chaos.stack import ROOT, ChaosStack, start

PICTURES = ROOT / "docs/chaos"
RESULTS = ROOT / "bench/results"
HEADER = (
    "| fault | requests during | other than 2xx/503 | 503s (without Retry-After) | p99 ms "
    "| s to full service | writes lost | counters off | duplicate notifications |"
)


def _drive(stack: ChaosStack, work: Path, users: int) -> subprocess.Popen[bytes]:
    """Locust, headless, with the load test's users; every answer to ``work``/answers.jsonl.
    One user a second: a user whose login fails stops, and logins all at once on a busy
    machine each start a cold worker, past the deadline (503)."""
    env = {**os.environ, "LOAD_MANIFEST": str(stack.manifest), "LOAD_HTTP": stack.http,
           "LOAD_WS": stack.served.ws, "LOAD_WRITES": str(work / "writes.jsonl"),
           "CHAOS_ANSWERS": str(work / "answers.jsonl")}  # fmt: skip
    command = [sys.executable, "-m", "locust", "-f", "bench/chaos/locustfile.py", "--headless",
               "--host", stack.http, "-u", str(users), "-r", "1", "--only-summary",
               "--exit-code-on-error", "0", "--stop-timeout", "5"]  # fmt: skip
    log = (work / "locust.log").open("wb")
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def _wait_for_answers(path: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.stat().st_size):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no answer recorded in {timeout} s ({path})")
        time.sleep(0.5)


def _stop(locust: subprocess.Popen[bytes]) -> None:
    locust.send_signal(signal.SIGTERM)  # Locust stops its users, then writes what they wrote
    try:
        locust.wait(timeout=90)
    except subprocess.TimeoutExpired:
        locust.kill()
        locust.wait()


def _login(api: httpx.Client, body: dict[str, str], patience: float = 60) -> str | None:
    """A session for the checks, once the stack answers logins again (None: it did not)."""
    deadline = time.monotonic() + patience
    while True:
        answer = api.post("/v1/auth/login", json=body)
        if answer.status_code == 200:
            return str(answer.json()["token"])
        if time.monotonic() > deadline:
            return None
        time.sleep(2)


def verify(stack: ChaosStack, writes: Path, settle: float) -> dict[str, Any]:
    """bench/load/check.py's checks of what the load wrote, and notifications stored twice."""
    from bench.load import check

    env = stack.environment()
    os.environ.update(env)  # the stack's table names and moto's dummy credentials, as check's
    os.environ["LOAD_MANIFEST"] = str(stack.manifest)
    check._doc = None  # each stack has its own population
    lines = writes.read_text().splitlines() if writes.exists() else []
    recorded = [json.loads(line) for line in lines if line]
    tables = check.Tables(env, stack.moto)
    people = json.loads(stack.manifest.read_text())
    someone = random.Random(0).choice(people["users"])
    with httpx.Client(base_url=stack.http, timeout=60) as api:
        login = {"login": someone["username"], "password": people["password"]}
        token = _login(api, login)
        if token is None:
            return {"unchecked": "no login answered within a minute after the fault"}
        api.headers["Authorization"] = f"Bearer {token}"
        result = check.check_writes(recorded, tables, api, settle, sample=10)
    result["duplicates"] = measure.duplicate_notifications(tables.db, env["NOTIFICATIONS_TABLE"])
    return result


def scenario(stack: ChaosStack, fault: Fault, args: argparse.Namespace) -> dict[str, Any]:
    """Load, the fault, load; then the figures, the checks and the picture."""
    work = stack.directory / fault.name
    work.mkdir(parents=True, exist_ok=True)
    locust = _drive(stack, work, args.users)
    try:
        _wait_for_answers(work / "answers.jsonl")
        time.sleep(args.before)
        fault_at = time.time()
        try:
            fault.inject(stack)
        except SwitchMissing as missing:
            return {"fault": fault.name, "note": str(missing)}
        time.sleep(fault.seconds)
        back = fault.restore(stack)
        time.sleep(args.after)
        end = time.time()
    finally:
        _stop(locust)
    answers = measure.read_answers(work / "answers.jsonl")
    window = measure.Window(min(a["t"] for a in answers), fault_at, back, end)
    figures: dict[str, Any] = {"fault": fault.name, "store_away_s": round(back - fault_at, 1)}
    figures.update(measure.row(answers, window))
    checked = verify(stack, work / "writes.jsonl", args.settle)
    if "unchecked" in checked:
        figures.update(unchecked=checked["unchecked"])
    else:
        figures.update(
            writes=checked["writes"], lost=checked["lost"],
            counters_wrong=checked["counters_wrong"], timelines_wrong=checked["timelines_wrong"],
            duplicates=checked["duplicates"],
        )  # fmt: skip
    if fault.check is not None:
        own = fault.check(stack)
        figures["own"] = own
        if "unchecked" not in figures:
            figures["lost"] = [*figures["lost"], *own.get("lost", [])]
            figures["duplicates"] += len(own.get("duplicates", []))
    PICTURES.mkdir(parents=True, exist_ok=True)
    picture = measure.svg(fault.name, fault.what, answers, window)
    (PICTURES / f"{fault.name}.svg").write_text(picture)
    return figures


def table_row(figures: dict[str, Any]) -> str:
    if "note" in figures:
        return f"| {figures['fault']} | {figures['note']} |" + " |" * 7
    recovered = figures["recovery_s"]
    if "unchecked" in figures:
        checks = " | ".join(["not checked (no login)"] * 3) + " |"
    else:
        checks = (
            f"{len(figures['lost'])} | {len(figures['counters_wrong'])} | {figures['duplicates']} |"
        )
    return (
        f"| {figures['fault']} | {figures['requests']} | {figures['wrong']}"
        f"{' ' + json.dumps(figures['wrong_by_status']) if figures['wrong'] else ''}"
        f" | {figures['unavailable']} ({figures['without_retry_after']}) | {figures['p99_ms']}"
        f" | {'never' if recovered is None else recovered} | {checks}"
    )


def main(argv: list[str] | None = None) -> int:
    names = [fault.name for fault in FAULTS]
    parser = argparse.ArgumentParser(
        prog="python -m bench.chaos",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--only", action="append", choices=names, help="this fault (repeatable)")
    parser.add_argument("--before", type=float, default=20, help="seconds of load before")
    parser.add_argument("--after", type=float, default=20, help="seconds of load after")
    parser.add_argument("--users", type=int, default=8, help="Locust users")
    parser.add_argument("--settle", type=float, default=60, help="seconds for the streams")
    args = parser.parse_args(argv)
    chosen = [fault for fault in FAULTS if not args.only or fault.name in args.only]
    rows: list[dict[str, Any]] = []
    for on_cluster in (False, True):
        group = [fault for fault in chosen if fault.cluster == on_cluster]
        if not group:
            continue
        stack = start(cluster=on_cluster)
        try:
            for fault in group:
                rows.append(scenario(stack, fault, args))
                print(table_row(rows[-1]), flush=True)
        finally:
            stack.close()
    lines = [HEADER, "|---|" + "---:|" * 8, *(table_row(r) for r in rows)]
    print("\n".join(lines))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "chaos.md").write_text("\n".join(lines) + "\n")
    (RESULTS / "chaos.json").write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
