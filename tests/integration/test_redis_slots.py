"""The one-slot check of tests marked ``redis`` (tests/support/slots.py) sees what the code
sends and flags what a cluster would refuse or split."""

from __future__ import annotations

import pytest
from redis.crc import key_slot
from warble import keys
from warble.dal.cache import LeasedCache

from tests.support.slots import SlotRecorder

pytestmark = pytest.mark.integration


@pytest.fixture
def recorder(monkeypatch) -> SlotRecorder:
    recorder = SlotRecorder()
    recorder.install(monkeypatch)
    return recorder


def test_what_spans_slots_is_flagged_and_what_shares_a_tag_is_not(redis, recorder):
    one, other = keys.profile(1).value, keys.profile(2).value
    assert key_slot(one.encode()) != key_slot(other.encode())
    script = redis.register_script("return #KEYS")
    script(keys=[one, keys.profile(1).lease])  # one tag: fine
    redis.delete(one, keys.profile(1).lease)
    assert recorder.crossing() == []

    redis.delete(one, other)
    redis.mget([one, other])  # not atomic: reads never rely on it (see tests/support/slots.py)
    script(keys=[one, other])
    pipe = redis.pipeline(transaction=True)
    pipe.set(one, "1")
    pipe.set(other, "2")
    pipe.execute()
    pipe = redis.pipeline(transaction=False)  # a plain pipeline may span slots
    pipe.get(one)
    pipe.get(other)
    pipe.execute()
    assert [c.split(" ")[0] for c in recorder.crossing()] == ["DEL", "EVALSHA", "MULTI"]


def test_the_code_under_test_is_recorded(redis, recorder):
    """The recorder hooks the connection under every client: the code's own calls show up."""
    cache = LeasedCache(redis, 60, keys.profile)
    cache.invalidate(7)
    token = cache.lease(7)
    assert token is not None
    cache.fill(7, token, {"id": 7})
    cache.tombstone(7, {"deleted": True}, 60)
    recorded = [(unit.what, unit.keys) for unit in recorder.units]
    pair = [keys.profile(7).value, keys.profile(7).lease]
    assert ("DEL", pair) in recorded
    assert ("EVALSHA", pair) in recorded
    assert ("MULTI SET DEL", pair) in recorded
    assert recorder.crossing() == []
