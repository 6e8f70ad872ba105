"""The WebSocket connection registry in DynamoDB (pynamodb).

Two items per connection, written together in one transaction:
- ``USER#<user_id> / CONN#<connection_id>``: a user's open connections, one Query to push to all;
- ``CONN#<connection_id> / META``: who owns a connection, for ``$disconnect``.
Both carry ``expires_at`` (DynamoDB TTL), so a connection whose ``$disconnect`` never arrived
still disappears (and is skipped once expired, before TTL deletes it); API Gateway closes any
connection after two hours. A push refused with 410 removes the connection at once
(``warble.domain.push``).

In the same transactions, ``USER#<user_id> / CONNS`` keeps the user's connections as one string
set (``<connection_id> <expiry epoch seconds>``), so a stream batch finds the connections of a
hundred recipients in one BatchGetItem rather than a Query each. Its own ``expires_at`` follows
the latest connection, so it goes when the user has been gone two hours; an entry whose
``$disconnect`` never came is skipped by its expiry.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pynamodb.attributes import (
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UnicodeSetAttribute,
)
from pynamodb.exceptions import DoesNotExist
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from warble.dal.dynamo import bind
from warble.settings import Settings, get_settings


class ConnectionItem(Model):
    class Meta:
        table_name = "connections"  # replaced from settings on first use
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    user_id = UnicodeAttribute()
    connection_id = UnicodeAttribute()
    connected_at = NumberAttribute()
    expires_at = TTLAttribute()


class ConnectionsOfUser(Model):
    """``USER#<user_id> / CONNS``: the user's connections, one BatchGetItem for many users."""

    class Meta:
        table_name = "connections"
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    conns = UnicodeSetAttribute(null=True)
    expires_at = TTLAttribute(null=True)


BATCH_GET_LIMIT = 100


def _entry(connection_id: str, expires: datetime) -> str:
    return f"{connection_id} {int(expires.timestamp())}"


class ConnectionRegistry:
    def __init__(self, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self._connection = bind(
            settings.aws_region,
            [(ConnectionItem, settings.connections_table),
             (ConnectionsOfUser, settings.connections_table)],
        )  # fmt: skip

    def add(self, user_id: int, connection_id: str, connected_at_ms: int, ttl_seconds: int) -> None:
        connection = self._connection
        # From the registration, not the client-reported connectedAt (a replayed or sample
        # event's may be old); $connect runs as the connection opens, so the two agree on AWS.
        expires = datetime.now(UTC) + timedelta(seconds=ttl_seconds)
        with TransactWrite(connection=connection) as tx:
            for pk, sk in (
                (f"USER#{user_id}", f"CONN#{connection_id}"),
                (f"CONN#{connection_id}", "META"),
            ):
                item = ConnectionItem(
                    pk,
                    sk,
                    user_id=str(user_id),
                    connection_id=connection_id,
                    connected_at=connected_at_ms,
                )
                item.expires_at = expires
                tx.save(item)
            tx.update(
                ConnectionsOfUser(f"USER#{user_id}", "CONNS"),
                actions=[
                    ConnectionsOfUser.conns.add({_entry(connection_id, expires)}),
                    ConnectionsOfUser.expires_at.set(expires),
                ],
            )

    def remove(self, connection_id: str) -> str | None:
        """Forget a connection; returns its user id, or None if it was unknown."""
        try:
            meta = ConnectionItem.get(f"CONN#{connection_id}", "META")
        except DoesNotExist:
            return None
        with TransactWrite(connection=self._connection) as tx:
            tx.delete(ConnectionItem(f"USER#{meta.user_id}", f"CONN#{connection_id}"))
            tx.delete(meta)
            if meta.expires_at is not None:
                tx.update(
                    ConnectionsOfUser(f"USER#{meta.user_id}", "CONNS"),
                    actions=[
                        ConnectionsOfUser.conns.delete({_entry(connection_id, meta.expires_at)})
                    ],
                )
        return meta.user_id

    def owner(self, connection_id: str) -> int | None:
        """Who opened a connection (None: unknown, or gone)."""
        try:
            meta = ConnectionItem.get(f"CONN#{connection_id}", "META", consistent_read=True)
        except DoesNotExist:
            return None
        return int(meta.user_id)

    def for_user(self, user_id: int) -> list[str]:
        """The user's open connections. An expired one is left out although DynamoDB's TTL may
        delete it up to two days late: its ``$disconnect`` never came."""
        now = datetime.now(UTC)
        return [
            item.connection_id
            for item in ConnectionItem.query(
                f"USER#{user_id}", ConnectionItem.sk.startswith("CONN#"), consistent_read=True
            )
            if item.expires_at is None or item.expires_at > now
        ]

    def for_users(self, user_ids: list[int]) -> dict[int, list[str]]:
        """The open connections of many users: consistent BatchGetItems of their ``CONNS``
        items (one per hundred users); expired entries are left out."""
        now = datetime.now(UTC).timestamp()
        found: dict[int, list[str]] = {user_id: [] for user_id in user_ids}
        wanted = [(f"USER#{u}", "CONNS") for u in dict.fromkeys(user_ids)]
        for start in range(0, len(wanted), BATCH_GET_LIMIT):
            for item in ConnectionsOfUser.batch_get(
                wanted[start : start + BATCH_GET_LIMIT], consistent_read=True
            ):
                for entry in sorted(item.conns or ()):
                    connection_id, _, expiry = entry.rpartition(" ")
                    if expiry.isdigit() and int(expiry) > now:
                        found[int(item.pk[5:])].append(connection_id)
        return found
