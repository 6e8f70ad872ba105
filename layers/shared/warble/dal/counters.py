"""The counters table (pynamodb): stream-maintained counters and their dedupe claims.

| pk               | attributes                                           | written by           |
|------------------|------------------------------------------------------|----------------------|
| U#<user_id>      | followers_count, tweet_count; sub_items (n, if hot)  | the counter consumer |
| T#<tweet_id>     | like_count, retweet_count, reply_count; sub_items    | the counter consumer |
| U#<user_id>#<k>  | followers_count, tweet_count: part of U#<user_id>    | the counter consumer |
| T#<tweet_id>#<k> | like_count, retweet_count, reply_count: of T#<tweet> | the counter consumer |
| CLAIM#<event id> | expires_at (TTL)                                     | the counter consumer |

A stream record's claim and the counter updates it contributes to are written in one
TransactWriteItems, so a record is either applied and claimed, or neither: a redelivered record
finds its claim and changes nothing. Counter attributes are declared here, so a new counter is
one line (and a typo cannot create a stray attribute).

**Hot counters.** One item takes 1,000 write units a second, 500 transactional writes: a viral
tweet's likes, on every shard of the likes stream, make a counter transaction per shard's batch,
more than that (docs/capacity.md, "Streams at the peak"). When a transaction is cancelled because
its update of a counter's item conflicted with another transaction or was throttled, the store
makes the counter hot: it sets the item's ``sub_items`` to n (``counter_hot_sub_items``; set
once, ``if_not_exists``, so every container agrees on it) and from then on adds the counter's
deltas to one of ``<key>#0`` .. ``<key>#<n-1>``, drawn at random per transaction (a retry draws
again), in the same transaction as the claims: exactly once as before. A counter's value is its
item plus its sub-items. ``sub_items`` is written before any sub-item is, so a reader that finds
it absent has nothing more to read, and one that finds it reads the sub-items after it: a read
costs one more BatchGetItem only when a hot counter is among its keys. Each container learns from
its own conflicts which counters are hot (it remembers ``HOT_REMEMBERED``); one that has
forgotten writes the main item, which still counts.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import Any

from pynamodb.attributes import NumberAttribute, TTLAttribute, UnicodeAttribute
from pynamodb.exceptions import DoesNotExist, TransactWriteError, UpdateError
from pynamodb.expressions.condition import Condition
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from warble.dal import erasing
from warble.dal.dynamo import CONDITION_FAILED, bind, cancellation_codes, cancelled
from warble.domain.counters.ports import ClaimsTaken, TransactionRetry
from warble.settings import Settings, get_settings

TRANSACT_LIMIT = 100  # actions per TransactWriteItems (DynamoDB's limit)
BATCH_GET_LIMIT = 100
SUB_ITEMS = "sub_items"  # the attribute: how many sub-items a hot counter has
HOT_REMEMBERED = 10_000  # hot counters a container remembers (the oldest are forgotten)
# Cancellation reasons that say the item itself is too busy (DynamoDB's TransactWriteItems).
HOT_CODES = frozenset({"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"})


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
    sub_items = NumberAttribute(null=True)


class ClaimItem(Model):
    class Meta:
        table_name = "counters"
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    expires_at = TTLAttribute()


COUNTER_FIELDS = frozenset(
    name for name in CounterItem.get_attributes() if name not in ("pk", SUB_ITEMS)
)


def sub_keys(key: str, n: int) -> list[str]:
    """The keys of a hot counter's ``n`` sub-items."""
    return [f"{key}#{k}" for k in range(n)]


def main_key(pk: str) -> str:
    """The counter an item counts for: a sub-item's ``<key>#<k>`` is ``<key>``'s."""
    head, _, tail = pk.rpartition("#")
    return head if head.count("#") == 1 and tail.isdigit() else pk


def _stored(item: CounterItem) -> dict[str, int]:
    return {f: int(value) for f in COUNTER_FIELDS if (value := getattr(item, f)) is not None}


class DynamoCounterStore:
    """``warble.domain.counters.ports.CounterStore`` on DynamoDB."""

    def __init__(
        self,
        claim_ttl_seconds: int,
        settings: Settings | None = None,
        *,
        rng: random.Random | None = None,
    ) -> None:
        settings = settings or get_settings()
        self._claim_ttl = claim_ttl_seconds
        self._sub_items = settings.counter_hot_sub_items
        self._rng = rng or random.Random()
        self._hot: dict[str, int] = {}  # counter key -> its sub-items, as its item says
        self._connection = bind(
            settings.aws_region,
            [(CounterItem, settings.counters_table), (ClaimItem, settings.counters_table)],
        )

    def apply(self, claims: list[str], deltas: dict[tuple[str, str], int]) -> None:
        """Claim every record and add every delta, all or nothing (one transaction)."""
        if len(claims) + len({key for key, _ in deltas}) > TRANSACT_LIMIT:
            raise ValueError("more actions than one transaction holds")
        # One update per item, with an ADD per field: DynamoDB refuses two operations on one
        # item in a transaction (a tweet's like and reply counts, say).
        by_key: dict[str, list[tuple[str, int]]] = {}
        for (key, field), delta in deltas.items():
            if field not in COUNTER_FIELDS:
                raise ValueError(f"unknown counter {field!r}")
            by_key.setdefault(key, []).append((field, delta))
        # A hot counter's delta goes to one of its sub-items, drawn for this transaction.
        written = {key: self._item_for(key) for key in by_key}
        expires = timedelta(seconds=self._claim_ttl)
        try:
            with TransactWrite(connection=self._connection) as tx:
                for claim in claims:
                    item = ClaimItem(f"CLAIM#{claim}")
                    item.expires_at = expires
                    tx.save(item, condition=ClaimItem.pk.does_not_exist())
                for key, changes in by_key.items():
                    tx.update(
                        CounterItem(written[key]),
                        actions=[getattr(CounterItem, f).add(d) for f, d in changes],
                    )
        except TransactWriteError as exc:
            if not cancelled(exc):
                # Throttling, an internal error, a conflict reported as such: try again.
                raise TransactionRetry(exc.cause_response_code or "transaction failed") from exc
            # Puts come before updates in pynamodb's request: reasons[i] is claims[i], then
            # the counters' updates in by_key's order.
            codes = cancellation_codes(exc)
            busy = [
                key
                for key, code in zip(by_key, codes[len(claims) :], strict=False)
                if code in HOT_CODES and written[key] == key
            ]
            if busy:
                self._make_hot(busy)
            taken = [
                index for index, code in enumerate(codes[: len(claims)]) if code == CONDITION_FAILED
            ]
            if taken:
                raise ClaimsTaken(taken) from exc
            raise TransactionRetry(str(exc)) from exc

    def _item_for(self, key: str) -> str:
        n = self._hot.get(key)
        return key if n is None else f"{key}#{self._rng.randrange(n)}"

    def _make_hot(self, keys: list[str]) -> None:
        """Set each counter's ``sub_items`` (kept if set: another container's n stands) and
        remember it, so that the next transaction writes a sub-item."""
        for key in keys:
            item = CounterItem(key)
            try:
                item.update(
                    actions=[CounterItem.sub_items.set(CounterItem.sub_items | self._sub_items)]
                )
            except UpdateError as exc:
                # The item is busy, as the transaction found: the next conflict tries again.
                raise TransactionRetry(exc.cause_response_code or "busy counter") from exc
            if len(self._hot) >= HOT_REMEMBERED:
                del self._hot[next(iter(self._hot))]
            self._hot[key] = int(item.sub_items or self._sub_items)

    def read(self, keys: list[str]) -> dict[str, dict[str, int]]:
        """Counter values by key (missing counters are 0), hot ones with their sub-items."""
        values: dict[str, dict[str, int]] = {key: {} for key in keys}
        if not keys:
            return values
        # Strongly consistent: a cache refilled right after the consumer's invalidation must
        # not take the value from before its write (warble.dal.cache's lease argument). The
        # sub-items are read after the items that name them.
        subs: list[str] = []
        for item in CounterItem.batch_get(list(dict.fromkeys(keys)), consistent_read=True):
            values[item.pk] = {field: int(getattr(item, field) or 0) for field in COUNTER_FIELDS}
            subs += sub_keys(item.pk, int(item.sub_items or 0))
        if subs:
            for item in CounterItem.batch_get(subs, consistent_read=True):
                total = values[main_key(item.pk)]
                for field, value in _stored(item).items():
                    total[field] += value
        return values

    # ---- reconciliation -------------------------------------------------------------------
    def scan(self) -> Iterator[tuple[str, dict[str, int]]]:
        """Every counter (``U#`` and ``T#``; claims are skipped), a hot one summed with its
        sub-items (yielded last, once): a full scan."""
        hot: dict[str, dict[str, int]] = {}
        for item in CounterItem.scan(
            CounterItem.pk.startswith("U#") | CounterItem.pk.startswith("T#")
        ):
            key = main_key(item.pk)
            if key == item.pk and item.sub_items is None:
                yield key, _stored(item)
                continue
            total = hot.setdefault(key, {})
            for field, value in _stored(item).items():
                total[field] = total.get(field, 0) + value
        yield from hot.items()

    def keys_page(self, start: str | None, limit: int) -> tuple[list[str], str | None]:
        """One page of a Scan of the counters (claims skipped, a hot counter's sub-items named
        by their counter): at most ``limit`` items read from ``start`` (an item's key, or the
        beginning), and where the next page starts (None: the table's end)."""
        pages = CounterItem.scan(
            CounterItem.pk.startswith("U#") | CounterItem.pk.startswith("T#"),
            page_size=limit,
            last_evaluated_key={"pk": {"S": start}} if start else None,
            attributes_to_get=["pk"],
        ).page_iter
        page = next(iter(pages), None) or {}  # one Scan call: the filter may keep none of it
        found = [main_key(str(raw["pk"]["S"])) for raw in page.get("Items", [])]
        last = page.get("LastEvaluatedKey")
        return list(dict.fromkeys(found)), str(last["pk"]["S"]) if last else None

    def current(self, key: str, field: str) -> int | None:
        """One counter as stored (None: never written), read strongly consistently."""
        main, subs = self._observe(key, field)
        return _total(main, subs)

    def repair(self, key: str, field: str, observed: int | None, value: int) -> bool:
        """Set a counter to ``value`` only if it still holds ``observed`` (None: absent), so a
        delta the consumer applies meanwhile is never overwritten. False if it moved."""
        main, subs = self._observe(key, field)
        if _total(main, subs) != observed:
            return False
        attribute = getattr(CounterItem, field)

        def unchanged(seen: int | None) -> Condition:
            return attribute.does_not_exist() if seen is None else attribute == seen

        if not subs:
            condition = unchanged(main) & CounterItem.sub_items.does_not_exist()
            try:
                CounterItem(key).update(actions=[attribute.set(value)], condition=condition)
            except UpdateError as exc:
                if exc.cause_response_code == "ConditionalCheckFailedException":
                    return False
                raise
            return True
        # A hot counter: its item takes the difference, if none of its sub-items moved.
        rest = sum(seen or 0 for seen in subs.values())
        try:
            with TransactWrite(connection=self._connection) as tx:
                for sub, seen in subs.items():
                    tx.condition_check(CounterItem, sub, condition=unchanged(seen))
                tx.update(
                    CounterItem(key), actions=[attribute.set(value - rest)],
                    condition=unchanged(main),
                )  # fmt: skip
        except TransactWriteError as exc:
            if cancelled(exc) and CONDITION_FAILED in cancellation_codes(exc):
                return False
            raise
        return True

    def _observe(self, key: str, field: str) -> tuple[int | None, dict[str, int | None]]:
        """A counter's field in its item and in each of its sub-items (none: not hot)."""
        try:
            item = CounterItem.get(key, consistent_read=True, attributes_to_get=[field, SUB_ITEMS])
        except DoesNotExist:
            return None, {}
        main = getattr(item, field)
        subs: dict[str, int | None] = dict.fromkeys(sub_keys(key, int(item.sub_items or 0)))
        if subs:
            for sub in CounterItem.batch_get(
                list(subs), consistent_read=True, attributes_to_get=["pk", field]
            ):
                found = getattr(sub, field)
                subs[sub.pk] = None if found is None else int(found)
        return (None if main is None else int(main)), subs


def _total(main: int | None, subs: dict[str, int | None]) -> int | None:
    present = [v for v in (main, *subs.values()) if v is not None]
    return sum(present) if present else None


class CounterErasure:
    """Counter items read and deleted whole, with a hot counter's sub-items (the account
    deletion, ``warble.dal.erasure``)."""

    def __init__(self, items: erasing.Items) -> None:
        self._items = items
        self._table = items.settings.counters_table

    def read(
        self, keys: Sequence[str], fields: Sequence[str]
    ) -> dict[str, tuple[dict[str, int], list[str]]]:
        """Each counter item found among ``keys``: its ``fields`` with its sub-items' added (a
        hot counter's deltas are spread over them), and their keys. One BatchGetItem a hundred,
        and one more a hundred sub-items of the hot ones."""
        table, items = self._table, self._items
        found: dict[str, tuple[dict[str, int], list[str]]] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), BATCH_GET_LIMIT):
            chunk = [{"pk": {"S": k}} for k in unique[start : start + BATCH_GET_LIMIT]]
            for item in items.batch_get(table, chunk, ", ".join(("pk", SUB_ITEMS, *fields))):
                pk = erasing.text(item, "pk")
                counts = {name: erasing.num(item, name) or 0 for name in fields}
                found[pk] = (counts, sub_keys(pk, erasing.num(item, SUB_ITEMS) or 0))
        subs = [sub for _, hot in found.values() for sub in hot]
        for start in range(0, len(subs), BATCH_GET_LIMIT):
            chunk = [{"pk": {"S": k}} for k in subs[start : start + BATCH_GET_LIMIT]]
            for item in items.batch_get(table, chunk, ", ".join(("pk", *fields))):
                counts = found[main_key(erasing.text(item, "pk"))][0]
                for name in fields:
                    counts[name] += erasing.num(item, name) or 0
        return found

    def drop(self, counters: dict[str, tuple[dict[str, int], list[str]]]) -> None:
        """Counter items with their sub-items, the sub-items first: an item deleted before
        them would leave them where nothing names them."""
        table = self._table
        self._items.delete(
            (table, {"pk": {"S": sub}}) for _, subs in counters.values() for sub in subs
        )
        self._items.delete((table, {"pk": {"S": pk}}) for pk in counters)


# ---- bulk import (the seed, infra/local/seed.py: items written as they are) ----------------
def import_counter(
    settings: Settings, key: str, values: dict[str, int]
) -> tuple[str, dict[str, Any]]:
    attributes: dict[str, Any] = dict(values)
    return settings.counters_table, CounterItem(key, **attributes).serialize()
