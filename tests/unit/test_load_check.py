"""The load test's verdict over the whole run (bench/load/check.py): the measured window's
failures and the warm-up's before it, from the CSV files Locust and the locustfile write."""

from __future__ import annotations

import csv
from pathlib import Path

from bench.load.check import whole_run

STATS = ["Type", "Name", "Request Count", "Failure Count"]
FAILURES = ["Method", "Name", "Error", "Occurrences"]


def _write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        writer.writerows(rows)


def test_a_5xx_of_the_warm_up_fails_the_run_as_one_of_the_window_does(tmp_path: Path) -> None:
    # given a window with one 500, and a warm-up of 40 requests with two 502s and a 409
    prefix = tmp_path / "load"
    _write(Path(f"{prefix}_stats.csv"), STATS, [["GET", "GET /v1/users/{id}", "90", "1"]])
    _write(Path(f"{prefix}_failures.csv"), FAILURES,
           [["GET", "GET /v1/users/{id}", "HTTPError('500 Server Error')", "1"]])  # fmt: skip
    _write(Path(f"{prefix}_warmup_stats.csv"), STATS,
           [["GET", "GET /v1/users/{id}", "40", "3"], ["", "Aggregated", "40", "3"]])  # fmt: skip
    _write(Path(f"{prefix}_warmup_failures.csv"), FAILURES, [
        ["GET", "GET /v1/users/{id}", "HTTPError('502 Server Error')", "2"],
        ["PUT", "PUT /v1/users/me/following/{id}", "HTTPError('409 Client Error')", "1"],
    ])  # fmt: skip

    # when the whole run is counted
    warmup_requests, failures = whole_run(prefix)

    # then both phases' failures are in it, by status
    assert warmup_requests == 40
    assert failures == {"5xx": 3, "4xx": 1}


def test_a_run_without_warm_up_is_its_window(tmp_path: Path) -> None:
    prefix = tmp_path / "load"
    _write(Path(f"{prefix}_stats.csv"), STATS, [["GET", "GET /v1/trends", "5", "0"]])
    _write(Path(f"{prefix}_failures.csv"), FAILURES, [])

    assert whole_run(prefix) == (0, {})
