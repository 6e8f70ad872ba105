"""Direct messages: reading (list page of 20, history page of 50) and real-time push.

``conversations``: ``GET /v1/conversations?limit=20`` and ``GET /v1/conversations/{id}/messages
?limit=50`` through the real ConversationsFunction handler (events from events/conversations/,
a real session's authorizer context), warm caches, a viewer with 25 conversations of 60
messages each. Baselines: the raw store reads each page needs (the activity LSI Query of 21
memberships + one MGET of the participants' profiles; the membership GetItem + the messages
Query of 51), and the breakdown adds the session check.

``push``: the local runtime (``python -m infra.local serve``, its WebSocket gateway and Lambda
workers) with real WebSocket clients:
- send -> receipt: the time from a ``sendMessage`` frame on the sender's connection until the
  ``message`` frame arrives on the recipient's open connection (WebSocketFunction: store,
  ack, push), against one raw ``@connections`` post to that connection, received the same way;
- push to a user with 5 connections (``Pusher.push`` in this process, against the same
  gateway and its connection registry): time until the posts are answered. The posts alone
  (the registry read swapped for the 5 known ids) against one raw post, one post through the
  push's own sender, and 5 raw posts in sequence (what a push one after another would cost);
  then the whole push against the raw registry Query plus one post, and plus 5 in sequence.
  All seven are measured in the same interleaved rounds. The user's 5 clients read their frames
  only between measurements (a client's work happens on its own machine).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench import stack
from bench.accounts import expect
from bench.harness import Benchmark, Item, Precomputed, Run, group

PASSWORD = "correct horse battery staple"
CONVERSATIONS = 25
MESSAGES = 60
LIST_PAGE = 20
HISTORY_PAGE = 50
DEVICES = 5


def _page_event(name: str, issued: Any, limit: int) -> dict[str, Any]:
    evt = stack.as_session(stack.event(name), issued)
    evt["rawQueryString"] = f"limit={limit}"
    evt["queryStringParameters"] = {"limit": str(limit)}
    return evt


@group("conversations", "conversation list page of 20 and history page of 50 vs raw reads")
def conversations_group(run: Run) -> Iterator[Item]:
    bench_stack = stack.shared(run)
    raw, ddb = stack.raw_clients(run, bench_stack)
    dm = Inbox(raw, ddb)
    yield conversation_list(dm)
    yield message_history(dm)


class Inbox:
    """A viewer with 25 conversations with friends, the first of 60 messages (the others of
    2), both pages' handler calls, warm (profiles cached), and a bare client of each store for
    the raw operations."""

    def __init__(self, raw: Any, ddb: Any) -> None:
        from warble import services
        from warble.settings import get_settings

        from bench.timeline import make_user

        self.raw, self.ddb, self.settings = raw, ddb, get_settings()
        accounts, graph, dms = services.accounts(), services.graph(), services.conversations()
        self.viewer_id = make_user("dm_viewer")
        self.viewer = accounts.login("dm_viewer", PASSWORD, "bench")
        conversation_ids = []
        for n in range(CONVERSATIONS):
            friend = make_user(f"dm_friend_{n}")
            graph.follow(self.viewer_id, friend)
            graph.follow(friend, self.viewer_id)
            body, _ = dms.open(self.viewer_id, friend)
            conversation = int(body.id)
            conversation_ids.append(conversation)
            for m in range(MESSAGES if n == 0 else 2):
                dms.send(friend if m % 2 else self.viewer_id, conversation, f"message {m} of {n}")
        self.busy = conversation_ids[0]

        handler = stack.load_function("conversations").handler
        self.list_page = expect(
            handler, _page_event("conversations/list.json", self.viewer, LIST_PAGE), 200
        )
        history_evt = stack.with_path_id(
            _page_event("conversations/messages.json", self.viewer, HISTORY_PAGE),
            "conversation_id",
            self.busy,
        )
        self.history_page = expect(handler, history_evt, 200)
        for call in (self.list_page, self.history_page):
            call()
            call()  # profiles cached
        self.session_check = stack.session_check(raw, self.viewer)


# ---- GET /v1/conversations?limit=20 -------------------------------------------------------------


def conversation_list(dm: Inbox) -> Benchmark:
    from warble import keys

    raw, ddb, settings, session_check = dm.raw, dm.ddb, dm.settings, dm.session_check
    shown = json.loads(dm.list_page()["body"])["items"]
    profile_keys = list(
        dict.fromkeys(keys.profile(int(p["id"])).value for c in shown for p in c["participants"])
    )

    def raw_list_query() -> Any:
        return ddb.query(
            TableName=settings.conversations_table,
            IndexName="activity",
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": f"U#{dm.viewer_id}"}},
            ScanIndexForward=False,
            Limit=LIST_PAGE + 1,
            ConsistentRead=True,
        )

    def raw_profiles() -> Any:  # as the page sends it: the MGET in a ReadBatch's pipeline
        pipe = raw.pipeline(transaction=False)
        pipe.mget(profile_keys)
        return pipe.execute()[0]

    def raw_list() -> None:
        raw_list_query()
        raw_profiles()

    def list_all() -> None:
        session_check()
        raw_list()

    return Benchmark(
        f"GET /v1/conversations?limit={LIST_PAGE} (ConversationsFunction handler)",
        dm.list_page,
        raw_list,
        path="handler",
        baseline=f"raw LSI Query ({LIST_PAGE + 1}) + MGET of the profiles",
        floor="raw session check + Query + MGET, in sequence",
        breakdown=[
            ("raw session check (pipeline)", session_check),
            (f"raw LSI Query, {LIST_PAGE + 1} memberships (moto)", raw_list_query),
            (f"raw MGET {len(profile_keys)} profiles", raw_profiles),
            ("raw session check + Query + MGET, in sequence", list_all),
        ],
        budget_s=6.0,
        check=lambda: stack.compare_traces(dm.list_page, list_all, "conversation list"),
        describe=lambda: [f"round trips of one warm call: {stack.traced(dm.list_page)}"],
        summarize=[
            Benchmark.difference(
                "handler", "raw session check + Query + MGET, in sequence", "handler overhead"
            )
        ],
        notes=[
            f"{CONVERSATIONS} conversations; last_message and unread_count come from the "
            "membership items, so the page reads no message"
        ],
    )


# ---- GET /v1/conversations/{id}/messages?limit=50 -----------------------------------------------


def message_history(dm: Inbox) -> Benchmark:
    ddb, settings, session_check, busy = dm.ddb, dm.settings, dm.session_check, dm.busy

    def raw_membership() -> Any:
        return ddb.get_item(
            TableName=settings.conversations_table,
            Key={"pk": {"S": f"U#{dm.viewer_id}"}, "sk": {"S": f"C#{busy}"}},
            ConsistentRead=True,
        )

    def raw_history_query() -> Any:
        return ddb.query(
            TableName=settings.messages_table,
            KeyConditionExpression="conversation_id = :c",
            ExpressionAttributeValues={":c": {"N": str(busy)}},
            ScanIndexForward=False,
            Limit=HISTORY_PAGE + 1,
            ConsistentRead=True,
        )

    def raw_history() -> None:
        raw_membership()
        raw_history_query()

    def history_all() -> None:
        session_check()
        raw_history()

    return Benchmark(
        f"GET /v1/conversations/{{id}}/messages?limit={HISTORY_PAGE} (ConversationsFunction)",
        dm.history_page,
        raw_history,
        path="handler",
        baseline=f"raw GetItem membership + Query ({HISTORY_PAGE + 1}) messages",
        floor="raw session check + GetItem + Query, in sequence",
        breakdown=[
            ("raw session check (pipeline)", session_check),
            ("raw GetItem membership (moto)", raw_membership),
            (f"raw Query, {HISTORY_PAGE + 1} messages (moto)", raw_history_query),
            ("raw session check + GetItem + Query, in sequence", history_all),
        ],
        budget_s=6.0,
        check=lambda: stack.compare_traces(dm.history_page, history_all, "history"),
        describe=lambda: [f"round trips of one warm call: {stack.traced(dm.history_page)}"],
        summarize=[
            Benchmark.difference(
                "handler", "raw session check + GetItem + Query, in sequence", "handler overhead"
            )
        ],
        notes=[f"a conversation of {MESSAGES} messages"],
    )


# ---- push, over the local runtime ---------------------------------------------------------------
def _rounds(run: Run, full: int) -> int:
    return max(5, round(full * min(1.0, run.scale)))


@group("push", "send -> receipt over the local WebSocket gateway; push to 5 connections")
def push_group(run: Run) -> Iterator[Item]:
    s = PushStack(run)
    yield send_to_receipt(run, s)
    samples = push_samples(run, s)
    yield push_posts(samples)
    yield push_with_registry(samples)


class PushStack:
    """The local runtime serving the template on its own stack and database, two friends with a
    conversation, each with an open WebSocket connection (sender and receiver), a bare
    ``@connections`` client of the same gateway, and the stack's connection registry."""

    def __init__(self, run: Run) -> None:
        import boto3
        import httpx

        from infra.local.database import drop_database
        from tests.support.local_stack import start_serve, stop_serve

        self._run = run
        db = f"warble_bench_push_{uuid.uuid4().hex[:6]}"
        env_file = Path(tempfile.mkdtemp()) / "env.json"
        self.stack_name = f"warble-bench-{uuid.uuid4().hex[:6]}"
        served = start_serve(
            env_file,
            {
                "Parameters": {
                    "DB_NAME": db,
                    # The bench's Redis (WARBLE_BENCH_REDIS_PORT), the index below the shared
                    # stack's: this stack's serve empties it at start.
                    "REDIS_URL": (
                        f"redis://127.0.0.1:{stack.BENCH_REDIS_PORT}/{stack.BENCH_REDIS_DB - 1}"
                    ),
                    "REDIS_CLUSTER": "false",
                    "DB_SSLMODE": "disable",
                    "PASSWORD_HASH_ROUNDS": "4",
                    # Repeated runs sign up from one address within the signup window.
                    **{k: v for k, v in stack.ENV.items() if k.startswith("RATE_LIMIT_")},
                }
            },
            extra_args=["--stack-name", self.stack_name],
            drop_env_prefixes=("AWS_", "DB_", "REDIS_"),
        )
        self.served = served
        run.cleanups.append(lambda: drop_database(db))

        def stop() -> None:
            with contextlib.suppress(subprocess.TimeoutExpired):  # killed when slow to stop
                stop_serve(served)

        run.cleanups.append(stop)
        self.http = httpx.Client(base_url=served.http, timeout=30)
        run.cleanups.append(self.http.close)

        (a, a_token), (self.b, b_token) = self.signup("pa"), self.signup("pb")
        auth_a = {"Authorization": f"Bearer {a_token}"}
        auth_b = {"Authorization": f"Bearer {b_token}"}
        http = self.http
        assert http.put(f"/v1/users/me/following/{self.b}", headers=auth_a).status_code == 200
        assert http.put(f"/v1/users/me/following/{a}", headers=auth_b).status_code == 200
        self.conversation = http.post(
            "/v1/conversations", json={"participant_id": self.b}, headers=auth_a
        ).json()["id"]

        fake = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
        self.ddb = boto3.client(
            "dynamodb", endpoint_url=served.moto, region_name="us-east-1", **fake
        )
        self.connections_table = f"{self.stack_name}-connections"
        self.sender, self.receiver = self.device(a_token), self.device(b_token)
        self.gateway = boto3.client(
            "apigatewaymanagementapi",
            endpoint_url=f"{served.ws.replace('ws://', 'http://')}/live",
            region_name="us-east-1",
            **fake,
        )
        run.cleanups.append(self.gateway.close)
        self.frame = json.dumps({"type": "message", "data": {"text": "bench"}}).encode()

    def signup(self, prefix: str) -> tuple[str, str]:
        name = f"{prefix}{uuid.uuid4().hex[:8]}"
        answer = self.http.post(
            "/v1/auth/signup",
            json={"username": name, "email": f"{name}@example.com", "password": PASSWORD},
        ).json()
        return answer["user"]["id"], answer["token"]

    def device(self, token: str) -> Any:
        from websockets.sync.client import connect

        ws = connect(f"{self.served.ws}/?token={token}", open_timeout=30, max_size=None)
        self._run.cleanups.append(ws.close)
        ws.send(json.dumps({"action": "ping"}))
        assert json.loads(ws.recv(timeout=30))["type"] == "pong"
        return ws

    def connection_ids(self, user: str) -> list[str]:
        items = self.ddb.query(
            TableName=self.connections_table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :conn)",
            ExpressionAttributeValues={":pk": {"S": f"USER#{user}"}, ":conn": {"S": "CONN#"}},
            ConsistentRead=True,
        )["Items"]
        return [item["connection_id"]["S"] for item in items]


def _until(ws: Any, wanted: str) -> None:
    while json.loads(ws.recv(timeout=30)).get("type") != wanted:
        pass


# ---- send -> receipt on the recipient's open connection ------------------------------------------


def send_to_receipt(run: Run, s: PushStack) -> Precomputed:
    (receiver_id,) = s.connection_ids(s.b)
    sender, receiver, gateway, frame = s.sender, s.receiver, s.gateway, s.frame

    def send() -> int:
        started = time.perf_counter_ns()
        sender.send(
            json.dumps(
                {"action": "sendMessage", "conversation_id": s.conversation, "text": "bench"}
            )
        )
        _until(receiver, "message")
        elapsed = time.perf_counter_ns() - started
        _until(sender, "message_ack")
        return elapsed

    def raw_post_to_receipt() -> int:
        started = time.perf_counter_ns()
        gateway.post_to_connection(ConnectionId=receiver_id, Data=frame)
        _until(receiver, "message")
        return time.perf_counter_ns() - started

    for _ in range(5):  # warm the workers
        send()
        raw_post_to_receipt()
    sends, posts = [], []
    for _ in range(_rounds(run, 60)):
        sends.append(send())
        posts.append(raw_post_to_receipt())
    return Precomputed(
        "send -> receipt on the recipient's open connection (sendMessage over the local runtime)",
        ("sendMessage frame -> message frame", sends),
        [("raw @connections post -> frame, same gateway and connection", posts)],
        notes=[
            "the path: gateway routes the frame, a WebSocketFunction worker checks the "
            "connection's owner and the permission, stores the message (one TransactWriteItems "
            "on moto), acks, then posts to the recipient; the sender's ack is not waited for"
        ],
        throughput=False,
    )


# ---- Pusher.push to a user with 5 connections, in this process ----------------------------------


def push_samples(run: Run, s: PushStack) -> dict[str, list[int]]:
    """The push and its raw baselines, every row in the same interleaved rounds. Another user's
    devices, read only between measurements: a client's own work (reading, inflating, parsing
    frames) runs on its own machine, not in the pushing Lambda, so the bench keeps it out of the
    timed window instead of letting it compete for this process."""
    gateway, frame = s.gateway, s.frame
    c, c_token = s.signup("pc")
    devices = _QuietDevices(s.served.ws, c_token, DEVICES)
    run.cleanups.append(devices.close)
    targets = s.connection_ids(c)
    assert len(targets) == DEVICES, targets
    devices.learn(targets, lambda t: gateway.post_to_connection(ConnectionId=t, Data=frame))

    # Run alone, the group has no shared stack to set the fake credentials the Pusher's clients use.
    local_aws = {k: v for k, v in stack.ENV.items() if k.startswith("AWS_")}
    local_aws["AWS_ENDPOINT_URL"] = s.served.moto
    saved = {k: os.environ.get(k) for k in local_aws}
    os.environ.update(local_aws)
    from warble import services
    from warble.dal.connections import ConnectionRegistry
    from warble.dal.websocket import POOL_CONNECTIONS, WebSocketSender
    from warble.domain.push.service import Pusher
    from warble.settings import Settings

    settings = Settings.from_environment(connections_table=s.connections_table)
    pool = ThreadPoolExecutor(max_workers=POOL_CONNECTIONS)  # as warble.services builds it
    run.cleanups.append(lambda: pool.shutdown(wait=False))
    callback = f"{s.served.ws.replace('ws://', 'http://')}/live"
    sender_of_push = WebSocketSender(callback, settings.aws_region)
    pusher = Pusher(ConnectionRegistry(settings), sender_of_push, pool)
    known = Pusher(_Known(targets), sender_of_push, pool)  # the same push, registry read left out
    body = {"type": "message", "data": {"text": "push"}}

    def timed(call: Any, received: list[str]) -> int:
        started = time.perf_counter_ns()
        call()
        elapsed = time.perf_counter_ns() - started
        devices.drain(received)  # every frame arrived, outside the timed window
        return elapsed

    def push() -> None:
        report = pusher.push([int(c)], body)
        assert report.delivered == DEVICES, report

    def push_known() -> None:
        report = known.push([int(c)], body)
        assert report.delivered == DEVICES, report

    def raw_post() -> None:
        gateway.post_to_connection(ConnectionId=targets[0], Data=frame)

    def sender_post() -> None:
        sender_of_push.send(targets[0], body)

    def raw_sequence() -> None:
        for target in targets:
            gateway.post_to_connection(ConnectionId=target, Data=frame)

    def raw_query() -> None:
        assert len(s.connection_ids(c)) == DEVICES

    ops: dict[str, tuple[Any, list[str]]] = {
        "push": (push, targets),
        "push, connections known": (push_known, targets),
        "one raw post": (raw_post, targets[:1]),
        "one post, push's sender": (sender_post, targets[:1]),
        "raw sequence": (raw_sequence, targets),
        "raw query + one post": (lambda: (raw_query(), raw_post()), targets[:1]),
        "raw query + seq": (lambda: (raw_query(), raw_sequence()), targets),
    }
    for _ in range(5):
        for call, received in ops.values():
            timed(call, received)
    samples: dict[str, list[int]] = {name: [] for name in ops}
    for _ in range(_rounds(run, 60)):  # interleaved: every row sees the same machine
        for name, (call, received) in ops.items():
            samples[name].append(timed(call, received))
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    # The registry above bound the connections model to this group's own stack: the next
    # group's container binds it back to the shared one.
    services.reset()
    return samples


def push_posts(samples: dict[str, list[int]]) -> Precomputed:
    return Precomputed(
        f"push to a user with {DEVICES} connections: the posts (Pusher.push, connections known)",
        ("Pusher.push, its 5 concurrent posts", samples["push, connections known"]),
        [
            ("one raw @connections post (boto3 client)", samples["one raw post"]),
            ("one post through the push's sender", samples["one post, push's sender"]),
            (f"{DEVICES} raw posts in sequence", samples["raw sequence"]),
        ],
        notes=[
            "goal: well under 5x one post",
            "the registry read is swapped out (a ConnectionStore holding the 5 ids), so this "
            "row is the fan-out alone",
            "locally a post is all CPU (the sender's, then the gateway's), with no network wait "
            "to overlap: concurrent posts can only overlap one side's CPU with the other's",
        ],
        throughput=False,
    )


def push_with_registry(samples: dict[str, list[int]]) -> Precomputed:
    return Precomputed(
        f"push to a user with {DEVICES} connections, registry read included (Pusher.push)",
        ("Pusher.push", samples["push"]),
        [
            ("raw registry Query + one raw post", samples["raw query + one post"]),
            (f"raw registry Query + {DEVICES} raw posts in sequence", samples["raw query + seq"]),
        ],
        notes=["the Query is one moto round trip (several ms locally), the same in every row"],
        throughput=False,
    )


class _Known:
    """A ConnectionStore that knows a user's connections without reading the registry."""

    def __init__(self, connection_ids: list[str]) -> None:
        self._ids = list(connection_ids)

    def for_user(self, user_id: int) -> list[str]:
        return list(self._ids)

    def remove(self, connection_id: str) -> str | None:
        return None


class _QuietDevices:
    """A user's WebSocket clients on an event loop that runs only in ``drain``: between drains
    no client code runs in this process, and frames wait in the socket buffers."""

    def __init__(self, ws_url: str, token: str, count: int) -> None:
        import asyncio

        from websockets.asyncio.client import connect

        self._loop = asyncio.new_event_loop()

        async def open_one() -> Any:
            ws = await connect(f"{ws_url}/?token={token}", open_timeout=30, max_size=None,
                               ping_interval=None)  # fmt: skip
            await ws.send(json.dumps({"action": "ping"}))
            while json.loads(await ws.recv(decode=True)).get("type") != "pong":
                pass
            return ws

        self._sockets = [self._loop.run_until_complete(open_one()) for _ in range(count)]
        self._by_connection: dict[str, Any] = {}

    def learn(self, connection_ids: list[str], post: Any) -> None:
        """Which socket is which connection: post to each id and see which socket receives."""
        import asyncio

        for connection_id in connection_ids:
            post(connection_id)

            async def first() -> Any:
                tasks = {asyncio.ensure_future(ws.recv()): ws for ws in self._sockets}
                done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                (task,) = done
                return tasks[task]

            self._by_connection[connection_id] = self._loop.run_until_complete(first())
        assert len(set(map(id, self._by_connection.values()))) == len(self._sockets)

    def drain(self, connection_ids: list[str]) -> None:
        """Receive the frame each of ``connection_ids`` was sent."""
        import asyncio

        async def receive() -> None:
            for connection_id in connection_ids:
                ws = self._by_connection[connection_id]
                frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
                assert frame.get("type") == "message", frame

        self._loop.run_until_complete(receive())

    def close(self) -> None:
        for ws in self._sockets:
            self._loop.run_until_complete(ws.close())
        self._loop.close()
