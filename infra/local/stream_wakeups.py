"""Stream records' wake-ups: the moto server names the table whose stream got a record, in a
datagram on loopback, and the stream pollers read that table's shards at once.

Lambda polls an idle shard four times a second. Doing the same against moto costs a local stack
about a third of a core while nothing happens, a GetRecords a quarter second per reader lane,
and each test stack pays it. With the wake-ups, an idle lane polls every few seconds only as a
safety net (a lost datagram), and a record is read as soon as it is written, whoever wrote it
(a function, a test, the seed). The local runtime alone uses this; nothing deployed does.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable

ENV = "WARBLE_STREAM_WAKEUPS"  # host:port the moto server sends its datagrams to


class StreamWakeups:
    """The pollers' side: a UDP socket on loopback whose datagrams each name a table."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind((host, 0))
        self.address = f"{host}:{self._socket.getsockname()[1]}"
        self._listeners: list[Callable[[str], None]] = []
        self._thread: threading.Thread | None = None

    def subscribe(self, on_table: Callable[[str], None]) -> None:
        """Call ``on_table(name)`` for each datagram from now on (until ``unsubscribe``)."""
        self._listeners = [*self._listeners, on_table]
        if self._thread is None:
            self._thread = threading.Thread(target=self._listen, name="wakeups", daemon=True)
            self._thread.start()

    def unsubscribe(self, on_table: Callable[[str], None]) -> None:
        self._listeners = [f for f in self._listeners if f != on_table]

    def _listen(self) -> None:
        while True:
            try:
                data = self._socket.recv(512)
            except OSError:
                return  # closed
            table = data.decode("utf-8", "replace")
            for on_table in self._listeners:
                on_table(table)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._socket.close()


def announcer() -> Callable[[str], None] | None:
    """The moto server's side: a function that names a table to the pollers (never blocking,
    never failing), or None when no poller listens (ENV unset)."""
    address = os.environ.get(ENV)
    if not address:
        return None
    host, _, port = address.rpartition(":")
    target = (host, int(port))
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender.setblocking(False)

    def announce(table: str) -> None:
        with contextlib.suppress(OSError):  # a full buffer: the safety poll reads it
            sender.sendto(table.encode(), target)

    return announce
