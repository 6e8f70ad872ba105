"""WebSocketFunction: $connect, $disconnect, $default and ping."""

from warble.websocket import handler

__all__ = ["handler"]
