"""WebSocketFunction: $connect, $disconnect, $default and ping."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.dal import prepare
from warble.entrypoints.websocket import handler

# In the init, not under the first message's deadline: Redis only, which the $connect authorizer
# (often a new environment's first call, on every new connection) reads alone.
prepare("redis")

__all__ = ["handler"]
