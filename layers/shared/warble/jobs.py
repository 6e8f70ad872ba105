"""Handlers of the non-HTTP functions: the stream counter consumer, the deleted-tweet cleanup,
the degree refresh and the counter reconciliation.

Same skeleton as the HTTP functions (Logger, Tracer, Metrics); the work is one call into a
service built by ``warble.services``.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services

logger = Logger()
tracer = Tracer()
metrics = Metrics()
_cleanup_batch = BatchProcessor(event_type=EventType.DynamoDBStreams)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def counter_consumer(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """DynamoDB Streams -> counters; answers with partial batch failures."""
    outcome = services.counter_processor().process(event)
    metrics.add_metric("CounterRecords", MetricUnit.Count, len(event.get("Records") or []))
    metrics.add_metric("CounterTransactions", MetricUnit.Count, outcome.transactions)
    if outcome.failures:
        logger.warning("records not applied", extra={"failures": len(outcome.failures)})
        metrics.add_metric("CounterFailures", MetricUnit.Count, len(outcome.failures))
    return outcome.response()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def refresh_degrees(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """The scheduled rebuild of every user's second-degree set (seed 000)."""
    users = services.graph().refresh_second_degree()
    metrics.add_metric("SecondDegreeSetsWritten", MetricUnit.Count, users)
    logger.info("second-degree sets rebuilt", extra={"users": users})
    return {"users": users}


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def tweet_cleanup(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Deleted tweets (REMOVE records of the tweets stream) -> delete their retweets and likes;
    answers with partial batch failures."""
    return dict(
        process_partial_response(
            event=event, record_handler=_purge_deleted, processor=_cleanup_batch, context=context
        )
    )


def _purge_deleted(record: DynamoDBRecord) -> None:
    raw = record.raw_event
    if raw["eventName"] != "REMOVE":
        return
    deleted = services.tweets().purge(int(raw["dynamodb"]["Keys"]["tweet_id"]["N"]))
    metrics.add_metric("CleanedUp", MetricUnit.Count, deleted)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def reconcile_counters(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Recompute every counter from the tables and repair drift; answers with the repairs."""
    repairs = services.reconciler().run()
    metrics.add_metric("CountersRepaired", MetricUnit.Count, len(repairs))
    if repairs:
        logger.warning("counters repaired", extra={"repairs": [r.as_dict() for r in repairs]})
    return {"repaired": [r.as_dict() for r in repairs]}
