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


def encode_cursor_pair(kind: str, first: int, second: int) -> str:
    """A cursor pinning a position of two sort keys (a count, then an id)."""
    return encode_cursor(f"{kind}:{first}", second)


def decode_cursor_pair(kind: str, raw: str | None) -> tuple[int, int] | None:
    """The two sort keys an ``encode_cursor_pair`` cursor pins, or ValidationFailed."""
    if raw is None:
        return None
    bad = ValidationFailed([FieldError("cursor", "is not a valid cursor")])
    try:
        text = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise bad from None
    head, _, _second = text.rpartition(":")
    prefix, _, first = head.rpartition(":")
    if prefix != kind or not first.isdigit() or len(first) > 19 or int(first) >= 1 << 63:
        raise bad
    second = decode_cursor(f"{kind}:{first}", raw)
    assert second is not None
    return int(first), second
