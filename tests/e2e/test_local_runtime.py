"""End-to-end tests of the local runtime itself, against a small fixture template.

`python -m infra.local serve` runs for real (moto, Lambda workers, both gateways) with
tests/fixtures/runtime/template.yaml, and is driven with real HTTP, WebSocket and boto3 clients.
The LambdaRuntime tests at the end run the worker processes directly.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import boto3
import httpx
import pytest
import websockets

from infra.local.lambdas import LambdaRuntime
from infra.local.template import ResolveContext, load_template
from tests.support.local_stack import start_serve, stop_serve

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "runtime"
TEMPLATE = FIXTURE / "template.yaml"


@dataclass
class FixtureStack:
    served: FixtureStack
    markers: Path

    @property
    def http(self) -> str:
        return self.served.http

    @property
    def ws(self) -> str:
        return self.served.ws

    @property
    def moto(self) -> str:
        return self.served.moto

    @property
    def process(self) -> subprocess.Popen[str]:
        return self.served.process

    @property
    def output(self) -> list[str]:
        return self.served.output

    @property
    def callback_url(self) -> str:
        return self.ws.replace("ws://", "http://") + "/fixture"

    def management(self):
        return boto3.client(
            "apigatewaymanagementapi",
            endpoint_url=self.callback_url,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )


def _start(tmp: Path, extra_args: list[str] | None = None) -> FixtureStack:
    markers = tmp / "markers"
    markers.mkdir()
    env_vars = {
        "Parameters": {"MARKER_DIR": str(markers), "NOT_DECLARED": "x"},
        "EnvFunction": {"ENV_ONLY": "overridden"},
    }
    served = start_serve(
        tmp / "env.json",
        env_vars,
        template=TEMPLATE,
        extra_args=["--no-schedules", *(extra_args or [])],
        timeout=30,
    )
    return FixtureStack(served, markers)


def _stop(stack: FixtureStack) -> int:
    return stop_serve(stack.served)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureStack]:
    served = _start(tmp_path_factory.mktemp("runtime"))
    yield served
    _stop(served)


@pytest.fixture
def http(served: FixtureStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.http, timeout=20) as client:
        yield client


def _echo(response: httpx.Response) -> dict:
    assert response.status_code == 200, response.text
    return response.json()


# --------------------------------------------------------------------------------------------
# HTTP API
# --------------------------------------------------------------------------------------------


def test_routes_match_like_api_gateway(http: httpx.Client) -> None:
    # Given the fixture's routes, when requests arrive, then the most specific route handles them.
    special = _echo(http.get("/items/special"))["event"]
    assert special["routeKey"] == "GET /items/special"
    assert "pathParameters" not in special

    item = _echo(http.get("/items/a%20b?x=1&x=2"))["event"]
    assert item["routeKey"] == "GET /items/{item_id}"
    assert item["pathParameters"] == {"item_id": "a b"}
    assert item["queryStringParameters"] == {"x": "1,2"}
    assert item["rawQueryString"] == "x=1&x=2"

    proxy = _echo(
        http.post(
            "/proxy/a/b",
            headers={"Authorization": "t", "Cookie": "c1=1; c2=2"},
            content=b'{"k": "v"}',
        )
    )["event"]
    assert proxy["routeKey"] == "ANY /proxy/{proxy+}"
    assert proxy["pathParameters"] == {"proxy": "a/b"}
    assert proxy["cookies"] == ["c1=1", "c2=2"]
    assert proxy["body"] == '{"k": "v"}'
    assert proxy["requestContext"]["http"]["method"] == "POST"


def test_unmatched_requests_go_to_the_default_route(http: httpx.Client) -> None:
    response = http.get("/no/such/path")
    assert response.status_code == 404
    assert response.json() == {"fallback": True, "routeKey": "$default"}
    # A known path with another method is not matched either: it also reaches $default.
    assert http.delete("/public").json()["routeKey"] == "$default"


def test_handler_exception_is_a_500_and_the_worker_stays_warm(http: httpx.Client) -> None:
    boom = http.get("/boom")
    assert boom.status_code == 500
    assert boom.json() == {"message": "Internal Server Error"}
    assert boom.headers["apigw-requestid"]
    assert http.get("/no/such/path").status_code == 404  # same function, still serving


def test_warm_reuse_keeps_module_state(http: httpx.Client) -> None:
    first = _echo(http.get("/public"))
    second = _echo(http.get("/public"))
    assert second["count"] == first["count"] + 1
    assert second["pid"] == first["pid"]
    # Powertools' inject_lambda_context got a complete context object.
    assert second["context"]["function_name"] == "EchoFunction"
    assert second["context"]["memory_limit_in_mb"] == "256"
    assert 0 < second["context"]["remaining"] <= 5000


def test_each_function_has_its_own_environment(http: httpx.Client, served: FixtureStack) -> None:
    env_answer = _echo(http.get("/env"))
    env = env_answer["env"]
    assert env["ENV_ONLY"] == "overridden"  # the function's own section of --env-vars
    assert env["FLAVOUR"] == "plain"
    assert env["SHARED"] == "global"
    assert env["MARKER_DIR"] == str(served.markers)  # Parameters section
    assert "NOT_DECLARED" not in env  # like sam local: undeclared variables are not added
    assert "ECHO_ONLY" not in env and "DROPPED" not in env
    assert env["AWS_LAMBDA_FUNCTION_NAME"] == "EnvFunction"
    assert env["AWS_LAMBDA_FUNCTION_VERSION"] == "$LATEST"
    assert env["AWS_SAM_LOCAL"] == "true"
    assert env["_HANDLER"] == "app.handler"
    assert env["AWS_ENDPOINT_URL"] == served.moto
    assert env["ITEMS_TABLE"] == "warble-local-items"
    assert env["WEBSOCKET_CALLBACK_URL"] == served.callback_url
    assert env_answer["cwd"] == str(FIXTURE / "envfn")
    assert env_answer["sys_path"][0] == str(FIXTURE / "envfn")

    echo_env = _echo(http.get("/public"))["env"]
    assert echo_env["ECHO_ONLY"] == "echo"
    assert echo_env["SHARED"] == "echo-wins"
    assert echo_env["ENV_ONLY"] is None


def test_timeout_kills_the_invocation(http: httpx.Client) -> None:
    started = time.monotonic()
    response = http.get("/slow")
    assert response.status_code == 500
    assert response.json() == {"message": "Internal Server Error"}
    assert 0.9 < time.monotonic() - started < 2.5  # the function's Timeout is 1 s


def test_binary_and_cookie_responses(http: httpx.Client) -> None:
    binary = http.get("/public", params={"mode": "binary"})
    assert binary.content == b"\x00\x01\x02\xff"
    cookies = http.get("/public", params={"mode": "cookies"})
    assert cookies.status_code == 201
    assert cookies.headers.get_list("set-cookie") == ["a=1", "b=2; Path=/"]
    assert cookies.text == "plain text"
    inferred = http.get("/public", params={"mode": "raw"})
    assert inferred.headers["content-type"] == "application/json"
    assert inferred.json()["raw"] is True


def test_cors_preflight_and_headers(http: httpx.Client) -> None:
    # CorsConfiguration: API Gateway answers preflights itself, without calling the function.
    preflight = http.options(
        "/items/1",
        headers={"Origin": "https://app.example", "Access-Control-Request-Method": "GET"},
    )
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == "https://app.example"
    assert preflight.headers["access-control-allow-methods"] == "GET,POST"
    assert preflight.headers["access-control-allow-headers"] == "Authorization,Content-Type"
    assert preflight.headers["access-control-max-age"] == "60"
    answer = http.get("/public", headers={"Origin": "https://app.example"})
    assert answer.headers["access-control-allow-origin"] == "https://app.example"
    assert answer.headers["access-control-expose-headers"] == "Retry-After"
    stranger = http.get("/public", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in stranger.headers
    assert "connection" not in stranger.json()["event"]["headers"]


# --------------------------------------------------------------------------------------------
# WebSocket API
# --------------------------------------------------------------------------------------------


def _wait_for(path: Path, timeout: float = 10) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return json.loads(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path.name} never appeared")


def test_connect_is_refused_when_connect_answers_non_2xx(served: FixtureStack) -> None:
    async def scenario() -> None:
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with websockets.connect(served.ws + "/?token=bad"):
                pass
        assert refused.value.response.status_code == 403

    asyncio.run(scenario())


def test_messages_route_by_action_and_management_api_works(served: FixtureStack) -> None:
    client = served.management()

    async def scenario() -> str:
        async with websockets.connect(served.ws + "/?token=good") as socket:
            # Two-way route (it has a RouteResponse): the handler's body comes back.
            await socket.send(json.dumps({"action": "ping"}))
            assert json.loads(await asyncio.wait_for(socket.recv(), 10)) == {
                "type": "pong",
                "route": "ping",
            }
            # Unknown action: $default, whose handler pushes through @connections with boto3.
            await socket.send(json.dumps({"action": "whatever", "n": 1}))
            echo = json.loads(await asyncio.wait_for(socket.recv(), 10))
            assert echo["route"] == "$default"
            assert json.loads(echo["body"]) == {"action": "whatever", "n": 1}

            connect = next(served.markers.glob("connect-*.json"))
            connection_id = json.loads(connect.read_text())["requestContext"]["connectionId"]

            info = await asyncio.to_thread(client.get_connection, ConnectionId=connection_id)
            assert info["Identity"]["SourceIp"] == "127.0.0.1"
            assert info["ConnectedAt"] <= info["LastActiveAt"]

            await asyncio.to_thread(
                client.post_to_connection, ConnectionId=connection_id, Data=b'{"pushed": true}'
            )
            assert json.loads(await asyncio.wait_for(socket.recv(), 10)) == {"pushed": True}
            # The management API also answers without the stage prefix.
            base = served.ws.replace("ws://", "http://")
            async with httpx.AsyncClient(base_url=base) as plain:
                answer = await plain.get(f"/@connections/{connection_id}")
            assert answer.status_code == 200
            assert set(answer.json()) == {"connectedAt", "identity", "lastActiveAt"}

            await asyncio.to_thread(client.delete_connection, ConnectionId=connection_id)
            with pytest.raises(websockets.ConnectionClosed):
                await asyncio.wait_for(socket.recv(), 10)
            return connection_id

    connection_id = asyncio.run(scenario())
    disconnect = _wait_for(served.markers / f"disconnect-{connection_id}.json")
    assert disconnect["requestContext"]["eventType"] == "DISCONNECT"
    with pytest.raises(client.exceptions.GoneException):
        client.post_to_connection(ConnectionId=connection_id, Data=b"late")
    with pytest.raises(client.exceptions.GoneException):
        client.get_connection(ConnectionId=connection_id)


def test_a_mock_route_is_answered_by_the_gateway_from_its_templates(served: FixtureStack) -> None:
    """A MOCK integration, as API Gateway runs one: no function is invoked; its request
    template's status picks the integration response (`/2\\d\\d/` before `$default`) whose
    template is the answer on a two-way route, nothing on a one-way one, and a status that no
    integration response matches is the gateway's own error."""

    async def scenario() -> str:
        async with websockets.connect(served.ws + "/?token=good") as socket:
            # given a connection; when it sends a heartbeat, then the template answers it
            await socket.send(json.dumps({"action": "heartbeat", "n": 1}))
            answer = await asyncio.wait_for(socket.recv(), 10)
            assert answer == '{"type": "heartbeat", "from": "template"}'
            # when a one-way MOCK route and then a Lambda route are sent, then only the
            # Lambda route's answer comes back
            await socket.send(json.dumps({"action": "quiet"}))
            await socket.send(json.dumps({"action": "ping"}))
            pong = json.loads(await asyncio.wait_for(socket.recv(), 10))
            assert pong == {"type": "pong", "route": "ping"}
            # when a MOCK route's status matches no integration response: the gateway's error
            await socket.send(json.dumps({"action": "broken"}))
            error = json.loads(await asyncio.wait_for(socket.recv(), 10))
            assert error["message"] == "Internal server error"
            return str(error["connectionId"])

    connection_id = asyncio.run(scenario())
    # and no function saw a MOCK route's frame (the ping did reach one)
    reached = {path.name for path in served.markers.glob(f"frame-*-{connection_id}.json")}
    assert reached == {f"frame-ping-{connection_id}.json"}, reached


def test_connect_runs_its_authorizer_whose_context_reaches_every_event(
    served: FixtureStack,
) -> None:
    """The $connect route's Lambda REQUEST authorizer, as API Gateway runs it: a missing
    identity source is 401 without a call, "Unauthorized" raised 401, another error 500; the
    allowed context (values as strings) is in requestContext.authorizer of $connect, of every
    frame and of $disconnect. DeleteConnection closes with 1000, "Connection Closed Normally"."""
    client = served.management()

    async def refused(query: str) -> int:
        with pytest.raises(websockets.InvalidStatus) as refusal:
            async with websockets.connect(served.ws + query):
                pass
        return refusal.value.response.status_code

    async def scenario() -> str:
        assert await refused("/") == 401
        assert await refused("/?token=unauthorized") == 401
        assert await refused("/?token=explode") == 500
        assert await refused("/?token=bad") == 403
        async with websockets.connect(served.ws + "/?token=alice") as socket:
            await socket.send(json.dumps({"action": "anything"}))
            echo = json.loads(await asyncio.wait_for(socket.recv(), 10))
            connect = next(
                json.loads(p.read_text())
                for p in served.markers.glob("connect-*.json")
                if json.loads(p.read_text())["queryStringParameters"] == {"token": "alice"}
            )
            connection_id = connect["requestContext"]["connectionId"]
            for seen in (connect["requestContext"]["authorizer"], echo["authorizer"]):
                latency = seen.pop("integrationLatency")
                assert isinstance(latency, int) and latency >= 0
                assert seen == {
                    "principalId": "user-alice", "token": "alice", "number": "7", "flag": "true"
                }  # fmt: skip
            await asyncio.to_thread(client.delete_connection, ConnectionId=connection_id)
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(socket.recv(), 10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1000
            return connection_id

    connection_id = asyncio.run(scenario())
    context = _wait_for(served.markers / f"disconnect-{connection_id}.json")["requestContext"]
    assert context["authorizer"]["principalId"] == "user-alice"
    assert (context["disconnectStatusCode"], context["disconnectReason"]) == (
        1000,
        "Connection Closed Normally",
    )
    with pytest.raises(client.exceptions.GoneException):
        client.delete_connection(ConnectionId=connection_id)


def test_client_close_invokes_disconnect(served: FixtureStack) -> None:
    async def scenario() -> None:
        async with websockets.connect(served.ws + "/fixture?token=ok") as socket:
            await socket.send(json.dumps({"action": "ping"}))
            await asyncio.wait_for(socket.recv(), 10)

    before = {p.name for p in served.markers.glob("connect-*.json")}
    asyncio.run(scenario())
    new = [p for p in served.markers.glob("connect-*.json") if p.name not in before]
    assert len(new) == 1
    connect = json.loads(new[0].read_text())
    assert connect["queryStringParameters"] == {"token": "ok"}
    assert connect["requestContext"]["stage"] == "fixture"
    connection_id = connect["requestContext"]["connectionId"]
    disconnect = _wait_for(served.markers / f"disconnect-{connection_id}.json")
    assert disconnect["requestContext"]["disconnectStatusCode"] == 1000


# --------------------------------------------------------------------------------------------
# Shutdown
# --------------------------------------------------------------------------------------------


def _children(pid: int) -> set[int]:
    children = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # Field 4 (after the parenthesised command) is the parent pid.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                children.add(int(entry.name))
    return children


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to list child processes")
def test_serve_stops_cleanly_without_orphans(tmp_path: Path) -> None:
    served = _start(tmp_path)
    with httpx.Client(base_url=served.http, timeout=20) as client:
        assert client.get("/public").status_code == 200
        assert client.get("/env").status_code == 200
    children = _children(served.process.pid)
    assert len(children) >= 3  # moto and at least two workers
    assert _stop(served) == 0
    time.sleep(0.2)
    alive = {pid for pid in children if Path(f"/proc/{pid}").exists()}
    assert not alive, "".join(served.output[-40:])


# --------------------------------------------------------------------------------------------
# LambdaRuntime directly
# --------------------------------------------------------------------------------------------


@pytest.fixture
def runtime() -> Iterator[LambdaRuntime]:
    lines: list[str] = []
    runtime = LambdaRuntime(
        load_template(TEMPLATE),
        ResolveContext(),
        log_line=lambda function, line: lines.append(f"{function} {line}"),
    )
    yield runtime
    runtime.close()
    assert runtime.worker_count() == 0


def test_busy_workers_get_company_and_idle_ones_are_reused(runtime: LambdaRuntime) -> None:
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda _: runtime.invoke("BoomFunction", {"sleep": 0.4}), range(3)))
    assert all(result.ok for result in results)
    assert sum(result.cold for result in results) == 3  # all busy at once: three containers
    assert runtime.worker_count("BoomFunction") == 3
    warm = runtime.invoke("BoomFunction", {})
    assert warm.ok and not warm.cold
    assert runtime.worker_count("BoomFunction") == 3


def test_errors_crashes_and_timeouts(runtime: LambdaRuntime) -> None:
    error = runtime.invoke("BoomFunction", {"boom": True})
    assert not error.ok
    assert error.error is not None
    assert (error.error["errorType"], error.error["errorMessage"]) == ("ValueError", "kaboom")
    assert any("raise ValueError" in frame for frame in error.error["stackTrace"])
    assert runtime.invoke("BoomFunction", {}).cold is False  # still warm after an exception

    crash = runtime.invoke("BoomFunction", {"exit": True})
    assert crash.error is not None and crash.error["errorType"] == "Runtime.ExitError"
    assert runtime.invoke("BoomFunction", {}).cold is True  # replaced by a new worker

    timeout = runtime.invoke("BoomFunction", {"sleep": 5}, timeout=0.5)
    assert timeout.error is not None and timeout.error["errorType"] == "Sandbox.Timedout"
    assert "Task timed out after 0.50 seconds" in timeout.error["errorMessage"]
    assert runtime.invoke("BoomFunction", {}).ok

    # an answer over Lambda's 6 MB fails as on AWS; one just under it passes
    assert runtime.invoke("BoomFunction", {"answer_bytes": 6_291_456 - 100}).ok
    too_large = runtime.invoke("BoomFunction", {"answer_bytes": 6_291_456 + 100})
    assert too_large.error is not None
    assert too_large.error["errorType"] == "Function.ResponseSizeTooLarge"
    assert runtime.invoke("BoomFunction", {}).cold is False  # the worker itself is fine


def test_async_invoke(runtime: LambdaRuntime) -> None:
    async def scenario() -> list[bool]:
        results = await asyncio.gather(
            *(runtime.ainvoke("EnvFunction", {"n": n}) for n in range(4))
        )
        return [result.ok for result in results]

    assert asyncio.run(scenario()) == [True] * 4
