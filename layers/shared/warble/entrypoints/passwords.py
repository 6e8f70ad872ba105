"""PasswordResetFunction (warble.domain.passwords): the password resets asked for, a batch from
SQS. Each is looked up and, for a known address under the cap, mailed, off the request path
(whose answer, a 202 at once, is then the same for every address). A request that fails stays
in the queue, with partial batch failures, and comes again after the visibility timeout; after
five receives SQS moves it to the failure queue. A request delivered twice may mail twice; the
cap of 3 an hour holds all the same (counted in PostgreSQL)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services
from warble.domain.passwords.ports import reset_email_of
from warble.skeleton import entry_point, logger, metrics


@entry_point()
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return mail_resets(event.get("Records") or [])


def mail_resets(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Each record's reset in turn; the records not done, as ``batchItemFailures``."""
    failures = []
    for record in records:
        try:
            email = reset_email_of(record["body"])
        except (KeyError, TypeError, ValueError):
            # Nothing could ever mail it: dropped (logged without its body, which is an address).
            logger.error("not a reset request", extra={"message_id": record.get("messageId")})
            continue
        try:
            sent = services.passwords().mail_reset(email)
        except Exception:  # this request only: SQS delivers it again, then the failure queue
            logger.exception("reset request failed", extra={"message_id": record["messageId"]})
            failures.append({"itemIdentifier": record["messageId"]})
            continue
        if sent:
            metrics.add_metric("ResetEmailsSent", MetricUnit.Count, 1)
    return {"batchItemFailures": failures}
