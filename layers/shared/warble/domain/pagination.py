"""Opaque cursors: a list's kind and the position it pins, base64url-encoded.

A cursor pins a position (the last id seen), never an offset, so writes between two page
requests cannot make a page repeat or skip an item. A cursor issued by another list, or
anything a client made up, is a ``400 validation_error``.
"""

from __future__ import annotations

import base64
import binascii

from warble.errors import FieldError, ValidationFailed


def encode_cursor(kind: str, value: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{value}".encode()).decode().rstrip("=")


def decode_cursor(kind: str, raw: str | None) -> int | None:
    """The position a cursor pins, or ValidationFailed for anything this list did not issue."""
    if raw is None:
        return None
    bad = ValidationFailed([FieldError("cursor", "is not a valid cursor")])
    if not raw or len(raw) > 128:
        raise bad
    try:
        text = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise bad from None
    prefix, _, value = text.rpartition(":")
    if prefix != kind or not value.isdigit() or len(value) > 19 or int(value) >= 1 << 63:
        raise bad
    return int(value)
