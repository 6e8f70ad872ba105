"""The events/graph and events/counters samples: AWS's shapes, answered by the real handlers."""

from __future__ import annotations

import copy
import json
import random

import pytest
from aws_lambda_powertools.utilities.parser.models import (
    APIGatewayProxyEventV2Model,
    DynamoDBStreamModel,
)
from warble import services

from tests.integration.test_sample_events import EVENTS, Context, _as, _event, _load_function

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("name", sorted(p.name for p in (EVENTS / "graph").glob("*.json")))
def test_graph_samples_match_the_payload_2_0_model(name):
    APIGatewayProxyEventV2Model.model_validate(_event(f"graph/{name}"))


def test_counter_sample_matches_the_dynamodb_stream_model():
    DynamoDBStreamModel.model_validate(_event("counters/graph-stream.json"))


def test_graph_samples_through_the_graph_handler(accounts, moto):
    issued = accounts.signup("carol", "carol@example.com", "correct horse", None, "phone")
    handler = _load_function("graph").handler
    expectations = {
        "follow.json": 404,  # the sample's other user does not exist here
        "unfollow.json": 404,
        "followers.json": 404,
        "following.json": 200,
        "friends.json": 200,
        "relationships.json": 200,
        "mutual-friends.json": 404,
        "degree.json": 404,
    }
    for name, status in expectations.items():
        answer = handler(_as(_event(f"graph/{name}"), issued), Context())
        assert answer["statusCode"] == status, (name, answer)
    body = json.loads(handler(_as(_event("graph/relationships.json"), issued), Context())["body"])
    assert body == {
        "items": [
            {
                "user_id": "382808519642415105",
                "status": "none",
                "blocking": False,
                "blocked_by": False,
                "muting": False,
            },
            {
                "user_id": "1",
                "status": "none",
                "blocking": False,
                "blocked_by": False,
                "muting": False,
            },
        ]
    }


def test_counter_sample_through_the_consumer_delivered_twice(accounts, moto):
    table = services.container().settings.graph_table
    event = _event("counters/graph-stream.json")
    user = random.randrange(1 << 40, 1 << 62)
    for record in event["Records"]:
        record["eventSourceARN"] = record["eventSourceARN"].replace(
            "table/warble-local-graph/", f"table/{table}/"
        )
        record["dynamodb"]["Keys"]["pk"]["S"] = f"U#{user}"
        record["eventID"] = f"{record['eventID']}-{user}"
    insert_only = {"Records": event["Records"][:2]}
    handler = _load_function("fanout").handler
    for _ in range(2):
        assert handler(copy.deepcopy(insert_only), Context()) == {"batchItemFailures": []}
    assert services.graph().counts([user])[user]["followers_count"] == 1
    assert handler(event, Context()) == {"batchItemFailures": []}
    assert services.graph().counts([user])[user]["followers_count"] == 0

    unknown = copy.deepcopy(insert_only)
    unknown["Records"][0]["eventSourceARN"] = unknown["Records"][0]["eventSourceARN"].replace(
        f"table/{table}/", "table/not-registered/"
    )
    failures = handler(unknown, Context())["batchItemFailures"]
    # Only the record from the unregistered table is reported; the next one (a MODIFY that
    # changes no counter) is done.
    assert [f["itemIdentifier"] for f in failures] == [
        unknown["Records"][0]["dynamodb"]["SequenceNumber"]
    ]
