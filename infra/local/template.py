"""Read the SAM template and resolve its intrinsic functions for the local runtime.

Everything the local stack knows about functions, routes, tables and streams comes from here, so
`template.yaml` stays the single source of truth. Values only a running stack knows (stream ARNs,
secret ARNs, queue URLs) are supplied by whoever created them through `ResolveContext.values`.
"""

from __future__ import annotations

import copy
import hashlib
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "NO_VALUE",
    "FunctionSpec",
    "ResolveContext",
    "ResolveError",
    "Template",
    "load_template",
    "local_api_id",
]


class ResolveError(ValueError):
    """An intrinsic function the local runtime cannot resolve (bad shape or unknown value)."""


class _NoValue:
    """`AWS::NoValue`: the property or list item it stands for disappears (one instance)."""

    def __repr__(self) -> str:
        return "NO_VALUE"


NO_VALUE = _NoValue()


# --------------------------------------------------------------------------------------------
# YAML loading with CloudFormation short tags
# --------------------------------------------------------------------------------------------

# Every short tag CloudFormation has, so that a template using one loads and the start-up check
# (infra/local/support.py) can name what the resolver below does not implement.
_SHORT_TAGS = (
    "Base64", "Cidr", "FindInMap", "GetAZs", "If", "ImportValue", "Join", "Select", "Split",
    "Sub", "Equals", "Not", "And", "Or", "Transform", "Length", "ToJsonString",
)  # fmt: skip


# libyaml's parser where PyYAML was built with it (its wheels are): the template parses in a
# tenth of the time, and the suite, the local runtime and the capacity model parse it often.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _CfnLoader(_SafeLoader):  # type: ignore[valid-type,misc]
    """SafeLoader that understands `!Ref`, `!GetAtt`, `!Sub` and the other short forms."""


def _construct_node(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]


def _make_constructor(key: str) -> Callable[[yaml.SafeLoader, yaml.Node], dict[str, Any]]:
    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> dict[str, Any]:
        return {key: _construct_node(loader, node)}

    return construct


def _construct_getatt(loader: yaml.SafeLoader, node: yaml.Node) -> dict[str, Any]:
    value = _construct_node(loader, node)
    if isinstance(value, str):
        # "Resource.Attr.With.Dots": only the first dot separates the logical id.
        logical_id, _, attr = value.partition(".")
        value = [logical_id, attr]
    return {"Fn::GetAtt": value}


_CfnLoader.add_constructor("!Ref", _make_constructor("Ref"))
_CfnLoader.add_constructor("!Condition", _make_constructor("Condition"))
_CfnLoader.add_constructor("!GetAtt", _construct_getatt)
for _tag in _SHORT_TAGS:
    _CfnLoader.add_constructor(f"!{_tag}", _make_constructor(f"Fn::{_tag}"))


def load_yaml(text: str) -> Any:
    """Parse CloudFormation YAML, turning short tags into their long JSON forms."""
    return yaml.load(text, Loader=_CfnLoader)  # _CfnLoader is a SafeLoader


# --------------------------------------------------------------------------------------------
# Data model
# --------------------------------------------------------------------------------------------


@dataclass
class ResolveContext:
    """What the running local stack knows that the template cannot say by itself."""

    stack_name: str = "warble-local"
    region: str = "us-east-1"
    account_id: str = "123456789012"
    # Per logical id overrides: {"Ref": ..., "<Attr>": ...}, e.g. {"Table": {"StreamArn": ...}}.
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Template parameter values that replace the parameters' defaults.
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass
class FunctionSpec:
    """One AWS::Serverless::Function with the template's Globals.Function merged in."""

    name: str  # the logical id
    code_uri: Path
    handler: str
    runtime: str | None
    timeout: int
    memory: int
    environment: dict[str, Any]  # Environment.Variables, unresolved
    layers: list[Any]
    events: dict[str, dict[str, Any]]  # raw SAM events: {"Type": ..., "Properties": ...}
    properties: dict[str, Any]  # every merged property, unresolved


def _is_intrinsic(value: Any) -> bool:
    if not isinstance(value, dict) or len(value) != 1:
        return False
    key = str(next(iter(value)))
    return key in ("Ref", "Condition") or key.startswith("Fn::")


def merge_globals(global_value: Any, local_value: Any) -> Any:
    """SAM's Globals rule: maps merge key by key, lists add up, anything else the function wins."""
    if isinstance(global_value, dict) and isinstance(local_value, dict):
        if _is_intrinsic(global_value) or _is_intrinsic(local_value):
            return copy.deepcopy(local_value)
        merged = copy.deepcopy(global_value)
        for key, value in local_value.items():
            merged[key] = (
                merge_globals(global_value[key], value)
                if key in global_value
                else copy.deepcopy(value)
            )
        return merged
    if isinstance(global_value, list) and isinstance(local_value, list):
        return copy.deepcopy(global_value) + copy.deepcopy(local_value)
    return copy.deepcopy(local_value)


def local_api_id(logical_id: str, stack_name: str = "warble-local") -> str:
    """A stable 10-character API id shaped like API Gateway's (lower-case letters and digits)."""
    digest = int(hashlib.sha1(f"{stack_name}/{logical_id}".encode()).hexdigest(), 16)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    chars = []
    for _ in range(10):
        digest, index = divmod(digest, len(alphabet))
        chars.append(alphabet[index])
    return "".join(chars)


# Resource types whose Ref is an API id.
_API_TYPES = {"AWS::ApiGatewayV2::Api", "AWS::Serverless::HttpApi"}
# Resource types the local runtime provides (creates in moto or runs itself).
_EMULATED_TYPES = {
    *_API_TYPES,
    "AWS::DynamoDB::Table",
    "AWS::SQS::Queue",
    "AWS::SecretsManager::Secret",
    "AWS::Serverless::Function",
}
_PSEUDO_PARAMETERS = {
    "AWS::Region",
    "AWS::AccountId",
    "AWS::StackName",
    "AWS::StackId",
    "AWS::URLSuffix",
    "AWS::Partition",
    "AWS::NoValue",
    "AWS::NotificationARNs",
}
_SUB_VARIABLE = re.compile(r"\$\{([^}]*)\}")


class Template:
    """A loaded SAM template plus an intrinsic-function resolver for the local stack."""

    def __init__(self, path: str | Path, raw: dict[str, Any]) -> None:
        self.path = Path(path).resolve()
        self.root = self.path.parent
        self.raw = raw
        self.globals: dict[str, Any] = raw.get("Globals") or {}
        self.resources: dict[str, dict[str, Any]] = raw.get("Resources") or {}
        self.parameters: dict[str, dict[str, Any]] = raw.get("Parameters") or {}
        self.conditions: dict[str, Any] = raw.get("Conditions") or {}
        self.mappings: dict[str, Any] = raw.get("Mappings") or {}
        self.outputs: dict[str, Any] = raw.get("Outputs") or {}
        self.functions: dict[str, FunctionSpec] = {
            logical_id: self._function_spec(logical_id, resource)
            for logical_id, resource in self.resources.items()
            if resource.get("Type") == "AWS::Serverless::Function"
        }

    def __repr__(self) -> str:
        return f"Template({str(self.path)!r}, functions={sorted(self.functions)})"

    # ---------------------------------------------------------------- functions

    def _function_spec(self, logical_id: str, resource: dict[str, Any]) -> FunctionSpec:
        global_props = self.globals.get("Function") or {}
        props = merge_globals(global_props, resource.get("Properties") or {})
        code_uri = props.get("CodeUri", ".")
        if not isinstance(code_uri, str):
            # An S3 location or an intrinsic: nothing local to run, keep the template dir.
            code_uri = "."
        environment = (props.get("Environment") or {}).get("Variables") or {}
        return FunctionSpec(
            name=logical_id,
            code_uri=(self.root / code_uri).resolve(),
            handler=str(props.get("Handler", "app.handler")),
            runtime=props.get("Runtime"),
            timeout=int(self._static(props.get("Timeout", 3), 3)),
            memory=int(self._static(props.get("MemorySize", 128), 128)),
            environment=dict(environment),
            layers=list(props.get("Layers") or []),
            events=dict(props.get("Events") or {}),
            properties=props,
        )

    def _static(self, value: Any, default: Any) -> Any:
        """A setting that may be an intrinsic (`!FindInMap`), resolved with parameter defaults."""
        try:
            resolved = self.resolve(value, ResolveContext())
        except (ResolveError, KeyError):
            return default
        return default if resolved is None else resolved

    def function_id_for(self, value: Any, context: ResolveContext | None = None) -> str | None:
        """The logical id of the function a (raw or resolved) function reference points to.

        Accepts `!GetAtt Fn.Arn`, `!Ref Fn`, `!Sub "arn:...:${Fn.Arn}/invocations"`, a function
        ARN string (ending in the logical id or in the function's resolved FunctionName) or a
        bare logical id.
        """
        if isinstance(value, dict):
            if "Fn::GetAtt" in value:
                target = value["Fn::GetAtt"]
                logical_id = target[0] if isinstance(target, list) else str(target).split(".")[0]
                return logical_id if logical_id in self.functions else None
            if "Ref" in value:
                return value["Ref"] if value["Ref"] in self.functions else None
            if "Fn::Sub" in value:
                text = value["Fn::Sub"]
                text = text[0] if isinstance(text, list) else text
                for name in _SUB_VARIABLE.findall(str(text)):
                    logical_id = name.split(".")[0]
                    if logical_id in self.functions:
                        return logical_id
            return None
        if not isinstance(value, str):
            return None
        if value in self.functions:
            return value
        match = re.search(r":function:([^:/]+)", value)
        name = match.group(1) if match else value
        if name in self.functions:
            return name
        for logical_id in self.functions:
            try:
                if self._ref(logical_id, context or ResolveContext()) == name:
                    return logical_id
            except ResolveError:
                continue
        return None

    # ---------------------------------------------------------------- resolver

    def resolve(self, value: Any, context: ResolveContext | None = None) -> Any:
        """Resolve every intrinsic function in `value`; `AWS::NoValue` entries disappear."""
        context = context or ResolveContext()
        result = self._resolve(value, context)
        return None if result is NO_VALUE else result

    def supports_intrinsic(self, name: str) -> bool:
        """Whether the resolver implements the intrinsic function `name` ("Fn::Sub", ...)."""
        return name.startswith("Fn::") and hasattr(self, "_fn_" + name[4:].lower())

    def condition(self, name: str, context: ResolveContext | None = None) -> bool:
        """Evaluate a named condition from the template's Conditions section."""
        context = context or ResolveContext()
        if name not in self.conditions:
            raise ResolveError(f"unknown condition {name!r}")
        return bool(self._resolve(self.conditions[name], context))

    def parameter_value(self, name: str, context: ResolveContext) -> Any:
        if name in context.parameters:
            value = context.parameters[name]
        else:
            spec = self.parameters[name]
            if "Default" not in spec:
                raise ResolveError(f"parameter {name!r} has no Default and no value was given")
            value = spec["Default"]
        if (self.parameters.get(name) or {}).get("Type") == "CommaDelimitedList" and isinstance(
            value, str
        ):
            return [item.strip() for item in value.split(",")]
        return value

    def _resolve(self, value: Any, context: ResolveContext) -> Any:
        if isinstance(value, list):
            items = [self._resolve(item, context) for item in value]
            return [item for item in items if item is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            key, argument = next(iter(value.items()))
            if key == "Ref":
                return self._ref(self._resolve(argument, context), context)
            if key == "Condition" and isinstance(argument, str):
                return self.condition(argument, context)
            if isinstance(key, str) and key.startswith("Fn::"):
                handler = getattr(self, "_fn_" + key[4:].lower(), None)
                if handler is None:
                    raise ResolveError(f"unsupported intrinsic function {key}")
                return handler(argument, context)
        resolved = {key: self._resolve(item, context) for key, item in value.items()}
        return {key: item for key, item in resolved.items() if item is not NO_VALUE}

    def _ref(self, name: Any, context: ResolveContext) -> Any:
        if not isinstance(name, str):
            raise ResolveError(f"Ref needs a name, got {name!r}")
        if name in _PSEUDO_PARAMETERS:
            return self._pseudo(name, context)
        override = context.values.get(name, {})
        if "Ref" in override:
            return override["Ref"]
        if name in self.parameters:
            return self.parameter_value(name, context)
        if name not in self.resources:
            raise ResolveError(f"Ref to unknown parameter or resource {name!r}")
        resource = self.resources[name]
        rtype = resource.get("Type", "")
        props = resource.get("Properties") or {}
        if rtype == "AWS::DynamoDB::Table":
            return self._named(props.get("TableName"), name, context)
        if rtype in _API_TYPES:
            return local_api_id(name, context.stack_name)
        if rtype == "AWS::ApiGatewayV2::Stage":
            return self._resolve(props.get("StageName", name), context)
        if rtype == "AWS::SQS::Queue":
            queue = self._named(props.get("QueueName"), name, context)
            return f"https://sqs.{context.region}.amazonaws.com/{context.account_id}/{queue}"
        if rtype == "AWS::SecretsManager::Secret":
            secret = self._named(props.get("Name"), name, context)
            return f"arn:aws:secretsmanager:{context.region}:{context.account_id}:secret:{secret}"
        if rtype == "AWS::Serverless::Function":
            return self._named(props.get("FunctionName"), name, context)
        if rtype == "AWS::Logs::LogGroup":
            return self._named(props.get("LogGroupName"), name, context)
        if rtype == "AWS::Serverless::LayerVersion":
            return f"arn:aws:lambda:{context.region}:{context.account_id}:layer:{name}:1"
        if rtype == "AWS::ElastiCache::User":
            return self._resolve(props.get("UserId", name), context)
        return name

    def _named(self, explicit: Any, default: str, context: ResolveContext) -> Any:
        return default if explicit is None else self._resolve(explicit, context)

    def _pseudo(self, name: str, context: ResolveContext) -> Any:
        if name == "AWS::NoValue":
            return NO_VALUE
        return {
            "AWS::Region": context.region,
            "AWS::AccountId": context.account_id,
            "AWS::StackName": context.stack_name,
            "AWS::StackId": (
                f"arn:aws:cloudformation:{context.region}:{context.account_id}:stack/"
                f"{context.stack_name}/00000000-0000-0000-0000-000000000000"
            ),
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::Partition": "aws",
            "AWS::NotificationARNs": [],
        }[name]

    def _getatt(self, logical_id: str, attr: str, context: ResolveContext) -> Any:
        override = context.values.get(logical_id, {})
        if attr in override:
            return override[attr]
        if logical_id not in self.resources:
            raise ResolveError(f"GetAtt on unknown resource {logical_id!r}")
        rtype = self.resources[logical_id].get("Type", "")
        region, account = context.region, context.account_id
        if rtype == "AWS::DynamoDB::Table":
            table = self._ref(logical_id, context)
            if attr == "Arn":
                return f"arn:aws:dynamodb:{region}:{account}:table/{table}"
            if attr == "StreamArn":
                raise ResolveError(
                    f"{logical_id}.StreamArn is only known once the table exists: "
                    "supply it in ResolveContext.values"
                )
        if rtype == "AWS::RDS::DBProxy" and attr == "Endpoint":
            return "127.0.0.1"
        if rtype == "AWS::RDS::DBCluster":
            if attr.endswith("Port"):
                return "5432"
            if attr.endswith("Address") or attr == "Endpoint":
                return "127.0.0.1"
        if rtype in ("AWS::ElastiCache::ServerlessCache", "AWS::ElastiCache::ReplicationGroup"):
            if attr.endswith("Port"):
                return "6379"
            if attr.endswith("Address"):
                return "127.0.0.1"
        if rtype == "AWS::Serverless::Function" and attr == "Arn":
            function = self._ref(logical_id, context)
            return f"arn:aws:lambda:{region}:{account}:function:{function}"
        if rtype == "AWS::SQS::Queue":
            queue = self._named(
                (self.resources[logical_id].get("Properties") or {}).get("QueueName"),
                logical_id,
                context,
            )
            if attr == "Arn":
                return f"arn:aws:sqs:{region}:{account}:{queue}"
            if attr == "QueueName":
                return queue
        if rtype == "AWS::IAM::Role" and attr == "Arn":
            return f"arn:aws:iam::{account}:role/{logical_id}"
        if rtype == "AWS::Logs::LogGroup" and attr == "Arn":
            return f"arn:aws:logs:{region}:{account}:log-group:{self._ref(logical_id, context)}:*"
        if rtype in _EMULATED_TYPES:
            # A resource the runtime provides: an attribute it does not know must not become a
            # made-up value a function would then use.
            raise ResolveError(f"GetAtt {logical_id}.{attr}: attribute not supported locally")
        return f"local-{logical_id}-{attr}"

    # ---------------------------------------------------------------- Fn::*
    # What template.yaml and the fixture templates use; any other is refused at start-up, by name.

    def _fn_getatt(self, argument: Any, context: ResolveContext) -> Any:
        if isinstance(argument, str):
            logical_id, _, attr = argument.partition(".")
        else:
            resolved = self._resolve(argument, context)
            if not isinstance(resolved, list) or len(resolved) != 2:
                raise ResolveError(f"Fn::GetAtt needs [LogicalId, Attribute], got {argument!r}")
            logical_id, attr = resolved
        return self._getatt(str(logical_id), str(attr), context)

    def _fn_sub(self, argument: Any, context: ResolveContext) -> str:
        if isinstance(argument, list):
            if len(argument) != 2:
                raise ResolveError("Fn::Sub needs a string or [string, {variables}]")
            text, variables = argument[0], self._resolve(argument[1], context)
        else:
            text, variables = argument, {}
        if not isinstance(text, str):
            raise ResolveError(f"Fn::Sub needs a string, got {text!r}")

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("!"):  # ${!Literal} stays as the literal ${Literal}
                return "${" + name[1:] + "}"
            name = name.strip()
            if name in variables:
                return _to_text(variables[name])
            if name in _PSEUDO_PARAMETERS or name in self.parameters or name in self.resources:
                return _to_text(self._ref(name, context))
            logical_id, dot, attr = name.partition(".")
            if dot:
                return _to_text(self._getatt(logical_id, attr, context))
            raise ResolveError(f"Fn::Sub: unknown variable {name!r}")

        return _SUB_VARIABLE.sub(replace, text)

    def _fn_join(self, argument: Any, context: ResolveContext) -> str:
        delimiter, items = self._pair(argument, context, "Fn::Join")
        if not isinstance(items, list):
            raise ResolveError("Fn::Join needs a list of values")
        return str(delimiter).join(_to_text(item) for item in items)

    def _fn_select(self, argument: Any, context: ResolveContext) -> Any:
        index, items = self._pair(argument, context, "Fn::Select")
        if not isinstance(items, list):
            raise ResolveError("Fn::Select needs a list")
        try:
            return items[int(index)]
        except (IndexError, ValueError) as exc:
            raise ResolveError(f"Fn::Select index {index!r} out of range") from exc

    def _fn_split(self, argument: Any, context: ResolveContext) -> list[str]:
        delimiter, text = self._pair(argument, context, "Fn::Split")
        return str(text).split(str(delimiter))

    def _fn_if(self, argument: Any, context: ResolveContext) -> Any:
        if not isinstance(argument, list) or len(argument) != 3:
            raise ResolveError("Fn::If needs [condition, value_if_true, value_if_false]")
        chosen = argument[1] if self.condition(argument[0], context) else argument[2]
        return self._resolve(chosen, context)

    def _fn_equals(self, argument: Any, context: ResolveContext) -> bool:
        left, right = self._pair(argument, context, "Fn::Equals")
        return _to_text(left) == _to_text(right)

    def _fn_and(self, argument: Any, context: ResolveContext) -> bool:
        values = self._resolve(argument, context)
        if not isinstance(values, list) or not 2 <= len(values) <= 10:
            raise ResolveError("Fn::And needs a list of 2 to 10 conditions")
        return all(values)

    def _fn_or(self, argument: Any, context: ResolveContext) -> bool:
        values = self._resolve(argument, context)
        if not isinstance(values, list) or not 2 <= len(values) <= 10:
            raise ResolveError("Fn::Or needs a list of 2 to 10 conditions")
        return any(values)

    def _fn_not(self, argument: Any, context: ResolveContext) -> bool:
        values = self._resolve(argument, context)
        if not isinstance(values, list) or len(values) != 1:
            raise ResolveError("Fn::Not needs a list with one condition")
        return not values[0]

    def _fn_findinmap(self, argument: Any, context: ResolveContext) -> Any:
        values = self._resolve(argument, context)
        if not isinstance(values, list) or len(values) < 3:
            raise ResolveError("Fn::FindInMap needs [MapName, TopLevelKey, SecondLevelKey]")
        map_name, top, second = values[:3]
        try:
            return self.mappings[map_name][top][second]
        except KeyError as exc:
            if len(values) == 4 and isinstance(values[3], dict) and "DefaultValue" in values[3]:
                return values[3]["DefaultValue"]
            raise ResolveError(f"Fn::FindInMap: no {map_name}/{top}/{second}") from exc

    def _fn_getazs(self, argument: Any, context: ResolveContext) -> list[str]:
        region = self._resolve(argument, context) or context.region
        return [f"{region}{suffix}" for suffix in "abc"]

    def _fn_cidr(self, argument: Any, context: ResolveContext) -> list[str]:
        values = self._resolve(argument, context)
        if not isinstance(values, list) or len(values) != 3:
            raise ResolveError("Fn::Cidr needs [ipBlock, count, cidrBits]")
        network = ipaddress.ip_network(str(values[0]), strict=False)
        new_prefix = network.max_prefixlen - int(values[2])
        subnets = network.subnets(new_prefix=new_prefix)
        return [str(subnet) for _, subnet in zip(range(int(values[1])), subnets, strict=False)]

    def _pair(self, argument: Any, context: ResolveContext, name: str) -> tuple[Any, Any]:
        values = self._resolve(argument, context)
        if not isinstance(values, list) or len(values) != 2:
            raise ResolveError(f"{name} needs a list of two values, got {argument!r}")
        return values[0], values[1]


def _to_text(value: Any) -> str:
    """CloudFormation's string form of a scalar (YAML booleans become "true"/"false")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        raise ResolveError(f"expected a scalar, got {value!r}")
    return str(value)


def to_env_value(value: Any) -> str:
    """An environment variable value as Lambda stores it (always a string)."""
    return _to_text(value)


def load_template(path: str | Path = "template.yaml") -> Template:
    """Load a SAM template from `path`; the template's directory becomes `Template.root`."""
    path = Path(path)
    raw = load_yaml(path.read_text(encoding="utf-8")) or {}
    if not isinstance(raw, dict):
        raise TypeError(f"{path} is not a CloudFormation template (top level is not a map)")
    return Template(path, raw)
