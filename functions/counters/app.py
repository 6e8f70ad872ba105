"""CounterConsumerFunction: DynamoDB Streams -> counters, exactly once (warble.counters)."""

from warble.jobs import counter_consumer as handler

__all__ = ["handler"]
