"""The WebSocket push's builders: the connections' registry, the sender to API Gateway's
``@connections`` endpoint, and the pusher that posts a user's frames to their connections."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from warble.services.parts import Parts

if TYPE_CHECKING:
    from warble.dal.connections import ConnectionRegistry
    from warble.dal.websocket import WebSocketSender
    from warble.domain.push.service import Pusher


def connections(c: Parts) -> ConnectionRegistry:
    return c.stores.connections()


def sender(c: Parts, domain_name: str = "", stage: str = "") -> WebSocketSender:
    """Posts to connections; API Gateway's documented endpoint for the event's domain and stage
    unless WEBSOCKET_CALLBACK_URL names one."""
    from warble.dal.websocket import WebSocketSender, callback_url

    return WebSocketSender(callback_url(c.settings, domain_name, stage), c.settings.aws_region)


def pool(c: Parts) -> ThreadPoolExecutor:
    from warble.dal.websocket import POOL_CONNECTIONS

    # Posts to a user's connections go out concurrently, not one after another; no more threads
    # than the sender keeps connections, or the extra posts would each reconnect.
    return ThreadPoolExecutor(max_workers=POOL_CONNECTIONS, thread_name_prefix="push")


def pusher(c: Parts, connections: ConnectionRegistry, pool: ThreadPoolExecutor) -> Pusher:
    from warble.domain.push.service import Pusher

    return Pusher(connections, sender(c), pool)
