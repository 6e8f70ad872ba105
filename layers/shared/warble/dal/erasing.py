"""The raw DynamoDB operations every store's erase methods share (the account deletion,
``warble.dal.erasure``): a strongly consistent Query of a partition, BatchWriteItem deletes with
their resends, one TransactWriteItems, BatchGetItem reads. The keys are each store's own: its
erase methods (``GraphErasure`` in ``warble.dal.graph``, ...) spell them, nothing here does."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any

from warble.dal import dynamo
from warble.domain.deletion.ports import Raced
from warble.settings import Settings
from warble.tracing import instrument

BATCH_WRITE_LIMIT = 25
BATCH_GET_LIMIT = 100

Doomed = tuple[str, dict[str, Any]]  # (table, key): an item to delete
Deletion = tuple[str, dict[str, Any]]  # (table, DeleteRequest): one request of a batch


def key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def num(item: dict[str, Any], name: str) -> int | None:
    value = item.get(name)
    return int(value["N"]) if isinstance(value, dict) and "N" in value else None


def text(item: dict[str, Any], name: str) -> str:
    value = item.get(name)
    return str(value["S"]) if isinstance(value, dict) and "S" in value else ""


def conditional_delete(table: str, pk: str, sk: str) -> dict[str, Any]:
    return {
        "Delete": {
            "TableName": table,
            "Key": key(pk, sk),
            "ConditionExpression": "attribute_exists(pk)",
        }
    }


def plain_delete(table: str, pk: str, sk: str) -> dict[str, Any]:
    return {"Delete": {"TableName": table, "Key": key(pk, sk)}}


class Items:
    """The stack's tables through one low-level client (no model: an erase reads and deletes
    whatever is under a key, of any shape)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @cached_property
    def client(self) -> Any:
        instrument("botocore")
        return dynamo.client(self.settings.aws_region)

    def query(
        self,
        table: str,
        pk: str,
        prefix: str | None,
        limit: int,
        projection: str | None = None,
        key_name: str = "pk",
        numeric: bool = False,
    ) -> tuple[list[dict[str, Any]], bool]:
        """The first ``limit`` items of a partition (sort keys starting with ``prefix``),
        strongly consistent; and whether more follow."""
        names = {"#p": key_name}
        values: dict[str, Any] = {":p": {"N" if numeric else "S": pk}}
        condition = "#p = :p"
        if prefix is not None:
            names["#s"] = "sk"
            values[":s"] = {"S": prefix}
            condition += " AND begins_with(#s, :s)"
        request: dict[str, Any] = {
            "TableName": table,
            "KeyConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
            "ConsistentRead": True,
            "Limit": limit,
        }
        if projection:
            request["ProjectionExpression"] = projection
            for name in projection.replace(" ", "").split(","):
                if name.startswith("#"):
                    request["ExpressionAttributeNames"][name] = name[1:]
        answer = self.client.query(**request)
        return list(answer.get("Items", [])), "LastEvaluatedKey" in answer

    def delete(self, requests: Iterable[Doomed]) -> int:
        """BatchWriteItem deletes of (table, key), 25 to a call; what DynamoDB leaves
        unprocessed (throttling) is sent again as a model's batch writes are
        (``dynamo.resend_unprocessed``: backoff with jitter, within the deadline, then
        DynamoUnavailable)."""
        pending = list(dict.fromkeys((table, _frozen(key)) for table, key in requests))

        def send(batch: list[Deletion]) -> list[Deletion]:
            items: dict[str, list[Any]] = {}
            for table, request in batch:
                items.setdefault(table, []).append(request)
            answer = self.client.batch_write_item(RequestItems=items)
            unprocessed = answer.get("UnprocessedItems") or {}
            return [(table, request) for table, left in unprocessed.items() for request in left]

        for start in range(0, len(pending), BATCH_WRITE_LIMIT):
            chunk = pending[start : start + BATCH_WRITE_LIMIT]
            dynamo.resend_unprocessed(
                send, [(table, {"DeleteRequest": {"Key": _thawed(key)}}) for table, key in chunk]
            )
        return len(pending)

    def transact(self, actions: list[dict[str, Any]]) -> bool:
        """One TransactWriteItems; False when its conditions cancelled it (a race with the
        user's own change: the caller reads again)."""
        try:
            self.client.transact_write_items(TransactItems=actions)
        except self.client.exceptions.TransactionCanceledException:
            return False
        return True

    def batch_get(
        self, table: str, keys: list[dict[str, Any]], projection: str
    ) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        request: dict[str, Any] = {
            table: {"Keys": keys, "ConsistentRead": True, "ProjectionExpression": projection}
        }
        for attempt in range(8):
            answer = self.client.batch_get_item(RequestItems=request)
            items += answer.get("Responses", {}).get(table, [])
            request = answer.get("UnprocessedKeys") or {}
            if not request:
                return items
            time.sleep(min(0.05 * 2**attempt, 1.0))
        raise Raced()


def erase_partition(
    items: Items,
    table: str,
    pk: str,
    limit: int,
    also: Callable[[str], list[Doomed]] = lambda sk: [],
) -> int:
    """A slice of whatever is under partition ``pk`` (and ``also`` of each sort key): how many
    items went (0: nothing was left)."""
    found, _more = items.query(table, pk, None, limit, "pk, sk")
    doomed = [(table, key(pk, text(i, "sk"))) for i in found]
    for item in found:
        doomed += also(text(item, "sk"))
    return items.delete(doomed) if doomed else 0


def _frozen(key: dict[str, Any]) -> tuple[tuple[str, str, str], ...]:
    return tuple(sorted((name, kind, value) for name, typed in key.items()
                        for kind, value in typed.items()))  # fmt: skip


def _thawed(key: tuple[tuple[str, str, str], ...]) -> dict[str, Any]:
    return {name: {kind: value} for name, kind, value in key}
