"""The one skeleton every Lambda entry point is wrapped in: Powertools Logger (with the Lambda
context and a correlation id), Tracer and Metrics, in the same order everywhere.

``entry_point(correlation_id_path)`` takes the JMESPath of the trigger's request id
(``aws_lambda_powertools.logging.correlation_paths``); stream consumers set the correlation id
per record instead (the record's eventID), since a batch has no single request.
"""

from __future__ import annotations

import functools
import os
import re
import warnings
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.logging import logger as powertools_logger
from aws_lambda_powertools.shared.constants import LOGGER_LOG_EVENT_ENV
from aws_lambda_powertools.shared.functions import (
    is_durable_context,
    resolve_truthy_env_var_choice,
)
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import startup

Handler = Callable[[dict[str, Any], LambdaContext], Any]

# Powertools shares one configuration per service name (POWERTOOLS_SERVICE_NAME): every module
# that logs or records metrics uses these.
logger = Logger()
# Patches nothing at import: each store instruments its own client (warble.tracing).
tracer = Tracer(auto_patch=False)
metrics = Metrics()
# Most requests record no metric of their own (a read): Powertools then warns on each cold
# start, a line in every function's log that says nothing.
warnings.filterwarnings("ignore", "No application metrics to publish", UserWarning)


_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def _publish_metrics(handler: Handler) -> Handler:
    """``metrics.log_metrics`` without its cost on a request that recorded no metric (most: a
    read): it flushed the empty set only to warn, each time, that there was nothing to publish.
    After the first invocation it also ends the start-up (``warble.startup``)."""

    @functools.wraps(handler)
    def publishing(event: dict[str, Any], context: LambdaContext) -> Any:
        try:
            return handler(event, context)
        finally:
            if metrics.metric_set:
                metrics.flush_metrics()
            startup.finished()

    return publishing


def _plain_logging() -> bool:
    """Whether Powertools' ``inject_lambda_context`` would only set its keys: no event logged
    (POWERTOOLS_LOGGER_LOG_EVENT), no sampling rate, no log buffer."""
    log_event = os.getenv(LOGGER_LOG_EVENT_ENV, "false")
    return not (
        resolve_truthy_env_var_choice(env=log_event)
        or logger.sampling_rate
        or logger._buffer_config
    )


def _with_context_keys(handler: Handler, fields: tuple[str, ...]) -> Handler:
    """``logger.inject_lambda_context`` where it only sets its keys (``_plain_logging``): the
    same keys in the same order (cold start, the context's four, then the correlation id read
    from ``fields`` of the event), set by one ``append_keys``; Powertools' cold start is asked
    until it answers no, and no ever after (it reads the environment on every call). Its
    decorator, the model it builds of the context and its second call cost a warm request more
    than its route's validation (issue 45)."""
    asking = True

    @functools.wraps(handler)
    def logged(event: dict[str, Any], context: LambdaContext) -> Any:
        nonlocal asking
        cold_start = asking and powertools_logger._is_cold_start()
        asking = cold_start
        found: Any = event
        for name in fields:
            found = found.get(name) if isinstance(found, dict) else None
        lambda_context = context.lambda_context if is_durable_context(context) else context
        logger.append_keys(
            cold_start=cold_start,
            function_name=lambda_context.function_name,
            function_memory_size=lambda_context.memory_limit_in_mb,
            function_arn=lambda_context.invoked_function_arn,
            function_request_id=lambda_context.aws_request_id,
            correlation_id=found,
        )
        return handler(event, context)

    return logged


def entry_point(correlation_id_path: str | None = None) -> Callable[[Handler], Handler]:
    """The skeleton. Its choices keep it cheap on a warm request (every millisecond is billed):
    a correlation path of plain field names (all of Powertools' ``correlation_paths`` we use)
    is read as dictionary lookups rather than as a JMESPath query on every invocation, and the
    Tracer records no response (it would encode every answer, a whole page, into the trace)."""
    fields = (
        tuple(correlation_id_path.split("."))
        if correlation_id_path and _DOTTED.fullmatch(correlation_id_path)
        else None
    )
    query = None if fields is not None else correlation_id_path

    def wrap(handler: Handler) -> Handler:
        plain = fields is not None and _plain_logging()
        inner = handler
        if fields is not None and not plain:

            @functools.wraps(handler)
            def inner(event: dict[str, Any], context: LambdaContext) -> Any:
                found: Any = event
                for name in fields:
                    found = found.get(name) if isinstance(found, dict) else None
                logger.set_correlation_id(found)
                return handler(event, context)

        published = _publish_metrics(inner)
        # With tracing off, the Tracer's decorator still builds a dummy segment and subsegment
        # per request (about 35 µs, more than the route of a cached read): only when on.
        traced = (
            published
            if tracer.disabled
            else tracer.capture_lambda_handler(published, capture_response=False)
        )
        if plain and fields is not None:
            return _with_context_keys(traced, fields)
        observed = logger.inject_lambda_context(correlation_id_path=query)(traced)
        return observed

    return wrap
