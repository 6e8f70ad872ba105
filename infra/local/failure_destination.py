"""On-failure destinations of stream mappings: Lambda's invocation record, sent to SQS.

When a batch is given up (retries exhausted), Lambda sends a description of it (not the records
themselves) to the mapping's OnFailure queue; `failure_record` builds it in Lambda's format and
key order, `FailureSender` delivers it to the queue in moto.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
import uuid
from typing import Any

from infra.local.moto_server import aws_client

__all__ = ["FailureSender", "failure_record"]


def _iso_seconds(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _iso_millis(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def failure_record(
    *,
    function_arn: str,
    stream_arn: str,
    shard_id: str,
    records: list[dict[str, Any]],
    condition: str,
    invokes: int,
    function_error: str | None,
) -> dict[str, Any]:
    """Lambda's invocation record for a batch given up (`condition`: RetryAttemptsExhausted)."""
    first, last = records[0]["dynamodb"], records[-1]["dynamodb"]
    now = time.time()
    response: dict[str, Any] = {"statusCode": 200, "executedVersion": "$LATEST"}
    if function_error:
        response["functionError"] = function_error
    return {
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "functionArn": function_arn,
            "condition": condition,
            "approximateInvokeCount": invokes,
        },
        "responseContext": response,
        "version": "1.0",
        "timestamp": _iso_millis(dt.datetime.now(dt.UTC)),
        "DDBStreamBatchInfo": {
            "shardId": shard_id,
            "startSequenceNumber": first["SequenceNumber"],
            "endSequenceNumber": last["SequenceNumber"],
            "approximateArrivalOfFirstRecord": _iso_seconds(
                first.get("ApproximateCreationDateTime", now)
            ),
            "approximateArrivalOfLastRecord": _iso_seconds(
                last.get("ApproximateCreationDateTime", now)
            ),
            "batchSize": len(records),
            "streamArn": stream_arn,
        },
    }


class FailureSender:
    """Sends failure records to SQS queues in moto, by queue ARN (URLs looked up once)."""

    def __init__(self, endpoint_url: str) -> None:
        self.endpoint_url = endpoint_url
        self._clients: dict[str, Any] = {}
        self._queue_urls: dict[str, str] = {}
        self._lock = threading.Lock()

    def send(self, destination: str, body: dict[str, Any]) -> None:
        """Send `body` to the queue `destination` (arn:aws:sqs:<region>:<account>:<name>)."""
        _, _, _, region, account, name = destination.split(":")
        with self._lock:
            if region not in self._clients:
                self._clients[region] = aws_client("sqs", self.endpoint_url, region)
            sqs = self._clients[region]
            if destination not in self._queue_urls:
                self._queue_urls[destination] = sqs.get_queue_url(
                    QueueName=name, QueueOwnerAWSAccountId=account
                )["QueueUrl"]
            url = self._queue_urls[destination]
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps(body))
