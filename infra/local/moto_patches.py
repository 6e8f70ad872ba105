"""Make moto's DynamoDB transactions atomic and isolated, as DynamoDB's are (serializable).

moto 5 applies a TransactWriteItems item by item and, when one condition fails, "rolls back" by
putting back a deep copy of every table it took before starting. Under concurrent requests
(moto's server is threaded) that is wrong three ways, all of which the follow graph hits:
- another request's writes between the copy and the restore are lost, or a half-applied
  transaction is visible to it (an exact limit such as "follow at most 1000" is broken);
- the restored copy carries a new stream shard object, so every shard iterator a stream poller
  holds goes on reading the orphaned shard and the consumer never sees another record;
- copying a whole table per transaction is O(table size).

``install()`` (run by the moto server child, see services._MOTO_BOOTSTRAP) replaces it with:
under one lock shared by every DynamoDB data operation, check every item's condition first,
cancel with the same CancellationReasons if any fails (nothing written, nothing copied), else
apply them all. Reads take the same lock, so they never see half a transaction.

A Query reads one partition, as DynamoDB's does: moto's sorts every item of the table and
filters them by key on every Query (and every LSI query), so a Query cost O(table) and a seeded
table of a million items took seconds per call; here the base table's and its local indexes'
queries see only the partition's items; a global index's Query still reads every item (its keys
may be any item's attributes), but in one pass that keeps those with the queried key values,
not moto's sort of the whole table (a deleted account's 10,000 tweets each cost its cleanup a
Query of the retweets index: seconds each on a big table without it).

A base table's Query reads only its window, as DynamoDB does: the partition's items within the
key condition, past ExclusiveStartKey in the Query's direction, at most Limit + 1 of them, sorted
by their plain key values (moto's sort compares DynamoType objects, and sorted the whole
partition on every page: a celebrity's partition of 13,000 items cost every page of it 126 ms
under the one lock, and a seeded stack's readers queued behind it). A ``Select: COUNT`` Query
skips moto's deep copy of the items it counts and never answers. A Scan's page starts past its
ExclusiveStartKey by plain key values too (moto compared each earlier item with it as DynamoType
objects: a table swept in pages cost O(table) of those a page).

It lists the email SES would have sent, as LocalStack does (API.md "Password reset"): every
message sent with SES v2's SendEmail (what AccountsFunction uses; moto's own SES backend checks
the sender's verified identity and keeps the message, but only one of its bodies and no time)
is recorded whole and answered at ``GET /_aws/ses`` in LocalStack's shape; ``DELETE /_aws/ses``
(``?id=<message id>`` for one) forgets them.

It also emulates DynamoDB's import from S3 for the population generator (infra/local/seed.py):
a BatchWriteItem sent with the ``X-Warble-Local-Import: 1`` header writes its items without
stream records, as an imported table has none, so the stream consumers do not derive again what
the generator wrote already (the derived state a stream would have made is part of the import).
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs

_LOCK = threading.RLock()

_LOCKED = (
    "put_item",
    "get_item",
    "query",
    "scan",
    "update_item",
    "delete_item",
    "batch_get_item",
    "batch_write_item",
    "transact_get_items",
)


def _locked(method: Any) -> Any:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            return method(*args, **kwargs)

    return wrapper


def _transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
    from moto.dynamodb.comparisons import get_filter_expression
    from moto.dynamodb.exceptions import (
        MultipleTransactionsException,
        TooManyTransactionsException,
        TransactionCanceledException,
        TransactWriteSingleOpException,
    )

    with _LOCK:
        if len(transact_items) > 100:
            raise TooManyTransactionsException()
        seen: set[tuple[str, str]] = set()
        errors: list[tuple[Any, Any, Any]] = []
        plan: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        for item in transact_items:
            if len(item) > 1:
                raise TransactWriteSingleOpException
            op_type, op = next(iter(item.items()))
            if op_type not in {"ConditionCheck", "Put", "Delete", "Update"}:
                raise ValueError("Unsupported transaction operation")
            table_name = op["TableName"]
            if op_type == "Put":
                table = self.get_table(table_name)
                key = {table.hash_key_attr: op["Item"][table.hash_key_attr]}
                if table.range_key_attr is not None:
                    key[table.range_key_attr] = op["Item"][table.range_key_attr]
            else:
                key = op["Key"]
            marker = (str(table_name), str(dict(sorted(key.items()))))
            if marker in seen:
                raise MultipleTransactionsException()
            seen.add(marker)
            condition = op.get("ConditionExpression")
            if condition is not None:
                current = self.get_item(table_name, key)
                check = get_filter_expression(
                    condition,
                    op.get("ExpressionAttributeNames"),
                    op.get("ExpressionAttributeValues"),
                )
                if not check.expr(current):
                    old = None
                    if op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and current:
                        old = current.to_json()["Attributes"]
                    errors.append(("ConditionalCheckFailed", "The conditional request failed", old))
                    continue
            errors.append((None, None, None))
            plan.append((op_type, op, key))
        if any(code is not None for code, _, _ in errors):
            raise TransactionCanceledException(errors)
        # Every condition held, and nothing can change under the lock: apply without them.
        for op_type, op, key in plan:
            names = op.get("ExpressionAttributeNames")
            values = op.get("ExpressionAttributeValues")
            if op_type == "Put":
                self.put_item(op["TableName"], op["Item"])
            elif op_type == "Delete":
                self.delete_item(op["TableName"], key)
            elif op_type == "Update":
                self.update_item(
                    op["TableName"],
                    key,
                    update_expression=op["UpdateExpression"],
                    expression_attribute_names=names,
                    expression_attribute_values=values,
                )


IMPORT_HEADER = "X-Warble-Local-Import"
_QUERY = threading.local()  # the partition a Query on this thread reads (None: every item)


def _holds(item: Any, name: str, value: Any) -> bool:
    held = item.attrs.get(name)
    return held is not None and bool(held == value)


# Table.query's first arguments after the partition key, as moto's backend passes them.
_POSITIONAL = (
    "range_comparison",
    "range_objs",
    "limit",
    "exclusive_start_key",
    "scan_index_forward",
)


class _Window:
    """What a base table's Query reads of its partition: moto filters, pages and limits the
    items it is given exactly as it would the whole partition, so handing it only the window
    (sorted, the first Limit + 1 in the Query's direction) answers the same."""

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        given = dict(zip(_POSITIONAL, args, strict=False)) | kwargs
        self.comparison: str | None = given.get("range_comparison")
        self.bounds: list[Any] = list(given.get("range_objs") or ())
        self.limit: int | None = given.get("limit")
        self.start: dict[str, Any] | None = given.get("exclusive_start_key")
        self.forward: bool = given.get("scan_index_forward", True) is not False

    def items(self, table: Any, bucket: dict[Any, Any]) -> list[Any]:
        from moto.dynamodb.models.dynamo_type import DynamoType

        items = list(bucket.values())
        if self.comparison:
            items = [item for item in items if item.range_key.compare(self.comparison, self.bounds)]
        items.sort(key=_plain)
        if self.start and table.range_key_attr in self.start:
            after = DynamoType(self.start[table.range_key_attr]).cast_value
            items = [item for item in items if _within(_plain(item), after, self.forward)]
        if self.limit:
            items = items[: self.limit + 1] if self.forward else items[-(self.limit + 1) :]
        return items


def _plain(item: Any) -> Any:
    return item.range_key.cast_value


def _within(value: Any, start: Any, forward: bool) -> bool:
    return bool(value > start) if forward else bool(value < start)


class _CopyOfAnswers:
    """moto's table module's ``copy``, with a deep copy that a counting Query skips: the items
    it would copy are counted, never answered."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def deepcopy(self, value: Any, *args: Any) -> Any:
        if getattr(_QUERY, "counting", False):
            return value
        return self._module.deepcopy(value, *args)


def _counting_query(original: Any) -> Any:
    @functools.wraps(original)
    def query(self: Any) -> Any:
        _QUERY.counting = str(self.body.get("Select", "")).upper() == "COUNT"
        try:
            return original(self)
        finally:
            _QUERY.counting = False

    return query


def _partition_items(original: Any) -> Any:
    @functools.wraps(original)
    def all_items(self: Any) -> Any:
        wanted = getattr(_QUERY, "index_keys", None)
        if wanted:
            # A global index's Query: only the items holding its key values, unsorted (moto
            # sorts what matches by the index's keys): one pass, not a sort of the whole table.
            return [
                item
                for item in _every_item(self)
                if all(_holds(item, name, value) for name, value in wanted.items())
            ]
        if getattr(_QUERY, "scanning", False):
            return _scan_window(self, _QUERY.scan_after)
        key = getattr(_QUERY, "partition", None)
        if key is None or not self.range_key_attr:
            return original(self)
        bucket = self.items.get(key) or {}
        window = getattr(_QUERY, "window", None)
        if window is not None:
            return window.items(self, bucket)
        return sorted(bucket.values(), key=_plain)

    return all_items


_QUERY_ARGUMENTS = set(_POSITIONAL) | {
    "projection_expressions",
    "index_name",
    "consistent_read",
    "filter_expression",
    "hash_key_conditions",
    "range_key_conditions",
}


def _every_item(table: Any) -> list[Any]:
    """Every item of a table, unsorted (moto keeps a bucket per partition key, or the item
    itself on a table without a sort key)."""
    return [
        item
        for bucket in table.items.values()
        for item in (bucket.values() if table.range_key_attr else (bucket,))
    ]


def _table_order(item: Any) -> tuple[Any, ...]:
    if item.range_key is None:
        return (item.hash_key.cast_value,)
    return (item.hash_key.cast_value, item.range_key.cast_value)


def _scan_window(table: Any, start: dict[str, Any] | None) -> list[Any]:
    """A base table's items in moto's Scan order (by key), past ``start`` if given."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    items = _every_item(table)
    items.sort(key=_table_order)
    if start:
        names = [table.hash_key_attr] + ([table.range_key_attr] if table.range_key_attr else [])
        after = tuple(DynamoType(start[name]).cast_value for name in names)
        items = [item for item in items if _table_order(item) > after]
    return items


def _paged_scan(original: Any) -> Any:
    @functools.wraps(original)
    def scan(
        self: Any, filters: Any, limit: Any, exclusive_start_key: Any, *args: Any, **kwargs: Any
    ) -> Any:
        index_name = kwargs.get("index_name", args[1] if len(args) > 1 else None)
        _QUERY.scanning = index_name is None
        _QUERY.scan_after = exclusive_start_key
        try:
            return original(self, filters, limit, exclusive_start_key, *args, **kwargs)
        finally:
            _QUERY.scanning = False
            _QUERY.scan_after = None

    return scan


def _partition_query(original: Any) -> Any:
    @functools.wraps(original)
    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs.get("index_name", args[6] if len(args) > 6 else None)
        local = index_name is None or any(i.name == index_name for i in self.indexes or ())
        _QUERY.partition = hash_key if local else None
        _QUERY.index_keys = None if local else dict(kwargs.get("hash_key_conditions") or ())
        # Only a base table's Query without a legacy QueryFilter is narrowed to its window (a
        # local index sorts by its own key; a QueryFilter counts what it skips).
        legacy = set(kwargs) - _QUERY_ARGUMENTS
        _QUERY.window = _Window(args, kwargs) if index_name is None and not legacy else None
        try:
            return original(self, hash_key, *args, **kwargs)
        finally:
            _QUERY.partition = None
            _QUERY.index_keys = None
            _QUERY.window = None

    return query


def _importing_batch_write(original: Any) -> Any:
    @functools.wraps(original)
    def batch_write_item(self: Any) -> Any:
        if self.headers.get(IMPORT_HEADER) != "1":
            return original(self)
        with _LOCK:  # no other request sees the tables without their streams
            tables = [self.dynamodb_backend.get_table(name) for name in self.body["RequestItems"]]
            shards = [(table, table.stream_shard) for table in tables]
            for table, _ in shards:
                table.stream_shard = None
            try:
                return original(self)
            finally:
                for table, shard in shards:
                    table.stream_shard = shard

    return batch_write_item


SES_PATH = "/_aws/ses"
_SENT: list[dict[str, Any]] = []
_SENT_LOCK = threading.Lock()


def _recording_send_email(original: Any) -> Any:
    @functools.wraps(original)
    def send_email(self: Any) -> Any:
        answer = original(self)  # moto's checks first: an unverified sender is refused
        params = json.loads(self.body)
        simple = (params.get("Content") or {}).get("Simple")
        if simple is not None:
            body = simple.get("Body") or {}
            destination = params.get("Destination") or {}
            message = {
                "Id": json.loads(answer)["MessageId"],
                "Region": self.region,
                "Source": params.get("FromEmailAddress"),
                "Destination": {
                    key: destination[key]
                    for key in ("ToAddresses", "CcAddresses", "BccAddresses")
                    if key in destination
                },
                "Subject": (simple.get("Subject") or {}).get("Data"),
                "Body": {
                    "text_part": (body.get("Text") or {}).get("Data"),
                    "html_part": (body.get("Html") or {}).get("Data"),
                },
                "Timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            }
            with _SENT_LOCK:
                _SENT.append(message)
        return answer

    return send_email


def _ses_messages(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """LocalStack's ``/_aws/ses``: GET lists the messages (``?email=`` those from one sender),
    DELETE forgets them (``?id=`` one)."""
    query = parse_qs(environ.get("QUERY_STRING", ""))
    method = environ.get("REQUEST_METHOD", "GET")
    with _SENT_LOCK:
        if method == "DELETE":
            doomed = set(query.get("id", []))
            _SENT[:] = [m for m in _SENT if doomed and m["Id"] not in doomed]
            start_response("204 No Content", [])
            return []
        if method != "GET":
            start_response("405 Method Not Allowed", [("Allow", "GET, DELETE")])
            return []
        senders = set(query.get("email", []))
        listed = [m for m in _SENT if not senders or m["Source"] in senders]
        payload = json.dumps({"messages": listed}).encode()
    start_response(
        "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))]
    )
    return [payload]


def _serving_ses_messages(original: Any) -> Any:
    @functools.wraps(original)
    def call(self: Any, environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("PATH_INFO") == SES_PATH:
            return _ses_messages(environ, start_response)
        return original(self, environ, start_response)

    return call


def _announcing_add(add: Callable[..., None], announce: Callable[[str], None]) -> Any:
    """StreamShard.add, then its table named to the pollers (infra/local/stream_wakeups.py)."""

    def adding(shard: Any, old: Any, new: Any) -> None:
        add(shard, old, new)
        announce(shard.table.name)

    return adding


def install() -> None:
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.responses import DynamoHandler
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication
    from moto.sesv2.responses import SESV2Response

    if getattr(DynamoDBBackend, "_warble_patched", False):
        return
    from moto.dynamodb.models import table as table_module
    from moto.dynamodb.models.table import Table

    table_module.copy = _CopyOfAnswers(table_module.copy)  # type: ignore[assignment]
    DynamoHandler.query = _counting_query(DynamoHandler.query)  # type: ignore[method-assign]
    DynamoHandler.batch_write_item = _importing_batch_write(DynamoHandler.batch_write_item)  # type: ignore[method-assign]
    Table.all_items = _partition_items(Table.all_items)  # type: ignore[method-assign]
    Table.query = _partition_query(Table.query)  # type: ignore[method-assign]
    Table.scan = _paged_scan(Table.scan)  # type: ignore[method-assign]
    for name in _LOCKED:
        setattr(DynamoDBBackend, name, _locked(getattr(DynamoDBBackend, name)))
    DynamoDBBackend.transact_write_items = _transact_write_items  # type: ignore[method-assign]
    SESV2Response.send_email = _recording_send_email(SESV2Response.send_email)  # type: ignore[method-assign]
    DomainDispatcherApplication.__call__ = _serving_ses_messages(  # type: ignore[method-assign]
        DomainDispatcherApplication.__call__
    )
    from infra.local import faults  # the DynamoDB fault switch, off until a PUT turns it on
    from infra.local.stream_wakeups import announcer

    announce = announcer()
    if announce is not None:  # the stream pollers listen: name each table a record lands in
        from moto.dynamodb.models.table import StreamShard

        StreamShard.add = _announcing_add(StreamShard.add, announce)  # type: ignore[method-assign]

    DomainDispatcherApplication.__call__ = faults.serving(  # type: ignore[method-assign]
        DomainDispatcherApplication.__call__
    )
    DynamoDBBackend._warble_patched = True  # type: ignore[attr-defined]
