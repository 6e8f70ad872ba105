"""What every DynamoDB store shares: binding pynamodb models to tables, reading why a transaction
was cancelled, and the parts of a stream record a store decodes.

pynamodb keeps a model's table name and connection on the class. ``bind`` is the one place that
sets them, from the table names a store is built with (``warble.services``), so a test or a
benchmark that builds stores for other tables gets models bound to those, without resetting
private caches.

Every connection ``bind`` makes shares the process's one botocore session (``_Session``).
pynamodb gives each model a session of its own, and a session's first client loads the DynamoDB
service model, the endpoint rules and the partitions again: about 150 ms here for each model a
container first touches (a stream consumer touched two in its first batch; a graph function's
first follow after its first read paid it again), against about 10 ms for another client of a
session that has loaded them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

import botocore.session
from pynamodb.connection import Connection
from pynamodb.exceptions import TransactWriteError
from pynamodb.models import Model

from warble.events import UnreadableRecord

CONDITION_FAILED = "ConditionalCheckFailed"
_lock = threading.Lock()
_bound: dict[type[Model], tuple[str, str, str | None]] = {}


class _Session(botocore.session.Session):
    """The process's botocore session. botocore does not make clients of one session safely
    from several threads at once (pynamodb's issue 153): one at a time."""

    def __init__(self) -> None:
        super().__init__()
        self._making = threading.Lock()

    def create_client(self, *args: Any, **kwargs: Any) -> Any:
        with self._making:
            return super().create_client(*args, **kwargs)


@cache
def _session() -> _Session:
    return _Session()


class SharedConnection(Connection):
    """pynamodb's connection, on the process's botocore session (its client is its own)."""

    @property
    def session(self) -> botocore.session.Session:
        return _session()


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
                # The class-level connection caches region and endpoint: rebuild it, with the
                # key schema pynamodb reads from the model, on the shared session.
                model._connection = None
                own = model._get_connection()
                shared = SharedConnection(region=region)
                shared.add_meta_table(own.get_meta_table())
                own.connection = shared
                _bound[model] = wanted
    return SharedConnection(region=region)


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
