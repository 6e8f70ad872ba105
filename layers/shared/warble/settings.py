"""Typed settings, parsed once from the environment on first use.

Domain code never reads ``os.environ``: it receives values from here. Nothing is parsed at import
time, so tests set the environment before the first call and need no module reloads.

A frozen dataclass read from the environment as pydantic-settings reads it (a field from the
variable of its name, or of its ``env`` name, in any case), converted as pydantic converts a
scalar from text (``int``, ``float``, ``bool``'s words), with its bounds (``ge``, ``le``)
checked. Not a pydantic model: a stream consumer imports pydantic for nothing else, and that
import and the model's build were about a quarter of an ``import boto3`` of its cold start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any

# pydantic's words for a bool given as text.
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


class SettingsError(ValueError):
    """A setting the environment (or an override) gives that its field cannot take."""


def _convert(name: str, kind: str, value: Any) -> Any:
    if kind == "str":
        if not isinstance(value, str):
            raise SettingsError(f"{name}: expected text, got {value!r}")
        return value
    if kind == "bool":
        if isinstance(value, bool):
            return value
        word = str(value).strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise SettingsError(f"{name}: expected a boolean, got {value!r}")
    if isinstance(value, bool):
        raise SettingsError(f"{name}: expected a number, got {value!r}")
    try:
        if kind == "int":
            if isinstance(value, float):
                if not value.is_integer():
                    raise ValueError
                return int(value)
            return int(str(value).strip())
        return float(str(value).strip()) if isinstance(value, str) else float(value)
    except ValueError:
        raise SettingsError(f"{name}: expected {kind}, got {value!r}") from None


@dataclass(frozen=True)
class Settings:
    @classmethod
    def from_environment(cls, **overrides: Any) -> Settings:
        """The settings the environment gives, with ``overrides`` (field names) on top."""
        environment = {name.lower(): value for name, value in os.environ.items()}
        values: dict[str, Any] = {}
        for spec in fields(cls):
            found = overrides.get(spec.name)
            if spec.name not in overrides:
                found = environment.get(spec.metadata.get("env", spec.name).lower())
                if found is None:
                    continue
            value = _convert(spec.name, str(spec.type), found)
            if "ge" in spec.metadata and value < spec.metadata["ge"]:
                raise SettingsError(f"{spec.name}: must be at least {spec.metadata['ge']}")
            if "le" in spec.metadata and value > spec.metadata["le"]:
                raise SettingsError(f"{spec.name}: must be at most {spec.metadata['le']}")
            values[spec.name] = value
        unknown = set(overrides) - set(values)
        if unknown:
            raise SettingsError(f"no such settings: {', '.join(sorted(unknown))}")
        return cls(**values)

    # PostgreSQL (Aurora behind RDS Proxy on AWS). A function connects as its own database role
    # (DB_USER) with an IAM token (DB_IAM_AUTH: rds-db:connect, no secret to read); only the
    # migrations read a secret (DB_SECRET_ARN, the master's) and set the roles' passwords from
    # theirs (DB_ROLE_SECRETS, comma-separated ARNs). DB_SSLROOTCERT: the CAs verify-full trusts.
    db_secret_arn: str = ""
    db_host: str = "127.0.0.1"
    db_port: int = 5432
    db_name: str = "warble"
    db_user: str = "postgres"
    db_password: str = ""
    db_iam_auth: bool = False
    db_sslmode: str = "prefer"
    db_sslrootcert: str = ""
    db_role_secrets: str = ""

    # Redis / Valkey. On AWS this is a cluster-mode cache over TLS, serverless or node-based
    # (REDIS_SERVERLESS, by the ScaleProfile), whose one user (REDIS_IAM_USER, of cache or
    # replication group REDIS_CACHE_NAME) signs in with an IAM token. REDIS_CA_CERTS: the CAs a
    # rediss:// connection trusts (default: the system's).
    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_cluster: bool = False
    redis_iam_user: str = ""
    redis_cache_name: str = ""
    redis_serverless: bool = True
    redis_ca_certs: str = ""
    # More caches, one keyspace (warble.dal.redis: each takes every N-th cluster slot): their
    # URLs and cache names, comma-separated in the same order; empty entries are skipped.
    redis_more_urls: str = ""
    redis_more_cache_names: str = ""
    # A cache added to the keyspace (warble.dal.redis, CacheMove): the slots that change cache
    # move a stage at a time over REDIS_MOVE_MINUTES from REDIS_MOVE_START (Unix seconds), the
    # not yet moved ones staying where REDIS_MOVE_FROM caches put them. 0: no move.
    redis_move_from: int = 0
    redis_move_start: float = 0.0
    redis_move_minutes: float = 30.0

    aws_region: str = field(default="us-east-1", metadata={"env": "AWS_REGION"})
    connections_table: str = "warble-local-connections"
    # Follow graph (warble.dal.graph), stream-maintained counters (warble.domain.counters) and the
    # precomputed second-degree sets (warble.domain.graph).
    graph_table: str = "warble-local-graph"
    counters_table: str = "warble-local-counters"
    degrees_table: str = "warble-local-degrees"
    tweets_table: str = "warble-local-tweets"
    tweet_index_table: str = "warble-local-tweet-index"
    likes_table: str = "warble-local-likes"
    # Discover (warble.domain.discover): durable locations and swipes, and the match records
    # (streamed). The seen filter: first layer's capacity and the total false-hide rate.
    discover_table: str = "warble-local-discover"
    matches_table: str = "warble-local-matches"
    seen_filter_capacity: int = 1000
    seen_filter_error: float = 0.01
    # Direct messages (warble.dal.conversations).
    conversations_table: str = "warble-local-conversations"
    messages_table: str = "warble-local-messages"
    # Search and hashtags (warble.domain.search, warble.domain.hashtags): each tag's timeline.
    hashtags_table: str = "warble-local-hashtags"
    # Snowflake worker-id leases (warble.dal.worker_lease): which container holds which id.
    worker_leases_table: str = "warble-local-worker-leases"
    # Account deletion (warble.domain.deletion): its workflow's queue, and how much one
    # invocation does (a slice: at most this many things, or this long).
    account_deletion_queue_url: str = ""
    # Password resets (warble.domain.passwords): the queue between the request (answered 202 at
    # once) and the lookup and the email (PasswordResetFunction).
    password_reset_queue_url: str = ""
    deletion_slice_items: int = 2000
    deletion_slice_seconds: float = 20.0
    tweet_cache_ttl_seconds: int = 86_400
    # Home timelines (warble.dal.timelines): seed 001's 800, 30 days of inactivity, and the
    # follower count above which an author is not fanned out but merged in at read time.
    timeline_cap: int = 800
    timeline_ttl_seconds: int = 30 * 86_400
    celebrity_followers: int = 10_000
    # Hot keys (the system list, authors' recent tweets) held in the function this long
    # (warble.dal.hot); 0 reads them every time. The template's ScaleProfile sets it.
    hot_key_cache_ms: int = field(default=0, metadata={"ge": 0})
    author_recent_cap: int = 100
    follow_backfill: int = 100
    websocket_callback_url: str = ""

    password_hash_rounds: int = field(default=12, metadata={"ge": 4, "le": 31})
    session_ttl_days: int = 30
    profile_cache_ttl_seconds: int = 3600
    session_cache_ttl_seconds: int = 300
    # Failed logins (warble.dal.account_state.LoginThrottle), per login_window_seconds: from one
    # client address, and from addresses the account never logged in from, all told (issue 47
    # item 3: an address's failures lock that address out, not the owner).
    login_max_failures: int = 5
    login_max_account_failures: int = 50
    # Password resets (warble.domain.passwords): the address reset emails come from (template
    # EmailSenderIdentity: SES must have verified it), and the web client whose reset page the
    # email links to (WEB_CLIENT_URL, no trailing slash; locally `make run`'s web client).
    email_sender: str = "no-reply@warble.example"
    web_client_url: str = "http://127.0.0.1:3002"
    login_window_seconds: int = 900
    # Request budgets (API.md 429 rate_limited), Mastodon's numbers: every authenticated request
    # spends its user's budget, signup and login their client address's (see
    # warble.domain.rate_limits). Locally infra/local/env.json raises them; so do the tests.
    rate_limit_user_requests: int = field(default=300, metadata={"ge": 1})
    rate_limit_user_window_seconds: int = field(default=300, metadata={"ge": 1})
    rate_limit_signup_ip_requests: int = field(default=5, metadata={"ge": 1})
    rate_limit_signup_ip_window_seconds: int = field(default=1800, metadata={"ge": 1})
    rate_limit_login_ip_requests: int = field(default=25, metadata={"ge": 1})
    rate_limit_login_ip_window_seconds: int = field(default=300, metadata={"ge": 1})
    # Tokens whose session had to be looked up in PostgreSQL and was not found (forged, or long
    # gone), per client address: past the budget such a lookup is refused with 429 before it
    # costs a query (warble.domain.accounts).
    rate_limit_auth_failures_ip_requests: int = field(default=30, metadata={"ge": 1})
    rate_limit_auth_failures_ip_window_seconds: int = field(default=300, metadata={"ge": 1})
    # Location updates per user (PUT /v1/users/me/location), beside the request budget: a
    # phone moving reports far less often; a script walking the map is refused.
    rate_limit_location_requests: int = field(default=30, metadata={"ge": 1})
    rate_limit_location_window_seconds: int = field(default=300, metadata={"ge": 1})
    # New reports per user (POST /v1/reports; API.md: 20 an hour), beside the request budget.
    rate_limit_report_requests: int = field(default=20, metadata={"ge": 1})
    rate_limit_report_window_seconds: int = field(default=3600, metadata={"ge": 1})
    # How long a closed case (its snapshot and reports) is kept before the daily purge.
    report_case_retention_days: int = field(default=90, metadata={"ge": 1})
    max_body_bytes: int = 64 * 1024
    # API.md: a repeated POST with the same Idempotency-Key within 24 h gets the first answer.
    idempotency_ttl_seconds: int = 24 * 3600
    # How long a key stays taken by a request that never finished (its container died).
    idempotency_pending_seconds: int = 60
    websocket_connection_ttl_seconds: int = 2 * 3600 + 600
    follow_limit: int = 1000
    # An account with at least this many followers is "big": the first page of its follower
    # and following lists is cached in Redis (seed 002).
    big_account_followers: int = 10_000
    counts_cache_ttl_seconds: int = 300
    # Who a user follows, and their recent likes and retweets, in Redis (warble.dal.memberships):
    # rebuilt from DynamoDB on the first read after this long, at most ``recent_actions`` likes
    # and tweets read per rebuild (older likes and retweets are looked up in the tables).
    membership_ttl_seconds: int = 86_400
    recent_actions: int = 1000
    first_page_cache_ttl_seconds: int = 300
    # Dedupe claims of applied stream records outlive the stream's 24 h retention.
    counter_claim_ttl_seconds: int = 2 * 86400
    # Sub-items a hot counter is spread over (warble.dal.counters): 8 take 4,000 transactional
    # writes a second, five times the seeds' viral tweet at its peak (docs/capacity.md).
    counter_hot_sub_items: int = 8
    # Reconciliation re-checks a drifted counter after this long before repairing it, so that a
    # stream record still in flight is not mistaken for drift (stream lag is normally < 1 s).
    reconcile_settle_seconds: float = 5.0
    # How hard a run leans on the stores (warble.domain.counters.reconcile.Pace): counters per
    # page, the pause between pages (the serving path's turn; locally moto is one lock), the
    # checking time of one invocation (the rest stays marked for the next), the sweep's share.
    reconcile_page: int = 100
    reconcile_pause_seconds: float = 0.05
    reconcile_budget_seconds: float = 600.0
    reconcile_sweep: int = 2000
    # The share of a run's time spent checking (the rest paused): the ScaleProfile's
    # ReconcileDuty, 0.25 in dev, where the local runtime's moto serves one call at a time.
    reconcile_duty: float = 1.0
    # The share of the counters a stream batch touches that the consumer marks for it (the
    # ScaleProfile's ReconcileMarkShare): all in dev; past what a run checks, a uniform sample.
    # A chunk the consumer fails to apply is marked whole whatever the share.
    reconcile_mark_share: float = 1.0
    # Notifications (warble.domain.notifications): their table, how long one lives (DynamoDB
    # TTL), how many a recipient gets stored per window (hot recipients), how many unread ids a
    # type keeps (its count saturates there), and the admins who may post system notifications.
    notifications_table: str = "warble-local-notifications"
    notification_ttl_days: int = 30
    notification_recipient_cap: int = 600
    notification_cap_window_seconds: int = 60
    notification_unread_cap: int = 10_000
    admin_usernames: str = ""
    # Media (warble.domain.media): the items' table, the files' bucket and the CDN in front of
    # it (MEDIA_URL, no trailing slash), how long an upload form works and how long a Media may
    # wait for a tweet (the table's TTL and the bucket's lifecycle rule say the same).
    media_table: str = "warble-local-media"
    media_bucket: str = "warble-local-media"
    media_url: str = "http://127.0.0.1:3004"
    media_upload_seconds: int = 900
    media_unattached_seconds: int = 86_400


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings.from_environment()
