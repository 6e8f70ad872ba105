"""CounterConsumerFunction: DynamoDB Streams -> counters, exactly once (warble.domain.counters)."""

from warble.entrypoints.streams import counters as handler

__all__ = ["handler"]
