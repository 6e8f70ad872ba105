"""MediaFunction: S3 says a file arrived under ``uploads/`` (an ``s3:ObjectCreated`` notification,
invoked asynchronously); each upload's Media becomes ready or failed. An event Lambda's retries
gave up on (S3 or the table failing for minutes) comes again from the retry queue, an SQS batch
whose every message holds one such event."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote_plus

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services
from warble.skeleton import entry_point, logger, metrics


@entry_point()
def uploaded(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """S3's event: each record's upload processed; answers ``{"media": {key: outcome}}``. A
    record that raises fails the invocation once the others are done: Lambda retries an
    asynchronous invocation twice, then sends the event to the retry queue. The retry queue's
    batch: the events whose records all succeeded are done, the others are answered as
    ``batchItemFailures`` (SQS delivers them again). A Media already ready or failed is left
    alone the second time, so a repeat processes nothing twice."""
    records = event.get("Records") or []
    if records and records[0].get("eventSource") == "aws:sqs":
        return {"batchItemFailures": _retried(records)}
    outcomes, errors = _process(records)
    if errors:
        raise errors[0]
    return {"media": outcomes}


def _retried(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    failures = []
    for message in messages:
        try:
            event = json.loads(message["body"])
            records = event.get("Records") or []
        except (KeyError, TypeError, ValueError, AttributeError):
            # Nothing could ever process it: dropped, not retried for an hour.
            logger.error("not an S3 event", extra={"message_id": message.get("messageId")})
            continue
        _, errors = _process(records)
        if errors:
            failures.append({"itemIdentifier": message["messageId"]})
    return failures


def _process(records: list[dict[str, Any]]) -> tuple[dict[str, str], list[Exception]]:
    outcomes: dict[str, str] = {}
    errors: list[Exception] = []
    for record in records:
        # S3 gives the key URL-encoded, spaces as "+".
        key = unquote_plus(record["s3"]["object"]["key"])
        try:
            outcomes[key] = services.media().uploaded(key)
        except Exception as exc:  # the others still run; the invocation fails after
            logger.exception("upload not processed", extra={"key": key})
            errors.append(exc)
            continue
        metrics.add_metric(f"Media_{outcomes[key]}", MetricUnit.Count, 1)
    return outcomes, errors
