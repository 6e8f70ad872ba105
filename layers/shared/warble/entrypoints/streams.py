"""DynamoDB Streams readers: two per stream, each running its handlers a batch at a time.

DynamoDB Streams serves at most two readers a shard (a third is throttled), so every stream has
exactly two event source mappings, one per reader function:

- ``fanout`` (FanoutConsumerFunction): the latency-critical work, what a reader sees soon
  after a write: home timelines, following sets, blocks hashes, recent likes and retweets, and
  the counters;
- ``reactions`` (ReactionsConsumerFunction): everything else: notifications, a deleted tweet's
  cleanup, and every new reaction (hashtags, media cleanup, account deletion, the second-degree
  sets a friendship changes). A slow or poisoned handler here never holds the timeline back:
  the two readers keep their own checkpoints.

A reader runs handler groups (``Consumer``); a handler subscribes to event types and takes all
of a batch's events of those types at once, in stream order, each with the record that carried
it (``Delivery``), and answers the deliveries it could not apply:

    notifier = Consumer("Notifications")

    @notifier.batch(Followed, Liked)
    def _notify(deliveries: list[Delivery[Any]]) -> Failures:
        failed = services.notifications().notify_all([d.event for d in deliveries])
        return [deliveries[i] for i in failed]

(``@consumer.on(EventType)`` subscribes a function of one event, run event by event: an
exception fails that event's record only.) The stores decode the records
(``services.container().stream_decoder``): no handler reads a raw record.

Failures are reported as Powertools' ``BatchProcessor`` reports them: the records a handler
failed, or that no decoder can read, go back as ``batchItemFailures`` (Lambda retries from the
lowest, then sends the range to the reader's on-failure queue); a batch with no record done
fails the invocation (Lambda then bisects it). A retry delivers the failed record and every one
after it again to every handler of the reader, the ones that succeeded included: every handler
must be idempotent under redelivery.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services
from warble.events import (
    Blocked,
    Change,
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
)
from warble.skeleton import entry_point, logger, metrics

E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class Delivery(Generic[E]):
    """One event of a batch: the record that carried it (``change``: its event id, the dedupe
    claim, and its sequence number) and its position in the batch (``index``)."""

    event: E
    change: Change
    index: int


Failures = Iterable[Delivery[Any]]
BatchHandler = Callable[[list[Delivery[Any]]], Failures | None]


class BatchFailed(Exception):
    """No record of a batch was done: the invocation fails, and Lambda retries the batch (as
    Powertools' BatchProcessor raises BatchProcessingError)."""

    def __init__(self, message: str, errors: list[BaseException]) -> None:
        details = "; ".join(f"{type(error).__name__}: {error}" for error in errors)
        super().__init__(f"{message} {details}".strip())
        self.errors = errors


class HandlerFailed(Exception):
    """A handler reported an event it was given as failed (``Consumer.deliver``)."""


class Decoder(Protocol):
    def decode(self, record: dict[str, Any]) -> Change: ...


@dataclass
class _Subscription:
    types: tuple[type, ...]
    run: BatchHandler
    name: str


class Consumer:
    """A group of handlers, run by a ``Reader`` on each of its batches."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._subscriptions: list[_Subscription] = []
        self._per_event: dict[type, list[Callable[[Any], None]]] = {}

    def batch(self, *event_types: type) -> Callable[[BatchHandler], BatchHandler]:
        """Subscribe a handler of all the batch's events of these types at once."""

        def subscribe(function: BatchHandler) -> BatchHandler:
            self._subscriptions.append(
                _Subscription(event_types, function, getattr(function, "__name__", "handler"))
            )
            return function

        return subscribe

    def on(self, event_type: type[E]) -> Callable[[Callable[[E], None]], Callable[[E], None]]:
        """Subscribe a function of one event, run event by event in stream order (with the
        other ``on`` subscriptions of this group)."""

        def subscribe(function: Callable[[E], None]) -> Callable[[E], None]:
            if not self._per_event:
                self._subscriptions.append(
                    _Subscription((), self._each, f"{self.name} events")  # types: see below
                )
            self._per_event.setdefault(event_type, []).append(function)
            return function

        return subscribe

    def handlers(self) -> list[tuple[tuple[type, ...], BatchHandler, str]]:
        return [(s.types or tuple(self._per_event), s.run, s.name) for s in self._subscriptions]

    def deliver(self, event: object) -> None:
        """One event through every handler of the group, as a batch of one (tests, tools);
        raises if a handler failed it."""
        change = Change(f"deliver-{uuid.uuid4().hex}", "0", (event,))  # type: ignore[arg-type]
        for types, run, name in self.handlers():
            if not isinstance(event, types):
                continue
            if run == self._each:  # the exception itself, not a report of it
                self._run_each(event)
            elif list(run([Delivery(event, change, 0)]) or ()):
                raise HandlerFailed(f"{name} failed {event!r}")

    def _run_each(self, event: object) -> None:
        for function in self._per_event.get(type(event), ()):
            function(event)

    def _each(self, deliveries: list[Delivery[Any]]) -> Failures:
        failed: list[Delivery[Any]] = []
        for delivery in deliveries:
            try:
                self._run_each(delivery.event)
            except Exception:  # that record is reported, retried, then sent to the queue
                logger.exception(
                    "stream event failed",
                    extra={"event_id": delivery.change.event_id, "group": self.name},
                )
                failed.append(delivery)
        return failed


class Reader:
    """One stream-reading function: its handler groups, run on every batch, and its Lambda
    handler (partial batch failures)."""

    def __init__(self, name: str, *groups: Consumer, decoder: Decoder | None = None) -> None:
        self.name = name
        self.groups = groups
        self._decoder = decoder
        self.handler = entry_point()(self._handle)

    def process(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The batch through every handler; Lambda's partial batch response."""
        if not records or not isinstance(records, list):
            raise BatchFailed("Invalid DynamoDB Streams event: no records.", [])
        decoder = self._decoder or services.container().stream_decoder
        changes = [decoder.decode(record) for record in records]
        failed = {i for i, change in enumerate(changes) if not change.readable}
        errors: list[BaseException] = []
        for group in self.groups:
            for types, run, name in group.handlers():
                wanted = [
                    Delivery(event, change, index)
                    for index, change in enumerate(changes)
                    for event in change.events
                    if isinstance(event, types)
                ]
                if not wanted:
                    continue
                lost = _isolating(run, wanted, name, errors)
                failed.update(d.index for d in lost)
                metrics.add_metric(f"{group.name}Events", MetricUnit.Count, len(wanted))
                if lost:
                    metrics.add_metric(f"{group.name}Failures", MetricUnit.Count, len(lost))
        if failed and len(failed) == len(records):
            raise BatchFailed(f"All records failed processing. {len(errors)} errors:", errors)
        return {
            "batchItemFailures": [{"itemIdentifier": changes[i].sequence} for i in sorted(failed)]
        }

    def _handle(self, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        records = event.get("Records")
        answer = self.process(records)  # type: ignore[arg-type]
        metrics.add_metric(f"{self.name}Records", MetricUnit.Count, len(records or []))
        if answer["batchItemFailures"]:
            logger.warning(
                "records not applied", extra={"failures": len(answer["batchItemFailures"])}
            )
        return answer


def _isolating(
    run: BatchHandler, deliveries: list[Delivery[Any]], name: str, errors: list[BaseException]
) -> list[Delivery[Any]]:
    """The deliveries a batch handler failed. A handler that raises is run again on each half,
    in order, down to the events that raise: a poison event fails its own record, not the
    batch's (a partial failure is never bisected by Lambda). When both halves raise, the cause
    is not one event (a store is down): all of them failed, without more attempts."""
    try:
        return list(run(deliveries) or ())
    except Exception as exc:  # retried by Lambda, then its on-failure queue
        logger.exception("stream handler failed", extra={"handler": name})
        errors.append(exc)
    return _halves(run, deliveries, name, errors)


def _halves(
    run: BatchHandler, deliveries: list[Delivery[Any]], name: str, errors: list[BaseException]
) -> list[Delivery[Any]]:
    if len(deliveries) == 1:
        return deliveries
    middle = len(deliveries) // 2
    halves = (deliveries[:middle], deliveries[middle:])
    outcomes: list[list[Delivery[Any]] | None] = []
    for half in halves:
        try:
            outcomes.append(list(run(half) or ()))
        except Exception as exc:
            logger.exception("stream handler failed", extra={"handler": name})
            errors.append(exc)
            outcomes.append(None)
    if all(outcome is None for outcome in outcomes):
        return deliveries
    return [
        lost
        for half, outcome in zip(halves, outcomes, strict=True)
        for lost in (_halves(run, half, name, errors) if outcome is None else outcome)
    ]


# ---- fan-out: what readers see from memory follows the tweets, graph and likes streams --------
# Home timelines, and the following sets, blocks hashes and recent likes and retweets behind the
# relationship, the filters of blocks and mutes and the viewer's flags (the write path applied
# those already; the stream's copy makes sure none is lost). Every step is idempotent (adding a
# present entry or removing an absent one changes nothing; a membership change carries its
# version).
timeline = Consumer("Timeline")


@timeline.batch(
    TweetPosted, TweetDeleted, Followed, Unfollowed, Liked, Unliked,
    Blocked, Unblocked, Muted, Unmuted,
)  # fmt: skip
def _timelines(deliveries: list[Delivery[Any]]) -> None:
    """Reads in one round trip, writes in one pipeline, when warm; then the followers' home
    count pushed (after the writes, so every count read includes the batch's tweets)."""
    events = [d.event for d in deliveries]
    writes = services.container().write_batch()
    reached = services.timelines().apply_stream(events, writes)
    flags, graph = services.tweets().flags, services.graph()
    blocks = services.blocks() if any(isinstance(e, SHIELDS) for e in events) else None
    for event in events:
        if isinstance(event, Liked | Unliked | TweetPosted | TweetDeleted):
            flags.seen_later(writes, event)
        elif isinstance(event, Followed | Unfollowed):
            graph.follow_seen_later(writes, event)
        elif blocks is not None and isinstance(event, SHIELDS):
            blocks.seen_later(writes, event)
    writes.run()
    if reached:
        _announce(reached)


SHIELDS = (Blocked, Unblocked, Muted, Unmuted)


def _announce(reached: dict[int, list[int]]) -> None:
    """The followers' home count: one push per follower connection for the whole batch, to
    the followers the fan-out reached (warble.domain.notifications, home_posted). Best effort
    like every push: a failure is logged and retries nothing."""
    try:
        services.notifications().home_posted(reached)
    except Exception:
        logger.warning("home count not pushed", exc_info=True)


# Exactly-once counters (warble.domain.counters): a whole batch summed into few transactions,
# each record's claim inside them.
counters = Consumer("Counter")


@counters.batch(Followed, Unfollowed, TweetPosted, TweetDeleted, Liked, Unliked)
def _count(deliveries: list[Delivery[Any]]) -> Failures:
    changes = list(dict.fromkeys(d.change for d in deliveries))
    outcome = services.container().counter_processor.process(changes)
    metrics.add_metric("CounterTransactions", MetricUnit.Count, outcome.transactions)
    failed = set(outcome.failures)
    return [d for d in deliveries if d.change.sequence in failed]


# ---- reactions: everything else ------------------------------------------------------------
# A deleted tweet's retweets and likes go with it. Idempotent: deleting what is gone is a no-op.
# Each deleted tweet's likes are a Query of its own partition and its retweets one of its own
# index key (no Query spans partitions), so a batch's purges run side by side.
cleanup = Consumer("Cleanup")
_PURGES = 8
_purge_pool: list[ThreadPoolExecutor] = []


@cleanup.batch(TweetDeleted)
def _purge(deliveries: list[Delivery[Any]]) -> Failures:
    if not _purge_pool:
        _purge_pool.append(ThreadPoolExecutor(_PURGES, thread_name_prefix="purge"))
    tweets = services.tweets()

    def purge(delivery: Delivery[Any]) -> int | None:
        try:
            return tweets.purge(delivery.event.tweet_id)
        except Exception:  # that record is retried
            logger.exception("purge failed", extra={"tweet_id": delivery.event.tweet_id})
            return None

    done = list(_purge_pool[0].map(purge, deliveries))
    metrics.add_metric("CleanedUp", MetricUnit.Count, sum(n or 0 for n in done))
    return [d for d, n in zip(deliveries, done, strict=True) if n is None]


# A like reads its tweet before its write (one item cannot take every like of a viral tweet in
# its transactions: warble.dal.likes), so one can commit just after the tweet's delete and its
# purge: the batch's liked tweets are read again (one BatchGetItem), and the likes of gone ones
# unliked. Idempotent: an unlike of what is gone is a no-op.
@cleanup.batch(Liked)
def _orphaned_likes(deliveries: list[Delivery[Any]]) -> Failures:
    removed = services.likes().orphans_removed([d.event for d in deliveries])
    if removed:
        metrics.add_metric("OrphanedLikesRemoved", MetricUnit.Count, removed)
    return []


# A tweet's media (docs/media.md): kept once a tweet shows them (the lifecycle rule's tag goes),
# deleted with it; a batch's tweets at once (one DeleteObjects, one BatchWriteItem). Idempotent.
media = Consumer("Media")


@media.batch(TweetPosted)
def _keep_media(deliveries: list[Delivery[Any]]) -> Failures:
    shown = [d.event for d in deliveries if d.event.media_keys]
    if shown:
        services.media().attached(shown)
    return []


@media.batch(TweetDeleted)
def _forget_media(deliveries: list[Delivery[Any]]) -> Failures:
    gone = [d.event for d in deliveries if d.event.media_ids]
    if gone:
        services.media().forget(gone)
        metrics.add_metric("MediaDeleted", MetricUnit.Count, sum(len(e.media_ids) for e in gone))
    return []


# Hashtag timelines and trends (docs/search.md): a batch's tag uses folded, routed in one Redis
# pipeline, written in BatchWriteItem calls and counted in one script call. Idempotent: a put
# writes the same item, a delete of what is gone is a no-op, a trend counts a use once.
hashtags = Consumer("Hashtags")


@hashtags.batch(TweetPosted, TweetDeleted)
def _hashtags(deliveries: list[Delivery[Any]]) -> Failures:
    written = services.hashtags().tweets_changed([d.event for d in deliveries])
    metrics.add_metric("HashtagWrites", MetricUnit.Count, written)
    return []


# Notifications from the graph, tweets, likes and matches streams, a batch at a time. Exactly
# once by construction (warble.domain.notifications): a redelivered record finds the
# notification's dedupe item and its id already counted.
notifier = Consumer("Notifications")


@notifier.batch(Followed, Liked, TweetPosted, Matched)
def _notify(deliveries: list[Delivery[Any]]) -> Failures:
    outcome = services.notifications().notify_all([d.event for d in deliveries])
    if outcome.created:
        metrics.add_metric("NotificationsCreated", MetricUnit.Count, outcome.created)
    if outcome.capped:
        metrics.add_metric("NotificationsCapped", MetricUnit.Count, outcome.capped)
    return [deliveries[i] for i in sorted(outcome.failed)]


# Second-degree sets (warble.domain.graph.degrees): a friendship that began or ended drops the
# cached sets it changes (both ends' and their friends'), read again when next asked. The graph
# mapping passes follow INSERTs and the REMOVEs of friends' edges. Idempotent: a drop again.
degrees = Consumer("Degrees")


@degrees.batch(Followed, Unfollowed)
def _second_degrees(deliveries: list[Delivery[Any]]) -> Failures:
    dropped = services.graph().friendships_changed([d.event for d in deliveries])
    if dropped:
        metrics.add_metric("SecondDegreeSetsDropped", MetricUnit.Count, dropped)
    return []


# ---- the two readers of every stream (template.yaml: FanoutConsumerFunction and
# ReactionsConsumerFunction; each mapping's FilterCriteria passes what its groups need) ---------
fanout = Reader("Fanout", timeline, counters)
reactions = Reader("Reactions", notifier, cleanup, media, hashtags, degrees)
