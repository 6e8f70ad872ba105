"""Posting to WebSocket clients through API Gateway's @connections management API."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import boto3

from warble.settings import get_settings


@lru_cache(maxsize=4)
def _client(endpoint_url: str) -> Any:
    return boto3.client("apigatewaymanagementapi", endpoint_url=endpoint_url)


def callback_url(domain_name: str, stage: str) -> str:
    """The configured endpoint, else the one API Gateway documents for this connection."""
    return get_settings().websocket_callback_url or f"https://{domain_name}/{stage}"


class ConnectionGone(Exception):
    """The client has disconnected (410 GoneException)."""


class WebSocketSender:
    def __init__(self, endpoint_url: str) -> None:
        self._client = _client(endpoint_url)

    def send(self, connection_id: str, frame: dict[str, Any]) -> None:
        data = json.dumps(frame, separators=(",", ":")).encode()
        try:
            self._client.post_to_connection(ConnectionId=connection_id, Data=data)
        except self._client.exceptions.GoneException as exc:
            raise ConnectionGone(connection_id) from exc
