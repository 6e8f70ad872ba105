"""Client JSON, parsed with its nesting bounded.

Python's ``json`` recurses per level: a 20 KB body of 10,000 nested arrays raises
RecursionError, which would surface as a 500. No request of API.md nests beyond a few levels,
so anything deeper than ``MAX_DEPTH`` is the client's mistake: a ``400 validation_error``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from warble.errors import FieldError, ValidationFailed

MAX_DEPTH = 32

# Strings (skipped whole, escapes included) and the brackets outside them.
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def too_deep(raw: bytes) -> bool:
    """True if ``raw`` opens more than ``MAX_DEPTH`` arrays or objects inside each other."""
    # A body with few brackets cannot be deep: two C-speed counts settle most requests.
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return False
    depth = 0
    for token in _TOKENS.finditer(raw):
        char = token.group()
        if char in (b"[", b"{"):
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif char in (b"]", b"}"):
            depth -= 1
    return False


def nesting_error(field: str = "body") -> ValidationFailed:
    return ValidationFailed(
        [FieldError(field, f"nests more than {MAX_DEPTH} arrays or objects")],
        "The body is nested too deeply.",
    )


def loads(raw: str | bytes, field: str = "body") -> Any:
    """The JSON value of ``raw``; ValidationFailed if it is not JSON or nests too deeply."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if too_deep(data):
        raise nesting_error(field)
    try:
        return json.loads(data)
    except ValueError:
        raise ValidationFailed([FieldError(field, "is not valid JSON")]) from None
