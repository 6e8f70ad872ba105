"""TimelineFunction: keeps home timelines in step with the tweets and graph tables' streams.

A Powertools BatchProcessor with partial batch failures. Every step is idempotent by
construction (adding a present member or removing an absent one changes nothing), so Lambda's
at-least-once delivery, its retries and bisection cannot duplicate or lose an entry.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services
from warble.counters import table_name
from warble.domain.timelines import tweet_keys
from warble.settings import get_settings

logger = Logger()
processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


def _graph_edge(keys_: dict[str, Any]) -> tuple[int, int] | None:
    """``(follower, followee)`` for a follow edge item (pk ``U#<a>``, sk ``O#<b>``)."""
    pk, sk = keys_["pk"]["S"], keys_["sk"]["S"]
    if not (pk.startswith("U#") and sk.startswith("O#")):
        return None
    return int(pk[2:]), int(sk[2:])


def handle_record(record: DynamoDBRecord) -> None:
    raw = record.raw_event
    event_name = raw["eventName"]
    table = table_name(raw)
    timelines = services.timelines()
    settings = get_settings()
    if table == settings.tweets_table:
        if event_name == "INSERT":
            timelines.tweet_created(*tweet_keys(raw["dynamodb"]["NewImage"]))
        elif event_name == "REMOVE":
            timelines.tweet_deleted(*tweet_keys(raw["dynamodb"]["OldImage"]))
    elif table == settings.graph_table:
        edge = _graph_edge(raw["dynamodb"]["Keys"])
        if edge is None:
            return
        if event_name == "INSERT":
            timelines.followed(*edge)
        elif event_name == "REMOVE":
            timelines.unfollowed(*edge)


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return dict(
        process_partial_response(
            event=event, record_handler=handle_record, processor=processor, context=context
        )
    )
