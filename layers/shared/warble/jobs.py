"""Handlers of the non-HTTP functions: the stream counter consumer and the degree refresh.

Same skeleton as the HTTP functions (Logger, Tracer, Metrics); the work is one call into a
service built by ``warble.services``.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services

logger = Logger()
tracer = Tracer()
metrics = Metrics()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def counter_consumer(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """DynamoDB Streams -> counters; answers with partial batch failures."""
    outcome = services.counter_processor().process(event)
    metrics.add_metric("CounterRecords", MetricUnit.Count, len(event.get("Records") or []))
    metrics.add_metric("CounterTransactions", MetricUnit.Count, outcome.transactions)
    if outcome.failures:
        logger.warning("records not applied", extra={"failures": len(outcome.failures)})
        metrics.add_metric("CounterFailures", MetricUnit.Count, len(outcome.failures))
    return outcome.response()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def refresh_degrees(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """The scheduled rebuild of every user's second-degree set (seed 000)."""
    users = services.graph().refresh_second_degree()
    metrics.add_metric("SecondDegreeSetsWritten", MetricUnit.Count, users)
    logger.info("second-degree sets rebuilt", extra={"users": users})
    return {"users": users}
