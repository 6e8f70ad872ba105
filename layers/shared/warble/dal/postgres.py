"""PostgreSQL connections: one per thread (one per Lambda container), opened on first use.

On AWS the host is the RDS Proxy endpoint, a function connects as its own database role with an
IAM token (``warble.dal.aws_auth``) over TLS verified against DB_SSLROOTCERT, and only the
migrations read a secret (the master's). Locally the roles sign in without a password (the
local PostgreSQL trusts 127.0.0.1) and the secret lives in moto. A broken connection is
replaced once per call.

psycopg itself is imported with the first connection, not with this module: every service built
on accounts holds a ``Database``, and the functions whose requests never reach PostgreSQL (the
stream consumers, a request whose session and profiles are cached) need not import it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from warble.settings import Settings, get_settings

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")


def unavailable_errors() -> tuple[type[Exception], ...]:
    """Failures a handler turns into 503: none before psycopg is loaded (nothing connected)."""
    psycopg = sys.modules.get("psycopg")
    return () if psycopg is None else (psycopg.OperationalError,)


def credentials(settings: Settings) -> tuple[str, str]:
    if settings.db_iam_auth:  # a fresh token for each connection: one is good for 15 minutes
        from warble.dal.aws_auth import rds_token

        return settings.db_user, rds_token(
            settings.db_host, settings.db_port, settings.db_user, settings.aws_region
        )
    if not settings.db_secret_arn:
        return settings.db_user, settings.db_password
    from aws_lambda_powertools.utilities import parameters

    secret: Any = parameters.get_secret(settings.db_secret_arn, transform="json", max_age=300)
    return secret["username"], secret.get("password", "")


def conninfo(settings: Settings | None = None) -> str:
    settings = settings or get_settings()
    user, password = credentials(settings)
    from psycopg.conninfo import make_conninfo

    return make_conninfo(
        host=settings.db_host,
        port=settings.db_port,
        dbname=settings.db_name,
        user=user,
        password=password or None,
        sslmode=settings.db_sslmode,
        sslrootcert=settings.db_sslrootcert or None,
        connect_timeout=5,
        application_name="warble",
    )


class Database:
    """Hands out this thread's connection (autocommit; use ``conn.transaction()`` to group)."""

    def __init__(self, dsn_factory: Callable[[], str] = conninfo) -> None:
        self._dsn_factory = dsn_factory
        self._local = threading.local()

    def _connect(self) -> psycopg.Connection[dict[str, Any]]:
        import psycopg
        from psycopg.rows import dict_row

        from warble.tracing import instrument

        instrument("psycopg")
        conn = psycopg.connect(self._dsn_factory(), autocommit=True, row_factory=dict_row)
        self._local.conn = conn
        return conn

    def connection(self) -> psycopg.Connection[dict[str, Any]]:
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            conn = self._connect()
        return conn

    def run(self, work: Callable[[psycopg.Connection[dict[str, Any]]], T]) -> T:
        """Run ``work`` on this thread's connection, reconnecting once if the old one died."""
        conn = self.connection()
        try:
            return work(conn)
        except unavailable_errors():
            if not conn.closed and not conn.broken:
                raise
            return work(self._connect())

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
