"""API.md's error body: its models, and the one mapping from exceptions to answers."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from warble.errors import (
    FieldError,
    MethodNotAllowed,
    RateLimited,
    Unavailable,
    ValidationFailed,
    WarbleError,
)
from warble.ids import SNOWFLAKE_PATTERN, USER_REF_PATTERN
from warble.schemas.base import USERNAME_PATTERN, _Model

# A regular expression is no message for a person (issue 34: sign-up showed
# ``^[A-Za-z0-9_]{1,15}$``): what each pattern asks for, in words.
PATTERN_WORDS = {
    USERNAME_PATTERN: "must be 1 to 15 letters (a to z), digits or underscores",
    SNOWFLAKE_PATTERN: "must be an id: digits only",
    USER_REF_PATTERN: "must be a user id (digits only) or me",
    r"\S": "must not be only white space",
}


class FieldErrorOut(_Model):
    field: str
    message: str
    id: str | None = Field(default=None, description="the refused item (invalid_media: a media id)")


class ErrorBody(_Model):
    code: str
    message: str
    details: list[FieldErrorOut] | None = None


class ErrorOut(_Model):
    error: ErrorBody


JSON_HEADERS = {"Content-Type": "application/json"}


def error_body(code: str, message: str, details: list[FieldError] | None = None) -> str:
    error: dict[str, Any] = {"code": code, "message": message}
    if details:
        error["details"] = [
            {"field": d.field, "message": d.message, **({"id": d.id} if d.id else {})}
            for d in details
        ]
    return json.dumps({"error": error})


def headers_for(exc: WarbleError) -> dict[str, str]:
    if isinstance(exc, RateLimited | Unavailable):
        return {**JSON_HEADERS, "Retry-After": str(exc.retry_after)}
    if isinstance(exc, MethodNotAllowed):
        return {**JSON_HEADERS, "Allow": ", ".join(exc.allowed)}
    return dict(JSON_HEADERS)


def describe(exc: WarbleError) -> tuple[int, dict[str, str], str]:
    details = exc.details if isinstance(exc, ValidationFailed) else None
    return exc.status, headers_for(exc), error_body(exc.code, exc.message, details)


def proxy_response(exc: WarbleError) -> dict[str, Any]:
    """The same answer as a raw payload-2.0 response, for errors raised before routing."""
    status, headers, body = describe(exc)
    return {"statusCode": status, "headers": headers, "body": body, "isBase64Encoded": False}


def validation_details(errors: list[dict[str, Any]]) -> list[FieldError]:
    """Pydantic/Powertools errors as ``{"field", "message"}``, one per bad field."""
    details = []
    for err in errors:
        location = [
            str(part) for part in err.get("loc", ()) if part not in ("body", "query", "path")
        ]
        if err.get("type") == "json_invalid":
            details.append(FieldError("body", "is not valid JSON"))
            continue
        field = ".".join(location) or "body"
        message = str(err.get("msg", "is not valid"))
        if err.get("type") == "string_pattern_mismatch":
            pattern = (err.get("ctx") or {}).get("pattern")
            message = PATTERN_WORDS.get(str(pattern), "is not in the form this field takes")
        if message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        details.append(FieldError(field, message))
    return details
