"""The events/tweets, events/timeline, events/cleanup and likes-stream samples: AWS's shapes,
answered by the real handlers (TweetsFunction and the two stream readers, FanoutConsumerFunction
and ReactionsConsumerFunction)."""

from __future__ import annotations

import copy
import json

import pytest
from aws_lambda_powertools.utilities.parser.models import (
    APIGatewayProxyEventV2Model,
    DynamoDBStreamModel,
)
from warble import services
from warble.settings import get_settings

from tests.integration.test_sample_events import EVENTS, Context, _as, _event, _load_function

pytestmark = pytest.mark.integration

STREAMS = (
    "timeline/tweets-stream.json",
    "cleanup/tweets-stream.json",
    "counters/likes-stream.json",
)


@pytest.fixture
def fresh(accounts, moto):
    return services.container()


@pytest.mark.parametrize("name", sorted(p.name for p in (EVENTS / "tweets").glob("*.json")))
def test_tweet_samples_match_the_payload_2_0_model(name):
    APIGatewayProxyEventV2Model.model_validate(_event(f"tweets/{name}"))


@pytest.mark.parametrize("name", STREAMS)
def test_stream_samples_match_the_dynamodb_stream_model(name):
    DynamoDBStreamModel.model_validate(_event(name))


def _retarget(event: dict, sample_table: str, table: str) -> dict:
    event = copy.deepcopy(event)
    for record in event["Records"]:
        record["eventSourceARN"] = record["eventSourceARN"].replace(
            f"table/{sample_table}/", f"table/{table}/"
        )
        # The samples share event ids across files (a stream's are unique): the counter claims
        # are keyed by them.
        record["eventID"] = f"{record['eventID']}-{table}"
    return event


def test_tweet_samples_through_the_tweets_handler(fresh, accounts):
    issued = accounts.signup("dave", "dave@example.com", "correct horse", None, "phone")
    handler = _load_function("tweets").handler
    expectations = {
        "post.json": 201,
        "get.json": 404,  # the sample's tweet does not exist here
        "delete.json": 404,
        "replies.json": 404,
        "user-tweets.json": 404,  # nor its author
        "retweet.json": 404,
        "unretweet.json": 404,
        "home.json": 200,
        "like.json": 404,
        "unlike.json": 404,
        "likers.json": 404,
        "user-likes.json": 200,
    }
    for name, status in expectations.items():
        answer = handler(_as(_event(f"tweets/{name}"), issued), Context())
        assert answer["statusCode"] == status, (name, answer)
    home = json.loads(handler(_as(_event("tweets/home.json"), issued), Context())["body"])
    assert [t["text"] for t in home["items"]] == ["hello"]  # the posted sample, rebuilt in


def test_stream_samples_through_their_consumers(fresh):
    settings = get_settings()
    timeline = _retarget(_event("timeline/tweets-stream.json"), "warble-local-tweets",
                         settings.tweets_table)  # fmt: skip
    assert _load_function("fanout").handler(timeline, Context()) == {"batchItemFailures": []}
    cleanup = _retarget(_event("cleanup/tweets-stream.json"), "warble-local-tweets",
                        settings.tweets_table)  # fmt: skip
    assert _load_function("reactions").handler(cleanup, Context()) == {"batchItemFailures": []}

    likes = _retarget(_event("counters/likes-stream.json"), "warble-local-likes",
                      settings.likes_table)  # fmt: skip
    insert = {"Records": likes["Records"][:1]}
    counters = _load_function("fanout").handler
    tweet = int(likes["Records"][0]["dynamodb"]["Keys"]["sk"]["S"][2:])
    before = services.tweets().counts([tweet])[tweet]["like_count"]
    for _ in range(2):  # delivered twice, counted once
        assert counters(copy.deepcopy(insert), Context()) == {"batchItemFailures": []}
    assert services.tweets().counts([tweet])[tweet]["like_count"] == before + 1
    assert counters(likes, Context()) == {"batchItemFailures": []}
    assert services.tweets().counts([tweet])[tweet]["like_count"] == before
