"""The operator's sweep of the keys a cache's move left behind (``warble.dal.slot_sweep``), on
the current container's Redis client: what OperatorFunction's ``sweep_moved_slots`` calls."""

from __future__ import annotations

from warble import services
from warble.dal import slot_sweep


def primaries() -> list[str]:
    """Every cache's primaries ("host:port"); none on a single cache."""
    return slot_sweep.primaries(services.container().redis)


def sweep(node: str, cursor: int, seconds: float) -> tuple[int, int]:
    """``node`` swept from ``cursor`` for about ``seconds``: (the cursor to go on from, 0 when
    done; keys removed)."""
    return slot_sweep.sweep(services.container().redis, node, cursor, seconds)
