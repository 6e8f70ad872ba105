"""Media (API.md "Media (images)")."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from warble.schemas.base import _Request

ContentType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]


class CreateMedia(_Request):
    content_type: ContentType = Field(description="the file's type; the upload must send it")
    size: int = Field(ge=1, le=5 * 1024 * 1024, description="the file's bytes: 1 to 5 MiB")
    alt_text: str = Field(default="", max_length=1500, description="0 to 1500 characters")

    @field_validator("size", mode="before")
    @classmethod
    def _integral(cls, value: Any) -> Any:
        # JSON Schema's integer is any number with a zero fractional part (5242879.0, 1e3), as
        # the document's ``type: integer`` promises; strict mode alone takes ints only.
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value


class PatchMedia(_Request):
    alt_text: str = Field(max_length=1500, description="0 to 1500 characters")
