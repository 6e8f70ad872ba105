"""Time in one place: UTC now, and API.md's RFC 3339 format with milliseconds."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def now() -> datetime:
    return datetime.now(UTC)


def epoch_ms() -> int:
    return time.time_ns() // 1_000_000


def epoch_s() -> int:
    return epoch_ms() // 1000


def rfc3339(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def rfc3339_ms(epoch_milliseconds: int) -> str:
    """``rfc3339(from_ms(epoch_milliseconds))`` in integers, without building a datetime (a
    page renders one per item: a fifth of the time of the datetime round trip)."""
    seconds, milliseconds = divmod(epoch_milliseconds, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{milliseconds:03d}Z"


def from_ms(epoch_milliseconds: int) -> datetime:
    return datetime.fromtimestamp(epoch_milliseconds / 1000, UTC)
