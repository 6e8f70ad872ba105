"""Reading tables' real DynamoDB streams (moto) from a point on, in Lambda's record shape.

For tests that deliver stream records to a consumer themselves: twice, shuffled, with failures
injected. The local runtime's pollers do the ordinary delivery (tests/e2e, test_stream_pollers).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def reader_pollers(moto: Any, function: str, batch_size: int = 7) -> Iterator[Any]:
    """The template's stream reader ``function`` in a Lambda worker, fed by the local pollers
    from now on (earlier tests' records are not this test's), every batch delivered twice; on
    the Redis and database this test runs on (one node or the cluster)."""
    import dataclasses
    import os

    from infra.local.lambdas import LambdaRuntime
    from infra.local.stream_mappings import stream_mappings
    from infra.local.stream_pollers import StreamPollers
    from infra.local.template import ResolveContext, load_template
    from tests.conftest import ROOT, TEST_DB

    template = load_template(ROOT / "template.yaml")
    context = ResolveContext(stack_name="warble-test", values=moto.values)
    overrides = {
        "Parameters": {
            "DB_NAME": TEST_DB,
            "DB_SSLMODE": "disable",
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
    mappings = [
        dataclasses.replace(m, starting_position="LATEST", batch_size=batch_size)
        for m in stream_mappings(template, context)
        if m.function_name == function
    ]
    pollers = StreamPollers(
        template, runtime, moto.url, context, mappings=mappings, redeliver_every_batch=True
    )
    pollers.start()
    try:
        yield pollers
    finally:
        pollers.stop()
        runtime.close()
