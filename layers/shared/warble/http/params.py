"""Path and query parameters shared by the list and item routes."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from warble.errors import FieldError, NotFound, ValidationFailed
from warble.ids import parse_id

# Long or non-numeric ids get past validation and are answered 404: no such thing exists.
Id = Annotated[str, Path(max_length=32)]
Limit = Annotated[int, Query(ge=1, le=100, description="1 to 100")]
Cursor = Annotated[str | None, Query(max_length=128, description="from the previous page")]


def id_or_404(raw: str, what: str) -> int:
    value = parse_id(raw)
    if value is None:
        raise NotFound(f"No such {what}.")
    return value


def user_or_me(raw: str, viewer: int) -> int:
    """A user id in a path where ``me`` names the caller."""
    return viewer if raw == "me" else id_or_404(raw, "user")


def id_or_400(raw: str, field: str) -> int:
    """For ids a client can only have copied from an answer (tweet ids): a malformed one is a
    client bug, answered ``400 validation_error``; a well-formed unknown one is then a 404."""
    value = parse_id(raw)
    if value is None:
        raise ValidationFailed([FieldError(field, "must be a tweet id (a decimal Snowflake)")])
    return value
