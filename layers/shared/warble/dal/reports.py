"""Reports and moderators' cases in PostgreSQL (``reports``, ``report_cases``, migration 0042).
The only module spelling the two tables.

- One open case per target: the partial unique index ``report_cases_one_open``; a first report
  inserts its case ``ON CONFLICT DO NOTHING`` and then reads the open case locked, so racing
  first reports share one case.
- One report per reporter and case: ``UNIQUE (case_id, reporter_id)``; the insert that made the
  row (``RETURNING``) raises the case's counts in the same transaction, so racing twins count once.
- The queue reads ``report_cases_queue`` (reporter_count DESC, id) and the closed list
  ``report_cases_closed`` (closed_at DESC, id DESC), a keyset page each.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from psycopg.types.json import Jsonb

from warble.dal.postgres import Database
from warble.domain.reports.ports import Closing, Opening, StoredCase, StoredReport

_CASE = (
    "SELECT id, target_type, target_id, conversation_id, subject_id, subject, snapshot,"
    " reporter_count, reasons, status, action, note, closed_at FROM report_cases"
)
_REPORT = (
    "SELECT id, case_id, reporter_id, target_type, target_id, reason, comment, status,"
    " resolved_at FROM reports"
)


def _ms(moment: datetime | None) -> int | None:
    return None if moment is None else round(moment.timestamp() * 1000)


def _moment(epoch_ms: int) -> datetime:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC)


def _report(row: dict[str, Any]) -> StoredReport:
    return StoredReport(
        id=int(row["id"]),
        case_id=int(row["case_id"]),
        reporter_id=int(row["reporter_id"]),
        target_type=row["target_type"],
        target_id=int(row["target_id"]),
        reason=row["reason"],
        comment=row["comment"],
        status=row["status"],
        resolved_at_ms=_ms(row["resolved_at"]),
    )


def _case(row: dict[str, Any]) -> StoredCase:
    return StoredCase(
        id=int(row["id"]),
        target_type=row["target_type"],
        target_id=int(row["target_id"]),
        conversation_id=row["conversation_id"],
        subject_id=int(row["subject_id"]),
        subject=row["subject"],
        snapshot=row["snapshot"],
        reporter_count=int(row["reporter_count"]),
        reasons={str(k): int(v) for k, v in row["reasons"].items()},
        status=row["status"],
        action=row["action"],
        note=row["note"],
        closed_at_ms=_ms(row["closed_at"]),
    )


class ReportRepository:
    """``warble.domain.reports.ports.ReportStore``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def open_report(
        self, reporter_id: int, target_type: str, target_id: int
    ) -> StoredReport | None:
        row = self._db.run(
            lambda conn: conn.execute(
                _REPORT + " WHERE reporter_id = %s AND target_type = %s AND target_id = %s"
                " AND status = 'open'",
                (reporter_id, target_type, target_id),
            ).fetchone()
        )
        return None if row is None else _report(row)

    def file(self, report: StoredReport, opening: Opening) -> tuple[StoredReport, bool]:
        def work(conn: Any) -> tuple[StoredReport, bool]:
            with conn.transaction():
                conn.execute(
                    "INSERT INTO report_cases (id, target_type, target_id, conversation_id,"
                    " subject_id, subject, snapshot) VALUES (%s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (target_type, target_id) WHERE status = 'open' DO NOTHING",
                    (
                        opening.case_id, report.target_type, report.target_id,
                        opening.conversation_id, opening.subject_id, Jsonb(opening.subject),
                        Jsonb(opening.snapshot),
                    ),
                )  # fmt: skip
                case = conn.execute(
                    "SELECT id FROM report_cases WHERE target_type = %s AND target_id = %s"
                    " AND status = 'open' FOR UPDATE",
                    (report.target_type, report.target_id),
                ).fetchone()
                made = conn.execute(
                    "INSERT INTO reports (id, case_id, reporter_id, target_type, target_id,"
                    " reason, comment) VALUES (%s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (case_id, reporter_id) DO NOTHING RETURNING id",
                    (
                        report.id, case["id"], report.reporter_id, report.target_type,
                        report.target_id, report.reason, report.comment,
                    ),
                ).fetchone()  # fmt: skip
                if made is not None:
                    conn.execute(
                        "UPDATE report_cases SET reporter_count = reporter_count + 1,"
                        " reasons = jsonb_set(reasons, ARRAY[%(r)s],"
                        " to_jsonb(COALESCE((reasons ->> %(r)s)::int, 0) + 1))"
                        " WHERE id = %(id)s",
                        {"r": report.reason, "id": case["id"]},
                    )
                row = conn.execute(
                    _REPORT + " WHERE case_id = %s AND reporter_id = %s",
                    (case["id"], report.reporter_id),
                ).fetchone()
            return _report(row), made is not None

        return self._db.run(work)

    def reports_page(
        self, reporter_id: int, before_id: int | None, limit: int
    ) -> list[StoredReport]:
        rows = self._db.run(
            lambda conn: conn.execute(
                _REPORT + " WHERE reporter_id = %s AND (%s::bigint IS NULL OR id < %s)"
                " ORDER BY id DESC LIMIT %s",
                (reporter_id, before_id, before_id, limit),
            ).fetchall()
        )
        return [_report(r) for r in rows]

    def open_cases(self, after: tuple[int, int] | None, limit: int) -> list[StoredCase]:
        count, after_id = after if after is not None else (1 << 31, 0)
        rows = self._db.run(
            lambda conn: conn.execute(
                _CASE + " WHERE status = 'open'"
                " AND (reporter_count < %(c)s OR (reporter_count = %(c)s AND id > %(id)s))"
                " ORDER BY reporter_count DESC, id LIMIT %(n)s",
                {"c": count, "id": after_id, "n": limit},
            ).fetchall()
        )
        return [_case(r) for r in rows]

    def closed_cases(self, before: tuple[int, int] | None, limit: int) -> list[StoredCase]:
        rows = self._db.run(
            lambda conn: conn.execute(
                _CASE + " WHERE status = 'closed' AND (%(at)s::timestamptz IS NULL"
                " OR (closed_at, id) < (%(at)s, %(id)s))"
                " ORDER BY closed_at DESC, id DESC LIMIT %(n)s",
                {
                    "at": None if before is None else _moment(before[0]),
                    "id": None if before is None else before[1],
                    "n": limit,
                },
            ).fetchall()
        )
        return [_case(r) for r in rows]

    def case(self, case_id: int) -> StoredCase | None:
        row = self._db.run(
            lambda conn: conn.execute(_CASE + " WHERE id = %s", (case_id,)).fetchone()
        )
        return None if row is None else _case(row)

    def resolve(
        self, case_id: int, closing: Closing, act: Callable[[StoredCase], None]
    ) -> tuple[StoredCase, bool] | None:
        def work(conn: Any) -> tuple[StoredCase, bool] | None:
            at = _moment(closing.at_ms)
            with conn.transaction():
                row = conn.execute(_CASE + " WHERE id = %s FOR UPDATE", (case_id,)).fetchone()
                if row is None:
                    return None
                if row["status"] != "open":
                    return _case(row), False
                act(_case(row))
                closed = conn.execute(
                    "UPDATE report_cases SET status = 'closed', action = %s, note = %s,"
                    " closed_by = %s, closed_at = %s WHERE id = %s"
                    " RETURNING "
                    + _CASE.removeprefix("SELECT ").removesuffix(" FROM report_cases"),
                    (closing.action, closing.note, closing.moderator, at, case_id),
                ).fetchone()
                conn.execute(
                    "UPDATE reports SET status = %s, resolved_at = %s"
                    " WHERE case_id = %s AND status = 'open'",
                    (closing.report_status, at, case_id),
                )
            return _case(closed), True

        return self._db.run(work)

    def purge_closed(self, closed_before_ms: int, limit: int) -> int:
        def work(conn: Any) -> int:
            cursor = conn.execute(
                "DELETE FROM report_cases WHERE id IN (SELECT id FROM report_cases"
                " WHERE status = 'closed' AND closed_at < %s ORDER BY closed_at LIMIT %s)",
                (_moment(closed_before_ms), limit),
            )
            return int(cursor.rowcount)

        return self._db.run(work)
