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
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime, timedelta

from pynamodb.attributes import NumberAttribute, TTLAttribute, UnicodeAttribute
from pynamodb.exceptions import DoesNotExist
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from warble import clock
from warble.dal.dynamo import bind
from warble.domain.push.ports import Registration
from warble.settings import Settings, get_settings

# Items per TransactWriteItems call (DynamoDB's limit), two per connection.
_TRANSACTION_ITEMS = 100


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


class ConnectionRegistry:
    def __init__(self, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self._connection = bind(settings.aws_region, [(ConnectionItem, settings.connections_table)])

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

    def remove(self, connection_id: str) -> str | None:
        """Forget a connection; returns its user id, or None if it was unknown."""
        try:
            meta = ConnectionItem.get(f"CONN#{connection_id}", "META")
        except DoesNotExist:
            return None
        with TransactWrite(connection=self._connection) as tx:
            tx.delete(ConnectionItem(f"USER#{meta.user_id}", f"CONN#{connection_id}"))
            tx.delete(meta)
        return meta.user_id

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

    def registrations(self, user_id: int) -> list[Registration]:
        """The user's open connections with their sessions (expired ones left out)."""
        now = datetime.now(UTC)
        return [
            Registration(
                item.connection_id,
                None if item.session_id is None else int(item.session_id),
                int(item.registered_at or 0),
            )
            for item in ConnectionItem.query(f"USER#{user_id}", consistent_read=True)
            if item.expires_at is None or item.expires_at > now
        ]

    def forget(self, user_id: int, connection_ids: Collection[str]) -> None:
        """Remove these connections of a user (both items each), whatever they were."""
        ids = list(connection_ids)
        per_call = _TRANSACTION_ITEMS // 2
        for start in range(0, len(ids), per_call):
            with TransactWrite(connection=self._connection) as tx:
                for connection_id in ids[start : start + per_call]:
                    tx.delete(ConnectionItem(f"USER#{user_id}", f"CONN#{connection_id}"))
                    tx.delete(ConnectionItem(f"CONN#{connection_id}", "META"))

    def for_user(self, user_id: int) -> list[str]:
        """The user's open connections. An expired one is left out although DynamoDB's TTL may
        delete it up to two days late: its ``$disconnect`` never came."""
        now = datetime.now(UTC)
        return [
            item.connection_id
            for item in ConnectionItem.query(f"USER#{user_id}", consistent_read=True)
            if item.expires_at is None or item.expires_at > now
        ]
