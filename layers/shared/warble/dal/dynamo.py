"""What every DynamoDB store shares: binding pynamodb models to tables, reading why a transaction
was cancelled, and the parts of a stream record a store decodes.

pynamodb keeps a model's table name and connection on the class. ``bind`` is the one place that
sets them, from the table names a store is built with (``warble.services``), so a test or a
benchmark that builds stores for other tables gets models bound to those, without resetting
private caches.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pynamodb.connection import Connection
from pynamodb.exceptions import TransactWriteError
from pynamodb.models import Model

from warble.events import UnreadableRecord

CONDITION_FAILED = "ConditionalCheckFailed"
_lock = threading.Lock()
_bound: dict[type[Model], tuple[str, str, str | None]] = {}


def bind(region: str, tables: Iterable[tuple[type[Model], str]]) -> Connection:
    """Point each model at its table; returns a connection for transactions in ``region``.

    A model already bound to the same table is left alone (its warm connection kept)."""
    import os

    from warble.tracing import instrument

    instrument("botocore", "pynamodb")
    endpoint = os.environ.get("AWS_ENDPOINT_URL")
    with _lock:
        for model, table in tables:
            wanted = (table, region, endpoint)
            if _bound.get(model) != wanted:
                model.Meta.table_name = table
                model.Meta.region = region
                # The class-level connection caches region and endpoint: rebuild it.
                model._connection = None
                _bound[model] = wanted
    return Connection(region=region)


def cancellation_codes(exc: TransactWriteError) -> list[str | None]:
    """The code of each action's cancellation reason, in request order (None: not the cause).

    pynamodb sends a transaction's condition checks first, then deletes, puts and updates;
    callers index this list in that order."""
    return [reason.code if reason else None for reason in (exc.cancellation_reasons or [])]


def cancelled(exc: TransactWriteError) -> bool:
    """True when the transaction was cancelled by its conditions (not throttled or failed)."""
    return exc.cause_response_code == "TransactionCanceledException"


@dataclass(frozen=True)
class StreamItem:
    """A stream record's item: what changed and its images (DynamoDB JSON)."""

    name: str  # INSERT, MODIFY or REMOVE
    keys: dict[str, Any]
    new: dict[str, Any] | None
    old: dict[str, Any] | None

    @classmethod
    def of(cls, record: dict[str, Any]) -> StreamItem:
        try:
            change = record["dynamodb"]
            return cls(
                str(record["eventName"]), change["Keys"], change.get("NewImage"),
                change.get("OldImage"),
            )  # fmt: skip
        except (KeyError, TypeError) as exc:
            raise UnreadableRecord(str(exc)) from exc

    def image(self) -> dict[str, Any]:
        """The item as it is after an INSERT or MODIFY, or was before a REMOVE (keys at least)."""
        image = self.old if self.name == "REMOVE" else self.new
        return image or self.keys

    def string_key(self, name: str) -> str:
        try:
            return str(self.keys[name]["S"])
        except (KeyError, TypeError) as exc:
            raise UnreadableRecord(f"no string key {name!r}") from exc


def number(image: dict[str, Any], name: str) -> int | None:
    """A number attribute of a DynamoDB JSON image, or None if absent."""
    value = image.get(name)
    if not isinstance(value, dict) or "N" not in value:
        return None
    try:
        return int(value["N"])
    except ValueError as exc:
        raise UnreadableRecord(f"{name} is not an integer") from exc


def required_number(image: dict[str, Any], name: str) -> int:
    value = number(image, name)
    if value is None:
        raise UnreadableRecord(f"no number {name!r}")
    return value


def prefixed_id(value: str, prefix: str) -> int:
    """``<prefix><digits>`` -> the id; UnreadableRecord otherwise."""
    digits = value[len(prefix) :]
    if not value.startswith(prefix) or not digits.isdigit():
        raise UnreadableRecord(f"{value!r} is not {prefix}<id>")
    return int(digits)
