"""The load test's workload: Warble's API under a mixed load, driven by Locust.

    make load          # headless, bounded in time and requests, against `make run` + `make seed`

Each simulated user logs in as a seeded user (the population's manifest,
``bench/results/population.json``) and does what a daily user does, in the proportions below.

Where the mix comes from (requests per daily active user per day; the ratios between them are
the task weights):

| task | per DAU per day | source |
|---|---:|---|
| profile read | 100 | seed 000: "100M * 100 (100 times a day)" |
| home timeline page | 86 | seed 001 (issue 22): 300k/s at peak, ~100k/s mean, 100M DAU |
| unread counts | 9 | web/src/app.js (issue 41): pushed; read on connect, tab return, 10 live min |
| notifications page | 5 | assumption |
| tweet view | 20 | assumption: a fifth of the profile reads |
| post a tweet (15% replies) | 4 | seed 001 (issue 22): 4,600 tweets/s mean over 100M DAU |
| like | 20 | assumption: likes ~5x tweets |
| follow | 1 | assumption: seed 000's rare writes (0.1 a day) times a few |
| direct message (WebSocket) | 5 | assumption |
| Discover page | 1 | assumption: seed 003's feed, once a day |
| people search (a prefix of a name) | 5 | assumption: a search bar used a few times a day |
| hashtag page | 3 | assumption: a tag followed from a tweet or the trends |
| trends | 2 | assumption: the search page opened |
| login | 0.1 | seed 000: "100M * 0.1 (10 days once)"; once per simulated user |

(docs/capacity.md carries the same table with the reasoning.)
Reads are ~95% of the requests.

**Whom users look at.** The accounts a user views and follows are drawn Zipf-like over the
population ranked by followers (the seed's manifest, ``by_followers``: its celebrities first):
the account of rank r with weight 1 / r^s, ``LOAD_SKEW`` = s = 1 by default. That is the seed's
own popularity law (``infra/local/seed.py`` draws whom people follow with the same 1 / r, for
Twitter-like in-degrees), so an account is viewed in proportion to its followers; request
traces are Zipf-like with exponents near or below 1 (Breslau et al., "Web Caching and
Zipf-like Distributions", INFOCOM 1999). At s = 1 over 20,000 users the top 100 accounts take
half the views. ``LOAD_SKEW=0`` is the earlier draw (uniform, a twentieth to the celebrities):
nearly every view of it misses the profile cache, the cold-cache bound. Tweet views take tweets
from the viewer's home page, so they follow the graph already.

**The measured window.** ``LOAD_WARMUP`` (Locust's timespans: ``2m``) runs first; when it ends,
the warm-up's statistics go to ``<csv>_warmup_stats.csv`` and ``_failures.csv``, the stores'
counters are read (``bench.load.ops``, with ``LOAD_OPS_ARGS``: the stack's options) and Locust's
statistics are reset, so the CSV and ``bench/results/load-ops.json`` cover the same window, of
``LOAD_WINDOW``; then the run stops. Bounds: that, and ``LOAD_MAX_REQUESTS`` over the whole run
(the run stops after that many requests).

Every write's id goes to ``LOAD_WRITES`` (JSON lines), which ``bench/load/check.py`` checks
against the tables after the run, over the whole run. A probe user measures the fan-out lag
under load: it posts as an author with followers, then polls the home timeline of the follower
written last by the fan-out until the tweet is there ("FANOUT" in the stats).
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import random
import shlex
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import gevent
from locust import HttpUser, User, between, events, task
from locust.stats import PERCENTILES_TO_REPORT, StatsCSV
from locust.util.timespan import parse_timespan
from websocket import WebSocketException

from bench.load import ops  # `python -m locust` from the repository's root, as `make load` runs

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = Path(os.environ.get("LOAD_MANIFEST", ROOT / "bench/results/population.json"))
WRITES = Path(os.environ.get("LOAD_WRITES", ROOT / "bench/results/load-writes.jsonl"))
MAX_REQUESTS = int(os.environ.get("LOAD_MAX_REQUESTS", "0"))  # 0: no bound but the run time
SKEW = float(os.environ.get("LOAD_SKEW", "1"))  # Zipf exponent over follower rank; 0: uniform
WARMUP = parse_timespan(os.environ.get("LOAD_WARMUP") or "0")
WINDOW = parse_timespan(os.environ.get("LOAD_WINDOW") or "0")  # 0: until Locust stops the run
OPS_ARGS = os.environ.get("LOAD_OPS_ARGS")  # bench.load.ops's options; unset: no store counts

_population: dict[str, Any] | None = None
_ranked: tuple[list[str], list[float]] | None = None
_lock = threading.Lock()
_written: list[dict[str, Any]] = []
_requests = 0


def population() -> dict[str, Any]:
    global _population
    if _population is None:
        _population = json.loads(MANIFEST.read_text())
    return _population


def ranked() -> tuple[list[str], list[float]]:
    """Everyone, most followed first, with the cumulative Zipf weights of their ranks. A
    manifest from before ``by_followers`` gives its celebrities first, the rest as listed."""
    global _ranked
    if _ranked is None:
        doc = population()
        order = doc.get("by_followers")
        if not order:
            celebrities = [str(c) for c in doc.get("celebrities") or []]
            first = set(celebrities)
            order = celebrities + [u["id"] for u in doc["users"] if u["id"] not in first]
        weights = (1.0 / (rank + 1) ** SKEW for rank in range(len(order)))
        _ranked = list(order), list(itertools.accumulate(weights))
    return _ranked


def targets() -> str:
    """How targets are drawn, for bench/results/load-ops.json."""
    if not SKEW:
        return "uniform over the users, a twentieth of draws to the celebrities"
    by = "followers" if population().get("by_followers") else "celebrities first"
    return f"Zipf over the users ranked by {by}: rank r has weight 1/r^{SKEW:g}"


def record(kind: str, **fields: Any) -> None:
    with _lock:
        _written.append({"kind": kind, **fields})


@events.request.add_listener
def _count(**_: Any) -> None:
    global _requests
    _requests += 1
    if MAX_REQUESTS and _requests >= MAX_REQUESTS and _runner is not None:
        _runner.quit()


_runner: Any = None
_stack: dict[str, str] | None = None  # the stack's settings, for its stores' counters


@events.init.add_listener
def _init(environment: Any, **_: Any) -> None:
    global _runner, _stack
    _runner = environment.runner
    # An earlier run's warm-up and start are not this one's.
    if prefix := _csv_prefix(environment):
        for kind in ("stats", "failures"):
            Path(f"{prefix}_warmup_{kind}.csv").unlink(missing_ok=True)
    if OPS_ARGS is not None:
        ops.START.unlink(missing_ok=True)
        _stack = ops.stack(ops.options(["start", *shlex.split(OPS_ARGS)]))  # fails before the run


def _csv_prefix(environment: Any) -> str | None:
    return getattr(environment.parsed_options, "csv_prefix", None)


@events.test_start.add_listener
def _start(environment: Any, **_: Any) -> None:
    gevent.spawn(_phases, environment)


def _phases(environment: Any) -> None:
    """The warm-up, then the measured window: its statistics and store counters start together."""
    try:
        gevent.sleep(WARMUP)
        if WARMUP and (prefix := _csv_prefix(environment)):
            _save_warmup(environment, prefix)
        environment.runner.stats.reset_all()
        if _stack is not None:
            window = {"warmup_s": WARMUP, "window_s": WINDOW, "skew": SKEW, "targets": targets()}
            ops.start(_stack, window)
        gevent.sleep(WINDOW)
    finally:  # a failed snapshot ends the run too (bench.load.ops finish then finds no start)
        if WINDOW:
            environment.runner.quit()


def _save_warmup(environment: Any, prefix: str) -> None:
    """The warm-up's statistics, as Locust writes a run's (``make load`` checks its 5xx too)."""
    writer = StatsCSV(environment, PERCENTILES_TO_REPORT)
    for kind, write in (("stats", writer.requests_csv), ("failures", writer.failures_csv)):
        with open(f"{prefix}_warmup_{kind}.csv", "w", newline="") as out:
            write(csv.writer(out))


@events.test_stop.add_listener
def _dump(**_: Any) -> None:
    if OPS_ARGS is not None:
        ops.close_window(time.time())
    WRITES.parent.mkdir(parents=True, exist_ok=True)
    with _lock, WRITES.open("w") as out:
        for line in _written:
            out.write(json.dumps(line) + "\n")


def _login(client: Any, user: dict[str, str]) -> str:
    body = {"login": user["username"], "password": population()["password"], "device": "locust"}
    answer = client.post("/v1/auth/login", json=body, name="POST /v1/auth/login")
    answer.raise_for_status()
    return str(answer.json()["token"])


class DailyUser(HttpUser):
    """A seeded user's day, compressed: the weights are the per-DAU rates of the table above."""

    weight = 20
    wait_time = between(0.2, 1.0)

    def on_start(self) -> None:
        people = population()["users"]
        self.me = random.choice(people)
        token = _login(self.client, self.me)
        self.client.headers["Authorization"] = f"Bearer {token}"
        self.seen: list[str] = list(population().get("tweets_sample", [])[-200:])

    def _someone(self) -> str:
        if SKEW:
            order, cumulative = ranked()
            return random.choices(order, cum_weights=cumulative)[0]
        # The earlier draw: uniform, and a twentieth to the celebrities (the hot keys).
        people = population()["users"]
        celebrities = population().get("celebrities") or []
        if celebrities and random.random() < 0.05:
            return str(random.choice(celebrities))
        return str(random.choice(people)["id"])

    @task(100)
    def profile(self) -> None:
        self.client.get(f"/v1/users/{self._someone()}", name="GET /v1/users/{id}")

    @task(86)
    def home(self) -> None:
        answer = self.client.get("/v1/timeline/home?limit=20", name="GET /v1/timeline/home")
        if answer.ok:
            self.seen = [t["id"] for t in answer.json()["items"]] or self.seen

    @task(9)
    def unread(self) -> None:
        path = "/v1/notifications/unread-counts"
        self.client.get(path, name=f"GET {path}")

    @task(5)
    def notifications(self) -> None:
        self.client.get("/v1/notifications?limit=20", name="GET /v1/notifications")

    @task(20)
    def tweet(self) -> None:
        if self.seen:
            self.client.get(f"/v1/tweets/{random.choice(self.seen)}", name="GET /v1/tweets/{id}")

    @task(4)
    def post(self) -> None:
        body: dict[str, Any] = {"text": f"load {uuid.uuid4().hex[:8]} hello"}
        if self.seen and random.random() < 0.15:
            body["reply_to"] = random.choice(self.seen)
        key = uuid.uuid4().hex
        answer = self.client.post("/v1/tweets", json=body, headers={"Idempotency-Key": key},
                                  name="POST /v1/tweets")  # fmt: skip
        if answer.status_code == 201:
            record("tweet", id=answer.json()["id"], author=self.me["id"],
                   reply_to=body.get("reply_to"))  # fmt: skip

    @task(20)
    def like(self) -> None:
        if not self.seen:
            return
        tweet = random.choice(self.seen)
        answer = self.client.put(f"/v1/tweets/{tweet}/like", name="PUT /v1/tweets/{id}/like")
        if answer.ok:
            record("like", user=self.me["id"], tweet=tweet)

    @task(5)
    def search(self) -> None:
        # What a person types: the first letters of a name someone has (accents and case as
        # they come), or of a seeded username.
        names = population().get("display_names") or [u["username"] for u in population()["users"]]
        word = random.choice(random.choice(names).split())
        query = word[: random.randint(1, min(6, len(word)))]
        self.client.get("/v1/search/users", params={"q": query}, name="GET /v1/search/users")

    @task(3)
    def hashtag(self) -> None:
        tags = population().get("tags") or ["coffeemorning"]
        # The head of the long tail most often: what people click on is what people use.
        tag = tags[min(int(random.expovariate(0.1)), len(tags) - 1)]
        self.client.get(f"/v1/hashtags/{tag}/tweets", name="GET /v1/hashtags/{tag}/tweets")

    @task(2)
    def trends(self) -> None:
        self.client.get("/v1/trends", name="GET /v1/trends")

    @task(1)
    def follow(self) -> None:
        other = self._someone()
        if other == self.me["id"]:
            return
        with self.client.put(f"/v1/users/me/following/{other}", catch_response=True,
                             name="PUT /v1/users/me/following/{id}") as answer:  # fmt: skip
            if answer.status_code == 409:  # the follow limit: an answer, not a failure
                answer.success()
            elif answer.ok:
                record("follow", user=self.me["id"], other=other)

    @task(1)
    def discover(self) -> None:
        with self.client.get("/v1/discover?radius_km=50&limit=20", catch_response=True,
                             name="GET /v1/discover") as answer:  # fmt: skip
            if answer.status_code == 409:  # no location set (9 users in 10): API.md's answer
                answer.success()


class MessagingUser(User):
    """A participant of a seeded conversation, sending messages over the WebSocket API."""

    weight = 2
    wait_time = between(1.0, 3.0)
    # Not ``host``: Locust's --host sets every user class's host to the HTTP API.
    ws_url = os.environ.get("LOAD_WS", "ws://127.0.0.1:3001")
    api = os.environ.get("LOAD_HTTP", "http://127.0.0.1:3000")

    def on_start(self) -> None:
        import httpx

        conversations = population().get("conversations") or []
        self.ws = None
        self.token: str | None = None
        if not conversations:
            return
        self.conversation, a, _ = random.choice(conversations)
        me = next(u for u in population()["users"] if u["id"] == a)
        body = {"login": me["username"], "password": population()["password"], "device": "ws"}
        with httpx.Client(base_url=self.api, timeout=30) as client:  # not a Locust client
            answer = client.post("/v1/auth/login", json=body).raise_for_status()
        self.token = str(answer.json()["token"])
        self.me = a
        self._connect()

    def _connect(self) -> None:
        import websocket

        self.ws = websocket.create_connection(f"{self.ws_url}/?token={self.token}", timeout=30)

    def _reconnect(self) -> None:
        """Before a send without a socket: the load's users stay without (bench/chaos's connect
        again)."""

    def _lost(self) -> None:
        """The socket failed in a send: the load's users keep it (bench/chaos's drop it)."""

    def on_stop(self) -> None:
        if self.ws is not None:
            self.ws.close()

    @task
    def send(self) -> None:
        if self.ws is None:
            self._reconnect()
        if self.ws is None:
            return
        client_id = uuid.uuid4().hex
        frame = {"action": "sendMessage", "conversation_id": self.conversation,
                 "text": f"load {client_id[:8]}", "client_id": client_id}  # fmt: skip
        started = time.perf_counter()
        error: Exception | None = None
        message_id = None
        try:
            self.ws.send(json.dumps(frame))
            while True:  # pushes of other messages may come first
                raw = self.ws.recv()
                if not raw:  # a close frame
                    raise ConnectionResetError("the gateway closed the socket")
                answer = json.loads(raw)
                data = answer.get("data") or {}
                if answer.get("type") == "message_ack" and data.get("client_id") == client_id:
                    message_id = data["message"]["id"]
                    break
                if answer.get("type") == "error" and data.get("client_id") == client_id:
                    raise RuntimeError(data.get("code"))
        except (OSError, WebSocketException) as exc:
            error = exc
            self._lost()
        except (ValueError, KeyError, RuntimeError) as exc:
            error = exc
        events.request.fire(
            request_type="WS", name="sendMessage -> message_ack",
            response_time=(time.perf_counter() - started) * 1000, response_length=0,
            exception=error, context={},
        )  # fmt: skip
        if message_id is not None:
            record("message", conversation=self.conversation, id=message_id, sender=self.me)


class FanoutProbe(HttpUser):
    """Measures post -> the last follower's home timeline, under the load of the others."""

    fixed_count = 1
    wait_time = between(3.0, 5.0)

    def on_start(self) -> None:
        # The most followed author below the celebrity threshold is fanned out to the most.
        probe = population().get("probe")
        self.ready = probe is not None
        if not self.ready:
            return
        people = {u["id"]: u for u in population()["users"]}
        self.author_token = _login(self.client, people[probe["author"]])
        self.last_token = _login(self.client, people[probe["last_follower"]])
        # The follower's timeline must be built for the fan-out to reach it (a read builds it).
        self._home()

    def _home(self) -> list[str]:
        answer = self.client.get(
            "/v1/timeline/home?limit=5", headers={"Authorization": f"Bearer {self.last_token}"},
            name="GET /v1/timeline/home (probe)",
        )  # fmt: skip
        return [t["id"] for t in answer.json()["items"]] if answer.ok else []

    @task
    def probe(self) -> None:
        if not self.ready:
            return
        answer = self.client.post(
            "/v1/tweets", json={"text": f"probe {uuid.uuid4().hex[:8]}"},
            headers={"Authorization": f"Bearer {self.author_token}"},
            name="POST /v1/tweets (probe)",
        )  # fmt: skip
        if answer.status_code != 201:
            return
        tweet = answer.json()["id"]
        record("tweet", id=tweet, author=population()["probe"]["author"], reply_to=None)
        posted = time.perf_counter()
        error = None
        while tweet not in self._home():
            if time.perf_counter() - posted > 30:
                error = TimeoutError("not in the last follower's timeline after 30 s")
                break
            time.sleep(0.1)
        events.request.fire(
            request_type="FANOUT", name="post -> last follower's home",
            response_time=(time.perf_counter() - posted) * 1000, response_length=0,
            exception=error, context={},
        )  # fmt: skip
