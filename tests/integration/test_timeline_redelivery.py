"""The home-timeline fan-out under a poller that crashes mid-batch and redelivers.

The real FanoutConsumerFunction runs in a Lambda worker fed by the local stream poller, from the
real template; the poller is told to crash after invocations (before checkpointing, so the
records come again) and to deliver every batch twice. Nothing may be lost and nothing
duplicated.
"""

from __future__ import annotations

import pytest
from warble import keys, services
from warble.dal.timelines import SENTINEL
from warble.domain.timelines.service import entry

from tests.support.streams import reader_pollers

pytestmark = [pytest.mark.integration, pytest.mark.redis]


@pytest.fixture
def fanout(moto, accounts, redis_backend):
    # Only the fan-out reader, from now on (earlier tests' records are not this test's).
    with reader_pollers(moto, "FanoutConsumerFunction") as pollers:
        yield pollers


def test_crashes_and_redelivery_lose_no_entry_and_duplicate_none(fanout, accounts, redis):
    reader = accounts.signup("reader", "reader@example.com", "password1", None, "").user["id"]
    author = accounts.signup("author", "author@example.com", "password1", None, "").user["id"]
    services.graph().follow(reader, author)
    timelines = services.timelines()
    timelines.rebuild(reader)  # the reader is active: their timeline is built

    # The poller crashes after several invocations while 30 tweets are fanned out ...
    fanout.inject_crash("FanoutConsumerFunction", times=4)
    posted = [int(services.tweets().post(author, f"t{i}", None, []).id) for i in range(30)]
    assert fanout.wait_idle(30)
    stored = redis.zrange(keys.home_timeline(reader), 0, -1)
    assert stored == [SENTINEL] + [entry(author, t) for t in posted]

    # ... and again while a third of them are deleted.
    fanout.inject_crash("FanoutConsumerFunction", times=3)
    for tweet_id in posted[::3]:
        services.tweets().delete(author, tweet_id)
    assert fanout.wait_idle(30)
    kept = [t for i, t in enumerate(posted) if i % 3]
    assert redis.zrange(keys.home_timeline(reader), 0, -1) == [SENTINEL] + [
        entry(author, t) for t in kept
    ]
    page = timelines.home(reader, 100, None)
    assert [int(t.id) for t in page.items] == kept[::-1]
