"""Snowflake worker-id leases in DynamoDB (WorkerLeasesTable), one item per worker id.

The rules are ``warble.ids.LeasedWorker``'s; this store makes each step one conditional write,
so the table, not a cache, decides who holds an id (a Redis failover to an empty node used to
hand a live holder's id to a second container):

- claim: PutItem if ``attribute_not_exists(pk) OR until_ms < :now`` (the claimant's clock);
- renew: UpdateItem if ``holder = :me``;
- release: UpdateItem if ``holder = :me``, ending the lease at the last millisecond the holder
  may have used (a delete would forget it, and a claimant whose clock is behind could then
  reuse those timestamps).

``expires_at`` (epoch seconds, a day after the lease's end) is the table's TTL: it only sweeps
ids no container has held for a day. Nothing here is a user's.
"""

from __future__ import annotations

from collections.abc import Callable

from pynamodb.attributes import NumberAttribute, UnicodeAttribute
from pynamodb.exceptions import PynamoDBException
from pynamodb.expressions.update import Action
from pynamodb.models import Model

from warble.dal.dynamo import bind
from warble.errors import Unavailable
from warble.settings import Settings, get_settings

CONDITION_FAILED_EXCEPTION = "ConditionalCheckFailedException"
_SWEPT_AFTER_S = 86_400


class WorkerLeaseItem(Model):
    class Meta:
        table_name = "worker-leases"  # replaced from settings on first use
        region = "us-east-1"

    pk = NumberAttribute(hash_key=True)  # the worker id, 0..65535 (0..1023 before the cutover)
    holder = UnicodeAttribute()  # a random token of the holding container
    until_ms = NumberAttribute()  # the lease's end, by its holder's clock
    expires_at = NumberAttribute()  # TTL


def _expires_at(until_ms: int) -> int:
    return until_ms // 1000 + _SWEPT_AFTER_S


class DynamoWorkerLeases:
    """``warble.ids.WorkerLeases`` on WorkerLeasesTable."""

    def __init__(self, settings: Settings | None = None) -> None:
        s = settings or get_settings()
        bind(s.aws_region, [(WorkerLeaseItem, s.worker_leases_table)])

    def claim(self, worker_id: int, holder: str, now_ms: int, until_ms: int) -> bool:
        item = WorkerLeaseItem(
            worker_id, holder=holder, until_ms=until_ms, expires_at=_expires_at(until_ms)
        )
        free = WorkerLeaseItem.pk.does_not_exist() | (WorkerLeaseItem.until_ms < now_ms)
        return _conditional(lambda: item.save(condition=free))

    def renew(self, worker_id: int, holder: str, until_ms: int) -> bool:
        return self._end_at(worker_id, holder, until_ms)

    def release(self, worker_id: int, holder: str, last_ms: int) -> None:
        self._end_at(worker_id, holder, last_ms)

    def held(self, now_ms: int) -> set[int]:
        # Read only after a claim's random tries all missed (once in 256 cold starts at half
        # the ids held): items of about 70 bytes, a page of the Scan for every 15,000 of them,
        # the lapsed ones included (the TTL sweeps an item a day after its lease ends).
        try:
            live = WorkerLeaseItem.until_ms >= now_ms
            return {int(item.pk) for item in WorkerLeaseItem.scan(live, attributes_to_get=["pk"])}
        except PynamoDBException as exc:
            raise Unavailable() from exc

    def _end_at(self, worker_id: int, holder: str, until_ms: int) -> bool:
        actions: list[Action] = [
            WorkerLeaseItem.until_ms.set(until_ms),
            WorkerLeaseItem.expires_at.set(_expires_at(until_ms)),
        ]
        mine = WorkerLeaseItem.holder == holder
        return _conditional(
            lambda: WorkerLeaseItem(worker_id).update(actions=actions, condition=mine)
        )


def _conditional(write: Callable[[], object]) -> bool:
    """One conditional write: True if applied, False if its condition failed. DynamoDB failing,
    throttling or unreachable is a 503 (``Unavailable``): no id can be vouched for then."""
    try:
        write()
    except PynamoDBException as exc:
        if exc.cause_response_code == CONDITION_FAILED_EXCEPTION:
            return False
        raise Unavailable() from exc
    return True
