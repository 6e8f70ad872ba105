"""MigrateFunction applies the migrations with credentials read from the database secret."""

from __future__ import annotations

import importlib.util
import os

import psycopg
import pytest
from warble.settings import get_settings

from infra.local.database import drop_database
from tests.conftest import ROOT
from tests.integration.test_sample_events import Context

pytestmark = pytest.mark.integration


@pytest.fixture
def empty_database(moto):
    name = "warble_migrate_test"
    drop_database(name)
    saved = {k: os.environ.get(k) for k in ("DB_NAME", "DB_SECRET_ARN", "DB_SSLMODE")}
    os.environ.update(
        DB_NAME=name,
        DB_SECRET_ARN=moto.values["DatabaseSecret"]["Ref"],
        DB_SSLMODE="disable",
    )
    get_settings.cache_clear()
    # An empty database with nothing in it.
    with psycopg.connect("host=127.0.0.1 user=postgres dbname=postgres", autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    yield name
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
    assert first["applied"] == every and every[0] == "0001_accounts"
    assert second["applied"] == []
    with psycopg.connect(f"host=127.0.0.1 user=postgres dbname={empty_database}") as conn:
        tables = {
            r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname='public'")
        }
    assert {"users", "sessions", "search_prefixes"} <= tables
