"""The capacity model: measured per-call costs (bench/capacity.py, the celebrity sweep of
bench/celebrities.py, the Redis throughput of bench/redis_throughput.py, the load test's
operation counts) x traffic per daily user x public prices -> what 1M, 10M and 100M daily users
need and cost a month on the system template.yaml deploys (its ScaleProfile for that size), and
the same traffic priced on the design of theburningmonk/appsyncmasterclass-backend.

Every number that is not measured is a named constant here, with its source.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import popularity

ROOT = Path(__file__).resolve().parent.parent
SCALES = (1_000_000, 10_000_000, 100_000_000)
PROFILES = {1_000_000: "1M", 10_000_000: "10M", 100_000_000: "100M"}  # template ScaleProfile
DAY = 86_400
MONTH_DAYS = 30
HOURS = 730  # a month, as AWS prices hours

# ---- the traffic basis ---------------------------------------------------------------------
# Seed 001 (issue 22) takes Twitter's 2013 figures, "300K QPS to pull timelines" and "4,600
# tweets/s on average" (R. Krikorian, "Timelines at Twitter", QCon 2012/2013), and applies them to
# 100M daily users. Twitter had about 150M active users then (the same talk), so the rates below
# are 1.5x Twitter's own per active user: a heavy user base, not seed 001's measured one.
TWITTER_2013_ACTIVE_USERS = 150e6
TWITTER_2013_TIMELINE_READS_PER_S = 300_000
TWITTER_2013_TWEETS_PER_S = 4_600
PEAK = 3.0  # the daily peak over the day's mean (seed 000: "Peak = 100k * 3 = 300k QPS")
# Events. The 25x is a burst of POSTS for ONE SECOND: 143,199 tweets/s for "Castle in the Sky"
# on 3 Aug 2013 against ~5,700/s on a normal day (Twitter engineering blog, "New Tweets per second
# record, and how!", 16 Aug 2013), a coordinated one-second spike (viewers typing one word at one
# moment of the film), after which Twitter counted events in tweets per MINUTE. Sustained, the
# most tweeted event of its time ran at 327,452 tweets a minute (the 2012 US election night:
# Twitter blog, "Election Night 2012", 7 Nov 2012) in a year of 340M tweets a day (Twitter blog,
# "Twitter turns six", 21 Mar 2012): 1.39x that year's mean. One traffic basis, used by this
# model and by bench/streams_sim.py alike: the sustained event (minutes, on ALL traffic) is that
# whole rate again on top of the daily peak (it fell in the US evening), EVENT_PEAK x the mean;
# the burst is posts at EVENT_BURST x the mean for one second. The bill is the daily curve's:
# events are minutes a year.
EVENT_BURST = 25.0
ELECTION_2012_TWEETS_PER_MINUTE = 327_452
TWITTER_2012_TWEETS_PER_DAY = 340e6
EVENT_OVER_MEAN = (ELECTION_2012_TWEETS_PER_MINUTE / 60) / (TWITTER_2012_TWEETS_PER_DAY / 86_400)
EVENT_PEAK = PEAK + EVENT_OVER_MEAN

# The web client's socket (web/src/live.js, web/src/app.js; issue 41 item 3), per daily user a day.
CONNECTED_MINUTES = 30  # WebSocket minutes per daily user per day (assumption)
CONNECTIONS_PER_DAY = 3  # WebSocket connections opened per daily user per day (assumption)
TAB_RETURNS_PER_DAY = 3  # a tab brought back to the front (assumption)
# A heartbeat every 5 minutes (under the 10-minute idle timeout) and at each return to the tab,
# answered by API Gateway (a MOCK route): two messages each, no Lambda, no @connections post.
HEARTBEAT_EVERY_MINUTES = 5.0
# A ping (Lambda: the registration checked) once per connection; again only when the counts'
# safety net finds a pushed count the pushes did not bring (rare: not priced).
PINGS_PER_CONNECTION = 1
# The unread counts trust the pushes: read at each connection, at each return to the tab and
# every 10 live minutes as a safety net (a notification carries them; a DM adds one on the client)
COUNTS_SAFETY_NET_MINUTES = 10.0

# Requests per daily user per day (bench/load/locustfile.py's table, with its sources).
TRAFFIC = {
    "profile": 100.0,  # seed 000
    "home": 86.4,  # seed 001 / issue 22: 300k/s peak = 100k/s mean over 100M DAU
    # 3 connections + 3 returns + 30 / 10 safety-net reads (seed 004's 144 was Weibo's polling
    # client; issue 41's first step, a read every 5 live minutes, made it 12)
    "unread": CONNECTIONS_PER_DAY
    + TAB_RETURNS_PER_DAY
    + CONNECTED_MINUTES / COUNTS_SAFETY_NET_MINUTES,
    "notifications": 5.0,
    "tweet": 20.0,
    "post": 4.0,  # seed 001 / issue 22: 4,600 tweets/s mean over 100M DAU
    "like": 20.0,
    "follow": 1.0,
    "dm": 5.0,
    "discover": 1.0,
    "login": 0.1,  # seed 000
}
TRAFFIC["ws_ping"] = float(CONNECTIONS_PER_DAY * PINGS_PER_CONNECTION)
# Not a route of the measured mix (no function runs it): API Gateway messages and log lines only.
TRAFFIC["ws_heartbeat"] = CONNECTED_MINUTES / HEARTBEAT_EVERY_MINUTES + TAB_RETURNS_PER_DAY
HTTP = ("profile", "home", "unread", "notifications", "tweet", "post", "like", "follow",
        "discover", "login")  # fmt: skip
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
    "WS ping": "ws_ping",
}
# Stream records per action, by the consumer's record kind (what the writes put in the streams).
RECORDS = {
    "post": ("tweets INSERT tweet",),
    "like": ("likes INSERT T#", "likes INSERT LT#", "likes INSERT LU#"),
    "follow": ("graph INSERT O#", "graph INSERT I#", "graph INSERT OT#", "graph INSERT IT#",
               "graph MODIFY META"),
}  # fmt: skip

# ---- assumptions (not measured here), each used once below ------------------------------------
FOLLOWERS_PER_TWEET = 75  # followers fanned out to per tweet, without the celebrity sweep's graph
# The code's CELEBRITY_FOLLOWERS (settings.celebrity_followers) where a profile sets none: an
# account with more followers is merged on read, the others are fanned out on write.
CELEBRITY_FOLLOWERS = 10_000
# A tweet's fan-out: ~20 us of the consumer's CPU per follower (bench: fan-out), pipelined 500
# pushes a round trip. Seed 001 gives a tweet 5 s to reach its followers' timelines; the largest
# account fanned out on write (CelebrityFollowers followers) keeps half of it for the stream's lag.
FANOUT_S_PER_FOLLOWER = 20e-6  # of a full vCPU: the fan-out function's memory gives it a share
FANOUT_BUDGET_S = 2.5
FOLLOWING_PER_USER = 200  # following set size of an active user
CACHE_MISS = 0.02  # share of warm-measured tweet reads that miss a cache (profiles: below)
# The profile cache (settings.profile_cache_ttl_seconds): views fall on accounts as a Zipf law of
# exponent 1 by rank (the load test's LOAD_SKEW, the seed's law of whom people follow), each
# account's views a Poisson stream, an entry kept for the TTL: profile_miss_share().
PROFILE_CACHE_TTL_S = 3600
PROFILE_VIEW_ZIPF = 1.0
# The session cache (the profile's SessionCacheTtlSeconds; settings.session_cache_ttl_seconds):
# an active session reads its row from PostgreSQL once per TTL of activity.
SESSION_CACHE_TTL_S = 300
LIKES_KEPT = 600  # recent likes held per active user (~1 month at 20 a day)
MAU_PER_DAU = 2.0  # users active in 30 days per daily user: home timelines live 30 days idle
ACTIVE_MINUTES = 30  # minutes a daily user makes requests: one last_seen_at UPDATE each today
# The followed-celebrities list is kept a day (CELEBRITY_LIST_TTL) and dropped by the user's own
# follows and unfollows and by a followee crossing the threshold (rare: a drop per follower
# of the crossing account, not priced): read afresh about once a day plus once per follow.
CELEBRITY_LIST_REFRESHES = 1.0 + TRAFFIC["follow"]
REBUILDS_PER_DAU = 0.02  # home timelines rebuilt per daily user a day (back after 30 days, evicted)
PUSHES_PER_DAY = 30  # WebSocket frames pushed per daily user per day (DMs, notifications)
RTT_MS = {"redis": 0.4, "dynamodb": 5.0, "postgres": 1.5}  # per round trip, from Lambda in-AZ
LAMBDA_FULL_VCPU_MB = 1769  # one full vCPU at this memory size
# ---- Lambda on arm64 (issue 42 item 6) ---------------------------------------------------------
# CPU is timed here on this VM's x86 cores; the functions run on arm64 (Graviton2). Per core,
# CPU-bound Python on Lambda's arm64 took about 16% longer than on its x86_64 at 1 GB and above
# (amanox.ch, "Comparing AWS Lambda on ARM vs x86 architectures", 2022: Python with numpy, x86
# "remains about 16% faster"), where AWS's launch claimed "up to 19 percent better performance"
# (AWS News Blog, "AWS Lambda Functions Powered by AWS Graviton2 Processor", Sep 2021) on its own
# workloads. The model takes the slower of the two: an x86 ms here is this many ms on arm64 (this
# VM's core taken as Lambda's x86 one).
GRAVITON_CPU_FACTOR = 1.16
# The runtime's own work per invocation (the Python runtime interface client takes the event
# from the Runtime API and posts the answer): a no-op Python handler bills about 1 ms warm (an
# assumption: AWS publishes no figure); Lambda rounds each invocation up to the ms (half a ms on
# average).
RUNTIME_INVOKE_MS = 1.0
BILLING_ROUNDING_MS = 0.5
# INIT, billed since 1 August 2025 for on-demand ZIP functions on managed runtimes, at the
# invoke's price per GB-s (AWS Compute Blog, "AWS Lambda standardizes billing for INIT Phase",
# April 2025: "INITs (cold starts) typically occur in under 1% of invocations"). Its length: the
# slowest function's import and initialisation measured here, 289 ms (docs/benchmarks.md,
# bench/coldstart.py; x86, so at GRAVITON_CPU_FACTOR). How many: each function's environments
# added every day as its concurrency climbs from the night's trough to the daily peak, and each
# environment replaced every ENVIRONMENT_LIFETIME_H hours (Lambda recycles environments and
# publishes no lifetime: an assumption).
INIT_S = 0.289
ENVIRONMENT_LIFETIME_H = 2.0
PG_QPS_PER_ACU = 400  # simple indexed queries per second per Aurora ACU
PG_ROW_UPDATES_PER_ACU = 4_000  # rows per second per ACU when updated 1,000 to a statement
AURORA_MAX_ACU = 256  # Aurora Serverless v2's maximum per instance
AURORA_IO_PER_WRITE = 2.0  # Aurora storage I/Os per written row (log records, index pages)
AURORA_IO_PER_READ = 0.05  # per read query (almost all from the buffer cache)
# PostgreSQL's bytes per account, measured: `python -m bench.postgres_bytes` (2,000 accounts of
# three sessions each; heap, indexes and TOAST of every table, migrations at head): 2,699.
AURORA_BYTES_PER_ACCOUNT = 2_700
ACCOUNTS_PER_DAU = 5.0  # accounts kept per daily user (assumption: most accounts are not daily)
AURORA_GB = AURORA_BYTES_PER_ACCOUNT * ACCOUNTS_PER_DAU / 1e9  # PostgreSQL GB per daily user
# Each item's attributes, plus DynamoDB's 100 bytes of overhead an item (storage and backups:
# the DynamoDB developer guide, "Item sizes"): a tweet is one item, a like three, a follow four
# (and its counters), a notification two.
DDB_ITEM_OVERHEAD = 100
BYTES_PER_ITEM = {
    "tweet": 260 + DDB_ITEM_OVERHEAD,
    "like": 3 * (90 + DDB_ITEM_OVERHEAD),
    "follow": 4 * (75 + DDB_ITEM_OVERHEAD) + 40,
    "notification": 2 * (110 + DDB_ITEM_OVERHEAD),
}
AURORA_MAX_GB = 128 * 1024  # Aurora's storage: 128 TiB a cluster (hard)
NAT_GATEWAY_GBPS = 100  # one NAT gateway: 5 Gbps, scaling to 100 Gbps (VPC user guide)
RETENTION_MONTHS = 12  # tables' history priced for storage
# Lambda's platform lines per invocation (START, END, REPORT with its XRAY line when traced), as
# Lambda writes them (text format), with a request id and figures of typical width.
PLATFORM_LOG_LINES = (
    "START RequestId: 8f507cfc-4f2e-4697-b07a-ac58fc914c95 Version: $LATEST\n"
    "END RequestId: 8f507cfc-4f2e-4697-b07a-ac58fc914c95\n"
    "REPORT RequestId: 8f507cfc-4f2e-4697-b07a-ac58fc914c95\tDuration: 12.49 ms\t"
    "Billed Duration: 13 ms\tMemory Size: 512 MB\tMax Memory Used: 88 MB\t\n"
    "XRAY TraceId: 1-5e34a614-10bdf2b7f1fb44f07bc535a1\tSegmentId: 3e3d2a8b7ae2b73a\t"
    "Sampled: false\t\n"
)
PLATFORM_LOG_BYTES = len(PLATFORM_LOG_LINES.encode())
# The HTTP API access log line (template.yaml's Format) with typical values.
ACCESS_LOG_BYTES = len(
    '{"requestId":"Ab1CdEfGhIjKlMn=","ip":"203.0.113.77",'
    '"requestTime":"26/Nov/2026:10:00:00 +0000",'
    '"routeKey":"GET /v1/notifications/unread-counts","status":"200","protocol":"HTTP/1.1",'
    '"responseLength":"321","latency":"12","integrationLatency":"11","integrationError":"-"}\n'
)
LOG_COMPRESSION = 0.15  # CloudWatch stores logs compressed: ~0.15 of the ingested bytes
XRAY_SAMPLED = 0.05  # Lambda's active tracing: 1 request a second and 5% of the rest
TRACED_SHARE = 1.0  # every function has Tracing: Active (template.yaml Globals)
AZ_CROSS_SHARE = 0.5  # Lambda in two subnets: half the calls reach the cache in the other AZ
NAT_GATEWAYS = 2  # the template's NAT gateway in each zone (EnableNatGateway)
REDIS_OPS_PER_SHARD = 150_000  # assumed when bench/redis_throughput.py has not been run
REDIS_CMD_OVERHEAD_US = 8.0  # a command's I/O and parsing on one core, when not measured
# Node types the ScaleProfiles may name (CacheNodeType): vCPUs, memory (GiB; 75% of it for data)
# and the on-demand price of Valkey on it, $/hour in us-east-1 (Valkey's nodes are 20% below
# Redis OSS's: aws.amazon.com/elasticache/pricing, memory 2025; r7g.4xlarge's $1.3984 as before).
NODE_TYPES = {
    "cache.r7g.large": (2, 13.07, 0.1752),
    "cache.r7g.xlarge": (4, 26.32, 0.3496),
    "cache.r7g.2xlarge": (8, 52.82, 0.6992),
    "cache.r7g.4xlarge": (16, 105.81, 1.3984),
    "cache.r7g.8xlarge": (32, 209.55, 2.7968),
    "cache.r7g.16xlarge": (64, 419.09, 5.5936),
    "cache.m7g.xlarge": (4, 12.93, 0.2528),
    "cache.m7g.2xlarge": (8, 26.04, 0.5056),
    "cache.m7g.4xlarge": (16, 52.26, 1.0112),
    "cache.m7g.8xlarge": (32, 103.68, 2.0224),
    "cache.m7g.16xlarge": (64, 209.55, 4.0448),
}
NODE_GB = {name: gib * 0.75 for name, (_, gib, _) in NODE_TYPES.items()}
REDIS_NODE_GB = NODE_GB["cache.r7g.4xlarge"]
# A one-year reservation (no upfront) over on-demand: about a third less (memory of the 2025
# price page; AWS: "up to 55%" for three years all upfront; reservations are size-flexible within
# a family, so a resize keeps them).
RESERVED_1Y_FACTOR = 0.65
# Valkey 8's I/O threads: the gain on simple commands (GET/SET, all I/O) by a node's vCPUs,
# published, not measured here (2 shared cores cannot show it: bench/redis_throughput.py):
# valkey.io "Unlock 1 Million RPS" (Aug 2024) and "Valkey 8.0" (1.19M against 380K requests/s
# on r7g: 3.1x, no further gain past 8 I/O threads, devhands.io's runs agree); valkey.io "Scaling
# a Valkey Cluster to 1 Billion RPS" (Oct 2025: 1,000 r7g.2xlarge primaries, ~1M SET/s each:
# 2.6x); AWS "ElastiCache for Redis 7.1" ("up to double" from 8 physical cores). 4 vCPUs: 2x is
# an interpolation (assumption); 2 vCPUs: no core to spare.
IO_THREADS_GAIN = {2: 1.0, 4: 2.0, 8: 2.6, 16: 3.1}
SHARD_TARGET = 0.5  # a node-based shard at most half busy at the daily peak (an AZ's loss,
# a reshard's copy and the day's growth fit in the other half)
SHARD_EVENT_TARGET = 0.9  # and at most 90% busy at the sustained event (minutes)
REPLICAS_PER_SHARD = 1  # the template's ReplicasPerNodeGroup (Multi-AZ: a replica in the other AZ)
CLUSTER_MAX_NODES = 500  # ElastiCache's most nodes in one cluster-mode cluster (default quota 90)
ELASTICACHE_MAX_GB = 5_000  # per serverless cache (ElastiCache quotas)
ELASTICACHE_MAX_ECPU_S = 15_000_000  # per serverless cache (ElastiCache quotas)
HOT_KEY_CACHE_SECONDS = 1.0  # the in-function cache of hot keys (warble.dal.hot)
# The daily curve: hourly load over the day's mean, peaking at PEAK at 20:00 (an evening peak,
# ~0.4x at night): provisioned capacity follows it.
_WIDTH = 3.0


def _curve() -> list[float]:
    raw = [math.exp(-((min(abs(h - 20), 24 - abs(h - 20)) / _WIDTH) ** 2)) for h in range(24)]
    mean = sum(raw) / 24
    # base + a * raw: mean 1, max PEAK
    a = (PEAK - 1) / (1 - mean)
    return [PEAK - a + a * r for r in raw]


DAILY_CURVE = _curve()

# ---- public prices -----------------------------------------------------------------------------
# us-east-1, on-demand unless named, as AWS listed them in 2025-2026. This machine has no
# internet access: each was read from the stored copy of the page named in PRICE_SOURCES (the
# `search` tool's corpus, November 2026) or, where none was stored, from memory of the 2025 page
# (marked "memory"). Check them before quoting a figure.
PRICES = {
    "lambda_request_per_m": 0.20,
    # arm64 GB-s, tiered per month: first 7.5B, next 11.25B, over 18.75B
    "lambda_gb_s_arm": 0.0000133334,
    "lambda_gb_s_arm_tier2": 0.0000120001,
    "lambda_gb_s_arm_tier3": 0.0000106667,
    "http_api_per_m": 1.00,  # first 300M a month; 0.90 beyond
    "http_api_per_m_over_300m": 0.90,
    "ws_message_per_m": 1.00,  # first 1B; 0.80 beyond
    "ws_message_per_m_over_1b": 0.80,
    "ws_connection_minute_per_m": 0.25,
    "ddb_read_per_m": 0.125,
    "ddb_write_per_m": 0.625,
    "ddb_storage_gb_month": 0.25,
    "ddb_pitr_gb_month": 0.20,
    "ddb_wcu_hour": 0.00065,  # provisioned
    "ddb_rcu_hour": 0.00013,
    "ddb_reserved_wcu100_upfront_1y": 150.0,  # reserved, 100 units, one year
    "ddb_reserved_wcu100_hour_1y": 0.0128,
    "ddb_reserved_rcu100_upfront_1y": 30.0,
    "ddb_reserved_rcu100_hour_1y": 0.0025,
    "valkey_serverless_gb_hour": 0.084,
    "valkey_serverless_ecpu_per_m": 0.0023,
    # node-based: valkey_<type>_hour for each of NODE_TYPES (added below the table)
    "aurora_acu_hour": 0.12,
    "aurora_io_per_m": 0.20,
    "aurora_storage_gb_month": 0.10,
    "rds_proxy_acu_hour": 0.015,
    # Lambda logs (vended, Standard class, since 1 May 2025): first 10 TB, next 20, next 20, over
    "logs_lambda_gb": (0.50, 0.25, 0.10, 0.05),
    "logs_ingest_gb": 0.50,  # other logs (the HTTP API's access log)
    "logs_storage_gb_month": 0.03,
    "xray_trace_per_m": 5.00,
    "nat_hour": 0.045,
    "nat_gb": 0.045,
    "public_ipv4_hour": 0.005,  # each public IPv4 address, in use or not (from 1 February 2024)
    "egress_gb": (0.09, 0.085, 0.07, 0.05),  # first 10 TB, next 40, next 100, over 150
    "cross_az_gb": 0.02,  # $0.01 out of one AZ and $0.01 into the other
    "kms_key_month": 1.00,  # a customer managed key
    "kms_request_per_10k": 0.03,
    # a CloudFront + WAF front for the HTTP API (an HTTP API takes no WAF web ACL)
    "waf_web_acl_month": 5.00,
    "waf_rule_month": 1.00,
    "waf_request_per_m": 0.60,
    "cloudfront_https_per_10k": 0.01,  # North America / Europe
    "appsync_request_per_m": 4.00,
    "appsync_realtime_message_per_m": 2.00,
    "appsync_connection_minute_per_m": 0.08,
}
PRICES.update({f"valkey_{name.removeprefix('cache.').replace('.', '_')}_hour": hour
               for name, (_, _, hour) in NODE_TYPES.items()})  # fmt: skip
PRICES["valkey_serverless_min_gb"] = 0.1  # a Valkey serverless cache bills 100 MB at least
PRICE_SOURCES = {
    "Lambda requests and arm64 GB-s (tiers)": "aws.amazon.com/lambda/pricing (memory, 2025)",
    "HTTP API, WebSocket API": "aws.amazon.com/api-gateway/pricing (memory, 2025)",
    "DynamoDB on-demand (after the 50% cut of 1 Nov 2024), storage, PITR, provisioned, reserved":
        "aws.amazon.com/dynamodb/pricing (memory, 2025)",
    "ElastiCache Serverless for Valkey: $0.084/GB-hour, $0.0023 per million ECPUs; 1 ECPU per"
    " KB transferred, more for vCPU-heavy commands":
        "usage.ai 'ElastiCache Serverless pricing' (June 2026, citing the AWS Database Blog) and"
        " the AWS price page's stored copy (aws.eu/elasticache/pricing), read 2026-11-26",
    "Valkey nodes (r7g, m7g: Redis OSS's price less 20%), reserved 1 year no upfront ~35% off;"
    " serverless Valkey's 100 MB minimum": "aws.amazon.com/elasticache/pricing (memory, 2025);"
    " aws.amazon.com/elasticache/faqs (the 100 MB minimum, stored copy read 2026-12-03); AWS"
    " Database Blog 'Size flexibility for ElastiCache reserved nodes' ('up to 55%')",
    "Valkey I/O threads' gain on simple commands (IO_THREADS_GAIN)": "valkey.io/blog/unlock-one-"
    "million-rps (Aug 2024), valkey.io/blog/valkey-8-0-0-rc1, valkey.io 'Scaling a Valkey Cluster"
    " to 1 Billion RPS' (Oct 2025), AWS Database Blog 'ElastiCache for Redis 7.1' (stored copies"
    " read 2026-12-03); published figures, not measured here",
    "Aurora Serverless v2 ACU-hour, I/O, storage; RDS Proxy":
        "aws.amazon.com/rds/aurora/pricing, aws.amazon.com/rds/proxy/pricing (memory, 2025)",
    "Lambda log tiers $0.50/0.25/0.10/0.05 per GB at 10/30/50 TB (from 1 May 2025)":
        "Duckbill Group, 'Lambda logs tiered pricing' (May 2025: 60 TB -> $12,500), read"
        " 2026-11-26",
    "CloudWatch Logs $0.50/GB ingested, $0.03/GB-month stored":
        "aws.amazon.com/cloudwatch/pricing (memory, 2025)",
    "X-Ray $5.00 per million traces recorded": "aws.amazon.com/xray/pricing (memory, 2025)",
    "NAT gateway $0.045/hour and $0.045/GB; internet egress; cross-AZ $0.01/GB each way":
        "aws.amazon.com/vpc/pricing, aws.amazon.com/ec2/pricing/on-demand (memory, 2025)",
    "public IPv4 address $0.005/hour": "aws.amazon.com/vpc/pricing, 'Public IPv4 address' (from"
        " 1 February 2024; memory, 2025)",
    "KMS $1 a key-month, $0.03 per 10,000 requests": "aws.amazon.com/kms/pricing (memory, 2025)",
    "WAF $5 a web ACL-month, $1 a rule-month, $0.60 per million requests; CloudFront $0.01 per"
    " 10,000 HTTPS requests and its egress tiers": "aws.amazon.com/waf/pricing,"
    " aws.amazon.com/cloudfront/pricing (memory, 2025)",
    "S3 Standard $0.023/0.022/0.021 per GB-month (first 50 TB, next 450 TB, over 500 TB);"
    " Intelligent-Tiering's tiers": "aws.amazon.com/s3/pricing (memory, 2025)",
    "Lambda INIT billed as the invocation's duration from 1 August 2025":
        "AWS Compute Blog, 'AWS Lambda standardizes billing for INIT Phase' (April 2025), read"
        " 2026-12-03",
    "Graviton2's per-core factor for Python (x86 about 16% faster at 1 GB and above; AWS: 'up"
    " to 19 percent better performance')": "amanox.ch, 'Comparing AWS Lambda on ARM vs x86"
    " architectures' (2022); AWS News Blog, Graviton2 for Lambda (Sep 2021), read 2026-12-03",
    "AppSync": "aws.amazon.com/appsync/pricing (memory, 2025)",
}  # fmt: skip

# ---- account quotas (defaults; the ones to raise first) -----------------------------------------
QUOTAS = {
    "lambda_concurrency": 1_000,  # per account and region (soft)
    "lambda_scaling_per_10s": 1_000,  # new concurrency per function every 10 s (fixed)
    "http_api_rps": 10_000,  # HTTP API, per account and region (soft), burst 5,000
    "ws_new_connections_s": 500,  # WebSocket API new connections per second (soft)
    "ddb_table_units_s": 40_000,  # on-demand read or write units per second per table (soft)
    "ddb_partition_wcu": 1_000,  # write units per second per partition (hard)
    "ddb_partition_rcu": 3_000,  # read units per second per partition (hard)
    "elasticache_nodes_per_cluster": 90,  # cluster mode enabled (soft, up to 500)
    "elasticache_nodes_per_region": 300,  # every node of the account in the region (soft)
}


@dataclass
class Inputs:
    """What the model is fed: the per-call measurement, and the optional measurements that
    replace an assumption when they were run."""

    m: dict[str, Any]
    celebrities: dict[str, Any] | None = None
    throughput: dict[str, Any] | None = None
    load: dict[str, Any] | None = None
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    # each function's MemorySize as template.yaml sets it now (the measurement's when empty)
    memory_mb: dict[str, int] = field(default_factory=dict)
    # "<reader> <- <stream>": its ParallelizationFactor in template.yaml (1 when absent)
    lanes: dict[str, int] = field(default_factory=dict)
    # each scheduled function: (runs a day, its Timeout in seconds), from template.yaml
    schedules: dict[str, tuple[float, float]] = field(default_factory=dict)
    # the functions that mint Snowflake ids (each environment leases a worker id), from
    # template.yaml: those given the WorkerLeasesAccess policy
    minters: tuple[str, ...] = ()

    def memory(self) -> dict[str, int]:
        return {**self.m["memory_mb"], **self.memory_mb}


def template_profiles(path: Path = ROOT / "template.yaml") -> dict[str, dict[str, Any]]:
    """template.yaml's ScaleProfiles mapping: what each ScaleProfile deploys."""
    from infra.local.template import load_template

    return dict(load_template(path).mappings.get("ScaleProfiles") or {})


def template_memory(path: Path = ROOT / "template.yaml") -> dict[str, int]:
    """Each function's MemorySize in template.yaml."""
    from infra.local.template import load_template

    return {name: int(f.memory) for name, f in load_template(path).functions.items()}


def template_lanes(path: Path = ROOT / "template.yaml") -> dict[str, int]:
    """Each stream reader's ParallelizationFactor, by "<reader> <- <stream>" (its event's name:
    TweetsStream is the tweets stream)."""
    from infra.local.template import load_template

    lanes = {}
    for name, f in load_template(path).functions.items():
        for event_name, event in f.events.items():
            if isinstance(event, dict) and event.get("Type") == "DynamoDB":
                stream = event_name.removesuffix("Stream").lower()
                props = event.get("Properties") or {}
                lanes[f"{name} <- {stream}"] = int(props.get("ParallelizationFactor", 1))
    return lanes


def template_schedules(path: Path = ROOT / "template.yaml") -> dict[str, tuple[float, float]]:
    """Each scheduled function's runs a day (its ``rate(...)``) and Timeout."""
    from infra.local.template import load_template

    seconds = {"minute": 60, "minutes": 60, "hour": 3600, "hours": 3600, "day": DAY, "days": DAY}
    out = {}
    for name, f in load_template(path).functions.items():
        for event in f.events.values():
            props = (event.get("Properties") or {}) if isinstance(event, dict) else {}
            rate = str(props.get("ScheduleExpression", ""))
            if event.get("Type") in ("Schedule", "ScheduleV2") and rate.startswith("rate("):
                count, unit = rate.removeprefix("rate(").removesuffix(")").split()
                out[name] = (DAY / (float(count) * seconds[unit]), float(f.timeout))
    return out


def template_minters(path: Path = ROOT / "template.yaml") -> tuple[str, ...]:
    """The functions given WorkerLeasesAccess: each of their environments leases a Snowflake
    worker id."""
    from infra.local.template import load_template

    return tuple(
        name
        for name, f in load_template(path).functions.items()
        if {"Ref": "WorkerLeasesAccess"} in (f.properties.get("Policies") or [])
    )


def cpu_share(memory_mb: float) -> float:
    """The share of a vCPU Lambda gives a function of this memory size (one at 1,769 MB)."""
    return min(1.0, memory_mb / LAMBDA_FULL_VCPU_MB)


# ---- the Redis throughput measured (bench/redis_throughput.py) ------------------------------
def pipelined(result: dict[str, Any]) -> dict[str, float]:
    """Each benchmarked command's commands per CPU second at 4 a round trip (and its hot key's,
    as "<name> (hot)")."""
    out: dict[str, float] = {}
    for row in result["runs"]:
        if row["pipeline"] == 4:
            name = row["name"] + (" (hot)" if row["keys"] == "one hot key" else "")
            out[name] = float(row["ops_per_s"])
    return out


def mix_ops(m: dict[str, Any], single: dict[str, float], overhead_us: float) -> tuple[float, str]:
    """One core's commands/s for the measured mix: each command type's time (benchmarked, or
    its commandstats time plus the per-command I/O) weighted by its calls at the traffic."""
    benched = {"get": "GET profile (330 B)", "zrevrangebylex": "ZREVRANGEBYLEX home, 40 of 800",
               "zlexcount": "ZLEXCOUNT system list"}  # fmt: skip
    calls: dict[str, float] = {}
    time_us: dict[str, float] = {}
    for route, mix in ROUTE_MIX.items():
        cost = m["routes"].get(route)
        if not cost:
            continue
        for command, (n, usec) in client_commands(cost).items():
            weight = TRAFFIC[mix] * n
            calls[command] = calls.get(command, 0.0) + weight
            time_us[command] = time_us.get(command, 0.0) + TRAFFIC[mix] * usec
    total = sum(calls.values())
    if not total:
        return 0.0, "no capacity measurement"
    spent = 0.0
    for command, n in calls.items():
        if command in benched and benched[command] in single:
            per = 1e6 / single[benched[command]]
        else:
            per = time_us[command] / n + overhead_us
        spent += n / total * per
    top = sorted(calls.items(), key=lambda kv: -kv[1])[:5]
    note = "mostly " + ", ".join(f"{k} {v / total:.0%}" for k, v in top)
    return 1e6 / spent, note


# ---- per-call costs ----------------------------------------------------------------------------
def mix_depth(m: dict[str, Any]) -> float:
    """Commands a round trip in the measured routes, weighted by the traffic (a ReadBatch sends
    several; a write path often one)."""
    commands = trips = 0.0
    for route, mix in ROUTE_MIX.items():
        cost = m["routes"].get(route)
        if cost:
            commands += TRAFFIC[mix] * float(cost["redis_commands"])
            trips += TRAFFIC[mix] * float(cost["redis_round_trips"])
    return commands / trips if trips else 4.0


def mix_io_us(m: dict[str, Any], get_p1: float, get_p4: float, get_usec: float) -> float:
    """A command's I/O and parsing at the mix's depth: a round trip's share and a command's own,
    solved from a GET's time alone and 4 a round trip (commands per CPU second, less its
    execution), as a + b / depth."""
    one, four = 1e6 / get_p1 - get_usec, 1e6 / get_p4 - get_usec
    per_trip = max(0.0, (one - four) * 4 / 3)
    return max(0.0, one - per_trip) + per_trip / mix_depth(m)


def pipelined_io_us(inputs: Inputs) -> float | None:
    """mix_io_us from the throughput measurement's GET runs (random keys), or None."""
    runs = (inputs.throughput or {}).get("runs") or []
    gets = {r["pipeline"]: float(r["ops_per_s"]) for r in runs
            if r["name"].startswith("GET") and r["keys"] == "random"}  # fmt: skip
    if 1 not in gets or 4 not in gets:
        return None
    # a GET's execution: INFO commandstats counts wall time, which a busy machine inflates, so
    # the least of the benchmark's and the capacity run's
    get_usec = min(float((inputs.throughput or {}).get("get_usec", 0.3)),
                   float(inputs.m.get("redis_get_usec", 0.3)))  # fmt: skip
    return mix_io_us(inputs.m, gets[1], gets[4], get_usec)


def shard_ops(inputs: Inputs) -> float:
    """Commands/s one Redis shard (one core) serves with Warble's real mix: measured by
    bench/redis_throughput.py (the replay: a command not benchmarked takes its execution and
    the I/O at the mix's depth), else the assumption."""
    if inputs.throughput and inputs.throughput.get("runs"):
        io = pipelined_io_us(inputs)
        overhead = command_overhead_us(inputs) if io is None else io
        ops, _ = mix_ops(inputs.m, pipelined(inputs.throughput), overhead)
        if ops:
            return ops
    return float(REDIS_OPS_PER_SHARD)


def command_overhead_us(inputs: Inputs) -> float:
    """A command's I/O and parsing on one core (beyond its own execution): from the measured
    GET throughput without pipelining (1 / ops - GET's execution time)."""
    if inputs.throughput and inputs.throughput.get("command_overhead_us"):
        return float(inputs.throughput["command_overhead_us"])
    return REDIS_CMD_OVERHEAD_US


def io_share(inputs: Inputs) -> float:
    """The share of the one-core mix's time that is I/O and parsing (what I/O threads take off
    the main thread): a command's I/O at the mix's depth (pipelined_io_us), over the mix's time
    a command."""
    io_us = pipelined_io_us(inputs)
    if io_us is None:
        return 0.5  # assumed without a measurement
    return min(1.0, io_us * shard_ops(inputs) / 1e6)


def io_threads_gain(node_type: str) -> float:
    """IO_THREADS_GAIN at the node's vCPUs (16 and more: the 16-vCPU figure)."""
    vcpus = NODE_TYPES[node_type][0]
    return IO_THREADS_GAIN[min(vcpus, 16)]


def node_ops(inputs: Inputs, node_type: str) -> float:
    """Commands/s one node of ``node_type`` serves of Warble's mix: the measured one-core mix,
    its I/O share sped up by the published I/O-thread gain, its execution (scripts, range reads)
    still on the one main thread."""
    share = io_share(inputs)
    return shard_ops(inputs) / ((1 - share) + share / io_threads_gain(node_type))


def client_commands(cost: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """The server's (calls, microseconds) per command, for the commands the client sent: INFO
    commandstats also counts each command a Lua script runs, whose time is already in its
    EVALSHA's, so those are left out (a command sent both ways keeps its client share)."""
    server = cost.get("redis_server") or {}
    sent = {k.removeprefix("redis ").lower(): v for k, v in (cost.get("by_operation") or {}).items()
            if k.startswith("redis ")}  # fmt: skip
    if not sent:
        return {k: (float(c), float(u)) for k, (c, u) in server.items()}
    out = {}
    for name, (calls, usec) in server.items():
        mine = min(float(calls), float(sent.get(name, 0.0)))
        if mine > 0:
            out[name] = (mine, float(usec) * mine / float(calls))
    return out


SIMPLE_COMMAND_CAP = 2.0  # a command not benchmarked: at most twice a GET's vCPU time


def vcpu_caps(inputs: Inputs) -> dict[str, float]:
    """The most vCPU a command of each kind took against a GET, per second of the server's own
    CPU (bench/redis_throughput.py, without pipelining): a bound on the execution times the
    capacity run read from INFO commandstats, which a busy machine inflates (they are wall-clock
    time, and a command the kernel preempts counts the wait)."""
    runs = [r for r in (inputs.throughput or {}).get("runs", []) if r["pipeline"] == 1]
    get = next((r["ops_per_s"] for r in runs if r["name"].startswith("GET")), None)
    if not get:
        return {"evalsha": 5.0, "zrevrangebylex": 2.0, "zlexcount": 2.0}
    caps: dict[str, float] = {}
    for r in runs:
        name = r["name"].split()[0].lower()
        caps[name] = max(caps.get(name, 1.0), get / r["ops_per_s"])
    return caps


def ecpus(cost: dict[str, Any], inputs: Inputs) -> float:
    """ElastiCache Serverless's ECPUs for a call, by its published rule: a simple read or write
    is 1 ECPU per KB transferred (at least 1 a command); a command taking more vCPU time takes
    proportionally more. A command's vCPU time is its measured execution (INFO commandstats)
    plus the per-command I/O, against a 300-byte GET's. Measured on one node, priced on the
    cluster the template deploys (an MGET there is a GET per key)."""
    server = client_commands(cost)
    if not server:
        return float(cost.get("redis_commands", 0.0))
    overhead = command_overhead_us(inputs)
    get_us = float(inputs.m.get("redis_get_usec", 0.3))
    caps = vcpu_caps(inputs)
    total = 0.0
    commands = 0.0
    for name, (calls, usec) in server.items():
        if calls <= 0:
            continue
        commands += calls
        weight = max(1.0, (overhead + usec / calls) / (overhead + get_us))
        total += calls * min(weight, caps.get(name, SIMPLE_COMMAND_CAP))
    # On the cluster each MGET is a GET per key: at least one ECPU each.
    spread = max(0.0, float(cost.get("cluster_commands", commands)) - float(cost["redis_commands"]))
    total += spread
    return total + max(0.0, float(cost.get("redis_net_bytes", 0.0)) / 1024 - commands - spread)


def arm_cpu_s(x86_s: float, memory_mb: float) -> float:
    """Seconds on Lambda's arm64 at ``memory_mb`` of CPU time measured here on x86."""
    return x86_s * GRAVITON_CPU_FACTOR / cpu_share(memory_mb)


def _duration_ms(cost: dict[str, Any], memory_mb: int) -> float:
    """A call's billed time on Lambda: its CPU on arm64 at the memory's CPU share, plus its round
    trips (the runtime's own per invocation: ``needs``)."""
    cpu = arm_cpu_s(cost["cpu_ms"], memory_mb)
    waits = (
        cost["redis_round_trips"] * RTT_MS["redis"]
        + cost["dynamodb_calls"] * RTT_MS["dynamodb"]
        + cost["pg_queries"] * RTT_MS["postgres"]
    )
    return max(1.0, cpu + waits)


def _formula(inputs: Inputs, path: str) -> dict[str, Any] | None:
    sweep = inputs.celebrities or {}
    found = (sweep.get("formulas") or {}).get(path)
    return found if isinstance(found, dict) else None


def _at_population(
    formula: dict[str, Any], metric: str, inputs: Inputs, fol: Following | None = None
) -> float | None:
    """A sweep formula's value at the population's mean celebrities and following (``fol``'s,
    at a size and threshold; else the sweep graph's own, 100M users and its threshold)."""
    fit = formula.get(metric)
    if not fit:
        return None
    graph = (inputs.celebrities or {}).get("graph") or {}
    c = float(graph.get("mean_celebrities_followed", 0.0))
    f = float(graph.get("mean_following", FOLLOWING_PER_USER)) - c
    if fol is not None:
        c, f = fol.celebrities, fol.others
    return max(
        0.0,
        float(fit.get("intercept", 0.0))
        + float(fit.get("per_celebrity", 0.0)) * c
        + float(fit.get("per_following", 0.0)) * f,
    )


SWEPT = {"GET /v1/timeline/home": "home warm", "GET /v1/notifications/unread-counts": "unread warm"}
SWEPT_METRICS = ("redis_commands", "cluster_commands", "redis_round_trips", "redis_server_us",
                 "redis_net_bytes", "cpu_ms", "rcu", "dynamodb_calls")  # fmt: skip


def route_cost(
    inputs: Inputs,
    route: str,
    held_miss: float | None = None,
    fol: Following | None = None,
    log_commands: float = 0.0,
) -> dict[str, Any]:
    """A route's measured cost per call; for the routes whose cost depends on the celebrities a
    reader follows, the sweep's formula at the population's mean (when the sweep was run), the
    Redis server time scaled with the commands. The load test's measured Redis commands per
    request, when present, scale every route's (the in-process figures' shape, the stack's
    total). ``held_miss``: the celebrities' recent sets are held in the function
    (HOT_KEY_CACHE_MS), and this share of their reads misses it (``held_celebrity_costs``);
    ``log_commands``: the celebrities' log's commands each request carries."""
    cost = dict(inputs.m["routes"][route])
    formula = _formula(inputs, SWEPT.get(route, ""))
    if formula:
        measured = max(float(cost.get("redis_commands", 0.0)), 1e-9)
        held = (
            held_celebrity_costs(inputs, formula, held_miss, fol) if held_miss is not None else {}
        )
        for metric in SWEPT_METRICS:
            value = _at_population(formula, metric, inputs, fol)
            if value is not None:
                cost[metric] = max(0.0, value + held.get(metric, 0.0))
                if metric in ("redis_commands", "cluster_commands"):
                    cost[metric] += log_commands
        scale = float(cost["redis_commands"]) / measured
        cost["redis_server"] = {
            k: [calls * scale, usec * scale] for k, (calls, usec) in cost["redis_server"].items()
        }
        cost["by_operation"] = {k: v * scale for k, v in (cost.get("by_operation") or {}).items()}
    return cost


# ---- the celebrities' recent sets held in the function (warble.dal.hot) ------------------------
# From the 1M profile up (HotKeyCacheMs) a container holds each celebrity set it read, kept by
# the celebrities' log (read once a window: one pipeline of LOG_COMMANDS commands) until the
# resync drops them all (RESYNC_SECONDS): a read of a held set costs no command, a miss costs one
# ZRANGE of the whole set (in place of the EXISTS and the ranged read of the unheld path: the
# sweep's two per celebrity).
LOG_COMMANDS = 3  # the log's number, its oldest change, the changes since (warble.dal.hot)
RESYNC_SECONDS = 3600.0  # warble.dal.hot.RESYNC_SECONDS
HELD_PATH_METRICS = ("redis_commands", "cluster_commands", "redis_server_us", "redis_net_bytes")


def celebrity_read_odds(inputs: Inputs) -> list[float]:
    """Per celebrity (by rank), the chance that a reader follows it: the sweep's graph
    (bench.celebrities: a Zipf law of shares, each user's activity lognormal), averaged over
    readers. Its sum is the mean number of celebrities followed."""
    return list(_celebrity_read_odds(int(_graph(inputs).get("threshold", 10_000))))


def _graph(inputs: Inputs) -> dict[str, Any]:
    return dict((inputs.celebrities or {}).get("graph") or {})


@functools.cache
def _celebrity_read_odds(threshold: int) -> tuple[float, ...]:
    import numpy as np

    shares = np.array(popularity.celebrity_shares(threshold))
    activity = popularity.draw_activity(20_000, 3)  # the sweep's own draw
    odds = shares.copy()
    head = min(len(shares), 3000)  # below rank 3,000, min(1, a x share) is a x share
    odds[:head] = np.minimum(1.0, np.outer(activity, shares[:head])).mean(axis=0)
    return tuple(float(x) for x in odds)


def held_miss_rate(odds: list[float], reads_per_s: float, hold_s: float) -> float:
    """The share of celebrity-set reads that miss a container's held copies, when the container
    serves ``reads_per_s`` requests a second, each reading the sets its reader follows. Reads of
    a set arrive as a Poisson stream of rate l = reads_per_s x odds; a miss holds the set for
    hold_s, so the set misses l / (1 + l x hold_s) times a second."""
    if reads_per_s <= 0 or not odds:
        return 1.0
    misses = sum(r * reads_per_s / (1 + r * reads_per_s * hold_s) for r in odds)
    return misses / (reads_per_s * sum(odds))


def container_rates(inputs: Inputs) -> dict[str, float]:
    """Requests a second one busy container serves of each swept route at the peak: the route's
    share of its function's requests over the function's concurrency (both grow with the daily
    users, so the rate does not)."""
    m = inputs.m
    busy: dict[str, float] = {}
    for route, mix in ROUTE_MIX.items():
        if route not in m["routes"]:
            continue
        function = m["route_functions"][route]
        duration = _duration_ms(route_cost(inputs, route), m["memory_mb"].get(function, 512))
        busy[function] = busy.get(function, 0.0) + TRAFFIC[mix] * duration / 1000
    out = {}
    for route in SWEPT:
        if route in m["routes"]:
            function = m["route_functions"][route]
            out[route] = TRAFFIC[ROUTE_MIX[route]] / max(busy.get(function, 0.0), 1e-9)
    return out


def held_celebrity_costs(
    inputs: Inputs, formula: dict[str, Any], miss: float, fol: Following | None = None
) -> dict[str, float]:
    """What the held path changes in a swept route's cost at the population's mean c: the
    unheld per-celebrity commands out, one ZRANGE per missed set in (its execution measured on
    one key by bench/redis_throughput.py when run; its bytes those of the unheld reads)."""
    c = fol.celebrities if fol else float(_graph(inputs).get("mean_celebrities_followed", 0.0))
    single = (inputs.throughput or {}).get("single_key_ops_per_s") or {}
    # its execution: the benchmarked time less the per-command I/O (counted apart, per command)
    zrange_us = (
        max(0.0, 1e6 / float(single["zrange"]) - command_overhead_us(inputs))
        if single.get("zrange")
        else None
    )
    out: dict[str, float] = {}
    for metric in HELD_PATH_METRICS:
        per = float((formula.get(metric) or {}).get("per_celebrity", 0.0))
        if metric in ("redis_commands", "cluster_commands"):
            held = miss
        elif metric == "redis_server_us" and zrange_us is not None:
            held = miss * zrange_us
        else:
            held = miss * per
        out[metric] = (held - per) * c
    return out


def log_reads_per_request(inputs: Inputs, route: str, hold_s: float) -> float:
    """The celebrities' log's commands a request of ``route`` carries: one pipeline a window per
    busy container, shared by the requests it serves in that window."""
    rate = container_rates(inputs).get(route, 0.0)
    return LOG_COMMANDS / (hold_s * rate) if rate > 0 and hold_s > 0 else 0.0


def held_miss_rates(
    inputs: Inputs, dau: int, fol: Following | None = None
) -> dict[str, float] | None:
    """Per swept route, the share of celebrity-set reads that miss the function's held copies
    at ``dau``'s profile (None where the profile holds nothing: HotKeyCacheMs 0): the
    celebrities are those above the profile's threshold at that size (``fol``)."""
    profile = inputs.profiles.get(PROFILES.get(dau, ""), {})
    hold_s = float(profile.get("HotKeyCacheMs", 0) or 0) / 1000
    if hold_s <= 0 or not inputs.celebrities:
        return None
    odds = list(fol.odds) if fol else celebrity_read_odds(inputs)
    # A held set is kept until the resync (the log applies its changes in place).
    return {
        route: held_miss_rate(odds, rate, RESYNC_SECONDS)
        for route, rate in container_rates(inputs).items()
    }


# ---- who is a celebrity, at each size (the profile's CelebrityFollowers) -----------------------
@dataclass(frozen=True)
class Following:
    """What a daily user follows at one size and threshold, from the sweep's graph: the same
    social structure (the share of users following the account of each rank) at every size, so
    an account of rank r has odds_r x daily users followers, and is a celebrity above the
    threshold. A follow of a celebrity is merged on read (two commands a read, the sweep's
    formulas); any other is fanned out on write (one push a tweet)."""

    threshold: int
    celebrities: float  # c: celebrities a user follows
    others: float  # f: other accounts a user follows
    odds: tuple[float, ...]  # each celebrity's odds of being followed, by rank
    per_tweet: float  # followers a tweet is fanned out to: every user's non-celebrity follows


def celebrity_threshold(inputs: Inputs, dau: int) -> int:
    profile = inputs.profiles.get(PROFILES.get(dau, ""), {})
    return int(profile.get("CelebrityFollowers", CELEBRITY_FOLLOWERS))


def following(inputs: Inputs, dau: int, threshold: int | None = None) -> Following | None:
    """``Following`` at ``dau`` daily users and the profile's threshold (None without the
    sweep: the sweep graph's mean and FOLLOWERS_PER_TWEET are used as measured)."""
    graph = _graph(inputs)
    if not graph:
        return None
    threshold = celebrity_threshold(inputs, dau) if threshold is None else threshold
    odds = celebrity_read_odds(inputs)
    total = sum(odds) or 1.0
    above = tuple(p for p in odds if p * dau > threshold)
    # scaled to the graph's own mean (its draw caps each user's chance at 1)
    c = float(graph.get("mean_celebrities_followed", 0.0)) * sum(above) / total
    others = float(graph.get("mean_following", FOLLOWING_PER_USER)) - c
    return Following(threshold, c, others, above, others)


FANOUT_FUNCTION = "FanoutConsumerFunction"


def fanout_s_per_follower(inputs: Inputs) -> float:
    """The fan-out's wall time per follower: its CPU at the function's share of a vCPU."""
    return arm_cpu_s(FANOUT_S_PER_FOLLOWER, inputs.memory().get(FANOUT_FUNCTION, 1024))


def largest_fanout_s(inputs: Inputs, dau: int) -> tuple[float, float]:
    """(followers of the largest account fanned out on write, the seconds its tweet's fan-out
    takes at the function's CPU share): the threshold, or the top account when nobody reaches
    it."""
    odds = celebrity_read_odds(inputs) if inputs.celebrities else []
    top = (odds[0] if odds else TOP_ACCOUNT_FOLLOWERS_SHARE) * dau
    largest = min(float(celebrity_threshold(inputs, dau)), top)
    return largest, largest * fanout_s_per_follower(inputs)


def miss_cost(mix: str) -> dict[str, float] | None:
    """What a profile or tweet read costs on top of its warm figure when it misses its cache
    (``CACHE_MISS`` of them): it reads the table, and a profile reads PostgreSQL."""
    if mix not in ("profile", "tweet"):
        return None
    return {"cpu_ms": 1.0, "redis_commands": 2.0, "redis_round_trips": 1.0,
            "dynamodb_calls": 1.0, "rcu": 2.0, "wcu": 0.0,
            "pg_queries": 1.0 if mix == "profile" else 0.0, "pg_writes": 0.0}  # fmt: skip


def load_scale(inputs: Inputs) -> dict[str, float]:
    """Measured over predicted, per store, from the load test (bench/load/check.py
    --ops): the stack's own counters over what the in-process figures predict for the same
    requests. 1.0 where the load test was not run with --ops. Redis only: the load test's
    PostgreSQL is its profile and session caches' misses in a window of minutes on a
    population just seeded, which do not scale to a steady state of millions (the model
    computes those misses itself: ``profile_miss_share``, the session cache's TTL)."""
    load = inputs.load or {}
    return {k: float(v) for k, v in (load.get("ratio") or {}).items() if v and k in LOAD_SCALED}


LOAD_SCALED = ("redis",)


def _digamma(x: float) -> float:
    """The digamma function for x > 0: the recurrence up to 10, then its asymptotic series
    (terms to x^-10: within 1e-15 there)."""
    shift = 0.0
    while x < 10.0:
        shift -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    tail = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    return shift + math.log(x) - 0.5 / x - tail


@functools.cache
def profile_miss_share(
    accounts: int, views_per_s: float, ttl_s: float = PROFILE_CACHE_TTL_S
) -> float:
    """The share of profile views that miss the profile cache in a steady state: ``accounts``
    viewed by a Zipf law (PROFILE_VIEW_ZIPF), ``views_per_s`` in all, each cached ``ttl_s``. An
    account viewed at rate l misses l / (1 + l x ttl) times a second (as ``held_miss_rate``)."""
    if views_per_s <= 0:
        return 1.0
    if PROFILE_VIEW_ZIPF == 1.0:
        # In closed form: account r is viewed at a / r (a = views / H_N) and misses
        # a / (r + a x ttl) times a second, and the sum of 1 / (r + c) over r = 1..N is
        # digamma(N + c + 1) - digamma(c + 1). Within 1e-14 of the sum below, in microseconds
        # instead of the seconds its hundred million terms took.
        harmonic = _digamma(accounts + 1.0) - _digamma(1.0)
        a = views_per_s / harmonic
        c = a * ttl_s
        return a * (_digamma(accounts + c + 1.0) - _digamma(c + 1.0)) / views_per_s
    import numpy as np

    chunk = 10_000_000
    ranks = [np.arange(a, min(a + chunk, accounts + 1), dtype=np.float64)
             for a in range(1, accounts + 1, chunk)]  # fmt: skip
    harmonic = sum(float((r**-PROFILE_VIEW_ZIPF).sum()) for r in ranks)
    misses = 0.0
    for r in ranks:
        rate = views_per_s * r**-PROFILE_VIEW_ZIPF / harmonic
        misses += float((rate / (1 + rate * ttl_s)).sum())
    return misses / views_per_s


# ---- stream shards and batches, as bench/streams_sim.py fills them (issue 42 item 7) -----------
# One basis with the simulation (it reads these): a table has a partition per 10 GB and per 1,000
# write units a second, on-demand keeping room for twice its previous peak; its stream a shard
# per partition (DynamoDB developer guide, partitions and data distribution). A reader's lane
# (ParallelizationFactor) is polled 4 times a second while idle (Lambda developer guide: "a base
# rate of 4 times per second"), and a batch holds the record that woke it and those written
# during the batching window and half an idle poll: a year's tables have so many shards that a
# batch holds a few records, not most of BatchSize (bench/streams_sim.py's invocations/s).
STREAM_PARTITION_GB = 10.0
STREAM_PARTITION_WCU = 1000.0
STREAM_ON_DEMAND_HEADROOM = 2.0
STREAM_POLLS_PER_SECOND = 4.0
STREAM_OF = {"post": "tweets", "like": "likes", "follow": "graph"}
STREAM_RECORDS_PER_ACTION = {"tweets": 1.0, "likes": 3.0, "graph": 5.0}
STREAM_ITEM_BYTES = {"tweets": 260.0, "likes": 90.0, "graph": 75.0}  # the attributes alone
STREAM_WCU_PER_RECORD = {"tweets": 2.0, "likes": 2.0, "graph": 2.0}  # transactions write twice
STREAM_TABLE_AGE_DAYS = RETENTION_MONTHS * MONTH_DAYS  # the tables as their storage is priced


def stream_mean_records(stream: str, dau: int) -> float:
    """The stream's records a second, on the day's mean."""
    action = next(a for a, s in STREAM_OF.items() if s == stream)
    return dau * TRAFFIC[action] * STREAM_RECORDS_PER_ACTION[stream] / DAY


def stream_shards(stream: str, dau: int, age_days: float) -> int:
    """The stream's shards: its table's partitions, by throughput or by size."""
    mean = stream_mean_records(stream, dau)
    peak_wcu = mean * PEAK * STREAM_WCU_PER_RECORD[stream]
    by_throughput = math.ceil(peak_wcu * STREAM_ON_DEMAND_HEADROOM / STREAM_PARTITION_WCU)
    gigabytes = mean * DAY * age_days * STREAM_ITEM_BYTES[stream] / 1e9
    return max(1, by_throughput, math.ceil(gigabytes / STREAM_PARTITION_GB))


def batch_records(per_lane_s: float, batch_size: int, window_s: float) -> float:
    """Records in a batch on a lane that receives ``per_lane_s`` of its records a second."""
    waited = window_s + 0.5 / STREAM_POLLS_PER_SECOND
    return min(float(batch_size), 1.0 + per_lane_s * waited)


def stream_invocations_day(
    records_day: float, shards: int, lanes: int, batch_size: int, window_s: float
) -> float:
    """A reader's invocations a day on its stream, hour by hour on the daily curve."""
    total = 0.0
    for factor in DAILY_CURVE:
        per_lane = records_day / DAY * factor / (shards * lanes)
        if per_lane > 0:
            total += (
                3600 * shards * lanes * per_lane / batch_records(per_lane, batch_size, window_s)
            )
    return total


# ---- the functions off the measured routes (issue 42 item 7) -----------------------------------
# Not measured by bench/capacity.py; each an assumption, priced through the same Lambda, store
# and log sums as the routes. People search: one PostgreSQL statement (warble_search, under 1 ms:
# docs/search.md), the page's relationships in one BatchGetItem and the ranked ids kept in Redis.
SEARCHES_PER_DAU = 2.0  # assumed: searches a daily user makes a day
SEARCH_COST = {"cpu_ms": 8.0, "redis_commands": 3.0, "redis_round_trips": 2.0,
               "dynamodb_calls": 1.0, "rcu": 10.0, "wcu": 0.0, "pg_queries": 1.0,
               "pg_writes": 0.0}  # fmt: skip
# The data export (ExportFunction, a full vCPU) and the account deletion (AccountDeletionFunction,
# its queue's batches of one): assumed shares of users a month and seconds each.
EXPORTS_PER_USER_MONTH = 0.001
EXPORT_S = 5.0
DELETIONS_PER_USER_MONTH = 0.005
DELETION_S = 10.0
# The scheduled functions (LastSeen, Reconcile, the deletion's sweep, CasesPurge): each run
# billed at its Timeout, an upper bound (Inputs.schedules, from template.yaml).


KMS_ITEM = "KMS (the stack's key: log streams)"


# ---- KMS, the WebSocket access log, the NAT gateway's limits (issue 42 item 7) -----------------
# The stack's key (WarbleKey) encrypts the log groups, the failure queues and the migration's
# secrets; the functions sign in to the database and the cache with IAM (no secret read at a cold
# start), and the tables use AWS managed keys. CloudWatch Logs asks KMS for a data key per log
# stream (one per Lambda environment) from time to time: taken as every 5 minutes of the
# environment's life (an assumption: AWS publishes no rate).
KMS_REQUESTS_PER_ENVIRONMENT_HOUR = 12.0
# The WebSocket API's access log line (template.yaml's Format) with typical values: one per
# message received, $connect and $disconnect.
WS_ACCESS_LOG_BYTES = len(
    '{"requestId":"Ab1CdEfGhIjKlMn=","ip":"203.0.113.77",'
    '"requestTime":"26/Nov/2026:10:00:00 +0000","connectionId":"Ab1CdEfGhIjKlMn=",'
    '"eventType":"MESSAGE","routeKey":"ping","status":"200","integrationLatency":"11",'
    '"error":"-"}\n'
)
# A NAT gateway (VPC user guide, "NAT gateway basics"): 1M packets a second, scaling to 10M, and
# 55,000 simultaneous connections to each unique destination per IP address. Every
# @connections post leaves through it, over connections each environment keeps in its pool
# (warble.dal.websocket.POOL_CONNECTIONS, up to 16, as many as its concurrent posts). A post on a
# kept connection: its request and answer and their acknowledgements, about 4 packets.
NAT_PACKETS_S = 10_000_000
NAT_CONNECTIONS_PER_DESTINATION = 55_000
NAT_IPS = 1  # addresses on each NAT gateway where a profile does not say (NatGatewayIps)


def nat_ips(profile: dict[str, Any]) -> int:
    """The addresses on each zone's NAT gateway (the profile's NatGatewayIps)."""
    return int(profile.get("NatGatewayIps", NAT_IPS))


WS_POOL_CONNECTIONS = 16
PACKETS_PER_POST = 4.0
PUSHING_FUNCTIONS = ("WebSocketFunction", "ReactionsConsumerFunction", "FanoutConsumerFunction",
                     "NotificationsFunction", "AccountsFunction")  # fmt: skip


# ---- what a scale needs ------------------------------------------------------------------------
@dataclass
class Needs:
    dau: int
    requests_month: float = 0.0
    http_requests_month: float = 0.0
    peak_rps: float = 0.0
    busiest_route_peak_rps: float = 0.0
    post_burst_rps: float = 0.0  # POST /v1/tweets in the one-second burst (EVENT_BURST x mean)
    post_burst_environments: float = 0.0  # TweetsFunction environments the burst adds
    post_duration_s: float = 0.0  # a POST /v1/tweets' billed time
    lambda_gb_s: float = 0.0
    lambda_invocations: float = 0.0
    peak_concurrency: float = 0.0
    concurrency_by_function: dict[str, float] = field(default_factory=dict)
    lambda_log_gb: float = 0.0
    access_log_gb: float = 0.0
    traces_month: float = 0.0
    rru_month: float = 0.0
    wru_month: float = 0.0
    peak_wru_s: float = 0.0
    peak_rru_s: float = 0.0
    hourly_rru: list[float] = field(default_factory=list)
    hourly_wru: list[float] = field(default_factory=list)
    storage_gb: float = 0.0
    redis_peak_ops: float = 0.0
    redis_ecpu_month: float = 0.0
    redis_peak_ecpu_s: float = 0.0
    redis_gb: float = 0.0
    redis_bytes_month: float = 0.0
    caches: int = 1  # serverless caches that hold the event peak
    redis_shards: int = 1  # r7g.4xlarge shards that hold both peaks (the larger of the two below)
    # each node type's shards at the daily peak, at the event, for the memory (NODE_TYPES)
    node_shards: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    redis_shards_event: int = 1  # ... the sustained event at SHARD_EVENT_TARGET busy
    redis_shards_daily: int = 1  # ... the daily peak
    pg_peak_qps: float = 0.0
    pg_peak_writes: float = 0.0
    pg_peak_reads: float = 0.0
    last_seen_peak: float = 0.0
    aurora_acu: float = 0.0
    aurora_acu_event: float = 0.0
    aurora_acu_per_minute_updates: float = 0.0
    aurora_io_month: float = 0.0
    ws_messages_month: float = 0.0
    ws_minutes_month: float = 0.0
    ws_peak_messages_s: float = 0.0
    ws_busiest_route_peak: float = 0.0
    ws_peak_connects_s: float = 0.0
    egress_gb: float = 0.0
    nat_gb: float = 0.0
    held_miss: dict[str, float] = field(default_factory=dict)  # route -> share of held misses
    profile_miss: float = CACHE_MISS  # share of profile views missing the profile cache
    following: Following | None = None  # who is a celebrity at this size (the sweep's graph)
    largest_fanout: tuple[float, float] = (0.0, 0.0)  # its followers, its fan-out's seconds
    fanout_memory_mb: int = 1024  # the fan-out function's MemorySize
    # Lambda on arm64 (item 6): the runtime's per-invocation GB-s, INIT's, the cold starts
    runtime_gb_s: float = 0.0
    init_gb_s: float = 0.0
    cold_starts_month: float = 0.0
    environment_hours_month: float = 0.0
    memory_by_function: dict[str, int] = field(default_factory=dict)
    # streams (item 7): "<reader> <- <stream>" -> records a batch (the day's mean), its shards
    stream_batch: dict[str, float] = field(default_factory=dict)
    stream_shards: dict[str, int] = field(default_factory=dict)
    posts_per_invocation: dict[str, float] = field(default_factory=dict)
    # the functions off the measured routes: name -> (invocations, GB-s) a month
    other_functions: dict[str, tuple[float, float]] = field(default_factory=dict)
    ws_access_log_gb: float = 0.0
    http_egress_gb: float = 0.0  # the HTTP API's answers (what a CloudFront front would carry)
    storage_overhead_gb: float = 0.0  # DynamoDB's 100 bytes an item, in storage_gb
    pushes_peak_s: float = 0.0  # @connections posts a second at the daily peak (the NAT's)


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


# Followers whose home timeline is cached when a tweet reaches them: the monthly users (whose
# timelines live 30 days idle) among the accounts kept. The others' push finds no timeline.
HOME_BUILT_SHARE = MAU_PER_DAU / ACCOUNTS_PER_DAU


def _fanout_adjusted(
    consumer: str, kind: str, cost: dict[str, Any], m: dict[str, Any], per_tweet: float,
    built: float = HOME_BUILT_SHARE,
) -> dict[str, Any]:  # fmt: skip
    """The timeline consumer's tweet record at ``per_tweet`` followers, ``built`` of them with a
    cached home: per follower more (or fewer) than the measured authors had, one EVALSHA
    (warble.dal.timelines' push), which the server counts with the commands it runs: an EXISTS,
    and for a built home a ZADD and a ZREMRANGEBYRANK (their time is in the EVALSHA's)."""
    if consumer != "FanoutConsumerFunction" or not kind.startswith("tweets"):
        return cost
    extra = per_tweet - m["mean_followers_measured"]
    adjusted = dict(cost)
    adjusted["redis_commands"] = max(0.0, cost["redis_commands"] + extra)
    # pipelined in chunks of 500: one round trip each
    adjusted["redis_round_trips"] = cost["redis_round_trips"] + max(0.0, extra) / 500
    adjusted["cpu_ms"] = cost["cpu_ms"] + extra * FANOUT_S_PER_FOLLOWER * 1000
    server = dict(cost.get("redis_server") or {})
    calls, usec = server.get("evalsha", [0.0, 0.0])
    per = usec / calls if calls else 5.0
    server["evalsha"] = [max(0.0, calls + extra), max(0.0, usec + extra * per)]
    for command, share in (("exists", 1.0), ("zadd", built), ("zremrangebyrank", built)):
        inner, inner_usec = server.get(command, [0.0, 0.0])
        server[command] = [max(0.0, inner + extra * share), inner_usec]
    adjusted["redis_server"] = server
    adjusted["redis_net_bytes"] = cost.get("redis_net_bytes", 0.0) + extra * 110
    return adjusted


def _cold_paths(
    inputs: Inputs, dau: int, fol: Following | None = None
) -> list[tuple[str, str, float, dict[str, Any]]]:
    """(what, function, calls a day, cost per call) of the cold paths the sweep measured: the
    followed-celebrities list read afresh (CELEBRITY_LIST_REFRESHES a day) and the home
    timeline rebuilt on a miss. Without the sweep, a rebuild is priced at the old 2 read units."""
    paths: list[tuple[str, str, float, dict[str, Any]]] = []
    for name, function, per_dau in (
        ("celebrity list refresh", "TweetsFunction", CELEBRITY_LIST_REFRESHES),
        ("home rebuild", "TweetsFunction", REBUILDS_PER_DAU),
    ):
        formula = _formula(inputs, name)
        cost = {
            "cpu_ms": 0.0,
            "redis_commands": 0.0,
            "redis_round_trips": 0.0,
            "dynamodb_calls": 0.0,
            "rcu": 2.0 if name == "home rebuild" else 0.0,
            "wcu": 0.0,
            "pg_queries": 0.0,
            "redis_server": {},
            "redis_net_bytes": 0.0,
        }
        if formula:
            for metric in SWEPT_METRICS:
                value = _at_population(formula, metric, inputs, fol)
                if value is not None:
                    cost[metric] = value
            cmds = cost["redis_commands"]
            cost["redis_server"] = {"mixed": [cmds, cost.get("redis_server_us", 0.0)]}
        paths.append((name, function, dau * per_dau, cost))
    return paths


def _tiered(units: float, tiers: list[tuple[float, float]]) -> float:
    """Price of ``units`` over consecutive tiers [(size, price)], the last size infinite."""
    total, left = 0.0, units
    for size, price in tiers:
        take = min(left, size)
        total += take * price
        left -= take
        if left <= 0:
            break
    return total


def _sessions_and_sockets(inputs: Inputs, dau: int, add: Callable[..., None]) -> float:
    """The session cache's misses and the sockets' ``$connect`` / ``$disconnect``, priced through
    ``needs``' ``add``: the connections a day."""
    # The session cache: a session's row read from PostgreSQL once per TTL of activity.
    session_miss = {"cpu_ms": 1.0, "redis_commands": 2.0, "redis_round_trips": 1.0,
                    "dynamodb_calls": 0.0, "rcu": 0.0, "wcu": 0.0, "pg_queries": 1.0,
                    "pg_writes": 0.0}  # fmt: skip
    session_ttl = float(
        inputs.profiles.get(PROFILES.get(dau, ""), {}).get(
            "SessionCacheTtlSeconds", SESSION_CACHE_TTL_S
        )
    )
    active_s = ACTIVE_MINUTES * 60  # a daily user's active seconds: at most one read a TTL
    add("AccountsFunction", dau * max(1.0, active_s / session_ttl), session_miss, 0.0)
    # $connect / $disconnect: a session check and a connection item each way.
    connects = dau * CONNECTIONS_PER_DAY
    connect = {"cpu_ms": 3.0, "redis_commands": 2.0, "redis_round_trips": 1.0,
               "dynamodb_calls": 1.0, "rcu": 0.0, "wcu": 1.0, "pg_queries": 0.0}  # fmt: skip
    add("WebSocketFunction", connects * 2, connect, connects * 2)
    # $connect's REQUEST authorizer (the same function, its own invocation; a WebSocket API
    # caches no authorizer's answer): the token's session read.
    authorizer = {"cpu_ms": 2.0, "redis_commands": 2.0, "redis_round_trips": 1.0,
                  "dynamodb_calls": 0.0, "rcu": 0.0, "wcu": 0.0, "pg_queries": 0.0}  # fmt: skip
    add("WebSocketFunction", connects, authorizer, connects)
    return connects


def _other_functions(
    inputs: Inputs, n: Needs, per_day: dict[str, float], add: Callable[..., None]
) -> float:
    """People search, the export, the deletion and the scheduled functions, priced through
    ``needs``' ``add`` (search) or by their seconds: their log bytes a month."""
    memory = inputs.memory()
    before = (n.lambda_invocations, n.lambda_gb_s)
    add("SearchFunction", n.dau * SEARCHES_PER_DAU, SEARCH_COST, n.dau * SEARCHES_PER_DAU)
    n.other_functions["SearchFunction"] = (
        n.lambda_invocations - before[0],
        n.lambda_gb_s - before[1],
    )
    runs = {
        "ExportFunction": (n.dau * EXPORTS_PER_USER_MONTH / MONTH_DAYS, EXPORT_S),
        "AccountDeletionFunction": (n.dau * DELETIONS_PER_USER_MONTH / MONTH_DAYS, DELETION_S),
    }
    for name, (per_day_runs, timeout) in inputs.schedules.items():
        runs[f"{name} (scheduled)"] = (per_day_runs, timeout)
    invocations = 0.0
    for name, (per_day_runs, seconds) in runs.items():
        mb = memory.get(name.removesuffix(" (scheduled)"), 512)
        month = per_day_runs * MONTH_DAYS
        gb_s = month * seconds * GRAVITON_CPU_FACTOR * mb / 1024
        n.lambda_invocations += month
        n.lambda_gb_s += gb_s
        invocations += month
        previous = n.other_functions.get(name, (0.0, 0.0))
        n.other_functions[name] = (previous[0] + month, previous[1] + gb_s)
    return invocations * PLATFORM_LOG_BYTES


def _stream_readers(
    inputs: Inputs, n: Needs, per_day: dict[str, float], fol: Following | None,
    add: Callable[..., None],
) -> float:  # fmt: skip
    """The stream readers' records, priced through ``needs``' ``add`` with the template's
    mappings, their batches filled as the simulation fills them: their log bytes a month."""
    m, dau = inputs.m, n.dau
    log_bytes_month = 0.0
    for action, consumers in _consumer_costs(m).items():
        stream = STREAM_OF[action]
        shards = stream_shards(stream, dau, STREAM_TABLE_AGE_DAYS)
        for consumer, kind, cost in consumers:
            cost = _fanout_adjusted(
                consumer, kind, cost, m, fol.per_tweet if fol else FOLLOWERS_PER_TWEET
            )
            # the template's mapping, its batches filled as the simulation fills them
            reader = f"{consumer} <- {stream}"
            batches = stream_invocations_day(
                per_day[action], shards, inputs.lanes.get(reader, 1),
                int(cost.get("batch_size", 100)), float(cost.get("batch_window", 0.0)),
            )  # fmt: skip
            n.stream_batch[reader] = per_day[action] / batches
            n.stream_shards[reader] = shards * inputs.lanes.get(reader, 1)
            n.posts_per_invocation[consumer] = max(
                n.posts_per_invocation.get(consumer, 0.0),
                float(cost.get("ws_posts", 0.0)) * n.stream_batch[reader],
            )
            add(consumer, per_day[action], cost, batches)
            log_bytes_month += batches * MONTH_DAYS * PLATFORM_LOG_BYTES

    return log_bytes_month


def _cold_starts(n: Needs) -> None:
    """INIT (billed since August 2025): each function's environments added from the night's
    trough to the daily peak every day, and each replaced every ENVIRONMENT_LIFETIME_H hours."""
    trough = min(DAILY_CURVE) / PEAK
    for function, peak in n.concurrency_by_function.items():
        mb = n.memory_by_function.get(function, 512)
        per_day = peak * (1 - trough) + peak / PEAK * 24 / ENVIRONMENT_LIFETIME_H
        starts = per_day * MONTH_DAYS
        gb_s = starts * INIT_S * GRAVITON_CPU_FACTOR * mb / 1024
        n.cold_starts_month += starts
        n.init_gb_s += gb_s
        n.lambda_gb_s += gb_s
        n.environment_hours_month += peak / PEAK * 24 * MONTH_DAYS


def needs(inputs: Inputs, dau: int, *, last_seen_in_redis: bool = True) -> Needs:
    """What ``dau`` daily users need. ``last_seen_in_redis``: the sessions' last_seen_at noted in
    Redis and flushed in batches (LastSeenFunction, as the code does since issue 30); False
    prices the UPDATE per active minute it replaced."""
    m = inputs.m
    memory = inputs.memory()
    per_day = {k: v * dau for k, v in TRAFFIC.items()}
    scale = load_scale(inputs)
    n = Needs(dau=dau)
    n.http_requests_month = sum(per_day[k] for k in HTTP) * MONTH_DAYS
    n.requests_month = (
        n.http_requests_month
        + (per_day["dm"] + per_day["ws_ping"] + per_day["ws_heartbeat"]) * MONTH_DAYS
    )
    n.peak_rps = sum(per_day[k] for k in HTTP) / DAY * PEAK
    n.busiest_route_peak_rps = max(per_day[k] for k in HTTP) / DAY * PEAK
    n.post_burst_rps = per_day["post"] / DAY * EVENT_BURST
    hourly_r = [0.0] * 24
    hourly_w = [0.0] * 24
    redis_cmds_s = ecpu_s = 0.0
    redis_bytes_day = 0.0
    log_bytes_month = 0.0
    pg_reads = pg_writes = 0.0

    def add(function: str, calls_day: float, cost: dict[str, Any], invocations_day: float) -> None:
        nonlocal redis_cmds_s, ecpu_s, redis_bytes_day, log_bytes_month, pg_reads, pg_writes
        mb = memory.get(function, 512)
        n.memory_by_function[function] = mb
        duration = _duration_ms(cost, mb)
        calls = calls_day * MONTH_DAYS
        runtime_s = invocations_day * MONTH_DAYS * (RUNTIME_INVOKE_MS + BILLING_ROUNDING_MS) / 1000
        n.lambda_gb_s += (calls * duration / 1000 + runtime_s) * mb / 1024
        n.runtime_gb_s += runtime_s * mb / 1024
        n.lambda_invocations += invocations_day * MONTH_DAYS
        peak = calls_day / DAY * PEAK
        n.concurrency_by_function[function] = (
            n.concurrency_by_function.get(function, 0.0)
            + peak * duration / 1000
            + invocations_day / DAY * PEAK * (RUNTIME_INVOKE_MS + BILLING_ROUNDING_MS) / 1000
        )
        commands = float(cost.get("cluster_commands", cost["redis_commands"]))
        commands *= scale.get("redis", 1.0)
        redis_cmds_s += peak * commands
        call_ecpu = ecpus(cost, inputs) * scale.get("redis", 1.0)
        ecpu_s += peak * call_ecpu
        n.redis_ecpu_month += calls * call_ecpu
        redis_bytes_day += calls_day * float(cost.get("redis_net_bytes", 0.0))
        log_bytes_month += calls * float(cost.get("log_bytes", 0.0))
        for h, factor in enumerate(DAILY_CURVE):
            hourly_r[h] += calls_day / DAY * factor * float(cost["rcu"])
            hourly_w[h] += calls_day / DAY * factor * float(cost["wcu"])
        n.rru_month += calls * float(cost["rcu"])
        n.wru_month += calls * float(cost["wcu"])
        writes = float(cost.get("pg_writes", 0.0))
        pg_writes += peak * writes * scale.get("postgres", 1.0)
        pg_reads += peak * (float(cost["pg_queries"]) - writes) * scale.get("postgres", 1.0)

    fol = following(inputs, dau)
    n.following = fol
    n.largest_fanout = largest_fanout_s(inputs, dau)
    n.fanout_memory_mb = memory.get(FANOUT_FUNCTION, n.fanout_memory_mb)
    held = held_miss_rates(inputs, dau, fol)
    n.held_miss = held or {}
    hold_s = float(inputs.profiles.get(PROFILES.get(dau, ""), {}).get("HotKeyCacheMs", 0) or 0)
    profile_pg_event = 0.0
    for route, mix in ROUTE_MIX.items():
        if route not in m["routes"]:
            continue
        log = log_reads_per_request(inputs, route, hold_s / 1000) if held else 0.0
        cost = route_cost(inputs, route, (held or {}).get(route), fol, log)
        function = m["route_functions"][route]
        add(function, per_day[mix], cost, per_day[mix])
        if mix == "post":  # the burst: posts above the daily peak's, each held this long
            n.post_duration_s = _duration_ms(cost, memory.get(function, 512)) / 1000
            extra = n.post_burst_rps - per_day[mix] / DAY * PEAK
            n.post_burst_environments = extra * n.post_duration_s
        log_bytes_month += per_day[mix] * MONTH_DAYS * PLATFORM_LOG_BYTES
        if (miss := miss_cost(mix)) is not None:
            share = CACHE_MISS
            if mix == "profile":  # at the daily peak's view rate: what sizes Aurora
                views = per_day[mix] / DAY * PEAK
                share = profile_miss_share(dau, views)
                n.profile_miss = share
                # at the sustained event, more views of the same accounts: fewer misses a view
                event = views * EVENT_PEAK / PEAK
                profile_pg_event = event * profile_miss_share(dau, event) - views * share * (
                    EVENT_PEAK / PEAK
                )
            add(function, per_day[mix] * share, miss, 0.0)
    for _, function, calls_day, cost in _cold_paths(inputs, dau, fol):
        add(function, calls_day, cost, 0.0)
    connects = _sessions_and_sockets(inputs, dau, add)
    # $connect's authorizer, $connect and $disconnect: three invocations a connection
    log_bytes_month += connects * 3 * MONTH_DAYS * PLATFORM_LOG_BYTES
    log_bytes_month += _other_functions(inputs, n, per_day, add)
    profile = inputs.profiles.get(PROFILES.get(dau, ""), {})
    log_bytes_month += _stream_readers(inputs, n, per_day, fol, add)
    _cold_starts(n)
    n.peak_concurrency = sum(n.concurrency_by_function.values())
    n.lambda_log_gb = log_bytes_month / 1e9
    n.access_log_gb = n.http_requests_month * ACCESS_LOG_BYTES / 1e9
    # PassThrough (the profile's Tracing from 10M up): nothing upstream samples (an HTTP API
    # does not trace), so no traces.
    traced = str(profile.get("Tracing", "Active")) == "Active"
    n.traces_month = n.lambda_invocations * TRACED_SHARE * XRAY_SAMPLED if traced else 0.0
    n.hourly_rru, n.hourly_wru = hourly_r, hourly_w
    n.peak_rru_s, n.peak_wru_s = max(hourly_r), max(hourly_w)

    _size_redis(n, inputs, dau, redis_cmds_s, ecpu_s, redis_bytes_day)
    n.storage_gb = _storage_gb(per_day)
    n.storage_overhead_gb = _storage_overhead_gb(per_day)
    _size_postgres(n, dau, pg_reads, pg_writes, profile_pg_event, last_seen_in_redis)
    _size_websocket(n, m, per_day, dau, connects)
    return n


def _size_redis(
    n: Needs, inputs: Inputs, dau: int, redis_cmds_s: float, ecpu_s: float,
    redis_bytes_day: float,
) -> None:  # fmt: skip
    """The cache's memory, commands and ECPUs at the peak: its caches and its shards."""
    b = inputs.m["redis_bytes"]
    per_user = (FOLLOWING_PER_USER * b["following_field"] + LIKES_KEPT * b["liked_field"]
                + 3 * b["profile"])  # fmt: skip
    timelines = 800 * b["timeline_entry"] * MAU_PER_DAU
    n.redis_gb = dau * (per_user + timelines) / 1e9
    n.redis_peak_ops = redis_cmds_s
    n.redis_peak_ecpu_s = ecpu_s
    n.redis_bytes_month = redis_bytes_day * MONTH_DAYS
    spike = EVENT_PEAK / PEAK
    n.caches = max(1, math.ceil(max(n.redis_gb / ELASTICACHE_MAX_GB,
                                    ecpu_s * spike / ELASTICACHE_MAX_ECPU_S)))  # fmt: skip
    for node_type in NODE_TYPES:
        per_node = node_ops(inputs, node_type)
        n.node_shards[node_type] = (
            max(1, math.ceil(redis_cmds_s / (per_node * SHARD_TARGET))),
            max(1, math.ceil(redis_cmds_s * spike / (per_node * SHARD_EVENT_TARGET))),
            max(1, math.ceil(n.redis_gb / NODE_GB[node_type])),
        )
    daily, event, memory = n.node_shards["cache.r7g.4xlarge"]
    n.redis_shards_daily = max(daily, memory)
    n.redis_shards_event = max(event, memory)
    n.redis_shards = max(n.redis_shards_daily, n.redis_shards_event)


ITEMS_PER = {"tweet": 1, "like": 3, "follow": 4, "notification": 2}  # items of BYTES_PER_ITEM


def _storage_gb(per_day: dict[str, float], item_bytes: dict[str, float] | None = None) -> float:
    """The tables' stored bytes: a retention's likes, follows and tweets, a month of
    notifications (``item_bytes``: what each stores, BYTES_PER_ITEM by default)."""
    size = item_bytes or BYTES_PER_ITEM
    stored = sum(per_day[k] * size[k] for k in ("like", "follow")) + per_day["post"] * size["tweet"]
    notifications_bytes = (per_day["like"] + per_day["follow"] + 0.3 * per_day["post"]) * (
        size["notification"]
    )
    return (stored * MONTH_DAYS * RETENTION_MONTHS + notifications_bytes * 30) / 1e9


def _storage_overhead_gb(per_day: dict[str, float]) -> float:
    """The part of ``_storage_gb`` that is DynamoDB's 100 bytes an item (stored and backed up)."""
    return _storage_gb(per_day, {k: DDB_ITEM_OVERHEAD * v for k, v in ITEMS_PER.items()})


def _size_postgres(
    n: Needs, dau: int, pg_reads: float, pg_writes: float, profile_pg_event: float,
    last_seen_in_redis: bool,
) -> None:  # fmt: skip
    # PostgreSQL: the session's last_seen_at, one UPDATE per active minute (today), or flushed
    # from Redis in batches of 1,000 rows, once per session per flush (item 5).
    active_sessions_peak = dau * ACTIVE_MINUTES / (24 * 60) * PEAK
    n.last_seen_peak = dau * ACTIVE_MINUTES / DAY * PEAK
    n.aurora_acu_per_minute_updates = (pg_writes + pg_reads + n.last_seen_peak) / PG_QPS_PER_ACU
    if last_seen_in_redis:
        rows = active_sessions_peak / LAST_SEEN_FLUSH_SECONDS
        last_seen_acu = rows / PG_ROW_UPDATES_PER_ACU
        last_seen_statements = rows / 1000
        # one ZADD a session-minute (the gate's note), one ZPOPMIN a thousand (the flush)
        n.redis_peak_ops += n.last_seen_peak + rows / 1000
        n.redis_peak_ecpu_s += n.last_seen_peak + rows / 1000 * 30
        n.redis_ecpu_month += (n.last_seen_peak + rows / 1000 * 30) / PEAK * DAY * MONTH_DAYS
    else:
        last_seen_acu = n.last_seen_peak / PG_QPS_PER_ACU
        last_seen_statements = n.last_seen_peak
    n.pg_peak_writes = pg_writes + last_seen_statements
    n.pg_peak_reads = pg_reads
    n.pg_peak_qps = n.pg_peak_writes + n.pg_peak_reads
    n.aurora_acu = max(0.5, (pg_writes + pg_reads) / PG_QPS_PER_ACU + last_seen_acu)
    # the sustained event: every query EVENT_PEAK / PEAK times, the profile misses as computed
    n.aurora_acu_event = max(
        0.5, n.aurora_acu * EVENT_PEAK / PEAK + profile_pg_event / PG_QPS_PER_ACU
    )
    written_rows = pg_writes + (
        active_sessions_peak / LAST_SEEN_FLUSH_SECONDS if last_seen_in_redis else n.last_seen_peak
    )
    n.aurora_io_month = (
        (written_rows * AURORA_IO_PER_WRITE + pg_reads * AURORA_IO_PER_READ) / PEAK * DAY * 30
    )


def _size_websocket(
    n: Needs, m: dict[str, Any], per_day: dict[str, float], dau: int, connects: float
) -> None:
    # WebSocket: inbound messages (DMs, pings, heartbeats), outbound (acks, pongs, heartbeat
    # answers, pushes).
    beats = per_day["ws_heartbeat"]
    n.ws_messages_month = (
        per_day["dm"] * 2 + per_day["ws_ping"] * 2 + beats * 2 + dau * PUSHES_PER_DAY
    ) * MONTH_DAYS
    n.ws_minutes_month = dau * CONNECTED_MINUTES * MONTH_DAYS
    n.ws_peak_messages_s = n.ws_messages_month / MONTH_DAYS / DAY * PEAK
    n.ws_busiest_route_peak = max(per_day["dm"], per_day["ws_ping"], beats) / DAY * PEAK
    n.ws_peak_connects_s = connects / DAY * PEAK

    # Bytes: responses to the internet; the @connections posts through the NAT gateway.
    egress = 0.0
    for route, mix in ROUTE_MIX.items():
        if route in m["routes"]:
            egress += per_day[mix] * float(m["routes"][route].get("response_bytes", 0.0))
            if not route.startswith("WS"):
                n.http_egress_gb += (
                    per_day[mix]
                    * float(m["routes"][route].get("response_bytes", 0.0))
                    * MONTH_DAYS
                    / 1e9
                )
    # messages (a MOCK route's too), $connect, $disconnect
    received = per_day["dm"] + per_day["ws_ping"] + beats + connects * 2
    n.ws_access_log_gb = received * WS_ACCESS_LOG_BYTES * MONTH_DAYS / 1e9
    push = m["routes"].get("WS ping", {}).get("push_bytes", 400.0) or 400.0
    # @connections posts (through the NAT gateway); a heartbeat's answer is API Gateway's own
    pushes_day = per_day["dm"] + per_day["ws_ping"] + dau * PUSHES_PER_DAY
    egress += (pushes_day + beats) * 200  # a frame on the client's socket
    n.egress_gb = egress * MONTH_DAYS / 1e9
    n.nat_gb = pushes_day * (push + 300) * MONTH_DAYS / 1e9  # request + TLS and the response
    n.pushes_peak_s = pushes_day / DAY * PEAK


LAST_SEEN_FLUSH_SECONDS = 300  # item 5: each active session's last_seen_at flushed every 5 min


# ---- what it costs ----------------------------------------------------------------------------
def _lambda_logs(gb: float) -> float:
    tiers = PRICES["logs_lambda_gb"]
    return _tiered(gb, [(10_000, tiers[0]), (20_000, tiers[1]), (20_000, tiers[2]),
                        (math.inf, tiers[3])])  # fmt: skip


def _lambda_compute(gb_s: float) -> float:
    p = PRICES
    return _tiered(gb_s, [(7.5e9, p["lambda_gb_s_arm"]), (11.25e9, p["lambda_gb_s_arm_tier2"]),
                          (math.inf, p["lambda_gb_s_arm_tier3"])])  # fmt: skip


def serverless_cache(n: Needs, minimum_ecpu_s: float = 0.0) -> float:
    """Serverless caches' month: the GB-hours stored (100 MB a cache at least) and the ECPUs,
    each hour at least ``minimum_ecpu_s`` (the caches' minimum, billed whether used or not)."""
    p = PRICES
    gb = max(n.redis_gb, n.caches * p["valkey_serverless_min_gb"])
    ecpus = n.redis_ecpu_month
    if minimum_ecpu_s:
        mean = n.redis_ecpu_month / (MONTH_DAYS * DAY)
        ecpus = sum(max(mean * load, minimum_ecpu_s) * 3600 * MONTH_DAYS for load in DAILY_CURVE)
    return (
        gb * HOURS * p["valkey_serverless_gb_hour"]
        + ecpus / 1e6 * p["valkey_serverless_ecpu_per_m"]
    )


CACHE_PRICING = ("on-demand", "reserved-1y")  # a ScaleProfile's CachePricing


def node_hour(node_type: str, pricing: str = "on-demand") -> float:
    """A node's hour: on-demand, or a one-year reservation's effective hour."""
    hour = PRICES[f"valkey_{node_type.removeprefix('cache.').replace('.', '_')}_hour"]
    return hour * (RESERVED_1Y_FACTOR if pricing == "reserved-1y" else 1.0)


def node_cache(
    n: Needs, shards: int | None = None, node_type: str = "cache.r7g.4xlarge",
    pricing: str = "on-demand",
) -> float:  # fmt: skip
    """Node-based shards, one replica each: ``shards`` of them, or as many r7g.4xlarge as hold
    both peaks (n.redis_shards)."""
    count = n.redis_shards if shards is None else shards
    return count * (1 + REPLICAS_PER_SHARD) * node_hour(node_type, pricing) * HOURS


def shards_needed(n: Needs, node_type: str) -> int:
    """``node_type`` shards holding both peaks and the memory (n.redis_shards when the needs
    were not sized per node type)."""
    if node_type in n.node_shards:
        return max(n.node_shards[node_type])
    return n.redis_shards


@dataclass(frozen=True)
class CacheOption:
    """One way of holding the cache at a size, and its month."""

    name: str
    kind: str  # "nodes" or "serverless"
    month: float
    node_type: str = ""
    pricing: str = ""
    shards: int = 0  # all clusters' shards
    bound: str = ""  # what sets the shards: "memory", "daily peak" or "event"
    caches: int = 0  # serverless caches

    @property
    def nodes(self) -> int:
        return self.shards * (1 + REPLICAS_PER_SHARD)

    @property
    def clusters(self) -> int:
        return -(-self.nodes // CLUSTER_MAX_NODES)


def cache_options(n: Needs) -> list[CacheOption]:
    """Every node type on-demand and reserved for a year (shards holding the daily peak half
    busy, the event 90% busy, and the memory), and serverless caches by use, with a minimum
    ECPU/s at the daily peak (the event's rise then one doubling away) and at the event (held
    from its first second)."""
    out = []
    for node_type in NODE_TYPES:
        daily, event, memory = n.node_shards.get(node_type, (n.redis_shards,) * 3)
        shards = max(daily, event, memory)
        bound = "memory" if shards == memory else "daily peak" if shards == daily else "event"
        for pricing in CACHE_PRICING:
            out.append(CacheOption(f"{node_type.removeprefix('cache.')} {pricing}", "nodes",
                                   node_cache(n, shards, node_type, pricing), node_type,
                                   pricing, shards, bound))  # fmt: skip
    out.append(CacheOption("serverless, by use", "serverless", serverless_cache(n),
                           caches=n.caches))  # fmt: skip
    out.append(CacheOption("serverless, minimum ECPU/s at the daily peak", "serverless",
                           serverless_cache(n, n.redis_peak_ecpu_s), caches=n.caches))  # fmt: skip
    event = n.redis_peak_ecpu_s * EVENT_PEAK / PEAK
    out.append(CacheOption(EVENT_READY, "serverless", serverless_cache(n, event),
                           caches=n.caches))  # fmt: skip
    return out


EVENT_READY = "serverless, minimum ECPU/s at the event"


TIE_SHARE = 0.02  # options within 2% of the cheapest: the one with the fewest nodes wins


def best_cache(n: Needs) -> CacheOption:
    """The cheapest way that holds both peaks at once from its first second (a serverless cache
    with a lower minimum grows behind a surge: left out), node count breaking near-ties (fewer
    connections, fewer nodes a request touches)."""
    able = [o for o in cache_options(n) if o.kind == "nodes" or o.name == EVENT_READY]
    cheapest = min(o.month for o in able)
    near = [o for o in able if o.month <= cheapest * (1 + TIE_SHARE)]
    return min(near, key=lambda o: (o.nodes if o.kind == "nodes" else 0, o.month))


@dataclass(frozen=True)
class CacheDeployment:
    """The cache a ScaleProfile deploys (template.yaml: CacheKind and its settings): nodes are
    ``clusters`` replication groups (CacheClusters) of ``shards`` shards each, one keyspace,
    billed on-demand or under one-year reservations (CachePricing: bought, not deployed)."""

    kind: str  # "serverless" or "nodes"
    shards: int = 0
    node_type: str = ""
    max_gb: float = ELASTICACHE_MAX_GB
    max_ecpu_s: float = ELASTICACHE_MAX_ECPU_S
    clusters: int = 1
    pricing: str = "on-demand"

    @property
    def all_shards(self) -> int:
        return self.shards * self.clusters

    def describe(self) -> str:
        if self.kind == "nodes":
            per_shard = 1 + REPLICAS_PER_SHARD
            nodes = self.all_shards * per_shard
            groups = f"{self.clusters} clusters x " if self.clusters > 1 else ""
            return (f"{groups}{self.shards} shards x {per_shard} {self.node_type} ({nodes} nodes,"
                    f" {self.pricing})")  # fmt: skip
        return f"serverless (at most {self.max_gb:,.0f} GB, {self.max_ecpu_s / 1e6:g}M ECPU/s)"


def cache_deployment(dau: int, profiles: dict[str, dict[str, Any]]) -> CacheDeployment:
    """What the template deploys as the cache at ``dau``'s ScaleProfile (serverless without one)."""
    profile = profiles.get(PROFILES.get(dau, ""), {})
    if str(profile.get("CacheKind", "serverless")) == "nodes":
        return CacheDeployment(
            "nodes",
            int(profile["CacheShards"]),
            str(profile["CacheNodeType"]),
            clusters=int(profile.get("CacheClusters", 1)),
            pricing=str(profile.get("CachePricing", "on-demand")),
        )
    return CacheDeployment(
        "serverless",
        max_gb=float(profile.get("CacheMaxDataStorageGB", ELASTICACHE_MAX_GB)),
        max_ecpu_s=float(profile.get("CacheMaxEcpuPerSecond", ELASTICACHE_MAX_ECPU_S)),
    )


def deployed_cache(n: Needs, profiles: dict[str, dict[str, Any]]) -> float:
    """The month of the cache the profile deploys: a serverless cache bills the GB stored and
    the ECPUs used; nodes bill their hours, whatever the load (reserved: the year's effective
    hour)."""
    deployed = cache_deployment(n.dau, profiles)
    if deployed.kind == "nodes":
        return node_cache(n, deployed.all_shards, deployed.node_type, deployed.pricing)
    return serverless_cache(n)


def aurora_instances(dau: int, profiles: dict[str, dict[str, Any]]) -> int:
    """Instances the profile deploys: the writer, and a reader in promotion tier 0 (it scales
    with the writer, so it costs what the writer costs) when the profile has one."""
    profile = profiles.get(PROFILES.get(dau, ""), {})
    return 2 if str(profile.get("DatabaseReader", "false")) == "true" else 1


def cost(n: Needs, profiles: dict[str, dict[str, Any]] | None = None) -> dict[str, float]:
    p = PRICES
    profiles = profiles or {}
    instances = aurora_instances(n.dau, profiles)
    acu = min(n.aurora_acu, AURORA_MAX_ACU)  # past it the writer cannot serve: see hot spots
    monthly_acu = acu / PEAK * 1.3  # Serverless v2 follows the load: mean + scaling headroom
    return {
        "API Gateway HTTP requests": _tiered(
            n.http_requests_month / 1e6,
            [(300, p["http_api_per_m"]), (math.inf, p["http_api_per_m_over_300m"])],
        ),
        "API Gateway WebSocket": _tiered(
            n.ws_messages_month / 1e6,
            [(1000, p["ws_message_per_m"]), (math.inf, p["ws_message_per_m_over_1b"])],
        )
        + n.ws_minutes_month / 1e6 * p["ws_connection_minute_per_m"],
        "Lambda requests": n.lambda_invocations / 1e6 * p["lambda_request_per_m"],
        "Lambda compute (GB-s)": _lambda_compute(n.lambda_gb_s),
        "CloudWatch Logs (Lambda, tiered)": _lambda_logs(n.lambda_log_gb),
        "CloudWatch Logs (HTTP API access log)": n.access_log_gb * p["logs_ingest_gb"],
        "CloudWatch Logs (WebSocket access log)": n.ws_access_log_gb * p["logs_ingest_gb"],
        "CloudWatch Logs storage": (n.lambda_log_gb + n.access_log_gb + n.ws_access_log_gb)
        * LOG_COMPRESSION
        * p["logs_storage_gb_month"],
        KMS_ITEM: p["kms_key_month"] + kms_requests(n) / 1e4 * p["kms_request_per_10k"],
        "X-Ray traces": n.traces_month / 1e6 * p["xray_trace_per_m"],
        "DynamoDB reads (on-demand)": n.rru_month / 1e6 * p["ddb_read_per_m"],
        "DynamoDB writes (on-demand)": n.wru_month / 1e6 * p["ddb_write_per_m"],
        "DynamoDB storage": n.storage_gb * p["ddb_storage_gb_month"],
        "DynamoDB point-in-time backups": n.storage_gb * p["ddb_pitr_gb_month"],
        "ElastiCache for Valkey (the profile's cache)": deployed_cache(n, profiles),
        "Aurora Serverless v2 (ACU)": monthly_acu * instances * HOURS * p["aurora_acu_hour"],
        "Aurora I/O and storage": n.aurora_io_month / 1e6 * p["aurora_io_per_m"]
        + n.dau * AURORA_GB * p["aurora_storage_gb_month"],
        "RDS Proxy": max(8.0, monthly_acu * instances) * HOURS * p["rds_proxy_acu_hour"],
        "NAT gateway": NAT_GATEWAYS * HOURS * p["nat_hour"]
        + n.nat_gb * p["nat_gb"]
        + NAT_GATEWAYS
        * nat_ips(profiles.get(PROFILES.get(n.dau, ""), {}))
        * HOURS
        * p["public_ipv4_hour"],
        "Internet egress": _tiered(
            n.egress_gb,
            [
                (10_000, p["egress_gb"][0]),
                (40_000, p["egress_gb"][1]),
                (100_000, p["egress_gb"][2]),
                (math.inf, p["egress_gb"][3]),
            ],
        ),
        "Cross-AZ (Lambda <-> cache)": n.redis_bytes_month
        * AZ_CROSS_SHARE
        / 1e9
        * p["cross_az_gb"],
    }


def kms_requests(n: Needs) -> float:
    """The stack's key's requests a month: CloudWatch Logs' data keys for the environments' log
    streams (a new stream each cold start)."""
    return n.cold_starts_month + n.environment_hours_month * KMS_REQUESTS_PER_ENVIRONMENT_HOUR


def dynamodb_options(n: Needs) -> dict[str, float]:
    """The month's reads and writes on-demand, provisioned (auto scaling at 70% of the daily
    curve's hourly load) and provisioned with the night's floor reserved for a year."""
    p = PRICES
    target = 0.7
    on_demand = n.rru_month / 1e6 * p["ddb_read_per_m"] + n.wru_month / 1e6 * p["ddb_write_per_m"]
    provisioned = 0.0
    for r, w in zip(n.hourly_rru, n.hourly_wru, strict=True):
        provisioned += (r / target * p["ddb_rcu_hour"] + w / target * p["ddb_wcu_hour"]) * 30
    floor_r = min(n.hourly_rru) / target
    floor_w = min(n.hourly_wru) / target
    reserved_hourly = (
        floor_r / 100 * (p["ddb_reserved_rcu100_hour_1y"] + p["ddb_reserved_rcu100_upfront_1y"]
                         / (365 * 24))
        + floor_w / 100 * (p["ddb_reserved_wcu100_hour_1y"] + p["ddb_reserved_wcu100_upfront_1y"]
                           / (365 * 24))
    )  # fmt: skip
    above = 0.0
    for r, w in zip(n.hourly_rru, n.hourly_wru, strict=True):
        above += ((r / target - floor_r) * p["ddb_rcu_hour"]
                  + (w / target - floor_w) * p["ddb_wcu_hour"]) * 30  # fmt: skip
    return {
        "on-demand": on_demand,
        "provisioned (auto scaling, 70% target)": provisioned,
        "provisioned, night floor reserved 1 year": reserved_hourly * HOURS + above,
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


def clone_followers_per_tweet(inputs: Inputs | None = None) -> float:
    """Followers a tweet is written to in the clone's design: all of them (it merges nothing on
    read), on the same graph as Warble's (the sweep's mean following: every follow is a
    follower); FOLLOWERS_PER_TWEET without the sweep."""
    graph = _graph(inputs) if inputs else None
    return float(graph["mean_following"]) if graph else float(FOLLOWERS_PER_TWEET)


def clone_cost(dau: int, inputs: Inputs | None = None) -> dict[str, float]:
    """The clone's month at Warble's traffic, graph and images: every operation a GraphQL
    request, a tweet written to each follower's timeline, the same pushes and connection
    minutes on AppSync's real-time, the same images (media_cost). Per request, so the event
    adds requests, not capacity (DynamoDB on-demand and AppSync scale with them)."""
    p = PRICES
    followers = clone_followers_per_tweet(inputs)
    per_day = {k: v * dau for k, v in TRAFFIC.items() if k in CLONE_RRU}
    month = {k: v * MONTH_DAYS for k, v in per_day.items()}
    operations = sum(month.values())
    rru = sum(month[k] * CLONE_RRU[k] for k in month)
    fanout_writes = month["post"] * followers + month["follow"] * CLONE_BACKFILL
    wru = sum(month[k] * CLONE_WRU.get(k, 0.0) for k in month) + fanout_writes
    timeline_gb = (
        per_day["post"] * followers * CLONE_TIMELINE_ITEM * MONTH_DAYS * RETENTION_MONTHS / 1e9
    )
    other_gb = sum(per_day[k] * BYTES_PER_ITEM[k] for k in ("like", "follow")) * 360 / 1e9
    stream_lambda = (month["post"] + month["follow"]) / 10  # batches of ~10 records
    lambda_gb_s = stream_lambda * (followers / 25 * 0.008 + 0.02) * 1.0  # 1 GB
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
        "DynamoDB writes (with the fan-out's timeline items)": wru / 1e6 * p["ddb_write_per_m"],
        "DynamoDB storage": (timeline_gb + other_gb) * p["ddb_storage_gb_month"],
        "CloudWatch Logs ingestion": _lambda_logs(stream_lambda * PLATFORM_LOG_BYTES / 1e9),
        "Images (as Warble's: S3, CloudFront, the resizing function)": sum(
            media_cost(dau).values()
        ),
    }


# ---- hot spots ---------------------------------------------------------------------------------
TOP_ACCOUNT_FOLLOWERS_SHARE = 0.3  # the most followed account: a third of the daily users
HOT_TWEET_LIKE_SHARE = 0.01  # a viral tweet: 1% of all likes in its peak hour
TOP_ACCOUNT_FOLLOW_SHARE = 0.05  # share of all new follows going to the top account
HOT_KEY_LIMIT = 50_000  # ops/s: a key above it is listed (issue 30)
LIKERS_SHARDS = 8  # warble.dal.likes.LIKERS_SHARDS: a tweet's likers partitions
# warble.domain.graph.service.GraphPolicy: a big account's followers partitions (a unit test ties
# these to the code's).
FOLLOWERS_SPREAD_FROM = 100_000
FOLLOWERS_PER_SHARD = 4_000_000
MAX_FOLLOWER_SHARDS = 16
# Read units a follow takes on the followee's own partition: its O#<follower> edge read strongly
# consistent (the pair), its META's follower_shards eventually consistent (the follow).
FOLLOW_READ_UNITS = 1.0 + 0.5


def follower_shards(followers: float) -> int:
    """``GraphPolicy.follower_shards``: the partitions an account's followers go to."""
    if followers < FOLLOWERS_SPREAD_FROM:
        return 1
    wanted = max(2, math.ceil(followers / FOLLOWERS_PER_SHARD))
    return min(MAX_FOLLOWER_SHARDS, 1 << (wanted - 1).bit_length())


def hot_partitions(dau: int) -> list[tuple[str, float, float, str]]:
    """DynamoDB partitions and items one key receives everything of (what, units/s at the daily
    peak, limit, the change past it or the one made). Every like and follow is a
    TransactWriteItems: its items cost twice, and a list partition's sort key only grows (the
    newest item is always the last split), so splitting for heat does not spread it: a tweet's
    likers are spread over LIKERS_SHARDS partitions and the tweet's id item is read before the
    transaction instead of checked in it (warble.dal.likes); a big account's followers over
    ``follower_shards`` partitions by its followers count (warble.dal.graph)."""
    peak = {k: v * dau / DAY * PEAK for k, v in TRAFFIC.items()}
    likes = peak["like"] * HOT_TWEET_LIKE_SHARE
    follows = peak["follow"] * TOP_ACCOUNT_FOLLOW_SHARE
    top = TOP_ACCOUNT_FOLLOWERS_SHARE * dau
    spread = follower_shards(top)
    return [
        (f"likes of one viral tweet: each of its {LIKERS_SHARDS} likers partitions"
         " T#<tweet>#<k> (one LU#<seq> item a like, in a transaction, k a hash of the seq),"
         " write units/s", likes * 2 / LIKERS_SHARDS, QUOTAS["ddb_partition_wcu"],
         f"done (dal/likes.py): {_units(likes * 2)} units/s on one partition before, 4 shards"
         f" until issue 41; the likers page merges the {LIKERS_SHARDS} shards' Queries and the"
         " unsharded T#<tweet> of older likes"),
        ("likes of one viral tweet: the strongly consistent read of its tweet-index item"
         " T#<tweet> before each like's transaction (one item: it cannot split), read units/s",
         likes * 1, QUOTAS["ddb_partition_rcu"],
         f"done (dal/likes.py): the ConditionCheck's {_units(likes * 2)} write units/s"
         " before; a like that lands after the delete's purge is unliked by the likes stream's"
         " cleanup"),
        (f"follows of the top account ({_units(top)} followers): each of its {spread} followers"
         " partitions U#<id>[#<k>] (I# and IT# items, in a transaction, k a hash of the"
         " follower), write units/s", follows * 2 * 2 / spread, QUOTAS["ddb_partition_wcu"],
         f"done (dal/graph.py): {_units(follows * 4)} units/s on one partition before; the"
         f" followers page merges the {spread} shards' Queries, the fan-out walks them"),
        ("follows of the top account: reads of its own partition U#<id> before each follow's"
         " transaction (its O#<follower> edge, strongly consistent, and META's follower_shards),"
         " read units/s", follows * FOLLOW_READ_UNITS, QUOTAS["ddb_partition_rcu"],
         "done (dal/graph.py): the spread's cost; its items and their sort keys are the"
         " followers', so split for heat spreads them"),
    ]  # fmt: skip


def _units(value: float) -> str:
    return f"{value:,.0f}"


def _share_of_top(inputs: Inputs) -> float:
    graph = (inputs.celebrities or {}).get("graph") or {}
    return float(graph.get("top_share", TOP_ACCOUNT_FOLLOWERS_SHARE))


def hot_keys(inputs: Inputs, dau: int, n: Needs) -> list[dict[str, Any]]:
    """Every Redis key above HOT_KEY_LIMIT commands/s at the daily peak: before (the sweep's
    commands per request on that key x the request rate x the share of readers that touch it)
    and after the fix (warble.dal.hot: each warm container reads the key at most once per
    HOT_KEY_CACHE_SECONDS, so the key sees at most the reading functions' concurrency a
    second), with its share of one shard (the single-key throughput measured for its command).
    Without the sweep, the touches are the code's, read by hand (marked)."""
    sweep = inputs.celebrities or {}
    touches = sweep.get("touches") or DEFAULT_TOUCHES
    share = _share_of_top(inputs)
    peak = {k: v * dau / DAY * PEAK for k, v in TRAFFIC.items()}
    rates = {"home warm": peak["home"], "unread warm": peak["unread"],
             "profile": peak["profile"], "tweet": peak["tweet"]}  # fmt: skip
    concurrency = n.concurrency_by_function
    readers = {"home warm": "TweetsFunction", "unread warm": "NotificationsFunction",
               "profile": "AccountsFunction", "tweet": "TweetsFunction"}  # fmt: skip
    single = (inputs.throughput or {}).get("single_key_ops_per_s") or {}
    out = []
    for key, (who, command) in HOT_KEY_CLASSES.items():
        before = 0.0
        after = 0.0
        for path, per_request in touches.items():
            t = float(per_request.get(key, 0.0))
            if not t or path not in rates:
                continue
            reach = 1.0 if who == "everyone" else share
            before += rates[path] * reach * t
            # held: one whole-set read (ZRANGE) a window per warm container that reads it; a
            # celebrity's set, once per resync (the log keeps it in between)
            window = RESYNC_SECONDS if key in LOGGED else HOT_KEY_CACHE_SECONDS
            held = concurrency.get(readers[path], 0.0) / window
            after += (
                min(rates[path] * reach * t, held)
                if key in HELD_IN_FUNCTION
                else (rates[path] * reach * t)
            )
        capacity = float(single.get(command, shard_ops(inputs)))
        # held: the refresh reads the whole set (ZRANGE), measured on one hot key too
        held_capacity = (
            float(single.get("zrange", capacity)) if key in HELD_IN_FUNCTION else capacity
        )
        out.append(
            {
                "key": key,
                "who": who,
                "command": command,
                "before": before,
                "after": after,
                "capacity": capacity,
                "share_before": before / capacity,
                "share_after": after / held_capacity,
                "fix": (
                    "held in the function, kept by the celebrities' log (warble.dal.hot)"
                    if key in LOGGED
                    else "held 1 s in the function (warble.dal.hot)"
                )
                if key in HELD_IN_FUNCTION
                else "none needed: under half a shard as it is",
            }
        )
    return sorted(out, key=lambda k: -k["before"])


# Shared keys a request touches, by class: whose readers, and the command that reads them.
HOT_KEY_CLASSES = {
    "{sys}:notifications": ("everyone", "zlexcount"),
    "{cel}:recent:<top celebrity>": ("followers of the top account", "zrevrangebylex"),
    "{tw:<its newest tweet>}": ("followers of the top account", "get"),
    "{tw:<its newest tweet>}:counts": ("followers of the top account", "get"),
    "{u:<top celebrity>}:profile": ("followers of the top account", "get"),
    "{u:<top celebrity>}:counts": ("followers of the top account", "get"),
}
# The keys warble.dal.hot holds in the function (HOT_KEY_CACHE_MS); the others are read as before.
HELD_IN_FUNCTION = {"{sys}:notifications", "{cel}:recent:<top celebrity>"}
LOGGED = {"{cel}:recent:<top celebrity>"}  # held until the resync, their changes from the log
# Read from the code when the sweep has not been run: the unread count reads the system list
# twice (EXISTS, ZLEXCOUNT) and each followed celebrity's recent set twice; a home read reads
# each followed celebrity's set twice (EXISTS, ZREVRANGEBYLEX) and renders its newest tweet.
DEFAULT_TOUCHES = {
    "unread warm": {"{sys}:notifications": 2.0, "{cel}:recent:<top celebrity>": 2.0},
    "home warm": {"{cel}:recent:<top celebrity>": 2.0, "{tw:<its newest tweet>}": 1.0,
                  "{tw:<its newest tweet>}:counts": 1.0, "{u:<top celebrity>}:profile": 1.0,
                  "{u:<top celebrity>}:counts": 1.0},
}  # fmt: skip


@dataclass(frozen=True)
class Check:
    """One limit against its need at the daily peak and at the sustained event (the burst's
    checks: at its second). ``limit`` is the quota, the profile's setting or the hard limit;
    ``most`` False when the need must be at least the limit (a fan-out's followers)."""

    kind: str  # store, quota, scaling rate, partition, cache node, profile setting
    what: str
    limit: float
    daily: float
    event: float
    then: str = ""  # past the limit: what raises it, or what absorbs the excess

    @property
    def margin(self) -> float:
        """Headroom left at the larger need, as a share of that need (negative: short)."""
        need = max(self.daily, self.event)
        return self.limit / need - 1 if need else math.inf

    @property
    def holds(self) -> bool:
        return max(self.daily, self.event) <= self.limit


def api_gateway_rps(n: Needs) -> float:
    """The account's API Gateway requests/s at the daily peak: every HTTP request, every
    WebSocket message in, and every @connections callback out (the pongs, acks and pushes), one
    quota shared by them all."""
    return n.peak_rps + n.ws_peak_messages_s


COLD_CACHE_WINDOW_S = 60.0  # the cold-cache surge is checked over its first minute


def cold_cache_pg_qps(
    n: Needs, emptied: float = 1.0, seconds: float = COLD_CACHE_WINDOW_S
) -> float:
    """PostgreSQL reads/s over the first ``seconds`` after ``emptied`` of the profile cache's
    keyspace is lost at the daily peak (a cluster of CacheClusters lost, or CacheClusters changed:
    most slots move and their keys stay behind): each account's first view there reads its row,
    and the later ones hit, so the misses are those of a cache whose entries are at most
    ``seconds`` old (``profile_miss_share`` with that TTL). warble.dal.cache's lease does not
    coalesce the concurrent misses of one account (a reader finding the lease held reads the
    database too); they are a fill's few milliseconds of views: not counted."""
    views = TRAFFIC["profile"] * n.dau / DAY * PEAK
    surge = profile_miss_share(n.dau, views, seconds) - n.profile_miss
    return n.pg_peak_reads + views * emptied * max(0.0, surge)


def cache_move_share(clusters: int) -> float:
    """The share of the slots whose cache changes when ``clusters`` caches become one more
    (warble.dal.redis: slot ``s`` is on cache ``s % N``), counted: about N / (N + 1)."""
    slots = 16384
    return sum(s % clusters != s % (clusters + 1) for s in range(slots)) / slots


def cache_move_minutes() -> float:
    """How long a cache's move takes (warble.settings: REDIS_MOVE_MINUTES' default)."""
    from warble.settings import Settings

    return float(Settings.__dataclass_fields__["redis_move_minutes"].default)


def checks(inputs: Inputs, n: Needs, profile: dict[str, Any]) -> list[Check]:
    """Every limit at one size: the account's quotas, Lambda's fixed scaling rate, the stores,
    the hot partitions and keys, the cache's nodes and the profile's own settings."""
    return (
        _quota_checks(n, profile)
        + _id_checks(inputs, n)
        + _store_checks(n, profile)
        + _cache_checks(inputs, n, profile)
        + _connection_checks(inputs, n, profile)
        + _setting_checks(n, profile)
    )


def _quota_checks(n: Needs, profile: dict[str, Any]) -> list[Check]:
    """The account's quotas and Lambda's fixed scaling rate."""
    spike = EVENT_PEAK / PEAK
    out: list[Check] = []
    gateway = api_gateway_rps(n)
    out.append(
        Check(
            "quota",
            "API Gateway requests/s (account: HTTP + WebSocket messages + @connections callbacks)",
            QUOTAS["http_api_rps"],
            gateway,
            max(gateway * spike, gateway + n.post_burst_rps),
            f"raise to {_si(max(gateway * spike, gateway + n.post_burst_rps))}/s",
        )
    )
    out.append(
        Check(
            "quota",
            "Lambda concurrent executions (account)",
            QUOTAS["lambda_concurrency"],
            n.peak_concurrency,
            n.peak_concurrency * spike + n.post_burst_environments,
            f"raise to {_si(n.peak_concurrency * spike + n.post_burst_environments)}",
        )
    )
    busiest, concurrency = max(n.concurrency_by_function.items(), key=lambda kv: kv[1],
                               default=("", 0.0))  # fmt: skip
    out.append(
        Check(
            "scaling rate",
            f"new environments per 10 s, {busiest} (fixed: 1,000 a"
            " function; daily: its peak in 10 minutes; event: the sustained event's"
            " extra in one minute)",
            QUOTAS["lambda_scaling_per_10s"],
            concurrency / 60,
            concurrency * (spike - 1) / 6,
            "fixed: provisioned concurrency for the difference",
        )
    )
    absorbed = QUOTAS["lambda_scaling_per_10s"] / max(n.post_duration_s, 1e-9)
    admitted = post_admitted(profile)
    posts_event = n.post_burst_rps / EVENT_BURST * EVENT_PEAK
    taken = min(n.post_burst_rps, admitted)  # the burst's second: what the route lets through
    drain_s = max(1.0, n.post_burst_rps / max(taken, 1e-9))
    out.append(
        Check(
            "scaling rate",
            f"new TweetsFunction environments in the posts' one-second burst ({EVENT_BURST:g}x"
            " the mean, on top of the event's posts; fixed: 1,000 a function per 10 s)",
            QUOTAS["lambda_scaling_per_10s"],
            0.0,
            max(0.0, taken - posts_event) * n.post_duration_s,
            f"the route admits {_si(admitted)} a second (PostThrottleRate + PostThrottleBurst),"
            " the rest answered 429 by API Gateway; lower the route's throttle to"
            f" {_si(posts_event + absorbed)} a second (the event's posts and what 1,000 new"
            " environments take)"
            if admitted > posts_event + absorbed
            else f"the route's throttle admits {_si(admitted)} a second and answers the rest 429;"
            " the clients retry with the same Idempotency-Key (web/src/api.js) and drain the"
            f" burst's {_si(n.post_burst_rps)} posts in {drain_s:.0f} s",
        )
    )
    out.append(
        Check(
            "quota",
            "WebSocket new connections/s (account)",
            QUOTAS["ws_new_connections_s"],
            n.ws_peak_connects_s,
            n.ws_peak_connects_s * spike,
            f"raise to {_si(n.ws_peak_connects_s * spike)}/s (a deploy reconnects"
            " everyone at once: clients back off with jitter)",
        )
    )
    out.append(
        Check(
            "quota",
            "DynamoDB write units/s per table (on-demand; the likes table: 60% of writes)",
            QUOTAS["ddb_table_units_s"],
            n.peak_wru_s * 0.6,
            n.peak_wru_s * 0.6 * spike,
            f"raise to {_si(n.peak_wru_s * 0.6 * spike)}/s",
        )
    )
    return out


def post_admitted(profile: dict[str, Any]) -> float:
    """POST /v1/tweets' route throttle (PostThrottleRate, PostThrottleBurst; else the API's
    default), as a token bucket in one second: a full bucket (the burst) and a second's refill."""
    rate = profile.get("PostThrottleRate", profile.get("HttpThrottleRate"))
    burst = profile.get("PostThrottleBurst", profile.get("HttpThrottleBurst"))
    if rate is None or burst is None:
        return math.inf  # no throttle: the route takes the whole burst
    return float(rate) + float(burst)


# The share of the worker ids held at which a cold start's claim stays cheap: random conditional
# writes land with odds of one less this (two writes on average at a half), and all of a claim's
# tries miss (a Scan of every lease follows) with odds of this to the tries (once in 256).
ID_OCCUPANCY = 0.5


def _id_checks(inputs: Inputs, n: Needs) -> list[Check]:
    """Snowflake worker ids: one leased by each environment of a function that mints ids, for
    as long as it is warm (at least its concurrency), out of the id layout's space (from
    ``warble.ids.WIDE_FROM_MS``) held no fuller than ``ID_OCCUPANCY``."""
    from warble.ids import CLAIM_TRIES, WORKER_BITS

    spike = EVENT_PEAK / PEAK
    leased = sum(n.concurrency_by_function.get(name, 0.0) for name in inputs.minters)
    return [
        Check(
            "id space",
            f"Snowflake worker ids ({WORKER_BITS} bits, at most {ID_OCCUPANCY:.0%} held: a cold"
            f" start's claim then costs {1 / (1 - ID_OCCUPANCY):.0f} writes on average and a"
            f" Scan of the leases once in {ID_OCCUPANCY**-CLAIM_TRIES:,.0f}) against the"
            f" environments that mint ids ({len(inputs.minters)} functions; at least their"
            " concurrency)",
            (1 << WORKER_BITS) * ID_OCCUPANCY,
            leased,
            leased * spike + n.post_burst_environments,
            "more tries a claim (a write each), or a worker bit more (32 ids a millisecond an"
            " environment), switched at a time every holder agrees on (warble.ids.WIDE_FROM_MS)",
        )
    ]


def _store_checks(n: Needs, profile: dict[str, Any]) -> list[Check]:
    """The hot partitions, Aurora (its capacity, a cold cache's surge, its storage), the NAT."""
    spike = EVENT_PEAK / PEAK
    out: list[Check] = []
    for what, load, limit, then in hot_partitions(n.dau):
        out.append(Check("partition", what, limit, load, load * spike, then))
    aurora = float(profile.get("DatabaseMaxCapacity", AURORA_MAX_ACU))
    out.append(
        Check(
            "store",
            "Aurora ACU (the profile's DatabaseMaxCapacity; 256 hard)",
            min(aurora, AURORA_MAX_ACU),
            n.aurora_acu,
            n.aurora_acu_event,
            "raise DatabaseMaxCapacity (256 at most: then readers for reads)",
        )
    )
    clusters = int(profile.get("CacheClusters", 1))
    moved, minutes = cache_move_share(clusters), cache_move_minutes()
    grown = moved * COLD_CACHE_WINDOW_S / (minutes * 60)
    cases = [
        (grown, f"CacheClusters grown to {clusters + 1}: the {moved:.0%} of slots that change"
                f" cache moved in stages over {minutes:.0f} minutes, {grown:.1%} of the keys a"
                " minute"),
        (1 / clusters if clusters > 1 else 1.0,
         "one cluster lost" if clusters > 1 else "the cluster lost"),
    ]  # fmt: skip
    for emptied, why in cases:
        # The writer's whole load (writes and last-seen flushes too) and the surge's reads.
        surge = (cold_cache_pg_qps(n, emptied) - n.pg_peak_reads) / PG_QPS_PER_ACU
        out.append(
            Check(
                "store",
                f"Aurora ACU in the first minute after the profile cache is emptied ({why}:"
                f" {emptied:.0%} of its keys)",
                min(aurora, AURORA_MAX_ACU),
                n.aurora_acu + surge,
                n.aurora_acu_event + surge * spike,
                "a longer move (REDIS_MOVE_MINUTES), or readers for reads",
            )
        )
    aurora_gb = n.dau * AURORA_GB
    out.append(
        Check(
            "store",
            "Aurora storage, GB (128 TiB a cluster, hard)",
            AURORA_MAX_GB,
            aurora_gb,
            aurora_gb,
            "split the users over clusters, or keep less a user",
        )
    )
    nat_gbps = n.nat_gb / MONTH_DAYS / DAY * PEAK * 8  # the pushes' bytes at the daily peak
    out.append(
        Check(
            "store",
            f"NAT gateway, Gbps ({NAT_GATEWAYS} gateways, one in each zone: the @connections"
            " pushes)",
            NAT_GATEWAY_GBPS * NAT_GATEWAYS,
            nat_gbps,
            nat_gbps * spike,
            "a NAT gateway per zone",
        )
    )
    packets = n.pushes_peak_s * PACKETS_PER_POST
    out.append(Check("store", f"NAT gateway, packets/s (the pushes, {PACKETS_PER_POST:g} a post)",
                     NAT_PACKETS_S * NAT_GATEWAYS, packets, packets * spike,
                     "a NAT gateway per zone, the functions' pushes spread over them"))  # fmt: skip
    connections = nat_connections(n)
    out.append(
        Check(
            "store",
            f"NAT gateway, simultaneous connections to the @connections endpoint"
            f" ({NAT_CONNECTIONS_PER_DESTINATION:,} per destination and address,"
            f" {nat_ips(profile)} on each of {NAT_GATEWAYS} gateways; each"
            f" pushing environment's pool, up to {WS_POOL_CONNECTIONS})",
            NAT_CONNECTIONS_PER_DESTINATION * nat_ips(profile) * NAT_GATEWAYS,
            connections,
            connections * spike,
            "more addresses on the gateways (the profile's NatGatewayIps: secondary addresses),"
            " or the pushes out of the VPC (a queue drained by a function without one)",
        )
    )
    return out


def nat_connections(n: Needs) -> float:
    """Connections the pushing environments keep open through the NAT gateway at the daily
    peak: a stream reader has an environment per lane of every shard it reads, the others their
    concurrency; each keeps as many as its concurrent posts (one at least, 16 at most)."""
    lanes: dict[str, float] = {}
    for reader, count in n.stream_shards.items():
        function = reader.partition(" <- ")[0]
        lanes[function] = lanes.get(function, 0.0) + count
    total = 0.0
    for function in PUSHING_FUNCTIONS:
        environments = max(n.concurrency_by_function.get(function, 0.0), lanes.get(function, 0.0))
        per = min(WS_POOL_CONNECTIONS, max(1.0, n.posts_per_invocation.get(function, 1.0)))
        total += environments * per
    return total


def _cache_checks(inputs: Inputs, n: Needs, profile: dict[str, Any]) -> list[Check]:
    """The hottest key's share of its shard, and the deployed cache's nodes."""
    spike = EVENT_PEAK / PEAK
    out: list[Check] = []
    hot = hot_keys(inputs, n.dau, n)
    if hot:
        top = max(hot, key=lambda k: k["share_after"])
        out.append(
            Check(
                "cache node",
                f"the hottest key, `{top['key']}`, share of one shard",
                1.0,
                top["share_after"],
                top["share_after"] * spike,
                "hold it in the function (warble.dal.hot)",
            )
        )
    deployed = cache_deployment(n.dau, {PROFILES.get(n.dau, ""): profile})
    if deployed.kind == "nodes":
        per_node = node_ops(inputs, deployed.node_type)
        out.append(Check("cache node", f"cache commands/s ({deployed.all_shards:,} shards of"
                         f" {deployed.node_type}: half busy daily, 90% at the event)",
                         float(deployed.all_shards), n.redis_peak_ops / (per_node * SHARD_TARGET),
                         n.redis_peak_ops * spike / (per_node * SHARD_EVENT_TARGET),
                         "more CacheShards or CacheClusters"))  # fmt: skip
        per_cluster = deployed.shards * (1 + REPLICAS_PER_SHARD)
        out.append(
            Check(
                "quota",
                f"ElastiCache nodes per cluster ({CLUSTER_MAX_NODES} at most)",
                QUOTAS["elasticache_nodes_per_cluster"],
                per_cluster,
                per_cluster,
                f"raise to {per_cluster:,}"
                if per_cluster <= CLUSTER_MAX_NODES
                else "more CacheClusters",
            )
        )
        nodes = deployed.all_shards * (1 + REPLICAS_PER_SHARD)
        out.append(
            Check(
                "quota",
                "ElastiCache nodes per Region",
                QUOTAS["elasticache_nodes_per_region"],
                nodes,
                nodes,
                f"raise to {nodes:,}",
            )
        )
    return out


# ---- the cache nodes a request touches, and the connections (issue 41) ------------------------
LAMBDA_FILE_DESCRIPTORS = 1024  # a Lambda environment's open files and sockets (fixed)
# Kept for the rest: the runtime's own, the DynamoDB, PostgreSQL and S3 connections, the
# @connections pool (up to 16), the files a request opens.
LAMBDA_FDS_KEPT = 100
NODE_MAX_CLIENTS = 65_000  # an ElastiCache node's client connections (maxclients, fixed)
# A home read's or an unread poll's own part, whatever the reader follows: its tag (timeline,
# read position, celebrity list, session, blocks, mutes, likes), the celebrities' tag and the
# system list (tests/integration/test_read_nodes.py counts them).
READER_SLOTS = 3
PAGE_TWEETS = 20
# A page's render: each tweet's tag (its copy and counts) and its author's profile; authors
# repeat on a page (the load test's pages: about 15 authors for 20 tweets).
PAGE_RENDER_KEYS = PAGE_TWEETS + 15


def distinct_nodes(primaries: int, keys_: float) -> float:
    """The expected primaries that ``keys_`` keys of random slots land on."""
    if primaries <= 1:
        return float(min(primaries, 1))
    return primaries * (1 - (1 - 1 / primaries) ** keys_)


@dataclass(frozen=True)
class Connections:
    """What the profile's cache is to its clients at one size: the primaries a client connects
    to, the nodes a warm home read and an unread poll touch, the connections one function
    environment holds and one node serves at the event, and the celebrities' slot's load."""

    primaries: int  # a serverless cache: its one endpoint (its proxies spread the clients)
    home_nodes: float
    unread_nodes: int
    per_environment: int
    per_node_event: float
    celebrity_slot_event: float
    slot_capacity: float


def connections(inputs: Inputs, n: Needs, profile: dict[str, Any]) -> Connections:
    """Every environment keeps one connection to each primary it has used (redis-py's cluster
    client: a pool per node, one connection while a request runs); a page's render lands on
    random slots, so over its life an environment uses every primary, and every node has a
    client from every warm environment; the held keys' reader (warble.dal.hot, READONLY) adds
    one to each of the two replicas it reads (the celebrities' and the system list's). The
    celebrities' slot takes, on its shard's replica, from every warm reading container, the log's
    pipeline once a window and the sets it misses (held until the resync); on its primary, the
    celebrities' tweets (a push and its log entry each), beside the shard's share of the rest."""
    deployed = cache_deployment(n.dau, {PROFILES.get(n.dau, ""): profile})
    primaries = deployed.all_shards if deployed.kind == "nodes" else 1
    spike = EVENT_PEAK / PEAK
    environments = n.peak_concurrency * spike + n.post_burst_environments
    hold_s = float(profile.get("HotKeyCacheMs", 0) or 0) / 1000
    readers = {"GET /v1/timeline/home": "TweetsFunction",
               "GET /v1/notifications/unread-counts": "NotificationsFunction"}  # fmt: skip
    fol = n.following
    odds = list(fol.odds) if fol else []
    slot = 0.0
    for route, rate in container_rates(inputs).items():
        busy = n.concurrency_by_function.get(readers.get(route, ""), 0.0) * spike
        if hold_s > 0:
            misses = rate * sum(odds) * held_miss_rate(odds, rate, RESYNC_SECONDS)
            slot += busy * (LOG_COMMANDS / hold_s + misses)
        else:  # unheld: every read of a followed celebrity's set, two commands
            slot += busy * rate * 2 * sum(odds)
    # (the celebrities' tweets, a push and a log entry each, are the primary's: a few a second)
    reader_nodes = min(primaries, READER_SLOTS)
    return Connections(
        primaries=primaries,
        home_nodes=min(
            float(primaries), reader_nodes + distinct_nodes(primaries, PAGE_RENDER_KEYS)
        ),
        unread_nodes=reader_nodes,
        per_environment=primaries + (2 if hold_s > 0 and deployed.kind == "nodes" else 0),
        per_node_event=environments if deployed.kind == "nodes" else 0.0,
        celebrity_slot_event=slot,
        slot_capacity=node_ops(inputs, deployed.node_type or "cache.r7g.4xlarge"),
    )


def _connection_checks(inputs: Inputs, n: Needs, profile: dict[str, Any]) -> list[Check]:
    """The connections an environment holds (Lambda's file descriptors, fixed), the clients of a
    node at the event (ElastiCache's maxclients, fixed; half of it, for a failover's reconnects),
    and the celebrities' slot's commands against one node."""
    c = connections(inputs, n, profile)
    out = [
        Check("cache node", "cache connections one function environment holds (one per"
              f" primary; Lambda's {LAMBDA_FILE_DESCRIPTORS:,} file descriptors,"
              f" {LAMBDA_FDS_KEPT} kept for the rest)",
              LAMBDA_FILE_DESCRIPTORS - LAMBDA_FDS_KEPT, c.per_environment, c.per_environment,
              "fewer, larger shards (or a connection cap that closes the least used)"),
        Check("cache node", "the celebrities' slot `{cel}`: commands/s on its shard's replica"
              " (every reading container's log pipeline a window, its missed sets: READONLY)"
              " against one node, 90% busy", c.slot_capacity * SHARD_EVENT_TARGET,
              c.celebrity_slot_event / (EVENT_PEAK / PEAK), c.celebrity_slot_event,
              "a second replica for the shard, or a longer HotKeyCacheMs"),
    ]  # fmt: skip
    if c.per_node_event:
        out.append(Check("cache node", "clients of one cache node (every warm function"
                         f" environment; {NODE_MAX_CLIENTS:,} a node, half of them)",
                         NODE_MAX_CLIENTS / 2, c.per_node_event / (EVENT_PEAK / PEAK),
                         c.per_node_event, "reads from replicas (READONLY) halve a primary's"
                         " readers"))  # fmt: skip
    return out


def _setting_checks(n: Needs, profile: dict[str, Any]) -> list[Check]:
    """The profile's own settings (the rows the others do not cover)."""
    spike = EVENT_PEAK / PEAK
    out: list[Check] = []
    for name, need, value, _ in profile_check(n, profile):
        if name.startswith(("cache shards", "Aurora")):  # the rows above
            continue
        kind = "profile setting" if not name.startswith("cache") else "cache node"
        if name.startswith("CelebrityFollowers"):
            seconds = n.largest_fanout[1]
            out.append(
                Check(
                    "store",
                    f"the largest fan-out on write ({n.largest_fanout[0]:,.0f} followers), seconds",
                    FANOUT_BUDGET_S,
                    seconds,
                    seconds,
                    "a lower CelebrityFollowers or more fan-out memory",
                )
            )
            continue
        if name.startswith("POST /v1/tweets"):  # a most: the setting is the need
            out.append(Check(kind, name, need, value, value, f"lower to {_si(need)}"))
            continue
        daily = need / spike if "burst" not in name and "GB" not in name else need
        out.append(Check(kind, name, value, daily, need, f"raise to {_si(need)}"))
    return out


def _si(value: float) -> str:
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{value / size:,.1f}{unit}"
    return f"{value:,.1f}"


def profile_check(n: Needs, profile: dict[str, Any]) -> list[tuple[str, float, float, bool]]:
    """(setting, the scale's need at the event peak, the profile's value, enough). The cache's
    rows are its kind's: a serverless cache's ECPU/s and GB ceilings (one cache), or a node-based
    clusters' shards (each at most SHARD_TARGET busy) and memory."""
    spike = EVENT_PEAK / PEAK
    rows = []

    def row(name: str, need: float, key: str) -> None:
        if key in profile:
            value = float(profile[key])
            rows.append((name, need, value, value >= need))

    row("HTTP API route rate limit (req/s) vs the busiest route", n.busiest_route_peak_rps * spike,
        "HttpThrottleRate")  # fmt: skip
    if "PostThrottleRate" in profile:
        # A most, not a least: what Lambda's scaling rate lets new environments serve on top of
        # the event's posts (the rest of the burst is answered 429 and retried).
        most = n.post_burst_rps / EVENT_BURST * EVENT_PEAK + QUOTAS["lambda_scaling_per_10s"] / max(
            n.post_duration_s, 1e-9
        )
        admitted = post_admitted(profile)
        name = ("POST /v1/tweets' route rate + burst (at most: the event's posts and what 1,000"
                " new environments take)")  # fmt: skip
        rows.append((name, most, admitted, admitted <= most))
    row("WebSocket route rate limit (messages/s) vs the busiest route (heartbeat)",
        n.ws_busiest_route_peak * spike, "WebSocketThrottleRate")  # fmt: skip

    row("Aurora max ACU (one writer: 256 at most)", n.aurora_acu_event, "DatabaseMaxCapacity")
    if "CelebrityFollowers" in profile:
        # a most, not a least: the largest account fanned out on write within FANOUT_BUDGET_S,
        # at the fan-out function's share of a vCPU
        most = FANOUT_BUDGET_S / arm_cpu_s(FANOUT_S_PER_FOLLOWER, n.fanout_memory_mb)
        value = float(profile["CelebrityFollowers"])
        name = (f"CelebrityFollowers (fanned out on write below it) vs the most a fan-out reaches"
                f" in {FANOUT_BUDGET_S:g} s (at most)")  # fmt: skip
        rows.append((name, most, value, value <= most))
    deployed = cache_deployment(n.dau, {PROFILES.get(n.dau, ""): profile})
    if deployed.kind == "nodes":
        need = shards_needed(n, deployed.node_type)
        rows.append((f"cache shards ({deployed.node_type}; half busy daily, 90% at the event)",
                     float(need), float(deployed.all_shards),
                     deployed.all_shards >= need))  # fmt: skip
        memory = deployed.all_shards * NODE_GB[deployed.node_type]
        rows.append(("cache GB (75% of the primaries' memory)", n.redis_gb, memory,
                     memory >= n.redis_gb))  # fmt: skip
    else:
        row("cache ECPU/s maximum (one serverless cache)", n.redis_peak_ecpu_s * spike,
            "CacheMaxEcpuPerSecond")  # fmt: skip
        row("cache GB maximum (one serverless cache)", n.redis_gb, "CacheMaxDataStorageGB")
    return rows


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
    # S3 Standard, by the month's GB: first 50 TB, next 450 TB, beyond (the bucket's class:
    # template.yaml sets no lifecycle rule or other class)
    "s3_tiers": ((51_200, 0.023), (460_800, 0.022), (float("inf"), 0.021)),
    # Intelligent-Tiering (not deployed: priced beside): an object moves to Infrequent Access
    # after 30 days unread and to Archive Instant Access after 90; objects under 128 KB stay in
    # the frequent tier and are not monitored; monitoring per 1,000 objects a month.
    "s3_it_frequent": 0.023,
    "s3_it_infrequent": 0.0125,
    "s3_it_archive_instant": 0.004,
    "s3_it_monitoring_per_k": 0.0025,
    "s3_put_per_k": 0.005,
    "s3_get_per_k": 0.0004,
    "cf_request_per_10k": 0.01,  # HTTPS requests, North America / Europe
    # CloudFront egress tiers (GB, $ per GB), North America / Europe, on-demand.
    "cf_tiers": ((10_240, 0.085), (40_960, 0.080), (102_400, 0.060), (358_400, 0.040),
                 (524_288, 0.030), (4_194_304, 0.025), (float("inf"), 0.020)),
}  # fmt: skip


def _cf_egress_cost(gb: float) -> float:
    return _tiered(gb, list(MEDIA_PRICES["cf_tiers"]))  # type: ignore[arg-type]


def _s3_standard_cost(gb: float) -> float:
    return _tiered(gb, list(MEDIA_PRICES["s3_tiers"]))  # type: ignore[arg-type]


def s3_intelligent_tiering_cost(dau: int) -> float:
    """The images' month on Intelligent-Tiering: a retention's uploads evenly spread in age, each
    original moving down as it ages unread (full-size opens come in a tweet's first days); the
    previews (under 128 KB) stay frequent, unmonitored."""
    p = MEDIA_PRICES
    n = media_needs(dau)
    months = RETENTION_MONTHS
    originals_gb = n["stored_gb"] * ORIGINAL_MB / (ORIGINAL_MB + PREVIEW_MB)
    previews_gb = n["stored_gb"] - originals_gb
    shares = ((1 / months, "s3_it_frequent"), (2 / months, "s3_it_infrequent"),
              ((months - 3) / months, "s3_it_archive_instant"))  # fmt: skip
    storage = sum(originals_gb * share * float(p[key]) for share, key in shares)  # type: ignore[arg-type]
    monitored = n["images_uploaded"] * months  # the originals stored
    return (
        storage
        + previews_gb * float(p["s3_it_frequent"])  # type: ignore[arg-type]
        + monitored / 1000 * float(p["s3_it_monitoring_per_k"])  # type: ignore[arg-type]
    )


# A CloudFront + WAF front for the HTTP API (an HTTP API takes no WAF web ACL: WAF attaches to a
# CloudFront distribution or a REST API). Not deployed; priced beside the total.
WAF_RULES = 5  # assumed: AWS's common rule set, known bad inputs, IP reputation, a rate rule, one


def waf_front_cost(n: Needs) -> dict[str, float]:
    """What a CloudFront distribution with a WAF web ACL in front of the HTTP API adds a month:
    its requests, WAF's, and the answers' bytes on CloudFront's tiers (after the images') instead
    of the internet egress they pay now (AWS origins to CloudFront: free)."""
    p = PRICES
    requests_m = n.http_requests_month / 1e6
    media_gb = media_needs(n.dau)["cdn_egress_gb"]
    cf_egress = _cf_egress_cost(media_gb + n.http_egress_gb) - _cf_egress_cost(media_gb)
    tiers = [(10_000, p["egress_gb"][0]), (40_000, p["egress_gb"][1]),
             (100_000, p["egress_gb"][2]), (math.inf, p["egress_gb"][3])]  # fmt: skip
    internet = _tiered(n.egress_gb, tiers) - _tiered(n.egress_gb - n.http_egress_gb, tiers)
    return {
        "CloudFront requests (the API's)": requests_m * 100 * p["cloudfront_https_per_10k"],
        "WAF requests": requests_m * p["waf_request_per_m"],
        "WAF web ACL and rules": p["waf_web_acl_month"] + WAF_RULES * p["waf_rule_month"],
        "the answers on CloudFront, less their internet egress": cf_egress - internet,
    }


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
        "S3 storage (12 months of images)": _s3_standard_cost(n["stored_gb"]),
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
