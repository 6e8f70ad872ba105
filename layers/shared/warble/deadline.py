"""An answer before Lambda's timeout: a request still running near the end of its function's time
is interrupted and answered ``503 unavailable`` with ``Retry-After`` (API.md "Conventions").

Without it a store that hangs rather than fails (a paused cache, a locked table, a DynamoDB that
throttles behind botocore's retries, the local moto held by a long job) runs the function into
its timeout, which API Gateway answers as a bare 500. The alarm is the process's interval timer
(``SIGALRM``): it interrupts a blocking socket read as well as Python code, costs two system
calls per request, and is armed only on the main thread, where Lambda's runtime (and the local
runtime's worker) runs the handler; elsewhere (a handler called from a test's thread) it is off.

``DeadlineExceeded`` is a ``BaseException``, as ``KeyboardInterrupt`` is: no ``except
Exception`` on the way swallows it, and the clients it interrupts drop the connection they were
reading (the PostgreSQL connection is closed by the caller of ``answering_within``, see
``warble.http.app``). Where an exception would leave shared state half made (an import, redis-py
between a command and its reply) the ring waits for that code to return (``_DEFER_IN``).
"""

from __future__ import annotations

import _signal  # getsignal without the signal module's enum conversion
import signal
import threading
import time
from typing import Any

__all__ = ["DeadlineExceeded", "answering_within", "margin_ms", "rings_at", "time_left"]


class DeadlineExceeded(BaseException):
    """The function's time is nearly spent: answer now."""


class _Alarm:
    armed = False
    rings_at = 0.0  # time.monotonic() when it rings, while armed


# A ring that finds the interrupted code in one of these waits for it to return: an exception
# there leaves shared state half made. An import half run leaves its module broken for every
# later request of the container ("module 'redis' has no attribute 'exceptions'"); redis-py
# between sending a command and reading its reply, where it catches nothing, hands the
# connection back to its pool with the reply unread, so the next command reads it (a blocks
# hash answered with another command's list). Both end within the request's window (a Redis
# command's socket timeout is bounded by it: warble.dal.redis), then the alarm rings again.
_DEFER_IN = ("<frozen importlib.", "/redis/")
_DEFER_SECONDS = 0.005


def _deferred(frame: Any) -> bool:
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(_DEFER_IN[0]) or _DEFER_IN[1] in name.replace("\\", "/"):
            return True
        frame = frame.f_back
    return False


def _ring(signum: int, frame: Any) -> None:
    # A ring that arrives as the block ends (after ``armed`` went False) is ignored.
    if _Alarm.armed:
        if _deferred(frame):
            signal.setitimer(signal.ITIMER_REAL, _DEFER_SECONDS)
            return
        _Alarm.armed = False
        raise DeadlineExceeded()


def time_left() -> float | None:
    """Seconds until the request's deadline rings, what a store call and its retries may take
    at most (``warble.dal.dynamo`` bounds botocore's by it); None where no deadline is armed (a
    stream consumer, a schedule, a handler called off the main thread)."""
    if not _Alarm.armed:
        return None
    return max(0.0, _Alarm.rings_at - time.monotonic())


def rings_at() -> float | None:
    """When the running request's deadline rings (``time.monotonic()``), which names the request
    (``warble.dal.redis`` remembers a cache that stalled for it); None where none is armed."""
    return _Alarm.rings_at if _Alarm.armed else None


def margin_ms(remaining_ms: int) -> int:
    """Time kept back to answer: a tenth of what is left, between 200 ms and 1 s."""
    return min(1000, max(200, remaining_ms // 10))


class answering_within:  # a context manager, named as the function it was
    """Raise ``DeadlineExceeded`` inside the block once the context's remaining time, less
    ``margin_ms``, has passed. Off where no alarm can be set (not the main thread, a context
    without ``get_remaining_time_in_millis``). A class, not a generator: it wraps every
    request, and ``contextlib``'s generator and ``signal.getsignal``'s enum lookup (a
    ValueError caught inside for any handler that is a function) were most of its cost."""

    __slots__ = ("_armed", "_context")

    def __init__(self, context: Any) -> None:
        self._context = context
        self._armed = False

    def __enter__(self) -> None:
        remaining = getattr(self._context, "get_remaining_time_in_millis", None)
        left = remaining() if callable(remaining) else None
        if not isinstance(left, int) or threading.get_ident() != threading.main_thread().ident:
            return
        if _signal.getsignal(signal.SIGALRM) is not _ring:
            signal.signal(signal.SIGALRM, _ring)
        seconds = max(left - margin_ms(left), 1) / 1000
        _Alarm.rings_at = time.monotonic() + seconds
        _Alarm.armed = self._armed = True
        signal.setitimer(signal.ITIMER_REAL, seconds)

    def __exit__(self, *exc: object) -> None:
        if self._armed:
            _Alarm.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
