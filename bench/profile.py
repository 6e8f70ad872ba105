"""``python -m bench.profile GROUP --only TEXT [--calls N] [--top N] [--sort KEY]``,
``python -m bench.profile --cold FUNCTION [--importtime] [--top N] [--sort KEY]``.

Warm: ``--cpu`` gives the CPU time (process_time) a call of the path and of each of its
baselines takes, which other work on the machine disturbs far less than wall time; otherwise it
profiles one benchmark's path, as the group builds it (same stores, same data, warm): the
path is called ``--calls`` times under cProfile and the top entries are printed, with the Python
calls per request. ``--out FILE`` also writes the raw profile (for ``snakeviz``, ``pstats``).

Cold: one fresh process of a function of template.yaml, as the coldstart group runs it (traced,
as on AWS), with its import, initialisation and first invocation under cProfile; or, with
``--importtime``, the slowest imports of ``python -X importtime`` (cumulative, µs).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import os
import pstats
import sys
import tempfile
import time
import warnings
from pathlib import Path

from bench import GROUP_MODULES, stack
from bench.accounts import people
from bench.coldstart import (
    _CHILD,
    _child,
    first_requests,
    seen_key,
    template_functions,
    warmed_event_files,
)
from bench.harness import GROUPS, Benchmark, Run

# The coldstart group's child, profiled from before the import to after the first invocation
# (or, ``--first``, around the first invocation alone).
_CALL = "        answer = app.handler(event, Context())\n"
_PROFILED = (
    "import cProfile, sys\n_profiler = cProfile.Profile()\n_profiler.enable()\n"
    + _CHILD.replace('("first", "second")', '("first",)')
    + "_profiler.disable()\n_profiler.dump_stats(sys.argv[7])\n"
)
_FIRST_ONLY = (
    "import cProfile, sys\n_profiler = cProfile.Profile()\n"
    + _CHILD.replace('("first", "second")', '("first",)').replace(
        _CALL, "        _profiler.enable()\n" + _CALL + "        _profiler.disable()\n"
    )
    + "_profiler.dump_stats(sys.argv[7])\n"
)


def cold(
    name: str, importtime: bool, first_only: bool, top: int, sort: str, out: Path | None
) -> int:
    run = Run(scale=1.0, only=[])
    try:
        every = template_functions()
        first = first_requests(people(run))
        event_file = ""
        if name in first:  # warm the stores' caches, as the coldstart group does
            directory = Path(tempfile.mkdtemp(prefix="warble-profile-"))
            event_file = warmed_event_files({name: first[name]}, every, directory)[name]
        if name == "accounts":  # as the coldstart group: the first request opens PostgreSQL
            import redis

            redis.Redis.from_url(stack.BENCH_REDIS_URL).delete(seen_key(people(run)))
        env = dict(os.environ)
        _child("boto3", env)  # the first child pays for cold OS caches
        if importtime:
            found = _child(name, env, event_file, code=every[name], options=("-X", "importtime"))
            rows = []
            for line in found["stderr"].splitlines():
                if line.startswith("import time:") and "|" in line:
                    _, cumulative, package = line.removeprefix("import time:").split("|")
                    if cumulative.strip().isdigit():
                        rows.append((int(cumulative), package.rstrip()))
            for cumulative, package in sorted(rows, reverse=True)[:top]:
                print(f"{cumulative:>9} µs {package}")
            return 0
        dump = out or Path(tempfile.mkdtemp(prefix="warble-profile-")) / "cold.prof"
        script = _FIRST_ONLY if first_only else _PROFILED
        _child(name, env, event_file, code=every[name], script=script, extra=(str(dump),))
        stats = pstats.Stats(str(dump))
        stats.sort_stats(sort).print_stats(top)
        return 0
    finally:
        run.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    parser.add_argument("group", nargs="?")
    parser.add_argument("--only", metavar="TEXT", help="the benchmark's title")
    parser.add_argument("--cold", metavar="FUNCTION", help="a function's cold request")
    parser.add_argument("--importtime", action="store_true", help="with --cold: its imports")
    parser.add_argument("--first", action="store_true", help="with --cold: the 1st call alone")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sort", default="tottime", help="pstats sort key (tottime, cumtime)")
    parser.add_argument("--out", type=Path, help="write the raw profile here too")
    parser.add_argument(
        "--cpu", action="store_true", help="CPU time a call of the path and its baselines instead"
    )
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    if args.cold:
        return cold(args.cold, args.importtime, args.first, args.top, args.sort, args.out)
    if not args.group or not args.only:
        parser.error("a GROUP and --only TEXT, or --cold FUNCTION")

    for module in GROUP_MODULES:
        importlib.import_module(module)
    cpu = args.cpu
    run = Run(scale=1.0, only=[args.only])
    try:
        for item in GROUPS[args.group].build(run):
            if not isinstance(item, Benchmark) or args.only not in item.name:
                continue
            for _ in range(50):  # warm: caches filled, scripts loaded, clients connected
                item.fn()
            if cpu:
                ops = [("path", item.fn)]
                if item.baseline_fn is not None:
                    ops.append((item.baseline, item.baseline_fn))
                ops += list(item.breakdown)
                for label, fn in ops:
                    started = time.process_time_ns()
                    for _ in range(args.calls):
                        fn()
                    spent = (time.process_time_ns() - started) / args.calls / 1000
                    print(f"{spent:8.1f} µs CPU a call  {label}")
                return 0
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(args.calls):
                item.fn()
            profiler.disable()
            if args.out:
                profiler.dump_stats(args.out)
            text = io.StringIO()
            stats = pstats.Stats(profiler, stream=text)
            print(f"{item.name}: {args.calls} calls, {stats.total_calls / args.calls:.0f} "
                  f"Python calls and {stats.total_tt / args.calls * 1e6:.0f} µs (profiled) "
                  "a call")  # fmt: skip
            stats.sort_stats(args.sort).print_stats(args.top)
            print(text.getvalue())
            return 0
    finally:
        run.close()
    print(f"no benchmark of {args.group} named {args.only!r}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
