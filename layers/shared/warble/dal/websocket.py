"""Posting to WebSocket clients through API Gateway's @connections management API."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from warble.domain.ports import ConnectionGone, PushFailed
from warble.settings import Settings

# A push is short and best effort: a slow endpoint must not hold a request for long.
_CLIENT_CONFIG = Config(connect_timeout=2, read_timeout=3, retries={"max_attempts": 2})


@lru_cache(maxsize=4)
def _client(endpoint_url: str) -> Any:
    """One client per endpoint, shared by the threads of a push (boto3 clients are thread-safe)."""
    return boto3.client("apigatewaymanagementapi", endpoint_url=endpoint_url, config=_CLIENT_CONFIG)


def callback_url(settings: Settings, domain_name: str = "", stage: str = "") -> str:
    """The configured endpoint, else the one API Gateway documents for this connection."""
    return settings.websocket_callback_url or f"https://{domain_name}/{stage}"


class WebSocketSender:
    def __init__(self, endpoint_url: str) -> None:
        self._client = _client(endpoint_url)

    def send(self, connection_id: str, frame: dict[str, Any]) -> None:
        data = json.dumps(frame, separators=(",", ":")).encode()
        try:
            self._client.post_to_connection(ConnectionId=connection_id, Data=data)
        except self._client.exceptions.GoneException as exc:
            raise ConnectionGone(connection_id) from exc
        except (ClientError, BotoCoreError) as exc:
            raise PushFailed(connection_id) from exc
