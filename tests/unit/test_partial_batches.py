"""A stream reader's partial batch failures, as Powertools' BatchProcessor reports them: records
a handler failed, or that cannot be decoded, go back by sequence number; a batch with no record
done fails the invocation; every handler gets its types' events in stream order."""

from __future__ import annotations

from typing import Any

import pytest
from warble.entrypoints.streams import BatchFailed, Consumer, Delivery, Reader
from warble.events import Change, Followed, Liked, Unfollowed


class Decoder:
    """Records carry their event in the test: ``{"event": ...}``; ``None`` is unreadable."""

    def decode(self, record: dict[str, Any]) -> Change:
        seq = record["dynamodb"]["SequenceNumber"]
        event = record.get("event")
        if event is None:
            return Change(f"e{seq}", seq, (), readable=False)
        return Change(f"e{seq}", seq, (event,))


def _records(*events: Any) -> list[dict[str, Any]]:
    return [
        {"eventID": f"e{i}", "dynamodb": {"SequenceNumber": str(100 * (i + 1))}, "event": event}
        for i, event in enumerate(events)
    ]


def test_failed_and_unreadable_records_are_reported_and_the_rest_done():
    seen: list[Any] = []
    group = Consumer("G")

    @group.batch(Followed, Unfollowed)
    def _follows(deliveries: list[Delivery[Any]]) -> list[Delivery[Any]]:
        seen.append([type(d.event).__name__ for d in deliveries])
        return [d for d in deliveries if d.event.follower == 2]

    @group.on(Liked)
    def _liked(event: Liked) -> None:
        if event.user_id == 9:
            raise RuntimeError("no")
        seen.append(event.user_id)

    reader = Reader("R", group, decoder=Decoder())
    records = _records(
        Followed(1, 5), Liked(9, 1), Unfollowed(2, 5), None, Liked(3, 1), Followed(1, 6)
    )

    answer = reader.process(records)

    assert answer == {"batchItemFailures": [{"itemIdentifier": s} for s in ("200", "300", "400")]}
    # the batch handler had all its events at once, in stream order; the other one by one
    assert seen == [["Followed", "Unfollowed", "Followed"], 3]


def test_a_handler_that_raises_fails_its_records_only():
    group, other = Consumer("G"), Consumer("O")
    done: list[int] = []

    @group.batch(Followed)
    def _boom(deliveries: list[Delivery[Any]]) -> None:
        raise RuntimeError("store down")

    @other.batch(Liked)
    def _fine(deliveries: list[Delivery[Any]]) -> None:
        done.extend(d.index for d in deliveries)

    answer = Reader("R", group, other, decoder=Decoder()).process(
        _records(Liked(1, 1), Followed(1, 2), Liked(2, 1))
    )

    assert answer == {"batchItemFailures": [{"itemIdentifier": "200"}]}
    assert done == [0, 2]


def test_a_batch_with_no_record_done_fails_the_invocation():
    group = Consumer("G")

    @group.on(Followed)
    def _fail(event: Followed) -> None:
        raise ValueError(str(event.follower))

    with pytest.raises(BatchFailed):
        Reader("R", group, decoder=Decoder()).process(_records(Followed(1, 2), None))


@pytest.mark.parametrize("event", [{}, {"Records": []}, {"Records": "x"}])
def test_an_event_without_records_is_refused(event):
    with pytest.raises(BatchFailed):
        Reader("R", Consumer("G"), decoder=Decoder()).process(event.get("Records"))


def test_a_batch_handler_that_raises_is_split_down_to_its_poison_event():
    group = Consumer("G")
    runs: list[list[int]] = []

    @group.batch(Followed)
    def _follows(deliveries: list[Delivery[Any]]) -> None:
        runs.append([d.event.follower for d in deliveries])
        if any(d.event.follower == 3 for d in deliveries):
            raise RuntimeError("poison")

    answer = Reader("R", group, decoder=Decoder()).process(
        _records(*(Followed(i, 99) for i in range(6)))
    )

    # only the poison event's record fails; the others were applied (in stream order)
    assert answer == {"batchItemFailures": [{"itemIdentifier": "400"}]}
    assert runs == [[0, 1, 2, 3, 4, 5], [0, 1, 2], [3, 4, 5], [3], [4, 5]]


def test_when_both_halves_fail_too_every_record_fails_without_more_attempts():
    group = Consumer("G")
    runs: list[int] = []

    @group.batch(Followed)
    def _down(deliveries: list[Delivery[Any]]) -> None:
        runs.append(len(deliveries))
        raise ConnectionError("store down")

    with pytest.raises(BatchFailed):
        Reader("R", group, decoder=Decoder()).process(_records(*(Followed(i, 9) for i in range(8))))
    assert runs == [8, 4, 4]  # the batch, then each half once
