"""SQS -> Lambda for the local runtime, with Lambda's SQS event source mapping semantics.

Every enabled ``Type: SQS`` event of the template gets one poller thread. It long-polls its queue
in moto (ReceiveMessage, at most BatchSize messages, waiting up to
MaximumBatchingWindowInSeconds for them, 1 s when unset), invokes the function with the batch in
Lambda's SQS event shape and then does what Lambda does:

- the function succeeded: every message of the batch is deleted; with ReportBatchItemFailures,
  every one but those its ``batchItemFailures`` name (``itemIdentifier``: the messageId). An
  answer naming a message that is not in the batch, or that is not a JSON object, fails the
  whole batch;
- the function failed (an error, a timeout): nothing is deleted. The messages become visible
  again when the queue's visibility timeout passes, and one received more than its redrive
  policy's maxReceiveCount times is moved to the dead-letter queue by SQS itself (moto does it).

What the template's SQS events ask for beyond this (FilterCriteria, ScalingConfig,
MaximumBatchingWindowInSeconds above 20 s with a batch of more than 10, ...) is refused at
start-up, by name (infra/local/support.py).

Test hook: ``QueuePollers.inject_crash(function_name, times)``: the next ``times`` invocations
of that function "crash" the poller after the function ran, before it deletes anything, as a
Lambda poller dying mid-batch would: the messages come back after the visibility timeout.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infra.local.moto_server import aws_client

if TYPE_CHECKING:
    from infra.local.template import ResolveContext, Template

__all__ = ["SQS_EVENT_PROPERTIES", "QueueMapping", "QueuePollers", "queue_mappings"]

log = logging.getLogger(__name__)

# What a SQS event's Properties may say (the rest is refused by infra/local/support.py).
SQS_EVENT_PROPERTIES = frozenset(
    {"Queue", "BatchSize", "MaximumBatchingWindowInSeconds", "FunctionResponseTypes", "Enabled"}
)


@dataclass(frozen=True)
class QueueMapping:
    function_name: str
    event_name: str
    queue_arn: str
    batch_size: int
    window_seconds: int
    report_failures: bool

    @property
    def queue_name(self) -> str:
        return self.queue_arn.rsplit(":", 1)[-1]


def sqs_event_problems(function: str, event_name: str, event: dict[str, Any]) -> list[str]:
    props = event.get("Properties") or {}
    where = f"{function} event {event_name} (SQS)"
    problems = [
        f"{where}: property {key} is not supported"
        for key in sorted(set(props) - SQS_EVENT_PROPERTIES)
    ]
    if "Queue" not in props:
        problems.append(f"{where}: Queue is required")
    for kind in props.get("FunctionResponseTypes") or []:
        if kind != "ReportBatchItemFailures":
            problems.append(f"{where}: FunctionResponseTypes {kind!r} is not supported")
    return problems


def queue_mappings(template: Template, context: ResolveContext) -> list[QueueMapping]:
    """The template's enabled SQS event sources, resolved."""
    found = []
    for function, spec in template.functions.items():
        for event_name, event in spec.events.items():
            if not isinstance(event, dict) or event.get("Type") != "SQS":
                continue
            props = template.resolve(event.get("Properties") or {}, context) or {}
            if str(props.get("Enabled", True)).lower() == "false":
                continue
            found.append(
                QueueMapping(
                    function_name=function,
                    event_name=event_name,
                    queue_arn=str(props["Queue"]),
                    batch_size=int(props.get("BatchSize", 10)),
                    window_seconds=min(int(props.get("MaximumBatchingWindowInSeconds", 1)), 20),
                    report_failures="ReportBatchItemFailures"
                    in (props.get("FunctionResponseTypes") or []),
                )
            )
    return found


class _Crash(Exception):
    """A test-injected poller crash after an invocation, before its deletes."""


class QueuePollers:
    """Runs every SQS mapping of a template against moto, like Lambda's SQS pollers.

    ``runtime`` is anything with ``invoke(function_name, event)`` returning an object with
    ``ok`` and ``payload`` (infra.local.lambdas.LambdaRuntime)."""

    def __init__(
        self,
        template: Template,
        runtime: Any,
        endpoint_url: str,
        context: ResolveContext,
        mappings: list[QueueMapping] | None = None,
    ) -> None:
        self.runtime = runtime
        self.endpoint_url = endpoint_url
        self.context = context
        self.mappings = mappings if mappings is not None else queue_mappings(template, context)
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._crashes: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()

    def start(self) -> None:
        for mapping in self.mappings:
            thread = threading.Thread(
                target=self._run, args=(mapping,), name=f"sqs-{mapping.event_name}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stopping.set()
        for thread in self._threads:
            thread.join(timeout=25)

    def inject_crash(self, function_name: str, times: int = 1) -> None:
        with self._lock:
            self._crashes[function_name] += times

    def _crash_due(self, function_name: str) -> bool:
        with self._lock:
            if self._crashes[function_name] > 0:
                self._crashes[function_name] -= 1
                return True
        return False

    # ------------------------------------------------------------ one mapping

    def _run(self, mapping: QueueMapping) -> None:
        sqs = aws_client("sqs", self.endpoint_url, self.context.region)
        url = sqs.get_queue_url(QueueName=mapping.queue_name)["QueueUrl"]
        while not self._stopping.is_set():
            try:
                messages = sqs.receive_message(
                    QueueUrl=url,
                    MaxNumberOfMessages=min(mapping.batch_size, 10),
                    WaitTimeSeconds=mapping.window_seconds,
                    AttributeNames=["All"],
                    MessageAttributeNames=["All"],
                ).get("Messages", [])
            except Exception:  # moto stopping, a network blip: poll again
                if self._stopping.wait(0.5):
                    return
                log.exception("ReceiveMessage from %s failed", mapping.queue_name)
                continue
            if messages and not self._stopping.is_set():
                try:
                    done = self._deliver(mapping, messages)
                except _Crash:
                    log.warning("injected crash: %s keeps its batch", mapping.function_name)
                    continue
                for start in range(0, len(done), 10):
                    sqs.delete_message_batch(
                        QueueUrl=url,
                        Entries=[
                            {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                            for i, m in enumerate(done[start : start + 10])
                        ],
                    )

    def _deliver(self, mapping: QueueMapping, messages: list[dict[str, Any]]) -> list[Any]:
        """The batch through the function; the messages to delete."""
        event = {"Records": [self._record(mapping, m) for m in messages]}
        result = self.runtime.invoke(mapping.function_name, event)
        if self._crash_due(mapping.function_name):
            raise _Crash()
        if not result.ok:
            log.warning("%s failed a batch of %d: kept for redelivery",
                        mapping.function_name, len(messages))  # fmt: skip
            return []
        if not mapping.report_failures:
            return messages
        failed = _failed_ids(result.payload, {m["MessageId"] for m in messages})
        if failed is None:
            return []
        return [m for m in messages if m["MessageId"] not in failed]

    def _record(self, mapping: QueueMapping, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": message.get("Attributes", {}),
            "messageAttributes": message.get("MessageAttributes", {}),
            "md5OfBody": message.get("MD5OfBody", ""),
            "eventSource": "aws:sqs",
            "eventSourceARN": mapping.queue_arn,
            "awsRegion": self.context.region,
        }


def _failed_ids(payload: Any, batch: set[str]) -> set[str] | None:
    """The messageIds a partial batch response names (None: the whole batch failed)."""
    if isinstance(payload, bytes | str):
        try:
            payload = json.loads(payload or "null")
        except ValueError:
            return None
    if payload is None:
        return set()
    if not isinstance(payload, dict):
        return None
    items = payload.get("batchItemFailures")
    if not items:
        return set()
    failed = set()
    for item in items:
        identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
        if not identifier or identifier not in batch:
            return None
        failed.add(identifier)
    return failed
