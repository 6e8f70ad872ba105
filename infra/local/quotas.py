"""API Gateway's quota on a request's head, kept by both local gateways.

HTTP and WebSocket APIs take at most 10,240 bytes of request line and header values together
(API Gateway's quotas page). The local gateways answer a request over it in API.md's error
shape: `414 uri_too_long` when the request line alone is over, `431 headers_too_large`
otherwise. aiohttp's own parser limits sit far above the quota, so that it is this check, not
the parser's text/plain 400, that answers every request a client could plausibly send.
"""

from __future__ import annotations

import json

from aiohttp import web

__all__ = ["PARSER_LIMITS", "REQUEST_HEAD_QUOTA", "over_quota"]

REQUEST_HEAD_QUOTA = 10240
PARSER_LIMITS = {"max_line_size": 1 << 20, "max_field_size": 1 << 20}


def over_quota(request: web.BaseRequest) -> web.Response | None:
    """The answer to a request whose head is over the quota; None when it fits."""
    version = f"HTTP/{request.version.major}.{request.version.minor}"
    line = len(request.method) + len(request.raw_path.encode()) + len(version) + 2
    values = sum(len(value) for _, value in request.raw_headers)
    if line > REQUEST_HEAD_QUOTA:
        status, code, what = 414, "uri_too_long", "The request line is"
    elif line + values > REQUEST_HEAD_QUOTA:
        status, code, what = 431, "headers_too_large", "The request line and header values are"
    else:
        return None
    message = f"{what} over {REQUEST_HEAD_QUOTA:,} bytes; send less in the query or the headers."
    return web.Response(
        status=status,
        body=json.dumps({"error": {"code": code, "message": message}}).encode(),
        headers={"content-type": "application/json"},
    )
