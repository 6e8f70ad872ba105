"""What reports and cases need of their store (``warble.dal.reports``, PostgreSQL) and of other
features: the reported tweets, messages and users, the request budgets, and the suspensions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from warble.domain.conversations.ports import StoredMessage
from warble.domain.rate_limits import Verdict
from warble.domain.tweets.ports import StoredTweet


@dataclass(frozen=True)
class StoredReport:
    """A report as stored; its time is its Snowflake id's."""

    id: int
    case_id: int
    reporter_id: int
    target_type: str
    target_id: int
    reason: str
    comment: str | None
    status: str = "open"
    resolved_at_ms: int | None = None


@dataclass(frozen=True)
class Opening:
    """What the first report of a target writes with the case it opens: who is reported (their
    summary then) and what, as it was (the snapshot's JSON)."""

    case_id: int
    subject_id: int
    subject: dict[str, Any]
    snapshot: dict[str, Any]
    conversation_id: int | None = None


@dataclass(frozen=True)
class StoredCase:
    id: int
    target_type: str
    target_id: int
    conversation_id: int | None
    subject_id: int
    subject: dict[str, Any]
    snapshot: dict[str, Any]
    reporter_count: int
    reasons: dict[str, int]
    status: str
    action: str | None
    note: str | None
    closed_at_ms: int | None


@dataclass(frozen=True)
class Closing:
    """A resolution: the case's action and note, and what its reports become."""

    action: str
    note: str | None
    moderator: int
    report_status: str  # actioned | dismissed
    at_ms: int


class ReportStore(Protocol):
    """Reports and cases (PostgreSQL): one open case per target, one report per reporter and
    case, the queue's two orders."""

    def open_report(
        self, reporter_id: int, target_type: str, target_id: int
    ) -> StoredReport | None:
        """The reporter's report of the target in its open case, if any."""
        ...

    def file(self, report: StoredReport, opening: Opening) -> tuple[StoredReport, bool]:
        """In one transaction: the target's open case (``opening`` makes it if there is none),
        then the report in it unless the reporter has one there already. Returns the report in
        the case and whether this call made it (racing calls make one)."""
        ...

    def reports_page(
        self, reporter_id: int, before_id: int | None, limit: int
    ) -> list[StoredReport]: ...
    def open_cases(self, after: tuple[int, int] | None, limit: int) -> list[StoredCase]:
        """Open cases, most reporters first, then oldest first, after ``(reporter_count, id)``."""
        ...

    def closed_cases(self, before: tuple[int, int] | None, limit: int) -> list[StoredCase]:
        """Closed cases, newest closing first, before ``(closed_at_ms, id)``."""
        ...

    def case(self, case_id: int) -> StoredCase | None: ...
    def resolve(
        self, case_id: int, closing: Closing, act: Callable[[StoredCase], None]
    ) -> tuple[StoredCase, bool] | None:
        """Close an open case and set its reports, with ``act`` (the action's effect) run while
        the case is locked: a racing resolve waits, then finds it closed; an ``act`` that raises
        leaves it open. None for no such case; ``(case, False)`` for a case closed already."""
        ...

    def purge_closed(self, closed_before_ms: int, limit: int) -> int:
        """Delete up to ``limit`` cases closed before the time, their reports with them."""
        ...


# ---- what reports need of other features --------------------------------------------------------
class ReportedUsers(Protocol):
    """Profiles (``AccountService``): a reported user's, a subject's summary, the moderators'
    usernames."""

    def profile(self, user_id: int) -> dict[str, Any]: ...
    def profiles(self, user_ids: list[int]) -> dict[int, dict[str, Any]]: ...


class ReportedTweets(Protocol):
    """``TweetService``: a tweet as stored, and its delete as its author's."""

    def load_one(self, tweet_id: int) -> StoredTweet | None: ...
    def delete(self, user_id: int, tweet_id: int) -> None: ...


class ReportedMessages(Protocol):
    """``ConversationService``: a message of one of a member's conversations, and a message
    taken out of its conversation for both people."""

    def message_of(self, member: int, message_id: int) -> StoredMessage | None: ...
    def remove_message(self, conversation_id: int, message_id: int) -> None: ...


class ReportBudget(Protocol):
    """``RateLimits``: the reporter's budget of new reports, and one given back (a report that
    turned out to exist already counts once)."""

    def reports(self, user_id: int) -> Verdict: ...
    def report_given_back(self, user_id: int) -> None: ...


class SuspendsUsers(Protocol):
    """A case resolved with ``suspend`` suspends its subject (the suspensions' service)."""

    def suspend(self, moderator: int, user_id: int) -> object: ...
