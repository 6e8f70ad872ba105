"""Every JSON answer checked against the OpenAPI document's response schema for its operation
and status: the response models of ``warble.schemas`` are held to what the API really
sends, not only documentation.

``ResponseContract(document).check`` is an httpx response hook (the e2e tier installs it on
every client of the local stack), so a mismatch fails the test that got the answer. Stricter
than the generated schemas in one way: an object may carry no property its model does not
declare (pydantic's schemas allow any), so a field the API sends undocumented is a mismatch.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

import httpx
from jsonschema import Draft202012Validator

# Routes of the API that the document leaves out of itself.
UNDOCUMENTED = {("get", "/v1/openapi.json"), ("get", "/v1/docs")}
UNDOCUMENTED_UNDER = "/v1/docs/"  # Swagger UI's assets
# API Gateway's own answer to a request with no Authorization header at all: it never reaches
# the authorizer (docs/architecture.md, "The handler skeleton is the gate").
GATEWAY_401 = {"message": "Unauthorized"}


class ContractViolation(AssertionError):
    """An answer that its operation's documented response schema does not describe."""


@dataclass(frozen=True)
class _Operation:
    method: str
    template: str
    pattern: re.Pattern[str]
    literals: int  # path segments that are not parameters: the most specific template wins
    responses: dict[str, Any]


def _closed(schema: Any) -> Any:
    """Every object schema with properties, closed to undeclared ones (a copy)."""
    if isinstance(schema, dict):
        closed = {key: _closed(value) for key, value in schema.items()}
        if "properties" in closed and "additionalProperties" not in closed:
            closed["additionalProperties"] = False
        return closed
    if isinstance(schema, list):
        return [_closed(item) for item in schema]
    return schema


class ResponseContract:
    def __init__(self, document: dict[str, Any]) -> None:
        self._components = _closed(copy.deepcopy(document.get("components", {})))
        self._operations: list[_Operation] = []
        for template, operations in document["paths"].items():
            parts = template.split("/")
            regex = "/".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts)
            literals = sum(1 for part in parts if part and not part.startswith("{"))
            for method, operation in operations.items():
                self._operations.append(
                    _Operation(
                        method,
                        template,
                        re.compile(f"^{regex}/?$"),
                        literals,
                        operation["responses"],
                    )
                )
        self.checked = 0

    def operation(self, method: str, path: str) -> _Operation | None:
        found = [op for op in self._operations if op.method == method and op.pattern.match(path)]
        return max(found, key=lambda op: op.literals) if found else None

    def check(self, response: httpx.Response) -> None:
        """The httpx response hook: raise ContractViolation if the answer is not as documented."""
        response.read()
        request = response.request
        method, path = request.method.lower(), request.url.path
        if (method, path.rstrip("/")) in UNDOCUMENTED or path.startswith(UNDOCUMENTED_UNDER):
            return
        status = str(response.status_code)
        json_body = response.headers.get("content-type", "").startswith("application/json")
        where = f"{request.method} {path} -> {status}"
        body = self._json(response, where) if json_body else None
        if status == "401" and "authorization" not in request.headers and body == GATEWAY_401:
            return
        operation = self.operation(method, path)
        if operation is None:
            # The $default route: an unknown path or method, in the API's error shape.
            if status not in ("404", "405"):
                raise ContractViolation(f"{where}: no documented operation answers this")
            self._validate({"$ref": "#/components/schemas/ErrorOut"}, body, where)
            return
        documented = operation.responses.get(status)
        if documented is None:
            raise ContractViolation(
                f"{where}: status {status} is not documented for "
                f"{method.upper()} {operation.template} (documented: {sorted(operation.responses)})"
            )
        content = documented.get("content", {})
        if not content:
            if response.content:
                raise ContractViolation(f"{where}: documented with no body, got {response.text!r}")
            return
        if not json_body:
            raise ContractViolation(
                f"{where}: documented as {sorted(content)}, got "
                f"{response.headers.get('content-type')!r}"
            )
        schema = content.get("application/json", {}).get("schema")
        if schema is not None:
            self._validate(schema, body, where)

    @staticmethod
    def _json(response: httpx.Response, where: str) -> Any:
        try:
            return response.json()
        except json.JSONDecodeError as exc:
            raise ContractViolation(f"{where}: JSON content type, body not JSON") from exc

    def _validate(self, schema: dict[str, Any], body: Any, where: str) -> None:
        root = {**_closed(schema), "components": self._components}
        errors = sorted(Draft202012Validator(root).iter_errors(body), key=lambda e: e.path)
        if errors:
            problems = "; ".join(
                f"at {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
                for e in errors[:5]
            )
            raise ContractViolation(f"{where}: answer does not match its schema: {problems}")
        self.checked += 1
