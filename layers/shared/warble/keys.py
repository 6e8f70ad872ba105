"""Every Redis key Warble uses, in one screen.

Keys that a single operation touches together (Lua, MULTI, multi-key DEL) share a hash tag, the
part in braces, so they live in one slot of a Redis Cluster.

| key                              | type   | TTL                       | what                  |
|----------------------------------|--------|---------------------------|-----------------------|
| {u:<user_id>}:profile            | string | PROFILE_CACHE_TTL_SECONDS | cached profile (JSON) |
| {u:<user_id>}:profile:lease      | string | LEASE_MS                  | fill lease            |
| {u:<user_id>}:counts             | string | COUNTS_CACHE_TTL_SECONDS  | follow counts (JSON)  |
| {u:<user_id>}:counts:lease       | string | LEASE_MS                  | fill lease            |
| {u:<user_id>}:followers:first    | string | FIRST_PAGE_CACHE_TTL_SEC. | big account's first   |
| {u:<user_id>}:following:first    | string | FIRST_PAGE_CACHE_TTL_SEC. | list page (JSON)      |
| {u:<user_id>}:<list>:first:lease | string | LEASE_MS                  | fill lease            |
| {tw:<tweet_id>}                  | string | TWEET_CACHE_TTL_SECONDS   | stored tweet (JSON)   |
| {tw:<tweet_id>}:lease            | string | LEASE_MS                  | fill lease            |
| {tw:<tweet_id>}:counts           | string | COUNTS_CACHE_TTL_SECONDS  | like/retweet/reply    |
| {tw:<tweet_id>}:counts:lease     | string | LEASE_MS                  | fill lease            |
| {h:<user_id>}:home               | zset   | HOME_TIMELINE_TTL (30 d)  | home timeline         |
| {h:<user_id>}:celebs             | string | 60 s                      | followed celebrities  |
| {a:<author_id>}:recent           | zset   | none (capped)             | author's newest ids   |
| {t:<token sha256>}:session       | string | SESSION_CACHE_TTL_SECONDS | cached session (JSON) |
| {t:<token sha256>}:session:lease | string | LEASE_MS                  | fill lease            |
| {s:<session_id>}:revoked         | string | AUTH_CACHE_TTL + 60 s     | revocation marker     |
| {s:<session_id>}:seen            | string | 60 s                      | last_seen_at throttle |
| {login:<lower login>}:failures   | string | LOGIN_WINDOW_SECONDS      | failed logins         |
| {u:<user_id>}:dm_unread         | hash   | none (rebuilt if missing) | unread DMs per conv.  |
| {idem:<user_id>}:<sha256 of key> | string | 24 h (pending: 60 s)      | a POST's first answer |
| {snowflake}:worker:<n>           | string | WORKER_LEASE_MS           | worker-id lease       |
| {snowflake}:worker:<n>:last      | string | 1 day                     | last window of id n   |
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

LEASE_MS = 10_000
WORKER_LEASE_MS = 60_000
SEEN_THROTTLE_SECONDS = 60


@dataclass(frozen=True)
class CacheKey:
    """A cached value and the lease key that guards its fill (same hash tag)."""

    value: str
    lease: str


def profile(user_id: int) -> CacheKey:
    base = f"{{u:{user_id}}}:profile"
    return CacheKey(base, f"{base}:lease")


def counts(user_id: int) -> CacheKey:
    """followers_count / following_count / tweet_count; dropped by whoever changes one."""
    base = f"{{u:{user_id}}}:counts"
    return CacheKey(base, f"{base}:lease")


def first_page(user_id: int, which: str) -> CacheKey:
    """The first entries of a big account's "followers" or "following" list."""
    base = f"{{u:{user_id}}}:{which}:first"
    return CacheKey(base, f"{base}:lease")


def tweet(tweet_id: int) -> CacheKey:
    """A stored tweet, or a tombstone once deleted (so no late fill can bring it back)."""
    base = f"{{tw:{tweet_id}}}"
    return CacheKey(base, f"{base}:lease")


def tweet_counts(tweet_id: int) -> CacheKey:
    """like_count / retweet_count / reply_count; dropped by the counter consumer."""
    base = f"{{tw:{tweet_id}}}:counts"
    return CacheKey(base, f"{base}:lease")


def dm_unread(user_id: int) -> str:
    """Unread direct messages: conversation id -> count, plus a ``built`` marker (value 0).
    Owned by the conversations feature (warble.dal.dm_unread); notifications sums its values."""
    return f"{{u:{user_id}}}:dm_unread"


def home_timeline(user_id: int) -> str:
    """Tweet ids of the people a user follows and their own (see warble.dal.timelines)."""
    return f"{{h:{user_id}}}:home"


def home_celebrities(user_id: int) -> str:
    """The big accounts a user follows, merged into the home timeline at read time."""
    return f"{{h:{user_id}}}:celebs"


def author_recent(author_id: int) -> str:
    return f"{{a:{author_id}}}:recent"


def session(token_hash_hex: str) -> CacheKey:
    base = f"{{t:{token_hash_hex}}}:session"
    return CacheKey(base, f"{base}:lease")


def session_revoked(session_id: int) -> str:
    return f"{{s:{session_id}}}:revoked"


def session_seen(session_id: int) -> str:
    return f"{{s:{session_id}}}:seen"


def login_failures(login: str) -> str:
    return f"{{login:{login.lower()}}}:failures"


def idempotency(user_id: int, key: str) -> str:
    """A POST's Idempotency-Key (hashed: it is the client's text, up to 64 characters)."""
    return f"{{idem:{user_id}}}:{hashlib.sha256(key.encode()).hexdigest()}"


def snowflake_worker(worker_id: int) -> str:
    return f"{{snowflake}}:worker:{worker_id}"


def snowflake_worker_last(worker_id: int) -> str:
    return f"{{snowflake}}:worker:{worker_id}:last"
