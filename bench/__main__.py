"""``python -m bench [group ...] [--quick] [--list] [--out PATH]``."""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import subprocess
import sys
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path

from bench import GROUP_MODULES, harness
from bench.harness import (
    GROUPS,
    GroupResult,
    Run,
    markdown_report,
    run_group,
    text_table,
    use_clock,
)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "bench" / "results" / "latest.md"


def _git() -> str:
    def out(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10
            ).stdout.strip()
        except OSError:
            return ""

    commit = out("rev-parse", "--short", "HEAD") or "unknown"
    return commit + (" + uncommitted changes" if out("status", "--porcelain") else "")


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    names = ("aws-lambda-powertools", "redis", "psycopg", "pynamodb", "boto3", "bcrypt", "moto")
    parts = []
    for name in names:
        try:
            parts.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            continue
    return ", ".join(parts)


def header(
    groups: list[str], scale: float, started: datetime, load: tuple[float, ...]
) -> list[str]:
    lines = [
        f"Run {started:%Y-%m-%d %H:%M} UTC on {_cpu()}, {os.cpu_count()} CPUs; "
        f"Python {platform.python_version()}; commit {_git()}.",
        "",
        f"Groups: {', '.join(groups)}. Load average at start: "
        + " / ".join(f"{x:.2f}" for x in load)
        + " (1/5/15 min; other work on the machine widens the spread, while the interleaved "
        "path/raw rounds keep the ratios comparable).",
        "",
        f"Packages: {_versions()}.",
        "",
        "Every path is measured in the same run as its raw baselines, in interleaved rounds; "
        "**path / this** is the path's median over the row's median. Times are per call of one "
        f"caller ({'thread CPU time' if harness.CLOCK == 'cpu' else 'perf_counter_ns'}); "
        "ops/s is 1 / mean. p99 of fewer than 100 samples is the maximum.",
    ]
    if scale != 1.0:
        lines += ["", f"**Quick run (scale {scale}): smoke test only, not for publishing.**"]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("groups", nargs="*", help="groups to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the groups and exit")
    parser.add_argument("--quick", action="store_true", help="a short smoke run (scale 0.1)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="TEXT",
        help="measure only the benchmarks whose title contains TEXT (repeatable)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Markdown report path")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default=os.environ.get("BENCH_CLOCK", "wall"),
        help="time calls by the wall clock (default) or by the calling thread's CPU time, "
        "which a busy machine does not lengthen (the stores' waits left out)",
    )
    args = parser.parse_args(argv)
    use_clock(args.clock)

    for module in GROUP_MODULES:
        importlib.import_module(module)
    if args.list:
        for g in GROUPS.values():
            print(f"{g.name:12} {g.description}")
        return 0
    unknown = [name for name in args.groups if name not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; known: {', '.join(GROUPS)}")
    selected = [GROUPS[name] for name in (args.groups or GROUPS)]

    # Powertools' Metrics warns on every invocation that publishes no metric.
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    scale = 0.1 if args.quick else 1.0
    started = datetime.now(UTC)
    load = os.getloadavg() if hasattr(os, "getloadavg") else ()
    lines = header([g.name for g in selected], scale, started, load)
    print("\n".join(lines).replace("**", ""), end="\n\n", flush=True)

    run = Run(scale=scale, only=args.only)
    done: list[GroupResult] = []
    clock = time.perf_counter()
    try:
        for g in selected:
            print(f"== {g.name}: {g.description}", flush=True)
            result = run_group(g, run, lambda r: print(text_table(r), end="\n\n", flush=True))
            done.append(result)
            print(f"({g.name}: {result.seconds:.1f} s)\n", flush=True)
    finally:
        run.close()
    total = time.perf_counter() - clock
    lines.append("")
    lines.append(f"Whole run: {total:.0f} s.")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown_report(lines, done))
    print(f"Whole run: {total:.0f} s. Markdown: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
