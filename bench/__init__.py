"""Warble's benchmarks: each path against the raw store operations it needs, in the same run.

``python -m bench`` (or ``make bench``) runs every group and writes bench/results/latest.md;
``python -m bench accounts`` runs one group, ``--list`` names them, ``--quick`` is a smoke run.

Adding a benchmark (bench/accounts.py is the worked example): a group builds what its
benchmarks share, then yields one function's benchmark per figure, the function named after the
figure's title, so a reader finds a figure's code by its title:

    from bench import stack
    from bench.harness import Benchmark, Run, group

    @group("graph", "follow / unfollow against raw TransactWriteItems")
    def graph_group(run: Run):
        b = graph_bench(run)   # users, handler, bare store clients (stack.shared(run): one stack)
        yield follow(b)
        yield unfollow(b)

    def follow(b: GraphBench) -> Benchmark:
        ...                                  # its own set-up, run when the group reaches it
        return Benchmark(
            "PUT /v1/users/me/following/{id}: follow",
            follow_through_handler,          # the path
            raw_transact_write_items,        # its headline raw baseline
            baseline="raw TransactWriteItems",
            breakdown=[("raw sum of its round trips", raw_sequence)],
            check=lambda: stack.compare_traces(follow_through_handler, raw_sequence, "follow"),
        )

and list the module in GROUP_MODULES below. ``stack.trace_stores()`` records the Redis,
PostgreSQL and DynamoDB calls a path makes, so the baseline can be checked against it.
"""

# The modules that register groups, in the order a full run measures them.
GROUP_MODULES = (
    "bench.accounts",
    "bench.rate_limits",
    "bench.graph",
    "bench.timeline",
    "bench.blocks",
    "bench.engagement",
    "bench.notifications",
    "bench.streams",
    "bench.discover",
    "bench.conversations",
    "bench.media",
    "bench.search",
    "bench.export",
    "bench.coldstart",
)
