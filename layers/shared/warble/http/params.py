"""Path and query parameters shared by the list and item routes."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from warble.errors import NotFound
from warble.ids import SNOWFLAKE_PATTERN, USER_REF_PATTERN, parse_id

# A path id is a Snowflake's decimal form (a malformed one is a 400 by the model, as the
# OpenAPI document says); a well-formed one past 2**63 - 1 names nothing: 404.
Id = Annotated[str, Path(pattern=SNOWFLAKE_PATTERN, description="a Snowflake id (decimal)")]
UserRef = Annotated[
    str, Path(pattern=USER_REF_PATTERN, description="a user id, or me for the caller")
]
Limit = Annotated[int, Query(ge=1, le=100, description="1 to 100")]
Cursor = Annotated[
    str | None,
    Query(
        max_length=128,
        description="opaque, from the previous page's next_cursor; one the server did not"
        " issue is a 400 validation_error",
    ),
]


def id_or_404(raw: str, what: str) -> int:
    value = parse_id(raw)
    if value is None:
        raise NotFound(f"No such {what}.")
    return value


def user_or_me(raw: str, viewer: int) -> int:
    """A user id in a path where ``me`` names the caller."""
    return viewer if raw == "me" else id_or_404(raw, "user")
