"""ReactionsConsumerFunction: the second reader of every stream (notifications, cleanup, and
every other reaction)."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.streams import reactions

handler = reactions.handler
