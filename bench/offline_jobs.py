"""The offline jobs priced (issue 46): second-degree sets three ways, and counter repair, at 1M,
10M and 100M daily users. Prints the tables of docs/graph.md and docs/capacity.md.

    python -m bench.offline_jobs

**The friends graph.** The celebrity sweep's graph (bench/celebrities.py): each user follows a
lognormal number of non-celebrity accounts (median 80, sigma 1, capped at the follow limit of
1,000) and a few celebrities (never followed back). A friendship is a follow returned:
``RECIPROCITY`` of the non-celebrity follows are (Kwak et al., WWW 2010, measured 22% of all of
Twitter's follows returned; follows between ordinary accounts more often). A user's friends are
drawn from that (Binomial); the friends of a friend are size-biased (a user with k friends is
k times as likely to be someone's friend), so a second-degree set holds E[k^2] paths on average.
Each user's and each of their friends' number of friends is independent here (no clustering):
paths are an upper bound of distinct second-degree users, by the share of triangles.

Every other figure is a named constant below, each used once; prices are bench.capacity_model's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bench.capacity_model import MAU_PER_DAU, PRICES, TRAFFIC

SIZES = (1_000_000, 10_000_000, 100_000_000)
FRIENDS_MEDIAN, FRIENDS_SIGMA, FOLLOW_LIMIT = 80, 1.0, 1000  # bench/celebrities.py
CELEBRITIES_FOLLOWED = 12.9  # a user at 100M (docs/capacity.md, "Who is a celebrity")
RECIPROCITY = 0.3
UNFOLLOWS_PER_FOLLOW = 0.25  # ended friendships, against begun ones
DAYS = 30

# (a) incremental counts: one DynamoDB item per (user, second-degree user) with its count.
PAIR_ITEM_BYTES = 150  # pk D2#<19 digits>, sk <19 digits>, n, and DynamoDB's 100 bytes an item
# (b) on demand: a set is computed when a profile view or a search first needs it in an hour
SET_READS_PER_DAU = 3.0  # hours of a day with a degree shown (profile views, searches)
FRIENDS_MISS = 0.1  # friend lists read from the table rather than the cache (1 h TTL)
REDIS_ID_BYTES = 20  # an id in the cached JSON list
UNION_NS_PER_ID = 100  # Python set union, per id
LAMBDA_MB = 1024
DDB_CALL_S = 0.005
# (c) a daily batch over an export: EMR Serverless Spark self-join of the friend edges.
EDGE_ITEM_BYTES = 75  # a graph item (docs/capacity.md's BYTES_PER_ITEM: 4 x 75 a follow)
SHUFFLE_BYTES_PER_PATH = 16  # two ids
SHUFFLE_GB_PER_VCPU_HOUR = 50.0  # a sort-merge join's throughput per vCPU (assumption)
EMR_VCPU_HOUR, EMR_GB_HOUR, EMR_GB_PER_VCPU = 0.052624, 0.0057785, 4  # us-east-1, 2025
EXPORT_PER_GB, IMPORT_PER_GB = 0.10, 0.15  # DynamoDB export to S3 / import from S3
PACKED_ID_BYTES = 8


@dataclass(frozen=True)
class Friends:
    mean: float  # E[k]
    square: float  # E[k^2]: paths from a user two friendships out

    @property
    def of_a_friend(self) -> float:
        """E[k] of a friend (size-biased)."""
        return self.square / self.mean


def friends() -> Friends:
    """E[k] and E[k^2] of the friends graph, by quadrature over the capped lognormal."""
    steps, mean_f, square_f = 20_000, 0.0, 0.0
    for i in range(steps):
        z = -8 + 16 * (i + 0.5) / steps
        weight = math.exp(-z * z / 2) / math.sqrt(2 * math.pi) * 16 / steps
        f = min(FRIENDS_MEDIAN * math.exp(FRIENDS_SIGMA * z), FOLLOW_LIMIT)
        mean_f += weight * f
        square_f += weight * f * f
    p = RECIPROCITY
    return Friends(p * mean_f, p * p * square_f + p * (1 - p) * mean_f)


def changes_per_day(dau: int) -> float:
    """Friendships begun or ended a day: follows of ordinary accounts returned, and unfollows."""
    ordinary = friends().mean / RECIPROCITY
    share = ordinary / (ordinary + CELEBRITIES_FOLLOWED)
    return dau * TRAFFIC["follow"] * share * RECIPROCITY * (1 + UNFOLLOWS_PER_FOLLOW)


def incremental(dau: int) -> dict[str, float]:
    g, users = friends(), dau * MAU_PER_DAU
    pairs = users * g.square
    writes = changes_per_day(dau) * 4 * g.of_a_friend  # both directions, friends of both ends
    storage_gb = pairs * PAIR_ITEM_BYTES / 1e9
    reads = dau * SET_READS_PER_DAU * g.square * PAIR_ITEM_BYTES / 4096 * 0.5
    return {
        "stored": pairs,
        "storage_gb": storage_gb,
        "writes_per_s": writes / 86_400,
        "monthly": DAYS
        * (writes * PRICES["ddb_write_per_m"] + reads * PRICES["ddb_read_per_m"])
        / 1e6
        + storage_gb * PRICES["ddb_storage_gb_month"],
    }


def on_demand(dau: int) -> dict[str, float]:
    g = friends()
    drops = changes_per_day(dau) * (2 + 2 * g.of_a_friend)
    computes = dau * SET_READS_PER_DAU + drops * SET_READS_PER_DAU / 24
    commands = computes * (g.mean + 2) + drops + changes_per_day(dau)  # GETs, SET, DELs
    held = computes / 24  # sets alive at once (an hour each)
    seconds = computes * (
        g.square * UNION_NS_PER_ID / 1e9 + FRIENDS_MISS * g.mean * DDB_CALL_S / 8
    )  # the misses read 8 at a time
    reads = (computes * FRIENDS_MISS * g.mean + changes_per_day(dau) * 2) * max(
        1.0, g.of_a_friend * 40 / 4096
    )
    memory_gb = held * g.square * REDIS_ID_BYTES / 1e9
    node_gb = 105.0  # an r7g.4xlarge's memory, half of it for data
    return {
        "stored": held * g.square,
        "storage_gb": memory_gb,
        "commands_per_s": commands / 86_400,
        "monthly": DAYS
        * (
            seconds * LAMBDA_MB / 1024 * PRICES["lambda_gb_s_arm"]
            + reads * 0.5 * PRICES["ddb_read_per_m"] / 1e6
        )
        + memory_gb / (node_gb / 2) * 2 * PRICES["valkey_r7g_4xlarge_hour"] * 730,
    }


def batch(dau: int, runs_per_day: float = 1.0) -> dict[str, float]:
    g, users = friends(), dau * MAU_PER_DAU
    paths = users * g.square
    following = g.mean / RECIPROCITY + CELEBRITIES_FOLLOWED
    table_gb = users * following * 4 * EDGE_ITEM_BYTES / 1e9
    shuffle_gb = paths * SHUFFLE_BYTES_PER_PATH / 1e9
    vcpu_hours = shuffle_gb / SHUFFLE_GB_PER_VCPU_HOUR
    sets_gb = paths * PACKED_ID_BYTES / 1e9
    per_run = (
        table_gb * EXPORT_PER_GB
        + vcpu_hours * (EMR_VCPU_HOUR + EMR_GB_PER_VCPU * EMR_GB_HOUR)
        + sets_gb * IMPORT_PER_GB
    )
    return {
        "stored": paths,
        "storage_gb": sets_gb,
        "vcpu_hours": vcpu_hours,
        "monthly": DAYS * runs_per_day * per_run + sets_gb * PRICES["ddb_storage_gb_month"],
    }


# ---- counter repair -----------------------------------------------------------------------------
TOUCHES_PER_DAU = 26.0  # counter keys a daily user's posts, likes and follows change a day
DISTINCT_SHARE = 0.5  # distinct keys in 15 minutes, of the touches (a liked tweet many times)
RUN_SECONDS, RUN_MB, RUNS_PER_DAY = 600, 2048, 96
CALLS_PER_COUNTER, RCU_PER_CALL = 4, 2.0  # a COUNT query a field, a tweet's author; reads batched
CHECKED_PER_RUN = RUN_SECONDS / (CALLS_PER_COUNTER * DDB_CALL_S)
TWEETS_KEPT_DAYS = 365  # tweets' counters in the table: a year of them


def repair(dau: int, share: float) -> dict[str, float]:
    touched = dau * TOUCHES_PER_DAU / RUNS_PER_DAY * DISTINCT_SHARE
    checked = min(CHECKED_PER_RUN, touched * share)
    counters = dau * MAU_PER_DAU + dau * TRAFFIC["post"] * TWEETS_KEPT_DAYS
    following = friends().mean / RECIPROCITY + CELEBRITIES_FOLLOWED
    scan_gb = (
        dau * MAU_PER_DAU * following * EDGE_ITEM_BYTES
        + counters * 260
        + dau * TRAFFIC["like"] * TWEETS_KEPT_DAYS * 90
    ) / 1e9
    return {
        "touched": touched,
        "checked": checked,
        "counters": counters,
        "full_scan_gb": scan_gb,
        "full_scan_keys": counters,
        "monthly": DAYS
        * RUNS_PER_DAY
        * (
            checked * CALLS_PER_COUNTER * RCU_PER_CALL * PRICES["ddb_read_per_m"] / 1e6
            + RUN_SECONDS * RUN_MB / 1024 * PRICES["lambda_gb_s_arm"]
        ),
    }


SHARES = {1_000_000: 0.1, 10_000_000: 0.01, 100_000_000: 0.001}  # template.yaml's profiles


def _n(value: float) -> str:
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.1f}{unit}"
    return f"{value:.1f}"


def main() -> int:
    g = friends()
    print(
        f"friends: mean {g.mean:.1f}, a friend's {g.of_a_friend:.1f}, paths two out "
        f"{g.square:,.0f} (E[k^2]); worst case {FOLLOW_LIMIT**2:,} ids"
    )
    print("\n| | 1M DAU | 10M DAU | 100M DAU |\n|---|---:|---:|---:|")
    rows = [
        ("friendships begun or ended a day", lambda d: _n(changes_per_day(d))),
        ("(a) counts stored (user, second-degree) pairs", lambda d: _n(incremental(d)["stored"])),
        ("(a) ... DynamoDB GB", lambda d: _n(incremental(d)["storage_gb"])),
        ("(a) ... count writes/s", lambda d: _n(incremental(d)["writes_per_s"])),
        ("(a) ... $ a month", lambda d: f"${incremental(d)['monthly']:,.0f}"),
        ("(b) sets held in the cache (ids)", lambda d: _n(on_demand(d)["stored"])),
        ("(b) ... Redis GB", lambda d: _n(on_demand(d)["storage_gb"])),
        ("(b) ... Redis commands/s", lambda d: _n(on_demand(d)["commands_per_s"])),
        ("(b) ... $ a month", lambda d: f"${on_demand(d)['monthly']:,.0f}"),
        ("(c) paths shuffled a run", lambda d: _n(batch(d)["stored"])),
        ("(c) ... EMR vCPU-hours a run", lambda d: _n(batch(d)["vcpu_hours"])),
        ("(c) daily: $ a month (lag up to a day)", lambda d: f"${batch(d)['monthly']:,.0f}"),
        ("(c) hourly: $ a month", lambda d: f"${batch(d, 24)['monthly']:,.0f}"),
    ]
    for label, value in rows:
        print(f"| {label} | " + " | ".join(value(d) for d in SIZES) + " |")
    print("\n| | 1M DAU | 10M DAU | 100M DAU |\n|---|---:|---:|---:|")
    reps = {d: repair(d, SHARES[d]) for d in SIZES}
    rows = [
        ("counters in the table", lambda r: _n(r["counters"])),
        ("a full recount reads, GB", lambda r: _n(r["full_scan_gb"])),
        ("counters touched in 15 minutes", lambda r: _n(r["touched"])),
        ("ReconcileMarkShare", lambda r: ""),
        ("counters checked a run (600 s)", lambda r: _n(r["checked"])),
        ("$ a month (Lambda + reads)", lambda r: f"${r['monthly']:,.0f}"),
    ]  # fmt: skip
    for label, value in rows:
        cells = [value(reps[d]) or str(SHARES[d]) for d in SIZES]
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
