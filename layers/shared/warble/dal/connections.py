"""The WebSocket connection registry in DynamoDB (pynamodb).

Two items per connection, written together in one transaction:
- ``USER#<user_id> / CONN#<connection_id>``: a user's open connections, one Query to push to all;
- ``CONN#<connection_id> / META``: who owns a connection, for ``$disconnect``.
Both carry ``expires_at`` (DynamoDB TTL), so a connection whose ``$disconnect`` never arrived
still disappears (and is skipped once expired, before TTL deletes it); API Gateway closes any
connection after two hours. A push refused with 410 removes the connection at once, unless it
was registered too recently to be past its handshake (``warble.domain.push``). Both also carry
the session the connection's token belongs to, so that a session's end finds its connections,
and when the registration was written.

In the same transactions, ``USER#<user_id> / CONNS`` keeps the user's connections as one string
set (``<connection_id> <expiry epoch seconds>``), so a stream batch finds the connections of a
hundred recipients in one BatchGetItem rather than a Query each. Its own ``expires_at`` follows
the latest connection, so it goes when the user has been gone two hours; an entry whose
``$disconnect`` never came is skipped by its expiry.
"""

from __future__ import annotations

from collections.abc import Collection
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

from warble import clock
from warble.dal import erasing
from warble.dal.dynamo import bind
from warble.domain.push.ports import Registration
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
    # Absent on registrations written before connections named their session.
    session_id = UnicodeAttribute(null=True)
    registered_at = NumberAttribute(null=True)  # ms, this server's clock


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
# Connections forgotten per TransactWriteItems call (DynamoDB's limit is 100 items): two items
# each, and the user's CONNS item once.
_FORGET_PER_CALL = 49


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

    def add(
        self,
        user_id: int,
        connection_id: str,
        connected_at_ms: int,
        ttl_seconds: int,
        session_id: int | None = None,
    ) -> None:
        connection = self._connection
        # From the registration, not the client-reported connectedAt (a replayed or sample
        # event's may be old); $connect runs as the connection opens, so the two agree on AWS.
        registered_at = clock.epoch_ms()
        expires = clock.from_ms(registered_at) + timedelta(seconds=ttl_seconds)
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
                    session_id=None if session_id is None else str(session_id),
                    registered_at=registered_at,
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

    def remove_if_older(self, connection_id: str, registered_before_ms: int) -> bool:
        """Forget a connection refused as gone, unless it was registered at or after
        ``registered_before_ms`` (it may still be in its handshake). Connection ids are never
        reused, so the registration read is the one removed."""
        try:
            meta = ConnectionItem.get(f"CONN#{connection_id}", "META", consistent_read=True)
        except DoesNotExist:
            return False
        if meta.registered_at is not None and meta.registered_at >= registered_before_ms:
            return False
        self.forget(int(meta.user_id), [connection_id])
        return True

    def _of_user(self, user_id: int) -> list[ConnectionItem]:
        return list(
            ConnectionItem.query(
                f"USER#{user_id}", ConnectionItem.sk.startswith("CONN#"), consistent_read=True
            )
        )

    def registrations(self, user_id: int) -> list[Registration]:
        """The user's open connections with their sessions (expired ones left out)."""
        now = datetime.now(UTC)
        return [
            Registration(
                item.connection_id,
                None if item.session_id is None else int(item.session_id),
                int(item.registered_at or 0),
            )
            for item in self._of_user(user_id)
            if item.expires_at is None or item.expires_at > now
        ]

    def forget(self, user_id: int, connection_ids: Collection[str]) -> None:
        """Remove these connections of a user (both items each, and their CONNS entries)."""
        wanted = set(connection_ids)
        items = [item for item in self._of_user(user_id) if item.connection_id in wanted]
        for start in range(0, len(items), _FORGET_PER_CALL):
            part = items[start : start + _FORGET_PER_CALL]
            entries = {
                _entry(item.connection_id, item.expires_at)
                for item in part
                if item.expires_at is not None
            }
            with TransactWrite(connection=self._connection) as tx:
                for item in part:
                    tx.delete(ConnectionItem(f"USER#{user_id}", f"CONN#{item.connection_id}"))
                    tx.delete(ConnectionItem(f"CONN#{item.connection_id}", "META"))
                if entries:
                    tx.update(
                        ConnectionsOfUser(f"USER#{user_id}", "CONNS"),
                        actions=[ConnectionsOfUser.conns.delete(entries)],
                    )

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


class ConnectionErasure:
    """An account's connection registrations (its ``USER#`` partition and each connection's
    own item), for the account deletion (``warble.dal.erasure``)."""

    def __init__(self, items: erasing.Items) -> None:
        self._items = items

    def erase_own(self, user_id: int, limit: int) -> int:
        table = self._items.settings.connections_table

        def owner_item(sk: str) -> list[erasing.Doomed]:
            return [(table, erasing.key(sk, "META"))] if sk.startswith("CONN#") else []

        return erasing.erase_partition(self._items, table, f"USER#{user_id}", limit, owner_item)
