"""Every Redis key Warble uses, in one screen.

Keys that a single operation touches together (Lua, MULTI, multi-key DEL) share a hash tag, the
part in braces, so they live in one slot of a Redis Cluster.

| key                              | type   | TTL                       | what                  |
|----------------------------------|--------|---------------------------|-----------------------|
| {u:<user_id>}:profile            | string | PROFILE_CACHE_TTL_SECONDS | cached profile (JSON) |
| {u:<user_id>}:profile:lease      | string | LEASE_MS                  | fill lease            |
| {u:<user_id>}:counts             | string | COUNTS_CACHE_TTL_SECONDS  | follow counts (JSON)  |
| {u:<user_id>}:counts:lease       | string | LEASE_MS                  | fill lease            |
| {u:<user_id>}:following          | hash   | MEMBERSHIP_TTL_SECONDS    | who I follow (vers.)  |
| {u:<user_id>}:followers          | hash   | MEMBERSHIP_TTL_SECONDS    | my followers (fan-out)|
| {u:<user_id>}:liked              | hash   | MEMBERSHIP_TTL_SECONDS    | my recent likes       |
| {u:<user_id>}:retweeted          | hash   | MEMBERSHIP_TTL_SECONDS    | my recent retweets    |
| {u:<user_id>}:blocks             | hash   | MEMBERSHIP_TTL_SECONDS    | blocks, mutes (vers.) |
| {u:<user_id>}:<kind>:lease       | string | LEASE_MS                  | fill lease            |
| {u:<user_id>}:muted_words        | string | MEMBERSHIP_TTL_SECONDS    | muted words (JSON)    |
| {u:<user_id>}:muted_words:lease  | string | LEASE_MS                  | fill lease            |
| {u:<user_id>}:followers:first    | string | FIRST_PAGE_CACHE_TTL_SEC. | big account's first   |
| {u:<user_id>}:following:first    | string | FIRST_PAGE_CACHE_TTL_SEC. | list page (JSON)      |
| {u:<user_id>}:<list>:first:lease | string | LEASE_MS                  | fill lease            |
| {tw:<tweet_id>}                  | string | TWEET_CACHE_TTL_SECONDS   | stored tweet (JSON)   |
| {tw:<tweet_id>}:lease            | string | LEASE_MS                  | fill lease            |
| {tw:<tweet_id>}:counts           | string | COUNTS_CACHE_TTL_SECONDS  | like/retweet/reply    |
| {tw:<tweet_id>}:counts:lease     | string | LEASE_MS                  | fill lease            |
| {u:<user_id>}:home               | zset   | HOME_TIMELINE_TTL (30 d)  | home timeline         |
| {u:<user_id>}:celebs             | string | a day                     | followed celebrities  |
| {a:<author_id>}:recent           | zset   | none (capped)             | author's newest ids   |
| {cel}:recent:<author_id>         | zset   | none (capped)             | a celebrity's, merged |
| {cel}:log                        | zset   | none (trimmed)            | changes of those sets |
| {cel}:seq                        | string | none                      | the log's last number |
| {u:<user_id>}:session:<sha256>   | string | SESSION_CACHE_TTL_SECONDS | cached session (JSON) |
| {u:<user_id>}:session:<sha>:lease| string | LEASE_MS                  | fill lease            |
| {u:<user_id>}:session:<sha>:seen | string | 60 s                      | last_seen_at throttle |
| {u:<user_id>}:ticket:<sha256>    | string | 30 s (TICKET_TTL)         | WebSocket connect tkt |
| {u:<user_id>}:budget             | string | RATE_LIMIT_USER_WINDOW_S. | user's request budget |
| {u:<user_id>}:budget:location    | string | RATE_LIMIT_LOCATION_W.S.  | its location updates  |
| {u:<user_id>}:budget:reports     | string | RATE_LIMIT_REPORT_W.S.    | its new reports       |
| {seen:<n>}                       | zset   | none (flushed)            | sessions seen, to PG  |
| {ctr:<n>}:touched                | set    | none (taken)              | counters to reconcile |
| {ctr}:sweep                      | string | none                      | reconcile sweep cursor|
| {t:<token sha256>}:session       | string | SESSION_CACHE_TTL_SECONDS | old-form token's (*)  |
| {t:<token sha256>}:session:lease | string | LEASE_MS                  | fill lease (*)        |
| {t:<token sha256>}:seen          | string | 60 s                      | its throttle (*)      |
| {login:<subject>}:failures       | string | LOGIN_WINDOW_SECONDS      | failed logins (**)    |
| {login:<subject>}:failures:<net> | string | LOGIN_WINDOW_SECONDS      | ... from one address  |
| {login:<subject>}:known          | set    | 30 d from the last login  | addresses logged in   |
| {rl:signup:<client ip or /64>}   | string | RATE_LIMIT_SIGNUP_IP_W.S. | signups from an IP    |
| {rl:login:<client ip or /64>}    | string | RATE_LIMIT_LOGIN_IP_W.S.  | logins from an IP     |
| {rl:authfail:<client ip or /64>} | string | RATE_LIMIT_AUTH_FAIL..._S.| unknown tokens of IP  |
| {idem:<user_id>}:<sha256 of key> | string | 24 h (pending: 60 s)      | a POST's first answer |
| {u:<user_id>}:notif:pos          | hash   | none                      | read positions        |
| {u:<user_id>}:notif:unread:<type>| zset   | none (capped)             | unread notif. ids     |
| {u:<user_id>}:notif:lease        | string | LEASE_MS                  | rebuild lease         |
| {u:<user_id>}:notif:rate:<win>   | string | 2 h                       | hot-recipient cap     |
| {u:<user_id>}:dm_unread          | hash   | none                      | unread DMs per conv.  |
| {u:<user_id>}:dm_unread:lease    | string | LEASE_MS                  | rebuild lease         |
| {u:<user_id>}:home:read          | string | none                      | home read position    |
| {sys}:notifications              | zset   | none                      | system notif. ids     |
| {geo:<cell>}:users               | geo    | none (rebuildable)        | located users of cell |
| {u:<user_id>}:location           | string | LOCATION_CACHE_SECONDS    | my "lat,lon" (cache)  |
| {u:<user_id>}:seen               | string | none                      | shown-people Bloom    |
| {u:<user_id>}:seen:meta          | hash   | none                      | its layers and fill   |
| {u:<user_id>}:swiped             | set    | none (rebuildable)        | people I swiped on    |
| {u:<user_id>}:feed               | list   | FEED_TTL_SECONDS (600 s)  | fetched, not offered  |
| {u:<user_id>}:feed:meta          | hash   | FEED_TTL_SECONDS (600 s)  | its query and reach   |
| {sw:<low id>:<high id>}          | hash   | SWIPE_PAIR_TTL_SECONDS    | a pair's two swipes   |
| {u:<user_id>}:friends            | string | FRIENDS_CACHE_SECONDS     | friend ids (JSON)     |
| {u:<user_id>}:friends:lease      | string | LEASE_MS                  | fill lease            |
| {u:<user_id>}:degree2            | string | DEGREE2_CACHE_SECONDS     | 2nd-degree ids (JSON) |
| {u:<user_id>}:degree2:lease      | string | LEASE_MS                  | fill lease            |
| {u:<user_id>}:search:<token>     | string | SEARCH_SNAPSHOT_SECONDS   | ranked results (JSON) |
| {ht:<tag>}:shards                | string | HASHTAG_SHARDS_SECONDS    | timeline shard count  |
| {ht:<tag>}:rate:<minute>         | string | 120 s                     | uses in one minute    |
| {trends}:window                  | zset   | none (trimmed to 1 h)     | uses of the last hour |
| {trends}:tweets                  | hash   | none                      | tag -> uses in window |
| {trends}:authors                 | hash   | none                      | tag -> its authors    |
| {trends}:uses                    | hash   | none                      | author:tag -> uses    |
| {trends}:rank                    | zset   | none                      | tags by authors, uses |
| {del:<user_id>}                  | hash   | 14 days                   | deletion chain's place|

(*) sessions of tokens of the old form (``wbl_<secret>``, no user id), until the last expires.
(**) per account (``user:<id>``), or per folded login naming no account (``name:<login>``).
"""

from __future__ import annotations

import hashlib
import zlib
from typing import NamedTuple

LEASE_MS = 10_000
SEEN_THROTTLE_SECONDS = 60


class CacheKey(NamedTuple):
    """A cached value and the lease key that guards its fill (same hash tag)."""

    value: str
    lease: str


# A page of 20 tweets makes some 45 keys on every read: built by tuple's own constructor (a
# frozen dataclass's __init__, or a named tuple's generated __new__, is a Python call each).
_made = tuple.__new__


def profile(user_id: int) -> CacheKey:
    base = f"{{u:{user_id}}}:profile"
    return _made(CacheKey, (base, f"{base}:lease"))


def counts(user_id: int) -> CacheKey:
    """followers_count / following_count / tweet_count; dropped by whoever changes one."""
    base = f"{{u:{user_id}}}:counts"
    return _made(CacheKey, (base, f"{base}:lease"))


def first_page(user_id: int, which: str) -> CacheKey:
    """The first entries of a big account's "followers" or "following" list."""
    base = f"{{u:{user_id}}}:{which}:first"
    return _made(CacheKey, (base, f"{base}:lease"))


def memberships(kind: str, user_id: int) -> CacheKey:
    """A user's versioned membership hash: ``following``, ``followers`` (the fan-out's),
    ``liked``, ``retweeted`` (warble.dal.memberships) or ``blocks`` (warble.dal.blocks), and
    the lease that guards its rebuild."""
    base = f"{{u:{user_id}}}:{kind}"
    return _made(CacheKey, (base, f"{base}:lease"))


def muted_words(user_id: int) -> CacheKey:
    """A user's muted words (a JSON list, ``[]`` when none), beside the blocks hash: the home
    read's pipeline reads both (warble.domain.muted_words)."""
    base = f"{{u:{user_id}}}:muted_words"
    return _made(CacheKey, (base, f"{base}:lease"))


def tweet(tweet_id: int) -> CacheKey:
    """A stored tweet, or a tombstone once deleted (so no late fill can bring it back)."""
    base = f"{{tw:{tweet_id}}}"
    return _made(CacheKey, (base, f"{base}:lease"))


def tweet_counts(tweet_id: int) -> CacheKey:
    """like_count / retweet_count / reply_count; dropped by the counter consumer."""
    base = f"{{tw:{tweet_id}}}:counts"
    return _made(CacheKey, (base, f"{base}:lease"))


def dm_unread(user_id: int) -> str:
    """Unread direct messages: conversation id -> count, plus a ``built`` marker (value 0).
    Owned by the conversations feature (warble.dal.dm_unread); notifications sums its values."""
    return f"{{u:{user_id}}}:dm_unread"


def dm_unread_lease(user_id: int) -> str:
    """The rebuild lease of ``dm_unread``: any change to the hash voids it, so a rebuild that
    read the memberships before a message or a read cannot store that stale answer."""
    return f"{{u:{user_id}}}:dm_unread:lease"


def home_timeline(user_id: int) -> str:
    """Tweet ids of the people a user follows and their own (see warble.dal.timelines). Under
    the user's own tag, with the session, blocks, mutes and likes that a home read and an
    unread poll read beside it: the reader's part of either is one node (issue 41)."""
    return f"{{u:{user_id}}}:home"


def home_celebrities(user_id: int) -> str:
    """The big accounts a user follows, merged into the home timeline at read time."""
    return f"{{u:{user_id}}}:celebs"


def author_recent(author_id: int) -> str:
    """An author's newest tweet entries (backfills on a follow, rebuilds of home timelines)."""
    return f"{{a:{author_id}}}:recent"


CELEBRITY_TAG = "{cel}"


def celebrity_recent(author_id: int) -> str:
    """A celebrity's newest tweet entries, as read by every follower's home read and unread
    poll: all celebrities' sets share one tag, so a reader following 200 of them reads them on
    one node (issue 41), and ``celebrity_log`` tells the functions that hold them what changed."""
    return f"{CELEBRITY_TAG}:recent:{author_id}"


def celebrity_log() -> str:
    """The changes of the celebrities' sets, numbered by ``celebrity_seq``: a function that holds
    some of those sets reads here what changed since it last looked (warble.dal.hot)."""
    return f"{CELEBRITY_TAG}:log"


def celebrity_seq() -> str:
    return f"{CELEBRITY_TAG}:seq"


def celebrity_mark(author_id: int) -> str:
    """The fan-out's last decision on the author's tweets: "1" merged on read (a celebrity),
    "0" fanned out on write. A change drops the followers' celebrity lists."""
    return f"{{a:{author_id}}}:celebrity"


def session(token_hash_hex: str, user_id: int | None = None) -> CacheKey:
    """A token's cached session. A token that names its user keeps it under the user's tag, with
    the user's request budget, so the gate reads one and spends the other in one script; a token
    of the old form (no user id) under its own tag."""
    if user_id is None:
        base = f"{{t:{token_hash_hex}}}:session"
    else:
        base = f"{{u:{user_id}}}:session:{token_hash_hex}"
    return _made(CacheKey, (base, f"{base}:lease"))


def session_seen(token_hash_hex: str, user_id: int | None = None) -> str:
    """Set when the session's last_seen_at was touched, for a minute (the session's tag, so the
    session check reads it with the cached session in one call)."""
    if user_id is None:
        return f"{{t:{token_hash_hex}}}:seen"
    return f"{{u:{user_id}}}:session:{token_hash_hex}:seen"


def socket_ticket(user_id: int, ticket_hash_hex: str) -> str:
    """A WebSocket connect ticket's claim (JSON: the session it stands for), by the ticket's
    hash, under the user's tag with the sessions it names; taken once (GETDEL)."""
    return f"{{u:{user_id}}}:ticket:{ticket_hash_hex}"


# Sessions seen since the last flush to PostgreSQL's last_seen_at, spread over this many sets
# (each its own slot, so over the cluster's shards).
LAST_SEEN_BUCKETS = 256


def last_seen_bucket(session_id: int) -> str:
    """Sessions seen (member: the session id, score: when, epoch seconds) since the flush
    (warble.dal.account_state.RedisLastSeen)."""
    return f"{{seen:{session_id % LAST_SEEN_BUCKETS}}}"


# Counter keys a stream batch touched since reconciliation last looked, spread over this many
# sets (each its own slot: at 100M daily users the counters consumer adds ~90k keys/s at peak).
COUNTER_MARK_BUCKETS = 64


def counter_marks(bucket: int) -> str:
    """Counter keys (``U#<id>``, ``T#<id>``) touched since the reconciler last took them
    (warble.dal.counter_marks)."""
    return f"{{ctr:{bucket % COUNTER_MARK_BUCKETS}}}:touched"


def counter_mark_bucket(counter_key: str) -> int:
    """The bucket of a counter key: a stable hash, so a key is marked once per bucket."""
    return zlib.crc32(counter_key.encode()) % COUNTER_MARK_BUCKETS


COUNTER_SWEEP = "{ctr}:sweep"  # where reconciliation's rolling sweep of the counters stopped


def user_budget(user_id: int) -> str:
    """A user's request budget (window counter): the user's tag, with the sessions' cache."""
    return f"{{u:{user_id}}}:budget"


def location_budget(user_id: int) -> str:
    """A user's budget of location updates (window counter), beside the request budget."""
    return f"{{u:{user_id}}}:budget:location"


def reports_budget(user_id: int) -> str:
    """A user's budget of new reports (window counter), beside the request budget."""
    return f"{{u:{user_id}}}:budget:reports"


def login_failures(subject: str) -> str:
    """Failed logins of one subject: ``user:<id>`` (an account, whichever spelling named it),
    or ``name:<folded login>`` for a login that names no account."""
    return f"{{login:{subject}}}:failures"


def login_source_failures(subject: str, network: str) -> str:
    """Failed logins of one subject from one client address (an IPv6 one by its /64)."""
    return f"{{login:{subject}}}:failures:{network}"


def login_known(subject: str) -> str:
    """The client addresses the subject logged in from (set), kept LOGIN_KNOWN_SECONDS after
    its last successful login."""
    return f"{{login:{subject}}}:known"


def rate_limit(budget: str, subject: str) -> str:
    """A request budget's window counter: ``budget`` is user, signup, login or authfail (tokens
    of no session); ``subject`` the user id or the client's address (warble.domain.rate_limits).
    """
    return f"{{rl:{budget}:{subject}}}"


def idempotency(user_id: int, key: str) -> str:
    """A POST's Idempotency-Key (hashed: it is the client's text, up to 64 characters)."""
    return f"{{idem:{user_id}}}:{hashlib.sha256(key.encode()).hexdigest()}"


# ---- notifications (warble.dal.notifications) -------------------------------------------------
# A user's read positions, unread ids and the DM feature's unread hash share the user's tag, so
# one Lua call reads all of them; the home read position shares the home timeline's tag, so one
# Lua call counts the timeline above it.
def notif_positions(user_id: int) -> str:
    """Hash: ``built`` marker, ``<type>`` -> read position (19-digit id) per notification type."""
    return f"{{u:{user_id}}}:notif:pos"


def notif_unread(user_id: int, kind: str) -> str:
    """Sorted set (score 0) of the unread notification ids (19 digits) of one type."""
    return f"{{u:{user_id}}}:notif:unread:{kind}"


def notif_lease(user_id: int) -> str:
    """Rebuild lease of the user's unread sets (a write while rebuilding deletes it)."""
    return f"{{u:{user_id}}}:notif:lease"


def notif_rate(user_id: int, window: int) -> str:
    """Notifications stored for a recipient in one window (the hot-recipient cap)."""
    return f"{{u:{user_id}}}:notif:rate:{window}"


def home_read(user_id: int) -> str:
    """The id below which the home timeline counts as read."""
    return f"{{u:{user_id}}}:home:read"


def system_notifications() -> str:
    """Sorted set (score 0) of every system notification's id, plus the sentinel ``0``."""
    return "{sys}:notifications"


# ---- Discover (warble.dal.discover) --------------------------------------------------------------
LOCATION_CACHE_SECONDS = 86_400
SWIPE_PAIR_TTL_SECONDS = 30 * 86_400  # DynamoDB holds every swipe; a lost pair key is reloaded


def geo_cell(cell: str) -> str:
    """The located users of one geohash cell (GEOADD / GEOSEARCH); one slot per cell."""
    return f"{{geo:{cell}}}:users"


def location(user_id: int) -> str:
    """A user's own location, cached from the discover table for the discover query."""
    return f"{{u:{user_id}}}:location"


def seen_filter(user_id: int) -> str:
    """The bitmap of the scalable Bloom filter of people Discover showed a user (all layers)."""
    return f"{{u:{user_id}}}:seen"


def seen_meta(user_id: int) -> str:
    """The filter's layer count and the fill of its newest layer (same slot as the bitmap)."""
    return f"{{u:{user_id}}}:seen:meta"


def swiped(user_id: int) -> str:
    """Everyone a user swiped on, exactly (a "0" member marks it loaded from DynamoDB)."""
    return f"{{u:{user_id}}}:swiped"


def feed(user_id: int) -> str:
    """Candidates fetched from the geo index but not yet offered ("<id>:<km>", nearest first)."""
    return f"{{u:{user_id}}}:feed"


def feed_meta(user_id: int) -> str:
    """The feed's query (location and radius), how far it reached, and its last fetch size."""
    return f"{{u:{user_id}}}:feed:meta"


def swipe_pair(a: int, b: int) -> str:
    """Both users' swipes on each other: one key per pair, ids sorted, so one Lua script sees
    both sides atomically wherever the two requests run."""
    low, high = sorted((a, b))
    return f"{{sw:{low}:{high}}}"


# ---- search and hashtags (warble.domain.search, warble.domain.hashtags) -------------------------
FRIENDS_CACHE_SECONDS = 3600
# A second-degree set is dropped by the graph stream when a friendship changes it; the TTL bounds
# what a lost drop can leave (the contract's lag for the third degree: docs/graph.md).
DEGREE2_CACHE_SECONDS = 3600
SEARCH_SNAPSHOT_SECONDS = 600
HASHTAG_SHARDS_SECONDS = 86_400
HASHTAG_RATE_SECONDS = 120


def friends(user_id: int) -> CacheKey:
    """A user's friends (mutual follows), cached from the graph table; dropped by every follow or
    unfollow between the user and another (the write path, then the graph stream)."""
    base = f"{{u:{user_id}}}:friends"
    return _made(CacheKey, (base, f"{base}:lease"))


def degree2(user_id: int) -> CacheKey:
    """A user's second-degree set (seed 000), computed from the friends of the user's friends when
    read; dropped by the graph stream when a friendship that changes it begins or ends."""
    base = f"{{u:{user_id}}}:degree2"
    return _made(CacheKey, (base, f"{base}:lease"))


def search_snapshot(user_id: int, token: str) -> str:
    """The ranked results of one people search, so the next pages neither repeat nor skip."""
    return f"{{u:{user_id}}}:search:{token}"


def hashtag_shards(tag: str) -> str:
    """How many partitions a tag's timeline is written over (1 unless it ran hot)."""
    return f"{{ht:{tag}}}:shards"


def hashtag_rate(tag: str, minute: int) -> str:
    """A tag's uses in one minute (epoch minute): what decides a split."""
    return f"{{ht:{tag}}}:rate:{minute}"


# Trends: one hash tag for the whole hour's counts, so one script adds, removes and expires
# exactly (warble.dal.hashtags.RedisTrends says what changes at 12k tweets a second).
TRENDS_WINDOW = "{trends}:window"
TRENDS_TWEETS = "{trends}:tweets"
TRENDS_AUTHORS = "{trends}:authors"
TRENDS_USES = "{trends}:uses"
TRENDS_RANK = "{trends}:rank"
TRENDS_KEYS = [TRENDS_WINDOW, TRENDS_TWEETS, TRENDS_AUTHORS, TRENDS_USES, TRENDS_RANK]


# ---- account deletion (warble.domain.deletion) ---------------------------------------------------
DELETION_CHAIN_SECONDS = 14 * 86_400  # an SQS message's longest life


def deletion_chain(user_id: int) -> str:
    """A deleted account's workflow: the last message number acted on and when (``n``, ``at``),
    so that a duplicate message is dropped and a stalled chain is seen."""
    return f"{{del:{user_id}}}"


# The fixed names of a user's own keys, by hash tag (one DEL each); the families named by a
# parameter (sessions, unread types, rate windows, searches, idempotency keys) are found by
# their tag's pattern (``user_key_patterns``).
def user_keys(user_id: int) -> list[list[str]]:
    own = [
        *(k for c in (profile(user_id), counts(user_id), friends(user_id), degree2(user_id),
                      muted_words(user_id))
          for k in (c.value, c.lease)),
        *(k for kind in ("following", "followers", "liked", "retweeted", "blocks")
          for k in (memberships(kind, user_id).value, memberships(kind, user_id).lease)),
        *(k for which in ("followers", "following")
          for k in (first_page(user_id, which).value, first_page(user_id, which).lease)),
        user_budget(user_id), location_budget(user_id), reports_budget(user_id),
        notif_positions(user_id),
        notif_lease(user_id),
        dm_unread(user_id), dm_unread_lease(user_id), location(user_id), seen_filter(user_id),
        seen_meta(user_id), swiped(user_id), feed(user_id), feed_meta(user_id),
        home_timeline(user_id), home_celebrities(user_id), home_read(user_id),
    ]  # fmt: skip
    return [
        own,
        [author_recent(user_id)],
        [celebrity_recent(user_id)],
        [login_failures(f"user:{user_id}")],
    ]


def user_key_patterns(user_id: int) -> list[str]:
    """Every key under the user's own tags (for the families a parameter names)."""
    return [f"{{u:{user_id}}}:*", f"{{a:{user_id}}}:*",
            f"{{idem:{user_id}}}:*", f"{{login:user:{user_id}}}:*"]  # fmt: skip


def related_keys(user_id: int) -> list[str]:
    """What another user holds that a deleted account's follows, blocks or counts changed:
    their counts, membership hashes, friends, big-list first pages (one tag: one DEL)."""
    return [
        *(k for c in (counts(user_id), friends(user_id)) for k in (c.value, c.lease)),
        *(k for kind in ("following", "followers", "blocks")
          for k in (memberships(kind, user_id).value, memberships(kind, user_id).lease)),
        *(k for which in ("followers", "following")
          for k in (first_page(user_id, which).value, first_page(user_id, which).lease)),
    ]  # fmt: skip
