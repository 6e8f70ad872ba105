"""DynamoDB Streams consumers: typed events in, partial batch failures out.

A consumer subscribes functions to event types (``warble.events``); the stores decode the
records (``services.container().stream_decoder``), so no consumer reads a raw record:

    fanout = Consumer("timeline")

    @fanout.on(TweetPosted)
    def _posted(event: TweetPosted) -> None:
        services.timelines().tweet_created(event.author_id, event.tweet_id)

    handler = fanout.handler   # functions/<name>/app.py exports it; template.yaml wires the stream

Records run one by one with partial batch failures, as Powertools' ``BatchProcessor`` runs them
(``partial_response``): a record that cannot be decoded, or whose handler raises, is reported and
retried by Lambda (then sent to the function's on-failure queue); the others are done. Handlers
must be idempotent (a record can come twice). The counter consumer is the exception to
per-record work: it sums a whole batch into few transactions (``warble.domain.counters``), so it
has a handler of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services
from warble.events import (
    Blocked,
    Event,
    Followed,
    Liked,
    Matched,
    Muted,
    TweetDeleted,
    TweetPosted,
    Unblocked,
    Unfollowed,
    Unliked,
    Unmuted,
    UnreadableRecord,
)
from warble.skeleton import entry_point, logger, metrics

E = TypeVar("E")


class BatchFailed(Exception):
    """No record of a batch was done: the invocation fails, and Lambda retries the batch (as
    Powertools' BatchProcessor raises BatchProcessingError)."""

    def __init__(self, message: str, errors: list[BaseException]) -> None:
        details = "; ".join(f"{type(error).__name__}: {error}" for error in errors)
        super().__init__(f"{message} {details}".strip())
        self.errors = errors


def partial_response(
    event: dict[str, Any], record_handler: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """Powertools' ``process_partial_response`` for DynamoDB Streams, without importing its
    batch utility and event data classes at a cold start: each record through
    ``record_handler``; the ones that raise are reported by sequence number (Lambda retries
    them); a batch with no record done raises; an event without records is refused."""
    records = event.get("Records", [])
    if not records or not isinstance(records, list):
        raise BatchFailed("Invalid DynamoDB Streams event: no records.", [])
    failed: list[dict[str, Any]] = []
    errors: list[BaseException] = []
    for record in records:
        try:
            record_handler(record)
        except Exception as exc:  # reported, retried by Lambda, then its on-failure queue
            errors.append(exc)
            failed.append(record)
    if failed and len(failed) == len(records):
        raise BatchFailed(f"All records failed processing. {len(errors)} errors:", errors)
    return {
        "batchItemFailures": [
            {"itemIdentifier": record["dynamodb"]["SequenceNumber"]} for record in failed
        ]
    }


class Consumer:
    """Event subscriptions of one stream-consuming function, and its Lambda handler.

    ``on`` subscribes a function to one event at a time; ``on_batch`` subscribes one to all of
    a batch's events of some types at once, in stream order, after the per-event subscribers
    (STYLE.md item 13: a batch's work in a constant number of round trips). If it raises, every
    record that carried one of its events is reported failed (Lambda retries them: every
    subscriber must be idempotent)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._subscribers: dict[type, list[Callable[[Any], None]]] = {}
        self._batch_subscribers: list[tuple[tuple[type, ...], Callable[[list[Any]], None]]] = []
        self.handler = entry_point()(self._handle)

    def on_batch(
        self, *event_types: type
    ) -> Callable[[Callable[[list[Any]], None]], Callable[[list[Any]], None]]:
        def subscribe(function: Callable[[list[Any]], None]) -> Callable[[list[Any]], None]:
            self._batch_subscribers.append((event_types, function))
            return function

        return subscribe

    def on(self, event_type: type[E]) -> Callable[[Callable[[E], None]], Callable[[E], None]]:
        def subscribe(function: Callable[[E], None]) -> Callable[[E], None]:
            self._subscribers.setdefault(event_type, []).append(function)
            return function

        return subscribe

    def deliver(self, event: Event) -> None:
        for function in self._subscribers.get(type(event), ()):
            function(event)

    def _record(self, record: dict[str, Any], done: list[tuple[str, Event]]) -> None:
        change = services.container().stream_decoder.decode(record)
        logger.set_correlation_id(change.event_id)
        if not change.readable:
            raise UnreadableRecord(change.sequence)
        for event in change.events:
            self.deliver(event)
        done.extend((change.sequence, event) for event in change.events)

    def _deliver_batch(
        self, records: list[dict[str, Any]], done: list[tuple[str, Event]], answer: dict[str, Any]
    ) -> None:
        """The batch subscribers, each with its events of the records done; a failure fails
        those records."""
        failed = {item["itemIdentifier"] for item in answer["batchItemFailures"]}
        for types, function in self._batch_subscribers:
            mine = [(sequence, e) for sequence, e in done if isinstance(e, types)]
            if not mine:
                continue
            try:
                function([e for _, e in mine])
            except Exception as exc:  # its records are retried by Lambda, as a record's are
                logger.warning("batch subscriber failed", exc_info=exc)
                failed.update(sequence for sequence, _ in mine)
        answer["batchItemFailures"] = [
            {"itemIdentifier": sequence}
            for sequence in dict.fromkeys(
                record["dynamodb"]["SequenceNumber"] for record in records
            )
            if sequence in failed
        ]

    def _handle(self, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        done: list[tuple[str, Event]] = []
        answer = partial_response(event, lambda record: self._record(record, done))
        if self._batch_subscribers:
            records = event.get("Records") or []
            self._deliver_batch(records, done, answer)
            if records and len(answer["batchItemFailures"]) == len(records):
                raise BatchFailed("All records failed processing.", [])
        failures = len(answer["batchItemFailures"])
        metrics.add_metric(f"{self.name}Records", MetricUnit.Count, len(event.get("Records", [])))
        if failures:
            metrics.add_metric(f"{self.name}Failures", MetricUnit.Count, failures)
        return dict(answer)


# ---- TimelineFunction: what readers see from memory follows the tweets, graph and likes ------
# streams: home timelines, and the following sets, blocks hashes and recent likes and retweets
# behind the relationship, the filters of blocks and mutes and the viewer's flags (the write
# path applied those already; the stream's copy makes sure none is lost). Every step is
# idempotent (adding a present entry or removing an absent one changes nothing; a membership
# change carries its version).
timeline = Consumer("Timeline")


@timeline.on(TweetPosted)
def _fan_out(event: TweetPosted) -> None:
    services.timelines().tweet_created(event.author_id, event.tweet_id)
    services.tweets().flags.tweet_seen(event)


@timeline.on(TweetDeleted)
def _withdraw(event: TweetDeleted) -> None:
    services.timelines().tweet_deleted(event.author_id, event.tweet_id)
    services.tweets().flags.tweet_seen(event)


@timeline.on(Followed)
def _backfill(event: Followed) -> None:
    services.timelines().followed(event.follower, event.followee)
    services.graph().follow_seen(event)


@timeline.on(Unfollowed)
def _drop_author(event: Unfollowed) -> None:
    services.timelines().unfollowed(event.follower, event.followee)
    services.graph().follow_seen(event)


@timeline.on(Liked)
def _liked(event: Liked) -> None:
    services.tweets().flags.like_seen(event)


@timeline.on(Unliked)
def _unliked(event: Unliked) -> None:
    services.tweets().flags.like_seen(event)


@timeline.on(Blocked)
def _blocked(event: Blocked) -> None:
    services.blocks().seen(event)


@timeline.on(Unblocked)
def _unblocked(event: Unblocked) -> None:
    services.blocks().seen(event)


@timeline.on(Muted)
def _muted(event: Muted) -> None:
    services.blocks().seen(event)


@timeline.on(Unmuted)
def _unmuted(event: Unmuted) -> None:
    services.blocks().seen(event)


@timeline.on_batch(TweetPosted, TweetDeleted)
def _hashtags(events: list[TweetPosted | TweetDeleted]) -> None:
    """Hashtag timelines and trends: the batch's tag uses in a few round trips."""
    metrics.add_metric(
        "HashtagWrites", MetricUnit.Count, services.hashtags().tweets_changed(events)
    )


# ---- TweetCleanupFunction: a deleted tweet's retweets and likes go with it ------------------
cleanup = Consumer("Cleanup")


@cleanup.on(TweetDeleted)
def _purge(event: TweetDeleted) -> None:
    metrics.add_metric("CleanedUp", MetricUnit.Count, services.tweets().purge(event.tweet_id))


# ---- NotificationsConsumerFunction: notifications from the graph, tweets and likes streams ----
# Exactly once by construction (warble.domain.notifications): a redelivered record finds the
# notification's dedupe item and its id already counted.
notifier = Consumer("Notifications")


def _notify(event: object) -> None:
    outcome = services.notifications().notify(event)
    if outcome.created:
        metrics.add_metric("NotificationsCreated", MetricUnit.Count, outcome.created)
    if outcome.capped:
        metrics.add_metric("NotificationsCapped", MetricUnit.Count, outcome.capped)


for _source in (Followed, Liked, TweetPosted, Matched):
    notifier.on(_source)(_notify)


# ---- CounterConsumerFunction: exactly-once counters (a whole batch at a time) ----------------
@entry_point()
def counters(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Stream records -> counters; answers with partial batch failures."""
    outcome = services.container().count_batch(event)
    metrics.add_metric("CounterRecords", MetricUnit.Count, len(event.get("Records") or []))
    metrics.add_metric("CounterTransactions", MetricUnit.Count, outcome.transactions)
    if outcome.failures:
        logger.warning("records not applied", extra={"failures": len(outcome.failures)})
        metrics.add_metric("CounterFailures", MetricUnit.Count, len(outcome.failures))
    return outcome.response()
