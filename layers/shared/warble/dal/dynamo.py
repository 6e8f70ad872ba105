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

Every DynamoDB client that session makes, pynamodb's and the plain ones alike (``client``), gets
the same retries and timeouts (``_deadline_bound``), whatever pynamodb's settings say: botocore's
``standard`` mode (exponential backoff with full jitter, a retry quota that stops retrying when
most calls fail) with DynamoDB's four attempts, a short connect timeout, and each attempt's read
timeout, and the retries' sleeps, within the request's deadline (``warble.deadline.time_left``).
pynamodb 6 has no retry loop of its own for a failed call (its ``max_retry_attempts`` only set
botocore's attempts), so a call is tried four times, not sixteen. What still fails after them
(throttled, an internal error, unreachable) is raised as ``DynamoUnavailable``, which a handler
answers 503 (``warble.dal.store_unavailable``); a refused condition, a cancelled transaction or a
validation error stays the error it was.

A BatchWriteItem that DynamoDB answers with ``UnprocessedItems`` (a partition throttled: the
call succeeds, some writes were not made) is not a failed call, so botocore does not retry it.
``batch_write`` gives a model pynamodb's batch writer with the resend AWS advises for it: the
unprocessed items sent again after an exponential backoff with full jitter, within the request's
deadline, and ``DynamoUnavailable`` when they are still unprocessed (pynamodb resent them at
once, and gave up after three sends with a ``PutError``, a 500).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

import botocore.session
from botocore.config import Config
from botocore.exceptions import ConnectionError as BotocoreConnectionError
from botocore.exceptions import HTTPClientError
from pynamodb.connection import Connection
from pynamodb.constants import DELETE_REQUEST, ITEM, KEY, PUT, PUT_REQUEST, UNPROCESSED_ITEMS
from pynamodb.exceptions import TransactWriteError
from pynamodb.models import BatchWrite, Model

from warble.deadline import time_left
from warble.events import UnreadableRecord

CONDITION_FAILED = "ConditionalCheckFailed"
_lock = threading.Lock()
_bound: dict[type[Model], tuple[str, str, str | None]] = {}


# ---- DynamoDB's clients: retries, timeouts, and what "unavailable" means ---------------------
ATTEMPTS = 4  # botocore's standard mode for DynamoDB (and pynamodb's 1 + 3)
CONNECT_TIMEOUT_SECONDS = 1.0  # an in-region endpoint connects in milliseconds
READ_TIMEOUT_SECONDS = 30.0  # pynamodb's; a request's deadline bounds it further
CLIENT_CONFIG = Config(
    retries={"mode": "standard", "total_max_attempts": ATTEMPTS},
    connect_timeout=CONNECT_TIMEOUT_SECONDS,
    read_timeout=READ_TIMEOUT_SECONDS,
)
# Error codes that mean "DynamoDB cannot answer now", once botocore's retries are spent.
UNAVAILABLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
    }
)
# The shortest attempt worth starting: a retry that would end later than this before the
# deadline is not made.
SHORTEST_ATTEMPT_SECONDS = 0.1


class DynamoUnavailable(Exception):
    """DynamoDB throttled, failed or could not be reached, after its retries: try again later
    (a handler answers 503 with Retry-After; a stream consumer fails the records, so Lambda
    delivers them again)."""

    def __init__(self, operation: str, code: str) -> None:
        super().__init__(f"DynamoDB {operation}: {code}")
        self.operation = operation
        self.code = code


def _give_up_for_deadline(attempts: int, **_: Any) -> bool | None:
    """``needs-retry``, before the standard handler: no retry (False) when the deadline cannot
    hold the longest backoff this retry may draw (botocore's throttling backoff, 2^(n-1) s with
    jitter) and a short attempt; None leaves the decision to botocore."""
    left = time_left()
    if left is None or left >= min(2 ** (attempts - 1), 20) + SHORTEST_ATTEMPT_SECONDS:
        return None
    return False


def _read_within_deadline(request: Any, **_: Any) -> None:
    """``before-send``, each attempt: its read timeout is what is left of the deadline, if less
    than the client's (the connect timeout is short already)."""
    left = time_left()
    if left is not None and left < READ_TIMEOUT_SECONDS:
        request.context["read_timeout"] = max(left, 0.001)


def _unavailable_answer(http_response: Any, parsed: dict[str, Any], model: Any, **_: Any) -> None:
    """``after-call``, once the retries are spent: a throttle or a server error is raised as
    DynamoUnavailable (pynamodb would wrap it in its own error for the operation)."""
    if http_response.status_code < 300:
        return
    code = str((parsed.get("Error") or {}).get("Code") or http_response.status_code)
    if http_response.status_code >= 500 or code in UNAVAILABLE_CODES:
        raise DynamoUnavailable(model.name, code)


def _unreachable(exception: Exception, event_name: str, **_: Any) -> None:
    """``after-call-error.dynamodb.<operation>``: a connection refused or reset, a timeout,
    after the retries."""
    # What botocore's standard mode retries as transient: refused, reset, timed out.
    if isinstance(exception, BotocoreConnectionError | HTTPClientError):
        operation = event_name.rsplit(".", 1)[-1]
        raise DynamoUnavailable(operation, type(exception).__name__) from exception


def _deadline_bound(client: Any) -> Any:
    events = client.meta.events
    events.register_first("needs-retry.dynamodb", _give_up_for_deadline)
    events.register("before-send.dynamodb", _read_within_deadline)
    events.register("after-call.dynamodb", _unavailable_answer)
    events.register("after-call-error.dynamodb", _unreachable)
    return client


# ---- batch writes: what DynamoDB leaves unprocessed --------------------------------------------
BATCH_SENDS = 8  # sends of one batch at most: the first and seven resends
BATCH_BACKOFF_BASE_SECONDS = 0.05
BATCH_BACKOFF_CAP_SECONDS = 1.0
_M = TypeVar("_M", bound=Model)
_R = TypeVar("_R")
Requests = list[dict[str, Any]]


def resend_unprocessed(send: Callable[[list[_R]], list[_R]], requests: list[_R]) -> None:
    """``send`` the write requests, then what it answers unprocessed again, after a backoff with
    full jitter (base 2^n, capped), until none is left. DynamoUnavailable after ``BATCH_SENDS``
    sends, or as soon as the next backoff and a short attempt would outlast the deadline. A
    request is whatever ``send`` makes its call of (one table's requests, or (table, request)
    pairs for a call over several tables: ``warble.dal.erasing``)."""
    for sends in range(1, BATCH_SENDS + 1):
        requests = send(requests)
        if not requests:
            return
        delay = random.uniform(
            0, min(BATCH_BACKOFF_CAP_SECONDS, BATCH_BACKOFF_BASE_SECONDS * 2**sends)
        )
        left = time_left()
        if sends == BATCH_SENDS or (left is not None and left < delay + SHORTEST_ATTEMPT_SECONDS):
            break
        time.sleep(delay)
    raise DynamoUnavailable("BatchWriteItem", "UnprocessedItems")


class _BackingOffBatchWrite(BatchWrite[_M]):
    """pynamodb's batch writer (25 requests a call), its resend of unprocessed items replaced by
    ``resend_unprocessed``."""

    def commit(self) -> None:
        requests: Requests = [
            {PUT_REQUEST: {ITEM: op["item"].serialize()}}
            if op["action"] == PUT
            else {DELETE_REQUEST: {KEY: op["item"]._get_keys()}}
            for op in self.pending_operations
        ]
        self.pending_operations = []
        if not requests:
            return
        connection = self.model._get_connection()
        table = self.model.Meta.table_name

        def send(batch: Requests) -> Requests:
            data = connection.batch_write_item(
                put_items=[r[PUT_REQUEST][ITEM] for r in batch if PUT_REQUEST in r],
                delete_items=[r[DELETE_REQUEST][KEY] for r in batch if DELETE_REQUEST in r],
            )
            return list(((data or {}).get(UNPROCESSED_ITEMS) or {}).get(table) or [])

        resend_unprocessed(send, requests)


def batch_write(model: type[_M]) -> BatchWrite[_M]:
    """``model.batch_write()``, with unprocessed items resent as ``resend_unprocessed`` does."""
    return _BackingOffBatchWrite(model)


class _Session(botocore.session.Session):
    """The process's botocore session. botocore does not make clients of one session safely
    from several threads at once (pynamodb's issue 153): one at a time. A DynamoDB client gets
    ``CLIENT_CONFIG`` over the config it is asked with, and the deadline's hooks."""

    def __init__(self) -> None:
        super().__init__()
        self._making = threading.Lock()

    def create_client(self, service_name: str, *args: Any, **kwargs: Any) -> Any:
        dynamodb = service_name == "dynamodb"
        if dynamodb:
            given = kwargs.get("config")
            kwargs["config"] = CLIENT_CONFIG if given is None else given.merge(CLIENT_CONFIG)
        with self._making:
            client = super().create_client(service_name, *args, **kwargs)
        return _deadline_bound(client) if dynamodb else client


@cache
def _session() -> _Session:
    return _Session()


def client(region: str) -> Any:
    """A plain DynamoDB client (for what pynamodb's models do not do), on the shared session."""
    return _session().create_client("dynamodb", region_name=region)


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
