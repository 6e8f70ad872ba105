"""The counters table (pynamodb): stream-maintained counters and their dedupe claims.

| pk                | attributes                                        | written by            |
|-------------------|---------------------------------------------------|-----------------------|
| U#<user_id>       | followers_count, tweet_count                      | the counter consumer  |
| T#<tweet_id>      | like_count, retweet_count, reply_count            | the counter consumer  |
| CLAIM#<event id>  | expires_at (TTL)                                  | the counter consumer  |

A stream record's claim and the counter updates it contributes to are written in one
TransactWriteItems, so a record is either applied and claimed, or neither: a redelivered record
finds its claim and changes nothing. Counter attributes are declared here, so a new counter is
one line (and a typo cannot create a stray attribute).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from pynamodb.attributes import NumberAttribute, TTLAttribute, UnicodeAttribute
from pynamodb.exceptions import DoesNotExist, TransactWriteError, UpdateError
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from warble.dal.dynamo import CONDITION_FAILED, bind, cancellation_codes, cancelled
from warble.domain.counters.ports import ClaimsTaken, TransactionRetry
from warble.settings import Settings, get_settings

TRANSACT_LIMIT = 100  # actions per TransactWriteItems (DynamoDB's limit)
BATCH_GET_LIMIT = 100


class CounterItem(Model):
    class Meta:
        table_name = "counters"  # replaced from settings on first use
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    followers_count = NumberAttribute(null=True)
    tweet_count = NumberAttribute(null=True)
    like_count = NumberAttribute(null=True)
    retweet_count = NumberAttribute(null=True)
    reply_count = NumberAttribute(null=True)


class ClaimItem(Model):
    class Meta:
        table_name = "counters"
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    expires_at = TTLAttribute()


COUNTER_FIELDS = frozenset(
    name for name, attr in CounterItem.get_attributes().items() if name != "pk"
)


class DynamoCounterStore:
    """``warble.domain.counters.ports.CounterStore`` on DynamoDB."""

    def __init__(self, claim_ttl_seconds: int, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self._claim_ttl = claim_ttl_seconds
        self._connection = bind(
            settings.aws_region,
            [(CounterItem, settings.counters_table), (ClaimItem, settings.counters_table)],
        )

    def apply(self, claims: list[str], deltas: dict[tuple[str, str], int]) -> None:
        """Claim every record and add every delta, all or nothing (one transaction)."""
        if len(claims) + len({key for key, _ in deltas}) > TRANSACT_LIMIT:
            raise ValueError("more actions than one transaction holds")
        expires = timedelta(seconds=self._claim_ttl)
        try:
            with TransactWrite(connection=self._connection) as tx:
                for claim in claims:
                    item = ClaimItem(f"CLAIM#{claim}")
                    item.expires_at = expires
                    tx.save(item, condition=ClaimItem.pk.does_not_exist())
                # One update per item, with an ADD per field: DynamoDB refuses two operations
                # on one item in a transaction (a tweet's like and reply counts, say).
                by_key: dict[str, list[tuple[str, int]]] = {}
                for (key, field), delta in deltas.items():
                    if field not in COUNTER_FIELDS:
                        raise ValueError(f"unknown counter {field!r}")
                    by_key.setdefault(key, []).append((field, delta))
                for key, changes in by_key.items():
                    tx.update(
                        CounterItem(key),
                        actions=[getattr(CounterItem, f).add(d) for f, d in changes],
                    )
        except TransactWriteError as exc:
            if not cancelled(exc):
                # Throttling, an internal error, a conflict reported as such: try again.
                raise TransactionRetry(exc.cause_response_code or "transaction failed") from exc
            # Puts come before updates in pynamodb's request: reasons[i] is claims[i].
            taken = [
                index
                for index, code in enumerate(cancellation_codes(exc)[: len(claims)])
                if code == CONDITION_FAILED
            ]
            if taken:
                raise ClaimsTaken(taken) from exc
            raise TransactionRetry(str(exc)) from exc

    def read(self, keys: list[str]) -> dict[str, dict[str, int]]:
        """Counter values by key (missing counters are 0)."""
        values: dict[str, dict[str, int]] = {key: {} for key in keys}
        if not keys:
            return values
        # Strongly consistent: a cache refilled right after the consumer's invalidation must
        # not take the value from before its write (warble.dal.cache's lease argument).
        for item in CounterItem.batch_get(list(dict.fromkeys(keys)), consistent_read=True):
            values[item.pk] = {field: int(getattr(item, field) or 0) for field in COUNTER_FIELDS}
        return values

    # ---- reconciliation -------------------------------------------------------------------
    def scan(self) -> Iterator[tuple[str, dict[str, int]]]:
        """Every counter item (``U#`` and ``T#``; claims are skipped): a full scan."""
        for item in CounterItem.scan(
            CounterItem.pk.startswith("U#") | CounterItem.pk.startswith("T#")
        ):
            yield (
                item.pk,
                {
                    field: int(value)
                    for field in COUNTER_FIELDS
                    if (value := getattr(item, field)) is not None
                },
            )

    def current(self, key: str, field: str) -> int | None:
        """One counter as stored (None: never written), read strongly consistently."""
        try:
            item = CounterItem.get(key, consistent_read=True, attributes_to_get=[field])
        except DoesNotExist:
            return None
        value = getattr(item, field)
        return None if value is None else int(value)

    def repair(self, key: str, field: str, observed: int | None, value: int) -> bool:
        """Set a counter to ``value`` only if it still holds ``observed`` (None: absent), so a
        delta the consumer applies meanwhile is never overwritten. False if it moved."""
        attribute = getattr(CounterItem, field)
        condition = attribute.does_not_exist() if observed is None else attribute == observed
        try:
            CounterItem(key).update(actions=[attribute.set(value)], condition=condition)
        except UpdateError as exc:
            if exc.cause_response_code == "ConditionalCheckFailedException":
                return False
            raise
        return True
