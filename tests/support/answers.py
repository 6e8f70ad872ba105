"""What the rendering tests share (``tests/unit/test_rendering_*.py``): a user summary and a
time as API.md writes them, and what the OpenAPI document says of a route's answer."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from warble.domain.shared import UserSummary

ALICE = UserSummary("7262946581234567168", "alice", "Alice")
ALICE_JSON = {"id": "7262946581234567168", "username": "alice", "display_name": "Alice"}
AT = "2026-11-22T06:00:00.000Z"


@cache
def document() -> dict[str, Any]:
    """The API's OpenAPI document (built once per test process)."""
    from warble.http.meta import openapi_document

    return json.loads(openapi_document())  # type: ignore[no-any-return]


def response_component(method: str, path: str, status: str) -> str:
    """The name of the component a route's answer refers to."""
    content = document()["paths"][path][method]["responses"][status]["content"]
    return str(content["application/json"]["schema"]["$ref"]).rpartition("/")[2]


def component(name: str) -> dict[str, Any]:
    return document()["components"]["schemas"][name]  # type: ignore[no-any-return]


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}
