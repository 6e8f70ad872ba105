"""The local runtime's service helpers against real services: the moto server
(infra/local/moto_server.py), provisioning (provisioning.py), the database (database.py) and the
PostgreSQL / Redis checks (daemons.py).

moto runs as a real server process, PostgreSQL and Redis are the local ones; databases created
here are dropped again.
"""

from __future__ import annotations

import json
import socket
import textwrap
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from infra.local import database as local_database
from infra.local.daemons import ensure_services
from infra.local.database import drop_database, prepare_database, proxy_stand_in
from infra.local.errors import ServiceUnavailableError
from infra.local.lambdas import LambdaRuntime
from infra.local.moto_server import aws_client, start_moto
from infra.local.provisioning import LOCAL_DB_SECRET, provision
from infra.local.template import ResolveContext, load_template

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

TEMPLATE = """\
AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Resources:
  Timeline:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "${AWS::StackName}-timeline"
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions:
        - {AttributeName: pk, AttributeType: S}
        - {AttributeName: sk, AttributeType: S}
        - {AttributeName: author, AttributeType: S}
      KeySchema:
        - {AttributeName: pk, KeyType: HASH}
        - {AttributeName: sk, KeyType: RANGE}
      GlobalSecondaryIndexes:
        - IndexName: by-author
          KeySchema: [{AttributeName: author, KeyType: HASH}]
          Projection: {ProjectionType: ALL}
      StreamSpecification: {StreamViewType: NEW_IMAGE}
      TimeToLiveSpecification: {AttributeName: expires_at, Enabled: true}
  Unnamed:
    Type: AWS::DynamoDB::Table
    Properties:
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: user_id, AttributeType: N}]
      KeySchema: [{AttributeName: user_id, KeyType: HASH}]
  Failures:
    Type: AWS::SQS::Queue
    Properties:
      MessageRetentionPeriod: 1209600
      SqsManagedSseEnabled: true
  DatabaseSecret:
    Type: AWS::SecretsManager::Secret
    Properties:
      GenerateSecretString: {SecretStringTemplate: '{"username": "warble"}'}
  Database:
    Type: AWS::RDS::DBCluster
    Properties: {Engine: aurora-postgresql, ManageMasterUserPassword: true}
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Handler: app.handler
      Environment:
        Variables:
          TABLE: !Ref Timeline
          STREAM: !GetAtt Timeline.StreamArn
          QUEUE: !Ref Failures
          SECRET: !Ref DatabaseSecret
          MASTER: !GetAtt Database.MasterUserSecret.SecretArn
"""


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    with start_moto(port=0) as server:
        yield server.url


@pytest.fixture
def dbname() -> Iterator[str]:
    name = f"warble_services_{uuid.uuid4().hex[:10]}"
    yield name
    drop_database(name)


def _database_exists(name: str) -> bool:
    with psycopg.connect("host=127.0.0.1 user=postgres dbname=postgres") as connection:
        row = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        return row.fetchone() is not None


# --------------------------------------------------------------------------------------------
# moto
# --------------------------------------------------------------------------------------------


def test_start_moto_answers_until_stopped():
    # given a moto server on a free port
    with start_moto(port=0) as server:
        # then it answers AWS calls
        assert server.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{server.url}/moto-api/", timeout=5) as response:
            assert response.status == 200
        assert aws_client("sqs", server.url).list_queues().get("QueueUrls", []) == []
    # and after the context ends the process is gone and the port is free again
    assert not server.running
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", server.port)) != 0


def test_start_moto_refuses_a_taken_port():
    # given a port someone else listens on
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        # then starting moto there fails with a clear error
        with pytest.raises(ServiceUnavailableError, match="already in use"):
            start_moto(port=port)


def test_provision_creates_the_templates_resources_idempotently(moto_url, tmp_path):
    # given a template with a table using every supported property, an unnamed table, a queue
    # and a generated secret
    path = tmp_path / "template.yaml"
    path.write_text(TEMPLATE)
    template = load_template(path)
    context = ResolveContext(stack_name=f"svc-{uuid.uuid4().hex[:8]}")

    # when it is provisioned twice
    provision(template, moto_url, context)
    provision(template, moto_url, context)

    # then the table has every key, index, stream and TTL setting
    stack = context.stack_name
    dynamodb = aws_client("dynamodb", moto_url)
    table = dynamodb.describe_table(TableName=f"{stack}-timeline")["Table"]
    assert table["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert [i["IndexName"] for i in table["GlobalSecondaryIndexes"]] == ["by-author"]
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    ttl = dynamodb.describe_time_to_live(TableName=f"{stack}-timeline")["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}
    simple = dynamodb.describe_table(TableName=f"{stack}-Unnamed")["Table"]
    assert simple["AttributeDefinitions"] == [{"AttributeName": "user_id", "AttributeType": "N"}]
    # and the queue has its retention period and the stack's default name
    sqs = aws_client("sqs", moto_url)
    failures = context.values["Failures"]
    attributes = sqs.get_queue_attributes(QueueUrl=failures["Ref"], AttributeNames=["All"])[
        "Attributes"
    ]
    assert attributes["MessageRetentionPeriod"] == "1209600"
    assert failures["QueueName"] == f"{stack}-Failures"
    # and a secret holds its template and a generated password, as on AWS ...
    secrets = aws_client("secretsmanager", moto_url)
    secret = secrets.get_secret_value(SecretId=context.values["DatabaseSecret"]["Ref"])
    value = json.loads(secret["SecretString"])
    assert value["username"] == "warble" and len(value["password"]) >= 32
    # ... and the database's master secret (RDS manages it) the local database's credentials
    master_arn = context.values["Database"]["MasterUserSecret.SecretArn"]
    master = secrets.get_secret_value(SecretId=master_arn)
    assert json.loads(master["SecretString"]) == LOCAL_DB_SECRET
    # and the function's environment resolves to what exists
    environment = template.resolve(template.functions["Fn"].environment, context)
    assert environment == {
        "TABLE": f"{stack}-timeline",
        "STREAM": table["LatestStreamArn"],
        "QUEUE": failures["Ref"],
        "SECRET": secret["ARN"],
        "MASTER": master_arn,
    }


def test_provision_handles_the_project_template(moto_url):
    # given the real template.yaml
    template = load_template(ROOT / "template.yaml")
    context = ResolveContext(stack_name=f"warble-{uuid.uuid4().hex[:8]}")

    # when it is provisioned
    provision(template, moto_url, context)

    # then every table exists and every function's environment resolves
    dynamodb = aws_client("dynamodb", moto_url)
    tables = [
        logical_id
        for logical_id, resource in template.resources.items()
        if resource.get("Type") == "AWS::DynamoDB::Table"
    ]
    assert tables
    for logical_id in tables:
        name = context.values[logical_id]["Ref"]
        assert dynamodb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"
    for spec in template.functions.values():
        template.resolve(spec.environment, context)


# --------------------------------------------------------------------------------------------
# PostgreSQL
# --------------------------------------------------------------------------------------------


def test_prepare_database_applies_sql_migrations_once(dbname, tmp_path):
    # given a migrations folder with a migration, its rollback, and a handler module that
    # must never be taken for a migration
    (tmp_path / "0001_things.sql").write_text(
        textwrap.dedent(
            """\
            -- depends:
            CREATE TABLE things (id BIGINT PRIMARY KEY);
            """
        )
    )
    (tmp_path / "0001_things.rollback.sql").write_text("DROP TABLE things;\n")
    (tmp_path / "migrate.py").write_text("raise RuntimeError('imported as a migration')\n")

    # when the database is prepared twice
    first = prepare_database(dbname, migrations_dir=tmp_path)
    second = prepare_database(dbname, migrations_dir=tmp_path)

    # then the migration ran once and its table exists
    assert (first, second) == (["0001_things"], [])
    with psycopg.connect(f"host=127.0.0.1 user=postgres dbname={dbname}") as connection:
        assert connection.execute("SELECT count(*) FROM things").fetchone() == (0,)


def test_prepare_database_without_migrations_creates_an_empty_database(dbname, tmp_path):
    # given no migrations yet (an empty folder, or none at all)
    assert prepare_database(dbname, migrations_dir=tmp_path) == []
    assert prepare_database(dbname, migrations_dir=tmp_path / "missing") == []
    # then the database exists
    assert _database_exists(dbname)


def test_prepare_database_from_concurrent_creators_creates_it_once(dbname, tmp_path):
    # given a migration, and eight processes' worth of creators released at the same instant
    # (issue 34: two `invoke` runs raced from "missing" to CREATE DATABASE, and the loser got
    # UniqueViolation on pg_database's name index)
    (tmp_path / "0001_things.sql").write_text("-- depends:\nCREATE TABLE things (id BIGINT);\n")
    creators = 8
    start = threading.Barrier(creators)

    def create() -> list[str]:
        start.wait()
        return prepare_database(dbname, migrations_dir=tmp_path)

    # when they all prepare the same database
    with ThreadPoolExecutor(creators) as pool:
        applied = list(pool.map(lambda _: create(), range(creators)))

    # then none failed, and the migration ran once
    assert sorted(applied) == [[]] * (creators - 1) + [["0001_things"]]
    assert _database_exists(dbname)


def test_prepare_database_applies_the_project_migrations_and_drop_removes_it(dbname):
    # when a database is prepared from infra/migrations
    applied = prepare_database(dbname)

    # then the project's schema is there
    assert applied
    connection = psycopg.connect(f"host=127.0.0.1 user=postgres dbname={dbname}", autocommit=True)
    assert connection.execute("SELECT count(*) FROM users").fetchone() == (0,)
    # and drop_database removes it even while a connection is still open
    drop_database(dbname)
    connection.close()
    assert not _database_exists(dbname)


def test_the_functions_connect_as_clients_of_the_rds_proxy_stand_in():
    # given the project's template, whose functions reach PostgreSQL through an RDS Proxy
    template = load_template(ROOT / "template.yaml")
    # when the local runtime prepares a worker's environment
    env = LambdaRuntime(template, ResolveContext()).environment_for("AccountsFunction")
    # then the server closes the worker's connection once idle, as the proxy closes its clients
    timeout = local_database.LOCAL_IDLE_CLIENT_SECONDS * 1000
    assert env["PGOPTIONS"] == f"-c idle_session_timeout={timeout}"
    # and a template without a proxy gets nothing of the kind
    assert proxy_stand_in({"Bucket": {"Type": "AWS::S3::Bucket"}}) == {}


def test_a_connection_closed_by_the_proxy_stand_in_is_replaced_on_the_next_call(monkeypatch):
    from warble.dal.postgres import Database

    # given a function's connection made with the stand-in's options (a 1 s idle limit)
    monkeypatch.setattr(local_database, "LOCAL_IDLE_CLIENT_SECONDS", 1)
    (options,) = proxy_stand_in({"Proxy": {"Type": "AWS::RDS::DBProxy"}}).values()
    monkeypatch.setenv("PGOPTIONS", options)
    database = Database(lambda: "host=127.0.0.1 user=postgres dbname=postgres")
    first = database.run(lambda conn: conn.execute("SELECT pg_backend_pid() AS pid").fetchone())
    try:
        # when it stays idle past the limit, the server ends the session
        watcher = psycopg.connect(
            "host=127.0.0.1 user=postgres dbname=postgres",
            autocommit=True,
            options="-c idle_session_timeout=0",
        )
        with watcher:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                alive = watcher.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE pid = %s", (first["pid"],)
                ).fetchone()
                if alive is None:
                    break
                time.sleep(0.2)
            assert alive is None
        # then the next call answers, on a new connection
        second = database.run(
            lambda conn: conn.execute("SELECT pg_backend_pid() AS pid").fetchone()
        )
        assert second["pid"] != first["pid"]
    finally:
        database.close()


# --------------------------------------------------------------------------------------------
# liveness
# --------------------------------------------------------------------------------------------


def test_ensure_services_passes_when_postgres_and_redis_answer():
    ensure_services(start=False, timeout=5)


def test_ensure_services_names_the_service_that_does_not_answer():
    # given a Redis port nothing listens on
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead_port = probe.getsockname()[1]

    # then the error says which service is down
    with pytest.raises(ServiceUnavailableError, match=r"Redis does not answer") as error:
        ensure_services(redis_port=dead_port, timeout=1)
    assert "PostgreSQL" not in str(error.value)


def test_an_s3_event_given_up_goes_to_the_functions_dead_letter_queue(moto):
    """MediaFunction's DeadLetterQueue (issue 33 item 9; its retry queue since issue 40), as the
    local runtime keeps it: the event of an invocation given up, with its error, as Lambda sends
    it."""
    from infra.local.s3_endpoint import S3Endpoint
    from infra.local.template import ResolveContext, load_template
    from tests.conftest import ROOT

    template = load_template(ROOT / "template.yaml")
    context = ResolveContext(stack_name="warble-test", values=moto.values)
    endpoint = S3Endpoint(template, context, moto.url, "127.0.0.1", 0)
    event = {"Records": [{"s3": {"object": {"key": "uploads/1/2"}}}]}
    endpoint._dead_letter("MediaFunction", event, {"errorMessage": "cannot decode"})
    sqs = aws_client("sqs", moto.url)
    queue = moto.values["MediaRetryQueue"]["Ref"]
    (message,) = sqs.receive_message(QueueUrl=queue, MessageAttributeNames=["All"])["Messages"]
    assert json.loads(message["Body"]) == event
    assert message["MessageAttributes"]["ErrorMessage"]["StringValue"] == "cannot decode"
