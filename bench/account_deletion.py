"""A celebrity's account deleted, timed: 100,000 followers and 50,000 tweets (issue 32).

    python -m bench.account_deletion                          # 100,000 followers, 50,000 tweets
    python -m bench.account_deletion --followers 20000 --tweets 10000

The account is written straight into the tables in the stores' own item designs
(tests.support.celebrity: BatchWriteItem, Redis pipelines), then deleted through
``AccountService.delete_account``; the workflow and the two stream readers run in Lambda workers
fed by the local runtime's SQS and stream pollers, on their own moto server, database
(``warble_bench``) and Redis index, as the bench stack sets them up (bench/stack.py).

Reported: the seeding time and its item rate (the raw store's BatchWriteItem rate, measured in
the same run), the time to the workflow's end and to the moment no trace of the account is left
(every table scanned, every Redis key read), and the deletion's rate as a ratio of the raw one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "account_deletion.json"
TRACE_LOOK_SECONDS = 30


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--followers", type=int, default=100_000)
    parser.add_argument("--tweets", type=int, default=50_000)
    parser.add_argument("--deadline", type=float, default=7200.0)
    args = parser.parse_args(argv)

    from bench import stack as bench_stack

    started_stack = bench_stack.start()
    try:
        figures = run(started_stack, args.followers, args.tweets, args.deadline)
    finally:
        started_stack.close()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return 0


def run(started: object, followers: int, tweets: int, deadline: float) -> dict[str, object]:
    import os

    import psycopg
    import redis as redis_lib
    from warble import services

    from infra.local.provisioning import provision
    from infra.local.template import ResolveContext, load_template
    from tests.support.celebrity import deletion_workers, seed
    from tests.support.traces import dynamo_traces, redis_traces

    # The queue's name and URL, which the bench stack does not set (it provisions tables).
    template = load_template(ROOT / "template.yaml")
    context = ResolveContext(stack_name="warble-bench")
    provision(template, started.moto_url, context)  # type: ignore[attr-defined]
    os.environ["ACCOUNT_DELETION_QUEUE_URL"] = context.values["AccountDeletionQueue"]["Ref"]
    os.environ["PASSWORD_HASH_ROUNDS"] = "4"
    services.reset()
    accounts = services.accounts()
    redis = redis_lib.Redis.from_url(os.environ["REDIS_URL"], decode_responses=True)
    issued = accounts.signup("celebrity", "celebrity@example.com", "password1", None, "")
    x = int(issued.session.user_id)

    t0 = time.monotonic()
    big = seed(x, followers, tweets, redis=redis, likes=1000, homes=2000)
    seeded = time.monotonic() - t0
    print(f"seeded {followers} followers, {tweets} tweets in {seeded:.0f} s", file=sys.stderr)
    items = followers * 5 + tweets * 2 + 1000 * 3 + 2
    settings = services.container().settings
    db = os.environ["DB_NAME"]
    with deletion_workers(started.moto_url, context.values, db, "warble-bench") as _workers:  # type: ignore[attr-defined]
        t0 = time.monotonic()
        accounts.delete_account(accounts.require_token(issued.token), "password1")
        answered = time.monotonic() - t0
        with psycopg.connect(f"host=127.0.0.1 dbname={db} user=postgres") as pg:
            while not pg.execute(
                "SELECT finished_at IS NOT NULL FROM deleted_accounts WHERE id = %s", (x,)
            ).fetchone()[0]:
                if time.monotonic() - t0 > deadline:
                    raise SystemExit("the workflow did not finish")
                time.sleep(1)
        finished = time.monotonic() - t0
        print(f"workflow finished after {finished:.0f} s", file=sys.stderr)
        tables = [getattr(settings, f) for f in vars(settings) if f.endswith("_table")]
        store = redis_lib.Redis.from_url(os.environ["REDIS_URL"])
        while True:
            left = dynamo_traces(tables, [x, *big.tweets]) + redis_traces(store, [x, *big.tweets])
            if not left:
                break
            if time.monotonic() - t0 > deadline:
                raise SystemExit("traces left:\n" + "\n".join(left[:20]))
            # A look scans every table, on a moto whose one lock the stream readers need too
            # (the tweets' purges, behind 50,000 removals at this size): not more than twice a
            # minute, or the look itself holds back what it waits for.
            time.sleep(TRACE_LOOK_SECONDS)
        traceless = time.monotonic() - t0
    return {
        "followers": followers,
        "tweets": tweets,
        "items_seeded": items,
        "seed_seconds": round(seeded, 1),
        "raw_batch_write_items_per_second": round(items / seeded),
        "answered_202_seconds": round(answered, 3),
        "workflow_finished_seconds": round(finished, 1),
        "no_trace_seconds": round(traceless, 1),
        "deletion_items_per_second": round(items / finished),
        "deletion_rate_vs_raw_writes": round((items / finished) / (items / seeded), 3),
    }


if __name__ == "__main__":
    sys.exit(main())
