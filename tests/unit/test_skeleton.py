"""The entry-point skeleton (``warble.skeleton``) sets the log keys Powertools'
``inject_lambda_context`` sets, without its decorator where it would only set them: the same
keys, in the same order, with the same values, on a cold and on a warm invocation."""

from __future__ import annotations

from typing import Any

import pytest
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.logging import logger as powertools_logger
from warble import skeleton
from warble.skeleton import entry_point, logger

pytestmark = pytest.mark.unit


class Context:
    function_name = "tweets"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:tweets"
    memory_limit_in_mb = 512

    def __init__(self, request_id: str) -> None:
        self.aws_request_id = request_id


def event(request_id: str | None) -> dict[str, Any]:
    return {"requestContext": {} if request_id is None else {"requestId": request_id}}


CONTEXT_KEYS = [
    "cold_start",
    "function_name",
    "function_memory_size",
    "function_arn",
    "function_request_id",
    "correlation_id",
]


def keys_after(handler: Any, evt: dict[str, Any], context: Context) -> list[tuple[str, Any]]:
    """The logger's keys, in order, once the handler has run."""
    handler(evt, context)
    return list(logger.get_current_keys().items())


def test_the_skeleton_sets_the_keys_powertools_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    def route(evt: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"statusCode": 200}

    ours = entry_point(correlation_paths.API_GATEWAY_HTTP)(route)
    theirs = logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)(
        route
    )
    # Given each wrapping of the same route, each invoked first in a fresh process (cold)
    answers = {}
    for name, handler in (("ours", ours), ("theirs", theirs)):
        monkeypatch.setattr(powertools_logger, "is_cold_start", True)
        logger.remove_keys(CONTEXT_KEYS)
        cold = keys_after(handler, event("first"), Context("a"))
        # and then warm, with another request id, and a request without one
        warm = keys_after(handler, event("second"), Context("b"))
        bare = keys_after(handler, event(None), Context("c"))
        answers[name] = (cold, warm, bare)
    # then the keys are the same, in the same order, with the same values
    assert answers["ours"] == answers["theirs"]
    cold, warm, _ = answers["ours"]
    assert dict(cold)["cold_start"] is True and dict(warm)["cold_start"] is False
    assert dict(warm)["correlation_id"] == "second" and dict(warm)["function_request_id"] == "b"


def test_powertools_decorator_is_kept_where_it_does_more(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the event logged on every invocation (POWERTOOLS_LOGGER_LOG_EVENT)
    monkeypatch.setenv("POWERTOOLS_LOGGER_LOG_EVENT", "true")
    # then the skeleton leaves the keys to Powertools' decorator, which logs it
    assert not skeleton._plain_logging()
    monkeypatch.setenv("POWERTOOLS_LOGGER_LOG_EVENT", "false")
    assert skeleton._plain_logging()


def test_a_warm_invocation_asks_no_more_of_powertools(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a handler in its skeleton, and Powertools' cold start check counted
    asked: list[bool] = []
    check = powertools_logger._is_cold_start

    def counted() -> bool:
        asked.append(check())
        return asked[-1]

    monkeypatch.setattr(powertools_logger, "is_cold_start", True)
    monkeypatch.setattr(powertools_logger, "_is_cold_start", counted)
    handler = entry_point(correlation_paths.API_GATEWAY_HTTP)(lambda evt, context: None)
    # when it is invoked cold, then warm three times
    for n in range(4):
        handler(event(str(n)), Context(str(n)))
    # then the check ran until it said no (cold, then the first warm one): its decorator ran
    # it on every invocation, reading the environment each time
    assert asked == [True, False]
