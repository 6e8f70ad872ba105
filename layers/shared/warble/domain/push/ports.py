"""What real-time push needs: open connections and a sender (``warble.dal.connections``,
``websocket``), and the errors a post raises."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol


class ConnectionStore(Protocol):
    """Open WebSocket connections by user (``warble.dal.connections``)."""

    def for_user(self, user_id: int) -> list[str]: ...
    def for_users(self, user_ids: list[int]) -> dict[int, list[str]]: ...
    def remove(self, connection_id: str) -> str | None: ...


class FrameSender(Protocol):
    """Posts a frame to one connection (API Gateway's ``@connections``); raises ConnectionGone."""

    def send(self, connection_id: str, frame: dict[str, Any]) -> None: ...


class Pushes(Protocol):
    """Real-time push (``warble.domain.push.service.Pusher``)."""

    def push(
        self, user_ids: Iterable[int], frame: dict[str, Any], skip: str | None = None
    ) -> Any: ...


class ConnectionGone(Exception):
    """The client behind a connection has gone (``410 GoneException``)."""


class PushFailed(Exception):
    """A post to a connection failed for another reason (throttled, unreachable)."""
