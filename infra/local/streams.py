"""DynamoDB Streams -> Lambda for the local runtime, with Lambda's event source mapping semantics.

Every `Type: DynamoDB` event in the template (and every AWS::Lambda::EventSourceMapping on a
DynamoDB stream) becomes a mapping; each mapping gets one poller thread per stream shard. A
poller reads its shard from moto in order, builds the event exactly as Lambda does, invokes the
function through the local LambdaRuntime and checkpoints the way Lambda does:

- success (or, with ReportBatchItemFailures, an empty/null `batchItemFailures`): checkpoint after
  the batch;
- `batchItemFailures` (honoured only with ReportBatchItemFailures): checkpoint before the lowest
  failed sequence number and retry from it; an identifier that is null, empty, misnamed or not
  in the batch (or a response that is not a JSON object) fails the whole batch;
- a function error: retry the whole batch, or with BisectBatchOnFunctionError split it in two
  and retry the halves in order (splitting does not use up retries);
- after MaximumRetryAttempts retries (or once a record is older than MaximumRecordAgeInSeconds)
  the batch's metadata goes to the OnFailure destination (SQS or SNS) in Lambda's invocation
  record format, the batch is skipped and later records flow again.

A batch never overtakes a failed one: a shard is processed strictly one batch at a time.
Checkpoints live in memory; a poller that crashes resumes from its last checkpoint, so delivery is
at least once and no record is lost.

Local limits (documented, deliberate):
- MaximumRetryAttempts -1 ("until the record expires") is capped at `infinite_retry_cap`
  (10,000) retries; with the retry back-off that blocks a shard for hours, as on AWS.
- The retry budget belongs to the head record of the retried batch: when a partial failure moves
  the checkpoint forward, the count starts again for the new head record.
- ParallelizationFactor is ignored (one batch at a time per shard: stricter ordering than AWS
  gives across partition keys); TumblingWindowInSeconds is not supported (a warning is logged).
- FilterCriteria supports the common EventBridge pattern rules (exact values, prefix, suffix,
  equals-ignore-case, anything-but, exists, numeric) matched against the Lambda record. Numeric
  rules match JSON numbers only, so they never match DynamoDB `N` values (which are strings).
- moto gives every table one shard that never closes or splits; shard lineage (children after
  their parent) is handled for completeness but cannot be exercised against moto. moto never
  trims records (no 24 h retention) and never expires items by TTL, so TTL deletions do not
  appear in the stream. `SizeBytes` is moto's over-estimate.
- moto keeps every shard iterator it hands out, so each GetRecords call costs it a little memory;
  idle pollers back off to `idle_poll_interval` (Lambda's own rate: 4 polls a second) to keep a
  long `serve` session small.

Test hooks (for proving consumers idempotent under redelivery):
- `StreamPollers.inject_crash(function_name=None, times=1)`: the next `times` invocations (of that
  function, or any) "crash" the poller right after the function returned, before checkpointing;
  the poller rewinds to its checkpoint and delivers the same records again.
- `StreamPollers(..., redeliver_every_batch=True)`: every successfully processed batch is
  delivered a second time the same way (every record reaches the consumer at least twice).
"""

from __future__ import annotations

import base64
import collections
import datetime as dt
import json
import logging
import math
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from infra.local.services import aws_client

if TYPE_CHECKING:
    from collections.abc import Iterable

    from infra.local.template import ResolveContext, Template

__all__ = [
    "StreamMapping",
    "StreamPollers",
    "matches_filters",
    "stream_mappings",
    "to_lambda_record",
]

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 100
# Lambda's -1 means "retry until the record expires" (24 h for DynamoDB Streams); moto never
# expires records, so locally "infinite" is this many retries.
LOCAL_INFINITE_RETRIES = 10_000
# Lambda polls a shard four times a second when it is idle.
IDLE_POLL_INTERVAL = 0.25
SHARD_DISCOVERY_INTERVAL = 1.0
# GetRecords returns at most 1,000 records (the DynamoDB Streams API limit).
GET_RECORDS_LIMIT = 1000


# --------------------------------------------------------------------------------------------
# mappings from the template
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamMapping:
    """One DynamoDB event source mapping, with Lambda's defaults applied."""

    function_name: str  # the function's logical id (what LambdaRuntime.invoke takes)
    event_name: str  # the SAM event's key, or the EventSourceMapping resource's logical id
    function_arn: str
    stream_arn: str
    starting_position: str  # TRIM_HORIZON | LATEST
    batch_size: int = DEFAULT_BATCH_SIZE
    batching_window: float = 0.0  # MaximumBatchingWindowInSeconds
    maximum_retry_attempts: int = -1  # -1 = until the record expires
    maximum_record_age: int = -1  # seconds; -1 = no limit
    bisect_on_error: bool = False
    report_batch_item_failures: bool = False
    on_failure_destination: str | None = None  # SQS queue or SNS topic ARN
    filters: tuple[dict[str, Any], ...] = ()

    @property
    def name(self) -> str:
        return f"{self.function_name}/{self.event_name}"


def _as_bool(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _parse_filters(criteria: Any, where: str) -> tuple[dict[str, Any], ...]:
    if not criteria:
        return ()
    patterns = []
    for item in criteria.get("Filters") or []:
        pattern = item.get("Pattern") if isinstance(item, dict) else None
        if isinstance(pattern, str):
            try:
                pattern = json.loads(pattern)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: FilterCriteria pattern is not JSON: {exc}") from exc
        if not isinstance(pattern, dict):
            raise ValueError(f"{where}: a FilterCriteria pattern must be a JSON object")
        patterns.append(pattern)
    return tuple(patterns)


def _mapping_from_properties(
    function_name: str,
    event_name: str,
    function_arn: str,
    props: dict[str, Any],
    stream_key: str,
) -> StreamMapping | None:
    where = f"{function_name}/{event_name}"
    if "Enabled" in props and not _as_bool(props["Enabled"]):
        log.info("stream mapping %s is disabled in the template", where)
        return None
    stream_arn = props.get(stream_key)
    if not isinstance(stream_arn, str) or ":dynamodb:" not in stream_arn:
        raise ValueError(f"{where}: {stream_key} is not a DynamoDB stream ARN: {stream_arn!r}")
    position = str(props.get("StartingPosition", "LATEST"))
    if position not in ("TRIM_HORIZON", "LATEST"):
        raise ValueError(f"{where}: StartingPosition must be TRIM_HORIZON or LATEST")
    if props.get("TumblingWindowInSeconds"):
        log.warning("%s: TumblingWindowInSeconds is not supported locally; ignored", where)
    batch_size = int(props.get("BatchSize", DEFAULT_BATCH_SIZE))
    retries = int(props.get("MaximumRetryAttempts", -1))
    if not 1 <= batch_size <= 10_000:
        raise ValueError(f"{where}: BatchSize must be 1..10000")
    if not -1 <= retries <= 10_000:
        raise ValueError(f"{where}: MaximumRetryAttempts must be -1..10000")
    destination = (((props.get("DestinationConfig") or {}).get("OnFailure")) or {}).get(
        "Destination"
    )
    return StreamMapping(
        function_name=function_name,
        event_name=event_name,
        function_arn=function_arn,
        stream_arn=stream_arn,
        starting_position=position,
        batch_size=batch_size,
        batching_window=float(props.get("MaximumBatchingWindowInSeconds", 0)),
        maximum_retry_attempts=retries,
        maximum_record_age=int(props.get("MaximumRecordAgeInSeconds", -1)),
        bisect_on_error=_as_bool(props.get("BisectBatchOnFunctionError", False)),
        report_batch_item_failures="ReportBatchItemFailures"
        in (props.get("FunctionResponseTypes") or []),
        on_failure_destination=destination or None,
        filters=_parse_filters(props.get("FilterCriteria"), where),
    )


def stream_mappings(template: Template, context: ResolveContext) -> list[StreamMapping]:
    """Every DynamoDB stream mapping in the template, resolved with `context`.

    `context.values` must already hold the tables' StreamArn (services.provision fills it).
    """
    mappings: list[StreamMapping] = []

    def function_arn(logical_id: str) -> str:
        return str(template.resolve({"Fn::GetAtt": [logical_id, "Arn"]}, context))

    for function_name, spec in sorted(template.functions.items()):
        for event_name, event in sorted(spec.events.items()):
            if not isinstance(event, dict) or event.get("Type") != "DynamoDB":
                continue
            props = template.resolve(event.get("Properties") or {}, context) or {}
            mapping = _mapping_from_properties(
                function_name, event_name, function_arn(function_name), props, "Stream"
            )
            if mapping is not None:
                mappings.append(mapping)

    for logical_id, resource in sorted(template.resources.items()):
        if resource.get("Type") != "AWS::Lambda::EventSourceMapping":
            continue
        raw = resource.get("Properties") or {}
        function_name = template.function_id_for(raw.get("FunctionName"))
        props = template.resolve(raw, context) or {}
        source = props.get("EventSourceArn")
        if function_name is None or not isinstance(source, str) or ":dynamodb:" not in source:
            continue  # SQS, Kinesis or a function this template does not define
        mapping = _mapping_from_properties(
            function_name, logical_id, function_arn(function_name), props, "EventSourceArn"
        )
        if mapping is not None:
            mappings.append(mapping)
    return mappings


# --------------------------------------------------------------------------------------------
# records as Lambda delivers them
# --------------------------------------------------------------------------------------------


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
    record: dict[str, Any] = {
        "eventID": raw["eventID"],
        "eventName": raw["eventName"],
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        # The table's region, from the stream ARN (moto always says us-east-1).
        "awsRegion": stream_arn.split(":")[3],
        "dynamodb": change,
    }
    if "userIdentity" in raw:  # TTL deletions on AWS
        record["userIdentity"] = {
            "type": raw["userIdentity"].get("Type", raw["userIdentity"].get("type")),
            "principalId": raw["userIdentity"].get(
                "PrincipalId", raw["userIdentity"].get("principalId")
            ),
        }
    record["eventSourceARN"] = stream_arn
    return record


def _sequence(record: dict[str, Any]) -> int:
    return int(record["dynamodb"]["SequenceNumber"])


# --------------------------------------------------------------------------------------------
# FilterCriteria (EventBridge-style patterns)
# --------------------------------------------------------------------------------------------

_MISSING = object()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numeric(rule: list[Any], value: Any) -> bool:
    if not _is_number(value):
        return False
    comparisons = {
        "=": lambda a, b: a == b,
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
    }
    return all(
        comparisons[op](value, bound) for op, bound in zip(rule[::2], rule[1::2], strict=False)
    )


def _rule_matches(rule: Any, value: Any) -> bool:
    """One entry of a pattern's value list against one (scalar) value, or _MISSING."""
    if isinstance(rule, dict):
        ((operator, argument),) = rule.items()
        if operator == "exists":
            return (value is not _MISSING) == bool(argument)
        if value is _MISSING:
            return False
        if operator == "prefix":
            return isinstance(value, str) and value.startswith(str(argument))
        if operator == "suffix":
            return isinstance(value, str) and value.endswith(str(argument))
        if operator == "equals-ignore-case":
            return isinstance(value, str) and value.lower() == str(argument).lower()
        if operator == "numeric":
            return _numeric(list(argument), value)
        if operator == "anything-but":
            if isinstance(argument, dict):
                return not _rule_matches(argument, value)
            excluded = argument if isinstance(argument, list) else [argument]
            return not any(_rule_matches(item, value) for item in excluded)
        raise ValueError(f"unsupported filter rule {operator!r}")
    if value is _MISSING:
        return False
    if _is_number(rule) and _is_number(value):
        return float(rule) == float(value)
    return type(rule) is type(value) and rule == value


def _pattern_matches(pattern: dict[str, Any], value: Any) -> bool:
    container = value if isinstance(value, dict) else {}
    for key, expected in pattern.items():
        actual = container.get(key, _MISSING)
        if isinstance(expected, dict):
            if not _pattern_matches(expected, actual):
                return False
        elif isinstance(expected, list):
            candidates = actual if isinstance(actual, list) else [actual]
            if not any(_rule_matches(rule, item) for rule in expected for item in candidates):
                return False
        else:
            raise ValueError(f"filter pattern values must be lists or objects, got {expected!r}")
    return True


def matches_filters(record: dict[str, Any], patterns: Iterable[dict[str, Any]]) -> bool:
    """True if the Lambda-shaped `record` matches any pattern (no patterns: everything)."""
    patterns = list(patterns)
    return not patterns or any(_pattern_matches(pattern, record) for pattern in patterns)


# --------------------------------------------------------------------------------------------
# pollers
# --------------------------------------------------------------------------------------------


class _Stopping(Exception):
    """The pollers are shutting down: leave the batch unacknowledged."""


class _SimulatedCrash(Exception):
    """A test-injected poller crash after an invocation, before its checkpoint."""


@dataclass
class _Attempt:
    """A (sub-)batch being retried; `invokes` counts every invocation of its records."""

    records: list[dict[str, Any]]
    retries: int = 0
    invokes: int = 0


@dataclass
class _Verdict:
    ok: bool
    failed_index: int | None = None  # lowest reported failure (partial batch response)
    function_error: str | None = None


def _iso_seconds(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _iso_millis(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(eq=False)
class _ShardPoller:
    """Reads one shard for one mapping, strictly in order, and keeps its checkpoint."""

    owner: StreamPollers
    mapping: StreamMapping
    shard_id: str
    parent: _ShardPoller | None
    initial_position: str
    checkpoint: int | None = None  # last sequence number processed or sent to failure
    first_seen: int | None = None  # first sequence number ever read (before any checkpoint)
    read_upto: int | None = None  # last sequence number read (filtered records included)
    safe_iterator: str | None = None  # positioned before anything unread, while nothing is read
    iterator: str | None = None
    closed: bool = False
    buffer: list[dict[str, Any]] = field(default_factory=list)
    buffered_since: float | None = None
    caught_up_at: float = -math.inf  # start of the last empty read with nothing pending
    redelivered_upto: int = -1
    finished: threading.Event = field(default_factory=threading.Event)
    wake: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    invocations: int = 0
    failures_sent: int = 0
    streams: Any = None
    _destinations: Any = None

    # ------------------------------------------------------------ lifecycle

    def open(self) -> None:
        """Fix the starting position now, so LATEST means "when start() was called"."""
        self.streams = aws_client("dynamodbstreams", self.owner.endpoint_url, self._region)
        self.iterator = self._get_iterator(self.initial_position)
        self.safe_iterator = self.iterator

    def start(self) -> None:
        self.thread = threading.Thread(
            target=self._run, name=f"stream-{self.mapping.name}-{self.shard_id[-8:]}", daemon=True
        )
        self.thread.start()

    @property
    def _region(self) -> str:
        return self.mapping.stream_arn.split(":")[3]

    def _run(self) -> None:
        stopping = self.owner._stopping
        while not stopping.is_set():
            try:
                if self.parent is not None and not self._wait_for_parent():
                    return
                self._poll()
                return  # shard closed and drained, or stopping
            except _Stopping:
                return
            except _SimulatedCrash:
                log.warning("%s: simulated poller crash; resuming from checkpoint", self.label)
            except Exception:
                # Whatever broke (moto unreachable, an invalid response from the runtime), the
                # shard must keep flowing: resume from the checkpoint, as a new Lambda poller
                # would, so the batch is delivered again rather than lost.
                log.exception("%s: poller failed; resuming from checkpoint", self.label)
                stopping.wait(1.0)
            self._rewind()

    @property
    def label(self) -> str:
        return f"{self.mapping.name} {self.shard_id}"

    def _wait_for_parent(self) -> bool:
        # Lambda processes a child shard only once its parent is fully processed.
        assert self.parent is not None
        while not self.parent.finished.is_set():
            self._mark_caught_up(time.monotonic())
            if self.owner._stopping.wait(self.owner.poll_interval):
                return False
        return True

    def _rewind(self) -> None:
        """Forget what was read but not checkpointed, as a restarted Lambda poller would."""
        self.buffer.clear()
        self.buffered_since = None
        self.iterator = None
        self.closed = False

    def _check_stop(self) -> None:
        if self.owner._stopping.is_set():
            raise _Stopping

    def _mark_caught_up(self, started: float) -> None:
        self.caught_up_at = started
        self.owner._notify()

    # ------------------------------------------------------------ reading

    def _get_iterator(self, position: str, sequence: int | None = None) -> str:
        kwargs: dict[str, Any] = {
            "StreamArn": self.mapping.stream_arn,
            "ShardId": self.shard_id,
            "ShardIteratorType": position,
        }
        if sequence is not None:
            kwargs["SequenceNumber"] = str(sequence)
        return str(self.streams.get_shard_iterator(**kwargs)["ShardIterator"])

    def _resume_iterator(self) -> str:
        if self.checkpoint is not None:
            return self._get_iterator("AFTER_SEQUENCE_NUMBER", self.checkpoint)
        if self.first_seen is not None:
            return self._get_iterator("AT_SEQUENCE_NUMBER", self.first_seen)
        if self.safe_iterator is not None:
            return self.safe_iterator
        return self._get_iterator(self.initial_position)

    def _read(self) -> bool:
        """One GetRecords call; True if it returned records (kept or filtered out)."""
        if self.iterator is None:
            self.iterator = self._resume_iterator()
        started = time.monotonic()
        response = self.streams.get_records(ShardIterator=self.iterator, Limit=GET_RECORDS_LIMIT)
        records = response.get("Records") or []
        self.iterator = response.get("NextShardIterator")
        if self.iterator is None:
            self.closed = True
        for raw in records:
            record = to_lambda_record(raw, self.mapping.stream_arn)
            sequence = _sequence(record)
            if self.first_seen is None:
                self.first_seen = sequence
            self.read_upto = sequence
            if matches_filters(record, self.mapping.filters):
                if not self.buffer:
                    self.buffered_since = time.monotonic()
                self.buffer.append(record)
        if not records and not self.buffer:
            if self.first_seen is None and self.iterator is not None:
                self.safe_iterator = self.iterator
            self._mark_caught_up(started)
        return bool(records)

    def _skip_filtered(self) -> None:
        # Records the filters dropped are "processed" once nothing before them is pending.
        if (
            not self.buffer
            and self.read_upto is not None
            and (self.checkpoint is None or self.read_upto > self.checkpoint)
        ):
            self.checkpoint = self.read_upto

    def _poll(self) -> None:
        mapping = self.mapping
        idle_delay = self.owner.poll_interval
        while True:
            self._check_stop()
            got_records = False
            if len(self.buffer) < mapping.batch_size and not self.closed:
                got_records = self._read()
            if not self.buffer:
                self._skip_filtered()
                if self.closed:
                    self.finished.set()
                    self.owner._notify()
                    return
                if got_records:
                    continue  # everything read was filtered out: read on at once
                self._idle(idle_delay)
                idle_delay = min(idle_delay * 2, self.owner.idle_poll_interval)
                continue
            idle_delay = self.owner.poll_interval
            waited = time.monotonic() - (self.buffered_since or 0.0)
            if (
                len(self.buffer) < mapping.batch_size
                and not self.closed
                and waited < mapping.batching_window
            ):
                self._idle(min(self.owner.poll_interval, mapping.batching_window - waited))
                continue
            batch = self.buffer[: mapping.batch_size]
            del self.buffer[: mapping.batch_size]
            self.buffered_since = time.monotonic() if self.buffer else None
            self._deliver(batch)

    def _idle(self, delay: float) -> None:
        self.wake.wait(delay)
        self.wake.clear()

    # ------------------------------------------------------------ delivering

    def _commit(self, record: dict[str, Any]) -> None:
        sequence = _sequence(record)
        if self.checkpoint is None or sequence > self.checkpoint:
            self.checkpoint = sequence

    def _deliver(self, batch: list[dict[str, Any]]) -> None:
        mapping = self.mapping
        retry_limit = (
            self.owner.infinite_retry_cap
            if mapping.maximum_retry_attempts < 0
            else mapping.maximum_retry_attempts
        )
        pending: collections.deque[_Attempt] = collections.deque([_Attempt(batch)])
        while pending:
            self._check_stop()
            attempt = pending[0]
            if mapping.maximum_record_age >= 0 and not self._drop_expired(attempt):
                pending.popleft()
                continue
            result = self.owner.runtime.invoke(mapping.function_name, {"Records": attempt.records})
            attempt.invokes += 1
            self.invocations += 1
            verdict = self._judge(result, attempt.records)
            self._maybe_crash(attempt.records, verdict)
            if verdict.ok:
                pending.popleft()
                self._commit(attempt.records[-1])
                continue
            if verdict.failed_index:
                # Partial success: everything before the lowest failure is done for good.
                self._commit(attempt.records[verdict.failed_index - 1])
                attempt.records = attempt.records[verdict.failed_index :]
                attempt.retries = 0
            elif (
                verdict.failed_index is None
                and mapping.bisect_on_error
                and len(attempt.records) > 1
            ):
                # Halves inherit the retry count: splitting is not a retry.
                middle = len(attempt.records) // 2
                pending.popleft()
                pending.extendleft(
                    [
                        _Attempt(attempt.records[middle:], attempt.retries, attempt.invokes),
                        _Attempt(attempt.records[:middle], attempt.retries, attempt.invokes),
                    ]
                )
                continue
            if attempt.retries >= retry_limit:
                self._send_failure(
                    attempt.records, "RetryAttemptsExhausted", attempt.invokes, verdict
                )
                pending.popleft()
                self._commit(attempt.records[-1])
                continue
            attempt.retries += 1
            delay = min(
                self.owner.retry_max_delay,
                self.owner.retry_base_delay * 2 ** (attempt.retries - 1),
            )
            if self.owner._stopping.wait(delay):
                raise _Stopping

    def _drop_expired(self, attempt: _Attempt) -> bool:
        """Send records older than MaximumRecordAgeInSeconds to failure; False if none remain."""
        now = time.time()
        limit = self.mapping.maximum_record_age
        fresh_from = 0
        for index, record in enumerate(attempt.records):
            created = record["dynamodb"].get("ApproximateCreationDateTime", now)
            if now - created <= limit:
                break
            fresh_from = index + 1
        if fresh_from:
            expired = attempt.records[:fresh_from]
            self._send_failure(expired, "RecordAgeExceeded", attempt.invokes, _Verdict(ok=False))
            self._commit(expired[-1])
            attempt.records = attempt.records[fresh_from:]
        return bool(attempt.records)

    def _judge(self, result: Any, records: list[dict[str, Any]]) -> _Verdict:
        if not getattr(result, "ok", False):
            return _Verdict(ok=False, function_error="Unhandled")
        if not self.mapping.report_batch_item_failures:
            return _Verdict(ok=True)  # Lambda ignores the response without the opt-in
        payload = getattr(result, "payload", None)
        if isinstance(payload, (bytes, str)):
            try:
                payload = json.loads(payload) if payload else None
            except json.JSONDecodeError:
                log.warning("%s: response is not JSON; whole batch failed", self.label)
                return _Verdict(ok=False)
        if payload is None:
            return _Verdict(ok=True)
        if not isinstance(payload, dict):
            log.warning("%s: response is not a JSON object; whole batch failed", self.label)
            return _Verdict(ok=False)
        failures = payload.get("batchItemFailures")
        if not failures:
            return _Verdict(ok=True)
        positions = {record["dynamodb"]["SequenceNumber"]: i for i, record in enumerate(records)}
        indexes = []
        for failure in failures if isinstance(failures, list) else [failures]:
            identifier = failure.get("itemIdentifier") if isinstance(failure, dict) else None
            if not isinstance(identifier, str) or identifier not in positions:
                log.warning(
                    "%s: invalid itemIdentifier %r; whole batch failed", self.label, failure
                )
                return _Verdict(ok=False)
            indexes.append(positions[identifier])
        return _Verdict(ok=False, failed_index=min(indexes))

    def _maybe_crash(self, records: list[dict[str, Any]], verdict: _Verdict) -> None:
        if self.owner._take_crash(self.mapping.function_name):
            raise _SimulatedCrash
        if self.owner.redeliver_every_batch and verdict.ok:
            last = _sequence(records[-1])
            if last > self.redelivered_upto:
                self.redelivered_upto = last
                raise _SimulatedCrash

    # ------------------------------------------------------------ on-failure destination

    def _failure_record(
        self, records: list[dict[str, Any]], condition: str, invokes: int, verdict: _Verdict
    ) -> dict[str, Any]:
        first, last = records[0]["dynamodb"], records[-1]["dynamodb"]
        now = time.time()
        response: dict[str, Any] = {"statusCode": 200, "executedVersion": "$LATEST"}
        if verdict.function_error:
            response["functionError"] = verdict.function_error
        return {
            "requestContext": {
                "requestId": str(uuid.uuid4()),
                "functionArn": self.mapping.function_arn,
                "condition": condition,
                "approximateInvokeCount": invokes,
            },
            "responseContext": response,
            "version": "1.0",
            "timestamp": _iso_millis(dt.datetime.now(dt.UTC)),
            "DDBStreamBatchInfo": {
                "shardId": self.shard_id,
                "startSequenceNumber": first["SequenceNumber"],
                "endSequenceNumber": last["SequenceNumber"],
                "approximateArrivalOfFirstRecord": _iso_seconds(
                    first.get("ApproximateCreationDateTime", now)
                ),
                "approximateArrivalOfLastRecord": _iso_seconds(
                    last.get("ApproximateCreationDateTime", now)
                ),
                "batchSize": len(records),
                "streamArn": self.mapping.stream_arn,
            },
        }

    def _send_failure(
        self, records: list[dict[str, Any]], condition: str, invokes: int, verdict: _Verdict
    ) -> None:
        destination = self.mapping.on_failure_destination
        body = self._failure_record(records, condition, invokes, verdict)
        info = body["DDBStreamBatchInfo"]
        if not destination:
            log.warning(
                "%s: %s; discarding records %s..%s (no OnFailure destination)",
                self.label, condition, info["startSequenceNumber"], info["endSequenceNumber"],
            )  # fmt: skip
            return
        # Sending happens before the checkpoint moves: if it fails, the poller restarts and the
        # batch is retried again rather than lost.
        self.owner._deliver_failure(destination, body, self._region)
        self.failures_sent += 1
        log.warning(
            "%s: %s; records %s..%s sent to %s",
            self.label, condition, info["startSequenceNumber"], info["endSequenceNumber"],
            destination,
        )  # fmt: skip


class StreamPollers:
    """Runs every DynamoDB stream mapping of a template against moto, like Lambda's pollers.

    `runtime` is anything with `invoke(function_name, event)` returning an object with `ok` and
    `payload` (infra.local.lambdas.LambdaRuntime). See the module docstring for the semantics
    and the test hooks (`inject_crash`, `redeliver_every_batch`).
    """

    def __init__(
        self,
        template: Template,
        runtime: Any,
        endpoint_url: str,
        context: ResolveContext,
        poll_interval: float = 0.05,
        *,
        idle_poll_interval: float = IDLE_POLL_INTERVAL,
        retry_base_delay: float = 0.02,
        retry_max_delay: float = 1.0,
        infinite_retry_cap: int = LOCAL_INFINITE_RETRIES,
        redeliver_every_batch: bool = False,
        mappings: list[StreamMapping] | None = None,
    ) -> None:
        self.template = template
        self.runtime = runtime
        self.endpoint_url = endpoint_url
        self.context = context
        self.poll_interval = poll_interval
        self.idle_poll_interval = max(idle_poll_interval, poll_interval)
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self.infinite_retry_cap = infinite_retry_cap
        self.redeliver_every_batch = redeliver_every_batch
        self.mappings = mappings if mappings is not None else stream_mappings(template, context)
        self._pollers: dict[tuple[str, str], _ShardPoller] = {}
        self._pollers_lock = threading.Lock()
        self._stopping = threading.Event()
        self._changed = threading.Condition()
        self._crashes: collections.Counter[str | None] = collections.Counter()
        self._crash_lock = threading.Lock()
        self._clients: dict[tuple[str, str], Any] = {}
        self._client_lock = threading.Lock()
        self._queue_urls: dict[str, str] = {}
        self._discovery: threading.Thread | None = None
        self._started = False

    # ------------------------------------------------------------ public API

    def start(self) -> None:
        """Open every mapping's shards at their starting position and start polling.

        Starting positions are fixed before this returns: with LATEST, records written after
        start() are delivered, earlier ones are not.
        """
        if self._started:
            return
        self._started = True
        for mapping in self.mappings:
            log.info(
                "stream mapping %s: %s from %s, batch size %d, %d retries%s",
                mapping.name, mapping.stream_arn.split("/")[1], mapping.starting_position,
                mapping.batch_size, mapping.maximum_retry_attempts,
                ", bisect" if mapping.bisect_on_error else "",
            )  # fmt: skip
            self._discover(mapping, initial=True)
        for poller in self._snapshot():
            poller.start()
        self._discovery = threading.Thread(
            target=self._discover_forever, name="stream-shard-discovery", daemon=True
        )
        self._discovery.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop polling; a batch being invoked finishes first (up to `timeout` per thread).

        Stop the pollers before closing the LambdaRuntime. A stopped StreamPollers cannot be
        started again (checkpoints live in memory: build a new one, which starts afresh).
        """
        self._stopping.set()
        for poller in self._snapshot():
            poller.wake.set()
        for poller in self._snapshot():
            if poller.thread is not None:
                poller.thread.join(timeout)
        if self._discovery is not None:
            self._discovery.join(timeout)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until every shard's records written before this call are processed (or sent
        to failure); False on timeout (e.g. a record is still being retried)."""
        if not self._started:
            raise RuntimeError("StreamPollers.wait_idle() before start()")
        called = time.monotonic()
        deadline = called + timeout
        for poller in self._snapshot():
            poller.wake.set()
        with self._changed:
            while True:
                pollers = self._snapshot()
                if all(p.finished.is_set() or p.caught_up_at >= called for p in pollers):
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(min(remaining, 0.05))

    def inject_crash(self, function_name: str | None = None, times: int = 1) -> None:
        """Test hook: crash the poller after the next `times` invocations (of `function_name`,
        or of any function), before the checkpoint; the records are delivered again."""
        with self._crash_lock:
            self._crashes[function_name] += times

    def status(self) -> list[dict[str, Any]]:
        """Per-shard progress, for logs and debugging."""
        return [
            {
                "mapping": poller.mapping.name,
                "shard": poller.shard_id,
                "checkpoint": poller.checkpoint,
                "buffered": len(poller.buffer),
                "invocations": poller.invocations,
                "failures_sent": poller.failures_sent,
                "finished": poller.finished.is_set(),
            }
            for poller in self._snapshot()
        ]

    def __enter__(self) -> StreamPollers:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ------------------------------------------------------------ internals

    def _snapshot(self) -> list[_ShardPoller]:
        with self._pollers_lock:
            return list(self._pollers.values())

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _take_crash(self, function_name: str) -> bool:
        with self._crash_lock:
            for key in (function_name, None):
                if self._crashes[key] > 0:
                    self._crashes[key] -= 1
                    return True
        return False

    def _client(self, service: str, region: str) -> Any:
        with self._client_lock:
            key = (service, region)
            if key not in self._clients:
                self._clients[key] = aws_client(service, self.endpoint_url, region)
            return self._clients[key]

    def _shards(self, stream_arn: str) -> list[dict[str, Any]]:
        client = self._client("dynamodbstreams", stream_arn.split(":")[3])
        shards: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"StreamArn": stream_arn}
        while True:
            description = client.describe_stream(**kwargs)["StreamDescription"]
            shards.extend(description.get("Shards") or [])
            last = description.get("LastEvaluatedShardId")
            if not last:
                return shards
            kwargs["ExclusiveStartShardId"] = last

    def _discover(self, mapping: StreamMapping, *, initial: bool) -> list[_ShardPoller]:
        """Create pollers for shards of `mapping` not seen yet, parents before children."""
        shards = self._shards(mapping.stream_arn)
        known = {shard["ShardId"] for shard in shards}
        created = []
        for shard in shards:
            key = (mapping.name, shard["ShardId"])
            if key in self._pollers:
                continue
            parent_id = shard.get("ParentShardId")
            parent = self._pollers.get((mapping.name, parent_id)) if parent_id in known else None
            # Only the shards open at start() honour StartingPosition; shards that appear later
            # (children of a split, a re-enabled stream) hold only new records: read them all.
            position = mapping.starting_position if initial and parent is None else "TRIM_HORIZON"
            poller = _ShardPoller(
                owner=self,
                mapping=mapping,
                shard_id=shard["ShardId"],
                parent=parent,
                initial_position=position,
            )
            poller.open()
            with self._pollers_lock:
                self._pollers[key] = poller
            created.append(poller)
        return created

    def _discover_forever(self) -> None:
        while not self._stopping.wait(SHARD_DISCOVERY_INTERVAL):
            for mapping in self.mappings:
                try:
                    for poller in self._discover(mapping, initial=False):
                        poller.start()
                except Exception:
                    log.exception("shard discovery failed for %s", mapping.name)

    def _deliver_failure(self, destination: str, body: dict[str, Any], region: str) -> None:
        message = json.dumps(body)
        parts = destination.split(":")
        service = parts[2] if len(parts) > 5 else ""
        if service == "sqs":
            sqs = self._client("sqs", parts[3])
            if destination not in self._queue_urls:
                self._queue_urls[destination] = sqs.get_queue_url(
                    QueueName=parts[5], QueueOwnerAWSAccountId=parts[4]
                )["QueueUrl"]
            sqs.send_message(QueueUrl=self._queue_urls[destination], MessageBody=message)
        elif service == "sns":
            self._client("sns", parts[3]).publish(TopicArn=destination, Message=message)
        else:
            log.warning("unsupported OnFailure destination %s; record dropped: %s", destination,
                        message)  # fmt: skip
