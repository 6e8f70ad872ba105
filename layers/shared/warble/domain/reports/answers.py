"""What the reports and cases routes answer (API.md "Reports and moderation")."""

from __future__ import annotations

from dataclasses import dataclass

from warble.domain.media.answers import Media
from warble.domain.shared import Page, UserSummary


@dataclass(slots=True)
class Report:
    """API.md's Report: one person's report of a user, a tweet or a message."""

    id: str
    target_type: str
    target_id: str
    reason: str
    comment: str | None
    status: str  # open | actioned | dismissed
    created_at: str
    resolved_at: str | None


@dataclass(slots=True)
class ReportPage(Page[Report]):
    items: list[Report]


@dataclass(slots=True)
class TweetSnapshot:
    """A reported tweet as it was at the first report."""

    text: str
    media: list[Media]


@dataclass(slots=True)
class MessageSnapshot:
    """A reported direct message as it was at the first report."""

    text: str


@dataclass(slots=True)
class UserSnapshot:
    """A reported user's profile as it was at the first report."""

    display_name: str
    bio: str


Snapshot = TweetSnapshot | MessageSnapshot | UserSnapshot


@dataclass(slots=True)
class Case:
    """API.md's Case: every open report of one target, for the moderators."""

    id: str
    target_type: str
    target_id: str
    subject: UserSummary
    snapshot: Snapshot
    reporter_count: int
    reasons: dict[str, int]
    status: str  # open | closed
    action: str | None  # dismiss | remove | suspend
    note: str | None
    opened_at: str
    closed_at: str | None


@dataclass(slots=True)
class CasePage(Page[Case]):
    items: list[Case]
