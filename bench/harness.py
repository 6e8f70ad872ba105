"""The benchmark harness: timing, statistics, a registry of groups, and the report.

A benchmark compares a path (a handler, a service call) with the raw store operations it needs,
measured in the same run and interleaved (path, raw, path, raw, ...) so that a machine that
slows down or speeds up mid-run moves both sides alike. The number to read is the ratio
``path median / raw median``; absolute times depend on the machine.

    @group("accounts", "what it measures")
    def accounts(run: Run) -> Iterator[Benchmark]:
        ...set up...
        yield Benchmark("GET /v1/users/{id}", call_handler, raw_get, baseline="Redis GET")
        ...tear down...

A group is a generator: the harness measures each benchmark as it is yielded, so set-up and
tear-down sit around the ``yield`` statements. Nothing here knows about Warble's stores.
"""

from __future__ import annotations

import gc
import math
import os
import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

# ---- statistics --------------------------------------------------------------------------------


def percentile(sorted_ns: Sequence[int], pct: float) -> float:
    """Nearest-rank percentile of already sorted samples (p99 of 50 samples is the maximum)."""
    if not sorted_ns:
        return math.nan
    rank = max(1, math.ceil(pct / 100 * len(sorted_ns)))
    return float(sorted_ns[rank - 1])


@dataclass(frozen=True)
class Stats:
    n: int
    median_ns: float
    p90_ns: float
    p99_ns: float
    mean_ns: float

    @classmethod
    def of(cls, samples_ns: Sequence[int]) -> Stats:
        if not samples_ns:
            raise ValueError("no samples")
        ordered = sorted(samples_ns)
        return cls(
            n=len(ordered),
            median_ns=float(statistics.median(ordered)),
            p90_ns=percentile(ordered, 90),
            p99_ns=percentile(ordered, 99),
            mean_ns=statistics.fmean(ordered),
        )

    @property
    def ops_per_s(self) -> float:
        """Calls per second of one caller in a loop (1 / mean)."""
        return 1e9 / self.mean_ns if self.mean_ns > 0 else math.inf


# ---- what a benchmark is -----------------------------------------------------------------------


# What a call's time is: wall time (perf_counter_ns), or with ``--clock cpu`` (BENCH_CLOCK=cpu)
# the calling thread's CPU time, which other work on a busy machine does not lengthen. CPU time
# leaves out the waits on the stores (a path and a baseline making the same round trips wait
# alike), so its ratios are the harder ones: the code's own work against the baseline's.
CLOCK = os.environ.get("BENCH_CLOCK", "wall")
_now = time.thread_time_ns if CLOCK == "cpu" else time.perf_counter_ns


def use_clock(clock: str) -> None:
    """``wall`` or ``cpu`` for every call timed from now on."""
    global CLOCK, _now
    CLOCK = clock
    _now = time.thread_time_ns if clock == "cpu" else time.perf_counter_ns


@dataclass(frozen=True)
class Op:
    """One thing timed: ``fn`` is called and timed (``CLOCK``), or, when ``sampled``,
    returns its own duration in ns (e.g. measured inside a subprocess)."""

    label: str
    fn: Callable[[], Any]
    sampled: bool = False

    def sample(self) -> int:
        if self.sampled:
            return int(self.fn())
        start = _now()
        self.fn()
        return _now() - start


@dataclass
class Row:
    label: str
    stats: Stats
    ratio: float | None = None  # path median / this row's median (baseline rows only)


@dataclass
class Result:
    name: str
    path: Row
    baselines: list[Row]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    throughput: bool = True  # ops/s means something (not for subprocess timings)
    floor: str | None = None  # the row with every store call of the path (for the summary)


@dataclass
class Benchmark:
    """A path and what it is compared with.

    ``baseline_fn`` is the headline raw operation; ``breakdown`` adds more raw operations (each
    gets its own ratio), typically each store round trip the path makes and their sum. Timing:
    ``warmup`` calls of each, then interleaved rounds within about ``budget_s`` seconds, each
    op getting between ``min_iterations`` and ``max_iterations`` samples.
    """

    name: str
    fn: Callable[[], Any]
    baseline_fn: Callable[[], Any] | None = None
    baseline: str = "raw"
    breakdown: Sequence[tuple[str, Callable[[], Any]]] = ()
    path: str = "path"
    sampled: bool = False
    warmup: int = 20
    budget_s: float = 3.0
    min_iterations: int = 20
    max_iterations: int = 5000
    rounds: int = 5
    notes: Sequence[str] = ()
    # Called once after the warm-up: ``check`` returns warnings (e.g. the path's store calls no
    # longer match what its raw baseline does), ``describe`` notes about the warm path.
    check: Callable[[], list[str]] | None = None
    describe: Callable[[], list[str]] | None = None
    # The breakdown row that makes every store call the path makes (shown in the summary).
    floor: str | None = None
    # Notes derived from the measured result (e.g. "handler overhead: 120 µs").
    summarize: Sequence[Callable[[Result], list[str]]] = ()
    throughput: bool = True

    def ops(self) -> list[Op]:
        ops = [Op(self.path, self.fn, self.sampled)]
        if self.baseline_fn is not None:
            ops.append(Op(self.baseline, self.baseline_fn, self.sampled))
        ops += [Op(label, fn, self.sampled) for label, fn in self.breakdown]
        return ops

    def run(self, scale: float = 1.0) -> Result:
        ops = self.ops()
        estimates = [_warm(op, max(1, round(self.warmup * min(1.0, scale)))) for op in ops]
        warnings = self.check() if self.check is not None else []
        notes = list(self.notes) + (self.describe() if self.describe is not None else [])
        share = self.budget_s * scale / len(ops)
        low = max(3, round(self.min_iterations * min(1.0, scale)))
        counts = [
            max(low, min(self.max_iterations, int(share / max(est, 1e-9)))) for est in estimates
        ]
        samples = interleave(ops, counts, self.rounds)
        rows = [Row(op.label, Stats.of(s)) for op, s in zip(ops, samples, strict=True)]
        path = rows[0]
        for row in rows[1:]:
            row.ratio = path.stats.median_ns / row.stats.median_ns
        result = Result(self.name, path, rows[1:], notes, warnings, self.throughput, self.floor)
        result.notes[:0] = [line for fn in self.summarize for line in fn(result)]
        return result

    @staticmethod
    def difference(path_label: str, row_label: str, what: str) -> Callable[[Result], list[str]]:
        """A ``summarize`` that states ``median(path) - median(row)`` as ``what``."""

        def note(result: Result) -> list[str]:
            rows = {r.label: r for r in (result.path, *result.baselines)}
            a, b = rows[path_label].stats.median_ns, rows[row_label].stats.median_ns
            share = f" ({(a - b) / a:.0%} of the path)" if a > 0 else ""
            return [f"{what}: {fmt_ns(a - b)}{share}"]

        return note


@dataclass
class Precomputed:
    """Samples gathered elsewhere (e.g. several figures from one subprocess) as a result."""

    name: str
    path: tuple[str, list[int]]
    baselines: Sequence[tuple[str, list[int]]] = ()
    notes: Sequence[str] = ()
    throughput: bool = False

    def run(self, scale: float = 1.0) -> Result:
        path = Row(self.path[0], Stats.of(self.path[1]))
        rows = [Row(label, Stats.of(s)) for label, s in self.baselines]
        for row in rows:
            row.ratio = path.stats.median_ns / row.stats.median_ns
        return Result(self.name, path, rows, list(self.notes), [], self.throughput)


def _warm(op: Op, calls: int) -> float:
    """Call ``op`` ``calls`` times; return the seconds one call takes (median of the last few)."""
    seen = [op.sample() for _ in range(calls)]
    return statistics.median(seen[-5:]) / 1e9


def interleave(ops: Sequence[Op], counts: Sequence[int], rounds: int) -> list[list[int]]:
    """Sample every op ``counts[i]`` times, in ``rounds`` alternating chunks."""
    rounds = max(1, min(rounds, *counts)) if counts else 1
    samples: list[list[int]] = [[] for _ in ops]
    for r in range(rounds):
        for i, op in enumerate(ops):
            chunk = counts[i] // rounds + (1 if r < counts[i] % rounds else 0)
            gc.collect()  # start each chunk with a clean heap; collections inside still count
            out = samples[i]
            for _ in range(chunk):
                out.append(op.sample())
    return samples


# ---- groups ------------------------------------------------------------------------------------


Item = Benchmark | Precomputed


@dataclass
class Run:
    """What a group gets: the scale of this run and a place for shared resources."""

    scale: float = 1.0
    # Measure only the items whose title contains one of these (empty: all); a group stops
    # once each has matched (the set-up of the items skipped before then still runs).
    only: Sequence[str] = ()
    shared: dict[str, Any] = field(default_factory=dict)
    cleanups: list[Callable[[], None]] = field(default_factory=list)

    def resource(self, key: str, factory: Callable[[], Any]) -> Any:
        """One shared resource per run (a started stack, say), built on first use."""
        if key not in self.shared:
            self.shared[key] = factory()
        return self.shared[key]

    def close(self) -> None:
        while self.cleanups:
            self.cleanups.pop()()


@dataclass(frozen=True)
class Group:
    name: str
    description: str
    build: Callable[[Run], Iterable[Item]]


GROUPS: dict[str, Group] = {}


def group(name: str, description: str) -> Callable[[Callable[[Run], Iterable[Item]]], Any]:
    def register(build: Callable[[Run], Iterable[Item]]) -> Callable[[Run], Iterable[Item]]:
        if name in GROUPS:
            raise ValueError(f"benchmark group {name!r} registered twice")
        GROUPS[name] = Group(name, description, build)
        return build

    return register


@dataclass
class GroupResult:
    group: Group
    results: list[Result]
    seconds: float


def run_group(g: Group, run: Run, on_result: Callable[[Result], None]) -> GroupResult:
    started = time.perf_counter()
    results: list[Result] = []
    items: Iterator[Item] = iter(g.build(run))
    wanted = set(run.only)
    for item in items:
        if run.only:
            matched = {part for part in run.only if part in item.name}
            if not matched:
                continue
            wanted -= matched
        result = item.run(run.scale)
        results.append(result)
        on_result(result)
        if run.only and not wanted:
            break
    return GroupResult(g, results, time.perf_counter() - started)


# ---- formatting --------------------------------------------------------------------------------


def fmt_ns(ns: float) -> str:
    if math.isnan(ns):
        return "-"
    if ns < 0:
        return "-" + fmt_ns(-ns)
    if ns < 1_000:
        return f"{ns:.0f} ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.1f} µs"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def fmt_rate(per_s: float) -> str:
    if per_s >= 10_000:
        return f"{per_s / 1000:.0f}k"
    if per_s >= 100:
        return f"{per_s:.0f}"
    return f"{per_s:.1f}"


def fmt_ratio(ratio: float | None) -> str:
    if ratio is None:
        return ""
    return f"{ratio:.1f}x" if ratio < 100 else f"{ratio:.0f}x"


HEADER = ("", "n", "median", "p90", "p99", "ops/s", "path / this")


def result_rows(result: Result) -> list[tuple[str, ...]]:
    def cells(row: Row, label: str) -> tuple[str, ...]:
        s = row.stats
        rate = fmt_rate(s.ops_per_s) if result.throughput else "-"
        return (
            label,
            str(s.n),
            fmt_ns(s.median_ns),
            fmt_ns(s.p90_ns),
            fmt_ns(s.p99_ns),
            rate,
            fmt_ratio(row.ratio),
        )

    out = [cells(result.path, result.path.label)]
    out += [cells(row, f"  vs {row.label}") for row in result.baselines]
    return out


def text_table(result: Result) -> str:
    rows = [HEADER, *result_rows(result)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]

    def line(r: tuple[str, ...]) -> str:
        first = r[0].ljust(widths[0])
        rest = [r[i].rjust(widths[i]) for i in range(1, len(r))]
        return "  ".join([first, *rest]).rstrip()

    out = [f"{result.name}", line(rows[0]), "-" * len(line(rows[0]))]
    out += [line(r) for r in rows[1:]]
    out += [f"  note: {n}" for n in result.notes]
    out += [f"  WARNING: {w}" for w in result.warnings]
    return "\n".join(out)


def markdown_table(result: Result) -> str:
    def esc(text: str) -> str:
        return text.replace("|", "\\|")

    out = [f"#### {esc(result.name)}", ""]
    out.append("| " + " | ".join(HEADER) + " |")
    out.append("|" + "|".join(["---"] + ["---:"] * (len(HEADER) - 1)) + "|")
    for r in result_rows(result):
        label = r[0].strip()
        label = f"↳ {label}" if r[0].startswith("  ") else f"**{label}**"
        out.append("| " + " | ".join([esc(label), *r[1:]]) + " |")
    if result.notes or result.warnings:
        out.append("")
    out += [f"- {esc(n)}" for n in result.notes]
    out += [f"- **WARNING:** {esc(w)}" for w in result.warnings]
    return "\n".join(out)


def summary_rows(groups: Sequence[GroupResult]) -> list[tuple[str, ...]]:
    """One line per benchmark: the path against its headline (first) baseline and its floor."""
    rows: list[tuple[str, ...]] = []
    for g in groups:
        for r in g.results:
            if not r.baselines:
                continue
            base = r.baselines[0]
            floor = next((b for b in r.baselines if b.label == r.floor), None)
            rows.append(
                (
                    r.name,
                    fmt_ns(r.path.stats.median_ns),
                    f"{base.label}: {fmt_ns(base.stats.median_ns)}",
                    fmt_ratio(base.ratio),
                    f"{fmt_ns(floor.stats.median_ns)} ({fmt_ratio(floor.ratio)})" if floor else "",
                )
            )
    return rows


def markdown_report(header: Sequence[str], groups: Sequence[GroupResult]) -> str:
    out = ["# Warble benchmarks", "", *header, ""]
    summary = summary_rows(groups)
    if summary:
        out += ["### Summary (medians; details below)", ""]
        out.append(
            "| benchmark | path | headline raw baseline | path / baseline "
            "| all its store calls, raw (path / that) |"
        )
        out.append("|---|---:|---|---:|---:|")
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in summary]
        out.append("")
    for g in groups:
        out += [f"### {g.group.name}: {g.group.description}", ""]
        for result in g.results:
            out += [markdown_table(result), ""]
    return "\n".join(out).rstrip() + "\n"
