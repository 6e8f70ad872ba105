"""Tweets, timelines and likes (API.md "Tweets and timelines")."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    ConfigDict,
    Field,
    StringConstraints,
)

from warble.ids import SNOWFLAKE_PATTERN
from warble.schemas.base import _Request


class CreateTweet(_Request):
    """A text of 1 to 280 characters, not only white space; or 1 to 4 media, with any text."""

    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": ["text"], "properties": {"text": {"minLength": 1, "pattern": r"\S"}}},
                {"required": ["media_ids"], "properties": {"media_ids": {"minItems": 1}}},
            ]
        }
    )

    # The 280-character rule applies after NFC normalisation, in the domain
    # (warble.domain.text.normalise_text); the document shows that rule, and the model's own
    # bound only keeps absurd bodies out of the normaliser.
    text: str = Field(
        default="",
        max_length=4000,
        description="1 to 280 characters after NFC normalisation, not only white space; with"
        " media_ids it may be empty",
        # What the domain checks after NFC (warble.domain.tweets.normalise_text); the model's
        # own bound only keeps absurd bodies out of the normaliser.
        json_schema_extra={"maxLength": 280},
    )
    reply_to: str | None = Field(default=None, pattern=SNOWFLAKE_PATTERN)
    media_ids: list[Annotated[str, StringConstraints(min_length=1, max_length=64)]] = Field(
        default_factory=list, max_length=4, description="at most 4, each 1 to 64 characters"
    )
