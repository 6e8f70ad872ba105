"""Likes in DynamoDB (pynamodb), and the viewer's like / retweet flags on a page of tweets.

``LikesTable``: partition key ``pk``, sort key ``sk``. For "U likes T", minted a Snowflake
``seq`` (ids zero-padded to 19 digits, so string order is numeric order), ONE TransactWriteItems
writes three items and checks the tweet still exists:

| pk    | sk         | attributes       | answers                                          |
|-------|------------|------------------|--------------------------------------------------|
| U#<U> | T#<T>      | seq, author_id   | "has U liked T?": one GetItem; a page: BatchGet  |
| U#<U> | LT#<seq>   | tid, author_id   | the tweets U liked, newest like first (Query)    |
| T#<T> | LU#<seq>   | uid              | who liked T, newest first (Query)                |

plus a ConditionCheck on the tweet's id item (``T#<T>`` in the tweet index table): a tweet
deleted a moment earlier cannot be liked, and a like committed before the delete is found by the
delete's cleanup (``T#<T>`` partition), so no like outlives its tweet.

Why this shape:
- No index, so no item-collection limit: a viral tweet's likers are millions of items under one
  partition key, which DynamoDB splits by sort key. A GSI would make both lists eventually
  consistent (a user would not see their own like in their list) and cost a write anyway.
- Three items per like instead of one: writes cost about three times an edge-only design, reads
  of every access pattern are one GetItem, one BatchGetItem or one Query.
- Unlike reads the edge for ``seq`` and deletes the three items on the condition that the edge
  is unchanged; a racing unlike makes the second a no-op (idempotent).
- Only the edge item counts: the counter consumer turns its INSERT / REMOVE into +1 / -1 on
  ``like_count`` (warble.domain.likes). A very hot tweet's likers partition takes every like's
  write; sharding it (``T#<T>#<n>``) is the next step if one tweet ever needs more than ~1000
  likes per second.

``viewer_flags`` answers liked_by_me and retweeted_by_me from the tables, with BatchGetItem
calls that span both (the edges here and the ``RT#<U>#<T>`` items of the tweet index), 100 keys
per call: only for tweets older than the viewer's recent likes and retweets held in Redis
(warble.domain.tweets.flags), which ``recent_likes`` rebuilds.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Any

import boto3
from pynamodb.attributes import NumberAttribute, UnicodeAttribute
from pynamodb.exceptions import DoesNotExist, TransactWriteError
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from warble.dal.dynamo import (
    CONDITION_FAILED,
    StreamItem,
    bind,
    cancellation_codes,
    number,
    prefixed_id,
)
from warble.dal.graph import GraphItem, check_not_blocked
from warble.dal.tweets import TweetIndexItem
from warble.domain.blocks.ports import BlockedByAuthor
from warble.domain.likes.ports import Like, TweetMissing
from warble.events import Event, Liked, Unliked
from warble.settings import Settings, get_settings
from warble.tracing import instrument

BATCH_GET_LIMIT = 100
BATCH_WRITE_LIMIT = 25


def _id(value: int) -> str:
    return f"{value:019d}"


def user_pk(user_id: int) -> str:
    return f"U#{user_id}"


def tweet_pk(tweet_id: int) -> str:
    return f"T#{tweet_id}"


class LikeItem(Model):
    class Meta:
        table_name = "likes"  # replaced from settings on first use
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    seq = NumberAttribute(null=True)
    tid = NumberAttribute(null=True)
    uid = NumberAttribute(null=True)
    author_id = NumberAttribute(null=True)


def _below(prefix: str, before_seq: int | None) -> Any:
    """The sort-key condition of a time list: every ``<prefix><seq>`` below the cursor."""
    if before_seq is None:
        return LikeItem.sk.startswith(prefix)
    return LikeItem.sk.between(prefix, f"{prefix}{_id(before_seq - 1)}")


class LikeStore:
    """The like store behind ``warble.domain.likes.ports.LikeStore``."""

    def __init__(self, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self._likes_table = settings.likes_table
        self._index_table = settings.tweet_index_table
        self._connection = bind(
            settings.aws_region,
            [
                (LikeItem, self._likes_table),
                (TweetIndexItem, self._index_table),
                (GraphItem, settings.graph_table),
            ],
        )
        self._region = settings.aws_region

    @cached_property
    def _client(self) -> Any:
        """A plain DynamoDB client, for the BatchGetItem that spans two tables."""
        instrument("botocore")
        return boto3.client("dynamodb", region_name=self._region)

    def edge(self, user_id: int, tweet_id: int) -> Like | None:
        try:
            item = LikeItem.get(user_pk(user_id), tweet_pk(tweet_id), consistent_read=True)
        except DoesNotExist:
            return None
        return Like(user_id, tweet_id, int(item.seq), int(item.author_id or 0))

    def like(self, user_id: int, tweet_id: int, author_id: int, seq: int) -> bool:
        """Write the three items; False if U already likes T. TweetMissing if T is gone,
        BlockedByAuthor if T's author blocks U (checked in the same transaction: a like racing
        a block lands before it or not at all)."""
        connection = self._connection
        try:
            with TransactWrite(connection=connection) as tx:
                tx.save(
                    LikeItem(user_pk(user_id), tweet_pk(tweet_id), seq=seq, author_id=author_id),
                    condition=LikeItem.pk.does_not_exist(),
                )
                tx.save(
                    LikeItem(user_pk(user_id), f"LT#{_id(seq)}", tid=tweet_id, author_id=author_id)
                )
                tx.save(LikeItem(tweet_pk(tweet_id), f"LU#{_id(seq)}", uid=user_id))
                tx.condition_check(
                    TweetIndexItem, tweet_pk(tweet_id), condition=TweetIndexItem.pk.exists()
                )
                check_not_blocked(tx, author_id, user_id)
        except TransactWriteError as exc:
            # pynamodb sends condition checks first, then puts: [tweet check, block check, edge,
            # list, list].
            reasons = cancellation_codes(exc)
            if reasons[:1] == [CONDITION_FAILED]:
                raise TweetMissing() from exc
            if reasons[1:2] == [CONDITION_FAILED]:
                raise BlockedByAuthor() from exc
            if reasons[2:3] == [CONDITION_FAILED]:
                return False
            raise
        return True

    def unlike(self, like: Like) -> bool:
        """Delete the three items if the edge is still this like; False if it changed."""
        connection = self._connection
        try:
            with TransactWrite(connection=connection) as tx:
                tx.delete(
                    LikeItem(user_pk(like.user_id), tweet_pk(like.tweet_id)),
                    condition=LikeItem.seq == like.seq,
                )
                tx.delete(LikeItem(user_pk(like.user_id), f"LT#{_id(like.seq)}"))
                tx.delete(LikeItem(tweet_pk(like.tweet_id), f"LU#{_id(like.seq)}"))
        except TransactWriteError as exc:
            reasons = cancellation_codes(exc)
            if reasons[:1] == [CONDITION_FAILED]:
                return False
            raise
        return True

    def liked_page(
        self, user_id: int, before_seq: int | None, limit: int
    ) -> list[tuple[int, int, int]]:
        """``(seq, author_id, tweet_id)`` of the tweets U liked, newest like first."""
        return [
            (int(item.sk[3:]), int(item.author_id), int(item.tid))
            for item in LikeItem.query(
                user_pk(user_id),
                _below("LT#", before_seq),
                scan_index_forward=False,
                limit=limit,
                consistent_read=True,
            )
        ]

    def recent_likes(self, user_id: int, limit: int) -> tuple[dict[int, int], int]:
        """The user's newest ``limit`` likes (tweet -> the like's seq), and the floor above
        which they are all of them: the oldest seq read if there may be older ones, else 0."""
        likes = {
            int(item.tid): int(item.sk[3:])
            for item in LikeItem.query(
                user_pk(user_id),
                LikeItem.sk.startswith("LT#"),
                scan_index_forward=False,
                limit=limit,
                consistent_read=True,
                attributes_to_get=["sk", "tid"],
            )
        }
        return likes, (min(likes.values()) if len(likes) >= limit else 0)

    def likers_page(
        self, tweet_id: int, before_seq: int | None, limit: int
    ) -> list[tuple[int, int]]:
        """``(seq, user_id)`` of T's likers, newest first."""
        return [
            (int(item.sk[3:]), int(item.uid))
            for item in LikeItem.query(
                tweet_pk(tweet_id),
                _below("LU#", before_seq),
                scan_index_forward=False,
                limit=limit,
                consistent_read=True,
            )
        ]

    def count_likers(self, tweet_id: int) -> int:
        """How many users like T now (a COUNT query: reads the keys, returns no items)."""
        return int(
            LikeItem.count(tweet_pk(tweet_id), LikeItem.sk.startswith("LU#"), consistent_read=True)
        )

    def all_likers(self, tweet_id: int) -> Iterator[tuple[int, int]]:
        """Every ``(seq, user_id)`` of T, for the cleanup of a deleted tweet."""
        for item in LikeItem.query(
            tweet_pk(tweet_id), LikeItem.sk.startswith("LU#"), consistent_read=True
        ):
            yield int(item.sk[3:]), int(item.uid)

    def delete_likes(self, tweet_id: int, likes: list[tuple[int, int]]) -> None:
        """Delete each like's three items (BatchWriteItem; deleting what is gone is a no-op)."""
        with LikeItem.batch_write() as batch:
            for seq, user_id in likes:
                batch.delete(LikeItem(user_pk(user_id), tweet_pk(tweet_id)))
                batch.delete(LikeItem(user_pk(user_id), f"LT#{_id(seq)}"))
                batch.delete(LikeItem(tweet_pk(tweet_id), f"LU#{_id(seq)}"))

    def edges(self) -> Iterator[tuple[int, int]]:
        """Every ``(user_id, tweet_id)`` like edge: a full scan, for reconciliation."""
        for item in LikeItem.scan(
            LikeItem.sk.startswith("T#") & LikeItem.pk.startswith("U#"),
            attributes_to_get=["pk", "sk"],
        ):
            yield int(item.pk[2:]), int(item.sk[2:])

    def viewer_flags(self, viewer: int, tweet_ids: list[int]) -> tuple[set[int], set[int]]:
        """(the ids the viewer likes, the ids the viewer retweeted), BatchGetItem across the
        likes table and the tweet index, 100 keys per call, unprocessed keys retried."""
        wanted = list(dict.fromkeys(tweet_ids))
        keys: list[tuple[str, dict[str, Any]]] = []
        for tid in wanted:
            keys.append(
                (
                    self._likes_table,
                    {"pk": {"S": user_pk(viewer)}, "sk": {"S": tweet_pk(tid)}},
                )
            )
            keys.append((self._index_table, {"pk": {"S": f"RT#{viewer}#{tid}"}}))
        liked: set[int] = set()
        retweeted: set[int] = set()
        for start in range(0, len(keys), BATCH_GET_LIMIT):
            request: dict[str, Any] = {}
            for table, key in keys[start : start + BATCH_GET_LIMIT]:
                entry = request.setdefault(
                    table, {"Keys": [], "ConsistentRead": True, "ProjectionExpression": "pk, sk"}
                )
                entry["Keys"].append(key)
            request[self._index_table]["ProjectionExpression"] = "pk"
            while request:
                answer = self._client.batch_get_item(RequestItems=request)
                for item in answer.get("Responses", {}).get(self._likes_table, []):
                    liked.add(int(item["sk"]["S"][2:]))
                for item in answer.get("Responses", {}).get(self._index_table, []):
                    retweeted.add(int(item["pk"]["S"].rsplit("#", 1)[1]))
                request = answer.get("UnprocessedKeys") or {}
        return liked, retweeted


# ---- the likes table's stream --------------------------------------------------------------------
def decode_record(record: dict[str, Any]) -> list[Event]:
    """A like is read from its edge item (``U#<user> / T#<tweet>``): INSERT is Liked, REMOVE is
    Unliked; the two list items of each like are no event."""
    item = StreamItem.of(record)
    sk = item.string_key("sk")
    pk = item.string_key("pk")
    if not (pk.startswith("U#") and sk.startswith("T#")) or item.name not in ("INSERT", "REMOVE"):
        return []
    user_id, tweet_id = prefixed_id(pk, "U#"), prefixed_id(sk, "T#")
    image = item.image()
    kind = Liked if item.name == "INSERT" else Unliked
    return [
        kind(
            user_id=user_id,
            tweet_id=tweet_id,
            author_id=number(image, "author_id"),
            seq=number(image, "seq"),
        )
    ]
