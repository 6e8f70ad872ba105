"""AccountDeletionFunction (warble.domain.deletion): a batch of workflow steps from SQS, each
a slice of one account's deletion, with partial batch failures (a step that fails stays in the
queue and comes again after the visibility timeout; after five receives SQS moves it to the
failure queue); and, on its schedule, the sweep that starts again a workflow that stalled."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services
from warble.domain.deletion.ports import step_of
from warble.skeleton import entry_point, logger, metrics


@entry_point()
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("action") == "restart_stalled":
        restarted = services.deletion().restart_stalled()
        if restarted:
            logger.warning("stalled deletions restarted", extra={"accounts": restarted})
        return {"restarted": restarted}
    return run_steps(event.get("Records") or [])


def run_steps(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Each record's step in turn; the records not done, as ``batchItemFailures``."""
    failures = []
    for record in records:
        try:
            step = step_of(json.loads(record["body"]))
        except (KeyError, TypeError, ValueError):
            # Not a step: nothing could ever run it; kept, it would reach the failure queue.
            logger.error("not a deletion step", extra={"message_id": record.get("messageId")})
            failures.append({"itemIdentifier": record.get("messageId", "")})
            continue
        try:
            following = services.deletion().run(step)
        except Exception:  # this step only: SQS delivers it again, then the failure queue
            logger.exception("deletion step failed", extra={"user_id": step.user_id,
                                                             "step": step.name})  # fmt: skip
            failures.append({"itemIdentifier": record["messageId"]})
            continue
        metrics.add_metric("DeletionSteps", MetricUnit.Count, 1)
        if following is None and step.name == "finish":
            metrics.add_metric("AccountsDeleted", MetricUnit.Count, 1)
            logger.info("account deletion finished", extra={"user_id": step.user_id})
    return {"batchItemFailures": failures}
