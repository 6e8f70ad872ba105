"""Muted words' request (API.md "Reports and moderation"). The list's rules (at most 100 words,
each 1 to 50 characters after trimming) are the service's (``warble.domain.muted_words``), so
the unit tier holds them without HTTP; the model takes the list's JSON shape."""

from __future__ import annotations

from pydantic import Field

from warble.schemas.base import _Request


class MutedWordsIn(_Request):
    words: list[str] = Field(
        description="the whole list (replaces the old one): at most 100 words, each 1 to 50 "
        "characters after trimming; `#tag` mutes a hashtag"
    )
