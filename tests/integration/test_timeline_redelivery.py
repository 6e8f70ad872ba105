"""The home-timeline fan-out under a poller that crashes mid-batch and redelivers.

The real FanoutConsumerFunction runs in a Lambda worker fed by the local stream poller, from the
real template; the poller is told to crash after invocations (before checkpointing, so the
records come again) and to deliver every batch twice. Nothing may be lost and nothing
duplicated.
"""

from __future__ import annotations

import dataclasses
import os

import pytest
from warble import keys, services
from warble.dal.timelines import SENTINEL
from warble.domain.timelines.service import entry

from infra.local.lambdas import LambdaRuntime
from infra.local.stream_mappings import stream_mappings
from infra.local.stream_pollers import StreamPollers
from infra.local.template import ResolveContext, load_template
from tests.conftest import ROOT, TEST_DB

pytestmark = [pytest.mark.integration, pytest.mark.redis]


@pytest.fixture
def fanout(moto, accounts, redis_backend):
    template = load_template(ROOT / "template.yaml")
    context = ResolveContext(stack_name="warble-test", values=moto.values)
    overrides = {
        "Parameters": {
            "DB_NAME": TEST_DB,
            "DB_SSLMODE": "disable",
            # The Redis this test runs on: one node, or the cluster (the worker's cluster client).
            "REDIS_URL": os.environ["REDIS_URL"],
            "REDIS_CLUSTER": os.environ["REDIS_CLUSTER"],
        }
    }
    runtime = LambdaRuntime(
        template,
        context,
        env_overrides=overrides,
        extra_env={
            "AWS_ENDPOINT_URL": moto.url,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
        },
        log_line=lambda _function, _line: None,
    )
    # Only the timeline consumer, from now on (earlier tests' records are not this test's).
    mappings = [
        dataclasses.replace(m, starting_position="LATEST", batch_size=7)
        for m in stream_mappings(template, context)
        if m.function_name == "FanoutConsumerFunction"
    ]
    pollers = StreamPollers(
        template, runtime, moto.url, context, mappings=mappings, redeliver_every_batch=True
    )
    pollers.start()
    yield pollers
    pollers.stop()
    runtime.close()


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
