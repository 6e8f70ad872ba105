"""The follow graph in DynamoDB (pynamodb): edges, time-ordered lists, friend flags, counts.

One table, partition key ``pk = U#<user_id>``, every item of a user under it (but a big
account's followers, spread over shards ``U#<user_id>#<k>``: below). For "A follows B"
(ids zero-padded to 19 digits, so string order is numeric order) a follow writes, in ONE
TransactWriteItems:

| pk      | sk         | attributes                | answers                                       |
|---------|------------|---------------------------|-----------------------------------------------|
| U#A     | O#<B>      | uid=B, seq, friend, shard | "does A follow B?" in one GetItem; friends    |
| U#B[#k] | I#<A>      | uid=A, seq, friend        | "does A follow B?" seen from B; the stream    |
| U#A     | OT#<seq>   | uid=B                     | A's following list, newest first              |
| U#B[#k] | IT#<seq>   | uid=A                     | B's followers list, newest first              |
| U#A     | META       | following_count           | the limit of 1000, checked in the same write  |
| U#B     | META       | follower_shards           | over how many partitions B's followers go (N) |

**A big account's followers are spread over N partitions** ``U#B`` (shard 0, the account's
own) and ``U#B#1`` .. ``U#B#<N-1>``: A's ``I#A`` and ``IT#<seq>`` go to shard
``k = crc32(A) % N`` (``follower_shard``; a hash, since a Snowflake's low bits are mostly 0),
and A's ``O#B`` records ``k`` (``shard``, absent for 0). N is on B's META (absent: 1) and only
grows: the stream's fan-out reads every followee's followers count anyway, and an account past
the next step of ``GraphPolicy.follower_shards`` (1 below 100,000 followers, then a power of two
with at most 4M a shard, 16 at most) is spread further by one conditional write (``spread``).
Nothing moves: an edge written at any earlier N is in a shard below the current N, and whoever
needs one edge reads the shard off the follower's ``O#B`` (unfollow, block, follow back, the
erasure). Reads that need no particular edge take every shard below N: the followers page
Queries each shard's newest ``limit + 1`` below the cursor side by side and merges them by seq
(the cursor is still the last seq shown, so it pins a position); the fan-out and the followers
hash walk the shards a Query page at a time (``follower_pages``: everyone, in no overall
order); ``count_followers`` sums the shards' COUNTs. "Does A follow B?" is answered from
either side by the ``O#`` edges, which are never spread: ``pair``, ``statuses`` and
``followers_among`` read ``O#B`` under ``U#A`` and ``O#A`` under ``U#B`` (the same keys a call
as reading ``I#`` did). A follow reads B's N first (one eventually consistent GetItem: any N
it may see is one the shards have had); a list reads it strongly consistent.

Blocks and mutes live in the same partitions (``R#`` for the records, ``RT#`` for the lists),
so one Query of ``R#`` rebuilds a user's blocks hash in Redis (warble.dal.blocks):

| pk    | sk               | attributes           | answers                                      |
|-------|------------------|----------------------|----------------------------------------------|
| U#A   | R#B#<B>          | uid=B, seq           | "does A block B?"; the stream's Blocked      |
| U#B   | R#Y#<A>          | uid=A, seq           | "is B blocked by A?" from B's partition      |
| U#A   | RT#B#<seq>       | uid=B                | A's blocks, newest first                     |
| U#A   | R#M#<B>          | uid=B, seq           | "does A mute B?"; the stream's Muted         |
| U#A   | RT#M#<seq>       | uid=B                | A's mutes, newest first                      |

A block is ONE transaction that writes its three items and ends both follows (each direction's
four items deleted and its follower's ``following_count`` lowered, on the condition that the
edge is as read, or checked absent), so no follow survives a block and counts settle through
the stream as after an unfollow. A follow checks in its own transaction that neither block
record exists; whichever commits second fails its condition. Likes, tweets (replies and
retweets) and messages check the block record the same way (``check_not_blocked``).

``seq`` is a Snowflake minted for the follow, so it orders follows by time and is unique: the
list cursor is the last ``seq`` seen, which pins a position (newer follows never shift a page).
``friend`` (seed 002's status 3) is kept on both edge items of both directions: when B already
follows A, A's follow also flips B's ``O#A`` and A's ``I#B`` in the same transaction.

Why this shape, and what it costs:
- No index at all, so no item-collection limit: a celebrity's followers are millions of items
  under a few partition keys, which DynamoDB splits by sort key as it grows. An LSI would cap that
  partition key at 10 GB; a GSI would make the lists eventually consistent and cost a second
  write anyway. Here the lists are in the base table, written in the same transaction as the
  edges, and read with strongly consistent Queries: a user sees their own follow at once.
- Four items per follow (plus the counter) instead of two: writes cost about twice an edge-only
  design; reads of every access pattern are one GetItem, one BatchGetItem or one Query.
- Unfollow must know ``seq`` to delete the list items; it reads the edge first and makes the
  delete conditional on the edge being unchanged (seq and friend flag), retrying on a race.
- Why spread, not split for heat: a follow is a transaction, so its two items on B's side cost
  four write units, and ``IT#<seq>`` only grows at the end of the sort key (the newest follow is
  always in the last split), so DynamoDB's split for heat cannot spread it: one partition takes
  250 follows a second. At 100M daily users the top account takes ~254 follows a second at the
  event (docs/capacity.md): 1,015 write units on one partition, 127 on each of its 8 shards.
  What it costs: a followers page is N Queries (side by side; the first page of a big account
  is served from Redis, warble.domain.graph), a follow one GetItem more, and an unsharded
  account (N = 1) pays nothing but that GetItem.
- ``following_count`` lives on the follower's META item and is changed only inside the follow
  and unfollow transactions, with the condition ``following_count < limit``: exact under any
  concurrency. ``followers_count`` is derived from the stream (warble.domain.counters), so a
  celebrity's counter takes one write per stream batch, not one per follow.
"""

from __future__ import annotations

import heapq
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from pynamodb.attributes import (
    BooleanAttribute,
    NumberAttribute,
    UnicodeAttribute,
)
from pynamodb.connection import Connection
from pynamodb.exceptions import TransactWriteError, UpdateError
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from warble.dal import erasing
from warble.dal.dynamo import (
    CONDITION_FAILED,
    StreamItem,
    bind,
    cancellation_codes,
    cancelled,
    number,
    prefixed_id,
)
from warble.domain.deletion.ports import Raced
from warble.domain.graph.ports import FollowRejected
from warble.events import Blocked, Event, Followed, Muted, Unblocked, Unfollowed, Unmuted
from warble.settings import Settings, get_settings

BATCH_GET_LIMIT = 100  # keys per BatchGetItem call (DynamoDB's limit)
# The most partitions an account's followers are spread over (``spread`` clamps to it): the
# erasure reads this many when the account's META is gone.
MAX_FOLLOWER_SHARDS = 16
# Friend lists read side by side for one second-degree set (each a Query of a partition).
PARALLEL_QUERIES = 8


def _id(value: int) -> str:
    return f"{value:019d}"


def user_pk(user_id: int) -> str:
    return f"U#{user_id}"


def followers_pk(user_id: int, shard: int) -> str:
    """The partition of the user's followers shard ``shard``: shard 0 is the user's own
    partition (every follower edge written before the account was spread is there)."""
    return user_pk(user_id) if not shard else f"U#{user_id}#{shard}"


def follower_shard(follower: int, shards: int) -> int:
    """The shard of a followee's partitions that ``follower``'s items go to when the followee
    is spread over ``shards``: a hash of the follower's id (its low bits are a Snowflake's
    per-millisecond sequence, mostly 0, so not the id mod n)."""
    if shards <= 1:
        return 0
    return zlib.crc32(_id(follower).encode()) % shards


def followers_partitions(user_id: int, shards: int) -> list[str]:
    """Every partition that may hold the user's follower items, spread over ``shards``
    (shards only grow, so an edge written at any earlier count is in one of them)."""
    return [followers_pk(user_id, k) for k in range(max(1, shards))]


# Block and mute records: (kind letter in Redis, sort-key prefix). A block is written on both
# sides (``B`` on the blocker, ``Y`` on the blocked), a mute only on the muter.
RESTRICTION_PREFIXES = {"b": "R#B#", "y": "R#Y#", "m": "R#M#"}
LIST_PREFIXES = {
    "following": "OT#",
    "followers": "IT#",
    "blocks": "RT#B#",
    "mutes": "RT#M#",
}


def check_not_blocked(tx: TransactWrite, blocker: int, other: int) -> None:
    """Add to a transaction: ``blocker`` does not block ``other`` (its record is absent). The
    model must be bound to the graph table (``bind``) by the store that calls this."""
    tx.condition_check(
        GraphItem,
        user_pk(blocker),
        f"R#B#{_id(other)}",
        condition=GraphItem.pk.does_not_exist(),
    )


def _below(prefix: str, before_seq: int | None) -> Any:
    """The sort-key condition of a time list: every ``<prefix><seq>`` below the cursor."""
    if before_seq is None:
        return GraphItem.sk.startswith(prefix)
    return GraphItem.sk.between(prefix, f"{prefix}{_id(before_seq - 1)}")


class GraphItem(Model):
    class Meta:
        table_name = "graph"  # replaced from settings on first use
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    uid = NumberAttribute(null=True)
    seq = NumberAttribute(null=True)
    friend = BooleanAttribute(null=True)
    shard = NumberAttribute(null=True)  # on O#<B>: B's followers shard of the I#/IT# items
    following_count = NumberAttribute(null=True)
    follower_shards = NumberAttribute(null=True)  # on META: the followers' partitions (1)


@dataclass(frozen=True)
class Edge:
    """A -> B as stored on A's ``O#B`` item: ``shard`` is the shard of B's followers
    partitions that holds A's ``I#A`` and ``IT#<seq>`` items (``followers_pk``)."""

    seq: int
    friend: bool
    shard: int = 0


def _edge(item: GraphItem | None) -> Edge | None:
    if item is None:
        return None
    return Edge(int(item.seq), bool(item.friend), int(item.shard or 0))


class _Tx:
    """A TransactWrite whose items carry tags, so cancellation reasons can be named.

    pynamodb sends condition checks, deletes, puts and updates in that order; the reasons come
    back in request order, so the tags are kept per kind and concatenated the same way.
    """

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._ops: dict[str, list[tuple[str, tuple[Any, ...], dict[str, Any]]]] = {
            "check": [],
            "delete": [],
            "save": [],
            "update": [],
        }

    def add(self, kind: str, tag: str, *args: Any, **kwargs: Any) -> None:
        self._ops[kind].append((tag, args, kwargs))

    def commit(self) -> None:
        tags = [tag for kind in self._ops.values() for tag, _, _ in kind]
        try:
            with TransactWrite(connection=self._connection) as tx:
                for _, args, kwargs in self._ops["check"]:
                    tx.condition_check(*args, **kwargs)
                for _, args, kwargs in self._ops["delete"]:
                    tx.delete(*args, **kwargs)
                for _, args, kwargs in self._ops["save"]:
                    tx.save(*args, **kwargs)
                for _, args, kwargs in self._ops["update"]:
                    tx.update(*args, **kwargs)
        except TransactWriteError as exc:
            if not cancelled(exc):
                # Throttling or an internal error: the domain retries, then answers 503.
                raise FollowRejected(FollowRejected.CONFLICT) from exc
            failed = {
                tag
                for tag, code in zip(tags, cancellation_codes(exc), strict=False)
                if code == CONDITION_FAILED
            }
            if "blocked" in failed:
                raise FollowRejected(FollowRejected.BLOCKED) from exc
            if "edge" in failed:
                raise FollowRejected(FollowRejected.EXISTS) from exc
            if "limit" in failed:
                raise FollowRejected(FollowRejected.LIMIT) from exc
            if failed:
                raise FollowRejected(FollowRejected.RACED) from exc
            raise FollowRejected(FollowRejected.CONFLICT) from exc


def _end_follow(
    tx: _Tx, follower: int, followee: int, edge: Edge, tag: str, condition: Any
) -> None:
    """Queue the end of follower -> followee as read (``edge``, on ``condition``, tagged ``tag``):
    both edge items, both list items and the follower's following count (an unfollow, and each
    follow a block ends). A changed edge or list fails as RACED."""
    into = followers_pk(followee, edge.shard)
    tx.add("delete", tag, GraphItem(user_pk(follower), f"O#{_id(followee)}"), condition=condition)
    tx.add("delete", "raced", GraphItem(into, f"I#{_id(follower)}"))
    tx.add("delete", "raced", GraphItem(user_pk(follower), f"OT#{_id(edge.seq)}"))
    tx.add("delete", "raced", GraphItem(into, f"IT#{_id(edge.seq)}"))
    tx.add(
        "update",
        "raced",
        GraphItem(user_pk(follower), "META"),
        actions=[GraphItem.following_count.add(-1)],
        condition=GraphItem.following_count > 0,
    )


def _set_friend(tx: _Tx, a: int, b: int, reverse: Edge, friend: bool) -> None:
    """Queue B -> A's friend flag (``reverse``, as read) set to ``friend`` on both its edge
    items: B's ``O#A`` and ``I#B`` in A's followers shard the edge names."""
    for pk, sk in ((user_pk(b), f"O#{_id(a)}"), (followers_pk(a, reverse.shard), f"I#{_id(b)}")):
        tx.add(
            "update",
            "reverse",
            GraphItem(pk, sk),
            actions=[GraphItem.friend.set(friend)],
            condition=GraphItem.seq == reverse.seq,
        )


class DynamoGraphStore:
    """The graph store behind ``warble.domain.graph.ports.GraphStore`` and, for the block and
    mute records, ``warble.domain.blocks.ports.BlockStore``. ``reads`` counts calls."""

    def __init__(self, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self._connection = bind(
            settings.aws_region,
            [(GraphItem, settings.graph_table)],
        )
        self.reads = 0

    # ---- single edges and statuses --------------------------------------------------------
    def pair(self, a: int, b: int) -> tuple[Edge | None, Edge | None]:
        """(A -> B, B -> A), both read strongly consistently from their ``O#`` edge items in one
        call: those are never spread, and carry the shard of the other side's items."""
        found = {
            (item.pk, item.sk): item
            for item in GraphItem.batch_get(
                [(user_pk(a), f"O#{_id(b)}"), (user_pk(b), f"O#{_id(a)}")], consistent_read=True
            )
        }
        self.reads += 1
        return (
            _edge(found.get((user_pk(a), f"O#{_id(b)}"))),
            _edge(found.get((user_pk(b), f"O#{_id(a)}"))),
        )

    def statuses(self, viewer: int, others: list[int]) -> dict[int, tuple[bool, bool]]:
        """{other: (viewer follows other, other follows viewer)}: the two ``O#`` edges of each
        pair, 2 keys per id, so 100 ids are 200 keys in two BatchGetItem calls."""
        me = user_pk(viewer)
        # One key once (DynamoDB refuses a repeated key): the viewer among others, or twice.
        keys = list(
            dict.fromkeys(
                key
                for o in others
                if o != viewer
                for key in ((me, f"O#{_id(o)}"), (user_pk(o), f"O#{_id(viewer)}"))
            )
        )
        if not keys:
            return {}
        self.reads += -(-len(keys) // BATCH_GET_LIMIT)
        answer = {o: (False, False) for o in others}
        for item in GraphItem.batch_get(keys, consistent_read=True, attributes_to_get=["pk", "sk"]):
            if item.pk == me:
                other = int(item.sk[2:])
                answer[other] = (True, answer[other][1])
            else:
                other = int(item.pk[2:])
                answer[other] = (answer[other][0], True)
        return answer

    def followers_among(self, user_id: int, others: list[int]) -> set[int]:
        """Which of ``others`` follow the user: their ``O#<user>`` edges (in their own
        partitions, never spread), 100 keys per BatchGetItem call."""
        if not others:
            return set()
        keys = [(user_pk(o), f"O#{_id(user_id)}") for o in dict.fromkeys(others)]
        self.reads += -(-len(keys) // BATCH_GET_LIMIT)
        return {
            int(item.pk[2:])
            for item in GraphItem.batch_get(keys, consistent_read=True, attributes_to_get=["pk"])
        }

    def follower_shards(self, user_id: int, consistent: bool = False) -> int:
        """Over how many partitions the user's followers are spread (1 until ``spread``): one
        GetItem of META. Eventually consistent will do for a write (any count it may read is
        one the shards have had, and an edge in any of them is found); a list reads it
        strongly consistent, so it sees a follow written just after a spread."""
        self.reads += 1
        found = list(
            GraphItem.batch_get(
                [(user_pk(user_id), "META")],
                consistent_read=consistent,
                attributes_to_get=["pk", "sk", "follower_shards"],
            )
        )
        return max(1, int(found[0].follower_shards or 1)) if found else 1

    def spread(self, user_id: int, shards: int) -> None:
        """Spread the user's followers over ``shards`` partitions from now on (never fewer: a
        lower count is a no-op). Edges already written stay where they are."""
        shards = min(shards, MAX_FOLLOWER_SHARDS)
        try:
            GraphItem(user_pk(user_id), "META").update(
                actions=[GraphItem.follower_shards.set(shards)],
                condition=GraphItem.follower_shards.does_not_exist()
                | (GraphItem.follower_shards < shards),
            )
        except UpdateError as exc:
            if exc.cause_response_code != "ConditionalCheckFailedException":
                raise

    def following_counts(self, user_ids: list[int]) -> dict[int, int]:
        if not user_ids:
            return {}
        self.reads += -(-len(user_ids) // BATCH_GET_LIMIT)
        counts = dict.fromkeys(user_ids, 0)
        for item in GraphItem.batch_get(
            [(user_pk(u), "META") for u in user_ids], consistent_read=True
        ):
            counts[int(item.pk[2:])] = int(item.following_count or 0)
        return counts

    # ---- follow / unfollow ----------------------------------------------------------------
    def follow(self, a: int, b: int, seq: int, reverse: Edge | None, limit: int) -> bool:
        """Write A -> B; returns the new friend flag. Raises FollowRejected. B's items go to
        the shard of A among B's followers partitions, which A's ``O#B`` records."""
        friend = reverse is not None
        shard = follower_shard(a, self.follower_shards(b))
        into = followers_pk(b, shard)
        tx = _Tx(self._connection)
        tx.add(
            "save",
            "edge",
            GraphItem(
                user_pk(a), f"O#{_id(b)}", uid=b, seq=seq, friend=friend, shard=shard or None
            ),
            condition=GraphItem.pk.does_not_exist(),
        )
        tx.add(
            "save",
            "edge-in",
            GraphItem(into, f"I#{_id(a)}", uid=a, seq=seq, friend=friend),
            condition=GraphItem.pk.does_not_exist(),
        )
        tx.add("save", "list-out", GraphItem(user_pk(a), f"OT#{_id(seq)}", uid=b))
        tx.add("save", "list-in", GraphItem(into, f"IT#{_id(seq)}", uid=a))
        tx.add(
            "update",
            "limit",
            GraphItem(user_pk(a), "META"),
            actions=[GraphItem.following_count.add(1)],
            condition=GraphItem.following_count.does_not_exist()
            | (GraphItem.following_count < limit),
        )
        # No block either way (a block committed first makes this fail; one committed after
        # ends this follow in its own transaction).
        for sk in (f"R#B#{_id(b)}", f"R#Y#{_id(b)}"):
            tx.add(
                "check", "blocked", GraphItem, user_pk(a), sk,
                condition=GraphItem.pk.does_not_exist(),
            )  # fmt: skip
        if reverse is None:
            # B must still not follow A, or the friend flags written here would be wrong.
            tx.add(
                "check",
                "reverse",
                GraphItem,
                user_pk(b),
                f"O#{_id(a)}",
                condition=GraphItem.pk.does_not_exist(),
            )
        else:
            _set_friend(tx, a, b, reverse, True)
        tx.commit()
        return friend

    def unfollow(self, a: int, b: int, edge: Edge, reverse: Edge | None) -> None:
        """Delete A -> B as read (``edge``); raises FollowRejected(RACED) if it changed."""
        tx = _Tx(self._connection)
        condition = (GraphItem.seq == edge.seq) & (GraphItem.friend == edge.friend)
        _end_follow(tx, a, b, edge, "edge", condition)
        if edge.friend and reverse is not None:
            _set_friend(tx, a, b, reverse, False)
        tx.commit()

    # ---- blocks and mutes -------------------------------------------------------------------
    def restriction(self, a: int, b: int, kind: str) -> int | None:
        """The seq of A's block ("b") or mute ("m") of B, or None: one consistent GetItem."""
        found = list(
            GraphItem.batch_get(
                [(user_pk(a), f"{RESTRICTION_PREFIXES[kind]}{_id(b)}")], consistent_read=True
            )
        )
        self.reads += 1
        return int(found[0].seq) if found else None

    def restricted_pairs(self, pairs: list[tuple[int, int]]) -> set[tuple[int, int]]:
        """The ``(a, b)`` pairs where A blocks B, B blocks A or A mutes B: the records of A's
        partition about B, in consistent BatchGetItems (100 keys a call), not a Query of every
        A's partition."""
        wanted = {
            (user_pk(a), f"{prefix}{_id(b)}"): (a, b)
            for a, b in dict.fromkeys(pairs)
            for prefix in ("R#B#", "R#Y#", "R#M#")
        }
        found = GraphItem.batch_get(
            list(wanted), consistent_read=True, attributes_to_get=["pk", "sk"]
        )
        return {wanted[(item.pk, item.sk)] for item in found}

    def restrictions(self, user_id: int) -> list[tuple[str, int, int]]:
        """Every block and mute record of the user's partition as ``(kind, other, seq)``, kind
        ``b`` (the user blocks other), ``y`` (other blocks the user) or ``m`` (mutes): one
        Query of ``R#``."""
        kinds = {prefix: kind for kind, prefix in RESTRICTION_PREFIXES.items()}
        items = self._query(
            GraphItem,
            hash_key=user_pk(user_id),
            range_key_condition=GraphItem.sk.startswith("R#"),
            consistent_read=True,
            attributes_to_get=["sk", "uid", "seq"],
        )
        return [(kinds[item.sk[:4]], int(item.uid), int(item.seq)) for item in items]

    def block(self, a: int, b: int, seq: int, out: Edge | None, into: Edge | None) -> None:
        """A blocks B, ending A -> B (``out``) and B -> A (``into``) as read, in one
        transaction. Raises FollowRejected: EXISTS if A blocks B already, RACED if an edge
        changed since it was read (read again and retry)."""
        tx = _Tx(self._connection)
        tx.add(
            "save",
            "edge",
            GraphItem(user_pk(a), f"R#B#{_id(b)}", uid=b, seq=seq),
            condition=GraphItem.pk.does_not_exist(),
        )
        tx.add("save", "block-in", GraphItem(user_pk(b), f"R#Y#{_id(a)}", uid=a, seq=seq))
        tx.add("save", "block-list", GraphItem(user_pk(a), f"RT#B#{_id(seq)}", uid=b))
        for follower, followee, edge in ((a, b, out), (b, a, into)):
            if edge is None:
                tx.add(
                    "check", "raced", GraphItem, user_pk(follower), f"O#{_id(followee)}",
                    condition=GraphItem.pk.does_not_exist(),
                )  # fmt: skip
                continue
            _end_follow(tx, follower, followee, edge, "raced", GraphItem.seq == edge.seq)
        tx.commit()

    def unblock(self, a: int, b: int, seq: int) -> None:
        """Delete A's block of B (the one of ``seq``); RACED if it changed meanwhile."""
        self._remove_restriction(a, b, "B", seq, also=GraphItem(user_pk(b), f"R#Y#{_id(a)}"))

    def mute(self, a: int, b: int, seq: int) -> None:
        """A mutes B; EXISTS if A mutes B already."""
        tx = _Tx(self._connection)
        tx.add(
            "save", "edge", GraphItem(user_pk(a), f"R#M#{_id(b)}", uid=b, seq=seq),
            condition=GraphItem.pk.does_not_exist(),
        )  # fmt: skip
        tx.add("save", "mute-list", GraphItem(user_pk(a), f"RT#M#{_id(seq)}", uid=b))
        tx.commit()

    def unmute(self, a: int, b: int, seq: int) -> None:
        self._remove_restriction(a, b, "M", seq)

    def _remove_restriction(
        self, a: int, b: int, letter: str, seq: int, also: GraphItem | None = None
    ) -> None:
        """Delete A's record of B (``R#<letter>#B``, the one of ``seq``) and its list item."""
        tx = _Tx(self._connection)
        tx.add(
            "delete", "raced", GraphItem(user_pk(a), f"R#{letter}#{_id(b)}"),
            condition=GraphItem.seq == seq,
        )  # fmt: skip
        tx.add("delete", "list", GraphItem(user_pk(a), f"RT#{letter}#{_id(seq)}"))
        if also is not None:
            tx.add("delete", "other-side", also)
        tx.commit()

    # ---- lists ----------------------------------------------------------------------------
    def _query(self, model: Any, limit: int | None = None, **kwargs: Any) -> list[Any]:
        """Run a Query page by page, counting each page as one store read."""
        results = model.query(**kwargs)
        items: list[Any] = []
        for page in results.page_iter:
            self.reads += 1
            for raw in page.get("Items", []):
                items.append(model.from_raw_data(raw))
                if limit is not None and len(items) >= limit:
                    return items
        return items

    def page(
        self, user_id: int, which: str, limit: int, before_seq: int | None
    ) -> tuple[list[tuple[int, int]], bool]:
        """Newest-first ``(uid, seq)`` of "following", "followers", "blocks" or "mutes", and
        whether more exist. Followers spread over shards: each shard's newest ``limit + 1``
        below the cursor, side by side, merged by seq (the page is among them; seqs are
        unique), so the cursor is still the last seq shown and pins a position."""
        prefix = LIST_PREFIXES[which]
        shards = self.follower_shards(user_id, consistent=True) if which == "followers" else 1
        partitions = followers_partitions(user_id, shards)

        def newest(pk: str) -> list[tuple[int, int]]:
            items = self._query(
                GraphItem,
                limit + 1,
                hash_key=pk,
                range_key_condition=_below(prefix, before_seq),
                scan_index_forward=False,
                consistent_read=True,
                page_size=limit + 1,
                attributes_to_get=["sk", "uid"],
            )
            return [(int(item.uid), int(item.sk[len(prefix) :])) for item in items]

        if len(partitions) == 1:
            rows = newest(partitions[0])
        else:
            with ThreadPoolExecutor(min(len(partitions), PARALLEL_QUERIES)) as pool:
                found = [row for part in pool.map(newest, partitions) for row in part]
            rows = heapq.nlargest(limit + 1, found, key=lambda row: row[1])
        return rows[:limit], len(rows) > limit

    def follower_pages(self, user_id: int, size: int) -> Iterator[list[tuple[int, int]]]:
        """Every follower ``(uid, seq)`` of the user, a Query page of up to ``size`` at a
        time, shard after shard (newest first within a shard, not across them): the fan-out's
        and the followers hash's read, which need everyone and no order."""
        for pk in followers_partitions(user_id, self.follower_shards(user_id, consistent=True)):
            results = GraphItem.query(
                pk,
                GraphItem.sk.startswith("IT#"),
                scan_index_forward=False,
                consistent_read=True,
                page_size=size,
                attributes_to_get=["sk", "uid"],
            )
            for page in results.page_iter:
                self.reads += 1
                rows = [
                    (int(item.uid), int(item.sk[3:]))
                    for item in map(GraphItem.from_raw_data, page.get("Items", []))
                ]
                if rows:
                    yield rows

    def friends_page(
        self, user_id: int, limit: int, after_id: int | None
    ) -> tuple[list[int], bool]:
        """Friends in id order (filtered from the following edges, at most the follow limit)."""
        start = None
        if after_id is not None:
            start = {"pk": {"S": user_pk(user_id)}, "sk": {"S": f"O#{_id(after_id)}"}}
        items = self._query(
            GraphItem,
            limit + 1,
            hash_key=user_pk(user_id),
            range_key_condition=GraphItem.sk.startswith("O#"),
            filter_condition=GraphItem.friend == True,  # noqa: E712 (a pynamodb condition)
            consistent_read=True,
            last_evaluated_key=start,
        )
        rows = [int(item.uid) for item in items]
        return rows[:limit], len(rows) > limit

    def friends(self, user_id: int) -> list[int]:
        """Every friend of a user (bounded by the follow limit: a page or two of a Query)."""
        items = self._query(
            GraphItem,
            hash_key=user_pk(user_id),
            range_key_condition=GraphItem.sk.startswith("O#"),
            filter_condition=GraphItem.friend == True,  # noqa: E712
            consistent_read=True,
            attributes_to_get=["sk", "uid"],
        )
        return [int(item.uid) for item in items]

    def friends_of(self, user_ids: list[int]) -> dict[int, list[int]]:
        """Every friend of each user: a Query each, ``PARALLEL_QUERIES`` side by side (a
        second-degree set reads up to the follow limit's lists at once)."""
        unique = list(dict.fromkeys(user_ids))
        if len(unique) <= 1:
            return {uid: self.friends(uid) for uid in unique}
        with ThreadPoolExecutor(min(len(unique), PARALLEL_QUERIES)) as pool:
            return dict(zip(unique, pool.map(self.friends, unique), strict=True))

    def following_seqs(self, user_id: int) -> dict[int, int]:
        """Everyone the user follows, with each follow's ``seq`` (its version in the following
        set in Redis): one Query of the ``O#`` edges, at most the follow limit."""
        items = self._query(
            GraphItem,
            hash_key=user_pk(user_id),
            range_key_condition=GraphItem.sk.startswith("O#"),
            consistent_read=True,
            attributes_to_get=["sk", "uid", "seq"],
        )
        return {int(item.uid): int(item.seq) for item in items}

    # ---- reconciliation: the source of truth of followers_count --------------------------
    def follow_edges(self) -> Iterator[tuple[int, int]]:
        """Every follow (follower, followee): a full scan of the ``O#`` edge items."""
        for item in GraphItem.scan(GraphItem.sk.startswith("O#"), attributes_to_get=["pk", "uid"]):
            yield int(item.pk[2:]), int(item.uid)

    def count_followers(self, user_id: int) -> int:
        """How many follow the user now (a COUNT query of the ``I#`` edge items a shard)."""
        shards = self.follower_shards(user_id, consistent=True)
        return sum(
            int(GraphItem.count(pk, GraphItem.sk.startswith("I#"), consistent_read=True))
            for pk in followers_partitions(user_id, shards)
        )


# ---- the graph table's stream -------------------------------------------------------------------
class GraphErasure:
    """An account's items in the graph table, a bounded slice at a time (the account deletion,
    ``warble.dal.erasure``): its follows both ways, its blocks and mutes and the blocks of it,
    each deleted with the items the write that made it wrote."""

    def __init__(self, items: erasing.Items) -> None:
        self._items = items
        self._table = items.settings.graph_table

    def erase_own(self, user_id: int, limit: int) -> int:
        """A slice of what is left under the account's own key (its META, ...), then under its
        followers shards (empty once ``followers`` is done; kept here so nothing outlives it)."""
        for pk in self._partitions(user_id):
            gone = erasing.erase_partition(self._items, self._table, pk, limit)
            if gone:
                return gone
        return 0

    def erase_degrees(self, user_id: int, limit: int) -> int:
        """A slice of the account's second-degree set (the degrees table)."""
        table = self._items.settings.degrees_table
        return erasing.erase_partition(self._items, table, f"D2#{user_id}", limit)

    def _partitions(self, user_id: int) -> list[str]:
        """The account's own partition and its followers shards: as many as its META says,
        or every one the store may have written once META is gone (an interrupted run)."""
        meta = self._items.batch_get(
            self._table, [erasing.key(user_pk(user_id), "META")], "pk, follower_shards"
        )
        shards = (erasing.num(meta[0], "follower_shards") or 1) if meta else MAX_FOLLOWER_SHARDS
        return followers_partitions(user_id, shards)

    def followers(self, user_id: int, limit: int) -> list[int]:
        """Per follower F: the four items of F -> X (X's two in the shard they are in) and F's
        following_count lowered, one transaction for 20 followers, on the condition that each
        edge is still there. Shard by shard, up to ``limit`` followers a slice."""
        graph, items = self._table, self._items
        found: list[tuple[str, int, int]] = []  # (X's partition, follower, seq)
        for pk in self._partitions(user_id):
            if len(found) >= limit:
                break
            page, _more = items.query(graph, pk, "I#", limit - len(found), "sk, seq")
            found += [
                (pk, int(erasing.text(i, "sk")[2:]), erasing.num(i, "seq") or 0) for i in page
            ]
        done: list[int] = []
        for start in range(0, len(found), 20):
            edges = found[start : start + 20]
            actions: list[dict[str, Any]] = []
            for mine, follower, seq in edges:
                them = user_pk(follower)
                actions += [
                    erasing.conditional_delete(graph, mine, f"I#{_id(follower)}"),
                    erasing.plain_delete(graph, mine, f"IT#{_id(seq)}"),
                    erasing.plain_delete(graph, them, f"O#{_id(user_id)}"),
                    erasing.plain_delete(graph, them, f"OT#{_id(seq)}"),
                    {
                        "Update": {
                            "TableName": graph,
                            "Key": erasing.key(them, "META"),
                            "UpdateExpression": "ADD following_count :minus",
                            "ExpressionAttributeValues": {":minus": {"N": "-1"}},
                        }
                    },
                ]
            if items.transact(actions):
                done += [follower for _, follower, _ in edges]
        if found and not done:
            raise Raced()  # every transaction lost its race with an unfollow: run again
        return done

    def following(self, user_id: int, limit: int) -> list[int]:
        """Per followed B: the four items of X -> B (B's two in the shard X's ``O#B`` names;
        X's own following_count goes with its META item, in ``erase_own``), 25 to a
        transaction."""
        graph, me, items = self._table, user_pk(user_id), self._items
        found, _more = items.query(graph, me, "O#", limit, "sk, seq, #shard")
        done: list[int] = []
        for start in range(0, len(found), 25):
            edges = [
                (
                    int(erasing.text(i, "sk")[2:]),
                    erasing.num(i, "seq") or 0,
                    erasing.num(i, "shard") or 0,
                )
                for i in found[start : start + 25]
            ]
            actions: list[dict[str, Any]] = []
            for followed, seq, shard in edges:
                theirs = followers_pk(followed, shard)
                actions += [
                    erasing.conditional_delete(graph, me, f"O#{_id(followed)}"),
                    erasing.plain_delete(graph, me, f"OT#{_id(seq)}"),
                    erasing.plain_delete(graph, theirs, f"I#{_id(user_id)}"),
                    erasing.plain_delete(graph, theirs, f"IT#{_id(seq)}"),
                ]
            if items.transact(actions):
                done += [followed for followed, _, _ in edges]
        if found and not done:
            raise Raced()  # every transaction lost its race with an unfollow: run again
        return done

    def restrictions(self, user_id: int, limit: int) -> tuple[int, list[int]]:
        """X's block and mute records and list items, and both sides of the blocks of X by
        others (``R#Y#A`` on X, ``R#B#X`` and its list item on A)."""
        graph, me = self._table, user_pk(user_id)
        found, _more = self._items.query(graph, me, "R", limit, "sk, seq")
        doomed: list[erasing.Doomed] = []
        others: list[int] = []
        for item in found:
            sk, seq = erasing.text(item, "sk"), erasing.num(item, "seq")
            doomed.append((graph, erasing.key(me, sk)))
            if sk.startswith("R#B#"):
                other = int(sk[4:])
                doomed.append((graph, erasing.key(user_pk(other), f"R#Y#{_id(user_id)}")))
                others.append(other)
            elif sk.startswith("R#Y#"):
                other = int(sk[4:])
                doomed.append((graph, erasing.key(user_pk(other), f"R#B#{_id(user_id)}")))
                if seq is not None:
                    doomed.append((graph, erasing.key(user_pk(other), f"RT#B#{_id(seq)}")))
                others.append(other)
            elif sk.startswith("R#M#"):
                others.append(int(sk[4:]))
        self._items.delete(doomed)
        return len(found), others


# ---- bulk import (the seed, infra/local/seed.py: items written as they are, no stream) ------
Imported = tuple[str, dict[str, Any]]  # (table, serialized item)


def import_follow(
    settings: Settings, follower: int, followee: int, seq: int, friend: bool, shards: int = 1
) -> list[Imported]:
    """The four items of a follow, as ``DynamoGraphStore.follow`` writes them to a followee
    spread over ``shards`` (its META's, ``import_meta``)."""
    a, b, table = follower, followee, settings.graph_table
    shard = follower_shard(a, min(shards, MAX_FOLLOWER_SHARDS))
    into = followers_pk(b, shard)
    items = (
        GraphItem(user_pk(a), f"O#{_id(b)}", uid=b, seq=seq, friend=friend, shard=shard or None),
        GraphItem(into, f"I#{_id(a)}", uid=a, seq=seq, friend=friend),
        GraphItem(user_pk(a), f"OT#{_id(seq)}", uid=b),
        GraphItem(into, f"IT#{_id(seq)}", uid=a),
    )
    return [(table, item.serialize()) for item in items]


def import_meta(
    settings: Settings, user_id: int, following_count: int, follower_shards: int = 1
) -> Imported:
    """The user's META: its following count, and its followers' spread when above one."""
    spread = min(follower_shards, MAX_FOLLOWER_SHARDS)
    return settings.graph_table, GraphItem(
        user_pk(user_id),
        "META",
        following_count=following_count,
        follower_shards=spread if spread > 1 else None,
    ).serialize()


def _followee(pk: str) -> int:
    """The followee of a followers partition: ``U#<id>`` or its shard ``U#<id>#<k>``."""
    base, _, shard = pk.rpartition("#") if pk.count("#") == 2 else (pk, "", "")
    return prefixed_id(base if shard.isdigit() else pk, "U#")


def decode_record(record: dict[str, Any]) -> list[Event]:
    """A follow is read from its ``U#<followee> / I#<follower>`` edge item: INSERT is Followed,
    REMOVE is Unfollowed. A block from its ``U#<blocker> / R#B#<blocked>`` item (Blocked,
    Unblocked), a mute from ``U#<muter> / R#M#<muted>`` (Muted, Unmuted). Every other item (the
    other edge, ``R#Y#``, list items, META) and every MODIFY (a friend flag flipped) is no
    event, so each change is seen exactly once."""
    item = StreamItem.of(record)
    sk = item.string_key("sk")
    if item.name not in ("INSERT", "REMOVE"):
        return []
    added = item.name == "INSERT"
    if sk.startswith(("R#B#", "R#M#")):
        owner = prefixed_id(item.string_key("pk"), "U#")
        other = prefixed_id(sk, sk[:4])
        seq = number(item.image(), "seq")
        if sk.startswith("R#B#"):
            return [(Blocked if added else Unblocked)(blocker=owner, blocked=other, seq=seq)]
        return [(Muted if added else Unmuted)(muter=owner, muted=other, seq=seq)]
    if not sk.startswith("I#"):
        return []
    followee = _followee(item.string_key("pk"))
    follower = prefixed_id(sk, "I#")
    kind = Followed if item.name == "INSERT" else Unfollowed
    image = item.image()
    friend = image.get("friend", {}).get("BOOL") is True  # the edge's flag as it was written
    return [kind(follower=follower, followee=followee, seq=number(image, "seq"), friend=friend)]
