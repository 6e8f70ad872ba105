"""The faults of issue 40, each done to a ChaosStack's own stores and undone: ``inject`` starts
it, ``restore`` ends it and returns when the store was back (``time.time()``), and ``check``
(where a fault has one) counts what its own side of the run left: the kills of a consumer, the
uploads and reset emails made during an S3 or SES outage, lost or sent twice."""

from __future__ import annotations

import io
import os
import random
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import redis

from bench.chaos.stack import DB_NAME, ChaosStack

FAULTS_PATH = "/_warble/faults"  # the local moto server's DynamoDB fault switch (branch faults)
DYNAMO_FAULTS = {"throttle": 0.1, "internal_error": 0.01}
BROWNOUT_MS = 3000  # every DynamoDB call, during the brownout
RESTART_PATH = "/_warble/restart"  # the WebSocket gateway's (infra/local/ws_gateway.py)
WS_DOWN_SECONDS = 5.0


class SwitchMissing(RuntimeError):
    """The local runtime has no such fault switch (yet): the scenario reports it, not a row."""


@dataclass(frozen=True)
class Fault:
    name: str
    what: str
    seconds: float  # how long the store stays faulty
    inject: Callable[[ChaosStack], None]
    restore: Callable[[ChaosStack], float]
    cluster: bool = False  # needs the stack on a Redis Cluster
    # What the fault's own side of the run left, once the load's checks are done: "lost" and
    # "duplicates" (lists of what), anything else is reported as it is.
    check: Callable[[ChaosStack], dict[str, Any]] | None = None


def _pause(stack: ChaosStack) -> None:
    assert stack.redis is not None and stack.redis.pid is not None
    os.kill(stack.redis.pid, signal.SIGSTOP)


def _resume(stack: ChaosStack) -> float:
    assert stack.redis is not None and stack.redis.pid is not None
    os.kill(stack.redis.pid, signal.SIGCONT)
    return time.time()


def _flush(stack: ChaosStack) -> None:
    assert stack.redis is not None
    with redis.Redis.from_url(stack.redis.url) as client:
        client.flushall()


def _now(_: ChaosStack) -> float:
    return time.time()


def _kill_primary(stack: ChaosStack) -> None:
    """SIGKILL a primary (not the seed node the functions were given): the cluster promotes
    its replica itself, after cluster-node-timeout."""
    assert stack.cluster is not None
    stack.cluster.kill_primary()


def _promoted(stack: ChaosStack) -> float:
    assert stack.cluster is not None
    stack.cluster.wait_for_primaries()
    return time.time()


def _terminate_backends(_: ChaosStack) -> None:
    """A writer failover as the functions see it: every connection of the stack's own database
    dropped (other databases' connections are left alone)."""
    with psycopg.connect(host="127.0.0.1", port=5432, user="postgres", autocommit=True) as pg:
        pg.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (DB_NAME,),
        )


def _cut(stack: ChaosStack) -> None:
    stack.proxy.cut()


def _reopen(stack: ChaosStack) -> float:
    stack.proxy.restore()
    return time.time()


def _throttle(stack: ChaosStack) -> None:
    answer = httpx.put(f"{stack.moto}{FAULTS_PATH}", json=DYNAMO_FAULTS, timeout=10)
    if answer.status_code in (404, 405, 501):  # no such route on this moto server
        raise SwitchMissing(f"switch not available (PUT {FAULTS_PATH}: {answer.status_code})")
    answer.raise_for_status()


def _unthrottle(stack: ChaosStack) -> float:
    httpx.delete(f"{stack.moto}{FAULTS_PATH}", timeout=10).raise_for_status()
    return time.time()


def _switch_off(stack: ChaosStack) -> float:
    """Off, keeping what the switch served (the faults answered, the calls slowed) for the row."""
    served = httpx.get(f"{stack.moto}{FAULTS_PATH}/served", timeout=10).raise_for_status().json()
    stack.scratch["served"] = served
    return _unthrottle(stack)


def _served(stack: ChaosStack) -> dict[str, Any]:
    return {"served": stack.scratch.get("served"), "lost": [], "duplicates": []}


def _switch(stack: ChaosStack, setting: dict[str, Any]) -> None:
    answer = httpx.put(f"{stack.moto}{FAULTS_PATH}", json=setting, timeout=10)
    if answer.status_code in (400, 404, 405, 501):  # no such route, or no such field
        raise SwitchMissing(f"switch not available (PUT {FAULTS_PATH} {setting}: {answer.text})")
    answer.raise_for_status()


# ---- fault 9: a brownout --------------------------------------------------------------------


def _brownout(stack: ChaosStack) -> None:
    _switch(stack, {"latency_ms": BROWNOUT_MS})


# ---- fault 6: a stream consumer's process killed mid-batch -----------------------------------

# The stream readers' code (their workers' working directory, as the local runtime starts them).
CONSUMERS = ("functions/fanout", "functions/reactions")
KILL_GAP = 4.0  # seconds between two kills of one reader: its retried batch gets through
SETTLED_WORKER = 3.0  # a worker seen this long has imported its handler: a busy one is in a batch


def _proc_stat(pid: int) -> list[str]:
    """/proc/<pid>/stat's fields after the command's name (state first)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _consumer_workers(parent: int) -> dict[int, str]:
    """The stream readers' worker processes of one `serve` (its children only: another stack's
    workers on the machine are never touched), by pid: which reader."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if int(_proc_stat(int(entry.name))[1]) != parent:
                continue
            cwd = os.readlink(entry / "cwd")
        except (OSError, IndexError, ValueError):
            continue
        reader = next((c for c in CONSUMERS if cwd.endswith(c)), None)
        if reader is not None:
            found[int(entry.name)] = reader.rsplit("/", 1)[1]
    return found


class _Killer(threading.Thread):
    """SIGKILLs a stream reader's worker while it works a batch (its CPU time growing between
    two looks 0.1 s apart, past its cold start), each reader at most once per ``KILL_GAP``."""

    def __init__(self, parent: int) -> None:
        super().__init__(daemon=True)
        self.parent = parent
        self.done = threading.Event()
        self.kills: list[dict[str, Any]] = []

    def run(self) -> None:
        seen: dict[int, tuple[float, int]] = {}  # pid: (first seen, CPU ticks at the last look)
        last_kill: dict[str, float] = {}
        while not self.done.wait(0.1):
            now = time.monotonic()
            for pid, reader in _consumer_workers(self.parent).items():
                try:
                    fields = _proc_stat(pid)
                except OSError:
                    continue
                ticks = int(fields[11]) + int(fields[12])  # utime + stime
                first, before = seen.get(pid, (now, ticks))
                seen[pid] = (first, ticks)
                busy = ticks > before and now - first >= SETTLED_WORKER
                if busy and now - last_kill.get(reader, -KILL_GAP) >= KILL_GAP:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        continue
                    last_kill[reader] = now
                    self.kills.append({"t": time.time(), "reader": reader, "pid": pid})


def _kill_consumers(stack: ChaosStack) -> None:
    killer = _Killer(stack.served.process.pid)
    stack.scratch["killer"] = killer
    stack.scratch["log_from"] = len(stack.served.output)
    killer.start()


def _stop_killing(stack: ChaosStack) -> float:
    killer: _Killer = stack.scratch["killer"]
    killer.done.set()
    killer.join()
    return time.time()


def _kills(stack: ChaosStack) -> dict[str, Any]:
    """The kills, and the batches the readers gave up on (sent to their failure queues after
    five retries: records a retry did not apply)."""
    killer: _Killer = stack.scratch["killer"]
    log = stack.served.output[stack.scratch["log_from"] :]
    given_up = [line.strip() for line in log if "sent to" in line and "records" in line]
    by_reader: dict[str, int] = {}
    for kill in killer.kills:
        by_reader[kill["reader"]] = by_reader.get(kill["reader"], 0) + 1
    return {
        "kills": by_reader,
        "mid_invocation": _unreported(log),
        "lost": given_up,
        "duplicates": [],
    }


def _unreported(log: list[str]) -> dict[str, int]:
    """The readers' invocations that ended without a REPORT in the runtime's log: those whose
    worker died under them (a kill that met an idle worker only costs the next one a cold
    start)."""
    ended: dict[str, str] = {}
    reported: set[str] = set()
    for line in log:
        for reader, function in (("fanout", "FanoutConsumer"), ("reactions", "ReactionsConsumer")):
            prefix = f"[{function}Function] "
            if line.startswith(f"{prefix}END RequestId: "):
                ended[line.split("RequestId: ", 1)[1].split()[0]] = reader
            elif line.startswith(f"{prefix}REPORT RequestId: "):
                reported.add(line.split("RequestId: ", 1)[1].split()[0])
    counts: dict[str, int] = {}
    for request, reader in ended.items():
        if request not in reported:
            counts[reader] = counts.get(reader, 0) + 1
    return counts


# ---- fault 7: the WebSocket gateway restarts -------------------------------------------------


def _restart_gateway(stack: ChaosStack) -> None:
    base = stack.served.ws.replace("ws://", "http://", 1).rstrip("/")
    answer = httpx.post(f"{base}{RESTART_PATH}", json={"down_seconds": WS_DOWN_SECONDS}, timeout=10)
    if answer.status_code in (404, 405):
        raise SwitchMissing(f"no restart on the gateway ({RESTART_PATH}: {answer.status_code})")
    answer.raise_for_status()


def _gateway_back(stack: ChaosStack) -> float:
    """When the gateway listens again (its port taking connections)."""
    import socket

    host, port = stack.served.ws.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, int(port)), timeout=1):
                return time.time()
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the WebSocket gateway did not listen again within a minute")


# ---- fault 8: S3 or SES unavailable ----------------------------------------------------------

S3_SES_FAULT = {"s3": 1.0, "s3_methods": ["GET"], "ses": 1.0}
SIDE_USERS = 3  # uploads and reset requests made during the outage, one each per user
# The retry queues' visibility for the run: the template's (360 s, 180 s) let a failed delivery
# come again after minutes; scaled down so the retries fall inside the run, with the receives
# (10, 5) still outlasting the fault, as the template's outlast an hour and 15 minutes.
QUICK_VISIBILITY = 6
SIDE_PATIENCE = 120.0  # seconds for an upload to be processed, a reset mailed, after the fault


def _photo() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (320, 240), (20, 120, 40)).save(out, "JPEG", quality=80)
    return out.getvalue()


def _queue_url(sqs: Any, stack: ChaosStack, suffix: str) -> str:
    return str(sqs.get_queue_url(QueueName=f"{stack.stack_name}-{suffix}")["QueueUrl"])


def _s3_ses_down(stack: ChaosStack) -> None:
    """Logs in a few seeded users and shortens the retry queues' visibility; then S3 fails
    every read (uploads are taken: the processing fails) and SES every call; meanwhile each
    user uploads a photo and asks for a password reset."""
    import json

    from infra.local.moto_server import aws_client

    sqs = aws_client("sqs", stack.moto)
    for suffix in ("media-retries", "password-reset"):
        sqs.set_queue_attributes(
            QueueUrl=_queue_url(sqs, stack, suffix),
            Attributes={"VisibilityTimeout": str(QUICK_VISIBILITY)},
        )
    people = json.loads(stack.manifest.read_text())
    chosen = random.Random(1).sample(people["users"], SIDE_USERS)
    sides: list[dict[str, Any]] = []
    with httpx.Client(base_url=stack.http, timeout=60) as api:
        for user in chosen:
            body = {"login": user["username"], "password": people["password"]}
            token = api.post("/v1/auth/login", json=body).raise_for_status().json()["token"]
            auth = {"Authorization": f"Bearer {token}"}
            email = api.get("/v1/users/me", headers=auth).raise_for_status().json()["email"]
            sides.append({"token": token, "email": email})
    _switch(stack, S3_SES_FAULT)
    data = _photo()
    with httpx.Client(base_url=stack.http, timeout=60) as api:
        for side in sides:
            auth = {"Authorization": f"Bearer {side['token']}"}
            form = api.post(
                "/v1/media", headers=auth,
                json={"content_type": "image/jpeg", "size": len(data), "alt_text": ""},
            ).raise_for_status().json()  # fmt: skip
            upload = form["upload"]
            sent = httpx.post(upload["url"], data=upload["fields"],
                              files={"file": ("file", data, "image/jpeg")}, timeout=60)  # fmt: skip
            side["media"] = form["media"]["id"]
            side["upload_status"] = sent.status_code
            reset = api.post("/v1/auth/password-reset", json={"email": side["email"]})
            side["reset_status"] = reset.status_code
    stack.scratch["sides"] = sides


def _mails(stack: ChaosStack, address: str) -> int:
    listed = httpx.get(f"{stack.moto}/_aws/ses", timeout=10).raise_for_status().json()
    return sum(1 for m in listed["messages"] if address in m["Destination"]["ToAddresses"])


def _s3_ses_left(stack: ChaosStack) -> dict[str, Any]:
    """Each upload made during the outage processed (ready), each reset mailed, once."""
    sides: list[dict[str, Any]] = stack.scratch["sides"]
    deadline = time.monotonic() + SIDE_PATIENCE
    with httpx.Client(base_url=stack.http, timeout=60) as api:
        while True:
            for side in sides:
                auth = {"Authorization": f"Bearer {side['token']}"}
                media = api.get(f"/v1/media/{side['media']}", headers=auth)
                side["media_status"] = media.json().get("status") if media.is_success else None
                side["mails"] = _mails(stack, side["email"])
            if time.monotonic() > deadline or all(
                s["media_status"] != "pending" and s["mails"] >= 1 for s in sides
            ):
                break
            time.sleep(2)
    time.sleep(QUICK_VISIBILITY)  # a second delivery of a reset would be mailed by now
    lost, twice = [], []
    for side in sides:
        side["mails"] = _mails(stack, side["email"])
        if side["media_status"] != "ready":
            lost.append(f"media {side['media']}: {side['media_status']}")
        if side["mails"] == 0 and side["reset_status"] == 202:
            lost.append(f"reset of {side['email']}: not mailed")
        if side["mails"] > 1:
            twice.append(f"reset of {side['email']}: mailed {side['mails']} times")
    return {
        "side": [{k: v for k, v in side.items() if k != "token"} for side in sides],
        "served": stack.scratch.get("served"),
        "lost": lost,
        "duplicates": twice,
    }


FAULTS = [
    Fault("cache-pause", "the cache stops answering 10 s (SIGSTOP)", 10, _pause, _resume),
    Fault("cache-flush", "the cache loses everything (FLUSHALL)", 0, _flush, _now),
    Fault(
        "cache-failover",
        "a cache primary dies, its replica takes over",
        0,
        _kill_primary,
        _promoted,
        cluster=True,
    ),
    Fault(
        "pg-terminate",
        "PostgreSQL connections dropped (pg_terminate_backend)",
        0,
        _terminate_backends,
        _now,
    ),
    Fault("pg-down", "PostgreSQL down 30 s (its proxy cut)", 30, _cut, _reopen),
    Fault("ddb-throttle", "DynamoDB throttles 10%, fails 1%", 20, _throttle, _unthrottle),
    Fault(
        "consumer-kill",
        "stream readers' workers SIGKILLed mid-batch for 20 s",
        20,
        _kill_consumers,
        _stop_killing,
        check=_kills,
    ),
    Fault(
        "ws-restart",
        f"the WebSocket gateway restarts (down {WS_DOWN_SECONDS:.0f} s)",
        1,  # the restart begins 50 ms after its 202: look for the port's return after it
        _restart_gateway,
        _gateway_back,
    ),
    Fault(
        "s3-ses",
        "S3 fails every read, SES every call, 20 s",
        20,
        _s3_ses_down,
        _switch_off,
        check=_s3_ses_left,
    ),
    Fault(
        "ddb-brownout",
        f"every DynamoDB call takes {BROWNOUT_MS / 1000:.0f} s, 20 s",
        20,
        _brownout,
        _switch_off,
        check=_served,
    ),
]
