"""A fault switch for the local DynamoDB (issue 40, fault 5): off by default, served by the moto
server child at ``/_warble/faults``, so a test or ``make chaos`` can make a share of DynamoDB's
data-plane calls fail as DynamoDB fails them, and see the retries and the 503s that follow.

    PUT    /_warble/faults  {"throttle": 0.1, "internal_error": 0.01}   the setting now in force
    GET    /_warble/faults                                              the setting now in force
    DELETE /_warble/faults                                              off (both 0)

Each answers 200 with the setting (``{"throttle": t, "internal_error": e}``); a PUT names either
or both fractions (one left out is 0), each from 0 to 1, their sum at most 1, else 400. Every
call with ``X-Amz-Target: DynamoDB_20120810.<operation>`` for a data-plane operation (reads,
writes, batches, transactions, PartiQL) draws once: a fraction ``throttle`` is answered 400
``ProvisionedThroughputExceededException`` or ``ThrottlingException`` (half each), a fraction
``internal_error`` 500 ``InternalServerError``, in DynamoDB's JSON error shape and headers, before
moto sees it (nothing is applied). DynamoDB Streams and the control plane (CreateTable,
DescribeTable, ...) are never faulted, so the stack still starts and its stream pollers still
read. ``infra.local.moto_patches.install`` puts it in front of moto's dispatcher.
"""

from __future__ import annotations

import binascii
import functools
import json
import random
import secrets
import string
import threading
from dataclasses import asdict, dataclass
from typing import Any

FAULTS_PATH = "/_warble/faults"
TARGET_PREFIX = "DynamoDB_20120810."
# DynamoDB's data plane: what a function's requests send. Anything else (tables, TTL, tags,
# backups, DescribeEndpoints) is the control plane, which provisioning needs.
DATA_PLANE = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
        "ExecuteStatement",
        "BatchExecuteStatement",
        "ExecuteTransaction",
    }
)

# (status, __type, message) as DynamoDB answers them.
THROTTLES = (
    (
        400,
        "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
        "The level of configured provisioned throughput for the table was exceeded. "
        "Consider increasing your provisioning level with the UpdateTable API.",
    ),
    (
        400,
        "com.amazon.coral.availability#ThrottlingException",
        "Rate of requests exceeds the allowed throughput.",
    ),
)
INTERNAL_ERROR = (
    500,
    "com.amazonaws.dynamodb.v20120810#InternalServerError",
    "Internal server error",
)
_REASONS = {200: "200 OK", 400: "400 Bad Request", 405: "405 Method Not Allowed",
            500: "500 Internal Server Error"}  # fmt: skip


@dataclass(frozen=True)
class Setting:
    """The fractions of data-plane calls to fail (0 each: off)."""

    throttle: float = 0.0
    internal_error: float = 0.0

    @classmethod
    def parse(cls, body: bytes) -> Setting:
        """A PUT's body, or ValueError saying what is wrong with it."""
        try:
            given = json.loads(body or b"{}")
        except ValueError:
            raise ValueError("the body is not JSON") from None
        if not isinstance(given, dict):
            raise ValueError(
                'the body must be an object: {"throttle": 0.1, "internal_error": 0.01}'
            )
        unknown = sorted(set(given) - {"throttle", "internal_error"})
        if unknown:
            raise ValueError(f"unknown fields: {', '.join(unknown)}")
        values = {}
        for name in ("throttle", "internal_error"):
            value = given.get(name, 0)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ValueError(f"{name} must be a number from 0 to 1")
            values[name] = float(value)
        if values["throttle"] + values["internal_error"] > 1 + 1e-9:
            raise ValueError("throttle + internal_error must be at most 1")
        return cls(**values)

    def draw(self, roll: float) -> tuple[int, str, str] | None:
        """The error a call with ``roll`` (uniform in [0, 1)) gets, or None."""
        if roll < self.throttle:
            return THROTTLES[int(roll / self.throttle * len(THROTTLES)) % len(THROTTLES)]
        if roll < self.throttle + self.internal_error:
            return INTERNAL_ERROR
        return None


class _Switch:
    setting = Setting()
    lock = threading.Lock()


def current() -> Setting:
    return _Switch.setting


def _operation(environ: dict[str, Any]) -> str | None:
    target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
    if not target.startswith(TARGET_PREFIX):
        return None  # not DynamoDB (Streams is DynamoDBStreams_20120810.*)
    return target[len(TARGET_PREFIX) :]


def _drain(environ: dict[str, Any]) -> bytes:
    """The request's body, read whole (an unread body would be taken for the next request on
    a kept-alive connection)."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    return environ["wsgi.input"].read(length) if length > 0 else b""


def _answer(
    start_response: Any, status: int, payload: bytes, headers: list[tuple[str, str]]
) -> list[bytes]:
    start_response(_REASONS[status], [*headers, ("Content-Length", str(len(payload)))])
    return [payload]


def _dynamodb_error(start_response: Any, error: tuple[int, str, str]) -> list[bytes]:
    """DynamoDB's JSON 1.0 error: ``__type`` and ``message``, its request id and CRC32."""
    status, kind, message = error
    payload = json.dumps({"__type": kind, "message": message}).encode()
    request_id = "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(52))
    headers = [
        ("Content-Type", "application/x-amz-json-1.0"),
        ("x-amzn-RequestId", request_id),
        ("x-amz-crc32", str(binascii.crc32(payload))),
    ]
    return _answer(start_response, status, payload, headers)


def _control(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """``/_warble/faults``: PUT sets, GET reads, DELETE switches off; each answers the setting."""
    method = environ.get("REQUEST_METHOD", "GET")
    body = _drain(environ)
    json_type = [("Content-Type", "application/json")]
    with _Switch.lock:
        if method == "PUT":
            try:
                _Switch.setting = Setting.parse(body)
            except ValueError as exc:
                return _answer(
                    start_response, 400, json.dumps({"message": str(exc)}).encode(), json_type
                )
        elif method == "DELETE":
            _Switch.setting = Setting()
        elif method != "GET":
            return _answer(start_response, 405, b"", [("Allow", "GET, PUT, DELETE")])
        payload = json.dumps(asdict(_Switch.setting)).encode()
    return _answer(start_response, 200, payload, json_type)


def serving(original: Any, roll: Any = random.random) -> Any:
    """``DomainDispatcherApplication.__call__`` with the switch in front: its own path answered,
    a faulted DynamoDB call answered with its error, anything else passed to moto."""

    @functools.wraps(original)
    def call(self: Any, environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("PATH_INFO") == FAULTS_PATH:
            return _control(environ, start_response)
        setting = _Switch.setting
        if setting != Setting() and _operation(environ) in DATA_PLANE:
            error = setting.draw(roll())
            if error is not None:
                _drain(environ)
                return _dynamodb_error(start_response, error)
        return original(self, environ, start_response)

    return call
