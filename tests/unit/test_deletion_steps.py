"""The account deletion workflow's messages (warble.domain.deletion.ports): a step survives its
JSON body, and a body that is no step is refused (the entry point reports it, never runs it)."""

from __future__ import annotations

import json

import pytest
from warble.domain.deletion.ports import Step, step_body, step_of
from warble.domain.deletion.service import STEPS

pytestmark = pytest.mark.unit


def test_a_step_survives_its_message_with_ids_as_strings():
    step = Step(385049027922366464, "tweet_counters", n=7, tweets=(1, 2**62), users=(3,), tries=2)
    body = json.loads(json.dumps(step_body(step)))
    assert body["user_id"] == "385049027922366464" and body["tweets"] == ["1", str(2**62)]
    assert step_of(body) == step
    assert step_of(step_body(Step(5, STEPS[0], n=1))) == Step(5, "followers", n=1)


@pytest.mark.parametrize(
    "body",
    [{}, {"user_id": "x", "step": "likes"}, {"user_id": "5", "step": "likes", "tweets": "1,2"},
     {"step": "likes"}],
)  # fmt: skip
def test_a_body_that_is_no_step_is_refused(body):
    with pytest.raises((KeyError, ValueError)):
        step_of(body)


def test_the_counters_wait_for_the_streams_after_everything_that_moves_them():
    """The account's counter item goes only after every step whose deletions the streams count
    (follows, likes, tweets); the Redis keys after the counters (a late stream write could
    otherwise bring a key back), and the end last."""
    moving = ("followers", "following", "likes", "tweets")
    assert all(STEPS.index(s) < STEPS.index("counters") for s in moving)
    assert STEPS.index("counters") < STEPS.index("redis") < STEPS.index("finish") == len(STEPS) - 1
    assert STEPS.index("followers") < STEPS.index("tweets")  # no tweet deletion reaches a follower
