"""Posting to a connection (warble.dal.websocket) with a recording transport: the signed request
is byte for byte what a boto3 client sends, and API Gateway's answers map to the push's errors."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace
from typing import Any

import boto3
import botocore.auth
import pytest
from botocore.awsrequest import AWSResponse
from botocore.credentials import Credentials
from botocore.exceptions import EndpointConnectionError
from warble.dal.websocket import WebSocketSender
from warble.domain.push.ports import ConnectionGone, PushFailed

pytestmark = pytest.mark.unit

ENDPOINT = "https://abc123.execute-api.eu-west-1.amazonaws.com/live"
REGION = "eu-west-1"
CREDENTIALS = Credentials("AKIDEXAMPLE", "secret", "session-token")
CONNECTION = "L0SM9cOF/vHc+Ihw="  # API Gateway's ids end in '=' and may hold '/' or '+'


class Recorder:
    """Answers each request with the next status (or raises the next exception)."""

    def __init__(self, *answers: int | Exception) -> None:
        self.answers = list(answers)
        self.sent: list[Any] = []

    def send(self, request: Any) -> Any:
        self.sent.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return SimpleNamespace(status_code=answer)


def sender(*answers: int | Exception) -> tuple[WebSocketSender, Recorder]:
    recorder = Recorder(*answers)
    return WebSocketSender(ENDPOINT, REGION, transport=recorder, credentials=CREDENTIALS), recorder


def boto3_request(data: bytes) -> Any:
    """What ``post_to_connection`` sends, caught before it leaves."""
    client = boto3.client(
        "apigatewaymanagementapi",
        endpoint_url=ENDPOINT,
        region_name=REGION,
        aws_access_key_id=CREDENTIALS.access_key,
        aws_secret_access_key=CREDENTIALS.secret_key,
        aws_session_token=CREDENTIALS.token,
    )
    caught: list[Any] = []

    def catch(request: Any, **_: Any) -> AWSResponse:
        caught.append(request)
        return AWSResponse(request.url, 200, {}, SimpleNamespace(stream=lambda **_: iter([b""])))

    client.meta.events.register("before-send.*", catch)
    client.post_to_connection(ConnectionId=CONNECTION, Data=data)
    return caught[0]


def test_the_signed_post_is_the_one_a_boto3_client_sends(monkeypatch: pytest.MonkeyPatch):
    # Both are signed at one fixed instant: the signature covers the second it was made in, and
    # on a busy machine a retry loop could still straddle seconds every time.
    instant = datetime(2026, 11, 26, 9, 30, 0)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda *_, **__: instant)
    data = b'{"type":"message","data":{"text":"hi"}}'
    post, _ = sender()
    theirs = boto3_request(data)
    ours = post.signed(theirs.url, data)
    assert (ours.method, ours.url, ours.body) == (theirs.method, theirs.url, theirs.body)
    for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token", "Content-Length"):
        assert _text(ours.headers[name]) == _text(theirs.headers[name]), name


def test_a_post_goes_to_the_connection_s_path_with_the_frame_as_its_body():
    post, recorder = sender(200)
    post.send(CONNECTION, {"type": "pong", "data": {}})
    (request,) = recorder.sent
    assert request.url == f"{ENDPOINT}/@connections/L0SM9cOF%2FvHc%2BIhw%3D"
    assert request.body == b'{"type":"pong","data":{}}'


@pytest.mark.parametrize(
    ("status", "error"),
    [(410, ConnectionGone), (403, PushFailed)],  # GoneException; ForbiddenException
)
def test_a_gone_connection_or_a_refused_post_fails_at_once(status, error):
    post, recorder = sender(status)
    with pytest.raises(error):
        post.send(CONNECTION, {"type": "x"})
    assert len(recorder.sent) == 1


def test_a_throttled_or_failing_post_is_tried_once_more():
    post, recorder = sender(429, 200)
    post.send(CONNECTION, {"type": "x"})
    assert len(recorder.sent) == 2

    post, recorder = sender(503, 500)
    with pytest.raises(PushFailed):
        post.send(CONNECTION, {"type": "x"})
    assert len(recorder.sent) == 2


def test_an_unreachable_endpoint_fails_the_post_after_a_second_try():
    unreachable = EndpointConnectionError(endpoint_url=ENDPOINT)
    post, recorder = sender(unreachable, unreachable)
    with pytest.raises(PushFailed):
        post.send(CONNECTION, {"type": "x"})
    assert len(recorder.sent) == 2


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
