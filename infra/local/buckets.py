"""The template's S3 buckets, their notifications to functions and the CloudFront distributions
in front of them, as the local runtime emulates them.

- A bucket (`AWS::S3::Bucket` without a Condition) is created in moto; its CorsConfiguration is
  answered by the local S3 endpoint (infra/local/s3_endpoint.py) and its LifecycleConfiguration
  applied by infra/local/lifecycle.py. Public access blocks, ownership controls and encryption
  have no local meaning (the endpoint refuses unsigned requests to every bucket anyway).
- A function's `Type: S3` event (SAM adds the bucket's NotificationConfiguration from it) is an
  `S3Notification`: the endpoint invokes the function asynchronously, as S3 does, for each object
  created that its event names and its key filter passes.
- A distribution (`AWS::CloudFront::Distribution` without a Condition) whose origin is such a
  bucket is served by infra/local/cdn.py with the headers its managed policies give, and the
  keys the bucket's policy lets CloudFront read (`s3:GetObject` on `${Bucket.Arn}/media/*`).
A bucket, distribution, policy or origin access control with a Condition is the web client's
hosting, which infra/local/web_client.py stands in for. Anything else the emulation does not do is
named by the `*_problems` functions, which `check_template` reports at start-up.
"""

from __future__ import annotations

import fnmatch
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from infra.local.template import ResolveContext, Template

__all__ = [
    "BUCKET_TYPE",
    "DISTRIBUTION_TYPE",
    "BucketSpec",
    "DistributionSpec",
    "S3Notification",
    "bucket_problems",
    "buckets",
    "distribution_problems",
    "distributions",
    "notifications",
    "provision_bucket",
    "s3_event_problems",
]

log = logging.getLogger(__name__)

BUCKET_TYPE = "AWS::S3::Bucket"
DISTRIBUTION_TYPE = "AWS::CloudFront::Distribution"

# The last four are accepted without a local counterpart (see the module's docstring).
_BUCKET_PROPERTIES = frozenset(
    {
        "BucketName",
        "CorsConfiguration",
        "LifecycleConfiguration",
        "PublicAccessBlockConfiguration",
        "OwnershipControls",
        "BucketEncryption",
    }
)
_CORS_RULE = frozenset({"AllowedMethods", "AllowedOrigins", "AllowedHeaders", "MaxAge", "Id"})
_LIFECYCLE_RULE = frozenset(
    {"Id", "Status", "Prefix", "TagFilters", "ExpirationInDays", "AbortIncompleteMultipartUpload"}
)
_S3_EVENT = frozenset({"Bucket", "Events", "Filter"})
_DISTRIBUTION = frozenset(
    {
        "Enabled",
        "Comment",
        "HttpVersion",
        "IPV6Enabled",
        "PriceClass",
        "Origins",
        "DefaultCacheBehavior",
    }
)
_ORIGIN = frozenset({"Id", "DomainName", "OriginAccessControlId", "S3OriginConfig"})
_BEHAVIOUR = frozenset(
    {
        "TargetOriginId",
        "ViewerProtocolPolicy",
        "AllowedMethods",
        "Compress",
        "CachePolicyId",
        "ResponseHeadersPolicyId",
    }
)
# Managed cache policies: CachingOptimized honours the origin's Cache-Control (1 s to a year).
CACHE_POLICIES = {"658327ea-f89d-4fab-a63d-7e88639e58f6": "CachingOptimized"}
# Managed response headers policies and the headers they add.
RESPONSE_HEADERS_POLICIES: dict[str, dict[str, str]] = {
    "67f7725c-6f97-4210-82d7-5512b31e9d03": {  # SecurityHeadersPolicy
        "Strict-Transport-Security": "max-age=31536000",
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "SAMEORIGIN",
        "X-XSS-Protection": "1; mode=block",
        "Referrer-Policy": "strict-origin-when-cross-origin",
    }
}


@dataclass(frozen=True)
class BucketSpec:
    logical_id: str
    name: str
    cors_rules: tuple[dict[str, Any], ...] = ()
    lifecycle_rules: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class S3Notification:
    """One function's `Type: S3` event: which objects created in which bucket invoke it."""

    function_name: str
    event_name: str
    bucket: str  # the bucket's logical id
    events: tuple[str, ...]  # "s3:ObjectCreated:*", ...
    prefix: str = ""
    suffix: str = ""

    def wants(self, bucket_id: str, event_name: str, key: str) -> bool:
        return (
            bucket_id == self.bucket
            and any(fnmatch.fnmatchcase(f"s3:{event_name}", pattern) for pattern in self.events)
            and key.startswith(self.prefix)
            and key.endswith(self.suffix)
        )


@dataclass(frozen=True)
class DistributionSpec:
    logical_id: str
    bucket: str  # the origin bucket's logical id
    headers: dict[str, str] = field(default_factory=dict)  # the response headers policy's
    # The keys the bucket's policy lets CloudFront read (fnmatch patterns: "media/*"); the
    # distribution answers every other key as S3 does through an origin access control: 403.
    readable: tuple[str, ...] = ()

    def may_read(self, key: str) -> bool:
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in self.readable)


def _cloudfront_readable(template: Template, bucket: str) -> tuple[str, ...]:
    """The key patterns of the ``s3:GetObject`` grants to CloudFront in ``bucket``'s policies
    (``Resource: !Sub "${Bucket.Arn}/media/*"``)."""
    patterns: list[str] = []
    for resource in template.resources.values():
        props = resource.get("Properties") or {}
        if resource.get("Type") != "AWS::S3::BucketPolicy" or props.get("Bucket") != {
            "Ref": bucket
        }:
            continue
        for statement in (props.get("PolicyDocument") or {}).get("Statement") or []:
            principal = (statement.get("Principal") or {}).get("Service")
            actions = statement.get("Action")
            actions = actions if isinstance(actions, list) else [actions]
            if statement.get("Effect") != "Allow" or principal != "cloudfront.amazonaws.com":
                continue
            if "s3:GetObject" not in actions:
                continue
            resources = statement.get("Resource")
            for item in resources if isinstance(resources, list) else [resources]:
                text = item.get("Fn::Sub") if isinstance(item, dict) else item
                text = text[0] if isinstance(text, list) else text
                prefix = f"${{{bucket}.Arn}}/"
                if isinstance(text, str) and text.startswith(prefix):
                    patterns.append(text[len(prefix) :])
    return tuple(patterns)


def _is_web_hosting(resource: dict[str, Any]) -> bool:
    return "Condition" in resource


def _extra(where: str, value: Any, allowed: frozenset[str]) -> list[str]:
    if not isinstance(value, dict):
        return []
    return [f"{where}: property {key} is not supported" for key in sorted(set(value) - allowed)]


def bucket_problems(logical_id: str, resource: dict[str, Any]) -> list[str]:
    if _is_web_hosting(resource):
        return []
    props = resource.get("Properties") or {}
    where = f"{logical_id} ({BUCKET_TYPE})"
    problems = _extra(where, props, _BUCKET_PROPERTIES)
    for index, rule in enumerate((props.get("CorsConfiguration") or {}).get("CorsRules") or []):
        problems += _extra(f"{where} CorsRules[{index}]", rule, _CORS_RULE)
    lifecycle = props.get("LifecycleConfiguration") or {}
    problems += _extra(f"{where} LifecycleConfiguration", lifecycle, frozenset({"Rules"}))
    for index, rule in enumerate(lifecycle.get("Rules") or []):
        problems += _extra(f"{where} LifecycleConfiguration.Rules[{index}]", rule, _LIFECYCLE_RULE)
    return problems


def distribution_problems(
    template: Template, logical_id: str, resource: dict[str, Any]
) -> list[str]:
    if _is_web_hosting(resource):
        return []
    where = f"{logical_id} ({DISTRIBUTION_TYPE})"
    config = (resource.get("Properties") or {}).get("DistributionConfig") or {}
    problems = _extra(where, config, _DISTRIBUTION)
    origins = config.get("Origins") or []
    if len(origins) != 1:
        problems.append(f"{where}: only one origin (an S3 bucket of the template) is supported")
    for origin in origins:
        problems += _extra(f"{where} origin", origin, _ORIGIN)
        if _origin_bucket(template, origin) is None:
            problems.append(f"{where}: origin {origin.get('Id')!r} is not a bucket of the template")
    behaviour = config.get("DefaultCacheBehavior") or {}
    problems += _extra(f"{where} DefaultCacheBehavior", behaviour, _BEHAVIOUR)
    if behaviour.get("CachePolicyId") not in CACHE_POLICIES:
        problems.append(
            f"{where}: CachePolicyId {behaviour.get('CachePolicyId')!r} is not supported"
        )
    policy = behaviour.get("ResponseHeadersPolicyId")
    if policy is not None and policy not in RESPONSE_HEADERS_POLICIES:
        problems.append(f"{where}: ResponseHeadersPolicyId {policy!r} is not supported")
    return problems


def s3_event_problems(
    template: Template, function: str, event_name: str, event: dict[str, Any]
) -> list[str]:
    where = f"{function} event {event_name} (S3)"
    props = event.get("Properties") or {}
    problems = _extra(where, props, _S3_EVENT)
    bucket = props.get("Bucket")
    if not (isinstance(bucket, dict) and bucket.get("Ref") in template.resources):
        problems.append(f"{where}: Bucket must be !Ref to a bucket of the template")
    rules = ((props.get("Filter") or {}).get("S3Key") or {}).get("Rules") or []
    for rule in rules:
        if not isinstance(rule, dict) or str(rule.get("Name", "")).lower() not in (
            "prefix",
            "suffix",
        ):
            problems.append(f"{where}: filter rule {rule!r} is not supported (prefix, suffix)")
    return problems


def _origin_bucket(template: Template, origin: dict[str, Any]) -> str | None:
    """The logical id of the template bucket an origin's DomainName names, by !GetAtt or by the
    bucket's own name spelled out in a !Sub."""
    domain = origin.get("DomainName")
    if isinstance(domain, dict) and "Fn::GetAtt" in domain:
        target = domain["Fn::GetAtt"]
        logical_id = target[0] if isinstance(target, list) else str(target).split(".")[0]
        return logical_id if logical_id in template.resources else None
    from infra.local.template import ResolveContext

    context = ResolveContext()
    try:
        resolved = str(template.resolve(domain, context))
    except Exception:  # an origin the resolver cannot read is reported as not a bucket
        return None
    for spec in buckets(template, context):
        if resolved.startswith(f"{spec.name}.s3."):
            return spec.logical_id
    return None


def buckets(template: Template, context: ResolveContext) -> list[BucketSpec]:
    found = []
    for logical_id, resource in sorted(template.resources.items()):
        if resource.get("Type") != BUCKET_TYPE or _is_web_hosting(resource):
            continue
        props = template.resolve(resource.get("Properties") or {}, context) or {}
        name = props.get("BucketName") or f"{context.stack_name}-{logical_id}".lower()
        found.append(
            BucketSpec(
                logical_id,
                str(name),
                tuple((props.get("CorsConfiguration") or {}).get("CorsRules") or ()),
                tuple((props.get("LifecycleConfiguration") or {}).get("Rules") or ()),
            )
        )
    return found


def notifications(template: Template) -> list[S3Notification]:
    found = []
    for function_name, spec in sorted(template.functions.items()):
        for event_name, event in sorted(spec.events.items()):
            if event.get("Type") != "S3":
                continue
            props = event.get("Properties") or {}
            events = props.get("Events")
            rules = ((props.get("Filter") or {}).get("S3Key") or {}).get("Rules") or []
            by_name = {str(r["Name"]).lower(): str(r["Value"]) for r in rules}
            found.append(
                S3Notification(
                    function_name,
                    event_name,
                    props["Bucket"]["Ref"],
                    tuple(events if isinstance(events, list) else [events]),
                    by_name.get("prefix", ""),
                    by_name.get("suffix", ""),
                )
            )
    return found


def distributions(template: Template) -> list[DistributionSpec]:
    found = []
    for logical_id, resource in sorted(template.resources.items()):
        if resource.get("Type") != DISTRIBUTION_TYPE or _is_web_hosting(resource):
            continue
        config = (resource.get("Properties") or {}).get("DistributionConfig") or {}
        bucket = _origin_bucket(template, (config.get("Origins") or [{}])[0])
        policy = (config.get("DefaultCacheBehavior") or {}).get("ResponseHeadersPolicyId")
        if bucket is not None:
            found.append(
                DistributionSpec(
                    logical_id,
                    bucket,
                    dict(RESPONSE_HEADERS_POLICIES.get(policy, {})),
                    _cloudfront_readable(template, bucket),
                )
            )
    return found


def provision_bucket(s3: Any, spec: BucketSpec, context: ResolveContext) -> dict[str, Any]:
    """The bucket in moto (idempotent), with its lifecycle rules stored; its names and ARN."""
    try:
        s3.create_bucket(Bucket=spec.name)
        log.info("created bucket %s", spec.name)
    except ClientError as exc:
        if exc.response["Error"]["Code"] not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
            raise
    domain = f"{spec.name}.s3.{context.region}.amazonaws.com"
    return {
        "Ref": spec.name,
        "Arn": f"arn:aws:s3:::{spec.name}",
        "DomainName": f"{spec.name}.s3.amazonaws.com",
        "RegionalDomainName": domain,
    }
