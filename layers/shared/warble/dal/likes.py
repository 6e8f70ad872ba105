"""Likes in DynamoDB (pynamodb), and the viewer's like / retweet flags on a page of tweets.

``LikesTable``: partition key ``pk``, sort key ``sk``. For "U likes T", minted a Snowflake
``seq`` (ids zero-padded to 19 digits, so string order is numeric order), the store reads T's
id item (a strongly consistent GetItem of ``T#<T>`` in the tweet index: gone, no like), then ONE
TransactWriteItems writes three items:

| pk        | sk         | attributes             | answers                                       |
|-----------|------------|------------------------|-----------------------------------------------|
| U#<U>     | T#<T>      | seq, author_id, shards | "has U liked T?": a GetItem; a page: BatchGet |
| U#<U>     | LT#<seq>   | tid, author_id         | the tweets U liked, newest like first (Query) |
| T#<T>#<k> | LU#<seq>   | uid                    | who liked T, newest first (a Query per shard) |

**T's likers are spread over ``LIKERS_SHARDS`` partitions** ``T#<T>#0`` .. ``T#<T>#7``, the
like's shard ``k`` a hash of its seq (``likers_pk``). A like is a transaction, so its items cost
two write units each; one partition takes 1,000 a second, and a likers partition's sort key only
grows (the newest like is always in the last split), so DynamoDB's split for heat cannot spread
it. At 100M daily users a viral tweet takes 694 likes a second at the daily peak (1% of the
hour's likes, docs/capacity.md) and 1,015 at the sustained event: 2,030 write units on one
partition; 254 on each of eight (507 on each of the four there were until issue 41, and 1,157 on
the 10x-the-mean event basis the issue was written against: 579 on eight). The count is a
constant, not a setting, and only grows: the edge records the count its like was spread over
(``shards``), so an unlike and the account's erasure find its item, and every count there has
been (``EARLIER_LIKERS_SHARDS``) is below the current one, so reading ``T#<T>#0`` ..
``T#<T>#<LIKERS_SHARDS - 1>`` reads them all and nothing moves. A list read costs a Query per
shard instead of one: the likers page reads each shard's newest ``limit`` below the cursor and
merges them by seq (the same cursor: the last seq shown), a count sums the shards' COUNT
queries. Likes stored before the shards have their ``LU#`` item under the tweet's own
``T#<T>`` and no ``shards`` on their edge: every read, count and cleanup takes that partition as
one more shard.

**No ConditionCheck on the tweet.** The transaction used to check T's id item, which put two
write units of every like on that one item (1,389 a second: over). The read before the
transaction costs one read unit of a partition's 3,000, but a like can now commit just after
T's delete, and after that delete's cleanup (``TweetService.purge``) read T's likers: so the
likes stream's cleanup reader (``LikeService.orphans_removed``) reads the id items of every
batch's liked tweets again, strongly consistent, and unlikes what it finds of a gone tweet.
Either the like committed before the delete, and the purge (which starts after it) finds it,
or after, and that read finds the tweet gone: no like outlives its tweet.

Why this shape:
- No index, so no item-collection limit: a viral tweet's likers are millions of items under a
  few partition keys, which DynamoDB splits by sort key. A GSI would make both lists
  eventually consistent (a user would not see their own like in their list) and cost a write.
- Three items per like instead of one: writes cost about three times an edge-only design, reads
  of every access pattern are one GetItem, one BatchGetItem or a Query (a Query per shard).
- Unlike reads the edge for ``seq`` and deletes the three items on the condition that the edge
  is unchanged; a racing unlike makes the second a no-op (idempotent).
- Only the edge item counts: the counter consumer turns its INSERT / REMOVE into +1 / -1 on
  ``like_count`` (warble.domain.likes), its hot counters spread over sub-items
  (warble.dal.counters).

``viewer_flags`` answers liked_by_me and retweeted_by_me from the tables, with BatchGetItem
calls that span both (the edges here and the ``RT#<U>#<T>`` items of the tweet index), 100 keys
per call: only for tweets older than the viewer's recent likes and retweets held in Redis
(warble.domain.tweets.flags), which ``recent_likes`` rebuilds.
"""

from __future__ import annotations

import heapq
import zlib
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import Any

from pynamodb.attributes import NumberAttribute, UnicodeAttribute
from pynamodb.exceptions import DoesNotExist, TransactWriteError
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from warble.dal import erasing
from warble.dal.dynamo import (
    CONDITION_FAILED,
    StreamItem,
    batch_write,
    bind,
    cancellation_codes,
    client,
    number,
    prefixed_id,
)
from warble.dal.graph import GraphItem, check_not_blocked
from warble.dal.tweets import TweetIndexItem
from warble.domain.blocks.ports import BlockedByAuthor
from warble.domain.likes.ports import Like, Liker, TweetMissing
from warble.events import Event, Liked, Unliked
from warble.settings import Settings, get_settings
from warble.tracing import instrument

BATCH_GET_LIMIT = 100
BATCH_WRITE_LIMIT = 25
LIKERS_SHARDS = 8  # a tweet's likers partitions (the module's docstring: fixed, and why 8)
# The counts likes were spread over before (each below LIKERS_SHARDS; newest first).
EARLIER_LIKERS_SHARDS = (4,)


def _id(value: int) -> str:
    return f"{value:019d}"


def user_pk(user_id: int) -> str:
    return f"U#{user_id}"


def tweet_pk(tweet_id: int) -> str:
    return f"T#{tweet_id}"


def likers_pk(tweet_id: int, seq: int, shards: int) -> str:
    """The partition of a like's ``LU#<seq>`` item, for a like spread over ``shards`` (its
    edge's ``shards``; 0: stored before the shards, under the tweet's own partition). The shard
    is a hash of the seq, not the seq mod n: a Snowflake's low bits count the likes of one
    millisecond on one worker, so they are mostly 0 and would put most likes on shard 0."""
    if not shards:
        return tweet_pk(tweet_id)
    return f"T#{tweet_id}#{zlib.crc32(_id(seq).encode()) % shards}"


def likers_partitions(tweet_id: int) -> list[str]:
    """Every partition that may hold T's likers: the shards (those of every earlier count are
    among them), then the tweet's own (likes stored before the shards)."""
    return [f"T#{tweet_id}#{k}" for k in range(LIKERS_SHARDS)] + [tweet_pk(tweet_id)]


def spread_of(tweet_id: int, seq: int, partition: str) -> int:
    """The ``shards`` a likers item found in ``partition`` was written with: the count, current
    or earlier, whose ``likers_pk`` is that partition (0: the tweet's own)."""
    for shards in (LIKERS_SHARDS, *EARLIER_LIKERS_SHARDS):
        if likers_pk(tweet_id, seq, shards) == partition:
            return shards
    return 0


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
    shards = NumberAttribute(null=True)  # on an edge: its likers item's spread (likers_pk)


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
        return client(self._region)

    def edge(self, user_id: int, tweet_id: int) -> Like | None:
        try:
            item = LikeItem.get(user_pk(user_id), tweet_pk(tweet_id), consistent_read=True)
        except DoesNotExist:
            return None
        return Like(
            user_id, tweet_id, int(item.seq), int(item.author_id or 0), int(item.shards or 0)
        )

    def like(self, user_id: int, tweet_id: int, author_id: int, seq: int) -> bool:
        """Write the three items; False if U already likes T. TweetMissing if T is gone (read
        first: a like that commits just after T's delete is the stream cleanup's, see the
        module's docstring), BlockedByAuthor if T's author blocks U (checked in the same
        transaction: a like racing a block lands before it or not at all)."""
        if not self.existing_tweets([tweet_id]):
            raise TweetMissing()
        connection = self._connection
        try:
            with TransactWrite(connection=connection) as tx:
                tx.save(
                    LikeItem(
                        user_pk(user_id), tweet_pk(tweet_id),
                        seq=seq, author_id=author_id, shards=LIKERS_SHARDS,
                    ),
                    condition=LikeItem.pk.does_not_exist(),
                )  # fmt: skip
                tx.save(
                    LikeItem(user_pk(user_id), f"LT#{_id(seq)}", tid=tweet_id, author_id=author_id)
                )
                tx.save(
                    LikeItem(likers_pk(tweet_id, seq, LIKERS_SHARDS), f"LU#{_id(seq)}", uid=user_id)
                )
                check_not_blocked(tx, author_id, user_id)
        except TransactWriteError as exc:
            # pynamodb sends condition checks first, then puts: [block check, edge, list, list].
            reasons = cancellation_codes(exc)
            if reasons[:1] == [CONDITION_FAILED]:
                raise BlockedByAuthor() from exc
            if reasons[1:2] == [CONDITION_FAILED]:
                return False
            raise
        return True

    def existing_tweets(self, tweet_ids: Iterable[int]) -> set[int]:
        """Which of these tweets exist now: their id items in the tweet index, read strongly
        consistent (one read unit each, a hundred to a BatchGetItem)."""
        wanted = list(dict.fromkeys(tweet_ids))
        found: set[int] = set()
        for start in range(0, len(wanted), BATCH_GET_LIMIT):
            keys = [tweet_pk(t) for t in wanted[start : start + BATCH_GET_LIMIT]]
            for item in TweetIndexItem.batch_get(
                keys, consistent_read=True, attributes_to_get=["pk"]
            ):
                found.add(int(item.pk[2:]))
        return found

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
                tx.delete(
                    LikeItem(likers_pk(like.tweet_id, like.seq, like.shards), f"LU#{_id(like.seq)}")
                )
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
        """``(seq, user_id)`` of T's likers, newest first: each partition's newest ``limit``
        below the cursor, side by side, merged (the page's likes are among them; seqs are
        unique)."""

        def newest(partition: str) -> list[tuple[int, int]]:
            return [
                (int(item.sk[3:]), int(item.uid))
                for item in LikeItem.query(
                    partition,
                    _below("LU#", before_seq),
                    scan_index_forward=False,
                    limit=limit,
                    consistent_read=True,
                )
            ]

        partitions = likers_partitions(tweet_id)
        with ThreadPoolExecutor(len(partitions)) as pool:
            rows = [row for part in pool.map(newest, partitions) for row in part]
        return heapq.nlargest(limit, rows)

    def count_likers(self, tweet_id: int) -> int:
        """How many users like T now (a COUNT query a partition: reads the keys, returns no
        items)."""
        return sum(
            int(LikeItem.count(partition, LikeItem.sk.startswith("LU#"), consistent_read=True))
            for partition in likers_partitions(tweet_id)
        )

    def all_likers(self, tweet_id: int) -> Iterator[Liker]:
        """Every liker of T, partition by partition, for the cleanup of a deleted tweet."""
        for partition in likers_partitions(tweet_id):
            for item in LikeItem.query(
                partition, LikeItem.sk.startswith("LU#"), consistent_read=True
            ):
                seq = int(item.sk[3:])
                yield Liker(seq, int(item.uid), spread_of(tweet_id, seq, partition))

    def delete_likes(self, tweet_id: int, likes: list[Liker]) -> None:
        """Delete each like's three items (BatchWriteItem; deleting what is gone is a no-op)."""
        with batch_write(LikeItem) as batch:
            for seq, user_id, shards in likes:
                batch.delete(LikeItem(user_pk(user_id), tweet_pk(tweet_id)))
                batch.delete(LikeItem(user_pk(user_id), f"LT#{_id(seq)}"))
                batch.delete(LikeItem(likers_pk(tweet_id, seq, shards), f"LU#{_id(seq)}"))

    def edges(self) -> Iterator[tuple[int, int]]:
        """Every ``(user_id, tweet_id)`` like edge: a full scan, for reconciliation. An item
        whose keys are not ids is no edge (the stream's counter reports it as a poison record)."""
        for item in LikeItem.scan(
            LikeItem.sk.startswith("T#") & LikeItem.pk.startswith("U#"),
            attributes_to_get=["pk", "sk"],
        ):
            user, tweet = item.pk[2:], item.sk[2:]
            if user.isdigit() and tweet.isdigit():
                yield int(user), int(tweet)

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
class LikeErasure:
    """An account's likes in the likes table, a bounded slice at a time (the account deletion,
    ``warble.dal.erasure``), and who liked a tweet about to go."""

    def __init__(self, items: erasing.Items) -> None:
        self._items = items
        self._table = items.settings.likes_table

    def erase_own(self, user_id: int, limit: int) -> int:
        """A slice of what is left under the account's own key."""
        return erasing.erase_partition(self._items, self._table, user_pk(user_id), limit)

    def likes(self, user_id: int, limit: int) -> list[tuple[int, int]]:
        """Each like's three items (the edge, X's list item, the tweet's likers item, in the
        likers partition the edge's ``shards`` says): (tweet, its author) of each."""
        likes, me = self._table, user_pk(user_id)
        found, _more = self._items.query(likes, me, "T#", limit, "sk, seq, author_id, shards")
        doomed: list[erasing.Doomed] = []
        liked: list[tuple[int, int]] = []
        for item in found:
            sk, seq = erasing.text(item, "sk"), erasing.num(item, "seq") or 0
            tweet = int(sk[2:])
            shards = erasing.num(item, "shards") or 0
            doomed += [
                (likes, erasing.key(me, sk)),
                (likes, erasing.key(me, f"LT#{_id(seq)}")),
                (likes, erasing.key(likers_pk(tweet, seq, shards), f"LU#{_id(seq)}")),
            ]
            liked.append((tweet, erasing.num(item, "author_id") or 0))
        self._items.delete(doomed)
        return liked

    def likers(self, tweet_id: int, wanted: int) -> list[int]:
        """Up to about ``wanted`` of the users who liked ``tweet_id``, shard by shard."""
        users: list[int] = []
        for partition in likers_partitions(tweet_id):
            found, _more = self._items.query(self._table, partition, "LU#", wanted, "uid")
            users += [erasing.num(i, "uid") or 0 for i in found]
            wanted -= len(found)
            if wanted <= 0:
                break
        return users


# ---- bulk import (the seed, infra/local/seed.py: items written as they are, no stream) ------
def import_like(
    settings: Settings, user_id: int, tweet_id: int, author_id: int, seq: int
) -> list[tuple[str, dict[str, Any]]]:
    """A like's three items, as ``LikeStore.like`` writes them."""
    items = (
        LikeItem(user_pk(user_id), tweet_pk(tweet_id), seq=seq, author_id=author_id,
                 shards=LIKERS_SHARDS),
        LikeItem(user_pk(user_id), f"LT#{_id(seq)}", tid=tweet_id, author_id=author_id),
        LikeItem(likers_pk(tweet_id, seq, LIKERS_SHARDS), f"LU#{_id(seq)}", uid=user_id),
    )  # fmt: skip
    return [(settings.likes_table, item.serialize()) for item in items]


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
