"""The push path (warble.domain.push) with in-memory connections and a recording sender."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from warble.domain.push.ports import ConnectionGone, PushFailed
from warble.domain.push.service import Pusher

pytestmark = pytest.mark.unit


class Connections:
    def __init__(self, by_user: dict[int, list[str]]) -> None:
        self.by_user = by_user
        self.removed: list[str] = []

    def for_user(self, user_id: int) -> list[str]:
        return list(self.by_user.get(user_id, []))

    def remove(self, connection_id: str) -> str | None:
        self.removed.append(connection_id)
        for connections in self.by_user.values():
            if connection_id in connections:
                connections.remove(connection_id)
        return None


class Sender:
    def __init__(self, gone: set[str] = frozenset(), failing: set[str] = frozenset()) -> None:
        self.gone, self.failing = gone, failing
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()

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
