"""A scenario's figures from its recorded answers and the tables: one row of the table, and its
picture (the answers' status codes over time, an SVG written by hand: no plotting library).

"Success" is a 2xx, or the load's expected 409 (the follow limit, Discover without a location);
anything else but a 503 is a wrong answer, a failed connection (status 0) included.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXPECTED = {409}
INSTANT = 10  # seconds counted as "during" an instant fault: the time it is given to recover


def ok(status: int) -> bool:
    return 200 <= status < 300 or status in EXPECTED


@dataclass
class Window:
    """The times of a run: load from ``start``, the fault at ``fault``, the store back at
    ``back``, load stopped at ``end`` (``time.time()``)."""

    start: float
    fault: float
    back: float
    end: float

    @property
    def until(self) -> float:
        """The end of "during the fault": the store's return, or for a fault that is over at
        once (a FLUSHALL, dropped connections) the ``INSTANT`` seconds after it."""
        return self.back if self.back - self.fault >= 1 else self.fault + INSTANT


def read_answers(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def recovery(answers: list[dict[str, Any]], back: float) -> float | None:
    """Seconds from the store's return to the end of the last failed HTTP answer that started
    after it (0: none failed); None if no request succeeded after it. WebSocket sends are left
    out: the load's socket users do not reconnect (the web client does, with backoff)."""
    after = [a for a in answers if a["t"] >= back and not a["route"].startswith("WS")]
    if not any(ok(a["status"]) for a in after):
        return None
    failed = [a["t"] + a["ms"] / 1000 for a in after if not ok(a["status"])]
    return round(max(failed) - back, 1) if failed else 0.0


def ws_recovery(answers: list[dict[str, Any]], back: float) -> float | None:
    """``recovery`` for the WebSocket sends (whose users connect again once theirs closed)."""
    after = [a for a in answers if a["t"] >= back and a["route"].startswith("WS")]
    if not any(ok(a["status"]) for a in after):
        return None
    failed = [a["t"] + a["ms"] / 1000 for a in after if not ok(a["status"])]
    return round(max(failed) - back, 1) if failed else 0.0


def row(answers: list[dict[str, Any]], window: Window) -> dict[str, Any]:
    """The answers' part of the row: those that started during the fault."""
    during = [a for a in answers if window.fault <= a["t"] < window.until]
    after = [a for a in answers if a["t"] >= window.back and not a["route"].startswith("WS")]
    unavailable = [a for a in during if a["status"] == 503]
    wrong = Counter(a["status"] for a in during if not ok(a["status"]) and a["status"] != 503)
    return {
        "requests": len(during),
        "wrong": sum(wrong.values()),
        "wrong_by_status": dict(wrong),
        "unavailable": len(unavailable),
        "without_retry_after": sum(
            1 for a in unavailable if not a["retry_after"] and not a["route"].startswith("WS")
        ),
        "p99_ms": round(percentile([a["ms"] for a in during], 0.99)),
        "recovery_s": recovery(answers, window.back),
        "ws_recovery_s": ws_recovery(answers, window.back),
        "wrong_by_route": dict(
            Counter(a["route"] for a in during if not ok(a["status"]) and a["status"] != 503)
        ),
        "wrong_after": sum(1 for a in after if not ok(a["status"])),
    }


def duplicate_notifications(db: Any, table: str) -> int:
    """Notifications stored twice for one cause: more than one ``N#`` item of a recipient with
    the same kind, actor and tweet (every cause the load makes is unique: a like, a follow, a
    reply or a mention of a new tweet)."""
    causes: Counter[tuple[str, ...]] = Counter()
    start = None
    while True:
        extra = {"ExclusiveStartKey": start} if start else {}
        page = db.scan(TableName=table, ConsistentRead=True, **extra)
        for item in page["Items"]:
            if item["sk"]["S"].startswith("N#") and item["pk"]["S"] != "SYSTEM":
                fields = ("kind", "actor", "tweet_id")
                cause = (item["pk"]["S"], *(str(item.get(k)) for k in fields))
                causes[cause] += 1
        start = page.get("LastEvaluatedKey")
        if not start:
            return sum(count - 1 for count in causes.values() if count > 1)


# --------------------------------------------------------------------------------------------
# The picture
# --------------------------------------------------------------------------------------------

SERIES = (("success", "#3a7d44"), ("503", "#e0a100"), ("other", "#c0392b"))
WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 720, 260, 50, 40, 30


def per_second(answers: list[dict[str, Any]], start: float, end: float) -> list[Counter[str]]:
    seconds = [Counter[str]() for _ in range(max(1, math.ceil(end - start)))]
    for a in answers:
        slot = int(a["t"] - start)
        if 0 <= slot < len(seconds):
            kind = "success" if ok(a["status"]) else "503" if a["status"] == 503 else "other"
            seconds[slot][kind] += 1
    return seconds


def svg(name: str, what: str, answers: list[dict[str, Any]], window: Window) -> str:
    """Stacked bars of answers per second (by when they started), the fault shaded."""
    seconds = per_second(answers, window.start, window.end)
    peak = max(1, *(sum(c.values()) for c in seconds))
    plot_w, plot_h = WIDTH - LEFT - 20, HEIGHT - BOTTOM - TOP
    bar = plot_w / len(seconds)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}"'
        f' font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT}" y="18" font-size="13">{name}: {what}</text>',
    ]
    x0 = LEFT + (window.fault - window.start) * bar
    x1 = LEFT + (window.until - window.start) * bar
    out.append(f'<rect x="{x0:.1f}" y="{TOP}" width="{x1 - x0:.1f}" height="{plot_h}"'
               ' fill="#f2dede"/>')  # fmt: skip
    for index, counts in enumerate(seconds):
        y = TOP + plot_h
        for kind, colour in SERIES:
            h = counts[kind] / peak * plot_h
            if h:
                y -= h
                out.append(f'<rect x="{LEFT + index * bar:.1f}" y="{y:.1f}" width="{bar:.1f}"'
                           f' height="{h:.1f}" fill="{colour}"/>')  # fmt: skip
    base = TOP + plot_h
    out += [
        f'<line x1="{LEFT}" y1="{base}" x2="{LEFT + plot_w}" y2="{base}" stroke="black"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}" stroke="black"/>',
        f'<text x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">{peak}</text>',
        f'<text x="{LEFT - 6}" y="{base}" text-anchor="end">0</text>',
        f'<text x="{LEFT}" y="{base + 16}">0 s</text>',
        f'<text x="{LEFT + plot_w}" y="{base + 16}" text-anchor="end">{len(seconds)} s</text>',
        f'<text x="{LEFT + plot_w / 2}" y="{base + 16}" text-anchor="middle">'
        "answers per second by start (shaded: the fault; an instant one's next 10 s)</text>",
    ]
    for index, (kind, colour) in enumerate(SERIES):
        x = LEFT + plot_w - 220 + index * 75
        out.append(f'<rect x="{x}" y="{HEIGHT - 14}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{x + 14}" y="{HEIGHT - 5}">{kind}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
