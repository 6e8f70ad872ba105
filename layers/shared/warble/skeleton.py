"""The one skeleton every Lambda entry point is wrapped in: Powertools Logger (with the Lambda
context and a correlation id), Tracer and Metrics, in the same order everywhere.

``entry_point(correlation_id_path)`` takes the JMESPath of the trigger's request id
(``aws_lambda_powertools.logging.correlation_paths``); stream consumers set the correlation id
per record instead (the record's eventID), since a batch has no single request.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
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
        inner = handler
        if fields is not None:

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
        observed = logger.inject_lambda_context(correlation_id_path=query)(traced)
        return observed

    return wrap
