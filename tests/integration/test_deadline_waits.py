"""The deadline's alarm waits for the code it would corrupt (warble.deadline, ``_DEFER_IN``): a
ring in the middle of a redis-py call, between a command sent and its reply read, would hand
the connection back to the pool with the reply unread, and the next command would read it; a
ring in the middle of an import would leave the module broken for the container's later
requests. Both were seen under `make chaos`' consumer-kill runs on a loaded machine. Here the
ring is made to arrive at exactly those places."""

from __future__ import annotations

import signal
import sys
import time

import pytest
import redis as redis_lib
from warble import deadline
from warble.deadline import DeadlineExceeded, answering_within

from tests.conftest import TEST_REDIS_URL
from tests.integration.test_deadline import ShortContext

pytestmark = pytest.mark.integration


def _ring_here() -> None:
    deadline._ring(signal.SIGALRM, sys._getframe())


def test_a_ring_between_a_redis_command_and_its_reply_waits_and_leaves_no_reply_unread(
    monkeypatch,
):
    client = redis_lib.Redis.from_url(TEST_REDIS_URL, decode_responses=True)
    key, other = "deadline-waits:sent", "deadline-waits:unset"
    client.set(key, "its own reply")
    client.delete(other)
    parse = redis_lib.Redis.parse_response
    rung = []

    def parse_after_a_ring(self, connection, command_name, **options):
        if not rung:  # the alarm arrives after the GET was sent, before its reply is read
            rung.append(True)
            _ring_here()
        return parse(self, connection, command_name, **options)

    monkeypatch.setattr(redis_lib.Redis, "parse_response", parse_after_a_ring)
    with pytest.raises(DeadlineExceeded), answering_within(ShortContext(60_000)):
        assert client.get(key) == "its own reply"  # the call ends first
        time.sleep(1)  # then the alarm rings again, outside redis-py
    monkeypatch.undo()
    # the connection the GET used holds no unread reply: the next command reads its own
    assert client.get(other) is None
    client.close()


def test_a_ring_inside_an_import_waits_for_it():
    # code that runs as importlib's own (as a module's import does)
    code = compile("ring()", "<frozen importlib._bootstrap>", "exec")
    imported = []
    with pytest.raises(DeadlineExceeded), answering_within(ShortContext(60_000)):
        exec(code, {"ring": _ring_here})  # no exception inside the import
        imported.append(True)
        time.sleep(1)  # the alarm rings again once it is done
    assert imported
    # and anywhere else the ring raises at once
    with pytest.raises(DeadlineExceeded), answering_within(ShortContext(60_000)):
        _ring_here()
