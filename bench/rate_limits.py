"""Request budgets: what spending one request costs, against one raw Redis round trip.

The path is ``RateLimits.user``, what the handler skeleton calls before routing every
authenticated request: one EVALSHA of the window-counter script (INCR, PTTL, and PEXPIRE on a
window's first request). Its headline baseline is a raw INCR, the cheapest write round trip; the
breakdown adds a raw PING (the round trip alone), a raw EVALSHA of the same script on a bare
client (the script's own cost), and a raw INCR + PTTL pipeline (what a counter without Lua would
send, without its atomicity: it could not refuse without overshooting).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bench import stack
from bench.harness import Benchmark, Run, group


@group("rate_limits", "spending one request of a user's budget against one raw Redis round trip")
def rate_limits_group(run: Run) -> Iterator[Benchmark]:
    from warble import keys, services

    bench_stack = stack.shared(run)
    raw, _ = stack.raw_clients(run, bench_stack)
    limits = services.rate_limits()
    user_id = 7_262_946_581_234_567_168
    script_raw = stack.budget_spend(raw, keys.user_budget(user_id))
    counter_key = keys.user_budget(0)

    def spend() -> Any:
        verdict = limits.user(user_id)
        if not verdict.allowed:  # a refusal would be timed as fast and wrong
            raise RuntimeError(f"budget spent: {verdict}")
        return verdict

    def raw_incr() -> Any:
        return raw.incr(counter_key)

    def raw_ping() -> Any:
        return raw.ping()

    def raw_incr_pttl() -> Any:
        pipe = raw.pipeline(transaction=False)
        pipe.incr(counter_key)
        pipe.pttl(counter_key)
        return pipe.execute()

    yield Benchmark(
        "RateLimits.user: spend one request of a user's budget",
        spend,
        raw_incr,
        path="limiter",
        baseline="raw INCR",
        breakdown=[
            ("raw PING", raw_ping),
            ("raw EVALSHA of the window-counter script", script_raw),
            ("raw pipeline (INCR, PTTL), not atomic", raw_incr_pttl),
        ],
        floor="raw EVALSHA of the window-counter script",
        budget_s=4.0,
        warmup=200,
        min_iterations=500,
        max_iterations=5000,
        check=lambda: stack.compare_traces(spend, script_raw, "RateLimits.user"),
        describe=lambda: [f"round trips of one spend: {stack.traced(spend)}"],
        summarize=[
            Benchmark.difference("limiter", "raw INCR", "limiter cost over one raw INCR"),
            Benchmark.difference(
                "limiter",
                "raw EVALSHA of the window-counter script",
                "of which Python (RateLimits, redis-py Script)",
            ),
        ],
        notes=[
            "the handler skeleton makes this call once per request, after the session check; "
            "signup and login spend an address's budget the same way"
        ],
    )
