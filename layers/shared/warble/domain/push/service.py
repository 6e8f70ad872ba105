"""Real-time push: a frame to every open WebSocket connection of some users.

On API Gateway the ``@connections`` management API plays the part of seed 003's pub/sub: any
function can post to any connection, so no server holds sockets and nothing subscribes. A push
looks up the users' connections (one Query each, concurrently), posts to all of them
concurrently, and forgets exactly the connections that API Gateway refuses with
``410 GoneException`` (a client that went away without a close frame); a connection whose
``$disconnect`` never came also expires by TTL.

A push is best effort by design: the data it announces is stored first (messages,
notifications), so a failed post loses nothing; the client finds it on its next read. So a push
never raises for a gone or failing connection.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from warble.domain.push.ports import ConnectionGone, ConnectionStore, FrameSender, PushFailed

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PushReport:
    delivered: int
    gone: list[str]
    failed: int


class Pusher:
    def __init__(self, connections: ConnectionStore, sender: FrameSender, pool: Executor) -> None:
        self._connections = connections
        self._sender = sender
        self._pool = pool

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
        for connection in gone:
            self._connections.remove(connection)  # exactly the refused one
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
        the connections API Gateway refuses with 410."""
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
        for connection in gone:
            self._connections.remove(connection)
        flat = [o for outcomes in results for o in outcomes]
        return PushReport(flat.count("ok"), gone, flat.count("failed"))

    def _post(self, connection: str, frame: dict[str, Any]) -> str:
        try:
            self._sender.send(connection, frame)
        except ConnectionGone:
            return "gone"
        except PushFailed:  # a push never fails what it announces: the data is stored already
            log.warning("push to %s failed", connection, exc_info=True)
            return "failed"
        return "ok"
