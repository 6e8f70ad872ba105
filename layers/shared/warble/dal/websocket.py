"""Posting to WebSocket clients through API Gateway's @connections management API, and closing
them (DeleteConnection: ``DELETE {endpoint}/@connections/{id}``).

PostToConnection is one SigV4-signed ``POST {endpoint}/@connections/{id}`` carrying the frame:
it is signed here with botocore's signer and sent over botocore's HTTP session, without a boto3
client around them. The client's per-call machinery (validation, event hooks, endpoint rules,
user agent, response parsing) made a post about 0.7 ms of CPU where the signed request alone
takes about 0.45 ms, and a push's concurrent posts share one interpreter lock, so that CPU adds
up post after post (a 512 MB function has about a third of a vCPU). ``python -m bench push``
measures both.
"""

from __future__ import annotations

import json
import socket
from functools import lru_cache
from typing import Any, Protocol

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSPreparedRequest, AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import BotoCoreError
from botocore.httpsession import URLLib3Session
from botocore.utils import get_environ_proxies, percent_encode

from warble.dal.aws_auth import botocore_session
from warble.domain.push.ports import ConnectionGone, PushFailed
from warble.settings import Settings

SIGNING_NAME = "execute-api"  # the management API's SigV4 service name
# Kept-alive connections per endpoint: one for each concurrent post of a push
# (warble.services sizes the push's thread pool with it).
POOL_CONNECTIONS = 16
# A push is short and best effort: a slow endpoint must not hold a request for long.
_TIMEOUT = (2, 3)  # seconds to connect, to read
# A throttled, failing or unreachable post is tried once more (the boto3 client's
# max_attempts=2 did the same).
_ATTEMPTS = 2
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# Headers and body leave in two writes: without TCP_NODELAY, Nagle's algorithm holds the body
# until the headers are acknowledged, and a delayed ACK turns that into ~40 ms a post. boto3
# clients set it; a bare URLLib3Session does not.
_SOCKET_OPTIONS = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


class Response(Protocol):
    status_code: int


class Transport(Protocol):
    """Sends a prepared request (botocore's ``URLLib3Session``; a test's recorder)."""

    def send(self, request: AWSPreparedRequest) -> Response: ...


@lru_cache(maxsize=4)
def _transport(endpoint_url: str) -> URLLib3Session:
    """One connection pool per endpoint, shared by the threads of a push (it is thread-safe)."""
    return URLLib3Session(
        verify=botocore_session().get_config_variable("ca_bundle") or True,
        proxies=get_environ_proxies(endpoint_url),
        timeout=_TIMEOUT,
        max_pool_connections=POOL_CONNECTIONS,
        socket_options=_SOCKET_OPTIONS,
    )


def callback_url(settings: Settings, domain_name: str = "", stage: str = "") -> str:
    """The configured endpoint, else the one API Gateway documents for this connection."""
    return settings.websocket_callback_url or f"https://{domain_name}/{stage}"


class WebSocketSender:
    def __init__(
        self,
        endpoint_url: str,
        region: str,
        *,
        transport: Transport | None = None,
        credentials: Credentials | None = None,
    ) -> None:
        self._endpoint_url = endpoint_url.rstrip("/")
        self._region = region
        # Both resolved on the caller's thread, not on the push's (a botocore session is not
        # thread-safe); after the first call they are cached.
        self._transport = transport or _transport(self._endpoint_url)
        self._credentials = credentials or botocore_session().get_credentials()

    def send(self, connection_id: str, frame: dict[str, Any]) -> None:
        self._call("POST", connection_id, json.dumps(frame, separators=(",", ":")).encode())

    def close(self, connection_id: str) -> None:
        """DeleteConnection: API Gateway closes the socket (code 1000) and runs $disconnect."""
        self._call("DELETE", connection_id, b"")

    def _call(self, method: str, connection_id: str, data: bytes) -> None:
        url = f"{self._endpoint_url}/@connections/{percent_encode(connection_id)}"
        for attempt in range(1, _ATTEMPTS + 1):
            try:
                status = self._transport.send(self.signed(url, data, method)).status_code
            except BotoCoreError as exc:  # unreachable, timed out, no credentials
                if attempt < _ATTEMPTS:
                    continue
                raise PushFailed(connection_id) from exc
            if 200 <= status < 300:
                return
            if status == 410:  # GoneException: the client went away
                raise ConnectionGone(connection_id)
            if status not in _RETRY_STATUSES or attempt == _ATTEMPTS:
                raise PushFailed(connection_id, status)

    def signed(self, url: str, data: bytes, method: str = "POST") -> AWSPreparedRequest:
        """The request a boto3 ``post_to_connection`` (``delete_connection``) would send,
        signed now."""
        request = AWSRequest(method=method, url=url, data=data)
        # Refreshable credentials (a container's role) renew here; none: NoCredentialsError.
        credentials = self._credentials.get_frozen_credentials() if self._credentials else None
        SigV4Auth(credentials, SIGNING_NAME, self._region).add_auth(request)
        return request.prepare()
