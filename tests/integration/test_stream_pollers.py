"""DynamoDB Streams -> Lambda pollers (infra/local/stream_pollers.py) against a real moto server.

Every test provisions tests/fixtures/streams/template.yaml under a stack name of its own (fresh
tables and streams), writes items, lets StreamPollers deliver them to the fixture consumer
running in the local runtime's worker processes, and reads the consumer's delivery log from
Redis (index 14, keys under the test's prefix) and the failure queue from moto.
"""

from __future__ import annotations

import json
import re
import time
import uuid
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis as redis_lib
from aws_lambda_powertools.utilities.parser.models import DynamoDBStreamModel

from infra.local.lambdas import LambdaRuntime
from infra.local.moto_server import aws_client, start_moto
from infra.local.provisioning import provision
from infra.local.stream_pollers import StreamPollers
from infra.local.stream_wakeups import ENV as WAKEUPS_ENV
from infra.local.stream_wakeups import StreamWakeups
from infra.local.template import ResolveContext, Template, load_template

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "streams"
REDIS_URL = "redis://127.0.0.1:6379/14"  # the fixture template's FIXTURE_REDIS_URL
SETTLE = 15.0  # seconds wait_idle may take before a test fails


# --------------------------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wakeups() -> Iterator[StreamWakeups]:
    listening = StreamWakeups()
    yield listening
    listening.close()


@pytest.fixture(scope="module")
def moto_url(wakeups: StreamWakeups) -> Iterator[str]:
    # A moto server that names each table a stream record lands in, as `serve` starts it.
    with start_moto(port=0, extra_env={WAKEUPS_ENV: wakeups.address}) as server:
        yield server.url


@pytest.fixture(scope="module")
def template() -> Template:
    return load_template(FIXTURES / "template.yaml")


@pytest.fixture(scope="module")
def runtime(template: Template) -> Iterator[LambdaRuntime]:
    # The consumer's environment names no stack resource, so one runtime (and its warm
    # workers) serves every test's stack.
    with LambdaRuntime(template, ResolveContext(), log_line=lambda _f, _l: None) as runtime:
        yield runtime


@dataclass
class Stack:
    """One test's provisioned copy of the fixture template, plus readers for its results."""

    context: ResolveContext
    prefix: str
    moto_url: str
    redis: redis_lib.Redis
    dynamodb: Any
    sqs: Any

    def table(self, logical_id: str) -> str:
        return self.context.values[logical_id]["Ref"]

    def stream_arn(self, logical_id: str) -> str:
        return self.context.values[logical_id]["StreamArn"]

    def put(self, logical_id: str, sk: str, pk: str = "p", **attributes: Any) -> None:
        item = {"pk": {"S": pk}, "sk": {"S": sk}, "prefix": {"S": self.prefix}}
        for name, value in attributes.items():
            item[name] = {"N": str(value)} if isinstance(value, int) else {"S": value}
        self.dynamodb.put_item(TableName=self.table(logical_id), Item=item)

    def invocations(self) -> list[list[str]]:
        """The sequence numbers of each invocation, in invocation order."""
        raw = self.redis.lrange(f"{self.prefix}:invocations", 0, -1)
        return [json.loads(entry)["seqs"] for entry in raw]

    def deliveries(self) -> list[dict[str, Any]]:
        return [json.loads(e) for e in self.redis.lrange(f"{self.prefix}:deliveries", 0, -1)]

    def attempts(self, seq: str) -> int:
        return int(self.redis.get(f"{self.prefix}:attempts:{seq}") or 0)

    def processed(self, pk: str) -> list[int]:
        return [int(v) for v in self.redis.lrange(f"{self.prefix}:processed:{pk}", 0, -1)]

    def last_event(self) -> dict[str, Any]:
        return json.loads(self.redis.get(f"{self.prefix}:event") or "null")

    def failure_messages(self) -> list[dict[str, Any]]:
        url = self.context.values["FailureQueue"]["QueueUrl"]
        messages = []
        while True:
            batch = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get(
                "Messages", []
            )
            if not batch:
                return messages
            for message in batch:
                messages.append(json.loads(message["Body"]))
                self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


@pytest.fixture
def stack(moto_url: str, template: Template) -> Iterator[Stack]:
    context = ResolveContext(stack_name=f"st-{uuid.uuid4().hex[:10]}")
    provision(template, moto_url, context)
    client = redis_lib.Redis.from_url(REDIS_URL, decode_responses=True)
    prefix = f"streams-test:{uuid.uuid4().hex}"
    yield Stack(
        context=context,
        prefix=prefix,
        moto_url=moto_url,
        redis=client,
        dynamodb=aws_client("dynamodb", moto_url),
        sqs=aws_client("sqs", moto_url),
    )
    for key in client.scan_iter(f"{prefix}:*"):
        client.delete(key)
    client.close()


@pytest.fixture
def pollers(
    stack: Stack, template: Template, runtime: LambdaRuntime
) -> Iterator[Callable[..., StreamPollers]]:
    started: list[StreamPollers] = []

    def start(*, start: bool = True, **options: Any) -> StreamPollers:
        poller_set = StreamPollers(template, runtime, stack.moto_url, stack.context, **options)
        started.append(poller_set)
        if start:
            poller_set.start()
        return poller_set

    yield start
    for poller_set in started:
        poller_set.stop()


def seqs_of(stack: Stack, table: str) -> list[str]:
    """Every sequence number in a table's stream so far, in order (read straight from moto)."""
    streams = aws_client("dynamodbstreams", stack.moto_url)
    arn = stack.stream_arn(table)
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    records = streams.get_records(ShardIterator=iterator)["Records"]
    return [record["dynamodb"]["SequenceNumber"] for record in records]


# --------------------------------------------------------------------------------------------
# wake-ups
# --------------------------------------------------------------------------------------------


def test_an_idle_lane_reads_a_record_as_it_lands_when_moto_names_its_table(stack, pollers, wakeups):
    # given pollers whose idle lanes poll only every 60 s, caught up on empty streams
    poller_set = pollers(poll_interval=60.0, idle_poll_interval=60.0, wakeups=wakeups)
    assert poller_set.wait_idle(SETTLE)
    # when a record lands in a stream
    written = time.monotonic()
    stack.put("PartialTable", "woken", payload="now")
    # then it is delivered long before the next poll: moto's datagram woke its lanes
    deadline = written + 20
    while not stack.invocations() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stack.invocations() == [seqs_of(stack, "PartialTable")]
    assert time.monotonic() - written < 20  # the next poll would have come 60 s on


# --------------------------------------------------------------------------------------------
# batching and the event shape
# --------------------------------------------------------------------------------------------


def test_batches_respect_batch_size_and_events_have_lambdas_shape(stack, pollers):
    # given 12 inserts, an update and a delete already in the stream (BatchSize 5)
    for index in range(12):
        stack.put("PartialTable", f"{index:02d}", payload=f"v{index}")
    stack.put("PartialTable", "00", payload="changed")
    stack.dynamodb.delete_item(
        TableName=stack.table("PartialTable"), Key={"pk": {"S": "p"}, "sk": {"S": "01"}}
    )
    seqs = seqs_of(stack, "PartialTable")

    # when the pollers run
    poller_set = pollers()
    assert poller_set.wait_idle(SETTLE)

    # then records arrive in order, five at a time
    assert stack.invocations() == [seqs[0:5], seqs[5:10], seqs[10:14]]
    # and the last event (MODIFY + REMOVE included) is shaped like SAM's sample event
    event = stack.last_event()
    sample = json.loads((FIXTURES / "sam-dynamodb-update.json").read_text())
    samples = {record["eventName"]: record for record in sample["Records"]}
    records = event["Records"]
    assert [r["eventName"] for r in records] == ["INSERT", "INSERT", "MODIFY", "REMOVE"]
    for record in records:
        expected = samples[record["eventName"]]
        assert list(record) == list(expected)
        assert sorted(record["dynamodb"]) == sorted(expected["dynamodb"])
        assert record["eventVersion"] == "1.1"
        assert record["eventSource"] == "aws:dynamodb"
        assert record["awsRegion"] == "us-east-1"
        assert record["eventSourceARN"] == stack.stream_arn("PartialTable")
        assert isinstance(record["dynamodb"]["ApproximateCreationDateTime"], float)
        assert isinstance(record["dynamodb"]["SizeBytes"], int)
    assert records[2]["dynamodb"]["OldImage"]["payload"] == {"S": "v0"}
    assert records[2]["dynamodb"]["NewImage"]["payload"] == {"S": "changed"}
    assert records[3]["dynamodb"]["Keys"] == {"pk": {"S": "p"}, "sk": {"S": "01"}}
    # and Powertools' parser model accepts it
    parsed = DynamoDBStreamModel.model_validate(event)
    assert parsed.Records[2].dynamodb.NewImage["payload"] == "changed"


# --------------------------------------------------------------------------------------------
# failures and retries
# --------------------------------------------------------------------------------------------


def test_partial_failure_retries_from_the_failed_record_only(stack, pollers):
    # given five records, the third of which fails its first delivery
    for index in range(5):
        extra = {"fail_times": 1} if index == 2 else {}
        stack.put("PartialTable", f"{index}", **extra)
    seqs = seqs_of(stack, "PartialTable")

    # when the pollers run
    assert pollers().wait_idle(SETTLE)

    # then the retry starts at the failed record: it and the records after it come twice
    assert stack.invocations() == [seqs, seqs[2:]]
    assert [stack.attempts(seq) for seq in seqs] == [1, 1, 2, 2, 2]
    assert stack.failure_messages() == []


def test_invalid_item_identifier_fails_the_whole_batch(stack, pollers):
    # given a record whose first delivery reports an identifier that is not in the batch
    for index in range(3):
        extra = {"fail_times": 1, "fail_mode": "invalid"} if index == 1 else {}
        stack.put("PartialTable", f"{index}", **extra)
    seqs = seqs_of(stack, "PartialTable")

    # when the pollers run
    assert pollers().wait_idle(SETTLE)

    # then Lambda's rule applies: the whole batch is retried
    assert stack.invocations() == [seqs, seqs]


def test_function_error_retries_the_whole_batch(stack, pollers):
    # given a batch whose middle record raises on its first two deliveries
    for index in range(3):
        extra = {"fail_times": 2, "fail_mode": "raise"} if index == 1 else {}
        stack.put("WholeTable", f"{index}", **extra)
    seqs = seqs_of(stack, "WholeTable")

    # when the pollers run
    assert pollers().wait_idle(SETTLE)

    # then the same whole batch is delivered until it succeeds
    assert stack.invocations() == [seqs, seqs, seqs]


def test_a_consumer_that_times_out_gets_its_whole_batch_again(stack, pollers):
    """Issue 40's fault 6: a consumer whose store answers slowly runs past its timeout (1 s
    here); Lambda ends the invocation, whatever it had done, and delivers the batch again."""
    # given a batch whose middle record's first delivery waits past the function's timeout
    for index in range(3):
        extra = {"fail_times": 1, "fail_mode": "sleep"} if index == 1 else {}
        stack.put("SlowTable", f"{index}", **extra)
    seqs = seqs_of(stack, "SlowTable")

    # when the pollers run
    assert pollers().wait_idle(SETTLE)

    # then the first invocation ended inside the middle record (the first was done, the last
    # never reached) and the whole batch came again, every record applied
    assert stack.invocations() == [seqs]  # only the second one ended
    assert [stack.attempts(seq) for seq in seqs] == [2, 2, 1]
    done = [d["seq"] for d in stack.deliveries() if d["outcome"] == "ok"]
    assert done == [seqs[0], *seqs]


def test_batch_item_failures_are_ignored_without_report_batch_item_failures(stack, pollers):
    # given a mapping without FunctionResponseTypes and a record the consumer reports as failed
    stack.put("WholeTable", "0", fail_times=5)
    stack.put("WholeTable", "1")
    seqs = seqs_of(stack, "WholeTable")

    # when the pollers run
    assert pollers().wait_idle(SETTLE)

    # then the response is not looked at: one delivery, checkpoint after the batch
    assert stack.invocations() == [seqs]


def test_bisection_isolates_a_poison_record(stack, pollers):
    # given four records, the third of which always raises (BisectBatchOnFunctionError,
    # MaximumRetryAttempts 1)
    for index in range(4):
        extra = {"fail_times": 99, "fail_mode": "raise"} if index == 2 else {}
        stack.put("BisectTable", f"{index}", **extra)
    s = seqs_of(stack, "BisectTable")

    # when the pollers run
    assert pollers().wait_idle(SETTLE)

    # then the batch is halved until the poison record is alone, retried once, then skipped
    assert stack.invocations() == [s, s[:2], s[2:], [s[2]], [s[2]], [s[3]]]
    (failure,) = stack.failure_messages()
    info = failure["DDBStreamBatchInfo"]
    assert (info["startSequenceNumber"], info["endSequenceNumber"]) == (s[2], s[2])
    assert info["batchSize"] == 1
    assert failure["requestContext"]["approximateInvokeCount"] == 4
    assert failure["responseContext"]["functionError"] == "Unhandled"


def test_exhausted_retries_go_to_sqs_in_lambdas_format_and_later_records_flow(stack, pollers):
    # given a record that always fails (partial response) between two good ones
    stack.put("PartialTable", "0")
    stack.put("PartialTable", "1", fail_times=99)
    stack.put("PartialTable", "2")
    poller_set = pollers()
    assert poller_set.wait_idle(SETTLE)

    # when more records arrive afterwards
    stack.put("PartialTable", "3")
    stack.put("PartialTable", "4")
    assert poller_set.wait_idle(SETTLE)

    # then the failed remainder of the batch (records 1-2) was described to the queue after
    # one delivery and MaximumRetryAttempts (2) retries, in Lambda's invocation record format
    s = seqs_of(stack, "PartialTable")
    (failure,) = stack.failure_messages()
    assert list(failure) == [
        "requestContext", "responseContext", "version", "timestamp", "DDBStreamBatchInfo",
    ]  # fmt: skip
    assert failure["version"] == "1.0"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", failure["timestamp"])
    request = failure["requestContext"]
    assert list(request) == ["requestId", "functionArn", "condition", "approximateInvokeCount"]
    assert request["functionArn"].startswith("arn:aws:lambda:us-east-1:")
    assert request["functionArn"].endswith(":123456789012:function:PartialFunction")
    assert request["condition"] == "RetryAttemptsExhausted"
    assert request["approximateInvokeCount"] == 3
    assert failure["responseContext"] == {"statusCode": 200, "executedVersion": "$LATEST"}
    info = failure["DDBStreamBatchInfo"]
    assert list(info) == [
        "shardId", "startSequenceNumber", "endSequenceNumber", "approximateArrivalOfFirstRecord",
        "approximateArrivalOfLastRecord", "batchSize", "streamArn",
    ]  # fmt: skip
    assert info["shardId"].startswith("shardId-")
    assert (info["startSequenceNumber"], info["endSequenceNumber"]) == (s[1], s[2])
    assert info["batchSize"] == 2
    assert info["streamArn"] == stack.stream_arn("PartialTable")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", info["approximateArrivalOfFirstRecord"])
    # and the records after the skipped batch were delivered, once each
    assert [stack.attempts(seq) for seq in s] == [1, 3, 3, 1, 1]
    later = [seq for seqs in stack.invocations() for seq in seqs if seq in s[3:]]
    assert later == s[3:]


def test_infinite_retries_block_the_shard_and_nothing_overtakes(stack, pollers):
    # given a mapping with MaximumRetryAttempts -1 (OrderFunction) and a poison record
    poller_set = pollers()
    stack.put("OrderTable", "0", fail_times=10_000)
    stack.put("OrderTable", "1")

    # when the poison record has been tried a few times (waited for, not timed: a loaded machine
    # can take its first delivery past any fixed pause), and we wait for the pollers to settle
    s = seqs_of(stack, "OrderTable")
    deadline = time.monotonic() + SETTLE
    while stack.attempts(s[0]) <= 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert stack.attempts(s[0]) > 3
    settled = poller_set.wait_idle(1.5)

    # then they cannot: the poison record keeps being retried and the next one never runs
    assert not settled
    assert stack.processed("p") == []
    assert all(d["outcome"] != "ok" for d in stack.deliveries())
    # and stop() still returns promptly
    started = time.monotonic()
    poller_set.stop()
    assert time.monotonic() - started < 5


# --------------------------------------------------------------------------------------------
# ordering, filtering, redelivery
# --------------------------------------------------------------------------------------------


def test_order_within_a_partition_key_is_preserved(stack, pollers):
    # given an item written before the pollers start (StartingPosition LATEST skips it)
    stack.put("OrderTable", "item", pk="early", version=0)
    poller_set = pollers()

    # when three items are updated ten times each, interleaved, while the pollers run, and
    # some versions fail their first delivery (the consumer stops at its first failure)
    for version in range(1, 11):
        for pk in ("a", "b", "c"):
            extra = {"fail_times": 1} if (version + ord(pk)) % 4 == 0 else {}
            stack.put("OrderTable", "item", pk=pk, version=version, **extra)
    assert poller_set.wait_idle(SETTLE)

    # then every key saw each version exactly once, in write order
    for pk in ("a", "b", "c"):
        assert stack.processed(pk) == list(range(1, 11))
    assert stack.processed("early") == []
    # and every invocation carried its records in stream order
    for seqs in stack.invocations():
        assert [int(s) for s in seqs] == sorted(int(s) for s in seqs)
    assert {d["event_name"] for d in stack.deliveries()} == {"INSERT", "MODIFY"}


def test_filter_criteria_deliver_only_matching_records(stack, pollers):
    # given inserts that match the pattern (kind starts with "keep") and ones that do not,
    # plus an update of a matching item (a MODIFY, which the pattern excludes)
    stack.put("FilterTable", "1", kind="keep-1")
    stack.put("FilterTable", "2", kind="drop-2")
    stack.put("FilterTable", "3")
    stack.put("FilterTable", "4", kind="keep-4")
    stack.put("FilterTable", "1", kind="keep-1-again")
    s = seqs_of(stack, "FilterTable")

    # when the pollers run
    assert pollers().wait_idle(SETTLE)

    # then only the matching inserts were delivered (and the filtered ones did not block)
    assert stack.invocations() == [[s[0], s[3]]]


def test_parallelization_factor_runs_lanes_and_keeps_each_partition_key_in_order(stack, pollers):
    # given six partition keys updated five times each, interleaved, some versions failing
    # their first delivery (ParallelizationFactor 3, BatchSize 3)
    keys = [f"k{i}" for i in range(6)]
    for version in range(1, 6):
        for pk in keys:
            extra = {"fail_times": 1} if (version + ord(pk[-1])) % 4 == 0 else {}
            stack.put("ParallelTable", "item", pk=pk, version=version, **extra)

    # when the pollers run
    assert pollers().wait_idle(SETTLE)

    # then every key saw each version once, in write order
    for pk in keys:
        assert stack.processed(pk) == [1, 2, 3, 4, 5]
    # and each invocation held the keys of one lane only, and more than one lane ran
    lanes_of = {pk: zlib.crc32(json.dumps({"S": pk}).encode()) % 3 for pk in keys}
    by_invocation: dict[str, set[int]] = {}
    for delivery in stack.deliveries():
        by_invocation.setdefault(delivery["invocation"], set()).add(lanes_of[delivery["pk"]])
    assert all(len(lanes) == 1 for lanes in by_invocation.values())
    assert len(set(lanes_of.values())) > 1
    assert {lane for lanes in by_invocation.values() for lane in lanes} == set(lanes_of.values())


def test_crash_after_invoke_redelivers_and_loses_nothing(stack, pollers):
    # given seven records and a poller that crashes right after its first invocation
    for index in range(7):
        stack.put("PartialTable", f"{index}")
    s = seqs_of(stack, "PartialTable")
    poller_set = pollers(start=False)
    poller_set.inject_crash("PartialFunction")

    # when the pollers run and settle
    poller_set.start()
    assert poller_set.wait_idle(SETTLE)

    # then the first batch was delivered again from the checkpoint and nothing was lost
    assert stack.invocations() == [s[:5], s[:5], s[5:]]
    assert [stack.attempts(seq) for seq in s] == [2, 2, 2, 2, 2, 1, 1]
    assert stack.failure_messages() == []


def test_redeliver_every_batch_delivers_each_record_at_least_twice(stack, pollers):
    # given the redelivery knob and four records
    for index in range(4):
        stack.put("WholeTable", f"{index}")
    s = seqs_of(stack, "WholeTable")

    # when the pollers settle
    assert pollers(redeliver_every_batch=True).wait_idle(SETTLE)

    # then every record reached the consumer twice, and processing still finished
    assert stack.invocations() == [s, s]
    assert all(stack.attempts(seq) == 2 for seq in s)
