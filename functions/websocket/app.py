"""WebSocketFunction: $connect, $disconnect, $default and ping."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.websocket import handler

__all__ = ["handler"]
