"""CounterConsumerFunction: DynamoDB Streams -> counters, exactly once (warble.domain.counters)."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.streams import counters as handler

__all__ = ["handler"]
