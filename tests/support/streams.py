"""Reading tables' real DynamoDB streams (moto) from a point on, in Lambda's record shape.

For tests that deliver stream records to a consumer themselves: twice, shuffled, with failures
injected. The local runtime's pollers do the ordinary delivery (tests/e2e, test_stream_pollers).
"""

from __future__ import annotations

from typing import Any

import boto3

from infra.local.stream_records import to_lambda_record


class StreamTap:
    """Every record written to the tables' streams after the tap was opened."""

    def __init__(self, tables: list[str]) -> None:
        dynamodb = boto3.client("dynamodb")
        self._streams = boto3.client("dynamodbstreams")
        self._iterators: list[tuple[str, str | None]] = []
        for table in tables:
            arn = dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
            shards = self._streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
            for shard in shards:
                iterator = self._streams.get_shard_iterator(
                    StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="LATEST"
                )["ShardIterator"]
                self._iterators.append((arn, iterator))

    def drain(self) -> list[dict[str, Any]]:
        """The records written since the last drain, in stream order per table."""
        records: list[dict[str, Any]] = []
        for index, (arn, iterator) in enumerate(self._iterators):
            while iterator:
                answer = self._streams.get_records(ShardIterator=iterator, Limit=1000)
                records += [to_lambda_record(raw, arn) for raw in answer["Records"]]
                iterator = answer.get("NextShardIterator")
                if not answer["Records"]:
                    break
            self._iterators[index] = (arn, iterator)
        return records


def all_records(table: str) -> list[dict[str, Any]]:
    """Every record still in the table's stream (from TRIM_HORIZON), in Lambda's shape."""
    dynamodb, streams = boto3.client("dynamodb"), boto3.client("dynamodbstreams")
    arn = dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    records = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        while iterator:
            answer = streams.get_records(ShardIterator=iterator, Limit=1000)
            records += [to_lambda_record(raw, arn) for raw in answer["Records"]]
            if not answer["Records"]:
                break
            iterator = answer.get("NextShardIterator")
    return records


def decoded(records: list[dict[str, Any]]) -> list[Any]:
    """Lambda-shaped records as the counter consumer gets them: decoded by the stores."""
    from warble import services

    return services.container().stream_decoder.decode_batch({"Records": records})
