"""MigrateFunction applies the migrations with credentials read from the master's secret, then
sets each database role's password from its secret (issue 33 item 5)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib.util
import json
import os

import psycopg
import pytest
from warble.settings import get_settings

from infra.local.database import drop_database
from tests.conftest import ROOT, TEST_DB
from tests.integration.test_sample_events import Context

# The roles (warble_reader, ...) and their passwords are the PostgreSQL cluster's, not a
# database's: every test that sets or reads them runs on one xdist worker, one at a time.
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("postgres_roles")]

ROLE_SECRETS = ("DatabaseReaderSecret", "DatabaseAccountsSecret", "DatabaseOperatorSecret")


@pytest.fixture
def empty_database(moto):
    # This worker's own (two workers run this file's tests at once): never the tests' database.
    name = f"{TEST_DB}_migrate"
    drop_database(name)
    with psycopg.connect("host=127.0.0.1 user=postgres dbname=postgres", autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')  # empty: nothing in it
    names = ("DB_NAME", "DB_SECRET_ARN", "DB_SSLMODE", "DB_ROLE_SECRETS")
    saved = {k: os.environ.get(k) for k in names}
    os.environ.update(
        DB_NAME=name,
        DB_SECRET_ARN=moto.values["DatabaseCluster"]["MasterUserSecret.SecretArn"],
        DB_SSLMODE="disable",
        DB_ROLE_SECRETS=",".join(moto.values[s]["Ref"] for s in ROLE_SECRETS),
    )
    get_settings.cache_clear()
    try:
        yield name
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        get_settings.cache_clear()
        drop_database(name)


def test_migrate_function_applies_sql_migrations_once(empty_database):
    spec = importlib.util.spec_from_file_location(
        "migrate_fn", ROOT / "infra/migrations/migrate.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    first = module.handler({}, Context())
    second = module.handler({}, Context())

    every = sorted(
        path.stem
        for path in (ROOT / "infra/migrations").glob("*.sql")
        if not path.stem.endswith(".rollback")
    )
    # in the order of their dependencies (0012's grants need 0020's table)
    assert sorted(first["applied"]) == every and first["applied"][0] == "0001_accounts"
    assert second["applied"] == []
    assert first["roles"] == ["warble_reader", "warble_accounts", "warble_operator"]
    with psycopg.connect(f"host=127.0.0.1 user=postgres dbname={empty_database}") as conn:
        tables = {
            r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname='public'")
        }
    assert {"users", "sessions", "search_prefixes"} <= tables


def _verifies(verifier: str, password: str) -> bool:
    """Whether PostgreSQL's SCRAM-SHA-256 verifier was made from ``password``."""
    method, rest = verifier.split("$", 1)
    iterations_salt, keys = rest.split("$")
    iterations, salt = iterations_salt.split(":")
    stored_key, _ = keys.split(":")
    salted = hashlib.pbkdf2_hmac(
        "sha256", password.encode(), base64.b64decode(salt), int(iterations)
    )
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    return (
        method == "SCRAM-SHA-256"
        and base64.b64encode(hashlib.sha256(client_key).digest()).decode() == stored_key
    )


def test_each_role_gets_the_password_of_its_secret(empty_database, moto):
    """RDS Proxy signs in as each role with its secret's password: MigrateFunction sets it,
    as a SCRAM verifier (the password itself is in no statement)."""
    import boto3

    spec = importlib.util.spec_from_file_location(
        "migrate_fn", ROOT / "infra/migrations/migrate.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.handler({}, Context())
    secrets = boto3.client("secretsmanager", endpoint_url=moto.url, region_name="us-east-1")
    with psycopg.connect("host=127.0.0.1 user=postgres dbname=postgres") as conn:
        for logical_id in ROLE_SECRETS:
            value = json.loads(
                secrets.get_secret_value(SecretId=moto.values[logical_id]["Ref"])["SecretString"]
            )
            row = conn.execute(
                "SELECT rolpassword FROM pg_authid WHERE rolname = %s", (value["username"],)
            ).fetchone()
            assert row is not None and _verifies(row[0], value["password"]), logical_id
