"""A fault switch for the local AWS services (issue 40, faults 5, 8 and 9): off by default, served
by the moto server child at ``/_warble/faults``, so a test or ``make chaos`` can make a share of
DynamoDB's data-plane calls, of S3's requests or of SES's calls fail as those services fail them,
or every DynamoDB call slow (a brownout), and see the retries, the 503s and the redeliveries that
follow.

    PUT    /_warble/faults  {"throttle": 0.1, "internal_error": 0.01}   the setting now in force
    PUT    /_warble/faults  {"s3": 1, "s3_methods": ["GET"], "ses": 1, "unprocessed": 0.5}
    PUT    /_warble/faults  {"latency_ms": 3000}                        a brownout
    GET    /_warble/faults                                              the setting now in force
    DELETE /_warble/faults                                              off (every fraction 0)
    GET    /_warble/faults/served      the faults answered since the last PUT or DELETE, by kind
                                       (``latency``: the calls slowed)

Each but the last answers 200 with the setting; a PUT names any of its fields (one left out
is off), each fraction from 0 to 1, ``throttle + internal_error`` at most 1, ``latency_ms`` a whole
number from 0 to 60,000, else 400.

- **Latency** (a brownout): every DynamoDB data-plane call waits ``latency_ms`` in the server's
  thread before it is drawn for a fault and answered (moto serves each request on a thread of
  its own, so calls wait side by side, as on a slow service, not one after another). A client
  whose read timeout is shorter gives up on it; what the call does still happens once the wait is
  over, as on DynamoDB, where a request that timed out on the client may still be applied.

- **DynamoDB**: every call with ``X-Amz-Target: DynamoDB_20120810.<operation>`` for a data-plane
  operation (reads, writes, batches, transactions, PartiQL) draws once: a fraction ``throttle``
  is answered 400 ``ProvisionedThroughputExceededException`` or ``ThrottlingException`` (half
  each), a fraction ``internal_error`` 500 ``InternalServerError``, in DynamoDB's JSON error
  shape and headers, before moto sees it (nothing is applied). DynamoDB Streams and the control
  plane (CreateTable, DescribeTable, ...) are never faulted, so the stack still starts and its
  stream pollers still read. Of the BatchWriteItem calls left, a fraction ``unprocessed`` is
  answered 200 with every one of its requests in ``UnprocessedItems`` and nothing applied, as
  DynamoDB answers a batch whose partitions are all throttled.
- **S3**: a fraction ``s3`` of the requests signed for S3 (header or presigned query; the local
  S3 endpoint forwards the functions' calls and stores the browsers' form uploads this way) is
  answered 503 ``ServiceUnavailable`` in S3's XML shape; ``s3_methods`` narrows it to some HTTP
  methods (``["GET"]``: reads fail, uploads are still taken), all when left out. Buckets are
  made at start-up while the switch is off.
- **SES**: a fraction ``ses`` of the calls signed for SES (v2's REST API, v1's query API) is
  answered 503 ``ServiceUnavailable``; the message is not kept (``/_aws/ses``, unsigned, lists
  only what was sent).

``infra.local.moto_patches.install`` puts it in front of moto's dispatcher.
"""

from __future__ import annotations

import binascii
import functools
import json
import random
import re
import secrets
import string
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import parse_qs

FAULTS_PATH = "/_warble/faults"
SERVED_PATH = f"{FAULTS_PATH}/served"
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
S3_UNAVAILABLE = (503, "ServiceUnavailable", "Service is unable to handle request.")
SES_UNAVAILABLE = (503, "ServiceUnavailable", "Service is unable to handle request.")
S3_METHODS = frozenset({"GET", "HEAD", "PUT", "POST", "DELETE"})
_REASONS = {200: "200 OK", 400: "400 Bad Request", 405: "405 Method Not Allowed",
            500: "500 Internal Server Error", 503: "503 Service Unavailable"}  # fmt: skip
# The service a SigV4 request was signed for: its credential scope's third part.
_SCOPE = re.compile(r"Credential=[^/,\s]+/\d{8}/[^/]+/([^/]+)/aws4_request")
_FRACTIONS = ("throttle", "internal_error", "unprocessed", "s3", "ses")
LATENCY_LIMIT_MS = 60_000


@dataclass(frozen=True)
class Setting:
    """The fractions of calls to fail (0 each: off)."""

    throttle: float = 0.0
    internal_error: float = 0.0
    unprocessed: float = 0.0
    s3: float = 0.0
    s3_methods: tuple[str, ...] = tuple(sorted(S3_METHODS))
    ses: float = 0.0
    latency_ms: int = 0  # every DynamoDB data-plane call waits this long (a brownout)

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
        unknown = sorted(set(given) - {*_FRACTIONS, "s3_methods", "latency_ms"})
        if unknown:
            raise ValueError(f"unknown fields: {', '.join(unknown)}")
        values = {}
        for name in _FRACTIONS:
            value = given.get(name, 0)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ValueError(f"{name} must be a number from 0 to 1")
            values[name] = float(value)
        if values["throttle"] + values["internal_error"] > 1 + 1e-9:
            raise ValueError("throttle + internal_error must be at most 1")
        methods = given.get("s3_methods", sorted(S3_METHODS))
        if (
            not isinstance(methods, list)
            or not methods
            or not all(isinstance(m, str) and m.upper() in S3_METHODS for m in methods)
        ):
            raise ValueError(f"s3_methods must be a list of {', '.join(sorted(S3_METHODS))}")
        latency = given.get("latency_ms", 0)
        if isinstance(latency, bool) or not isinstance(latency, int):
            raise ValueError(f"latency_ms must be a whole number from 0 to {LATENCY_LIMIT_MS}")
        if not 0 <= latency <= LATENCY_LIMIT_MS:
            raise ValueError(f"latency_ms must be a whole number from 0 to {LATENCY_LIMIT_MS}")
        return cls(
            **values,
            s3_methods=tuple(sorted({m.upper() for m in methods})),
            latency_ms=latency,
        )

    def draw(self, roll: float) -> tuple[int, str, str] | None:
        """The error a call with ``roll`` (uniform in [0, 1)) gets, or None."""
        if roll < self.throttle:
            return THROTTLES[int(roll / self.throttle * len(THROTTLES)) % len(THROTTLES)]
        if roll < self.throttle + self.internal_error:
            return INTERNAL_ERROR
        return None


class _Switch:
    setting = Setting()
    served: Counter[str] = Counter()
    lock = threading.Lock()


def current() -> Setting:
    return _Switch.setting


def _operation(environ: dict[str, Any]) -> str | None:
    target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
    if not target.startswith(TARGET_PREFIX):
        return None  # not DynamoDB (Streams is DynamoDBStreams_20120810.*)
    return target[len(TARGET_PREFIX) :]


def _signed_for(environ: dict[str, Any]) -> str | None:
    """The service a SigV4 request names in its credential scope (``s3``, ``ses``, ...)."""
    found = _SCOPE.search(str(environ.get("HTTP_AUTHORIZATION", "")))
    if found is not None:
        return found.group(1)
    credential = parse_qs(str(environ.get("QUERY_STRING", ""))).get("X-Amz-Credential")
    if credential:
        parts = credential[0].split("/")
        return parts[3] if len(parts) == 5 else None
    return None


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


def _unprocessed(start_response: Any, body: bytes) -> list[bytes]:
    """BatchWriteItem's 200, every request of the call left unprocessed."""
    try:
        requests = json.loads(body or b"{}").get("RequestItems") or {}
    except (ValueError, AttributeError):
        requests = {}
    payload = json.dumps({"UnprocessedItems": requests}).encode()
    request_id = "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(52))
    headers = [
        ("Content-Type", "application/x-amz-json-1.0"),
        ("x-amzn-RequestId", request_id),
        ("x-amz-crc32", str(binascii.crc32(payload))),
    ]
    return _answer(start_response, 200, payload, headers)


def _s3_error(start_response: Any, environ: dict[str, Any]) -> list[bytes]:
    """S3's XML error (no body for a HEAD, as S3 answers one)."""
    status, code, message = S3_UNAVAILABLE
    request_id = secrets.token_hex(8).upper()
    payload = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
        f"<Message>{message}</Message><RequestId>{request_id}</RequestId></Error>"
    ).encode()
    if environ.get("REQUEST_METHOD") == "HEAD":
        payload = b""
    headers = [("Content-Type", "application/xml"), ("x-amz-request-id", request_id)]
    return _answer(start_response, status, payload, headers)


def _ses_error(start_response: Any, environ: dict[str, Any]) -> list[bytes]:
    """SES's error: v2 (REST, JSON, the code in ``x-amzn-ErrorType``) or v1 (query, XML)."""
    status, code, message = SES_UNAVAILABLE
    request_id = secrets.token_hex(16)
    if str(environ.get("PATH_INFO", "")).startswith("/v2/"):
        payload = json.dumps({"message": message}).encode()
        headers = [
            ("Content-Type", "application/json"),
            ("x-amzn-ErrorType", f"{code}:"),
            ("x-amzn-RequestId", request_id),
        ]
    else:
        payload = (
            '<ErrorResponse xmlns="http://ses.amazonaws.com/doc/2010-12-01/">'
            f"<Error><Type>Receiver</Type><Code>{code}</Code><Message>{message}</Message>"
            f"</Error><RequestId>{request_id}</RequestId></ErrorResponse>"
        ).encode()
        headers = [("Content-Type", "text/xml"), ("x-amzn-RequestId", request_id)]
    return _answer(start_response, status, payload, headers)


def _fault(setting: Setting, environ: dict[str, Any], roll: float, start_response: Any) -> Any:
    """The faulted answer this call draws, or None to pass it on to moto."""
    operation = _operation(environ)
    if operation in DATA_PLANE:
        if setting.latency_ms:
            _count("latency")
            time.sleep(setting.latency_ms / 1000)
        error = setting.draw(roll)
        if error is not None:
            _count("throttle" if error[0] == 400 else "internal_error")
            _drain(environ)
            return _dynamodb_error(start_response, error)
        # the same roll, past the errors' share: independent of them
        left = 1 - setting.throttle - setting.internal_error
        beyond = (roll - setting.throttle - setting.internal_error) / left if left > 0 else 1
        if operation == "BatchWriteItem" and beyond < setting.unprocessed:
            _count("unprocessed")
            return _unprocessed(start_response, _drain(environ))
        return None
    service = _signed_for(environ)
    if (
        service == "s3"
        and roll < setting.s3
        and environ.get("REQUEST_METHOD") in setting.s3_methods
    ):
        _count("s3")
        _drain(environ)
        return _s3_error(start_response, environ)
    if service in ("ses", "email") and roll < setting.ses:
        _count("ses")
        _drain(environ)
        return _ses_error(start_response, environ)
    return None


def _count(kind: str) -> None:
    with _Switch.lock:
        _Switch.served[kind] += 1


def _control(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """``/_warble/faults``: PUT sets, GET reads, DELETE switches off; each answers the setting."""
    method = environ.get("REQUEST_METHOD", "GET")
    body = _drain(environ)
    json_type = [("Content-Type", "application/json")]
    with _Switch.lock:
        if environ.get("PATH_INFO") == SERVED_PATH:
            if method != "GET":
                return _answer(start_response, 405, b"", [("Allow", "GET")])
            served = {kind: _Switch.served[kind] for kind in (*_FRACTIONS, "latency")}
            return _answer(start_response, 200, json.dumps(served).encode(), json_type)
        if method == "PUT":
            try:
                _Switch.setting = Setting.parse(body)
            except ValueError as exc:
                return _answer(
                    start_response, 400, json.dumps({"message": str(exc)}).encode(), json_type
                )
            _Switch.served.clear()
        elif method == "DELETE":
            _Switch.setting = Setting()
            _Switch.served.clear()
        elif method != "GET":
            return _answer(start_response, 405, b"", [("Allow", "GET, PUT, DELETE")])
        payload = json.dumps(asdict(_Switch.setting)).encode()
    return _answer(start_response, 200, payload, json_type)


def serving(original: Any, roll: Any = random.random) -> Any:
    """``DomainDispatcherApplication.__call__`` with the switch in front: its own paths
    answered, a faulted call answered with its service's error, anything else passed to moto."""

    @functools.wraps(original)
    def call(self: Any, environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("PATH_INFO") in (FAULTS_PATH, SERVED_PATH):
            return _control(environ, start_response)
        setting = _Switch.setting
        if setting != Setting():
            faulted = _fault(setting, environ, roll(), start_response)
            if faulted is not None:
                return faulted
        return original(self, environ, start_response)

    return call
