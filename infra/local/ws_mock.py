"""What the local WebSocket gateway emulates of a WebSocket API's integrations and route
responses, and the answer of a MOCK integration, computed from the template as API Gateway
computes it.

A MOCK integration has no backend: its request template (selected by the integration's
TemplateSelectionExpression) sets a `statusCode`, which picks an integration response (a
`/regex/` key matching the status, else `$default`); that response's template (selected by its
own TemplateSelectionExpression) is the answer, sent on the connection when the route has a
route response (a two-way route). Supported, and nothing more: the static selection expression
`\\$default`, templates without VTL (no `$` reference, no `#` directive: there is no Velocity
engine here), the route response key `$default` (the only one API Gateway supports). Anything
else is named by `integration_problems` and friends, which `infra/local/support.py` runs at
start-up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MockAnswer",
    "integration_problems",
    "integration_response_problems",
    "mock_answer",
    "route_problems",
    "route_response_problems",
]

DEFAULT_KEY = "$default"
# A selection expression naming the reserved key (its dollar escaped, as API Gateway has it).
STATIC_DEFAULT = "\\$default"

_INTEGRATION_PROPERTIES = {
    "AWS_PROXY": frozenset({"ApiId", "Description", "IntegrationType", "IntegrationUri"}),
    "MOCK": frozenset(
        {
            "ApiId",
            "Description",
            "IntegrationType",
            "RequestTemplates",
            "TemplateSelectionExpression",
        }
    ),
}
_INTEGRATION_RESPONSE_PROPERTIES = frozenset(
    {
        "ApiId",
        "IntegrationId",
        "IntegrationResponseKey",
        "ResponseTemplates",
        "TemplateSelectionExpression",
    }
)
_ROUTE_PROPERTIES = frozenset(
    {
        "ApiId",
        "AuthorizationType",
        "AuthorizerId",
        "OperationName",
        "RouteKey",
        "RouteResponseSelectionExpression",
        "Target",
    }
)
_ROUTE_RESPONSE_PROPERTIES = frozenset({"ApiId", "RouteId", "RouteResponseKey"})


@dataclass(frozen=True)
class MockAnswer:
    """What a MOCK integration answers: the selected integration response's template, or
    ``matched`` False when no integration response fits its status (API Gateway then answers
    the frame with "Internal server error")."""

    status: int
    body: str | None
    matched: bool = True


def _unknown(where: str, props: Mapping[str, Any], allowed: Iterable[str]) -> list[str]:
    return [
        f"{where}: property {key} is not supported" for key in sorted(set(props) - set(allowed))
    ]


def _template_problems(where: str, name: str, templates: Any, expression: Any) -> list[str]:
    """A template map and its selection expression: `\\$default` naming a `$default`
    template, each template static (no VTL)."""
    problems = []
    if expression != STATIC_DEFAULT:
        problems.append(
            f"{where}: TemplateSelectionExpression {expression!r} is not supported "
            f"(only {STATIC_DEFAULT!r}, which selects the {DEFAULT_KEY!r} template)"
        )
    if not isinstance(templates, dict) or DEFAULT_KEY not in templates:
        problems.append(f"{where}: {name} without a {DEFAULT_KEY!r} template is not supported")
        return problems
    for key, text in templates.items():
        if not isinstance(text, str) or "$" in text or "#" in text:
            problems.append(
                f"{where}: {name}[{key!r}] is not supported: a template with VTL "
                "(a $ reference or a # directive) is not emulated, only static text"
            )
    return problems


def integration_problems(where: str, props: Mapping[str, Any]) -> list[str]:
    """An AWS::ApiGatewayV2::Integration of the WebSocket API: AWS_PROXY to a Lambda function,
    or MOCK with a static request template that sets an integer statusCode."""
    kind = props.get("IntegrationType")
    if kind not in _INTEGRATION_PROPERTIES:
        return [
            f"{where}: IntegrationType {kind!r} is not supported (AWS_PROXY to a function, or MOCK)"
        ]
    problems = _unknown(where, props, _INTEGRATION_PROPERTIES[kind])
    if kind == "MOCK":
        templates = props.get("RequestTemplates")
        found = _template_problems(
            where, "RequestTemplates", templates, props.get("TemplateSelectionExpression")
        )
        problems += found
        if not found and _status(templates[DEFAULT_KEY]) is None:
            problems.append(
                f"{where}: RequestTemplates[{DEFAULT_KEY!r}] must be a JSON object "
                'with an integer "statusCode" (a MOCK integration\'s status)'
            )
    return problems


def integration_response_problems(
    where: str, props: Mapping[str, Any], integration: Mapping[str, Any] | None
) -> list[str]:
    """An AWS::ApiGatewayV2::IntegrationResponse: of a MOCK integration only (a proxy one has
    none), keyed `$default` or `/regex/`, its templates static."""
    problems = _unknown(where, props, _INTEGRATION_RESPONSE_PROPERTIES)
    kind = (integration or {}).get("IntegrationType")
    if kind != "MOCK":
        problems.append(
            f"{where}: an integration response of an integration of type {kind!r} "
            "is not supported (only of a MOCK integration)"
        )
    key = props.get("IntegrationResponseKey")
    if not isinstance(key, str) or not (key == DEFAULT_KEY or _pattern(key) is not None):
        problems.append(
            f"{where}: IntegrationResponseKey {key!r} is not supported "
            f"({DEFAULT_KEY!r} or a /regular expression/ of the status)"
        )
    if "ResponseTemplates" in props or "TemplateSelectionExpression" in props:
        problems += _template_problems(
            where,
            "ResponseTemplates",
            props.get("ResponseTemplates"),
            props.get("TemplateSelectionExpression"),
        )
    return problems


def route_problems(where: str, props: Mapping[str, Any]) -> list[str]:
    problems = _unknown(where, props, _ROUTE_PROPERTIES)
    expression = props.get("RouteResponseSelectionExpression", DEFAULT_KEY)
    if expression != DEFAULT_KEY:
        problems.append(
            f"{where}: RouteResponseSelectionExpression {expression!r} is not "
            f"supported (only {DEFAULT_KEY!r})"
        )
    return problems


def route_response_problems(where: str, props: Mapping[str, Any]) -> list[str]:
    problems = _unknown(where, props, _ROUTE_RESPONSE_PROPERTIES)
    if props.get("RouteResponseKey") != DEFAULT_KEY:
        problems.append(
            f"{where}: RouteResponseKey {props.get('RouteResponseKey')!r} is not "
            f"supported (only {DEFAULT_KEY!r})"
        )
    return problems


def _pattern(key: str) -> re.Pattern[str] | None:
    if len(key) < 3 or not (key.startswith("/") and key.endswith("/")):
        return None
    try:
        return re.compile(key[1:-1])
    except re.error:
        return None


def _status(template: str) -> int | None:
    try:
        parsed = json.loads(template)
    except ValueError:
        return None
    status = parsed.get("statusCode") if isinstance(parsed, dict) else None
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def mock_answer(
    integration: Mapping[str, Any], responses: Iterable[Mapping[str, Any]]
) -> MockAnswer:
    """The answer of a MOCK integration (checked by `integration_problems`) with these
    integration responses: the first `/regex/` key matching its status, else `$default`."""
    status = _status(integration["RequestTemplates"][DEFAULT_KEY])
    if status is None:
        raise ValueError("a MOCK integration's request template sets no statusCode")
    keyed = {str(r.get("IntegrationResponseKey")): r for r in responses}
    chosen = next(
        (
            response
            for key, response in sorted(keyed.items())
            if (pattern := _pattern(key)) is not None and pattern.fullmatch(str(status))
        ),
        keyed.get(DEFAULT_KEY),
    )
    if chosen is None:
        return MockAnswer(status, None, matched=False)
    templates = chosen.get("ResponseTemplates") or {}
    body = templates.get(DEFAULT_KEY)
    return MockAnswer(status, body if isinstance(body, str) else None)
