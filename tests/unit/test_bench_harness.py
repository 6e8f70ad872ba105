"""The benchmark harness's arithmetic and report, with fake timings (no stores, no clocks).

Speed itself is never asserted in tests: it is measured by ``python -m bench``.
"""

from __future__ import annotations

import itertools

import pytest

from bench import harness
from bench.harness import Benchmark, Op, Precomputed, Stats

pytestmark = pytest.mark.unit


def test_stats_use_nearest_rank_percentiles():
    stats = Stats.of(list(range(1, 101)))  # 1..100 ns
    assert (stats.n, stats.median_ns, stats.p90_ns, stats.p99_ns) == (100, 50.5, 90, 99)
    assert stats.ops_per_s == pytest.approx(1e9 / 50.5)
    small = Stats.of([5, 1, 3])
    assert (small.median_ns, small.p90_ns, small.p99_ns) == (3, 5, 5)


def test_stats_need_samples():
    with pytest.raises(ValueError):
        Stats.of([])


def _sampled(values):
    it = itertools.cycle(values)
    return lambda: next(it)


def test_benchmark_ratios_are_path_median_over_each_baseline():
    bench = Benchmark(
        "fake",
        _sampled([300, 300, 300]),
        _sampled([100]),
        baseline="raw",
        breakdown=[("sum", _sampled([150]))],
        sampled=True,
        warmup=1,
        budget_s=1e-6,  # so every op gets its minimum
        min_iterations=7,
        summarize=[Benchmark.difference("path", "sum", "overhead")],
    )
    result = bench.run()
    assert result.path.stats.median_ns == 300
    assert [(r.label, r.stats.n, r.ratio) for r in result.baselines] == [
        ("raw", 7, 3.0),
        ("sum", 7, 2.0),
    ]
    assert result.notes[0] == "overhead: 150 ns (50% of the path)"


def test_interleave_alternates_ops_in_rounds():
    calls: list[str] = []

    def op(name):
        return Op(name, lambda: calls.append(name) or 1, sampled=True)

    samples = harness.interleave([op("a"), op("b")], [4, 2], rounds=2)
    assert [len(s) for s in samples] == [4, 2]
    assert calls == ["a", "a", "b", "a", "a", "b"]


def test_check_and_describe_run_after_warmup_and_land_in_the_result():
    seen: list[str] = []
    bench = Benchmark(
        "fake",
        lambda: seen.append("path") or 10,
        sampled=True,
        warmup=2,
        budget_s=1e-6,
        min_iterations=3,
        check=lambda: seen.append("check") or ["drifted"],
        describe=lambda: ["two round trips"],
    )
    result = bench.run()
    assert seen[:3] == ["path", "path", "check"]
    assert result.warnings == ["drifted"]
    assert result.notes == ["two round trips"]


def test_precomputed_and_reports():
    result = Precomputed(
        "cold | start", ("import app", [2_000_000, 4_000_000]), [("import boto3", [1_000_000])]
    ).run()
    assert result.baselines[0].ratio == 3.0
    text = harness.text_table(result)
    assert "import app" in text and "3.0x" in text and "1.00 ms" in text
    md = harness.markdown_table(result)
    assert md.startswith("#### cold \\| start")
    assert "| ↳ vs import boto3 | 1 | 1.00 ms |" in md


def test_formatting():
    assert harness.fmt_ns(950) == "950 ns"
    assert harness.fmt_ns(12_345) == "12.3 µs"
    assert harness.fmt_ns(-12_345) == "-12.3 µs"
    assert harness.fmt_ns(2_500_000_000) == "2.50 s"
    assert harness.fmt_ratio(None) == ""
    assert harness.fmt_ratio(250.0) == "250x"


def test_groups_register_once():
    name = "test-only-group"

    @harness.group(name, "a group for this test")
    def build(run):
        yield Precomputed("x", ("p", [1]))

    try:
        with pytest.raises(ValueError):
            harness.group(name, "again")(build)
        done = harness.run_group(harness.GROUPS[name], harness.Run(), lambda r: None)
        assert [r.name for r in done.results] == ["x"]
    finally:
        del harness.GROUPS[name]


def test_summary_shows_headline_baseline_and_floor():
    result = Benchmark(
        "get",
        _sampled([400]),
        _sampled([100]),
        baseline="raw GET",
        breakdown=[("raw sum", _sampled([200]))],
        floor="raw sum",
        sampled=True,
        warmup=1,
        budget_s=1e-6,
        min_iterations=3,
    ).run()
    done = harness.GroupResult(harness.Group("g", "d", lambda run: []), [result], 0.0)
    assert harness.summary_rows([done]) == [
        ("get", "400 ns", "raw GET: 100 ns", "4.0x", "200 ns (2.0x)")
    ]
    assert "| get | 400 ns | raw GET: 100 ns | 4.0x | 200 ns (2.0x) |" in harness.markdown_report(
        ["header"], [done]
    )
