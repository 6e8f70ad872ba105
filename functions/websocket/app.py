"""WebSocketFunction: $connect, $disconnect, $default and ping."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.dal import prepare
from warble.entrypoints.websocket import handler

prepare("redis", "dynamodb")  # in the init, not under the first message's deadline

__all__ = ["handler"]
