"""What the OpenAPI document says of a route's answer, for the unit tests that check the typed
answers are the classes it names (``tests/unit/test_rendering_*.py``)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any


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
