"""DynamoDB Streams -> Lambda for the local runtime, with Lambda's event source mapping semantics.

Every stream mapping of the template (infra/local/stream_mappings.py) gets one poller thread per
stream shard. A poller reads its shard in order (infra/local/shard_reader.py), keeps the records
its FilterCriteria match, batches them (BatchSize, MaximumBatchingWindowInSeconds), invokes the
function through the local LambdaRuntime and checkpoints the way Lambda does:

- success (or, with ReportBatchItemFailures, an empty/null `batchItemFailures`): checkpoint after
  the batch;
- `batchItemFailures` (honoured only with ReportBatchItemFailures): checkpoint before the lowest
  failed sequence number and retry from it; an identifier that is null, empty, misnamed or not
  in the batch (or a response that is not a JSON object) fails the whole batch;
- a function error: retry the whole batch, or with BisectBatchOnFunctionError split it in two
  and retry the halves in order (splitting does not use up retries);
- after MaximumRetryAttempts retries the batch's metadata goes to the OnFailure queue in Lambda's
  invocation record format (infra/local/failure_destination.py), the batch is skipped and later
  records flow again.

A batch never overtakes a failed one: a shard is processed strictly one batch at a time.
Checkpoints live in memory; a poller that crashes resumes from its last checkpoint, so delivery is
at least once and no record is lost.

Local limits (documented, deliberate):
- MaximumRetryAttempts -1 ("until the record expires") is capped at `infinite_retry_cap`
  (10,000) retries; with the retry back-off that blocks a shard for hours, as on AWS.
- The retry budget belongs to the head record of the retried batch: when a partial failure moves
  the checkpoint forward, the count starts again for the new head record.
- ParallelizationFactor N: N pollers per shard ("lanes"), each reading the whole shard and
  keeping the records whose partition key hashes to its lane (CRC-32 of the key's value, mod N),
  each with its own checkpoint, retries and bisection. So records of one partition key are
  delivered in order, one batch at a time, while up to N batches of the shard run at once, as
  Lambda promises; how Lambda itself assigns keys to its concurrent batches is not documented.
- moto gives every table one shard that never closes or splits, so shard lineage is not
  emulated; moto never trims records (no 24 h retention) and never expires items by TTL, so TTL
  deletions do not appear in the stream. `SizeBytes` is moto's over-estimate.
- moto keeps every shard iterator it hands out, so each GetRecords call costs it a little memory;
  idle pollers back off to `idle_poll_interval` (Lambda's own rate: 4 polls a second) to keep a
  long `serve` session small. With `wakeups` (what `serve` passes: the moto server names each
  table a record lands in, infra/local/stream_wakeups.py) a lane reads as a record lands and
  polls an idle shard every 2 s only as a safety net.

Test hooks (for proving consumers idempotent under redelivery):
- `StreamPollers.inject_crash(function_name=None, times=1)`: the next `times` invocations (of that
  function, or any) "crash" the poller right after the function returned, before checkpointing;
  the poller rewinds to its checkpoint and delivers the same records again.
- `StreamPollers(..., redeliver_every_batch=True)`: every successfully processed batch is
  delivered a second time the same way (every record reaches the consumer at least twice).
"""

from __future__ import annotations

import collections
import json
import logging
import math
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from infra.local.event_filters import matches_filters
from infra.local.failure_destination import FailureSender, failure_record
from infra.local.moto_server import aws_client
from infra.local.shard_reader import ShardReader
from infra.local.stream_mappings import StreamMapping, stream_mappings
from infra.local.stream_records import sequence

if TYPE_CHECKING:
    from infra.local.stream_wakeups import StreamWakeups
    from infra.local.template import ResolveContext, Template

__all__ = ["StreamPollers"]

log = logging.getLogger(__name__)

# Lambda's -1 means "retry until the record expires" (24 h for DynamoDB Streams); moto never
# expires records, so locally "infinite" is this many retries.
LOCAL_INFINITE_RETRIES = 10_000
# Lambda polls a shard four times a second when it is idle.
IDLE_POLL_INTERVAL = 0.25
# With the moto server's wake-ups (infra/local/stream_wakeups.py) a record is read as it lands;
# an idle lane then polls only as a safety net for a lost datagram.
WOKEN_IDLE_POLL_INTERVAL = 2.0


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


@dataclass(eq=False)
class _ShardPoller:
    """Batches one shard's records for one mapping, delivers them and judges the answers."""

    owner: StreamPollers
    mapping: StreamMapping
    reader: ShardReader
    buffer: list[dict[str, Any]] = field(default_factory=list)
    buffered_since: float | None = None
    caught_up_at: float = -math.inf  # start of the last empty read with nothing pending
    redelivered_upto: int = -1
    lane: int = 0  # which of the mapping's ParallelizationFactor lanes of the shard it serves
    wake: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self.thread = threading.Thread(
            target=self._run,
            name=f"stream-{self.mapping.name}-{self.reader.shard_id[-8:]}",
            daemon=True,
        )
        self.thread.start()

    @property
    def label(self) -> str:
        lanes = self.mapping.parallelization_factor
        lane = f" lane {self.lane + 1}/{lanes}" if lanes > 1 else ""
        return f"{self.mapping.name} {self.reader.shard_id}{lane}"

    def _mine(self, record: dict[str, Any]) -> bool:
        """Whether the record belongs to this poller's lane (always, with one lane)."""
        lanes = self.mapping.parallelization_factor
        if lanes == 1:
            return True
        key = (record["dynamodb"].get("Keys") or {}).get(self.mapping.partition_key or "")
        value = json.dumps(key, sort_keys=True).encode()
        return zlib.crc32(value) % lanes == self.lane

    def _run(self) -> None:
        stopping = self.owner._stopping
        while not stopping.is_set():
            try:
                self._poll()
                return  # stopping
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

    def _rewind(self) -> None:
        """Forget what was read but not checkpointed, as a restarted Lambda poller would."""
        self.buffer.clear()
        self.buffered_since = None
        self.reader.rewind()

    def _check_stop(self) -> None:
        if self.owner._stopping.is_set():
            raise _Stopping

    def _mark_caught_up(self, started: float) -> None:
        self.caught_up_at = started
        self.owner._notify()

    # ------------------------------------------------------------ batching

    def _read(self) -> bool:
        """One GetRecords call; True if it returned records (kept or filtered out)."""
        started = time.monotonic()
        records = self.reader.read()
        for record in records:
            if self._mine(record) and matches_filters(record, self.mapping.filters):
                if not self.buffer:
                    self.buffered_since = time.monotonic()
                self.buffer.append(record)
        if not records and not self.buffer:
            self._mark_caught_up(started)
        return bool(records)

    def _poll(self) -> None:
        mapping = self.mapping
        idle_delay = self.owner.poll_interval
        while True:
            self._check_stop()
            got_records = False
            if len(self.buffer) < mapping.batch_size:
                # A wake-up set from here on (a record landing while this read runs) is kept
                # for the next wait, not cleared after it.
                self.wake.clear()
                got_records = self._read()
            if not self.buffer:
                # Records the filters dropped are "processed" once nothing before them is pending.
                self.reader.skip_read()
                if got_records:
                    continue  # everything read was filtered out: read on at once
                self._idle(idle_delay)
                idle_delay = min(idle_delay * 2, self.owner.idle_poll_interval)
                continue
            idle_delay = self.owner.poll_interval
            waited = time.monotonic() - (self.buffered_since or 0.0)
            if len(self.buffer) < mapping.batch_size and waited < mapping.batching_window:
                self._idle(min(self.owner.poll_interval, mapping.batching_window - waited))
                continue
            batch = self.buffer[: mapping.batch_size]
            del self.buffer[: mapping.batch_size]
            self.buffered_since = time.monotonic() if self.buffer else None
            self._deliver(batch)

    def _idle(self, delay: float) -> None:
        self.wake.wait(delay)

    # ------------------------------------------------------------ delivering

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
            result = self.owner.runtime.invoke(mapping.function_name, {"Records": attempt.records})
            attempt.invokes += 1
            verdict = self._judge(result, attempt.records)
            self._maybe_crash(attempt.records, verdict)
            if verdict.ok:
                pending.popleft()
                self.reader.commit(attempt.records[-1])
                continue
            if verdict.failed_index:
                # Partial success: everything before the lowest failure is done for good.
                self.reader.commit(attempt.records[verdict.failed_index - 1])
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
                self._send_failure(attempt, verdict)
                pending.popleft()
                self.reader.commit(attempt.records[-1])
                continue
            attempt.retries += 1
            delay = min(
                self.owner.retry_max_delay,
                self.owner.retry_base_delay * 2 ** (attempt.retries - 1),
            )
            if self.owner._stopping.wait(delay):
                raise _Stopping

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
            last = sequence(records[-1])
            if last > self.redelivered_upto:
                self.redelivered_upto = last
                raise _SimulatedCrash

    def _send_failure(self, attempt: _Attempt, verdict: _Verdict) -> None:
        condition = "RetryAttemptsExhausted"
        first = attempt.records[0]["dynamodb"]["SequenceNumber"]
        last = attempt.records[-1]["dynamodb"]["SequenceNumber"]
        destination = self.mapping.on_failure_destination
        if not destination:
            log.warning(
                "%s: %s; discarding records %s..%s (no OnFailure destination)",
                self.label, condition, first, last,
            )  # fmt: skip
            return
        body = failure_record(
            function_arn=self.mapping.function_arn,
            stream_arn=self.mapping.stream_arn,
            shard_id=self.reader.shard_id,
            records=attempt.records,
            condition=condition,
            invokes=attempt.invokes,
            function_error=verdict.function_error,
        )
        # Sending happens before the checkpoint moves: if it fails, the poller restarts and the
        # batch is retried again rather than lost.
        self.owner._failures.send(destination, body)
        log.warning(
            "%s: %s; records %s..%s sent to %s", self.label, condition, first, last, destination
        )


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
        wakeups: StreamWakeups | None = None,
    ) -> None:
        self.template = template
        self.runtime = runtime
        self.endpoint_url = endpoint_url
        self.context = context
        self.poll_interval = poll_interval
        if wakeups is not None and idle_poll_interval == IDLE_POLL_INTERVAL:
            idle_poll_interval = WOKEN_IDLE_POLL_INTERVAL
        self.idle_poll_interval = max(idle_poll_interval, poll_interval)
        self._wakeups = wakeups
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self.infinite_retry_cap = infinite_retry_cap
        self.redeliver_every_batch = redeliver_every_batch
        self.mappings = mappings if mappings is not None else stream_mappings(template, context)
        self._pollers: list[_ShardPoller] = []
        self._stopping = threading.Event()
        self._changed = threading.Condition()
        self._crashes: collections.Counter[str | None] = collections.Counter()
        self._crash_lock = threading.Lock()
        self._failures = FailureSender(endpoint_url)
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
            self._pollers += self._open(mapping)
        for poller in self._pollers:
            poller.start()
        if self._wakeups is not None:
            self._wakeups.subscribe(self._wake_table)

    def _wake_table(self, table: str) -> None:
        """A record landed in ``table``'s stream: its lanes read now."""
        for poller in self._pollers:
            if poller.mapping.stream_arn.split("/")[1] == table:
                poller.wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop polling; a batch being invoked finishes first (up to `timeout` per thread).

        Stop the pollers before closing the LambdaRuntime. A stopped StreamPollers cannot be
        started again (checkpoints live in memory: build a new one, which starts afresh).
        """
        self._stopping.set()
        if self._wakeups is not None:
            self._wakeups.unsubscribe(self._wake_table)
        for poller in self._pollers:
            poller.wake.set()
        for poller in self._pollers:
            if poller.thread is not None:
                poller.thread.join(timeout)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until every shard's records written before this call are processed (or sent
        to failure); False on timeout (e.g. a record is still being retried)."""
        if not self._started:
            raise RuntimeError("StreamPollers.wait_idle() before start()")
        called = time.monotonic()
        deadline = called + timeout
        for poller in self._pollers:
            poller.wake.set()
        with self._changed:
            while True:
                if all(p.caught_up_at >= called for p in self._pollers):
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

    # ------------------------------------------------------------ internals

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

    def _open(self, mapping: StreamMapping) -> list[_ShardPoller]:
        """A poller per shard of the mapping's stream, positioned at its starting position."""
        region = mapping.stream_arn.split(":")[3]
        streams = aws_client("dynamodbstreams", self.endpoint_url, region)
        shards = streams.describe_stream(StreamArn=mapping.stream_arn)["StreamDescription"]
        pollers = []
        for shard in shards.get("Shards") or []:
            for lane in range(mapping.parallelization_factor):
                # One client per poller thread.
                reader = ShardReader(
                    client=aws_client("dynamodbstreams", self.endpoint_url, region),
                    stream_arn=mapping.stream_arn,
                    shard_id=shard["ShardId"],
                    initial_position=mapping.starting_position,
                )
                reader.open()
                pollers.append(_ShardPoller(owner=self, mapping=mapping, reader=reader, lane=lane))
        return pollers
