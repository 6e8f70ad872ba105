"""The local PostgreSQL database: create it and apply the yoyo migrations, or drop it.

What RDS and MigrateFunction do on AWS, for `serve`, the tests and the benchmarks.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "LOCAL_IDLE_CLIENT_SECONDS",
    "MIGRATIONS_DIR",
    "drop_database",
    "holding",
    "prepare_database",
    "proxy_stand_in",
]

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "infra" / "migrations"

# On AWS the functions reach Aurora through RDS Proxy, which multiplexes every warm instance onto
# a few server connections and closes a client idle for IdleClientTimeout. Locally each warm
# worker process holds a connection of its own, straight to PostgreSQL: a `make run` stack and a
# test run's stacks beside it held 46 + 53, past a new machine's max_connections of 100. The
# stand-in closes what the proxy would close, sooner (an idle worker reconnects in a millisecond
# here: `Database.run` replaces a connection the server closed), so idle stacks hold nothing.
LOCAL_IDLE_CLIENT_SECONDS = 10


def _admin_connection(host: str, port: int, user: str) -> Any:
    import psycopg

    return psycopg.connect(
        host=host, port=port, user=user, dbname="postgres", autocommit=True, connect_timeout=5
    )


@contextmanager
def holding(
    name: str, host: str = "127.0.0.1", port: int = 5432, user: str = "postgres"
) -> Iterator[None]:
    """Hold PostgreSQL's advisory lock named `name` (on the `postgres` database, so every
    process of this server shares it) until the block ends; a second holder waits."""
    with _admin_connection(host, port, user) as connection:
        key = connection.execute("SELECT hashtextextended(%s, 0)", (name,)).fetchone()[0]
        connection.execute("SELECT pg_advisory_lock(%s)", (key,))
        try:
            yield
        finally:
            connection.execute("SELECT pg_advisory_unlock(%s)", (key,))


def prepare_database(
    dbname: str,
    host: str = "127.0.0.1",
    port: int = 5432,
    user: str = "postgres",
    *,
    migrations_dir: Path | str = MIGRATIONS_DIR,
) -> list[str]:
    """Create `dbname` if missing and apply the pending yoyo migrations; returns their ids.

    Safe from several processes at once (two `invoke` runs, test workers): creation is
    check-then-create, which two creators pass together, so it runs under an advisory lock.
    Only `*.sql` files count as migrations: `migrate.py` (MigrateFunction's handler) lives in the
    same folder and must not be mistaken for one. A missing or empty folder applies nothing.
    """
    import psycopg
    from psycopg import sql
    from warble.dal.migrations import apply_migrations, database_url

    with holding(_lock_name(dbname), host, port, user):
        with _admin_connection(host, port, user) as connection:
            exists = connection.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)
            ).fetchone()
            if not exists:
                try:
                    connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
                    log.info("created database %s", dbname)
                # A creator that does not take the lock (an older checkout): the name is taken,
                # which is all this wanted. PostgreSQL reports the race as either error.
                except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                    pass
        return apply_migrations(database_url(host, port, dbname, user), migrations_dir)


def drop_database(
    dbname: str, host: str = "127.0.0.1", port: int = 5432, user: str = "postgres"
) -> None:
    """Drop `dbname` (if it exists), disconnecting anyone still using it; never while another
    process is creating or migrating it."""
    from psycopg import sql

    with (
        holding(_lock_name(dbname), host, port, user),
        _admin_connection(host, port, user) as connection,
    ):
        connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname))
        )


def proxy_stand_in(resources: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The environment that makes the functions' connections behave as the template's RDS Proxy
    clients: closed by the server once idle for the proxy's IdleClientTimeout, at most
    LOCAL_IDLE_CLIENT_SECONDS. Nothing without an AWS::RDS::DBProxy in the template."""
    timeouts = [
        int((resource.get("Properties") or {}).get("IdleClientTimeout", 1800))
        for resource in resources.values()
        if resource.get("Type") == "AWS::RDS::DBProxy"
    ]
    if not timeouts:
        return {}
    seconds = min([*timeouts, LOCAL_IDLE_CLIENT_SECONDS])
    return {"PGOPTIONS": f"-c idle_session_timeout={seconds * 1000}"}


def _lock_name(dbname: str) -> str:
    return f"warble.prepare_database:{dbname}"
