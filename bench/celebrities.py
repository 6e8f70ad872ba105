"""Celebrities and hot keys, measured: what a read costs against the celebrities its reader
follows, and which Redis keys every reader of a big account hits.

    python -m bench.celebrities            # -> bench/results/celebrities.json (docs/capacity.md)
    python -m bench.celebrities --quick    # 2 readers a point: shows it works, in ~3 minutes

**The graph.** 1M users standing for 100M (each user counts for 100, so an account's
``followers_count`` is written as its 100M-user figure and the code's CELEBRITY_FOLLOWERS applies
as it would there): the accounts followed by more than that many are the celebrities, ranked by
a Zipf law (share of users following rank r: ``TOP_SHARE`` x r^-``ZIPF``, the top account followed
by 30% of users, as X's most followed accounts are by a fifth to a third of its users). A user
follows each celebrity with that share times the user's activity (lognormal, mean 1; 10% of users
follow none), and ``friends`` other accounts (lognormal). The 1M users are drawn from it with
numpy: the quartiles of celebrities followed, and each account's followers, come from them.

**The readers.** For each point of the sweep (c celebrities and f other accounts followed: c in
0, 10, 50, 120 and f in 20, 100, 250) a few readers are made, following c celebrities drawn by
their shares and f accounts from a pool of friends. Only what their reads touch is written: the
readers, their followees and those accounts' tweets (infra.local.seed's writer, the code's own
item formats), the celebrities' counters at their 100M figures, and in Redis every author's recent
tweets, tweet, profile and counts (written by the code's own fills, once, before any reader
reads: at scale they are always warm). The top celebrity posts last: its newest tweet is the
newest on every follower's page (its hot hour).

**Measured, per reader:** the home page cold (nothing of the reader's in Redis: the timeline is
rebuilt and the celebrity list read), then warm (three times); the celebrity list's refresh
(its 60 s TTL: the list dropped, then read through the timeline service) and a rebuild (the
timeline dropped, then rebuilt), each alone; the unread counts cold, then warm (three times).
Each call: Redis commands and round trips, the Redis server's time and bytes, DynamoDB calls and
units, CPU, and the commands on each key. A linear fit per path and metric over (c, f) gives the
formulas the model uses (R² reported); the commands on the top celebrity's keys per request of a
follower, and on the system list per request, are the hot keys' touches.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from bench.popularity import (
    STANDS_FOR,
    USERS,
    ZIPF,
    celebrity_shares,
    draw_activity,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "celebrities.json"

FRIENDS_MEDIAN, FRIENDS_SIGMA = 80, 1.0  # other accounts followed
CELEBRITY_POINTS = (0, 10, 50, 120)
FRIEND_POINTS = (20, 100, 250)
FRIEND_POOL = 2_000
TWEETS_PER_AUTHOR = 5
PATHS = ("home cold", "home warm", "celebrity list refresh", "home rebuild", "unread cold",
         "unread warm")  # fmt: skip
METRICS = ("redis_commands", "cluster_commands", "redis_round_trips", "redis_server_us",
           "redis_net_bytes", "cpu_ms", "rcu", "dynamodb_calls")  # fmt: skip


def graph_stats(threshold: int, seed: int = 1) -> dict[str, Any]:
    """The 1M users drawn: how many celebrities each follows (Poisson of its activity times the
    mean), how many other accounts; each celebrity's followers (the expected count, capped by
    each user's chance at 1)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    shares = np.array(celebrity_shares(threshold))
    mean_c = float(shares.sum())
    activity = draw_activity(USERS, seed)
    # A user follows celebrity r with min(1, a * share_r): the expected count is that sum.
    head = shares[:2000]
    capped = np.minimum(1.0, np.outer(activity[:20_000], head)).sum(axis=1)
    tail = activity[:20_000] * (mean_c - head.sum())
    ratio = float((capped + tail).sum() / max((activity[:20_000] * mean_c).sum(), 1e-9))
    celebrities = np.minimum(rng.poisson(activity * mean_c * ratio), 1000)
    friends = np.minimum(rng.lognormal(math.log(FRIENDS_MEDIAN), FRIENDS_SIGMA, USERS), 1000)
    top_followers = [float(np.minimum(1.0, activity * s).mean()) for s in shares[:10]]
    return {
        "users": USERS,
        "stands_for": STANDS_FOR,
        "threshold": threshold,
        "celebrities": len(shares),
        "zipf_exponent": ZIPF,
        "top_share": top_followers[0],
        "top_shares": [round(s, 4) for s in top_followers],
        "mean_celebrities_followed": float(celebrities.mean()),
        "celebrity_quartiles": [int(q) for q in np.percentile(celebrities, [25, 50, 75])],
        "share_none": float((celebrities == 0).mean()),
        "share_120": float((celebrities >= 120).mean()),
        "mean_following": float((celebrities + friends).mean()),
    }


# ---- the readers' world ------------------------------------------------------------------------
@dataclass
class Reader:
    index: int  # user index in the plan
    celebrities: list[int]  # user indexes
    friends: list[int]
    c: int
    f: int
    user_id: int = 0
    token: str = ""


def plan_world(
    shares: list[float], per_point: int, seed: int
) -> tuple[Any, list[Reader], int, dict[int, int]]:
    """A seed Plan holding the readers, their followees and the followees' tweets; the readers;
    the top celebrity's user index; each celebrity's rank by user index."""
    import bisect

    from infra.local.seed import Plan, PlannedTweet

    rng = random.Random(seed)
    cumulative: list[float] = []
    total = 0.0
    for share in shares:
        total += share
        cumulative.append(total)
    celebrity_index: dict[int, int] = {}  # rank -> user index
    next_user = 0

    def user() -> int:
        nonlocal next_user
        next_user += 1
        return next_user - 1

    top = celebrity_index.setdefault(0, user())
    friends = [user() for _ in range(FRIEND_POOL)]
    readers: list[Reader] = []
    for c in CELEBRITY_POINTS:
        for f in FRIEND_POINTS:
            for _ in range(per_point):
                ranks: set[int] = set()
                while len(ranks) < c:
                    ranks.add(bisect.bisect_left(cumulative, rng.random() * total))
                chosen = [celebrity_index.setdefault(r, user()) for r in sorted(ranks)]
                readers.append(Reader(0, chosen, rng.sample(friends, f), c, f))
    for reader in readers:
        reader.index = user()
    follows = [(r.index, b) for r in readers for b in r.celebrities + r.friends]
    authors = sorted({b for _, b in follows} - {top})
    tweets = [
        PlannedTweet(author, f"tweet {k} of {author}")
        for k in range(TWEETS_PER_AUTHOR)
        for author in authors
    ]
    tweets += [PlannedTweet(top, f"tweet {k} of the top account") for k in range(TWEETS_PER_AUTHOR)]
    plan = Plan(next_user, follows, tweets, [], [], [])
    ranks_of = {index: rank for rank, index in celebrity_index.items()}
    return plan, readers, top, ranks_of


def write_world(stack: Any, plan: Any, readers: list[Reader], shares: list[float],
                celebrity_ranks: dict[int, int]) -> tuple[Any, dict[int, int]]:  # fmt: skip
    """The plan into the stores; the celebrities' counters at their 100M figures; every author's
    recent tweets, tweets, profiles and counts warm in Redis. Returns what was written and the
    author of each tweet id."""
    from warble.dal.counters import CounterItem

    from bench.measuring import _container
    from infra.local.seed import ImportWriter, Progress, write_population

    container = _container()
    writer = ImportWriter(stack.moto_url, "us-east-1")
    try:
        written = write_population(plan, container, writer, Progress(False))
        tweet_count: dict[int, int] = {}
        author_of: dict[int, int] = {}
        for tid, planned in zip(written.tweet_ids, plan.tweets, strict=True):
            uid = written.user_ids[planned.author]
            author_of[tid] = uid
            tweet_count[uid] = tweet_count.get(uid, 0) + 1
        for index, rank in celebrity_ranks.items():
            uid = written.user_ids[index]
            followers = round(shares[rank] * STANDS_FOR)
            item = CounterItem(f"U#{uid}", followers_count=followers,
                               tweet_count=tweet_count.get(uid, 0))  # fmt: skip
            writer.put(container.settings.counters_table, item.serialize())
        writer.flush()
    finally:
        writer.close()
    authors = sorted(set(author_of.values()))
    for start in range(0, len(authors), 200):
        chunk = authors[start : start + 200]
        container.timelines.ensure_recent(chunk)
        container.graph.users(None, chunk)
    for reader in readers:
        reader.user_id = written.user_ids[reader.index]
        issued = container.accounts.login(written.usernames[reader.index], "password1", "bench")
        reader.token = issued.token
    return written, author_of


# ---- measuring -------------------------------------------------------------------------------
def _classify(key: str, reader: Reader, top_id: int, top_tweet: int) -> str | None:
    """The shared key class a key belongs to (for the hot keys), or None."""
    if key == "{sys}:notifications":
        return "{sys}:notifications"
    names = {
        f"{{cel}}:recent:{top_id}": "{cel}:recent:<top celebrity>",  # keys.celebrity_recent
        f"{{tw:{top_tweet}}}": "{tw:<its newest tweet>}",
        f"{{tw:{top_tweet}}}:counts": "{tw:<its newest tweet>}:counts",
        f"{{u:{top_id}}}:profile": "{u:<top celebrity>}:profile",
        f"{{u:{top_id}}}:counts": "{u:<top celebrity>}:counts",
    }
    return names.get(key)


def measure(per_point: int, seed: int = 7) -> dict[str, Any]:
    os.environ.setdefault("WARBLE_BENCH_DB", "warble_celebrities")
    from bench import measuring
    from bench import stack as bench_stack

    started = time.time()
    load_before = os.getloadavg()[0]
    stack = bench_stack.start()
    os.environ["POWERTOOLS_LOG_LEVEL"] = "INFO"
    stdout, sys.stdout = sys.stdout, measuring.STDOUT
    try:
        import redis
        from warble import keys

        container = measuring._container()
        threshold = container.settings.celebrity_followers
        shares = celebrity_shares(threshold)
        graph = graph_stats(threshold)
        plan, readers, top, celebrity_ranks = plan_world(shares, per_point, seed)
        written, author_of = write_world(stack, plan, readers, shares, celebrity_ranks)
        top_id = written.user_ids[top]
        top_tweet = max(t for t, a in author_of.items() if a == top_id)
        meter = measuring.RedisMeter(redis.Redis.from_url(bench_stack.BENCH_REDIS_URL))
        handlers = measuring.Handlers()
        home = next(r for r in measuring.ROUTES if r.mix == "home")
        unread = next(r for r in measuring.ROUTES if r.mix == "unread")
        client = container.redis
        points: list[dict[str, Any]] = []
        for reader in readers:
            viewer = {"id": reader.user_id, "token": reader.token}

            def call(route: Any, viewer: dict[str, Any] = viewer) -> Any:
                event = measuring.http_event(route, {}, viewer["token"], None, "limit=20")
                answer = handlers.handler(handlers.routes[(route.method, route.path)])(
                    event, measuring._context()
                )
                measuring._answer_ok(answer, route.name)
                return answer

            # (measured?, call): the unmeasured calls drop what the next one must find missing.
            runs: dict[str, list[tuple[bool, Any]]] = {
                "home cold": [(True, partial(call, home))],
                "home warm": [(True, partial(call, home))] * 3,
                "celebrity list refresh": [
                    (False, partial(client.delete, keys.home_celebrities(reader.user_id))),
                    (True, partial(container.timelines.celebrities_followed, reader.user_id)),
                ],
                "home rebuild": [
                    (False, partial(client.delete, keys.home_timeline(reader.user_id))),
                    (True, partial(container.timelines.rebuild, reader.user_id)),
                ],
                "unread cold": [(True, partial(call, unread))],
                "unread warm": [(True, partial(call, unread))] * 3,
            }
            for path, calls in runs.items():
                ops = measuring.Ops(by_key={})
                for counted, step in calls:
                    if counted:
                        measuring.measured(ops, step, meter=meter)
                    else:
                        step()
                per = ops.per_call()
                touches: dict[str, float] = {}
                for key, count in (per.get("by_key") or {}).items():
                    name = _classify(key, reader, top_id, top_tweet)
                    if name:
                        touches[name] = touches.get(name, 0.0) + count
                points.append(
                    {
                        "path": path,
                        "c": reader.c,
                        "f": reader.f,
                        "follows_top": top in reader.celebrities,
                        **{metric: per.get(metric, 0.0) for metric in METRICS},
                        "redis_server": per.get("redis_server", {}),
                        "touches": touches,
                    }
                )
        load_after = os.getloadavg()[0]
        return {
            "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
            "machine": f"shared 2-core VM (load average {load_before:.0f} at the start,"
            f" {load_after:.0f} at the end)",
            "per_point": per_point,
            "graph": graph,
            "world": {
                "users": plan.users,
                "follows": len(plan.follows),
                "tweets": len(plan.tweets),
                "readers": len(readers),
            },
            "formulas": formulas(points),
            "touches": touches_of(points),
            "points": points,
        }
    finally:
        sys.stdout = stdout
        stack.close()


# ---- fitting ---------------------------------------------------------------------------------
def fit(points: list[dict[str, Any]], metric: str) -> dict[str, Any]:
    """Least squares of metric = a + b c + d f, and its R² (None when the metric is constant)."""
    import numpy as np

    x = np.array([[1.0, p["c"], p["f"]] for p in points])
    y = np.array([float(p[metric]) for p in points])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    residual = float(((y - x @ coef) ** 2).sum())
    spread = float(((y - y.mean()) ** 2).sum())
    r2 = None if spread <= 1e-9 * max(1.0, float((y**2).sum())) else 1 - residual / spread
    # Whether c and f move it at all over the sweep (else R² only measures noise around a
    # constant, and the formula is its mean).
    reach = abs(coef[1]) * max(CELEBRITY_POINTS) + abs(coef[2]) * max(FRIEND_POINTS)
    varies = bool(reach > 0.05 * max(abs(float(y.mean())), 1e-9))
    return {"intercept": float(coef[0]), "per_celebrity": float(coef[1]),
            "per_following": float(coef[2]), "r2": r2, "varies": varies,
            "points": len(points)}  # fmt: skip


def formulas(points: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for path in PATHS:
        mine = [p for p in points if p["path"] == path]
        if mine:
            out[path] = {metric: fit(mine, metric) for metric in METRICS}
    return out


def touches_of(points: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per warm path, the commands per request on each shared key: the system list's over every
    reader, the top celebrity's over its followers."""
    out: dict[str, dict[str, float]] = {}
    for path in ("home warm", "unread warm"):
        mine = [p for p in points if p["path"] == path]
        followers = [p for p in mine if p["follows_top"]]
        names = {name for p in mine for name in p["touches"]}
        found: dict[str, float] = {}
        for name in sorted(names):
            group = mine if name == "{sys}:notifications" else followers
            if group:
                found[name] = statistics.mean(p["touches"].get(name, 0.0) for p in group)
        out[path] = found
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.celebrities", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2 readers a point")
    parser.add_argument("--readers", type=int, default=4, help="readers per (c, f) point")
    args = parser.parse_args(argv)
    result = measure(2 if args.quick else args.readers)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1))
    for path, metrics in result["formulas"].items():
        for metric, f in metrics.items():
            r2 = "const" if f["r2"] is None else f"{f['r2']:.3f}"
            print(f"{path:24} {metric:18} {f['intercept']:10.2f} + {f['per_celebrity']:8.3f} c"
                  f" + {f['per_following']:8.4f} f   R2 {r2}")  # fmt: skip
    print(json.dumps(result["touches"], indent=1))
    print(json.dumps(result["graph"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
