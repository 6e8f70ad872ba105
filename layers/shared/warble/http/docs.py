"""Building the OpenAPI ``responses`` of a route: its success model and the errors it can give."""

from __future__ import annotations

from types import UnionType

from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel

from warble.schemas.errors import ErrorOut


def responses(
    status: int,
    model: type[BaseModel] | type | UnionType | None,
    description: str,
    **errors: str,
) -> dict[int, OpenAPIResponse]:
    """``responses(200, User, "The user", e404="not_found")``; 400 and 401 are implied. The model
    is the class the route answers with (a domain dataclass, rendered by ``warble.http.render``)
    or a pydantic model; a union of classes (``User | RelatedUser``) for a route that answers
    either."""
    documented: dict[int, OpenAPIResponse] = {status: {"description": description}}
    if model is not None:
        documented[status]["content"] = {"application/json": {"model": model}}
    codes = {"e400": "validation_error", "e401": "unauthorized", **errors}
    for key, code in codes.items():
        documented[int(key[1:])] = {
            "description": code,
            "content": {"application/json": {"model": ErrorOut}},
        }
    return documented
