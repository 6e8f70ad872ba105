"""Reports and moderators' cases (API.md "Reports and moderation", docs/moderation.md).

A person reports a user, a tweet or a message; every open report of one target belongs to its
one open case, which moderators (the admins) resolve. The first report of a target snapshots it
(the evidence survives the author's delete); a closed case is kept, snapshot included, for
``retention_days`` and then purged with its reports (``purge``, a daily schedule). The reported
person is never told: nothing here notifies or changes what they see until a moderator acts.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

from warble import clock
from warble.domain.logins import login_key
from warble.domain.media.answers import Media, media_answers
from warble.domain.pagination import (
    decode_cursor,
    decode_cursor_pair,
    encode_cursor,
    encode_cursor_pair,
)
from warble.domain.reports.answers import (
    Case,
    CasePage,
    MessageSnapshot,
    Report,
    ReportPage,
    Snapshot,
    TweetSnapshot,
    UserSnapshot,
)
from warble.domain.reports.ports import (
    Closing,
    Opening,
    ReportBudget,
    ReportedMessages,
    ReportedTweets,
    ReportedUsers,
    ReportStore,
    StoredCase,
    StoredReport,
    SuspendsUsers,
)
from warble.domain.shared import IdGenerator, UserSummary
from warble.errors import Conflict, FieldError, Forbidden, NotFound, RateLimited, ValidationFailed
from warble.ids import decompose

TARGET_TYPES = ("user", "tweet", "message")
REASONS = ("spam", "abuse", "hate", "violence", "sexual", "self_harm", "impersonation", "other")
ACTIONS = ("dismiss", "remove", "suspend")
CASE_STATUSES = ("open", "closed")
MAX_COMMENT = 1000
MAX_NOTE = 1000
PURGE_SLICE = 500


def _invalid(field: str, message: str) -> ValidationFailed:
    return ValidationFailed([FieldError(field, message)])


def report_answer(report: StoredReport) -> Report:
    resolved = report.resolved_at_ms
    return Report(
        id=str(report.id),
        target_type=report.target_type,
        target_id=str(report.target_id),
        reason=report.reason,
        comment=report.comment,
        status=report.status,
        created_at=clock.rfc3339_ms(decompose(report.id)[0]),
        resolved_at=None if resolved is None else clock.rfc3339_ms(resolved),
    )


def snapshot_answer(target_type: str, snapshot: dict[str, Any]) -> Snapshot:
    if target_type == "tweet":
        return TweetSnapshot(snapshot["text"], [Media(**m) for m in snapshot["media"]])
    if target_type == "message":
        return MessageSnapshot(snapshot["text"])
    return UserSnapshot(snapshot["display_name"], snapshot["bio"])


def _summary(profile: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(profile["id"]),
        "username": profile["username"],
        "display_name": profile["display_name"],
    }


class ReportService:
    def __init__(
        self,
        store: ReportStore,
        *,
        ids: IdGenerator,
        users: ReportedUsers,
        tweets: ReportedTweets,
        messages: ReportedMessages,
        budget: ReportBudget,
        suspensions: SuspendsUsers,
        moderators: frozenset[str],
        media_url: str,
        retention_days: int,
    ) -> None:
        self._store = store
        self._ids = ids
        self._users = users
        self._tweets = tweets
        self._messages = messages
        self._budget = budget
        self._suspensions = suspensions
        self._moderators = moderators
        self._media_url = media_url
        self._retention_ms = retention_days * 86_400_000

    # ---- a person's reports ---------------------------------------------------------------
    def report(
        self,
        reporter: int,
        target_type: str,
        target_id: int | None,
        reason: str,
        comment: str | None,
    ) -> tuple[Report, bool]:
        """File a report; ``True`` when it is new (``201``), ``False`` for the reporter's open
        report of the same target (``200``, that report; it spends no budget)."""
        if target_type not in TARGET_TYPES:
            raise _invalid("target_type", f"must be one of {', '.join(TARGET_TYPES)}")
        if reason not in REASONS:
            raise _invalid("reason", f"must be one of {', '.join(REASONS)}")
        if comment is not None and len(comment) > MAX_COMMENT:
            raise _invalid("comment", f"at most {MAX_COMMENT} characters")
        if target_id is None:
            raise NotFound(f"No such {target_type}.")
        opening = self._opening(reporter, target_type, target_id)
        existing = self._store.open_report(reporter, target_type, target_id)
        if existing is not None:
            return report_answer(existing), False
        spent = self._budget.reports(reporter)
        if not spent.allowed:
            raise RateLimited(spent.retry_after, "Too many reports; try again later.")
        report = StoredReport(
            self._ids.next_id(), opening.case_id, reporter, target_type, target_id, reason, comment
        )
        stored, made = self._store.file(report, opening)
        if not made:  # a racing twin made it: the one report counts once
            self._budget.report_given_back(reporter)
        return report_answer(stored), made

    def _opening(self, reporter: int, target_type: str, target_id: int) -> Opening:
        """Who and what a report is about, as a new case would keep it; ``404`` for a target
        the reporter cannot name, ``400`` for the reporter's own."""
        own = _invalid("target_id", "you cannot report yourself or what you wrote")
        case_id = self._ids.next_id()
        if target_type == "user":
            profile = self._users.profile(target_id)  # NotFound for no such user
            if target_id == reporter:
                raise own
            shown = {"display_name": profile["display_name"], "bio": profile["bio"]}
            return Opening(case_id, target_id, _summary(profile), shown)
        if target_type == "tweet":
            tweet = self._tweets.load_one(target_id)
            if tweet is None:
                raise NotFound("No such tweet.")
            if tweet.author_id == reporter:
                raise own
            media = [dataclasses.asdict(m) for m in media_answers(tweet.media, self._media_url)]
            author = self._users.profile(tweet.author_id)
            return Opening(
                case_id, tweet.author_id, _summary(author), {"text": tweet.text, "media": media}
            )
        message = self._messages.message_of(reporter, target_id)
        if message is None:  # no such message, or not in a conversation of the reporter's
            raise NotFound("No such message.")
        if message.sender_id == reporter:
            raise own
        sender = self._users.profile(message.sender_id)
        return Opening(
            case_id, message.sender_id, _summary(sender), {"text": message.text},
            message.conversation_id,
        )  # fmt: skip

    def mine(self, reporter: int, limit: int, cursor: str | None) -> ReportPage:
        """The reporter's reports, newest first."""
        kind = "reports"
        rows = self._store.reports_page(reporter, decode_cursor(kind, cursor), limit)
        more = encode_cursor(kind, rows[-1].id) if len(rows) >= limit else None
        return ReportPage([report_answer(r) for r in rows], more)

    # ---- moderators ----------------------------------------------------------------------------
    def require_moderator(self, user_id: int) -> None:
        username = login_key(str(self._users.profile(user_id)["username"]))
        if username not in self._moderators:
            raise Forbidden("Only moderators may see and resolve cases.")

    def cases(self, moderator: int, status: str, limit: int, cursor: str | None) -> CasePage:
        """Open cases with the most distinct reporters first, then the oldest; closed ones
        newest first."""
        if status not in CASE_STATUSES:
            raise _invalid("status", "must be open or closed")
        self.require_moderator(moderator)
        kind = f"cases.{status}"
        if status == "open":
            rows = self._store.open_cases(decode_cursor_pair(kind, cursor), limit)
            last = (rows[-1].reporter_count, rows[-1].id) if rows else None
        else:
            rows = self._store.closed_cases(decode_cursor_pair(kind, cursor), limit)
            last = (rows[-1].closed_at_ms or 0, rows[-1].id) if rows else None
        more = encode_cursor_pair(kind, *last) if last and len(rows) >= limit else None
        return CasePage(self._render(rows), more)

    def resolve(self, moderator: int, case_id: int | None, action: str, note: str | None) -> Case:
        """Close an open case with its action: ``dismiss`` (its reports dismissed), ``remove``
        (the tweet deleted as its author's delete does, or the message taken out of its
        conversation) or ``suspend`` (the subject suspended); the reports are then actioned.
        The action's effect and the closing commit together; of racing resolves one wins, the
        others get ``409``."""
        if action not in ACTIONS:
            raise _invalid("action", f"must be one of {', '.join(ACTIONS)}")
        if note is not None and len(note) > MAX_NOTE:
            raise _invalid("note", f"at most {MAX_NOTE} characters")
        self.require_moderator(moderator)
        case = None if case_id is None else self._store.case(case_id)
        if case is None:
            raise NotFound("No such case.")
        if case.status == "closed":
            raise Conflict("This case is closed already.")
        if action == "remove" and case.target_type == "user":
            raise _invalid("action", "a user cannot be removed: suspend them instead")
        closing = Closing(
            action, note, moderator, "dismissed" if action == "dismiss" else "actioned",
            clock.epoch_ms(),
        )  # fmt: skip
        resolved = self._store.resolve(
            case.id, closing, lambda locked: self._act(moderator, locked, action)
        )
        if resolved is None:
            raise NotFound("No such case.")
        closed, now = resolved
        if not now:
            raise Conflict("This case is closed already.")
        return self._render([closed])[0]

    def _act(self, moderator: int, case: StoredCase, action: str) -> None:
        if action == "suspend":
            self._suspensions.suspend(moderator, case.subject_id)
        elif action == "remove" and case.target_type == "tweet":
            with contextlib.suppress(NotFound):  # its author deleted it first: the same
                self._tweets.delete(case.subject_id, case.target_id)
        elif action == "remove" and case.conversation_id is not None:
            self._messages.remove_message(case.conversation_id, case.target_id)

    def purge(self, now_ms: int | None = None) -> int:
        """Delete the cases closed more than ``retention_days`` ago, their snapshots and
        reports with them, a slice at a time; returns how many cases went."""
        cutoff = (clock.epoch_ms() if now_ms is None else now_ms) - self._retention_ms
        purged = 0
        while True:
            gone = self._store.purge_closed(cutoff, PURGE_SLICE)
            purged += gone
            if gone < PURGE_SLICE:
                return purged

    def _render(self, cases: list[StoredCase]) -> list[Case]:
        """Cases with their subjects as they are now (as they were, once the account is gone)."""
        live = self._users.profiles(list({c.subject_id for c in cases}))
        answers = []
        for c in cases:
            held = live.get(c.subject_id)
            subject = _summary(held) if held is not None else c.subject
            closed = c.closed_at_ms
            answers.append(
                Case(
                    id=str(c.id),
                    target_type=c.target_type,
                    target_id=str(c.target_id),
                    subject=UserSummary(
                        subject["id"], subject["username"], subject["display_name"]
                    ),
                    snapshot=snapshot_answer(c.target_type, c.snapshot),
                    reporter_count=c.reporter_count,
                    reasons={k: v for k, v in c.reasons.items() if v > 0},
                    status=c.status,
                    action=c.action,
                    note=c.note,
                    opened_at=clock.rfc3339_ms(decompose(c.id)[0]),
                    closed_at=None if closed is None else clock.rfc3339_ms(closed),
                )
            )
        return answers
