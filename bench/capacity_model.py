"""The capacity model: measured per-call costs (bench/capacity.py) x traffic per daily user x
public prices -> what 1M, 10M and 100M daily users need and cost a month, and the same traffic
priced on the design of theburningmonk/appsyncmasterclass-backend.

Every number that is not measured is a named constant here, with its source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

SCALES = (1_000_000, 10_000_000, 100_000_000)
DAY = 86_400
MONTH_DAYS = 30
PEAK = 3.0  # seed 000: "Peak = 100k * 3 = 300k QPS"

# Requests per daily user per day (bench/load/locustfile.py's table, with its sources).
TRAFFIC = {
    "profile": 100.0,  # seed 000
    "home": 86.4,  # seed 001 / issue 22: 300k/s peak = 100k/s mean over 100M DAU
    "unread": 144.0,  # seed 004: Weibo's polled unread count, 500k/s peak
    "notifications": 5.0,
    "tweet": 20.0,
    "post": 4.0,  # seed 001 / issue 22: 4,600 tweets/s mean over 100M DAU
    "like": 20.0,
    "follow": 1.0,
    "dm": 5.0,
    "discover": 1.0,
    "login": 0.1,  # seed 000
}
ROUTE_MIX = {
    "GET /v1/users/{id}": "profile",
    "GET /v1/timeline/home": "home",
    "GET /v1/notifications/unread-counts": "unread",
    "GET /v1/notifications": "notifications",
    "GET /v1/tweets/{id}": "tweet",
    "POST /v1/tweets": "post",
    "PUT /v1/tweets/{id}/like": "like",
    "PUT /v1/users/me/following/{id}": "follow",
    "GET /v1/discover": "discover",
    "POST /v1/auth/login": "login",
    "WS sendMessage": "dm",
}
# Stream records per action, by the consumer's record kind (what the writes put in the streams).
RECORDS = {
    "post": ("tweets INSERT tweet",),
    "like": ("likes INSERT T#", "likes INSERT LT#", "likes INSERT LU#"),
    "follow": ("graph INSERT O#", "graph INSERT I#", "graph INSERT OT#", "graph INSERT IT#",
               "graph MODIFY META"),
}  # fmt: skip

# Assumptions (not measured here), each used once below.
FOLLOWERS_PER_TWEET = 75  # followers fanned out to per tweet (celebrities merged on read)
FOLLOWING_PER_USER = 200  # following set size of an active user
CACHE_MISS = 0.02  # share of warm-measured reads that miss a cache and read the tables
LIKES_KEPT = 600  # recent likes held per active user (~1 month at 20 a day)
CONNECTED_MINUTES = 30  # WebSocket minutes per daily user per day
ACTIVE_MINUTES = 30  # minutes a daily user makes requests: one last_seen_at UPDATE each
BATCH_FILL = 0.5  # how full a stream batch is on average (invocations = records / fill / size)
PUSHES_PER_DAY = 30  # WebSocket frames pushed per daily user per day (DMs, notifications)
LOG_BYTES_PER_INVOCATION = 1024  # START/END/REPORT + one structured line + EMF metrics
REDIS_OPS_PER_SHARD = 150_000  # commands/s one Valkey shard primary serves with Lua in the mix
REDIS_NODE_GB = 105.8 * 0.75  # cache.r7g.4xlarge, 75% of its memory for data
RTT_MS = {"redis": 0.4, "dynamodb": 5.0, "postgres": 1.5}  # per round trip, from Lambda in-AZ
LAMBDA_FULL_VCPU_MB = 1769  # one full vCPU at this memory size
PG_QPS_PER_ACU = 400  # simple indexed queries per second per Aurora ACU
BYTES_PER_ITEM = {"tweet": 260, "like": 3 * 90, "follow": 4 * 75 + 40, "notification": 2 * 110}
RETENTION_MONTHS = 12  # tables' history priced for storage

# Public prices, us-east-1, on-demand, as AWS listed them in 2025 (the DynamoDB on-demand
# prices after the November 2024 cut). Read from memory of the price pages: this machine has no
# internet access, so they were not re-read on the day of the run.
PRICES = {
    "lambda_request_per_m": 0.20,
    "lambda_gb_s_arm": 0.0000133334,
    "http_api_per_m": 1.00,  # first 300M a month; 0.90 beyond
    "http_api_per_m_over_300m": 0.90,
    "ws_message_per_m": 1.00,  # first 1B; 0.80 beyond
    "ws_message_per_m_over_1b": 0.80,
    "ws_connection_minute_per_m": 0.25,
    "ddb_read_per_m": 0.125,
    "ddb_write_per_m": 0.625,
    "ddb_storage_gb_month": 0.25,
    "valkey_r7g_4xlarge_hour": 1.3984,  # ElastiCache for Valkey (20% under Redis OSS's 1.748)
    "aurora_acu_hour": 0.12,
    "rds_proxy_acu_hour": 0.015,
    "logs_ingest_gb": 0.50,
    "appsync_request_per_m": 4.00,
    "appsync_realtime_message_per_m": 2.00,
    "appsync_connection_minute_per_m": 0.08,
}
HOURS = 730


@dataclass
class Needs:
    dau: int
    requests_month: float
    peak_rps: float
    lambda_gb_s: float
    lambda_invocations: float
    peak_concurrency: float
    rru_month: float
    wru_month: float
    storage_gb: float
    redis_peak_ops: float
    redis_gb: float
    redis_shards: int
    pg_peak_qps: float
    aurora_acu: float
    ws_messages_month: float
    ws_minutes_month: float


def _duration_ms(cost: dict[str, Any], memory_mb: int) -> float:
    """A call's billed time on Lambda: its CPU at the memory's CPU share, plus its round trips."""
    cpu = cost["cpu_ms"] / min(1.0, memory_mb / LAMBDA_FULL_VCPU_MB)
    waits = (
        cost["redis_round_trips"] * RTT_MS["redis"]
        + cost["dynamodb_calls"] * RTT_MS["dynamodb"]
        + cost["pg_queries"] * RTT_MS["postgres"]
    )
    return cpu + waits


def _consumer_costs(m: dict[str, Any]) -> dict[str, list[tuple[str, str, dict[str, Any]]]]:
    """Per action, the consumer records it causes: [(consumer, record kind, per-record cost)]."""
    out: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for action, kinds in RECORDS.items():
        found = []
        for name, cost in m["consumers"].items():
            consumer, _, kind = name.partition(" <- ")
            if kind in kinds:
                found.append((consumer, kind, cost))
        out[action] = found
    return out


def _fanout_adjusted(
    consumer: str, kind: str, cost: dict[str, Any], m: dict[str, Any]
) -> dict[str, Any]:
    """The timeline consumer's tweet record at FOLLOWERS_PER_TWEET: one EVALSHA per follower
    more (or fewer) than the measured authors had."""
    if consumer != "FanoutConsumerFunction" or not kind.startswith("tweets"):
        return cost
    extra = FOLLOWERS_PER_TWEET - m["mean_followers_measured"]
    adjusted = dict(cost)
    adjusted["redis_commands"] = max(0.0, cost["redis_commands"] + extra)
    # pipelined in chunks of 500: one round trip each
    adjusted["redis_round_trips"] = cost["redis_round_trips"] + max(0.0, extra) / 500
    adjusted["cpu_ms"] = cost["cpu_ms"] + extra * 0.02  # ~20 us per follower (bench: fan-out)
    return adjusted


def needs(m: dict[str, Any], dau: int) -> Needs:
    routes, memory = m["routes"], m["memory_mb"]
    per_day = {k: v * dau for k, v in TRAFFIC.items()}
    requests = sum(per_day.values()) * MONTH_DAYS
    gb_s = invocations = concurrency = rru = wru = redis_ops = pg_qps = 0.0
    for route, mix in ROUTE_MIX.items():
        cost = routes[route]
        function = m["route_functions"][route]
        calls = per_day[mix] * MONTH_DAYS
        duration = _duration_ms(cost, memory[function])
        gb_s += calls * duration / 1000 * memory[function] / 1024
        invocations += calls
        peak = per_day[mix] / DAY * PEAK
        concurrency += peak * duration / 1000
        rru += calls * (cost["rcu"] + CACHE_MISS * 2)
        wru += calls * cost["wcu"]
        redis_ops += peak * cost["redis_commands"]
        pg_qps += peak * (cost["pg_queries"] + (CACHE_MISS if mix == "profile" else 0))
    # The session check touches last_seen_at at most once a minute per session (the skeleton).
    pg_qps += dau * ACTIVE_MINUTES / DAY * PEAK
    for action, consumers in _consumer_costs(m).items():
        records = per_day[action] * MONTH_DAYS
        peak = per_day[action] / DAY * PEAK
        for consumer, kind, cost in consumers:
            cost = _fanout_adjusted(consumer, kind, cost, m)
            duration = _duration_ms(cost, memory.get(consumer, 512))
            gb_s += records * duration / 1000 * memory.get(consumer, 512) / 1024
            invocations += records / (BATCH_FILL * max(1, cost.get("batch_size", 100)))
            concurrency += peak * duration / 1000
            rru += records * cost["rcu"]
            wru += records * cost["wcu"]
            redis_ops += peak * cost["redis_commands"]
    b = m["redis_bytes"]
    per_user = (800 * b["timeline_entry"] + FOLLOWING_PER_USER * b["following_field"]
                + LIKES_KEPT * b["liked_field"] + 3 * b["profile"])  # fmt: skip
    redis_gb = dau * per_user / 1e9
    shards = max(1, math.ceil(max(redis_ops / REDIS_OPS_PER_SHARD, redis_gb / REDIS_NODE_GB)))
    stored = (
        sum(per_day[k] * BYTES_PER_ITEM[k] for k in ("like", "follow"))
        + per_day["post"] * BYTES_PER_ITEM["tweet"]
    )
    notifications_bytes = (per_day["like"] + per_day["follow"] + 0.3 * per_day["post"]) * (
        BYTES_PER_ITEM["notification"]
    )
    storage_gb = (stored * MONTH_DAYS * RETENTION_MONTHS + notifications_bytes * 30) / 1e9
    return Needs(
        dau=dau,
        requests_month=requests,
        peak_rps=sum(per_day.values()) / DAY * PEAK,
        lambda_gb_s=gb_s,
        lambda_invocations=invocations,
        peak_concurrency=concurrency,
        rru_month=rru,
        wru_month=wru,
        storage_gb=storage_gb,
        redis_peak_ops=redis_ops,
        redis_gb=redis_gb,
        redis_shards=shards,
        pg_peak_qps=pg_qps,
        aurora_acu=max(2.0, pg_qps / PG_QPS_PER_ACU),
        ws_messages_month=per_day["dm"] * 2 * MONTH_DAYS + dau * PUSHES_PER_DAY * MONTH_DAYS,
        ws_minutes_month=dau * CONNECTED_MINUTES * MONTH_DAYS,
    )


def _tiered(units_m: float, first_m: float, price: float, over: float) -> float:
    return min(units_m, first_m) * price + max(0.0, units_m - first_m) * over


def cost(n: Needs) -> dict[str, float]:
    p = PRICES
    http_m = (n.requests_month - n.ws_messages_month / 2) / 1e6
    return {
        "API Gateway HTTP requests": _tiered(
            http_m, 300, p["http_api_per_m"], p["http_api_per_m_over_300m"]
        ),
        "API Gateway WebSocket": _tiered(
            n.ws_messages_month / 1e6, 1000, p["ws_message_per_m"], p["ws_message_per_m_over_1b"]
        )
        + n.ws_minutes_month / 1e6 * p["ws_connection_minute_per_m"],
        "Lambda requests": n.lambda_invocations / 1e6 * p["lambda_request_per_m"],
        "Lambda compute (GB-s)": n.lambda_gb_s * p["lambda_gb_s_arm"],
        "CloudWatch Logs ingestion": n.lambda_invocations
        * LOG_BYTES_PER_INVOCATION
        / 1e9
        * p["logs_ingest_gb"],
        "DynamoDB reads": n.rru_month / 1e6 * p["ddb_read_per_m"],
        "DynamoDB writes": n.wru_month / 1e6 * p["ddb_write_per_m"],
        "DynamoDB storage": n.storage_gb * p["ddb_storage_gb_month"],
        "ElastiCache (Valkey)": n.redis_shards * 2 * p["valkey_r7g_4xlarge_hour"] * HOURS,
        "Aurora Serverless v2 + RDS Proxy": n.aurora_acu
        * 2
        * HOURS
        * (p["aurora_acu_hour"] + p["rds_proxy_acu_hour"]),
    }


# ---- the same traffic on appsyncmasterclass-backend's design ---------------------------------
# Read from the repository (functions/tweet.js, functions/distribute-tweets.js,
# mapping-templates/Mutation.like.request.vtl, Mutation.follow.request.vtl): AppSync resolvers
# read and write DynamoDB directly (no Lambda on reads); a tweet is one TransactWriteItems of 3
# items (tweet, own timeline item, the author's tweetsCount); a like and a follow are 3-item
# transactions with the counters updated synchronously; a Lambda on the tweets stream writes one
# timeline item per follower (BatchWriteItem), another copies the followee's recent tweets into
# a new follower's timeline; timelines are DynamoDB items, never trimmed.
CLONE_RRU = {  # read units per request (eventually consistent reads: 0.5 per 4 KB item)
    "profile": 1.0,  # the user + the relationship item
    "home": 0.5 + 20 * 0.5 + 10 * 0.5 + 20 * 0.5 + 20 * 0.5,  # timeline Query, tweets, users,
    # liked and retweeted per tweet (Tweet.liked / Tweet.retweeted resolvers)
    "unread": 1.0,  # (no unread counts there: priced as one Query of the notifications)
    "notifications": 1.0,
    "tweet": 1.5,
    "post": 0.0,
    "like": 0.0,
    "follow": 1.0,
    "dm": 1.0,
    "discover": 0.0,
    "login": 0.0,
}
CLONE_WRU = {"post": 3 * 2.0, "like": 3 * 2.0, "follow": 3 * 2.0, "dm": 3 * 2.0}
CLONE_BACKFILL = 100  # MAX_TWEETS copied into a new follower's timeline (distribute-to-follower)
CLONE_TIMELINE_ITEM = 120  # bytes of a timeline item


def clone_cost(dau: int) -> dict[str, float]:
    p = PRICES
    per_day = {k: v * dau for k, v in TRAFFIC.items()}
    month = {k: v * MONTH_DAYS for k, v in per_day.items()}
    operations = sum(v for k, v in month.items() if k != "dm") + month["dm"]
    rru = sum(month[k] * CLONE_RRU[k] for k in month)
    fanout_writes = month["post"] * FOLLOWERS_PER_TWEET + month["follow"] * CLONE_BACKFILL
    wru = sum(month[k] * CLONE_WRU.get(k, 0.0) for k in month) + fanout_writes
    timeline_gb = (
        per_day["post"] * FOLLOWERS_PER_TWEET * CLONE_TIMELINE_ITEM * MONTH_DAYS * RETENTION_MONTHS
        / 1e9
    )  # fmt: skip
    other_gb = sum(per_day[k] * BYTES_PER_ITEM[k] for k in ("like", "follow")) * 360 / 1e9
    stream_lambda = (month["post"] + month["follow"]) / 10  # batches of ~10 records
    lambda_gb_s = stream_lambda * (FOLLOWERS_PER_TWEET / 25 * 0.008 + 0.02) * 1.0  # 1 GB
    return {
        "AppSync requests": operations / 1e6 * p["appsync_request_per_m"],
        "AppSync real-time": dau
        * PUSHES_PER_DAY
        * MONTH_DAYS
        / 1e6
        * p["appsync_realtime_message_per_m"]
        + dau * CONNECTED_MINUTES * MONTH_DAYS / 1e6 * p["appsync_connection_minute_per_m"],
        "Lambda (stream functions)": stream_lambda / 1e6 * p["lambda_request_per_m"]
        + lambda_gb_s * p["lambda_gb_s_arm"],
        "DynamoDB reads": rru / 1e6 * p["ddb_read_per_m"],
        "DynamoDB writes": wru / 1e6 * p["ddb_write_per_m"],
        "DynamoDB storage": (timeline_gb + other_gb) * p["ddb_storage_gb_month"],
        "CloudWatch Logs ingestion": stream_lambda
        * LOG_BYTES_PER_INVOCATION
        / 1e9
        * p["logs_ingest_gb"],
    }


# ---- hot spots ---------------------------------------------------------------------------------
TOP_ACCOUNT_FOLLOWERS_SHARE = 0.3  # the most followed account: a third of the daily users
HOT_TWEET_LIKE_SHARE = 0.01  # a viral tweet: 1% of all likes in its peak hour
TOP_ACCOUNT_FOLLOW_SHARE = 0.05  # share of all new follows going to the top account


def hot_spots(dau: int) -> list[tuple[str, float, float, str]]:
    """(what, load at peak, limit, what changes past it)."""
    peak = {k: v * dau / DAY * PEAK for k, v in TRAFFIC.items()}
    return [
        ("a celebrity's recent-tweets set (one Redis key) read by its followers' home reads, "
         "reads/s", peak["home"] * TOP_ACCOUNT_FOLLOWERS_SHARE, REDIS_OPS_PER_SHARD,
         "copy the set to every shard's replicas (or a 1 s in-function cache of celebrity "
         "lists): one key cannot be split"),
        ("likes of one viral tweet: its T#<tweet> likers partition, writes/s",
         peak["like"] * HOT_TWEET_LIKE_SHARE, 1000.0,
         "shard the likers partition (T#<tweet>#<n>, as dal/likes.py plans)"),
        ("follows of the top account: its U#<id> followers partition (I# and IT# items), "
         "writes/s", peak["follow"] * TOP_ACCOUNT_FOLLOW_SHARE * 2, 1000.0,
         "shard the followers partition (U#<id>#<n>, as dal/graph.py plans)"),
        ("PostgreSQL writer: last_seen_at UPDATEs (one per active minute per user), queries/s",
         dau * ACTIVE_MINUTES / DAY * PEAK, 256 * PG_QPS_PER_ACU,
         "Aurora Serverless v2 stops at 256 ACU a writer: keep last_seen_at in Redis and flush"
         " it in batches (or drop it), so PostgreSQL sees logins and cache misses only"),
        ("HTTP API requests per second (the account's default quota)", sum(peak.values()),
         10_000.0, "raise the quota (soft), then split the API across regions or accounts"),
        ("Lambda concurrency (the account's default quota)", 0.0, 1000.0,
         "raise the quota (soft); see peak concurrency in the needs table"),
    ]  # fmt: skip


# ---- media: S3 storage and requests, CloudFront egress (issue 35) -----------------------------
# A separate section: nothing above depends on it (`python -m bench.capacity_model` prints it).
# The seeds give no share of tweets with images (seed 001 only lists media_ids on a tweet and
# "Media blobs: Object store (S3) + CDN"), so these are assumptions to replace with a measurement
# of the live product (the share of POST /v1/tweets with media_ids), not figures from a source.
MEDIA_TWEET_SHARE = 0.20  # assumed: one tweet in five carries images
IMAGES_PER_MEDIA_TWEET = 1.5  # assumed: most carry one, some up to four
ORIGINAL_MB = 1.5  # a phone photo after the upload cap (5 MiB) and metadata removal
PREVIEW_MB = 0.06  # a 640 px WebP at quality 80 (bench/media.py's 12 MP photo: ~40-80 KB)
UNIQUE_TWEETS_SEEN = 300  # tweets a daily user sees once a day (the rest is the browser's cache)
FULL_SIZE_OPENS = 0.05  # share of previews seen that are opened at full size
CDN_HIT = 0.95  # share of CloudFront requests served from its cache (immutable URLs)
S3_PUT_CLASS_PER_IMAGE = 4  # the upload's POST, two PutObject (original, preview), the untag
S3_GET_PER_IMAGE = 1  # MediaFunction reads the upload once (deletes are free)
MEDIA_FUNCTION_S = 0.5  # per image at 1769 MB: bench/media.py (12 MP, busy machine) rounded up
MEDIA_PRICES = {
    "s3_gb_month": 0.023,  # S3 Standard, first 50 TB (0.022 to 500 TB, 0.021 beyond)
    "s3_put_per_k": 0.005,
    "s3_get_per_k": 0.0004,
    "cf_request_per_10k": 0.01,  # HTTPS requests, North America / Europe
    # CloudFront egress tiers (GB, $ per GB), North America / Europe, on-demand.
    "cf_tiers": ((10_240, 0.085), (40_960, 0.080), (102_400, 0.060), (358_400, 0.040),
                 (524_288, 0.030), (4_194_304, 0.025), (float("inf"), 0.020)),
}  # fmt: skip


def _cf_egress_cost(gb: float) -> float:
    cost, left = 0.0, gb
    for size, price in MEDIA_PRICES["cf_tiers"]:  # type: ignore[attr-defined]
        used = min(left, size)
        cost += used * price
        left -= used
        if left <= 0:
            break
    return cost


def media_needs(dau: int) -> dict[str, float]:
    """A month of images at ``dau`` daily users: what is uploaded, stored, requested, served."""
    images = dau * TRAFFIC["post"] * MEDIA_TWEET_SHARE * IMAGES_PER_MEDIA_TWEET * MONTH_DAYS
    previews = dau * UNIQUE_TWEETS_SEEN * MEDIA_TWEET_SHARE * IMAGES_PER_MEDIA_TWEET * MONTH_DAYS
    originals = previews * FULL_SIZE_OPENS
    return {
        "images_uploaded": images,
        "stored_gb": images * (ORIGINAL_MB + PREVIEW_MB) / 1024 * RETENTION_MONTHS,
        "s3_put_class": images * S3_PUT_CLASS_PER_IMAGE,
        "s3_get": images * S3_GET_PER_IMAGE + (previews + originals) * (1 - CDN_HIT),
        "cdn_requests": previews + originals,
        "cdn_egress_gb": (previews * PREVIEW_MB + originals * ORIGINAL_MB) / 1024,
        "media_function_gb_s": images * MEDIA_FUNCTION_S * LAMBDA_FULL_VCPU_MB / 1024,
    }


def media_cost(dau: int) -> dict[str, float]:
    n, p = media_needs(dau), MEDIA_PRICES
    return {
        "S3 storage (12 months of images)": n["stored_gb"] * float(p["s3_gb_month"]),  # type: ignore[arg-type]
        "S3 requests": n["s3_put_class"] / 1000 * float(p["s3_put_per_k"])  # type: ignore[arg-type]
        + n["s3_get"] / 1000 * float(p["s3_get_per_k"]),  # type: ignore[arg-type]
        "CloudFront requests": n["cdn_requests"] / 1e4 * float(p["cf_request_per_10k"]),  # type: ignore[arg-type]
        "CloudFront egress": _cf_egress_cost(n["cdn_egress_gb"]),
        "MediaFunction (Lambda)": n["media_function_gb_s"] * PRICES["lambda_gb_s_arm"]
        + n["images_uploaded"] / 1e6 * PRICES["lambda_request_per_m"],
    }


def media_report() -> str:
    """The media section as Markdown: needs and monthly cost at each scale."""
    lines = [
        f"Assumed: {MEDIA_TWEET_SHARE:.0%} of tweets carry images ({IMAGES_PER_MEDIA_TWEET} each),"
        f" {ORIGINAL_MB} MB originals and {PREVIEW_MB * 1000:.0f} KB previews; each daily user"
        f" sees {UNIQUE_TWEETS_SEEN} new tweets a day and opens {FULL_SIZE_OPENS:.0%} of the"
        " images at full size; the seeds give no such figures (see the constants).",
        "",
        "| a month at | " + " | ".join(f"{d / 1e6:g}M DAU" for d in SCALES) + " |",
        "|---|" + "---:|" * len(SCALES),
    ]
    needs_ = [media_needs(d) for d in SCALES]
    rows = (
        ("images_uploaded", "images uploaded"),
        ("stored_gb", "GB stored"),
        ("cdn_requests", "CDN requests"),
        ("cdn_egress_gb", "CDN egress, GB"),
    )
    for key, label in rows:
        lines.append(f"| {label} | " + " | ".join(f"{n[key]:,.0f}" for n in needs_) + " |")
    costs = [media_cost(d) for d in SCALES]
    for item in costs[0]:
        lines.append(f"| {item} | " + " | ".join(f"${c[item]:,.0f}" for c in costs) + " |")
    totals = " | ".join(f"**${sum(c.values()):,.0f}**" for c in costs)
    lines.append(f"| **media total** | {totals} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(media_report())
