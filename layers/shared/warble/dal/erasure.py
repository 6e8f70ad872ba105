"""An account's items in DynamoDB, deleted a bounded slice at a time (the deletion workflow,
``warble.domain.deletion``; docs/accounts.md lists every family and how it goes).

Each slice is one Query of the account's own partition (the first ``limit`` items still
there: what a slice deleted is not found again, so a slice needs no cursor and a repeated one
finds less), then its deletes: BatchWriteItem where no count depends on the items (25 to a
call, unprocessed items sent again), TransactWriteItems where one does. The counters the
streams keep (followers_count, like_count, tweet_count, ...) move through the stream records
of the items deleted here exactly as after the users' own unfollows, unlikes and deletions;
a delete of what is gone makes no stream record, so a repeated slice counts nothing twice.
``following_count`` is the one count a stream does not keep: it is lowered in the same
transaction that deletes the follow, on the condition that the follow is still there.

The stores' own item designs are in their modules (warble.dal.graph, likes, tweets,
notifications, conversations, discover_table, connections, counters); the keys are spelled
here the way those modules spell them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Any

from warble.dal.counters import SUB_ITEMS, main_key, sub_keys
from warble.dal.dynamo import _session
from warble.dal.likes import likers_partitions, likers_pk
from warble.domain.deletion.ports import (
    Conversations,
    ErasedTweet,
    Places,
    Raced,
    Tweets,
    Unread,
)
from warble.settings import Settings, get_settings
from warble.tracing import instrument

# The counts a deleted account's counter items wait for: 0 once the streams applied every
# removal (a tweet's reply_count is not among them: others' replies stay when a tweet goes).
_WAITED_FOR = ("followers_count", "tweet_count", "like_count", "retweet_count")
BATCH_WRITE_LIMIT = 25
# Users whose recent likes and retweets one slice drops at most (a celebrity's tweets may each
# have a million likers; past this, a liker's removal mark goes with the hash's TTL), and the
# likers read of each tweet.
REACTORS_PER_SLICE = 50_000
LIKERS_PER_TWEET = 10_000
BATCH_GET_LIMIT = 100
TRANSACT_LIMIT = 100


def _id(value: int) -> str:
    return f"{value:019d}"


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def _num(item: dict[str, Any], name: str) -> int | None:
    value = item.get(name)
    return int(value["N"]) if isinstance(value, dict) and "N" in value else None


def _str(item: dict[str, Any], name: str) -> str:
    value = item.get(name)
    return str(value["S"]) if isinstance(value, dict) and "S" in value else ""


class DynamoErasure:
    """``warble.domain.deletion.ports.TableErasure`` on the stack's tables."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._s = settings or get_settings()

    @cached_property
    def _client(self) -> Any:
        instrument("botocore")
        return _session().create_client("dynamodb", region_name=self._s.aws_region)

    # ---- the three ways to the tables ------------------------------------------------------
    def _query(
        self,
        table: str,
        pk: str,
        prefix: str | None,
        limit: int,
        projection: str | None = None,
        key_name: str = "pk",
        numeric: bool = False,
    ) -> tuple[list[dict[str, Any]], bool]:
        """The first ``limit`` items of a partition (sort keys starting with ``prefix``),
        strongly consistent; and whether more follow."""
        names = {"#p": key_name}
        values: dict[str, Any] = {":p": {"N" if numeric else "S": pk}}
        condition = "#p = :p"
        if prefix is not None:
            names["#s"] = "sk"
            values[":s"] = {"S": prefix}
            condition += " AND begins_with(#s, :s)"
        request: dict[str, Any] = {
            "TableName": table,
            "KeyConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
            "ConsistentRead": True,
            "Limit": limit,
        }
        if projection:
            request["ProjectionExpression"] = projection
            for name in projection.replace(" ", "").split(","):
                if name.startswith("#"):
                    request["ExpressionAttributeNames"][name] = name[1:]
        answer = self._client.query(**request)
        return list(answer.get("Items", [])), "LastEvaluatedKey" in answer

    def _delete(self, requests: Iterable[tuple[str, dict[str, Any]]]) -> int:
        """BatchWriteItem deletes of (table, key), 25 to a call; what DynamoDB leaves
        unprocessed (throttling) is sent again with a back-off."""
        pending = list(dict.fromkeys((table, _frozen(key)) for table, key in requests))
        done = 0
        for start in range(0, len(pending), BATCH_WRITE_LIMIT):
            chunk = pending[start : start + BATCH_WRITE_LIMIT]
            items: dict[str, list[Any]] = {}
            for table, key in chunk:
                items.setdefault(table, []).append({"DeleteRequest": {"Key": _thawed(key)}})
            for attempt in range(8):
                answer = self._client.batch_write_item(RequestItems=items)
                items = answer.get("UnprocessedItems") or {}
                if not items:
                    break
                time.sleep(min(0.05 * 2**attempt, 1.0))
            else:
                raise Raced()
            done += len(chunk)
        return done

    def _transact(self, actions: list[dict[str, Any]]) -> bool:
        """One TransactWriteItems; False when its conditions cancelled it (a race with the
        user's own change: the caller reads again)."""
        try:
            self._client.transact_write_items(TransactItems=actions)
        except self._client.exceptions.TransactionCanceledException:
            return False
        return True

    # ---- the follow graph ------------------------------------------------------------------
    def followers(self, user_id: int, limit: int) -> list[int]:
        """Per follower F: the four items of F -> X and F's following_count lowered, one
        transaction for 20 followers, on the condition that each edge is still there."""
        graph, me = self._s.graph_table, f"U#{user_id}"
        found, _more = self._query(graph, me, "I#", limit, "sk, seq")
        done: list[int] = []
        for start in range(0, len(found), 20):
            edges = [
                (int(_str(i, "sk")[2:]), _num(i, "seq") or 0) for i in found[start : start + 20]
            ]
            actions: list[dict[str, Any]] = []
            for follower, seq in edges:
                them = f"U#{follower}"
                actions += [
                    _conditional_delete(graph, me, f"I#{_id(follower)}"),
                    _plain_delete(graph, me, f"IT#{_id(seq)}"),
                    _plain_delete(graph, them, f"O#{_id(user_id)}"),
                    _plain_delete(graph, them, f"OT#{_id(seq)}"),
                    {
                        "Update": {
                            "TableName": graph,
                            "Key": _key(them, "META"),
                            "UpdateExpression": "ADD following_count :minus",
                            "ExpressionAttributeValues": {":minus": {"N": "-1"}},
                        }
                    },
                ]
            if self._transact(actions):
                done += [follower for follower, _ in edges]
        if found and not done:
            raise Raced()  # every transaction lost its race with an unfollow: run again
        return done

    def following(self, user_id: int, limit: int) -> list[int]:
        """Per followed B: the four items of X -> B (X's own following_count goes with its
        META item, in ``partitions``), 25 to a transaction."""
        graph, me = self._s.graph_table, f"U#{user_id}"
        found, _more = self._query(graph, me, "O#", limit, "sk, seq")
        done: list[int] = []
        for start in range(0, len(found), 25):
            edges = [
                (int(_str(i, "sk")[2:]), _num(i, "seq") or 0) for i in found[start : start + 25]
            ]
            actions: list[dict[str, Any]] = []
            for followed, seq in edges:
                them = f"U#{followed}"
                actions += [
                    _conditional_delete(graph, me, f"O#{_id(followed)}"),
                    _plain_delete(graph, me, f"OT#{_id(seq)}"),
                    _plain_delete(graph, them, f"I#{_id(user_id)}"),
                    _plain_delete(graph, them, f"IT#{_id(seq)}"),
                ]
            if self._transact(actions):
                done += [followed for followed, _ in edges]
        if found and not done:
            raise Raced()  # every transaction lost its race with an unfollow: run again
        return done

    def restrictions(self, user_id: int, limit: int) -> tuple[int, list[int]]:
        """X's block and mute records and list items, and both sides of the blocks of X by
        others (``R#Y#A`` on X, ``R#B#X`` and its list item on A)."""
        graph, me = self._s.graph_table, f"U#{user_id}"
        found, _more = self._query(graph, me, "R", limit, "sk, seq")
        doomed: list[tuple[str, dict[str, Any]]] = []
        others: list[int] = []
        for item in found:
            sk, seq = _str(item, "sk"), _num(item, "seq")
            doomed.append((graph, _key(me, sk)))
            if sk.startswith("R#B#"):
                other = int(sk[4:])
                doomed.append((graph, _key(f"U#{other}", f"R#Y#{_id(user_id)}")))
                others.append(other)
            elif sk.startswith("R#Y#"):
                other = int(sk[4:])
                doomed.append((graph, _key(f"U#{other}", f"R#B#{_id(user_id)}")))
                if seq is not None:
                    doomed.append((graph, _key(f"U#{other}", f"RT#B#{_id(seq)}")))
                others.append(other)
            elif sk.startswith("R#M#"):
                others.append(int(sk[4:]))
        self._delete(doomed)
        return len(found), others

    # ---- likes and tweets ------------------------------------------------------------------
    def likes(self, user_id: int, limit: int) -> list[tuple[int, int]]:
        """Each like's three items (the edge, X's list item, the tweet's likers item, in the
        likers partition the edge's ``shards`` says)."""
        likes, me = self._s.likes_table, f"U#{user_id}"
        found, _more = self._query(likes, me, "T#", limit, "sk, seq, author_id, shards")
        doomed: list[tuple[str, dict[str, Any]]] = []
        liked: list[tuple[int, int]] = []
        for item in found:
            sk, seq = _str(item, "sk"), _num(item, "seq") or 0
            tweet = int(sk[2:])
            doomed += [
                (likes, _key(me, sk)),
                (likes, _key(me, f"LT#{_id(seq)}")),
                (likes, _key(likers_pk(tweet, seq, _num(item, "shards") or 0), f"LU#{_id(seq)}")),
            ]
            liked.append((tweet, _num(item, "author_id") or 0))
        self._delete(doomed)
        return liked

    def tweets(self, user_id: int, limit: int) -> Tweets:
        """Each tweet with its index items (by id, and a retweet's one-per-user item)."""
        s = self._s
        found, _more = self._query(
            s.tweets_table, str(user_id), None, limit,
            "tweet_id, reply_to_author, retweet_of, retweet_of_author, #text",
            key_name="author_id", numeric=True,
        )  # fmt: skip
        doomed: list[tuple[str, dict[str, Any]]] = []
        erased: list[ErasedTweet] = []
        for item in found:
            tweet_id = _num(item, "tweet_id") or 0
            retweet_of = _num(item, "retweet_of")
            key = {"author_id": {"N": str(user_id)}, "tweet_id": {"N": str(tweet_id)}}
            doomed += [
                (s.tweets_table, key),
                (s.tweet_index_table, {"pk": {"S": f"T#{tweet_id}"}}),
            ]
            if retweet_of is not None:
                doomed.append((s.tweet_index_table, {"pk": {"S": f"RT#{user_id}#{retweet_of}"}}))
            erased.append(
                ErasedTweet(
                    tweet_id=tweet_id,
                    reply_to_author=_num(item, "reply_to_author"),
                    retweet_of=retweet_of,
                    retweet_of_author=_num(item, "retweet_of_author"),
                    text=_str(item, "text"),
                )
            )
        reactors = self.reactors([t.tweet_id for t in erased])  # before their likes go
        self._delete(doomed)
        return Tweets(erased, reactors)

    def reactors(self, tweet_ids: Sequence[int]) -> list[int]:
        """The counters say which tweets have likes or retweets (one BatchGetItem a hundred);
        only those are looked into: their likers' items, their retweets' index entries."""
        s = self._s
        reacted: list[tuple[int, bool, bool]] = []
        counted = self._counters([f"T#{t}" for t in tweet_ids], ("like_count", "retweet_count"))
        for pk, (counts, _subs) in counted.items():
            liked, retweeted = counts["like_count"], counts["retweet_count"]
            if liked or retweeted:
                reacted.append((int(pk[2:]), liked > 0, retweeted > 0))
        users: list[int] = []
        for tweet, liked, retweeted in reacted:
            if len(users) >= REACTORS_PER_SLICE:
                break  # the rest's removal marks age out with their hashes (bounded memory)
            if liked:
                wanted = LIKERS_PER_TWEET
                for partition, _shards in likers_partitions(tweet):
                    likers, _more = self._query(s.likes_table, partition, "LU#", wanted, "uid")
                    users += [_num(i, "uid") or 0 for i in likers]
                    wanted -= len(likers)
                    if wanted <= 0:
                        break
            if retweeted:
                answer = self._client.query(
                    TableName=s.tweets_table, IndexName="retweets",
                    KeyConditionExpression="retweet_of = :t",
                    ExpressionAttributeValues={":t": {"N": str(tweet)}},
                )  # fmt: skip
                users += [_num(i, "author_id") or 0 for i in answer.get("Items", [])]
        return list(dict.fromkeys(u for u in users if u))

    # ---- conversations and Discover --------------------------------------------------------
    def conversations(self, user_id: int, limit: int) -> Conversations:
        """Conversation by conversation: its messages (``limit`` at most this slice; the rest
        the next), then its resend claims, pair item, META and both memberships."""
        s, me = self._s, f"U#{user_id}"
        found, _more = self._query(s.conversations_table, me, "C#", 10, "sk, other_id")
        deleted, finished = 0, list[tuple[int, int]]()
        for item in found:
            conversation, other = int(_str(item, "sk")[2:]), _num(item, "other_id") or 0
            messages, more = self._query(
                s.messages_table, str(conversation), None, max(limit - deleted, 1),
                "conversation_id, message_id", key_name="conversation_id", numeric=True,
            )  # fmt: skip
            deleted += self._delete(
                (s.messages_table, {
                    "conversation_id": m["conversation_id"], "message_id": m["message_id"],
                })
                for m in messages
            )  # fmt: skip
            if more:
                return Conversations(deleted, finished)
            low, high = sorted((user_id, other))
            doomed = [
                (s.conversations_table, _key(f"P#{low}#{high}", "CONV")),
                (s.conversations_table, _key(f"C#{conversation}", "META")),
                (s.conversations_table, _key(f"U#{other}", f"C#{conversation}")),
                (s.conversations_table, _key(me, f"C#{conversation}")),
            ]
            for sender in (user_id, other):
                claims, _ = self._query(s.conversations_table, f"K#{conversation}#{sender}",
                                        None, 1000, "pk, sk")  # fmt: skip
                doomed += [(s.conversations_table, _key(_str(c, "pk"), _str(c, "sk")))
                           for c in claims]  # fmt: skip
            deleted += self._delete(doomed)
            finished.append((conversation, other))
            if deleted >= limit:
                break
        return Conversations(deleted, finished)

    def places(self, user_id: int, limit: int) -> Places:
        """The location and swipes (Discover table), then the matches: the pair's record,
        both users' list items, the conversations table's MATCH item and the other's swipe."""
        s, me = self._s, f"U#{user_id}"
        found, _more = self._query(s.discover_table, me, None, limit, "sk, cell")
        cells, swiped = [], []
        doomed = [(s.discover_table, _key(me, _str(i, "sk"))) for i in found]
        for item in found:
            sk = _str(item, "sk")
            if sk == "LOC" and _str(item, "cell"):
                cells.append(_str(item, "cell"))
            elif sk.startswith("S#"):
                swiped.append(int(sk[2:]))
        matches, _more = self._query(s.matches_table, me, "M#", limit, "sk, #other")
        matched = []
        for item in matches:
            other = _num(item, "other") or 0
            low, high = sorted((user_id, other))
            doomed += [
                (s.matches_table, _key(me, _str(item, "sk"))),
                (s.matches_table, _key(f"U#{other}", _str(item, "sk"))),
                (s.matches_table, _key(f"M#{low}#{high}", "M")),
                (s.conversations_table, _key(f"P#{low}#{high}", "MATCH")),
                # The other's swipe on X, known here because they matched (an unmatched
                # swipe on X is stored only under its swiper: docs/accounts.md's gaps).
                (s.discover_table, _key(f"U#{other}", f"S#{user_id}")),
            ]
            matched.append(other)
        self._delete(doomed)
        return Places(len(found) + len(matches), cells, swiped, matched)

    # ---- notifications ---------------------------------------------------------------------
    def notifications_caused(self, causes: Sequence[tuple[int, str, str]]) -> list[Unread]:
        """The dedupe items of (recipient, cause, kind) read in BatchGetItem calls; each found
        goes with the notification it names."""
        table = self._s.notifications_table
        wanted = list(dict.fromkeys(causes))
        kinds = {(f"U#{r}", f"D#{c}"): (r, k) for r, c, k in wanted}
        found: list[Unread] = []
        doomed: list[tuple[str, dict[str, Any]]] = []
        for start in range(0, len(wanted), BATCH_GET_LIMIT):
            keys = [_key(f"U#{r}", f"D#{c}") for r, c, _ in wanted[start : start + BATCH_GET_LIMIT]]
            for item in self._batch_get(table, keys, "pk, sk, notification_id"):
                pk, sk = _str(item, "pk"), _str(item, "sk")
                recipient, kind = kinds[(pk, sk)]
                doomed.append((table, _key(pk, sk)))
                notification = _num(item, "notification_id")
                if notification is not None:
                    doomed.append((table, _key(pk, f"N#{_id(notification)}")))
                    found.append(Unread(recipient, kind, notification))
        self._delete(doomed)
        return found

    def _batch_get(
        self, table: str, keys: list[dict[str, Any]], projection: str
    ) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        request: dict[str, Any] = {
            table: {"Keys": keys, "ConsistentRead": True, "ProjectionExpression": projection}
        }
        for attempt in range(8):
            answer = self._client.batch_get_item(RequestItems=request)
            items += answer.get("Responses", {}).get(table, [])
            request = answer.get("UnprocessedKeys") or {}
            if not request:
                return items
            time.sleep(min(0.05 * 2**attempt, 1.0))
        raise Raced()

    # ---- what is left under the account's own keys -----------------------------------------
    def partitions(self, user_id: int, limit: int) -> int:
        s = self._s
        owned = [
            (s.notifications_table, f"U#{user_id}"),
            (s.graph_table, f"U#{user_id}"),
            (s.likes_table, f"U#{user_id}"),
            (s.discover_table, f"U#{user_id}"),
            (s.matches_table, f"U#{user_id}"),
            (s.conversations_table, f"U#{user_id}"),
            (s.degrees_table, f"D2#{user_id}"),
            (s.connections_table, f"USER#{user_id}"),
        ]
        for table, pk in owned:
            found, _more = self._query(table, pk, None, limit, "pk, sk")
            if found:
                doomed = [(table, _key(pk, _str(i, "sk"))) for i in found]
                if table == s.connections_table:  # each connection's owner item too
                    doomed += [(table, _key(_str(i, "sk"), "META"))
                               for i in found if _str(i, "sk").startswith("CONN#")]  # fmt: skip
                return self._delete(doomed)
        return 0

    # ---- counters --------------------------------------------------------------------------
    def _counters(
        self, keys: Sequence[str], fields: Sequence[str]
    ) -> dict[str, tuple[dict[str, int], list[str]]]:
        """Each counter item found among ``keys``: its ``fields`` with its sub-items' added (a
        hot counter's deltas are spread over them: warble.dal.counters), and their keys. One
        BatchGetItem a hundred, and one more a hundred sub-items of the hot ones."""
        table = self._s.counters_table
        found: dict[str, tuple[dict[str, int], list[str]]] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), BATCH_GET_LIMIT):
            chunk = [{"pk": {"S": k}} for k in unique[start : start + BATCH_GET_LIMIT]]
            for item in self._batch_get(table, chunk, ", ".join(("pk", SUB_ITEMS, *fields))):
                pk = _str(item, "pk")
                counts = {name: _num(item, name) or 0 for name in fields}
                found[pk] = (counts, sub_keys(pk, _num(item, SUB_ITEMS) or 0))
        subs = [sub for _, hot in found.values() for sub in hot]
        for start in range(0, len(subs), BATCH_GET_LIMIT):
            chunk = [{"pk": {"S": k}} for k in subs[start : start + BATCH_GET_LIMIT]]
            for item in self._batch_get(table, chunk, ", ".join(("pk", *fields))):
                counts = found[main_key(_str(item, "pk"))][0]
                for name in fields:
                    counts[name] += _num(item, name) or 0
        return found

    def _drop(self, counters: dict[str, tuple[dict[str, int], list[str]]]) -> None:
        """Counter items with their sub-items, the sub-items first: an item deleted before
        them would leave them where nothing names them."""
        table = self._s.counters_table
        self._delete((table, {"pk": {"S": sub}}) for _, subs in counters.values() for sub in subs)
        self._delete((table, {"pk": {"S": pk}}) for pk in counters)

    def settle_counters(self, user_id: int | None, tweet_ids: Sequence[int]) -> list[int]:
        """Counter items whose counts are all 0 (or absent) are deleted, with their sub-items;
        the others are answered (a user's as -1). A tweet's reply_count is not waited for:
        replies of others stay when a tweet goes."""
        keys = ([f"U#{user_id}"] if user_id is not None else []) + [f"T#{t}" for t in tweet_ids]
        moving: list[int] = []
        settled: dict[str, tuple[dict[str, int], list[str]]] = {}
        for pk, (counts, subs) in self._counters(keys, _WAITED_FOR).items():
            if any(counts.values()):
                moving.append(-1 if pk.startswith("U#") else int(pk[2:]))
            else:
                settled[pk] = (counts, subs)
        self._drop(settled)
        return moving

    def drop_counters(self, user_id: int | None, tweet_ids: Sequence[int]) -> None:
        keys = ([f"U#{user_id}"] if user_id is not None else []) + [f"T#{t}" for t in tweet_ids]
        self._drop(self._counters(keys, ()))


def _conditional_delete(table: str, pk: str, sk: str) -> dict[str, Any]:
    return {
        "Delete": {
            "TableName": table,
            "Key": _key(pk, sk),
            "ConditionExpression": "attribute_exists(pk)",
        }
    }


def _plain_delete(table: str, pk: str, sk: str) -> dict[str, Any]:
    return {"Delete": {"TableName": table, "Key": _key(pk, sk)}}


def _frozen(key: dict[str, Any]) -> tuple[tuple[str, str, str], ...]:
    return tuple(sorted((name, kind, value) for name, typed in key.items()
                        for kind, value in typed.items()))  # fmt: skip


def _thawed(key: tuple[tuple[str, str, str], ...]) -> dict[str, Any]:
    return {name: {kind: value} for name, kind, value in key}
