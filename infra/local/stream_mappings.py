"""The template's DynamoDB event source mappings, with Lambda's defaults applied.

Every `Type: DynamoDB` event of a function becomes a StreamMapping. Only the properties the
template uses are supported; `unsupported_stream_event` names any other one, and
`stream_mappings` refuses a template that has one (a retry, batching or filtering setting the
local pollers would ignore would change what the consumer sees).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infra.local.errors import UnsupportedTemplateError
from infra.local.event_filters import check_pattern

if TYPE_CHECKING:
    from infra.local.template import ResolveContext, Template

__all__ = ["StreamMapping", "stream_mappings", "unsupported_stream_event"]

DEFAULT_BATCH_SIZE = 100

SUPPORTED_PROPERTIES = frozenset(
    {
        "Stream",
        "StartingPosition",
        "BatchSize",
        "MaximumBatchingWindowInSeconds",
        "MaximumRetryAttempts",
        "BisectBatchOnFunctionError",
        "FunctionResponseTypes",
        "DestinationConfig",
        "FilterCriteria",
        "ParallelizationFactor",
    }
)


@dataclass(frozen=True)
class StreamMapping:
    """One DynamoDB event source mapping, with Lambda's defaults applied."""

    function_name: str  # the function's logical id (what LambdaRuntime.invoke takes)
    event_name: str  # the SAM event's key
    function_arn: str
    stream_arn: str
    starting_position: str  # TRIM_HORIZON | LATEST
    batch_size: int = DEFAULT_BATCH_SIZE
    batching_window: float = 0.0  # MaximumBatchingWindowInSeconds
    maximum_retry_attempts: int = -1  # -1 = until the record expires
    bisect_on_error: bool = False
    report_batch_item_failures: bool = False
    on_failure_destination: str | None = None  # SQS queue ARN
    filters: tuple[dict[str, Any], ...] = ()
    # Concurrent batches per shard; records of one partition key stay in one lane, in order.
    parallelization_factor: int = 1
    partition_key: str | None = None  # the table's HASH key attribute (lanes hash its value)

    @property
    def name(self) -> str:
        return f"{self.function_name}/{self.event_name}"


def _as_bool(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _patterns(criteria: Any) -> list[Any]:
    """The FilterCriteria's patterns, parsed (a pattern that is not JSON raises ValueError)."""
    patterns = []
    for item in (criteria or {}).get("Filters") or []:
        pattern = item.get("Pattern") if isinstance(item, dict) else None
        patterns.append(json.loads(pattern) if isinstance(pattern, str) else pattern)
    return patterns


def unsupported_stream_event(
    function_name: str, event_name: str, event: dict[str, Any]
) -> list[str]:
    """What a (raw) `Type: DynamoDB` event asks for that the local pollers do not do."""
    where = f"{function_name} event {event_name} (DynamoDB)"
    props = event.get("Properties") or {}
    problems = [
        f"{where}: property {key} is not supported"
        for key in sorted(set(props) - SUPPORTED_PROPERTIES)
    ]
    for kind in props.get("FunctionResponseTypes") or []:
        if kind != "ReportBatchItemFailures":
            problems.append(f"{where}: FunctionResponseTypes {kind!r} is not supported")
    destination = props.get("DestinationConfig") or {}
    for key in sorted(set(destination) - {"OnFailure"}):
        problems.append(f"{where}: property DestinationConfig.{key} is not supported")
    on_failure = destination.get("OnFailure") or {}
    for key in sorted(set(on_failure) - {"Type", "Destination"}):
        problems.append(f"{where}: property DestinationConfig.OnFailure.{key} is not supported")
    if on_failure.get("Type", "SQS") != "SQS":
        problems.append(f"{where}: DestinationConfig.OnFailure.Type {on_failure['Type']!r} is "
                        "not supported (only SQS)")  # fmt: skip
    criteria = props.get("FilterCriteria") or {}
    for key in sorted(set(criteria) - {"Filters"}):
        problems.append(f"{where}: property FilterCriteria.{key} is not supported")
    try:
        patterns = _patterns(criteria)
    except json.JSONDecodeError as exc:
        return [*problems, f"{where}: FilterCriteria pattern is not JSON: {exc}"]
    for pattern in patterns:
        problems += [f"{where}: FilterCriteria {problem}" for problem in check_pattern(pattern)]
    return problems


def _mapping(
    function_name: str,
    event_name: str,
    function_arn: str,
    props: dict[str, Any],
    partition_key: str | None = None,
) -> StreamMapping:
    where = f"{function_name}/{event_name}"
    stream_arn = props.get("Stream")
    if not isinstance(stream_arn, str) or ":dynamodb:" not in stream_arn:
        raise ValueError(f"{where}: Stream is not a DynamoDB stream ARN: {stream_arn!r}")
    position = str(props.get("StartingPosition", "LATEST"))
    if position not in ("TRIM_HORIZON", "LATEST"):
        raise ValueError(f"{where}: StartingPosition must be TRIM_HORIZON or LATEST")
    batch_size = int(props.get("BatchSize", DEFAULT_BATCH_SIZE))
    retries = int(props.get("MaximumRetryAttempts", -1))
    if not 1 <= batch_size <= 10_000:
        raise ValueError(f"{where}: BatchSize must be 1..10000")
    if not -1 <= retries <= 10_000:
        raise ValueError(f"{where}: MaximumRetryAttempts must be -1..10000")
    parallel = int(props.get("ParallelizationFactor", 1))
    if not 1 <= parallel <= 10:
        raise ValueError(f"{where}: ParallelizationFactor must be 1..10")
    destination = (((props.get("DestinationConfig") or {}).get("OnFailure")) or {}).get(
        "Destination"
    )
    if destination and not str(destination).startswith("arn:aws:sqs:"):
        raise UnsupportedTemplateError(
            [f"{where}: OnFailure destination {destination!r} is not an SQS queue"]
        )
    return StreamMapping(
        function_name=function_name,
        event_name=event_name,
        function_arn=function_arn,
        stream_arn=stream_arn,
        starting_position=position,
        batch_size=batch_size,
        batching_window=float(props.get("MaximumBatchingWindowInSeconds", 0)),
        maximum_retry_attempts=retries,
        bisect_on_error=_as_bool(props.get("BisectBatchOnFunctionError", False)),
        report_batch_item_failures="ReportBatchItemFailures"
        in (props.get("FunctionResponseTypes") or []),
        on_failure_destination=destination or None,
        filters=tuple(_patterns(props.get("FilterCriteria"))),
        parallelization_factor=parallel,
        partition_key=partition_key,
    )


def stream_mappings(template: Template, context: ResolveContext) -> list[StreamMapping]:
    """Every DynamoDB stream mapping in the template, resolved with `context`.

    `context.values` must already hold the tables' StreamArn (provisioning.provision fills it).
    Raises UnsupportedTemplateError naming every event property the pollers do not support.
    """
    events = [
        (function_name, event_name, event)
        for function_name, spec in sorted(template.functions.items())
        for event_name, event in sorted(spec.events.items())
        if isinstance(event, dict) and event.get("Type") == "DynamoDB"
    ]
    problems = [
        problem for function_name, event_name, event in events
        for problem in unsupported_stream_event(function_name, event_name, event)
    ]  # fmt: skip
    if problems:
        raise UnsupportedTemplateError(problems)
    mappings = []
    for function_name, event_name, event in events:
        function_arn = str(template.resolve({"Fn::GetAtt": [function_name, "Arn"]}, context))
        props = template.resolve(event.get("Properties") or {}, context) or {}
        key = _partition_key(template, context, props.get("Stream"))
        mappings.append(_mapping(function_name, event_name, function_arn, props, key))
    return mappings


def _partition_key(template: Template, context: ResolveContext, stream_arn: Any) -> str | None:
    """The HASH key attribute of the table whose stream this is (None: not in the template)."""
    for logical_id, resource in template.resources.items():
        if resource.get("Type") != "AWS::DynamoDB::Table":
            continue
        if (context.values.get(logical_id) or {}).get("StreamArn") != stream_arn:
            continue
        for key in (resource.get("Properties") or {}).get("KeySchema") or []:
            if key.get("KeyType") == "HASH":
                return str(key.get("AttributeName"))
    return None
