"""MediaFunction: S3 says a file arrived under ``uploads/`` (an ``s3:ObjectCreated`` notification,
invoked asynchronously); each upload's Media becomes ready or failed."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote_plus

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services
from warble.skeleton import entry_point, logger, metrics


@entry_point()
def uploaded(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Each record's upload processed; answers ``{"media": {key: outcome}}``. A record that
    raises fails the invocation once the others are done: Lambda retries an asynchronous
    invocation twice, and a Media already ready or failed is left alone the second time."""
    outcomes: dict[str, str] = {}
    errors: list[Exception] = []
    for record in event.get("Records") or []:
        # S3 gives the key URL-encoded, spaces as "+".
        key = unquote_plus(record["s3"]["object"]["key"])
        try:
            outcomes[key] = services.media().uploaded(key)
        except Exception as exc:  # the others still run; the invocation fails below
            logger.exception("upload not processed", extra={"key": key})
            errors.append(exc)
            continue
        metrics.add_metric(f"Media_{outcomes[key]}", MetricUnit.Count, 1)
    if errors:
        raise errors[0]
    return {"media": outcomes}
