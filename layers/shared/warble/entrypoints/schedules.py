"""Scheduled functions (EventBridge Scheduler, and on demand with
``python -m infra.local schedule <Function>``): one call into a service each."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services
from warble.skeleton import entry_point, logger, metrics


@entry_point(correlation_paths.EVENT_BRIDGE)
def refresh_degrees(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """DegreesFunction: rebuild every user's second-degree set (seed 000)."""
    users = services.graph().refresh_second_degree()
    metrics.add_metric("SecondDegreeSetsWritten", MetricUnit.Count, users)
    logger.info("second-degree sets rebuilt", extra={"users": users})
    return {"users": users}


@entry_point(correlation_paths.EVENT_BRIDGE)
def reconcile_counters(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """ReconcileFunction: recompute every counter from the tables and repair drift; answers
    with the repairs."""
    repairs = services.container().reconciler.run()
    metrics.add_metric("CountersRepaired", MetricUnit.Count, len(repairs))
    if repairs:
        logger.warning("counters repaired", extra={"repairs": [r.as_dict() for r in repairs]})
    return {"repaired": [r.as_dict() for r in repairs]}


@entry_point(correlation_paths.EVENT_BRIDGE)
def flush_last_seen(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """LastSeenFunction: the sessions the gate saw since the last run, their last_seen_at
    written to PostgreSQL a thousand to a statement (warble.domain.accounts)."""
    written = services.accounts().flush_last_seen()
    metrics.add_metric("LastSeenWritten", MetricUnit.Count, written)
    return {"written": written}


@entry_point(correlation_paths.EVENT_BRIDGE)
def purge_cases(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """CasesPurgeFunction: the moderators' cases closed more than REPORT_CASE_RETENTION_DAYS
    ago deleted, with their snapshots and reports (warble.domain.reports)."""
    purged = services.reports().purge()
    metrics.add_metric("CasesPurged", MetricUnit.Count, purged)
    return {"purged": purged}
