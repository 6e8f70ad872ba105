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


def test_a_ring_waits_no_longer_than_half_the_margin():
    # an import (or a Redis call) that outlasts half the margin is interrupted after all
    code = compile("ring()", "<frozen importlib._bootstrap>", "exec")
    with pytest.raises(DeadlineExceeded), answering_within(ShortContext(60_000)):
        deadline._Alarm.waits_until = time.monotonic()  # half the margin already spent
        exec(code, {"ring": _ring_here})


def test_an_import_interrupted_after_all_is_run_whole_the_next_time(tmp_path, monkeypatch):
    # given a package whose import the ring interrupts past half the margin, after its submodule
    # was loaded (as `import redis` was, in make chaos: redis.exceptions loaded, redis not)
    package = tmp_path / "halfmade"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from halfmade.errors import Boom\nimport builtins\nbuiltins.warble_ring_here()\n"
    )
    (package / "errors.py").write_text("class Boom(Exception):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import builtins

    monkeypatch.setattr(builtins, "warble_ring_here", _ring_here, raising=False)
    with pytest.raises(DeadlineExceeded), answering_within(ShortContext(60_000)):
        deadline._Alarm.waits_until = time.monotonic()
        import halfmade
    # when the next request imports it, then the package is whole: its submodule is its attribute
    monkeypatch.setattr(builtins, "warble_ring_here", lambda: None, raising=False)
    import halfmade

    assert halfmade.errors.Boom is halfmade.Boom
    for name in [m for m in sys.modules if m.startswith("halfmade")]:
        del sys.modules[name]
