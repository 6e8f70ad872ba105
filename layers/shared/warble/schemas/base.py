"""What every feature's request models share: strict requests, storable texts, models built on
first use. (The answers every feature embeds, ``UserSummary`` and ``Page``, are the domain's:
``warble.domain.shared``.)"""

from __future__ import annotations

import re
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    field_validator,
)

USERNAME_PATTERN = r"^[A-Za-z0-9_]{1,15}$"


# JSON's "\ud800" escapes decode to lone UTF-16 surrogates, which have no UTF-8 form: neither
# PostgreSQL nor DynamoDB (nor bcrypt) can take them. PostgreSQL text cannot hold NUL either.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(value: str) -> str:
    """A text the stores can hold, else the field's 400 (rather than the store's 500)."""
    found = _UNSTORABLE.search(value)
    if found is not None:
        what = "NUL characters" if found.group() == "\x00" else "unpaired surrogates"
        raise ValueError(f"must not contain {what}")
    return value


class _Model(BaseModel):
    # Each model's validator is built on its first use, not at import: a function uses a few of
    # these models (MetaFunction's OpenAPI document builds them all, on its first request).
    model_config = ConfigDict(defer_build=True)


class _Request(_Model):
    # Strict: JSON types are taken as they are (``false`` is not the number 0, ``"1"`` not 1).
    model_config = ConfigDict(str_strip_whitespace=False, extra="ignore", strict=True)

    # Every text of every request body, lists of texts included, before any store sees it.
    @field_validator("*")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        if isinstance(value, str):
            return storable(value)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, str):
                    storable(item)
        return value


def _password(value: str) -> str:
    size = len(value.encode("utf-8"))
    if size < 8 or size > 72:
        raise ValueError("must be 8 to 72 bytes of UTF-8")
    return value
