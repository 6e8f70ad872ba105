"""The local PostgreSQL database: create it and apply the yoyo migrations, or drop it.

What RDS and MigrateFunction do on AWS, for `serve`, the tests and the benchmarks.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

__all__ = ["MIGRATIONS_DIR", "drop_database", "prepare_database"]

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "infra" / "migrations"


def _admin_connection(host: str, port: int, user: str) -> Any:
    import psycopg

    return psycopg.connect(
        host=host, port=port, user=user, dbname="postgres", autocommit=True, connect_timeout=5
    )


def prepare_database(
    dbname: str,
    host: str = "127.0.0.1",
    port: int = 5432,
    user: str = "postgres",
    *,
    migrations_dir: Path | str = MIGRATIONS_DIR,
) -> list[str]:
    """Create `dbname` if missing and apply the pending yoyo migrations; returns their ids.

    Only `*.sql` files count as migrations: `migrate.py` (MigrateFunction's handler) lives in the
    same folder and must not be mistaken for one. A missing or empty folder applies nothing.
    """
    import psycopg
    from psycopg import sql

    with _admin_connection(host, port, user) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)
        ).fetchone()
        if not exists:
            try:
                connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
                log.info("created database %s", dbname)
            except psycopg.errors.DuplicateDatabase:
                pass  # created concurrently by another worker: fine

    from warble.dal.migrations import apply_migrations, database_url

    return apply_migrations(database_url(host, port, dbname, user), migrations_dir)


def drop_database(
    dbname: str, host: str = "127.0.0.1", port: int = 5432, user: str = "postgres"
) -> None:
    """Drop `dbname` (if it exists), disconnecting anyone still using it."""
    from psycopg import sql

    with _admin_connection(host, port, user) as connection:
        connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname))
        )
