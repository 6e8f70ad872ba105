"""DynamoDB stream records in the shape Lambda delivers them (what a consumer's event holds).

moto's GetRecords answer (as boto3 parses it) differs from Lambda's event record in version,
region, timestamps and binary attributes; `to_lambda_record` rebuilds it field by field.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
from typing import Any

__all__ = ["sequence", "to_lambda_record"]


def _epoch_seconds(value: Any) -> float:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        value = value.timestamp()
    # DynamoDB Streams rounds down to the second; Lambda sends it as a float, e.g. 1693997155.0.
    return float(math.floor(float(value)))


def _attribute_json(value: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB AttributeValue as JSON: boto3's bytes become base64 text, as Lambda sends them."""
    (kind, inner), *_ = value.items()
    if kind == "B":
        return {"B": base64.b64encode(inner).decode() if isinstance(inner, bytes) else inner}
    if kind == "BS":
        return {"BS": [base64.b64encode(b).decode() if isinstance(b, bytes) else b for b in inner]}
    if kind == "M":
        return {"M": {key: _attribute_json(item) for key, item in inner.items()}}
    if kind == "L":
        return {"L": [_attribute_json(item) for item in inner]}
    return {kind: inner}


def to_lambda_record(raw: dict[str, Any], stream_arn: str) -> dict[str, Any]:
    """Turn a GetRecords record (as boto3 parses moto's answer) into Lambda's event record.

    Lambda adds `eventSourceARN`, reports `eventVersion` 1.1, sends ApproximateCreationDateTime
    as epoch seconds and binary attributes as base64; moto's own record says 1.0, us-east-1 and
    carries datetimes/bytes, so every field is rebuilt here in Lambda's key order.
    """
    source = raw["dynamodb"]
    change: dict[str, Any] = {}
    if "ApproximateCreationDateTime" in source:
        change["ApproximateCreationDateTime"] = _epoch_seconds(
            source["ApproximateCreationDateTime"]
        )
    for key in ("Keys", "NewImage", "OldImage"):
        if key in source:
            change[key] = {name: _attribute_json(item) for name, item in source[key].items()}
    change["SequenceNumber"] = str(source["SequenceNumber"])
    change["SizeBytes"] = int(source.get("SizeBytes", 0))
    change["StreamViewType"] = source.get("StreamViewType", "NEW_AND_OLD_IMAGES")
    return {
        "eventID": raw["eventID"],
        "eventName": raw["eventName"],
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        # The table's region, from the stream ARN (moto always says us-east-1).
        "awsRegion": stream_arn.split(":")[3],
        "dynamodb": change,
        "eventSourceARN": stream_arn,
    }


def sequence(record: dict[str, Any]) -> int:
    """A Lambda-shaped record's sequence number, as a number (checkpoints compare them)."""
    return int(record["dynamodb"]["SequenceNumber"])
