"""The template's DynamoDB tables, SQS queues, secrets and S3 buckets, created in the moto server.

`provision` creates them (idempotently) and fills `ResolveContext.values` with their real names
and ARNs, so functions' environment variables resolve to what exists. Only what template.yaml
uses is supported: `unsupported_properties` names anything else, and `check_template`
(infra/local/support.py) refuses such a template at start-up.
"""

from __future__ import annotations

import json
import logging
import secrets as secrets_module
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from infra.local.buckets import buckets, provision_bucket
from infra.local.errors import UnsupportedTemplateError
from infra.local.moto_server import aws_client

if TYPE_CHECKING:
    from infra.local.template import ResolveContext, Template

__all__ = [
    "LOCAL_DB_SECRET",
    "PROVISIONED_TYPES",
    "provision",
    "ses_identities",
    "unsupported_properties",
]

log = logging.getLogger(__name__)

TABLE_TYPE = "AWS::DynamoDB::Table"
QUEUE_TYPE = "AWS::SQS::Queue"
SECRET_TYPE = "AWS::SecretsManager::Secret"

# What the database's master secret holds locally (architecture.md, DB_SECRET_ARN; on AWS RDS
# manages it, ManageMasterUserPassword): the local PostgreSQL's credentials. Any other
# AWS::SecretsManager::Secret holds its SecretStringTemplate and a generated password, as on AWS.
LOCAL_DB_SECRET: dict[str, Any] = {
    "username": "postgres",
    "password": "",
    "engine": "postgres",
    "host": "127.0.0.1",
    "port": 5432,
}

# The properties provisioning understands, per resource type. The last ones of each set are
# accepted and ignored because they have no local meaning (backups, encryption at rest).
PROVISIONED_TYPES: dict[str, frozenset[str]] = {
    TABLE_TYPE: frozenset(
        {
            "TableName",
            "KeySchema",
            "AttributeDefinitions",
            "BillingMode",
            "GlobalSecondaryIndexes",
            "LocalSecondaryIndexes",
            "StreamSpecification",
            "TimeToLiveSpecification",
            "PointInTimeRecoverySpecification",
            "SSESpecification",
        }
    ),
    QUEUE_TYPE: frozenset(
        {
            "QueueName",
            "MessageRetentionPeriod",
            "VisibilityTimeout",
            "RedrivePolicy",
            "SqsManagedSseEnabled",
            "KmsMasterKeyId",
        }
    ),
    # Its template and a generated password (GenerateSecretString), unencrypted locally.
    SECRET_TYPE: frozenset({"Description", "GenerateSecretString", "KmsKeyId"}),
}
_INDEX_KEYS = frozenset({"IndexName", "KeySchema", "Projection"})
_STREAM_KEYS = frozenset({"StreamViewType"})
_TTL_KEYS = frozenset({"AttributeName", "Enabled"})


def unsupported_properties(logical_id: str, resource: dict[str, Any]) -> list[str]:
    """What a table, queue or secret asks for that provisioning does not create (no problems:
    an empty list)."""
    rtype = resource.get("Type", "")
    props = resource.get("Properties") or {}
    where = f"{logical_id} ({rtype})"
    problems = [
        f"{where}: property {key} is not supported"
        for key in sorted(set(props) - PROVISIONED_TYPES[rtype])
    ]
    if rtype != TABLE_TYPE:
        return problems
    if props.get("BillingMode", "PAY_PER_REQUEST") != "PAY_PER_REQUEST":
        problems.append(f"{where}: BillingMode {props['BillingMode']!r} is not supported "
                        "(only PAY_PER_REQUEST)")  # fmt: skip
    nested = [("StreamSpecification", props.get("StreamSpecification"), _STREAM_KEYS)]
    nested.append(("TimeToLiveSpecification", props.get("TimeToLiveSpecification"), _TTL_KEYS))
    for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        for index, spec in enumerate(props.get(kind) or []):
            nested.append((f"{kind}[{index}]", spec, _INDEX_KEYS))
    for path, value, allowed in nested:
        if isinstance(value, dict):
            problems += [
                f"{where}: property {path}.{key} is not supported"
                for key in sorted(set(value) - allowed)
            ]
    return problems


def _resolved_properties(
    template: Template, logical_id: str, context: ResolveContext
) -> dict[str, Any]:
    properties = template.resources[logical_id].get("Properties") or {}
    return template.resolve(properties, context) or {}


def _default_name(logical_id: str, context: ResolveContext) -> str:
    # CloudFormation would add a random suffix; the stack prefix keeps two local stacks (a test's
    # and a developer's `serve`) apart in one moto server.
    return f"{context.stack_name}-{logical_id}"


def _table_request(props: dict[str, Any], name: str) -> dict[str, Any]:
    """The CreateTable request for a table's (resolved) properties."""
    request: dict[str, Any] = {
        "TableName": name,
        "KeySchema": props["KeySchema"],
        "AttributeDefinitions": props["AttributeDefinitions"],
        "BillingMode": "PAY_PER_REQUEST",
    }
    for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        if props.get(kind):
            request[kind] = props[kind]
    stream = props.get("StreamSpecification")
    if stream and stream.get("StreamViewType"):
        request["StreamSpecification"] = {
            "StreamEnabled": True,
            "StreamViewType": stream["StreamViewType"],
        }
    return request


def _provision_table(
    dynamodb: Any, template: Template, logical_id: str, context: ResolveContext
) -> dict[str, Any]:
    props = _resolved_properties(template, logical_id, context)
    name = props.get("TableName") or _default_name(logical_id, context)
    try:
        description = dynamodb.create_table(**_table_request(props, name))["TableDescription"]
        log.info("created table %s", name)
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceInUseException":
            raise
        description = dynamodb.describe_table(TableName=name)["Table"]
    ttl = props.get("TimeToLiveSpecification")
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


def _provision_queue(
    sqs: Any, template: Template, logical_id: str, context: ResolveContext
) -> dict[str, Any]:
    props = _resolved_properties(template, logical_id, context)
    name = props.get("QueueName") or _default_name(logical_id, context)
    attributes = {}
    for name_ in ("MessageRetentionPeriod", "VisibilityTimeout"):
        if name_ in props:
            attributes[name_] = str(props[name_])
    if "RedrivePolicy" in props:
        # moto moves a message received more than maxReceiveCount times to the target, as SQS.
        attributes["RedrivePolicy"] = json.dumps(props["RedrivePolicy"])
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


def _redrives(template: Template, logical_id: str) -> bool:
    return "RedrivePolicy" in (template.resources[logical_id].get("Properties") or {})


def _provision_secret(
    secrets: Any, template: Template, logical_id: str, context: ResolveContext
) -> dict[str, Any]:
    props = template.resources[logical_id].get("Properties") or {}
    generate = props.get("GenerateSecretString") or {}
    value = json.loads(generate.get("SecretStringTemplate") or "{}")
    value[generate.get("GenerateStringKey", "password")] = secrets_module.token_urlsafe(30)
    return _put_secret(secrets, _default_name(logical_id, context), json.dumps(value))


def _provision_master_secret(
    secrets: Any, logical_id: str, context: ResolveContext
) -> dict[str, Any]:
    """The secret RDS keeps for a cluster with ManageMasterUserPassword: its ARN is the
    cluster's MasterUserSecret.SecretArn."""
    name = f"{_default_name(logical_id, context)}-master"
    return {
        "MasterUserSecret.SecretArn": _put_secret(secrets, name, json.dumps(LOCAL_DB_SECRET))["Ref"]
    }


def _put_secret(secrets: Any, name: str, text: str) -> dict[str, Any]:
    try:
        arn = secrets.create_secret(Name=name, SecretString=text)["ARN"]
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceExistsException":
            raise
        arn = secrets.put_secret_value(SecretId=name, SecretString=text)["ARN"]
    return {"Ref": arn, "Id": arn, "Name": name}


def ses_identities(template: Template, context: ResolveContext) -> list[str]:
    """The SES identities the functions may send as: each ``identity/<name>`` resource of a
    policy statement allowing ``ses:SendEmail``."""
    found: list[str] = []
    for spec in template.functions.values():
        for policy in spec.properties.get("Policies") or []:
            statements = policy.get("Statement") if isinstance(policy, dict) else None
            for statement in statements or []:
                actions = statement.get("Action")
                actions = actions if isinstance(actions, list) else [actions]
                if "ses:SendEmail" not in actions:
                    continue
                resources = statement.get("Resource")
                for resource in resources if isinstance(resources, list) else [resources]:
                    arn = str(template.resolve(resource, context))
                    name = arn.partition(":identity/")[2]
                    if name and name not in found:
                        found.append(name)
    return found


def provision(template: Template, endpoint_url: str, context: ResolveContext) -> None:
    """Create the template's tables, queues and secrets in moto; idempotent.

    Fills `context.values[logical_id]` with the real names and ARNs ({"Ref", "Arn",
    "StreamArn", ...}) so that `template.resolve` gives functions the right environment.
    Resources without an explicit name are called `<stack>-<LogicalId>`. Raises
    UnsupportedTemplateError, before creating anything, if a resource asks for more.
    """
    wanted = sorted(
        logical_id
        for logical_id, resource in template.resources.items()
        if resource.get("Type") in PROVISIONED_TYPES
    )
    problems = [
        problem
        for logical_id in wanted
        for problem in unsupported_properties(logical_id, template.resources[logical_id])
    ]
    if problems:
        raise UnsupportedTemplateError(problems)
    clients: dict[str, Any] = {}

    def client(service: str) -> Any:
        if service not in clients:
            clients[service] = aws_client(service, endpoint_url, context.region)
        return clients[service]

    for spec in buckets(template, context):
        values = provision_bucket(client("s3"), spec, context)
        context.values.setdefault(spec.logical_id, {}).update(values)
    # A queue's dead-letter queue first: SQS refuses a redrive policy naming no queue.
    for logical_id in sorted(wanted, key=lambda name: _redrives(template, name)):
        rtype = template.resources[logical_id]["Type"]
        if rtype == TABLE_TYPE:
            values = _provision_table(client("dynamodb"), template, logical_id, context)
        elif rtype == QUEUE_TYPE:
            values = _provision_queue(client("sqs"), template, logical_id, context)
        else:
            values = _provision_secret(client("secretsmanager"), template, logical_id, context)
        context.values.setdefault(logical_id, {}).update(values)
    for identity in ses_identities(template, context):
        # Verified at once, as an identity named by the template's parameter is on AWS before
        # the deploy: moto's SES refuses to send as any other (infra/local/moto_patches.py lists
        # what was sent).
        client("sesv2").create_email_identity(EmailIdentity=identity)
    for logical_id, resource in template.resources.items():
        props = resource.get("Properties") or {}
        if resource.get("Type") == "AWS::RDS::DBCluster" and props.get("ManageMasterUserPassword"):
            values = _provision_master_secret(client("secretsmanager"), logical_id, context)
            context.values.setdefault(logical_id, {}).update(values)
