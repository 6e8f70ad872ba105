"""The push path (warble.domain.push) with in-memory connections and a recording sender."""

from __future__ import annotations

import threading
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from warble import clock
from warble.domain.push.ports import ConnectionGone, PushFailed, Registration
from warble.domain.push.service import HANDSHAKE_GRACE_MS, Pusher

pytestmark = pytest.mark.unit

LONG_AGO = 0  # registered_at_ms of a connection well past its handshake


class Connections:
    def __init__(
        self,
        by_user: dict[int, list[str]],
        sessions: dict[str, int | None] | None = None,
        registered_at: dict[str, int] | None = None,
    ) -> None:
        self.by_user = by_user
        self.sessions = sessions or {}
        self.registered_at = registered_at or {}
        self.removed: list[str] = []

    def for_user(self, user_id: int) -> list[str]:
        return list(self.by_user.get(user_id, []))

    def remove(self, connection_id: str) -> str | None:
        self.removed.append(connection_id)
        for connections in self.by_user.values():
            if connection_id in connections:
                connections.remove(connection_id)
        return None

    def remove_if_older(self, connection_id: str, registered_before_ms: int) -> bool:
        if self.registered_at.get(connection_id, LONG_AGO) >= registered_before_ms:
            return False
        self.remove(connection_id)
        return True

    def registrations(self, user_id: int) -> list[Registration]:
        return [
            Registration(c, self.sessions.get(c), self.registered_at.get(c, LONG_AGO))
            for c in self.for_user(user_id)
        ]

    def forget(self, user_id: int, connection_ids: Collection[str]) -> None:
        for connection_id in connection_ids:
            self.remove(connection_id)


class Sender:
    def __init__(self, gone: set[str] = frozenset(), failing: set[str] = frozenset()) -> None:
        self.gone, self.failing = gone, failing
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.closed: list[str] = []
        self.lock = threading.Lock()

    def close(self, connection_id: str) -> None:
        if connection_id in self.gone:
            raise ConnectionGone(connection_id)
        if connection_id in self.failing:
            raise PushFailed(connection_id)
        with self.lock:
            self.closed.append(connection_id)

    def send(self, connection_id: str, frame: dict[str, Any]) -> None:
        if connection_id in self.gone:
            raise ConnectionGone(connection_id)
        if connection_id in self.failing:
            raise PushFailed(connection_id)
        with self.lock:
            self.sent.append((connection_id, frame))


@pytest.fixture
def pool():
    with ThreadPoolExecutor(max_workers=8) as executor:
        yield executor


def test_a_frame_reaches_every_connection_of_every_user_but_the_skipped_one(pool):
    connections = Connections({1: ["a1", "a2"], 2: ["b1"]})
    sender = Sender()
    report = Pusher(connections, sender, pool).push([1, 2, 1], {"type": "x"}, skip="a2")
    assert sorted(c for c, _ in sender.sent) == ["a1", "b1"]
    assert report.delivered == 2 and report.gone == [] and report.failed == 0


def test_a_gone_connection_is_removed_and_only_that_one(pool):
    connections = Connections({1: ["stale", "live"], 2: ["sender"]})
    report = Pusher(connections, Sender(gone={"stale"}), pool).push([1], {"type": "x"})
    assert report.gone == ["stale"] and connections.removed == ["stale"]
    assert connections.by_user == {1: ["live"], 2: ["sender"]}


def test_a_connection_refused_as_gone_within_its_handshake_stays_registered(pool):
    """Issue 34: $connect registers a connection before API Gateway has the socket, and a post
    in that gap is refused with 410. That registration is about to be live: it stays (its
    $disconnect or its TTL removes it if the client really went away)."""
    now = clock.epoch_ms()
    connections = Connections(
        {1: ["opening", "stale"]},
        registered_at={"opening": now - 100, "stale": now - HANDSHAKE_GRACE_MS - 1},
    )
    report = Pusher(connections, Sender(gone={"opening", "stale"}), pool).push([1], {"type": "x"})
    assert sorted(report.gone) == ["opening", "stale"]
    assert connections.by_user == {1: ["opening"]} and connections.removed == ["stale"]


def test_closing_sessions_forgets_then_closes_exactly_their_connections(pool):
    connections = Connections(
        {1: ["phone", "laptop", "tablet", "old"], 2: ["theirs"]},
        sessions={"phone": 10, "laptop": 11, "tablet": 12, "old": None, "theirs": 10},
    )
    sender = Sender()
    assert Pusher(connections, sender, pool).close_sessions(1, [10, 12]) == 3
    # "old" names no session (registered before connections did): it could be any of them
    assert sorted(sender.closed) == ["old", "phone", "tablet"]
    assert connections.by_user == {1: ["laptop"], 2: ["theirs"]}
    assert Pusher(connections, sender, pool).close_sessions(1, [99]) == 0


def test_a_connection_still_in_its_handshake_is_closed_once_it_is_live(pool):
    """DELETE on a connection whose handshake has not finished is refused as gone, and the
    socket goes live a moment later: the close is tried again until it lands."""
    now = clock.epoch_ms()
    pauses: list[float] = []

    class Opening(Sender):
        def close(self, connection_id: str) -> None:
            if connection_id == "opening" and len(pauses) < 2:
                raise ConnectionGone(connection_id)  # not live yet
            super().close(connection_id)

    connections = Connections(
        {1: ["opening", "vanished"]},
        sessions={"opening": 7, "vanished": 7},
        registered_at={"opening": now, "vanished": now - HANDSHAKE_GRACE_MS - 1},
    )
    sender = Opening(gone={"vanished"})
    Pusher(connections, sender, pool, sleep=pauses.append).close_sessions(1, [7])
    assert sender.closed == ["opening"] and len(pauses) == 2
    assert connections.by_user == {1: []}


def test_a_failing_post_fails_nothing_and_removes_nothing(pool):
    connections = Connections({1: ["flaky", "fine"]})
    sender = Sender(failing={"flaky"})
    report = Pusher(connections, sender, pool).push([1], {"type": "x"})
    assert (report.delivered, report.failed, connections.removed) == (1, 1, [])


def test_posts_to_one_users_connections_go_out_concurrently(pool):
    """Five posts that each wait for all five to have started: sequential posts would never
    get past the first (the barrier breaks after its timeout)."""
    barrier = threading.Barrier(5, timeout=10)

    class Waiting(Sender):
        def send(self, connection_id: str, frame: dict[str, Any]) -> None:
            barrier.wait()
            super().send(connection_id, frame)

    connections = Connections({1: [f"c{n}" for n in range(5)]})
    report = Pusher(connections, Waiting(), pool).push([1], {"type": "x"})
    assert report.delivered == 5


def test_the_registry_reads_of_several_users_overlap(pool):
    """Each read waits for the other to have started: reads one after another never would."""
    barrier = threading.Barrier(2, timeout=10)

    class Waiting(Connections):
        def for_user(self, user_id: int) -> list[str]:
            barrier.wait()
            return super().for_user(user_id)

    connections = Waiting({1: ["a1"], 2: ["b1", "b2"]})
    sender = Sender()
    report = Pusher(connections, sender, pool).push([1, 2], {"type": "x"}, skip="b2")
    assert sorted(c for c, _ in sender.sent) == ["a1", "b1"] and report.delivered == 2
