"""Reading one DynamoDB stream shard from moto, in order, from a checkpoint.

A ShardReader owns the shard iterator and the checkpoint (the last sequence number processed or
sent to failure). `rewind` forgets what was read past the checkpoint, as a restarted Lambda
poller would, and the next `read` starts again right after it, so nothing is lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infra.local.stream_records import sequence, to_lambda_record

__all__ = ["ShardReader"]

# GetRecords returns at most 1,000 records (the DynamoDB Streams API limit).
GET_RECORDS_LIMIT = 1000


@dataclass(eq=False)
class ShardReader:
    """One shard of one stream, read strictly in order; records come in Lambda's shape."""

    client: Any  # a dynamodbstreams client
    stream_arn: str
    shard_id: str
    initial_position: str  # TRIM_HORIZON | LATEST
    checkpoint: int | None = None  # last sequence number processed or sent to failure
    first_seen: int | None = None  # first sequence number ever read (before any checkpoint)
    read_upto: int | None = None  # last sequence number read (filtered records included)
    safe_iterator: str | None = None  # positioned before anything unread, while nothing is read
    iterator: str | None = None

    def open(self) -> None:
        """Fix the starting position now, so LATEST means "when the pollers started"."""
        self.iterator = self._get_iterator(self.initial_position)
        self.safe_iterator = self.iterator

    def rewind(self) -> None:
        """Forget what was read but not checkpointed; the next read resumes after the checkpoint."""
        self.iterator = None

    def read(self) -> list[dict[str, Any]]:
        """One GetRecords call: the next records of the shard (possibly none)."""
        if self.iterator is None:
            self.iterator = self._resume_iterator()
        response = self.client.get_records(ShardIterator=self.iterator, Limit=GET_RECORDS_LIMIT)
        records = [to_lambda_record(raw, self.stream_arn) for raw in response.get("Records") or []]
        self.iterator = response.get("NextShardIterator")
        if self.iterator is None:
            # moto's shards never close or split, so shard lineage is not emulated: say so
            # rather than re-read from the checkpoint (the poller logs this and retries).
            raise RuntimeError(f"{self.stream_arn} {self.shard_id}: the shard closed")
        for record in records:
            number = sequence(record)
            if self.first_seen is None:
                self.first_seen = number
            self.read_upto = number
        if not records and self.first_seen is None:
            self.safe_iterator = self.iterator
        return records

    def commit(self, record: dict[str, Any]) -> None:
        """Move the checkpoint to `record` (never backwards)."""
        number = sequence(record)
        if self.checkpoint is None or number > self.checkpoint:
            self.checkpoint = number

    def skip_read(self) -> None:
        """Checkpoint everything read so far (records the filters dropped, nothing pending)."""
        if self.read_upto is not None and (
            self.checkpoint is None or self.read_upto > self.checkpoint
        ):
            self.checkpoint = self.read_upto

    def _get_iterator(self, position: str, number: int | None = None) -> str:
        kwargs: dict[str, Any] = {
            "StreamArn": self.stream_arn,
            "ShardId": self.shard_id,
            "ShardIteratorType": position,
        }
        if number is not None:
            kwargs["SequenceNumber"] = str(number)
        return str(self.client.get_shard_iterator(**kwargs)["ShardIterator"])

    def _resume_iterator(self) -> str:
        if self.checkpoint is not None:
            return self._get_iterator("AFTER_SEQUENCE_NUMBER", self.checkpoint)
        if self.first_seen is not None:
            return self._get_iterator("AT_SEQUENCE_NUMBER", self.first_seen)
        if self.safe_iterator is not None:
            return self.safe_iterator
        return self._get_iterator(self.initial_position)
