"""SQS -> Lambda pollers (infra/local/queue_pollers.py) against a real moto server, with the
fixture consumer (tests/fixtures/queues) in the local runtime's worker processes: what Lambda's
SQS event source does with successes, partial batch failures, failed invocations, its
redelivery after the visibility timeout and SQS's redrive to the dead-letter queue."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis as redis_lib

from infra.local.lambdas import LambdaRuntime
from infra.local.moto_server import aws_client, start_moto
from infra.local.provisioning import provision
from infra.local.queue_pollers import QueuePollers
from infra.local.template import ResolveContext, load_template

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "queues"
WAIT = 60.0  # seconds a condition may take on a busy machine before the test fails


def eventually(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + WAIT
    while not (found := check()):
        if time.monotonic() > deadline:
            pytest.fail(f"not within {WAIT} s: {what}")
        time.sleep(0.2)
    return found


@pytest.fixture
def queue() -> Iterator[dict[str, Any]]:
    template = load_template(FIXTURES / "template.yaml")
    context = ResolveContext(stack_name=f"q{uuid.uuid4().hex[:8]}")
    with start_moto(port=0) as server:
        provision(template, server.url, context)
        sqs = aws_client("sqs", server.url)
        with LambdaRuntime(template, context, log_line=lambda _f, _l: None) as runtime:
            pollers = QueuePollers(template, runtime, server.url, context)
            pollers.start()
            try:
                yield {
                    "sqs": sqs,
                    "work": context.values["Work"]["Ref"],
                    "dead": context.values["DeadLetters"]["Ref"],
                    "pollers": pollers,
                    "prefix": context.stack_name,
                    "log": redis_lib.Redis.from_url(
                        "redis://127.0.0.1:6379/14", decode_responses=True
                    ),
                }
            finally:
                pollers.stop()


def send(queue: dict[str, Any], name: str, mode: str) -> None:
    body = json.dumps({"prefix": queue["prefix"], "name": name, "mode": mode})
    queue["sqs"].send_message(QueueUrl=queue["work"], MessageBody=body)


def deliveries(queue: dict[str, Any]) -> list[str]:
    return list(queue["log"].lrange(f"{queue['prefix']}:deliveries", 0, -1))


def dead(queue: dict[str, Any]) -> list[str]:
    answer = queue["sqs"].receive_message(QueueUrl=queue["dead"], MaxNumberOfMessages=10)
    return sorted(json.loads(m["Body"])["name"] for m in answer.get("Messages", []))


def waiting(queue: dict[str, Any]) -> int:
    attributes = queue["sqs"].get_queue_attributes(
        QueueUrl=queue["work"],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return sum(int(v) for v in attributes.values())


def test_done_messages_are_deleted_and_a_reported_one_comes_back_then_goes_to_the_dlq(queue):
    send(queue, "good", "ok")
    send(queue, "poison", "partial")
    # the reported message is received twice (maxReceiveCount 2), then SQS moves it
    eventually(lambda: dead(queue) == ["poison"], "the poison message in the dead-letter queue")
    log = deliveries(queue)
    assert log.count("good:1") == 1 and not [d for d in log if d.startswith("good:2")]
    assert [d for d in log if d.startswith("poison")] == ["poison:1", "poison:2"]
    assert waiting(queue) == 0


def test_a_failed_invocation_or_an_invalid_answer_keeps_the_whole_batch(queue):
    send(queue, "crashing", "raise")
    eventually(lambda: dead(queue) == ["crashing"], "the failed batch redelivered, then dead")
    assert [d for d in deliveries(queue) if d.startswith("crashing")] == [
        "crashing:1", "crashing:2"
    ]  # fmt: skip
    send(queue, "liar", "invalid")
    eventually(lambda: "liar:2" in deliveries(queue), "the invalid answer's batch redelivered")


def test_a_poller_crash_after_the_invocation_delivers_the_batch_again(queue):
    queue["pollers"].inject_crash("Consumer")
    send(queue, "once", "ok")
    eventually(lambda: "once:2" in deliveries(queue), "the batch delivered again")
    eventually(lambda: waiting(queue) == 0, "then deleted")
    assert dead(queue) == []
