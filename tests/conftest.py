"""Fixtures shared by every tier: a PostgreSQL database and a Redis index of the test run's own.

Each pytest-xdist worker gets its own database (``warble_test_<worker>``) and Redis index, so
workers never see each other's data. In-process code reads its settings from the environment
set here; the local runtime started by the e2e tier gets the same values through its env file.

Tests marked ``redis`` run twice: on the single Redis node, and on a local 3-node Redis Cluster
(started once per worker on first use, with ``REDIS_CLUSTER=true`` so the code's cluster client
is the one under test). The cluster instances carry the ``cluster`` marker: ``-m cluster``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import redis as redis_lib
from redis.cluster import RedisCluster

from tests.support.redis_cluster import LocalCluster, start_cluster
from tests.support.slots import SlotRecorder

ROOT = Path(__file__).resolve().parent.parent


def _worker_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(worker.removeprefix("gw") or 0)


# Two checkouts may run their suites at once on one machine: each then sets its own database
# prefix and Redis port (WARBLE_TEST_DB_PREFIX, WARBLE_TEST_REDIS_PORT); the defaults suit one.
DB_PREFIX = os.environ.get("WARBLE_TEST_DB_PREFIX", "warble")
REDIS_PORT = int(os.environ.get("WARBLE_TEST_REDIS_PORT", "6379"))
TEST_DB = f"{DB_PREFIX}_test_{_worker_index()}"
TEST_REDIS_DB = 1 + _worker_index()
TEST_REDIS_URL = f"redis://127.0.0.1:{REDIS_PORT}/{TEST_REDIS_DB}"
# The first port a worker's cluster tries (it moves up past taken ones; each node also needs its
# bus port, +10000). WARBLE_TEST_CLUSTER_PORT moves a checkout's clusters elsewhere.
CLUSTER_FIRST_PORT = int(os.environ.get("WARBLE_TEST_CLUSTER_PORT", "7000")) + 10 * _worker_index()

# Values the code under test reads (through warble.settings) in this process.
TEST_ENV = {
    "DB_SECRET_ARN": "",
    "DB_HOST": "127.0.0.1",
    "DB_NAME": TEST_DB,
    "DB_USER": "postgres",
    "REDIS_URL": TEST_REDIS_URL,
    "REDIS_CLUSTER": "false",
    "PASSWORD_HASH_ROUNDS": "4",
    # Every test acts from one address and few users: budgets out of reach (the rate-limit
    # tests lower them for themselves).
    "RATE_LIMIT_USER_REQUESTS": "1000000",
    "RATE_LIMIT_SIGNUP_IP_REQUESTS": "1000000",
    "RATE_LIMIT_LOGIN_IP_REQUESTS": "1000000",
    "POWERTOOLS_TRACE_DISABLED": "1",
    "POWERTOOLS_SERVICE_NAME": "warble-tests",
    "POWERTOOLS_METRICS_NAMESPACE": "WarbleTests",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
}


# Powertools reads its service name and metric namespace when a Logger or Metrics is built,
# which is at import: test modules import the entry points while being collected, before any
# fixture runs. So these few are set as this file loads (Lambda sets them before import too).
for _name in (
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_TRACE_DISABLED",
):
    os.environ.setdefault(_name, TEST_ENV[_name])


@pytest.fixture(scope="session", autouse=True)
def test_environment() -> Iterator[dict[str, str]]:
    saved = {key: os.environ.get(key) for key in TEST_ENV}
    os.environ.update(TEST_ENV)
    from warble.settings import get_settings

    get_settings.cache_clear()
    yield TEST_ENV
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def database() -> Iterator[str]:
    """A freshly migrated database for this test session."""
    from infra.local.database import drop_database, prepare_database

    drop_database(TEST_DB)
    prepare_database(TEST_DB)
    yield TEST_DB


@pytest.fixture
def pg(database: str) -> Iterator[psycopg.Connection]:
    """A clean schema for one test (tables truncated before it runs)."""
    with psycopg.connect(
        f"host=127.0.0.1 user=postgres dbname={database}", autocommit=True
    ) as conn:
        conn.execute("TRUNCATE users, sessions CASCADE")
        yield conn


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("redis") is not None:
        metafunc.parametrize(
            "redis_backend",
            ["single", pytest.param("cluster", marks=pytest.mark.cluster)],
            indirect=True,
        )


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalCluster]:
    """This worker's 3-node Redis Cluster, started on first use and stopped after the session."""
    cluster = start_cluster(CLUSTER_FIRST_PORT)
    yield cluster
    cluster.stop()


def _forget_clients() -> None:
    """Drop every client and store built from the previous settings (they are cached)."""
    from warble import services

    services.reset()


@contextmanager
def redis_pointed_at(url: str, cluster: bool) -> Iterator[None]:
    """The code under test uses the Redis at ``url`` (REDIS_URL, REDIS_CLUSTER) while inside,
    with clients built afresh on the way in and out."""
    saved = {name: os.environ.get(name) for name in ("REDIS_URL", "REDIS_CLUSTER")}
    os.environ.update({"REDIS_URL": url, "REDIS_CLUSTER": "true" if cluster else "false"})
    _forget_clients()
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _forget_clients()


@pytest.fixture
def redis_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """ "single" (this worker's index on one node) or "cluster" (REDIS_URL and REDIS_CLUSTER
    pointed at this worker's cluster for the test, so the container builds a cluster client)."""
    backend = getattr(request, "param", "single")
    if backend == "single":
        yield backend
        return
    cluster: LocalCluster = request.getfixturevalue("redis_cluster")
    with redis_pointed_at(cluster.url, cluster=True):
        yield backend


@pytest.fixture(autouse=True)
def one_slot_per_atomic_unit(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SlotRecorder | None]:
    """In tests marked ``redis``, every several-key command and MULTI block this process sends
    must stay in one slot. The cluster refuses most that do not, but a single node accepts them
    all and redis-py splits a several-key DEL or EXISTS across slots silently."""
    if request.node.get_closest_marker("redis") is None:
        yield None
        return
    recorder = SlotRecorder()
    recorder.install(monkeypatch)
    yield recorder
    crossing = recorder.crossing()
    assert not crossing, f"atomic Redis operations across hash slots: {crossing}"


@pytest.fixture
def redis(redis_backend: str) -> Iterator[redis_lib.Redis | RedisCluster]:
    """The Redis the code under test uses, emptied before the test: this worker's index on the
    single node, or every primary of this worker's cluster."""
    client: redis_lib.Redis | RedisCluster
    if redis_backend == "cluster":
        client = RedisCluster.from_url(os.environ["REDIS_URL"], decode_responses=True)
        client.flushall(target_nodes=RedisCluster.PRIMARIES)
    else:
        client = redis_lib.Redis.from_url(TEST_REDIS_URL, decode_responses=True)
        client.flushdb()
    yield client
    client.close()


@dataclass
class MotoStack:
    url: str
    values: dict[str, dict]  # per logical id: the names and ARNs moto gave the template's resources


@pytest.fixture(scope="session")
def moto(test_environment) -> Iterator[MotoStack]:
    """A moto server holding the template's tables; AWS clients in this process point at it."""
    from infra.local.moto_server import start_moto
    from infra.local.provisioning import provision
    from infra.local.template import ResolveContext, load_template

    template = load_template(ROOT / "template.yaml")
    context = ResolveContext(stack_name="warble-test")
    with start_moto(port=0) as server:
        provision(template, server.url, context)
        env = {
            "AWS_ENDPOINT_URL": server.url,
            # No WebSocket gateway in this tier: moto's @connections stand-in answers.
            "WEBSOCKET_CALLBACK_URL": server.url,
        }
        # Every table variable the functions get (CONNECTIONS_TABLE, GRAPH_TABLE, ...), as the
        # template declares it.
        declared = template.globals.get("Function", {}).get("Environment", {}).get("Variables", {})
        for name, value in declared.items():
            if isinstance(value, dict) and value.get("Ref") in context.values:
                env[name] = str(context.values[value["Ref"]]["Ref"])
            elif name.endswith("_BUCKET"):  # named by !Sub (MEDIA_BUCKET)
                env[name] = str(template.resolve(value, context))
        os.environ.update(env)
        from warble.settings import get_settings

        get_settings.cache_clear()
        yield MotoStack(server.url, context.values)
        for key in env:
            os.environ.pop(key, None)
        get_settings.cache_clear()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The contract fuzzing figures (tests/e2e/test_contract_fuzz.py). Here in the root
    conftest, because under pytest-xdist only the controller prints, and it reads the figures
    from the reports its workers sent (their ``user_properties``)."""
    runs = [
        (report, dict(value))
        for reports in terminalreporter.stats.values()
        for report in reports
        if getattr(report, "when", None) == "call"
        for name, value in getattr(report, "user_properties", ())
        if name == "contract_fuzz"
    ]
    if not runs:
        return
    operations = {figures["operation"] for _, figures in runs}
    examples = sum(int(figures["examples"]) for _, figures in runs)
    failing = sorted(f"{f['operation']} ({f['mode']})" for r, f in runs if r.failed)
    skipped = sum(1 for report, _ in runs if report.skipped)
    terminalreporter.write_sep("-", "contract fuzzing (schemathesis)")
    terminalreporter.write_line(
        f"{len(operations)} operations, {len(runs)} runs (valid and invalid requests), "
        f"{examples} examples, {len(failing)} failing runs, {skipped} with nothing to generate"
    )
    for run in failing:
        terminalreporter.write_line(f"  failing: {run}")
