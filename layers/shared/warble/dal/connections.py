"""The WebSocket connection registry in DynamoDB (pynamodb).

Two items per connection, written together in one transaction:
- ``USER#<user_id> / CONN#<connection_id>``: a user's open connections, one Query to push to all;
- ``CONN#<connection_id> / META``: who owns a connection, for ``$disconnect``.
Both carry ``expires_at`` (DynamoDB TTL), so a connection whose ``$disconnect`` never arrived
still disappears (and is skipped once expired, before TTL deletes it); API Gateway closes any
connection after two hours. A push refused with 410 removes the connection at once
(``warble.domain.push``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pynamodb.attributes import NumberAttribute, TTLAttribute, UnicodeAttribute
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


class ConnectionRegistry:
    def __init__(self, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self._connection = bind(settings.aws_region, [(ConnectionItem, settings.connections_table)])

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
            for item in ConnectionItem.query(f"USER#{user_id}", consistent_read=True)
            if item.expires_at is None or item.expires_at > now
        ]
