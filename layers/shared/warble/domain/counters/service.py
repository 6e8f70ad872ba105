"""Counters derived from DynamoDB Streams, applied exactly once under at-least-once delivery.

The reusable mechanism behind ``followers_count``, ``tweet_count`` and the like, retweet and
reply counts. Each rule turns one typed event (``warble.events``, decoded from the stream by
the stores) into counter deltas ``(counter key, field, +/-n)``; rules are registered per event
type (``CounterRules``). The consumer then, per Lambda batch:

1. collects every record's deltas; a record that could not be decoded is reported, and the
   others are still applied (deltas commute, so order does not matter, and a poison record
   must not hold good ones back: after the retries they would reach the failure queue
   unapplied);
2. cuts the records, in stream order, into chunks that fit one TransactWriteItems (at most 100
   actions: one claim per record plus one update per distinct counter item, which adds to each
   of its fields);
3. writes, per chunk and in ONE transaction, a claim per record (``CLAIM#<eventID>``, put only
   if absent) and each counter's summed delta. A hot account followed 90 times in a batch takes
   one counter write, not 90;
4. when claims already exist (a redelivery: Lambda retried the batch, a poller crashed before
   its checkpoint, a bisected half is sent again), drops those records and retries the rest, so
   their deltas are never added twice. Powertools' idempotency alone could not give this: its
   record is written apart from the counter, so a crash between the two half-applies a batch;
5. reports what it could not apply as ``batchItemFailures``. Lambda restarts the batch from the
   lowest of them, so records applied after it come again and find their claims; after
   MaximumRetryAttempts the range goes to the on-failure SQS queue, where only the reported
   records are unapplied.

Nothing here touches a store library: the transaction is ``CounterStore.apply``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from warble.domain.counters.ports import ClaimsTaken, Delta, TransactionRetry
from warble.events import Change

MAX_TRANSACTION_ACTIONS = 100


Rule = Callable[[Any], list[Delta]]


class CounterStore(Protocol):
    def apply(self, claims: list[str], deltas: dict[tuple[str, str], int]) -> None: ...


class CounterRules:
    """Counter rules by event type: one consumer counts for every table it is fed."""

    def __init__(self) -> None:
        self._rules: dict[type, list[Rule]] = {}

    def on(self, event_type: type, rule: Rule) -> CounterRules:
        self._rules.setdefault(event_type, []).append(rule)
        return self

    def deltas(self, change: Change) -> list[Delta]:
        return [d for e in change.events for rule in self._rules.get(type(e), ()) for d in rule(e)]


@dataclass
class _Chunk:
    indexes: list[int] = field(default_factory=list)  # of its records in the batch
    claims: list[str] = field(default_factory=list)
    deltas: list[list[Delta]] = field(default_factory=list)

    def counters(self) -> set[tuple[str, str]]:
        return {(d.key, d.field) for deltas in self.deltas for d in deltas}

    def items(self) -> set[str]:
        """The counter items it updates: one transaction action each, whatever the fields."""
        return {d.key for deltas in self.deltas for d in deltas}

    def summed(self) -> dict[tuple[str, str], int]:
        totals: dict[tuple[str, str], int] = {}
        for deltas in self.deltas:
            for d in deltas:
                totals[(d.key, d.field)] = totals.get((d.key, d.field), 0) + d.amount
        return {key: amount for key, amount in totals.items() if amount}


@dataclass
class BatchOutcome:
    failures: list[str]  # sequence numbers, Lambda's itemIdentifier for DynamoDB streams
    applied_keys: set[str]
    transactions: int

    def response(self) -> dict[str, Any]:
        return {"batchItemFailures": [{"itemIdentifier": seq} for seq in self.failures]}


class StreamCounterProcessor:
    def __init__(
        self,
        store: CounterStore,
        rules: CounterRules,
        *,
        max_actions: int = MAX_TRANSACTION_ACTIONS,
        attempts: int = 4,
        backoff_seconds: float = 0.05,
        on_applied: Callable[[set[str]], None] | None = None,
        on_touched: Callable[[set[str]], None] | None = None,
        on_failed: Callable[[set[str]], None] | None = None,
    ) -> None:
        self._store = store
        # Reconciliation's marks: a batch's counter keys before they are applied (sampled by
        # the profile's share), and every key of a chunk that failed (the records Lambda retries,
        # then sends to the on-failure queue), so those counters are always looked at.
        self._on_touched = on_touched
        self._on_failed = on_failed
        self._rules = rules
        self._max_actions = max_actions
        self._attempts = attempts
        self._backoff = backoff_seconds
        self._on_applied = on_applied

    def process(self, changes: list[Change]) -> BatchOutcome:
        # An unreadable record is reported and never claimed.
        extracted = [self._rules.deltas(c) if c.readable else None for c in changes]
        failed = {index for index, deltas in enumerate(extracted) if deltas is None}
        if self._on_touched is not None:
            touched = {d.key for deltas in extracted if deltas for d in deltas}
            if touched:
                self._on_touched(touched)
        applied: set[str] = set()
        transactions = 0
        unapplied: set[str] = set()
        for chunk in self._chunks(changes, extracted):
            done, count = self._apply(chunk)
            transactions += count
            if done:
                applied |= {key for key, _ in chunk.counters()}
            else:
                failed.update(chunk.indexes)
                unapplied |= {key for key, _ in chunk.counters()}
        if unapplied and self._on_failed is not None:
            self._on_failed(unapplied)
        if applied and self._on_applied is not None:
            self._on_applied(applied)
        failures = [changes[i].sequence for i in sorted(failed)]
        return BatchOutcome(failures, applied, transactions)

    def _chunks(
        self, changes: list[Change], extracted: list[list[Delta] | None]
    ) -> Iterable[_Chunk]:
        chunk: _Chunk | None = None
        for index, deltas in enumerate(extracted):
            if not deltas:
                continue  # unreadable, or changes no counter: nothing to claim
            items = {d.key for d in deltas}
            if chunk is not None:
                actions = len(chunk.claims) + 1 + len(chunk.items() | items)
                if actions > self._max_actions:
                    yield chunk
                    chunk = None
            if chunk is None:
                chunk = _Chunk()
            chunk.indexes.append(index)
            chunk.claims.append(changes[index].event_id)
            chunk.deltas.append(deltas)
        if chunk is not None:
            yield chunk

    def _apply(self, chunk: _Chunk) -> tuple[bool, int]:
        """Apply a chunk; (True, transactions) once every record is applied or was before."""
        transactions = 0
        attempt = 0
        while chunk.claims:
            transactions += 1
            try:
                self._store.apply(chunk.claims, chunk.summed())
                return True, transactions
            except ClaimsTaken as taken:
                # Applied by an earlier delivery: drop them and apply only the rest.
                keep = [i for i in range(len(chunk.claims)) if i not in set(taken.indexes)]
                chunk = _Chunk(
                    [chunk.indexes[i] for i in keep],
                    [chunk.claims[i] for i in keep],
                    [chunk.deltas[i] for i in keep],
                )
            except TransactionRetry:
                attempt += 1
                if attempt >= self._attempts:
                    return False, transactions
                time.sleep(self._backoff * (2 ** (attempt - 1)))
        return True, transactions
