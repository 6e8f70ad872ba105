"""The rule every text a user writes keeps (a tweet, a direct message): NFC first, then its
length."""

from __future__ import annotations

import unicodedata

from warble.errors import FieldError, ValidationFailed


def normalise_text(text: str, max_chars: int, *, may_be_empty: bool = False) -> str:
    """NFC first, then the length rule: 1 to ``max_chars`` characters, not only white space
    (``may_be_empty``: a tweet with media may have no text at all)."""
    normal = unicodedata.normalize("NFC", text)
    if may_be_empty and not normal.strip():
        return ""
    if not normal.strip():
        raise ValidationFailed([FieldError("text", "must not be empty or only white space")])
    if len(normal) > max_chars:
        raise ValidationFailed([FieldError("text", f"must be at most {max_chars} characters")])
    return normal
