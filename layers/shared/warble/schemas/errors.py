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
        message = _in_words(err)
        details.append(FieldError(field, message))
    return details


# Pydantic's own wording follows a field's name badly ("Password String should have at least 8
# characters", issue 47 item 15): what each common refusal asks for, in words that follow it.
TYPE_WORDS = {
    "missing": "is required",
    "string_type": "must be text",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "extra_forbidden": "is not a field this request takes",
}


def _in_words(err: dict[str, Any]) -> str:
    kind, ctx = err.get("type"), err.get("ctx") or {}
    message = str(err.get("msg", "is not valid"))
    if kind == "string_pattern_mismatch":
        return PATTERN_WORDS.get(str(ctx.get("pattern")), "is not in the form this field takes")
    if kind == "string_too_short":
        least = ctx.get("min_length", 1)
        return "must not be empty" if least == 1 else f"must be at least {least} characters long"
    if kind == "string_too_long":
        return f"must be at most {ctx.get('max_length')} characters long"
    if kind in ("too_short", "too_long"):
        bound = "at least" if kind == "too_short" else "at most"
        return f"must hold {bound} {ctx.get('min_length', ctx.get('max_length'))} items"
    for name, bound in (("greater_than_equal", "ge"), ("less_than_equal", "le")):
        if kind == name:
            side = "at least" if bound == "ge" else "at most"
            return f"must be {side} {ctx.get(bound)}"
    if kind == "greater_than":
        return f"must be more than {ctx.get('gt')}"
    if kind == "less_than":
        return f"must be less than {ctx.get('lt')}"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}"
    if kind in TYPE_WORDS:
        return TYPE_WORDS[kind]
    if message.startswith("Value error, "):
        return message[len("Value error, ") :]
    return message
