"""Media (API.md "Media (images)")."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from warble.schemas.base import _Request

ContentType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]


class CreateMedia(_Request):
    content_type: ContentType = Field(description="the file's type; the upload must send it")
    size: int = Field(ge=1, le=5 * 1024 * 1024, description="the file's bytes: 1 to 5 MiB")
    alt_text: str = Field(default="", max_length=1500, description="0 to 1500 characters")


class PatchMedia(_Request):
    alt_text: str = Field(max_length=1500, description="0 to 1500 characters")
