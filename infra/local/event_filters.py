"""FilterCriteria of an event source mapping: which stream records reach the function.

EventBridge-style patterns matched against the record as Lambda delivers it. Only the rules the
template uses are supported: exact values and `prefix`. `check_pattern` refuses anything else at
start-up (Lambda would apply it, so ignoring it would deliver records AWS would not).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["check_pattern", "matches_filters"]

_MISSING = object()
_SCALARS = (str, int, float, bool, type(None))


def check_pattern(pattern: Any, path: str = "") -> list[str]:
    """What in a (parsed) pattern the local matcher does not support; [] when all of it is."""
    if not isinstance(pattern, dict):
        return [f"pattern{path} must be a JSON object"]
    problems = []
    for key, expected in pattern.items():
        where = f"{path}.{key}"
        if isinstance(expected, dict):
            problems += check_pattern(expected, where)
        elif isinstance(expected, list):
            for rule in expected:
                if isinstance(rule, dict):
                    if list(rule) != ["prefix"] or not isinstance(rule["prefix"], str):
                        problems.append(f"filter rule {rule!r} at {where} is not supported "
                                        "(only exact values and prefix)")  # fmt: skip
                elif not isinstance(rule, _SCALARS):
                    problems.append(f"filter value {rule!r} at {where} is not supported")
        else:
            problems.append(f"filter pattern values must be lists or objects, at {where}")
    return problems


def _rule_matches(rule: Any, value: Any) -> bool:
    """One entry of a pattern's value list against one (scalar) value, or _MISSING."""
    if value is _MISSING:
        return False
    if isinstance(rule, dict):
        return isinstance(value, str) and value.startswith(rule["prefix"])
    if isinstance(rule, bool) or isinstance(value, bool):  # a DynamoDB BOOL: true is not 1
        return type(rule) is type(value) and rule == value
    if isinstance(rule, (int, float)) and isinstance(value, (int, float)):
        return rule == value
    return type(rule) is type(value) and rule == value


def _pattern_matches(pattern: dict[str, Any], value: Any) -> bool:
    container = value if isinstance(value, dict) else {}
    for key, expected in pattern.items():
        actual = container.get(key, _MISSING)
        if isinstance(expected, dict):
            if not _pattern_matches(expected, actual):
                return False
        else:
            candidates = actual if isinstance(actual, list) else [actual]
            if not any(_rule_matches(rule, item) for rule in expected for item in candidates):
                return False
    return True


def matches_filters(record: dict[str, Any], patterns: Iterable[dict[str, Any]]) -> bool:
    """True if the Lambda-shaped `record` matches any pattern (no patterns: everything)."""
    patterns = list(patterns)
    return not patterns or any(_pattern_matches(pattern, record) for pattern in patterns)
