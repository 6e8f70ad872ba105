"""Local stand-ins for the AWS services the stack uses, and the local PostgreSQL and Redis.

`start_moto` runs a moto server in a child process, `provision` creates the template's DynamoDB
tables, SQS queues, SNS topics and secrets in it (filling `ResolveContext.values` so environment
variables resolve to the real names and ARNs), `prepare_database` creates a database and applies
the yoyo migrations, and `ensure_services` makes sure PostgreSQL and Redis answer.
"""

from __future__ import annotations

import atexit
import collections
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from types import TracebackType

    from infra.local.template import ResolveContext, Template

__all__ = [
    "LOCAL_DB_SECRET",
    "MIGRATIONS_DIR",
    "MotoServer",
    "ServiceUnavailableError",
    "aws_client",
    "drop_database",
    "ensure_services",
    "prepare_database",
    "provision",
    "start_moto",
]

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[2]
MIGRATIONS_DIR = REPO_ROOT / "infra" / "migrations"

# What every AWS::SecretsManager::Secret holds locally (architecture.md, DB_SECRET_ARN).
LOCAL_DB_SECRET: dict[str, Any] = {
    "username": "postgres",
    "password": "",
    "engine": "postgres",
    "host": "127.0.0.1",
    "port": 5432,
}

# moto accepts any credentials; fixed dummy ones keep a developer's real profile out of the way.
_DUMMY_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


class ServiceUnavailableError(RuntimeError):
    """A local service (moto, PostgreSQL, Redis) does not answer and could not be started."""


# --------------------------------------------------------------------------------------------
# moto server
# --------------------------------------------------------------------------------------------

# The child runs moto's own CLI entry point, plus a watchdog thread that exits when the parent
# dies: a killed test run or gateway must not leave an orphan server holding the port.
_MOTO_BOOTSTRAP = """
import os, sys, threading, time
parent = int(sys.argv[1])
def _watch():
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)
threading.Thread(target=_watch, daemon=True).start()
# Atomic, isolated TransactWriteItems (infra/local/moto_patches.py explains why).
sys.path.insert(0, os.environ["WARBLE_REPO_ROOT"])
from infra.local.moto_patches import install
install()
from moto.server import main
main(sys.argv[2:])
"""


@dataclass
class MotoServer:
    """A moto server running in a child process (so it never competes for our GIL)."""

    host: str
    port: int
    process: subprocess.Popen[str]
    _output: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=200))

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def output_tail(self) -> str:
        """The last lines moto printed (request log and tracebacks), for error messages."""
        return "".join(self._output)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the server; safe to call twice."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)

    def __enter__(self) -> MotoServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def _answers_http(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP answer, even 404, means the server is up
    except (urllib.error.URLError, OSError):
        return False


def start_moto(port: int = 5005, host: str = "127.0.0.1", *, timeout: float = 30.0) -> MotoServer:
    """Start `python -m moto.server` in a child process and wait until it answers.

    `port=0` picks a free port (tests use it so they never collide with a running `serve`).
    Raises ServiceUnavailableError if the port is taken or the server does not come up.
    """
    if port == 0:
        port = _free_port(host)
    elif _port_in_use(host, port):
        raise ServiceUnavailableError(
            f"port {host}:{port} is already in use; stop whatever holds it or choose another "
            "moto port"
        )
    env = dict(os.environ)
    # Werkzeug's reloader would fork a second server; moto's debug pages are not wanted either.
    env.pop("WERKZEUG_RUN_MAIN", None)
    env["MOTO_PORT"] = str(port)
    env["WARBLE_REPO_ROOT"] = str(REPO_ROOT)
    process = subprocess.Popen(
        [sys.executable, "-c", _MOTO_BOOTSTRAP, str(os.getpid()), "-H", host, "-p", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        # Its own session: Ctrl-C in the terminal must not kill moto before `serve` has let the
        # last $disconnect handlers run (the watchdog above still ends it if we die).
        start_new_session=True,
    )
    server = MotoServer(host=host, port=port, process=process)

    def drain() -> None:
        # Keep only a tail: moto logs every request and a long `serve` must not grow memory.
        assert process.stdout is not None
        for line in process.stdout:
            server._output.append(line)

    threading.Thread(target=drain, name=f"moto-{port}-output", daemon=True).start()
    atexit.register(server.stop)

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServiceUnavailableError(
                f"moto server exited with code {process.returncode}:\n{server.output_tail()}"
            )
        if _answers_http(f"{server.url}/moto-api/"):
            return server
        time.sleep(0.1)
    server.stop()
    raise ServiceUnavailableError(
        f"moto server on {server.url} did not answer within {timeout:.0f} s:\n"
        f"{server.output_tail()}"
    )


def aws_client(service: str, endpoint_url: str, region: str = "us-east-1") -> Any:
    """A boto3 client for the moto server at `endpoint_url` with dummy credentials."""
    return boto3.client(
        service,  # type: ignore[call-overload]
        endpoint_url=endpoint_url,
        region_name=region,
        config=Config(
            retries={"max_attempts": 3, "mode": "standard"},
            connect_timeout=5,
            read_timeout=30,
        ),
        **_DUMMY_CREDENTIALS,
    )


# --------------------------------------------------------------------------------------------
# provisioning from the template
# --------------------------------------------------------------------------------------------

_TABLE_TYPES = ("AWS::DynamoDB::Table", "AWS::Serverless::SimpleTable")
_QUEUE_TYPE = "AWS::SQS::Queue"
_TOPIC_TYPE = "AWS::SNS::Topic"
_SECRET_TYPE = "AWS::SecretsManager::Secret"
_PROVISIONED_TYPES = (*_TABLE_TYPES, _QUEUE_TYPE, _TOPIC_TYPE, _SECRET_TYPE)


def _references(value: Any) -> set[str]:
    """Logical ids that `value` refers to through Ref, Fn::GetAtt or Fn::Sub."""
    found: set[str] = set()
    if isinstance(value, list):
        for item in value:
            found |= _references(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key == "Ref" and isinstance(item, str):
                found.add(item)
            elif key == "Fn::GetAtt":
                target = item[0] if isinstance(item, list) and item else str(item).split(".")[0]
                if isinstance(target, str):
                    found.add(target)
            elif key == "Fn::Sub":
                text = item[0] if isinstance(item, list) and item else item
                if isinstance(text, str):
                    for name in _sub_names(text):
                        found.add(name.split(".")[0])
                if isinstance(item, list) and len(item) > 1:
                    found |= _references(item[1])
            else:
                found |= _references(item)
    return found


def _sub_names(text: str) -> list[str]:
    names = []
    start = text.find("${")
    while start != -1:
        end = text.find("}", start)
        if end == -1:
            break
        name = text[start + 2 : end].strip()
        if not name.startswith("!"):
            names.append(name)
        start = text.find("${", end)
    return names


def _provision_order(template: Template) -> list[str]:
    """The resources we create, each after the ones it refers to (e.g. a queue's DLQ)."""
    wanted = {
        logical_id
        for logical_id, resource in template.resources.items()
        if resource.get("Type") in _PROVISIONED_TYPES
    }
    order: list[str] = []
    visiting: set[str] = set()

    def visit(logical_id: str) -> None:
        if logical_id in order or logical_id in visiting:
            return  # already placed, or a cycle CloudFormation itself would reject
        visiting.add(logical_id)
        resource = template.resources[logical_id]
        depends = resource.get("DependsOn") or []
        depends = [depends] if isinstance(depends, str) else list(depends)
        for dependency in sorted((_references(resource) | set(depends)) & wanted):
            visit(dependency)
        visiting.discard(logical_id)
        order.append(logical_id)

    for logical_id in sorted(wanted):
        visit(logical_id)
    return order


def _resolved_properties(
    template: Template, logical_id: str, keys: tuple[str, ...], context: ResolveContext
) -> dict[str, Any]:
    """Resolve only the properties we use, so an exotic unrelated property cannot break us."""
    properties = template.resources[logical_id].get("Properties") or {}
    picked = {key: properties[key] for key in keys if key in properties}
    return template.resolve(picked, context) or {}


def _default_name(logical_id: str, context: ResolveContext) -> str:
    # CloudFormation would add a random suffix; the stack prefix keeps two local stacks (a test's
    # and a developer's `serve`) apart in one moto server.
    return f"{context.stack_name}-{logical_id}"


def _throughput(value: Any) -> dict[str, int]:
    return {
        "ReadCapacityUnits": int(value.get("ReadCapacityUnits", 5)),
        "WriteCapacityUnits": int(value.get("WriteCapacityUnits", 5)),
    }


def _table_request(
    template: Template, logical_id: str, context: ResolveContext
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The CreateTable request for a table resource and its TTL specification."""
    rtype = template.resources[logical_id]["Type"]
    if rtype == "AWS::Serverless::SimpleTable":
        props = _resolved_properties(
            template, logical_id, ("TableName", "PrimaryKey", "ProvisionedThroughput"), context
        )
        key = props.get("PrimaryKey") or {"Name": "id", "Type": "String"}
        attribute_type = {"String": "S", "Number": "N", "Binary": "B"}[key.get("Type", "String")]
        request: dict[str, Any] = {
            "TableName": props.get("TableName") or _default_name(logical_id, context),
            "KeySchema": [{"AttributeName": key["Name"], "KeyType": "HASH"}],
            "AttributeDefinitions": [
                {"AttributeName": key["Name"], "AttributeType": attribute_type}
            ],
        }
        if "ProvisionedThroughput" in props:
            request["BillingMode"] = "PROVISIONED"
            request["ProvisionedThroughput"] = _throughput(props["ProvisionedThroughput"])
        else:
            request["BillingMode"] = "PAY_PER_REQUEST"
        return request, None

    props = _resolved_properties(
        template,
        logical_id,
        (
            "TableName",
            "KeySchema",
            "AttributeDefinitions",
            "BillingMode",
            "ProvisionedThroughput",
            "GlobalSecondaryIndexes",
            "LocalSecondaryIndexes",
            "StreamSpecification",
            "TimeToLiveSpecification",
        ),
        context,
    )
    # CloudFormation defaults to PROVISIONED, which needs throughput; without any locally we
    # fall back to on-demand, which behaves the same in moto.
    billing = props.get("BillingMode") or (
        "PROVISIONED" if "ProvisionedThroughput" in props else "PAY_PER_REQUEST"
    )
    request = {
        "TableName": props.get("TableName") or _default_name(logical_id, context),
        "KeySchema": props["KeySchema"],
        "AttributeDefinitions": props["AttributeDefinitions"],
        "BillingMode": billing,
    }
    if billing == "PROVISIONED":
        request["ProvisionedThroughput"] = _throughput(props.get("ProvisionedThroughput") or {})
    indexes = []
    for index in props.get("GlobalSecondaryIndexes") or []:
        # CloudFormation-only keys (ContributorInsightsSpecification, ...) are not API fields.
        gsi = {key: index[key] for key in ("IndexName", "KeySchema", "Projection") if key in index}
        if billing == "PROVISIONED":
            gsi["ProvisionedThroughput"] = _throughput(index.get("ProvisionedThroughput") or {})
        indexes.append(gsi)
    if indexes:
        request["GlobalSecondaryIndexes"] = indexes
    local_indexes = [
        {key: index[key] for key in ("IndexName", "KeySchema", "Projection") if key in index}
        for index in props.get("LocalSecondaryIndexes") or []
    ]
    if local_indexes:
        request["LocalSecondaryIndexes"] = local_indexes
    stream = props.get("StreamSpecification")
    if stream and stream.get("StreamViewType"):
        request["StreamSpecification"] = {
            "StreamEnabled": True,
            "StreamViewType": stream["StreamViewType"],
        }
    return request, props.get("TimeToLiveSpecification")


def _provision_table(
    dynamodb: Any, template: Template, logical_id: str, context: ResolveContext
) -> dict[str, Any]:
    request, ttl = _table_request(template, logical_id, context)
    name = request["TableName"]
    try:
        description = dynamodb.create_table(**request)["TableDescription"]
        log.info("created table %s", name)
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceInUseException":
            raise
        description = dynamodb.describe_table(TableName=name)["Table"]
    if ttl and _truthy(ttl.get("Enabled", True)) and ttl.get("AttributeName"):
        current = dynamodb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
        if current.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
            dynamodb.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl["AttributeName"]},
            )
    values: dict[str, Any] = {"Ref": name, "Arn": description["TableArn"]}
    if description.get("LatestStreamArn"):
        values["StreamArn"] = description["LatestStreamArn"]
    return values


def _truthy(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _attribute_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


_QUEUE_ATTRIBUTES = (
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "DelaySeconds",
    "FifoQueue",
    "FifoThroughputLimit",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "RedriveAllowPolicy",
    "RedrivePolicy",
    "VisibilityTimeout",
)


def _provision_queue(
    sqs: Any, template: Template, logical_id: str, context: ResolveContext
) -> dict[str, Any]:
    props = _resolved_properties(template, logical_id, ("QueueName", *_QUEUE_ATTRIBUTES), context)
    name = props.get("QueueName") or _default_name(logical_id, context)
    fifo = _truthy(props.get("FifoQueue", False))
    if fifo and not name.endswith(".fifo"):
        name += ".fifo"
    attributes = {key: _attribute_text(props[key]) for key in _QUEUE_ATTRIBUTES if key in props}
    if not fifo:
        attributes.pop("FifoQueue", None)
    try:
        url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    except ClientError as exc:
        # Re-provisioning with changed attributes: keep the queue (and its messages).
        if "QueueAlreadyExists" not in exc.response["Error"]["Code"]:
            raise
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    return {"Ref": url, "Arn": arn, "QueueName": name, "QueueUrl": url}


def _provision_topic(
    sns: Any, template: Template, logical_id: str, context: ResolveContext
) -> dict[str, Any]:
    props = _resolved_properties(template, logical_id, ("TopicName", "FifoTopic"), context)
    name = props.get("TopicName") or _default_name(logical_id, context)
    attributes = {"FifoTopic": "true"} if _truthy(props.get("FifoTopic", False)) else {}
    arn = sns.create_topic(Name=name, Attributes=attributes)["TopicArn"]  # idempotent in SNS
    return {"Ref": arn, "TopicArn": arn, "TopicName": name}


def _provision_secret(
    secrets: Any,
    template: Template,
    logical_id: str,
    context: ResolveContext,
    db_secret: dict[str, Any],
) -> dict[str, Any]:
    props = _resolved_properties(template, logical_id, ("Name", "SecretString"), context)
    name = props.get("Name") or _default_name(logical_id, context)
    # A literal SecretString is the template's own value; a generated one (the DB password on
    # AWS) becomes the local database credentials.
    value = props.get("SecretString")
    text = value if isinstance(value, str) else json.dumps(db_secret)
    try:
        arn = secrets.create_secret(Name=name, SecretString=text)["ARN"]
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceExistsException":
            raise
        arn = secrets.put_secret_value(SecretId=name, SecretString=text)["ARN"]
    return {"Ref": arn, "Id": arn, "Name": name}


def provision(
    template: Template,
    endpoint_url: str,
    context: ResolveContext,
    *,
    db_secret: dict[str, Any] | None = None,
) -> None:
    """Create the template's tables, queues, topics and secrets in moto; idempotent.

    Fills `context.values[logical_id]` with the real names and ARNs ({"Ref", "Arn",
    "StreamArn", ...}) so that `template.resolve` gives functions the right environment.
    Resources without an explicit name are called `<stack>-<LogicalId>`.
    """
    region = context.region
    clients: dict[str, Any] = {}

    def client(service: str) -> Any:
        if service not in clients:
            clients[service] = aws_client(service, endpoint_url, region)
        return clients[service]

    secret_value = db_secret if db_secret is not None else LOCAL_DB_SECRET
    for logical_id in _provision_order(template):
        rtype = template.resources[logical_id]["Type"]
        if rtype in _TABLE_TYPES:
            values = _provision_table(client("dynamodb"), template, logical_id, context)
        elif rtype == _QUEUE_TYPE:
            values = _provision_queue(client("sqs"), template, logical_id, context)
        elif rtype == _TOPIC_TYPE:
            values = _provision_topic(client("sns"), template, logical_id, context)
        else:
            values = _provision_secret(
                client("secretsmanager"), template, logical_id, context, secret_value
            )
        context.values.setdefault(logical_id, {}).update(values)


# --------------------------------------------------------------------------------------------
# PostgreSQL
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# PostgreSQL and Redis liveness
# --------------------------------------------------------------------------------------------

_DEFAULT_PORTS = {"PostgreSQL": 5432, "Redis": 6379}
_PG_START = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
_REDIS_START = (
    'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no '
    "--dir /var/lib/redis --logfile /var/log/redis/ci.log"
)


def _postgres_answers(host: str, port: int, user: str) -> str | None:
    """None when PostgreSQL answers a query, else the reason it does not."""
    import psycopg

    try:
        with psycopg.connect(
            host=host, port=port, user=user, dbname="postgres", connect_timeout=2
        ) as connection:
            connection.execute("SELECT 1")
        return None
    except psycopg.Error as exc:
        return str(exc).strip() or type(exc).__name__


def _redis_answers(host: str, port: int) -> str | None:
    """None when Redis answers PING, else the reason it does not."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # No client-side retries: a dead port must be reported at once, not after back-off.
    client = redis.Redis(
        host=host,
        port=port,
        socket_connect_timeout=2,
        socket_timeout=2,
        retry=Retry(NoBackoff(), 0),
    )
    try:
        client.ping()
        return None
    except redis.RedisError as exc:
        return str(exc) or type(exc).__name__
    finally:
        client.close()


def _run_start_command(command: str) -> str:
    try:
        completed = subprocess.run(
            command, shell=True, capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{command!r} failed: {exc}"
    output = (completed.stdout + completed.stderr).strip()
    return f"{command!r} exited {completed.returncode}" + (f": {output}" if output else "")


def ensure_services(
    *,
    pg_host: str = "127.0.0.1",
    pg_port: int = 5432,
    pg_user: str = "postgres",
    redis_host: str = "127.0.0.1",
    redis_port: int = 6379,
    start: bool = True,
    timeout: float = 30.0,
) -> None:
    """Make sure PostgreSQL and Redis answer; start them with the documented commands if not.

    The start commands only know this machine and the default ports, so they are tried only
    for a local host on 5432 / 6379.
    Raises ServiceUnavailableError naming what failed and what was tried.
    """
    checks = [
        ("PostgreSQL", lambda: _postgres_answers(pg_host, pg_port, pg_user), pg_host, pg_port),
        ("Redis", lambda: _redis_answers(redis_host, redis_port), redis_host, redis_port),
    ]
    problems: dict[str, str] = {}
    for name, check, host, port in checks:
        command = _PG_START if name == "PostgreSQL" else _REDIS_START
        startable = port == _DEFAULT_PORTS[name] and host in ("127.0.0.1", "localhost", "::1")
        reason = check()
        if reason is None:
            continue
        attempts = [f"{name} does not answer: {reason}"]
        if start and startable:
            if name == "Redis":
                for directory in ("/var/lib/redis", "/var/log/redis"):
                    try:
                        Path(directory).mkdir(parents=True, exist_ok=True)
                    except OSError as exc:
                        attempts.append(f"cannot create {directory}: {exc}")
            attempts.append(_run_start_command(command))
            deadline = time.monotonic() + timeout
            while reason is not None and time.monotonic() < deadline:
                time.sleep(0.25)
                reason = check()
            if reason is None:
                log.info("started %s", name)
                continue
            attempts.append(f"still not answering after {timeout:.0f} s: {reason}")
        elif start:
            attempts.append("not started: the start command only serves the local default port")
        problems[name] = "; ".join(attempts)
    if problems:
        raise ServiceUnavailableError(
            "local services unavailable: " + " | ".join(problems.values())
        )
