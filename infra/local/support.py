"""What the local runtime supports of a SAM template, checked once at start-up.

The local runtime emulates exactly what template.yaml (and the test fixture templates) use.
`check_template` walks the template and raises UnsupportedTemplateError naming every resource
type, resource property, function property, event type, event property or intrinsic function
it does not support, so that nothing the template asks for is silently ignored. `serve` and
`invoke` run it before starting anything.

Accepted without a local counterpart (documented, deliberate):
- networking, permissions, log groups, encryption keys and layer packaging (the types in
  `_NOT_NEEDED_LOCALLY`): functions reach the local services directly, no policy is enforced,
  logs go to the terminal, nothing is encrypted with a key of the stack's (queues, secrets and
  log groups name one: ignored), and workers import layers/shared themselves;
- Aurora, RDS Proxy and ElastiCache (`_STOOD_IN`): the local PostgreSQL and Redis take their
  place (infra/local/daemons.py) and their endpoints resolve to 127.0.0.1; the database roles
  sign in without a password (the local PostgreSQL trusts 127.0.0.1), so an IAM token is taken
  as any password would be; the cache's IAM users are ACL users of the local Redis that take
  any password, with their access string (`infra.local.cache_users`, made by the Lambda runtime);
- a schedule's RetryPolicy: a failed scheduled invocation is logged, not retried;
- a bucket's public access block, ownership controls and encryption, bucket policies and origin
  access controls (infra/local/buckets.py says what of S3 and CloudFront is emulated).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from infra.local.buckets import (
    BUCKET_TYPE,
    DISTRIBUTION_TYPE,
    bucket_problems,
    distribution_problems,
    s3_event_problems,
)
from infra.local.errors import UnsupportedTemplateError
from infra.local.provisioning import PROVISIONED_TYPES, unsupported_properties
from infra.local.queue_pollers import sqs_event_problems
from infra.local.stream_mappings import unsupported_stream_event
from infra.local.ws_mock import (
    integration_problems,
    integration_response_problems,
    route_problems,
    route_response_problems,
)

if TYPE_CHECKING:
    from infra.local.template import Template

__all__ = ["check_template", "template_problems"]

SAM_TRANSFORM = "AWS::Serverless-2016-10-31"

# Run by the local runtime itself: Lambda workers, the HTTP and the WebSocket gateway.
_EMULATED = frozenset(
    {
        "AWS::Serverless::Function",
        "AWS::Serverless::HttpApi",
        "AWS::ApiGatewayV2::Api",
        "AWS::ApiGatewayV2::Authorizer",
        "AWS::ApiGatewayV2::Integration",
        "AWS::ApiGatewayV2::IntegrationResponse",
        "AWS::ApiGatewayV2::Route",
        "AWS::ApiGatewayV2::RouteResponse",
        "AWS::ApiGatewayV2::Stage",
    }
)
_STOOD_IN = frozenset(
    {
        "AWS::RDS::DBCluster",
        "AWS::RDS::DBInstance",
        "AWS::RDS::DBProxy",
        "AWS::RDS::DBProxyTargetGroup",
        "AWS::RDS::DBSubnetGroup",
        "AWS::SecretsManager::SecretTargetAttachment",
        # The cache, whichever kind the ScaleProfile deploys (serverless, or a node-based
        # replication group in its subnet group): the one local Redis.
        "AWS::ElastiCache::ServerlessCache",
        "AWS::ElastiCache::ReplicationGroup",
        "AWS::ElastiCache::SubnetGroup",
        # The cache's users: the IAM ones become ACL users of the local Redis (any password,
        # their access string), infra/local/daemons.py; the group and the rest are nothing.
        "AWS::ElastiCache::User",
        "AWS::ElastiCache::UserGroup",
    }
)
# One local PostgreSQL stands in for the Aurora cluster however many instances it has, so an
# instance the template creates under a condition (ScaleProfile's reader) changes nothing here;
# one local Redis stands in for the cache, whichever of its kinds the ScaleProfile's condition
# creates (REDIS_URL is env.json's either way).
_ONE_STANDS_IN = frozenset(
    {
        "AWS::RDS::DBInstance",
        "AWS::ElastiCache::ServerlessCache",
        "AWS::ElastiCache::ReplicationGroup",
        "AWS::ElastiCache::SubnetGroup",
    }
)
# With a Condition, the web client's hosting: `serve` hosts web/ itself (infra/local/web_client.py),
# whatever the condition says (`--web-port -1` serves none). Without one, a bucket is created in
# moto and served through the local S3 endpoint, a distribution by the local CDN, and a bucket
# policy or origin access control has no local meaning (infra/local/buckets.py).
_WEB_HOSTING = frozenset(
    {
        "AWS::S3::Bucket",
        "AWS::S3::BucketPolicy",
        "AWS::CloudFront::Distribution",
        "AWS::CloudFront::OriginAccessControl",
        "AWS::CloudFront::ResponseHeadersPolicy",
    }
)
_NOT_NEEDED_LOCALLY = frozenset(
    {
        "AWS::EC2::EIP",
        "AWS::EC2::InternetGateway",
        "AWS::EC2::NatGateway",
        "AWS::EC2::Route",
        "AWS::EC2::RouteTable",
        "AWS::EC2::SecurityGroup",
        "AWS::EC2::SecurityGroupEgress",
        "AWS::EC2::Subnet",
        "AWS::EC2::SubnetRouteTableAssociation",
        "AWS::EC2::VPC",
        "AWS::EC2::VPCEndpoint",
        "AWS::EC2::VPCGatewayAttachment",
        "AWS::ApiGateway::Account",
        "AWS::IAM::ManagedPolicy",
        "AWS::IAM::Role",
        "AWS::KMS::Alias",
        "AWS::KMS::Key",
        "AWS::Lambda::Permission",
        "AWS::Logs::LogGroup",
        "AWS::Serverless::LayerVersion",
        # Alarms watch metrics; locally a failure queue is read directly.
        "AWS::CloudWatch::Alarm",
    }
)

# A function's properties (Globals.Function merged in) that the Lambda workers honour or that
# have no local meaning (Architectures, Tracing, VpcConfig, Policies, Tags, LoggingConfig, ...).
_FUNCTION_PROPERTIES = frozenset(
    {
        "Architectures",
        "CodeUri",
        "DeadLetterQueue",
        "Description",
        "Environment",
        "Events",
        "FunctionName",
        "Handler",
        "Layers",
        "LoggingConfig",
        "MemorySize",
        "Policies",
        "Runtime",
        "Tags",
        "Timeout",
        "Tracing",
        "VpcConfig",
    }
)
# Event types and the properties their local emulation reads (infra/local/http_gateway.py,
# infra/local/__main__.py); DynamoDB events are checked by infra/local/stream_mappings.py.
# An HttpApi event's Auth (a route's authorizer) is not among them: the API has no authorizer.
_EVENT_PROPERTIES = {
    "HttpApi": frozenset({"ApiId", "Method", "Path", "PayloadFormatVersion"}),
    "Schedule": frozenset({"Schedule", "Name", "Input", "Enabled"}),
    "ScheduleV2": frozenset(
        {"ScheduleExpression", "Name", "Input", "State", "Enabled", "RetryPolicy"}
    ),
}
_GLOBALS = frozenset({"Function", "HttpApi"})
# An HTTP API's properties (its own, and Globals.HttpApi's) that the gateway emulates (CORS) or that
# have no local meaning (throttling, the default's and a route's own; access logs). Not Auth: no
# authorizer is emulated, since the handlers check the session themselves (warble.http.app) and an
# authorizer would answer 401 and 403 in its own shape (tests/unit/test_template_auth.py); nor
# StageName or StageVariables.
_HTTP_API_PROPERTIES = frozenset(
    {"AccessLogSettings", "CorsConfiguration", "DefaultRouteSettings", "Description",
     "RouteSettings"}
)  # fmt: skip


def _intrinsics(value: Any, path: str) -> list[tuple[str, str]]:
    """(path, function name) of every `Fn::*` in `value`."""
    found: list[tuple[str, str]] = []
    if isinstance(value, list):
        for index, item in enumerate(value):
            found += _intrinsics(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            if len(value) == 1 and isinstance(key, str) and key.startswith("Fn::"):
                found.append((path, key))
            found += _intrinsics(item, f"{path}.{key}" if path else str(key))
    return found


def _resource_problems(template: Template, logical_id: str, resource: dict[str, Any]) -> list[str]:
    rtype = resource.get("Type")
    where = f"{logical_id} ({rtype})"
    if rtype == BUCKET_TYPE:
        problems = bucket_problems(logical_id, resource)
    elif rtype == DISTRIBUTION_TYPE:
        problems = distribution_problems(template, logical_id, resource)
    elif rtype in PROVISIONED_TYPES:
        problems = unsupported_properties(logical_id, resource)
    elif rtype in _EMULATED or rtype in _STOOD_IN or rtype in _NOT_NEEDED_LOCALLY | _WEB_HOSTING:
        problems = []
    else:
        return [f"{where}: resource type {rtype} is not supported"]
    if "Condition" in resource and rtype not in _NOT_NEEDED_LOCALLY | _WEB_HOSTING | _ONE_STANDS_IN:
        # The local runtime creates every resource: a conditional one would exist regardless.
        problems.append(f"{where}: Condition {resource['Condition']!r} is not supported")
    props = resource.get("Properties") or {}
    if rtype == "AWS::ApiGatewayV2::Api" and props.get("ProtocolType") != "WEBSOCKET":
        problems.append(f"{where}: ProtocolType {props.get('ProtocolType')!r} is not supported "
                        "(only WEBSOCKET; HTTP APIs are AWS::Serverless::HttpApi)")  # fmt: skip
    if rtype == "AWS::Serverless::HttpApi":
        problems += _http_api_problems(where, props)
    if rtype == "AWS::ApiGatewayV2::Route" and props.get("AuthorizationType", "NONE") not in (
        "NONE",
        "CUSTOM",
    ):
        problems.append(f"{where}: AuthorizationType {props.get('AuthorizationType')!r} is not "
                        "supported (NONE, or CUSTOM: a Lambda REQUEST authorizer)")  # fmt: skip
    if rtype == "AWS::ApiGatewayV2::Authorizer":
        problems += _ws_authorizer_problems(where, props)
    problems += _ws_problems(template, rtype, where, props)
    return problems


def _ws_problems(template: Template, rtype: Any, where: str, props: dict[str, Any]) -> list[str]:
    """A WebSocket API's integrations, integration responses, routes and route responses
    (infra/local/ws_mock.py says what of them is emulated)."""
    if rtype == "AWS::ApiGatewayV2::Integration":
        return integration_problems(where, props)
    if rtype == "AWS::ApiGatewayV2::IntegrationResponse":
        target = props.get("IntegrationId")
        named = target.get("Ref") if isinstance(target, dict) else None
        integration = template.resources.get(str(named)) if named else None
        return integration_response_problems(
            where, props, (integration or {}).get("Properties") or {}
        )
    if rtype == "AWS::ApiGatewayV2::Route":
        return route_problems(where, props)
    if rtype == "AWS::ApiGatewayV2::RouteResponse":
        return route_response_problems(where, props)
    return []


# What the WebSocket gateway reads of a Lambda REQUEST authorizer (infra/local/ws_gateway.py).
_WS_AUTHORIZER_PROPERTIES = frozenset(
    {"ApiId", "AuthorizerType", "AuthorizerUri", "IdentitySource", "Name"}
)
_WS_IDENTITY_SOURCES = ("route.request.querystring.", "route.request.header.")


def _ws_authorizer_problems(where: str, props: dict[str, Any]) -> list[str]:
    problems = [
        f"{where}: property {key} is not supported"
        for key in sorted(set(props) - _WS_AUTHORIZER_PROPERTIES)
    ]
    if props.get("AuthorizerType") != "REQUEST":
        problems.append(f"{where}: AuthorizerType {props.get('AuthorizerType')!r} is not "
                        "supported (only REQUEST)")  # fmt: skip
    for source in props.get("IdentitySource") or []:
        if not isinstance(source, str) or not source.startswith(_WS_IDENTITY_SOURCES):
            problems.append(f"{where}: IdentitySource {source!r} is not supported")
    return problems


def _http_api_problems(where: str, props: dict[str, Any]) -> list[str]:
    auth = props.get("Auth") or {}
    named = [
        f"{where}: authorizer {name!r} (Auth.Authorizers) is not supported: the handlers check "
        "the session (warble.http.app), and an authorizer would answer 401/403 in its own shape"
        for name in auth.get("Authorizers") or {}
    ]
    if auth.get("DefaultAuthorizer"):
        named.append(f"{where}: Auth.DefaultAuthorizer {auth['DefaultAuthorizer']!r} is not "
                     "supported")  # fmt: skip
    rest = sorted(set(props) - _HTTP_API_PROPERTIES - ({"Auth"} if named else set()))
    return named + [f"{where}: property {key} is not supported" for key in rest]


def _function_problems(template: Template, logical_id: str) -> list[str]:
    spec = template.functions[logical_id]
    where = f"{logical_id} (AWS::Serverless::Function)"
    problems = [
        f"{where}: property {key} is not supported"
        for key in sorted(set(spec.properties) - _FUNCTION_PROPERTIES)
    ]
    queue = spec.properties.get("DeadLetterQueue")
    if queue is not None and (not isinstance(queue, dict) or queue.get("Type") != "SQS"):
        problems.append(f"{where}: a DeadLetterQueue other than SQS is not supported")
    for event_name, event in sorted(spec.events.items()):
        kind = event.get("Type") if isinstance(event, dict) else None
        if kind == "DynamoDB":
            problems += unsupported_stream_event(logical_id, event_name, event)
        elif kind == "S3":
            problems += s3_event_problems(template, logical_id, event_name, event)
        elif kind == "SQS":
            problems += sqs_event_problems(logical_id, event_name, event)
        elif kind in _EVENT_PROPERTIES:
            props = event.get("Properties") or {}
            problems += [
                f"{logical_id} event {event_name} ({kind}): property {key} is not supported"
                for key in sorted(set(props) - _EVENT_PROPERTIES[kind])
            ]
        else:
            problems.append(f"{logical_id} event {event_name}: event type {kind} is not supported")
    return problems


def template_problems(template: Template) -> list[str]:
    """Everything in `template` the local runtime does not support ([] when nothing)."""
    problems = []
    transforms = template.raw.get("Transform") or []
    for transform in [transforms] if isinstance(transforms, str) else transforms:
        if transform != SAM_TRANSFORM:
            problems.append(f"Transform {transform!r} is not supported (only {SAM_TRANSFORM})")
    problems += [
        f"Globals.{section} is not supported"
        for section in sorted(set(template.globals) - _GLOBALS)
    ]
    problems += _http_api_problems("Globals.HttpApi", template.globals.get("HttpApi") or {})
    for logical_id, resource in sorted(template.resources.items()):
        problems += _resource_problems(template, logical_id, resource)
        if resource.get("Type") == "AWS::Serverless::Function":
            problems += _function_problems(template, logical_id)
    for section in ("Globals", "Conditions", "Resources", "Outputs"):
        for path, name in _intrinsics(template.raw.get(section), section):
            if not template.supports_intrinsic(name):
                problems.append(f"{path}: intrinsic function {name} is not supported")
    return problems


def check_template(template: Template) -> None:
    """Raise UnsupportedTemplateError naming everything `template` asks for that the local
    runtime does not support; return quietly when it supports all of it."""
    problems = template_problems(template)
    if problems:
        raise UnsupportedTemplateError(problems)
