"""``python -m bench.cold_ab BASE_TREE [--rounds N] [--as-shipped]``: the cold request of every
function of this tree against the same function of another checkout (``git worktree add``),
interleaved.

This machine's speed drifts by tens of percent between runs a few minutes apart (``import
boto3`` alone measured 200 to 330 ms within the hour), more than most changes to a cold start,
so two ``coldstart`` runs back to back can say anything. Here each round runs, per function, the
base tree's child and this tree's child one after the other (in alternating order) and one
``import boto3`` child; the answer is the median of each round's own ratios. The children are
the ``coldstart`` group's (traced, a fresh process, import + init + first invocation, the same
events and warm stores).

``--as-shipped`` runs the base tree's children without bytecode for anything outside the stdlib,
as SAM's Python builder shipped the layers before they were compiled at build time (their
Makefiles), against this tree's children with it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import warnings
from pathlib import Path

from bench import stack
from bench.accounts import people
from bench.coldstart import (
    _child,
    _ok,
    first_requests,
    seen_key,
    template_functions,
    warmed_event_files,
)
from bench.harness import Run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cold_ab", description=__doc__)
    parser.add_argument("base", type=Path, help="the other checkout's root")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--as-shipped", action="store_true", help="the base without pycs")
    args = parser.parse_args(argv)
    base: Path = args.base.resolve()
    warnings.filterwarnings("ignore", message="No application metrics to publish")

    import redis

    run = Run(scale=1.0, only=[])
    try:
        who = people(run)
        every = template_functions()
        first = first_requests(who)
        raw = redis.Redis.from_url(stack.BENCH_REDIS_URL)
        run.cleanups.append(raw.close)
        seen = seen_key(who)
        tmp = Path(tempfile.mkdtemp(prefix="warble-cold-ab-"))
        files = warmed_event_files(first, every, tmp)

        env = dict(os.environ)

        def cold(tree: str, name: str) -> int:
            code, module = every[name]
            shared = None
            if tree == "base":
                code, shared = base / code.relative_to(stack.ROOT), base / "layers" / "shared"
            if name == "accounts":
                raw.delete(seen)  # its first request also opens PostgreSQL, every time
            no_pyc = args.as_shipped and tree == "base"
            out = _child(name, env, files[name], no_pyc, code=(code, module), shared=shared)
            if not all(_ok(answer) for answer in out["answers"]):
                raise RuntimeError(f"{tree} {name} answered {out['answers']}")
            return int(out["import_ns"] + out["first_ns"])

        _child("boto3", env)  # the first child pays for cold OS caches
        rounds: dict[str, list[tuple[int, int, int]]] = {}
        for number in range(args.rounds):
            boto3 = int(_child("boto3", env)["import_ns"])
            for index, name in enumerate(first):
                order = ("base", "this") if (number + index) % 2 == 0 else ("this", "base")
                took = {tree: cold(tree, name) for tree in order}
                rounds.setdefault(name, []).append((took["base"], took["this"], boto3))
            print(f"round {number + 1} of {args.rounds}", file=sys.stderr, flush=True)
    finally:
        run.close()

    before = "base, no pycs (as shipped before)" if args.as_shipped else "base"
    print(f"| function | {before}: cold request, / import boto3 | this tree | this / base |")
    print("|---|---:|---:|---:|")
    for name, found in rounds.items():
        print(
            f"| {name} | {statistics.median(b for b, _, _ in found) / 1e6:.0f} ms, "
            f"{statistics.median(b / t for b, _, t in found):.2f}x "
            f"| {statistics.median(a for _, a, _ in found) / 1e6:.0f} ms, "
            f"{statistics.median(a / t for _, a, t in found):.2f}x "
            f"| **{statistics.median(a / b for b, a, _ in found):.2f}** |"
        )
    boto3_median = statistics.median(t for found in rounds.values() for _, _, t in found)
    print(
        f"\n{args.rounds} rounds; import boto3 (fresh process), median {boto3_median / 1e6:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
