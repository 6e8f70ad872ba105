"""Applying the yoyo SQL migrations: one code path for MigrateFunction on AWS and the local runtime.

Only ``*.sql`` files are migrations: MigrateFunction's own handler (``migrate.py``) lives in the
same folder, and yoyo would otherwise load it as a Python migration.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from yoyo import get_backend, read_migrations
from yoyo.migrations import MigrationList


def database_url(
    host: str, port: int, dbname: str, user: str, password: str = "", sslmode: str = "prefer"
) -> str:
    auth = quote(user, safe="") + (f":{quote(password, safe='')}" if password else "")
    return f"postgresql+psycopg://{auth}@{host}:{port}/{dbname}?sslmode={sslmode}"


def apply_migrations(url: str, directory: Path | str) -> list[str]:
    """Apply the pending migrations under a lock; returns the ids applied."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    everything = read_migrations(str(directory))
    migrations = MigrationList(
        [m for m in everything if m.path.endswith(".sql")],
        [m for m in everything.post_apply if m.path.endswith(".sql")],
    )
    if not migrations and not migrations.post_apply:
        return []
    backend = get_backend(url)
    try:
        with backend.lock():
            pending = backend.to_apply(migrations)
            backend.apply_migrations(pending)
            return [m.id for m in pending]
    finally:
        backend.connection.close()
