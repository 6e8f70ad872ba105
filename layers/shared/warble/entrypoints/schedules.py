"""Scheduled functions (EventBridge Scheduler, and on demand with
``python -m infra.local schedule <Function>``): one call into a service each."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from warble import services
from warble.skeleton import entry_point, logger, metrics

# The share of an invocation's time a reconciliation run spends checking: the rest is for the
# settle wait and the re-checks of what differed.
RECONCILE_SHARE = 0.6


@entry_point(correlation_paths.EVENT_BRIDGE)
def reconcile_counters(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """ReconcileFunction: recount the counters touched since the last run and a page of the
    rolling sweep, paced, within the invocation's time (less the settle wait and the re-checks'
    share), and repair drift; answers with the repairs and how many counters it checked."""
    reconciler = services.container().reconciler
    budget = context.get_remaining_time_in_millis() / 1000 * RECONCILE_SHARE
    repairs = reconciler.run(budget_seconds=max(1.0, budget))
    metrics.add_metric("CountersChecked", MetricUnit.Count, reconciler.checked)
    metrics.add_metric("CountersRepaired", MetricUnit.Count, len(repairs))
    if repairs:
        logger.warning("counters repaired", extra={"repairs": [r.as_dict() for r in repairs]})
    return {"repaired": [r.as_dict() for r in repairs], "checked": reconciler.checked}


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
