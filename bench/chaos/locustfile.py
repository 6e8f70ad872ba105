"""The load test's users (bench/load/locustfile.py), with every answer recorded for the fault
harness: when it started, its route, status, latency and whether a 503 carried `Retry-After`.

    CHAOS_ANSWERS=answers.jsonl python -m locust -f bench/chaos/locustfile.py --headless ...

A WebSocket send has no status: an ack counts as 200, an `unavailable` error frame as 503, any
other error (a closed socket, a timeout) as 0. The socket users connect again once their socket
is closed (a gateway restart), at their next send (1 to 3 s later, then each send until one
connects), as the web client does with its backoff; the load test's own users do not.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from locust import events
from websocket import WebSocketException

# Imported, so Locust runs them here as `make load` does (and the writes go to LOAD_WRITES).
from bench.load import locustfile as load
from bench.load.locustfile import DailyUser  # noqa: F401

ANSWERS = Path(os.environ.get("CHAOS_ANSWERS", "bench/results/chaos-answers.jsonl"))
_lock = threading.Lock()
_answers: list[str] = []
_flushed = 0.0


class MessagingUser(load.MessagingUser):
    """The load's socket user, connecting again (with the same session) once its socket closed."""

    def _connect(self) -> None:
        try:
            super()._connect()
        except (OSError, WebSocketException):
            self.ws = None  # refused (the gateway is down): again at the next send

    def _reconnect(self) -> None:
        if self.token is not None:
            self._connect()

    def _lost(self) -> None:
        with contextlib.suppress(OSError, WebSocketException):
            if self.ws is not None:
                self.ws.close()
        self.ws = None  # connect again at the next send


def _status(response: Any, exception: BaseException | None) -> int:
    if response is not None and getattr(response, "status_code", None) is not None:
        return int(response.status_code)
    if exception is None:
        return 200
    return 503 if str(exception) == "unavailable" else 0


@events.request.add_listener
def _answer(
    request_type: str,
    name: str,
    response_time: float,
    response: Any = None,
    exception: BaseException | None = None,
    start_time: float | None = None,
    **_: Any,
) -> None:
    status = _status(response, exception)
    headers = getattr(response, "headers", None) or {}
    began = start_time if start_time is not None else time.time() - response_time / 1000
    line = {"t": round(began, 3), "route": f"{request_type} {name}", "status": status,
            "ms": round(response_time, 1), "retry_after": "Retry-After" in headers}  # fmt: skip
    global _flushed
    with _lock:
        _answers.append(json.dumps(line))
        if len(_answers) >= 50 or time.monotonic() - _flushed > 1:  # the harness waits on it
            _flush()
            _flushed = time.monotonic()


def _flush() -> None:
    ANSWERS.parent.mkdir(parents=True, exist_ok=True)
    with ANSWERS.open("a") as out:
        out.write("".join(f"{line}\n" for line in _answers))
    _answers.clear()


@events.test_stop.add_listener
def _last(**_: Any) -> None:
    with _lock:
        _flush()
