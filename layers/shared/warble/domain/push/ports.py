"""What real-time push needs: open connections and a sender (``warble.dal.connections``,
``websocket``), and the errors a post raises."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Registration:
    """An open connection as the registry knows it: the session its token belongs to (None for
    a registration written before connections named their session) and when it was written."""

    connection_id: str
    session_id: int | None
    registered_at_ms: int


class ConnectionStore(Protocol):
    """Open WebSocket connections by user (``warble.dal.connections``)."""

    def for_user(self, user_id: int) -> list[str]: ...
    def for_users(self, user_ids: list[int]) -> dict[int, list[str]]: ...
    def remove(self, connection_id: str) -> str | None: ...
    def remove_if_older(self, connection_id: str, registered_before_ms: int) -> bool: ...
    def registrations(self, user_id: int) -> list[Registration]: ...
    def forget(self, user_id: int, connection_ids: Collection[str]) -> None: ...


class FrameSender(Protocol):
    """API Gateway's ``@connections``: posts a frame to one connection, or closes it (DELETE);
    both raise ConnectionGone when the connection is not there."""

    def send(self, connection_id: str, frame: dict[str, Any]) -> None: ...
    def close(self, connection_id: str) -> None: ...


class Pushes(Protocol):
    """Real-time push (``warble.domain.push.service.Pusher``)."""

    def push(
        self, user_ids: Iterable[int], frame: dict[str, Any], skip: str | None = None
    ) -> Any: ...


class ConnectionGone(Exception):
    """The client behind a connection has gone (``410 GoneException``)."""


class PushFailed(Exception):
    """A post to a connection failed for another reason (throttled, unreachable)."""
