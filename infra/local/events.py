"""Builders for the events AWS sends to Lambda, in AWS's exact shapes.

Used by the local gateways (HTTP API payload 2.0, WebSocket API CONNECT / MESSAGE / DISCONNECT),
by the CLI (EventBridge scheduled events) and by tests that need a realistic event without a
running gateway. Pure functions: the caller supplies ids and clocks.
"""

from __future__ import annotations

import base64
import json
import os
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, unquote

__all__ = [
    "HttpRequest",
    "apigw_time",
    "aws_id",
    "http_api_event",
    "is_text_content_type",
    "scheduled_event",
    "trace_id",
    "websocket_connect_event",
    "websocket_disconnect_event",
    "websocket_message_event",
]

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# Request body media types that API Gateway hands to Lambda as text; anything else is base64.
_TEXT_TYPES = {
    "application/json",
    "application/javascript",
    "application/ecmascript",
    "application/xml",
    "application/x-yaml",
    "application/yaml",
    "application/graphql",
}


def aws_id(length: int = 16) -> str:
    """An id shaped like API Gateway's request and connection ids ("L0SM9cOFvHcCIhw=").

    Base64 of random bytes, with '+' and '/' avoided because the id travels in URL paths.
    """
    raw_bytes = max((length * 3) // 4, 1)
    while True:
        text = base64.b64encode(os.urandom(raw_bytes)).decode()
        if "+" not in text and "/" not in text:
            return text[:length]


def trace_id(now: float | None = None) -> str:
    """An X-Ray trace header value as API Gateway adds it (x-amzn-trace-id)."""
    seconds = int(now if now is not None else time.time())
    return f"Root=1-{seconds:08x}-{uuid.uuid4().hex[:24]}"


def apigw_time(epoch_ms: int) -> str:
    """API Gateway's CLF time, e.g. "22/Nov/2026:06:00:00 +0000" (locale independent)."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return (
        f"{moment.day:02d}/{_MONTHS[moment.month - 1]}/{moment.year}:"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d} +0000"
    )


def is_text_content_type(content_type: str | None) -> bool:
    """Whether API Gateway passes a body of this media type as text (not base64)."""
    if not content_type:
        return True  # no type: decided by whether the bytes are UTF-8
    media = content_type.split(";", 1)[0].strip().lower()
    return (
        media.startswith("text/")
        or media in _TEXT_TYPES
        or media.endswith("+json")
        or media.endswith("+xml")
    )


@dataclass
class HttpRequest:
    """What the HTTP gateway knows about one request, before it becomes an event."""

    method: str
    raw_path: str  # as received, percent-encoded, without the query string
    raw_query_string: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)  # in order, repeats allowed
    body: bytes = b""
    source_ip: str = "127.0.0.1"
    protocol: str = "HTTP/1.1"
    domain_name: str = "127.0.0.1"
    request_id: str = field(default_factory=aws_id)
    epoch_ms: int = field(default_factory=lambda: int(time.time() * 1000))

    @property
    def path(self) -> str:
        # HTTP APIs hand the path to Lambda percent-decoded (rawPath and requestContext.http.path).
        return unquote(self.raw_path)

    def header(self, name: str) -> str | None:
        """A header's value, repeats joined with commas (None when absent)."""
        values = [value for key, value in self.headers if key.lower() == name.lower()]
        return ",".join(values) if values else None


def _v2_headers(request: HttpRequest) -> tuple[dict[str, str], list[str]]:
    """Lower-cased headers with repeats joined by commas; cookies move to their own list."""
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in request.headers:
        key = name.lower()
        if key == "cookie":
            cookies.extend(part.strip() for part in value.split(";") if part.strip())
            continue
        headers[key] = f"{headers[key]},{value}" if key in headers else value
    return headers, cookies


def _v2_query(raw_query_string: str) -> dict[str, str]:
    query: dict[str, str] = {}
    for key, value in parse_qsl(raw_query_string, keep_blank_values=True):
        query[key] = f"{query[key]},{value}" if key in query else value
    return query


def _v2_body(request: HttpRequest) -> tuple[str | None, bool]:
    if not request.body:
        return None, False
    if is_text_content_type(request.header("content-type")):
        try:
            return request.body.decode("utf-8"), False
        except UnicodeDecodeError:
            pass
    return base64.b64encode(request.body).decode(), True


def _v2_request_context(
    request: HttpRequest,
    route_key: str,
    api_id: str,
    account_id: str,
) -> dict[str, Any]:
    domain = request.domain_name
    return {
        "accountId": account_id,
        "apiId": api_id,
        "domainName": domain,
        "domainPrefix": domain.split(".", 1)[0],
        "http": {
            "method": request.method.upper(),
            "path": request.path,
            "protocol": request.protocol,
            "sourceIp": request.source_ip,
            "userAgent": request.header("user-agent") or "",
        },
        "requestId": request.request_id,
        "routeKey": route_key,
        "stage": "$default",  # the template names no stage: the API's default one
        "time": apigw_time(request.epoch_ms),
        "timeEpoch": request.epoch_ms,
    }


def http_api_event(
    request: HttpRequest,
    *,
    route_key: str,
    api_id: str,
    account_id: str = "123456789012",
    path_parameters: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """An HTTP API payload format 2.0 event (no authorizer, no stage variables: the template
    has neither). Optional keys appear only when they have content."""
    headers, cookies = _v2_headers(request)
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": request.path,
        "rawQueryString": request.raw_query_string,
    }
    if cookies:
        event["cookies"] = cookies
    event["headers"] = headers
    query = _v2_query(request.raw_query_string)
    if query:
        event["queryStringParameters"] = query
    event["requestContext"] = _v2_request_context(request, route_key, api_id, account_id)
    if path_parameters:
        event["pathParameters"] = dict(path_parameters)
    body, is_base64 = _v2_body(request)
    if body is not None:
        event["body"] = body
    event["isBase64Encoded"] = is_base64
    return event


# --------------------------------------------------------------------------------------------
# WebSocket API
# --------------------------------------------------------------------------------------------


@dataclass
class WebSocketConnection:
    """What a WebSocket event needs to know about its connection."""

    connection_id: str
    api_id: str
    stage: str
    domain_name: str
    source_ip: str
    user_agent: str | None
    connected_at_ms: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    raw_query_string: str = ""


def _ws_request_context(
    connection: WebSocketConnection,
    route_key: str,
    event_type: str,
    epoch_ms: int | None,
) -> dict[str, Any]:
    now = epoch_ms if epoch_ms is not None else int(time.time() * 1000)
    request_id = aws_id()
    identity: dict[str, Any] = {"sourceIp": connection.source_ip}
    if connection.user_agent is not None:
        identity["userAgent"] = connection.user_agent
    return {
        "routeKey": route_key,
        "eventType": event_type,
        "extendedRequestId": request_id,
        "requestTime": apigw_time(now),
        "messageDirection": "IN",
        "stage": connection.stage,
        "connectedAt": connection.connected_at_ms,
        "requestTimeEpoch": now,
        "identity": identity,
        "requestId": request_id,
        "domainName": connection.domain_name,
        "connectionId": connection.connection_id,
        "apiId": connection.api_id,
    }


def _multi(pairs: Iterable[tuple[str, str]]) -> tuple[dict[str, str], dict[str, list[str]]]:
    single: dict[str, str] = {}
    multi: dict[str, list[str]] = {}
    for key, value in pairs:
        multi.setdefault(key, []).append(value)
        single[key] = value  # the last one wins, as in API Gateway's REST-style maps
    return single, multi


def websocket_connect_event(
    connection: WebSocketConnection, epoch_ms: int | None = None
) -> dict[str, Any]:
    """The $connect event: the upgrade request's headers (names as sent) and query string."""
    headers, multi_headers = _multi(connection.headers)
    event: dict[str, Any] = {"headers": headers, "multiValueHeaders": multi_headers}
    if connection.raw_query_string:
        query, multi_query = _multi(parse_qsl(connection.raw_query_string, keep_blank_values=True))
        event["queryStringParameters"] = query
        event["multiValueQueryStringParameters"] = multi_query
    event["requestContext"] = _ws_request_context(
        connection, "$connect", "CONNECT", epoch_ms or connection.connected_at_ms
    )
    event["isBase64Encoded"] = False
    return event


def websocket_message_event(
    connection: WebSocketConnection,
    route_key: str,
    body: str | bytes,
    epoch_ms: int | None = None,
) -> dict[str, Any]:
    """A MESSAGE event; binary frames arrive base64-encoded."""
    context = _ws_request_context(connection, route_key, "MESSAGE", epoch_ms)
    # messageId sits after routeKey in AWS's events; key order is cosmetic but kept.
    context = {"routeKey": route_key, "messageId": aws_id()} | context
    if isinstance(body, bytes):
        return {
            "requestContext": context,
            "body": base64.b64encode(body).decode(),
            "isBase64Encoded": True,
        }
    return {"requestContext": context, "body": body, "isBase64Encoded": False}


def websocket_disconnect_event(
    connection: WebSocketConnection,
    status_code: int,
    reason: str,
    epoch_ms: int | None = None,
) -> dict[str, Any]:
    """The $disconnect event (API Gateway sends only a few headers with it)."""
    headers = [
        ("Host", connection.domain_name),
        ("x-api-key", ""),
        ("X-Forwarded-For", ""),
        ("x-restapi", ""),
    ]
    single, multi = _multi(headers)
    context = _ws_request_context(connection, "$disconnect", "DISCONNECT", epoch_ms)
    context = {
        "routeKey": "$disconnect",
        "disconnectStatusCode": status_code,
        "eventType": "DISCONNECT",
    } | context
    context["disconnectReason"] = reason
    return {
        "headers": single,
        "multiValueHeaders": multi,
        "requestContext": context,
        "isBase64Encoded": False,
    }


# --------------------------------------------------------------------------------------------
# EventBridge
# --------------------------------------------------------------------------------------------


def scheduled_event(
    rule_name: str = "local-schedule",
    *,
    region: str = "us-east-1",
    account_id: str = "123456789012",
    now: datetime | None = None,
    detail: Any = None,
) -> dict[str, Any]:
    """An EventBridge "Scheduled Event" (`sam local generate-event cloudwatch scheduled-event`)."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": account_id,
        "time": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": region,
        "resources": [f"arn:aws:events:{region}:{account_id}:rule/{rule_name}"],
        "detail": {} if detail is None else detail,
    }


def dumps(event: Mapping[str, Any]) -> str:
    """Events as the CLI prints them."""
    return json.dumps(event, indent=2)
