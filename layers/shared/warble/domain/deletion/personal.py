"""Every store that holds a user's data, and what of an account's deletion reaches it.

A store is named as ``Settings`` names it (its table, bucket or server); ``erased_by`` names the
workflow's operations that erase the account's data there (``TableErasure`` and
``RedisLeftovers`` methods, each run by a step of ``AccountDeletion``), or ``delete_account``,
the synchronous part (``AccountService``). ``tests/unit/test_personal_data.py`` holds the
registry to the code: every store in ``Settings`` is either here or in ``HOLDS_NO_USER_DATA``
with its reason, and a deletion run to its end calls every operation named here. A new feature's
store is one line here (docs/architecture.md, the new-feature checklist).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Holder:
    store: str  # the Settings field naming it
    erased_by: tuple[str, ...]
    what: str


PERSONAL_DATA: tuple[Holder, ...] = (
    Holder(
        "db_name",
        ("delete_account",),
        "users, sessions, search prefixes, muted words, the reports it made (ON DELETE CASCADE;"
        " the cases about it keep their snapshot until their retention: docs/moderation.md)",
    ),
    Holder(
        "redis_url",
        (
            "forget_user",
            "related_changed",
            "tweets_gone",
            "flags_changed",
            "unread_gone",
            "conversations_gone",
            "places_gone",
            "counter_marks_gone",
        ),
        "its own tags' keys, trend uses, others' cached copies of it",
    ),
    Holder(
        "graph_table",
        ("followers", "following", "restrictions", "partitions"),
        "follows both ways, blocks and mutes both sides, its META",
    ),
    Holder(
        "counters_table",
        ("settle_counters",),
        "its and its tweets' counts (drop_counters: those that never settle)",
    ),
    Holder("degrees_table", ("partitions",), "its second-degree set"),
    Holder("tweets_table", ("tweets",), "its tweets, retweets and replies"),
    Holder("tweet_index_table", ("tweets",), "its tweets' index items"),
    Holder("likes_table", ("likes", "partitions"), "its likes' three items each"),
    Holder(
        "notifications_table",
        ("notifications_caused", "partitions"),
        "its notifications, and those it caused (with their dedupe items)",
    ),
    Holder("discover_table", ("places", "partitions"), "its location and swipes"),
    Holder("matches_table", ("places", "partitions"), "its matches, both users' items"),
    Holder(
        "conversations_table",
        ("conversations", "partitions"),
        "its conversations' META, pair, memberships and resend claims",
    ),
    Holder("messages_table", ("conversations",), "its conversations' messages"),
    Holder("connections_table", ("partitions",), "its WebSocket connections"),
    # Through the tweets stream: the tweets step deletes the tweets, whose TweetDeleted the
    # reactions reader's handlers apply as to any deleted tweet.
    Holder("hashtags_table", ("tweets",), "its tweets' hashtag entries (the hashtags handler)"),
    Holder("media_table", ("tweets",), "its tweets' media items (the media handler)"),
    Holder("media_bucket", ("tweets",), "its tweets' media files (the media handler)"),
)

# Stores in Settings that hold nothing of a user's, and why.
HOLDS_NO_USER_DATA: dict[str, str] = {
    "worker_leases_table": "which container holds which Snowflake worker id: a random token and"
    " the lease's end, nothing of a user's",
}
