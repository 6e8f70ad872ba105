"""WebSocketFunction: $connect, $disconnect, $default and ping."""

from warble.entrypoints.websocket import handler

__all__ = ["handler"]
