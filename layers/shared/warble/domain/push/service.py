"""Real-time push: a frame to every open WebSocket connection of some users.

On API Gateway the ``@connections`` management API plays the part of seed 003's pub/sub: any
function can post to any connection, so no server holds sockets and nothing subscribes. A push
looks up the users' connections (one Query each, concurrently), posts to all of them
concurrently, and forgets exactly the connections that API Gateway refuses with
``410 GoneException`` (a client that went away without a close frame); a connection whose
``$disconnect`` never came also expires by TTL.

A 410 does not always mean gone: ``$connect`` registers a connection before API Gateway has
finished its handshake, and a post in that gap is refused with 410 although the connection is
about to be live. So a 410 forgets only a registration older than the longest handshake
(``HANDSHAKE_GRACE_MS``); a younger one stays, and if its client really went away its
``$disconnect`` or its TTL removes it.

``close_sessions`` is how an ended session's connections end (``warble.domain.accounts``'
``end_sessions``): their registrations are forgotten, so no later push finds them, then each is
closed through ``@connections`` DELETE.

A push is best effort by design: the data it announces is stored first (messages,
notifications), so a failed post loses nothing; the client finds it on its next read. So a push
never raises for a gone or failing connection.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from warble import clock
from warble.domain.push.ports import (
    ConnectionGone,
    ConnectionStore,
    FrameSender,
    PushFailed,
    Registration,
)

log = logging.getLogger(__name__)

# How long after its registration a connection may still be in its handshake: $connect's
# integration (API Gateway's 29 s timeout at most) has to return before the socket is live.
HANDSHAKE_GRACE_MS = 30_000
# A connection closed while still in its handshake answers DELETE with 410 and then goes live:
# the close is tried again after these pauses (seconds; the handshake gap is milliseconds).
_CLOSE_RETRIES = (0.1, 0.3, 0.6, 1.2)


@dataclass(frozen=True)
class PushReport:
    delivered: int
    gone: list[str]
    failed: int


class Pusher:
    def __init__(
        self,
        connections: ConnectionStore,
        sender: FrameSender,
        pool: Executor,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._connections = connections
        self._sender = sender
        self._pool = pool
        self._sleep = sleep

    def push(
        self, user_ids: Iterable[int], frame: dict[str, Any], skip: str | None = None
    ) -> PushReport:
        """Post ``frame`` to every connection of ``user_ids`` but ``skip`` (the sender's own)."""
        users = list(dict.fromkeys(user_ids))
        # A message goes to two users: their registry reads overlap as the posts do.
        found = (
            self._pool.map(self._connections.for_user, users)
            if len(users) > 1
            else map(self._connections.for_user, users)
        )
        targets = [connection for each in found for connection in each if connection != skip]
        outcomes = list(self._pool.map(lambda c: self._post(c, frame), targets))
        gone = [c for c, outcome in zip(targets, outcomes, strict=True) if outcome == "gone"]
        cutoff = clock.epoch_ms() - HANDSHAKE_GRACE_MS
        for connection in gone:
            # exactly the refused one, unless it may still be in its handshake
            self._connections.remove_if_older(connection, cutoff)
        return PushReport(outcomes.count("ok"), gone, outcomes.count("failed"))

    def push_each(
        self,
        user_ids: Iterable[int],
        frames: Callable[[list[int]], dict[int, dict[str, Any]]],
    ) -> PushReport:
        """A frame of its own to every connection of each user: the users' connections in one
        lookup, then ``frames`` asked once, for the users that have a connection, so nothing is
        made for the others."""
        users = list(dict.fromkeys(user_ids))
        found = self.connected(users)
        made = frames([u for u in users if found.get(u)])
        return self.post_all([(c, made[u]) for u in users if u in made for c in found.get(u, ())])

    def connected(self, user_ids: list[int]) -> dict[int, list[str]]:
        """The open connections of many users, in one lookup (a stream batch's recipients)."""
        return self._connections.for_users(user_ids) if user_ids else {}

    def post_all(self, posts: list[tuple[str, dict[str, Any]]]) -> PushReport:
        """Post each ``(connection, frame)``, concurrently, in order per connection; forget
        the connections API Gateway refuses with 410 (unless young enough to be in their
        handshake, as ``push`` does)."""
        by_connection: dict[str, list[dict[str, Any]]] = {}
        for connection, frame in posts:
            by_connection.setdefault(connection, []).append(frame)

        def send(item: tuple[str, list[dict[str, Any]]]) -> list[str]:
            connection, frames = item
            outcomes = []
            for frame in frames:
                outcomes.append(self._post(connection, frame))
                if outcomes[-1] == "gone":
                    break
            return outcomes

        results = list(self._pool.map(send, by_connection.items()))
        gone = [c for c, outcomes in zip(by_connection, results, strict=True) if "gone" in outcomes]
        cutoff = clock.epoch_ms() - HANDSHAKE_GRACE_MS
        for connection in gone:
            self._connections.remove_if_older(connection, cutoff)
        flat = [o for outcomes in results for o in outcomes]
        return PushReport(flat.count("ok"), gone, flat.count("failed"))

    def close_sessions(self, user_id: int, session_ids: Collection[int]) -> int:
        """End the connections of these sessions of a user: forgotten first (no push finds
        them from then on), then closed through ``@connections`` DELETE. A registration that
        names no session could belong to any of them: it ends too. Returns how many ended."""
        ended = set(session_ids)
        doomed = [
            r
            for r in self._connections.registrations(user_id)
            if r.session_id is None or r.session_id in ended
        ]
        if not doomed:
            return 0
        self._connections.forget(user_id, [r.connection_id for r in doomed])
        young = clock.epoch_ms() - HANDSHAKE_GRACE_MS
        waiting = [
            r
            for r, outcome in zip(doomed, self._pool.map(self._close, doomed), strict=True)
            if outcome == "gone" and r.registered_at_ms > young
        ]
        # Refused as gone while possibly still in its handshake: it may go live in a moment.
        for pause in _CLOSE_RETRIES:
            if not waiting:
                break
            self._sleep(pause)
            outcomes = list(self._pool.map(self._close, waiting))
            waiting = [r for r, outcome in zip(waiting, outcomes, strict=True) if outcome == "gone"]
        return len(doomed)

    def _close(self, registration: Registration) -> str:
        try:
            self._sender.close(registration.connection_id)
        except ConnectionGone:
            return "gone"
        except PushFailed:
            # Forgotten already, so it gets no push; its every frame is refused (the session is
            # checked on each), and API Gateway ends it within two hours.
            log.warning("close of %s failed", registration.connection_id, exc_info=True)
            return "failed"
        return "ok"

    def _post(self, connection: str, frame: dict[str, Any]) -> str:
        try:
            self._sender.send(connection, frame)
        except ConnectionGone:
            return "gone"
        except PushFailed:  # a push never fails what it announces: the data is stored already
            log.warning("push to %s failed", connection, exc_info=True)
            return "failed"
        return "ok"
