"""DynamoDB Streams records -> ``Change``s of typed events, by the table that sent them.

Each store decodes its own table's records (``decode_record`` in ``warble.dal.graph``,
``.tweets``, ``.likes``); this module only reads a record's envelope (its source table, event id
and sequence number) and dispatches. Consumers get ``Change``s and never read a raw record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from warble.events import Change, Event, UnreadableRecord

Decoder = Callable[[dict[str, Any]], list[Event]]


def table_name(record: dict[str, Any]) -> str:
    """The source table of a stream record, from its eventSourceARN."""
    arn = str(record.get("eventSourceARN", ""))
    return arn.split(":table/", 1)[-1].split("/stream/", 1)[0]


def sequence_number(record: dict[str, Any]) -> str:
    """Lambda's ``itemIdentifier`` of a DynamoDB stream record."""
    return str((record.get("dynamodb") or {}).get("SequenceNumber", ""))


class StreamDecoder:
    """Decoders by source table name: one consumer can read several tables' streams."""

    def __init__(self, decoders: Mapping[str, Decoder]) -> None:
        self._decoders = dict(decoders)

    def decode(self, record: dict[str, Any]) -> Change:
        """The record as a Change; ``readable=False`` if it cannot be decoded."""
        event_id, sequence = str(record.get("eventID", "")), sequence_number(record)
        decoder = self._decoders.get(table_name(record))
        try:
            if decoder is None:
                raise UnreadableRecord(f"no decoder for table {table_name(record)!r}")
            return Change(event_id, sequence, tuple(decoder(record)))
        except (UnreadableRecord, KeyError, TypeError, ValueError):
            return Change(event_id, sequence, (), readable=False)

    def decode_batch(self, event: dict[str, Any]) -> list[Change]:
        return [self.decode(record) for record in event.get("Records") or []]
