"""The builder of reports and moderators' cases."""

from __future__ import annotations

from typing import TYPE_CHECKING

from warble.services.deferred import deferred
from warble.services.parts import Parts
from warble.services.tweets import media_base

if TYPE_CHECKING:
    from warble.domain.reports.service import ReportService


def reports(c: Parts) -> ReportService:
    from warble.domain.reports.service import ReportService

    stores = c.stores
    return ReportService(
        stores.reports(),
        ids=c.ids,
        users=c.profiles,
        # Built on their first use: a report of a user reads neither.
        tweets=deferred(lambda: c.tweets),
        messages=deferred(lambda: c.conversations),
        budget=c.rate_limits,
        suspensions=deferred(lambda: c.suspensions),
        moderators=c.admin_usernames,
        media_url=media_base(c.settings),
        retention_days=c.settings.report_case_retention_days,
    )
