"""Client JSON, parsed with its nesting bounded.

Python's ``json`` recurses per level: a 20 KB body of 10,000 nested arrays raises
RecursionError, which would surface as a 500. No request of API.md nests beyond a few levels,
so anything deeper than ``MAX_DEPTH`` is the client's mistake: a ``400 validation_error``.
Likewise an integer of more digits than Python converts (``sys.get_int_max_str_digits()``,
4,300) makes ``json.loads`` raise a ValueError that is no JSONDecodeError: a 400 too.
"""

from __future__ import annotations

import json
import re
import sys
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


def too_long_number(raw: bytes) -> bool:
    """True if ``raw`` is JSON holding an integer Python refuses to convert (too many digits).
    A C-speed search settles every body without such a run of digits; only one with it is
    parsed, and digits inside a string are no number."""
    limit = sys.get_int_max_str_digits()
    if not limit or not re.search(rb"[0-9]{%d}" % (limit + 1), raw):
        return False
    try:
        json.loads(raw)
    except json.JSONDecodeError:
        return False  # not JSON at all: the parser's own 400
    except ValueError:
        return True
    return False


def number_error(field: str = "body") -> ValidationFailed:
    return ValidationFailed(
        [FieldError(field, f"holds an integer of more than {sys.get_int_max_str_digits()} digits")],
        "The body holds a number too long to read.",
    )


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
    except json.JSONDecodeError:
        raise ValidationFailed([FieldError(field, "is not valid JSON")]) from None
    except ValueError:  # an integer past Python's digit limit
        raise number_error(field) from None
        raise ValidationFailed([FieldError(field, "is not valid JSON")]) from None
