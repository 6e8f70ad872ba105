"""Partial batch failures of the stream consumers, as Powertools' BatchProcessor reports them."""

from __future__ import annotations

import pytest
from warble.entrypoints.streams import BatchFailed, partial_response


def _records(*sequences: str) -> list[dict]:
    return [{"eventID": f"e{s}", "dynamodb": {"SequenceNumber": s}} for s in sequences]


def test_the_records_that_raise_are_reported_by_sequence_number_and_the_rest_done():
    done = []

    def handle(record: dict) -> None:
        if record["dynamodb"]["SequenceNumber"] in ("200", "400"):
            raise RuntimeError("no")
        done.append(record["dynamodb"]["SequenceNumber"])

    answer = partial_response({"Records": _records("100", "200", "300", "400")}, handle)

    assert answer == {"batchItemFailures": [{"itemIdentifier": "200"}, {"itemIdentifier": "400"}]}
    assert done == ["100", "300"]
    assert partial_response({"Records": _records("1")}, lambda _: None) == {"batchItemFailures": []}


def test_a_batch_with_no_record_done_fails_the_invocation():
    def fail(record: dict) -> None:
        raise ValueError(record["eventID"])

    with pytest.raises(BatchFailed) as raised:
        partial_response({"Records": _records("1", "2")}, fail)
    assert [str(error) for error in raised.value.errors] == ["e1", "e2"]


@pytest.mark.parametrize("event", [{}, {"Records": []}, {"Records": "x"}])
def test_an_event_without_records_is_refused(event):
    with pytest.raises(BatchFailed):
        partial_response(event, lambda _: None)
