"""Applying the yoyo SQL migrations: one code path for MigrateFunction on AWS and the local runtime.

Only ``*.sql`` files are migrations: MigrateFunction's own handler (``migrate.py``) lives in the
same folder, and yoyo would otherwise load it as a Python migration.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from pathlib import Path
from urllib.parse import quote

from yoyo import get_backend, read_migrations
from yoyo.migrations import MigrationList


def database_url(
    host: str,
    port: int,
    dbname: str,
    user: str,
    password: str = "",
    sslmode: str = "prefer",
    sslrootcert: str = "",
) -> str:
    auth = quote(user, safe="") + (f":{quote(password, safe='')}" if password else "")
    root = f"&sslrootcert={quote(sslrootcert, safe='/')}" if sslrootcert else ""
    return f"postgresql+psycopg://{auth}@{host}:{port}/{dbname}?sslmode={sslmode}{root}"


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


def scram_verifier(password: str, iterations: int = 4096) -> str:
    """PostgreSQL's SCRAM-SHA-256 verifier of ``password`` (what ``pg_authid`` stores): a role's
    password is set from it, so the password itself never travels in a statement (nor lands in
    a log that statements may reach). ``password`` is ASCII, as Secrets Manager generates it
    here, so SASLprep leaves it as it is."""
    salt = os.urandom(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def set_role_passwords(url: str, roles: list[tuple[str, str]]) -> list[str]:
    """Give each (role, password) its password (the roles are the migrations' own: 0011); the
    roles set. RDS Proxy signs in as each role with the password of its secret."""
    import psycopg
    from psycopg import sql

    plain = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        for role, password in roles:
            conn.execute(
                sql.SQL("ALTER ROLE {} WITH LOGIN PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(scram_verifier(password))
                )
            )
    return [role for role, _ in roles]
