"""Tweets in DynamoDB (pynamodb).

``TweetsTable``: partition key ``author_id``, sort key ``tweet_id`` (Snowflake), as seed 001 says:
a user's timeline is one Query of one partition in reverse sort order. A sparse, keys-only global
index ``replies`` (``reply_to``, ``tweet_id``) lists a tweet's replies newest first; another,
``retweets`` (``retweet_of``, ``tweet_id``), finds a deleted tweet's retweets (they go with it).

``TweetIndexTable`` holds two kinds of small items, written in the same TransactWriteItems as
the tweet itself:
- ``T#<tweet_id> -> author_id``: finds a tweet from its id alone with one strongly consistent
  GetItem. Chosen over a keys-only GSI on ``tweet_id`` because a GSI is eventually consistent,
  so a client reading the tweet it has just posted (or a reply naming a brand-new parent) could
  get a 404; it costs one more item in the write transaction. The item's existence is also what
  ``reply_to`` and ``retweet_of`` are checked against, atomically, inside the transaction: a
  tweet deleted a moment earlier can no longer be replied to.
- ``RT#<user_id>#<original_id> -> retweet_id``: makes "one retweet per user per tweet" a
  conditional put rather than a read-then-write race.
- ``K#<user_id>#<sha256 of the Idempotency-Key> -> tweet_id, fingerprint`` (TTL ``expires_at``,
  24 hours): the post's key claimed in its own transaction, so a repeat creates nothing new even
  when Redis lost the key's record (the HTTP gate's replay, ``warble.dal.idempotency``); no
  round trip more.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from pynamodb.attributes import (
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
)
from pynamodb.exceptions import DoesNotExist, TransactWriteError, UpdateError
from pynamodb.indexes import GlobalSecondaryIndex, KeysOnlyProjection
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from warble.dal import erasing
from warble.dal.dynamo import CONDITION_FAILED, StreamItem, bind, cancellation_codes, number
from warble.dal.dynamo import required_number as _required
from warble.dal.graph import PARALLEL_QUERIES, GraphItem, check_not_blocked
from warble.dal.media import MediaItem, claim
from warble.domain.blocks.ports import BlockedByAuthor
from warble.domain.deletion.ports import ErasedTweet
from warble.domain.media.ports import AttachedMedia
from warble.domain.shared import RequestKey
from warble.domain.text import hashtags
from warble.domain.tweets.ports import (
    AlreadyRetweeted,
    MediaTaken,
    ParentMissing,
    Repeated,
    StoredTweet,
    TweetGone,
)
from warble.events import Event, TweetDeleted, TweetPosted
from warble.settings import Settings, get_settings


class _Replies(GlobalSecondaryIndex["TweetItem"]):
    class Meta:
        index_name = "replies"
        projection = KeysOnlyProjection()

    reply_to = NumberAttribute(hash_key=True)
    tweet_id = NumberAttribute(range_key=True)


class _Retweets(GlobalSecondaryIndex["TweetItem"]):
    class Meta:
        index_name = "retweets"
        projection = KeysOnlyProjection()

    retweet_of = NumberAttribute(hash_key=True)
    tweet_id = NumberAttribute(range_key=True)


class MediaCopy(MapAttribute[str, Any]):
    """What a tweet shows of one of its media (``AttachedMedia``)."""

    id = NumberAttribute()
    content_type = UnicodeAttribute()
    size = NumberAttribute()
    width = NumberAttribute()
    height = NumberAttribute()
    original_key = UnicodeAttribute()
    preview_key = UnicodeAttribute()
    blurhash = UnicodeAttribute()
    alt_text = UnicodeAttribute(default="")
    created_at_ms = NumberAttribute()
    rev = NumberAttribute(default=0)


def _copy(media: AttachedMedia) -> MediaCopy:
    return MediaCopy(**media.fields())


def _attached(copy: MediaCopy) -> AttachedMedia:
    return AttachedMedia(
        id=int(copy.id),
        content_type=copy.content_type,
        size=int(copy.size),
        width=int(copy.width),
        height=int(copy.height),
        original_key=copy.original_key,
        preview_key=copy.preview_key,
        blurhash=copy.blurhash,
        alt_text=copy.alt_text or "",
        created_at_ms=int(copy.created_at_ms),
        rev=int(copy.rev or 0),
    )


class TweetItem(Model):
    class Meta:
        table_name = "tweets"  # replaced from settings on first use
        region = "us-east-1"

    author_id = NumberAttribute(hash_key=True)
    tweet_id = NumberAttribute(range_key=True)
    text = UnicodeAttribute(default="")
    created_at_ms = NumberAttribute()
    reply_to = NumberAttribute(null=True)
    reply_to_author = NumberAttribute(null=True)
    retweet_of = NumberAttribute(null=True)
    retweet_of_author = NumberAttribute(null=True)
    media_ids = ListAttribute(of=UnicodeAttribute, null=True)
    media = ListAttribute(of=MediaCopy, null=True)
    hashtags = ListAttribute(of=UnicodeAttribute, null=True)
    replies = _Replies()
    retweets = _Retweets()


class TweetIndexItem(Model):
    class Meta:
        table_name = "tweet-index"
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    author_id = NumberAttribute(null=True)
    tweet_id = NumberAttribute(null=True)
    fingerprint = UnicodeAttribute(null=True)  # K# items: what the keyed request asked
    expires_at = TTLAttribute(null=True)  # K# items


REPEAT_SECONDS = 86_400  # API.md: a repeat within 24 hours creates nothing new


def _repeat_pk(author_id: int, repeat: RequestKey) -> str:
    return f"K#{author_id}#{repeat.key}"


def _stored(item: TweetItem) -> StoredTweet:
    return StoredTweet(
        id=int(item.tweet_id),
        author_id=int(item.author_id),
        text=item.text or "",
        created_at_ms=int(item.created_at_ms),
        reply_to=None if item.reply_to is None else int(item.reply_to),
        reply_to_author=None if item.reply_to_author is None else int(item.reply_to_author),
        retweet_of=None if item.retweet_of is None else int(item.retweet_of),
        retweet_of_author=None if item.retweet_of_author is None else int(item.retweet_of_author),
        media_ids=tuple(str(media) for media in item.media_ids or ()),
        media=tuple(_attached(copy) for copy in item.media or ()),
        hashtags=_tags(item.hashtags, item.text or ""),
    )


def _tags(stored: list[Any] | None, text: str) -> tuple[str, ...]:
    """The stored tags; a tweet written before tags were stored has none: its text says."""
    return tuple(str(tag) for tag in stored) if stored is not None else hashtags(text)


class TweetStore:
    """The tweet store behind ``warble.domain.tweets.ports.TweetStore``."""

    def __init__(self, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self._connection = bind(
            settings.aws_region,
            [
                (TweetItem, settings.tweets_table),
                (TweetIndexItem, settings.tweet_index_table),
                (GraphItem, settings.graph_table),
                (MediaItem, settings.media_table),
            ],
        )

    def author_of(self, tweet_id: int) -> int | None:
        try:
            item = TweetIndexItem.get(f"T#{tweet_id}", consistent_read=True)
        except DoesNotExist:
            return None
        return int(item.author_id)

    def retweet_by(self, user_id: int, original_id: int) -> int | None:
        try:
            item = TweetIndexItem.get(f"RT#{user_id}#{original_id}", consistent_read=True)
        except DoesNotExist:
            return None
        return int(item.tweet_id)

    def create(self, tweet: StoredTweet, repeat: RequestKey | None = None) -> None:
        """Write the tweet, its id mapping, (for a retweet) the uniqueness item and (for a keyed
        post) the key's claim, atomically, checking the parent still exists."""
        connection = self._connection
        parent = tweet.reply_to or tweet.retweet_of
        # A reply or a retweet checks that the parent's author does not block the author.
        parent_author = tweet.reply_to_author or tweet.retweet_of_author
        guarded = parent_author if parent_author not in (None, tweet.author_id) else None
        item = TweetItem(
            tweet.author_id,
            tweet.id,
            text=tweet.text,
            created_at_ms=tweet.created_at_ms,
            reply_to=tweet.reply_to,
            reply_to_author=tweet.reply_to_author,
            retweet_of=tweet.retweet_of,
            retweet_of_author=tweet.retweet_of_author,
            media_ids=list(tweet.media_ids) or None,
            media=[_copy(m) for m in tweet.media] or None,
            hashtags=list(tweet.hashtags) or None,
        )
        try:
            with TransactWrite(connection=connection) as tx:
                tx.save(item, condition=TweetItem.tweet_id.does_not_exist())
                tx.save(
                    TweetIndexItem(f"T#{tweet.id}", author_id=tweet.author_id),
                    condition=TweetIndexItem.pk.does_not_exist(),
                )
                if parent is not None:
                    tx.condition_check(
                        TweetIndexItem, f"T#{parent}", condition=TweetIndexItem.pk.exists()
                    )
                if guarded is not None:
                    check_not_blocked(tx, guarded, tweet.author_id)
                if tweet.retweet_of is not None:
                    tx.save(
                        TweetIndexItem(
                            f"RT#{tweet.author_id}#{tweet.retweet_of}", tweet_id=tweet.id
                        ),
                        condition=TweetIndexItem.pk.does_not_exist(),
                    )
                if repeat is not None:
                    now = datetime.fromtimestamp(tweet.created_at_ms // 1000, UTC)
                    tx.save(
                        TweetIndexItem(
                            _repeat_pk(tweet.author_id, repeat),
                            tweet_id=tweet.id,
                            fingerprint=repeat.fingerprint,
                            expires_at=now + timedelta(seconds=REPEAT_SECONDS),
                        ),
                        # DynamoDB deletes an expired item within days, not at once.
                        condition=TweetIndexItem.pk.does_not_exist()
                        | (TweetIndexItem.expires_at < now),
                    )
                for media in tweet.media:
                    claim(tx, tweet.author_id, tweet.id, media)
        except TransactWriteError as exc:
            # pynamodb sends condition checks first, then puts, then updates: [parent check],
            # [block check], tweet, id item, [retweet item], [key claim], [media claims]; the
            # reasons come back in that order.
            reasons = cancellation_codes(exc)
            if repeat is not None:
                at = 2 + (parent is not None) + (guarded is not None)
                at += tweet.retweet_of is not None
                if reasons[at : at + 1] == [CONDITION_FAILED]:
                    earlier = self._repeated(tweet.author_id, repeat)
                    if earlier is not None:
                        raise earlier from exc
            claims = reasons[len(reasons) - len(tweet.media) :] if tweet.media else []
            taken = [
                m.id for m, why in zip(tweet.media, claims, strict=False) if why == CONDITION_FAILED
            ]
            if taken:
                raise MediaTaken(taken) from exc
            if parent is not None and reasons[:1] == [CONDITION_FAILED]:
                raise ParentMissing() from exc
            if guarded is not None and reasons[1:2] == [CONDITION_FAILED]:
                raise BlockedByAuthor() from exc
            retweet_at = 3 + (guarded is not None)
            if tweet.retweet_of is not None and reasons[retweet_at : retweet_at + 1] == [
                CONDITION_FAILED
            ]:
                existing = self.retweet_by(tweet.author_id, tweet.retweet_of or 0)
                if existing is not None:
                    raise AlreadyRetweeted(existing) from exc
            raise

    def _repeated(self, author_id: int, repeat: RequestKey) -> Repeated | None:
        try:
            item = TweetIndexItem.get(_repeat_pk(author_id, repeat), consistent_read=True)
        except DoesNotExist:
            return None
        return Repeated(int(item.tweet_id), item.fingerprint or "")

    def delete(self, tweet: StoredTweet) -> None:
        connection = self._connection
        try:
            with TransactWrite(connection=connection) as tx:
                tx.delete(
                    TweetItem(tweet.author_id, tweet.id),
                    condition=TweetItem.tweet_id.exists(),
                )
                tx.delete(TweetIndexItem(f"T#{tweet.id}"))
                if tweet.retweet_of is not None:
                    tx.delete(TweetIndexItem(f"RT#{tweet.author_id}#{tweet.retweet_of}"))
        except TransactWriteError as exc:
            if cancellation_codes(exc)[:1] == [CONDITION_FAILED]:
                raise TweetGone() from exc
            raise

    def update_media(self, author_id: int, tweet_id: int, media: AttachedMedia) -> bool:
        """The tweet's copy of one of its media replaced by a newer one (``rev``); False when
        the tweet is gone or already shows that one or a newer."""
        try:
            item = TweetItem.get(author_id, tweet_id, consistent_read=True)
        except DoesNotExist:
            return False
        index = next((i for i, m in enumerate(item.media or ()) if int(m.id) == media.id), None)
        if index is None:
            return False
        path = TweetItem.media[index]
        try:
            item.update(
                actions=[path.set(_copy(media))],  # type: ignore[arg-type]
                condition=(path["id"] == media.id) & (path["rev"] < media.rev),
            )
        except UpdateError as exc:
            if exc.cause_response_code == CONDITION_FAILED + "Exception":
                return False
            raise
        return True

    def get(self, author_id: int, tweet_id: int) -> StoredTweet | None:
        try:
            return _stored(TweetItem.get(author_id, tweet_id, consistent_read=True))
        except DoesNotExist:
            return None

    def get_many(self, keys: list[tuple[int, int]]) -> list[StoredTweet]:
        """BatchGetItem (pynamodb splits into calls of 100 and retries unprocessed keys)."""
        if not keys:
            return []
        return [_stored(item) for item in TweetItem.batch_get(list(dict.fromkeys(keys)))]

    def by_author(self, author_id: int, before_id: int | None, limit: int) -> list[StoredTweet]:
        condition = TweetItem.tweet_id < before_id if before_id is not None else None
        return [
            _stored(item)
            for item in TweetItem.query(
                author_id, condition, scan_index_forward=False, limit=limit, consistent_read=True
            )
        ]

    def newest_of(self, author_ids: list[int], limit: int) -> dict[int, list[StoredTweet]]:
        """Each author's newest ``limit`` tweets: a Query each, ``PARALLEL_QUERIES`` side by
        side."""
        unique = list(dict.fromkeys(author_ids))
        if len(unique) <= 1:
            return {author: self.by_author(author, None, limit) for author in unique}
        with ThreadPoolExecutor(min(len(unique), PARALLEL_QUERIES)) as pool:
            read = pool.map(lambda author: self.by_author(author, None, limit), unique)
            return dict(zip(unique, read, strict=True))

    def recent_retweets(self, user_id: int, limit: int) -> tuple[dict[int, int], int]:
        """Among the user's newest ``limit`` tweets, the retweets (original -> retweet id), and
        the floor above which they are all of them: the oldest id read if there may be older
        tweets, else 0."""
        ids: list[int] = []
        retweets: dict[int, int] = {}
        for item in TweetItem.query(
            user_id,
            scan_index_forward=False,
            limit=limit,
            consistent_read=True,
            attributes_to_get=["tweet_id", "retweet_of"],
        ):
            ids.append(int(item.tweet_id))
            if item.retweet_of is not None:
                retweets[int(item.retweet_of)] = int(item.tweet_id)
        return retweets, (ids[-1] if len(ids) >= limit else 0)

    def reply_keys(
        self, parent_id: int, before_id: int | None, limit: int
    ) -> list[tuple[int, int]]:
        condition = TweetItem.tweet_id < before_id if before_id is not None else None
        return [
            (int(item.author_id), int(item.tweet_id))
            for item in TweetItem.replies.query(
                parent_id, condition, scan_index_forward=False, limit=limit
            )
        ]

    def retweet_keys(self, original_id: int) -> list[tuple[int, int]]:
        """``(author_id, tweet_id)`` of every retweet of a tweet (the keys-only index)."""
        return [
            (int(item.author_id), int(item.tweet_id))
            for item in TweetItem.retweets.query(original_id)
        ]

    # ---- reconciliation: the source of truth of the tweet counters ------------------------
    def scan_links(self) -> Iterator[tuple[int, int, int | None, int | None]]:
        """Every tweet as ``(author_id, tweet_id, reply_to, retweet_of)``: a full scan."""
        for item in TweetItem.scan(
            attributes_to_get=["author_id", "tweet_id", "reply_to", "retweet_of"]
        ):
            yield (
                int(item.author_id),
                int(item.tweet_id),
                None if item.reply_to is None else int(item.reply_to),
                None if item.retweet_of is None else int(item.retweet_of),
            )

    def count_by_author(self, author_id: int) -> int:
        return int(TweetItem.count(author_id, consistent_read=True))

    def count_replies(self, tweet_id: int) -> int:
        return int(TweetItem.replies.count(tweet_id))

    def count_retweets(self, tweet_id: int) -> int:
        return int(TweetItem.retweets.count(tweet_id))


# ---- the tweets table's stream -------------------------------------------------------------------
class TweetErasure:
    """An account's tweets in the tweets table and their index items (the account deletion,
    ``warble.dal.erasure``), and who retweeted a tweet about to go."""

    def __init__(self, items: erasing.Items) -> None:
        self._items = items

    def found(self, user_id: int, limit: int) -> tuple[list[ErasedTweet], list[erasing.Doomed]]:
        """Its first ``limit`` tweets, retweets and replies, and their items to delete (each
        tweet with its index items: by id, and a retweet's one-per-user item)."""
        s = self._items.settings
        found, _more = self._items.query(
            s.tweets_table, str(user_id), None, limit,
            "tweet_id, reply_to_author, retweet_of, retweet_of_author, #text",
            key_name="author_id", numeric=True,
        )  # fmt: skip
        doomed: list[erasing.Doomed] = []
        erased: list[ErasedTweet] = []
        for item in found:
            tweet_id = erasing.num(item, "tweet_id") or 0
            retweet_of = erasing.num(item, "retweet_of")
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
                    reply_to_author=erasing.num(item, "reply_to_author"),
                    retweet_of=retweet_of,
                    retweet_of_author=erasing.num(item, "retweet_of_author"),
                    text=erasing.text(item, "text"),
                )
            )
        return erased, doomed

    def retweeters(self, tweet_id: int) -> list[int]:
        """The authors of the retweets of ``tweet_id`` (the ``retweets`` index)."""
        answer = self._items.client.query(
            TableName=self._items.settings.tweets_table, IndexName="retweets",
            KeyConditionExpression="retweet_of = :t",
            ExpressionAttributeValues={":t": {"N": str(tweet_id)}},
        )  # fmt: skip
        return [erasing.num(i, "author_id") or 0 for i in answer.get("Items", [])]


# ---- bulk import (the seed, infra/local/seed.py: items written as they are, no stream) ------
def import_tweet(settings: Settings, tweet: StoredTweet) -> list[tuple[str, dict[str, Any]]]:
    """A tweet's item and its index items, as ``TweetStore.create`` writes them (no media)."""
    item = TweetItem(
        tweet.author_id, tweet.id, text=tweet.text, created_at_ms=tweet.created_at_ms,
        reply_to=tweet.reply_to, reply_to_author=tweet.reply_to_author,
        retweet_of=tweet.retweet_of, retweet_of_author=tweet.retweet_of_author,
        hashtags=list(tweet.hashtags) or None,
    )  # fmt: skip
    found = [
        (settings.tweets_table, item.serialize()),
        (
            settings.tweet_index_table,
            TweetIndexItem(f"T#{tweet.id}", author_id=tweet.author_id).serialize(),
        ),
    ]
    if tweet.retweet_of is not None:
        index = TweetIndexItem(f"RT#{tweet.author_id}#{tweet.retweet_of}", tweet_id=tweet.id)
        found.append((settings.tweet_index_table, index.serialize()))
    return found


def decode_record(record: dict[str, Any]) -> list[Event]:
    """INSERT is TweetPosted, REMOVE is TweetDeleted (tweets are never modified)."""
    item = StreamItem.of(record)
    if item.name not in ("INSERT", "REMOVE"):
        return []
    image = item.image()
    tweet_id, author_id = _required(image, "tweet_id"), _required(image, "author_id")
    text = image.get("text", {}).get("S", "") if isinstance(image.get("text"), dict) else ""
    retweet_of = number(image, "retweet_of")
    # A retweet's text is empty: it has no tags of its own (its original's are the original's).
    tags = () if retweet_of is not None else _tags(_strings(image, "hashtags"), str(text))
    media_ids, media_keys = _media_of(image)
    if item.name == "REMOVE":
        return [
            TweetDeleted(
                tweet_id=tweet_id,
                author_id=author_id,
                reply_to=number(image, "reply_to"),
                retweet_of=retweet_of,
                hashtags=tags,
                media_ids=media_ids,
                media_keys=media_keys,
            )
        ]
    return [
        TweetPosted(
            tweet_id=tweet_id,
            author_id=author_id,
            text=str(text),
            reply_to=number(image, "reply_to"),
            reply_to_author=number(image, "reply_to_author"),
            retweet_of=retweet_of,
            retweet_of_author=number(image, "retweet_of_author"),
            media_ids=media_ids,
            media_keys=media_keys,
            hashtags=tags,
        )
    ]


def _media_of(image: dict[str, Any]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The media ids and file keys of a stream image's ``media`` list."""
    listed = image.get("media", {})
    copies = listed.get("L", []) if isinstance(listed, dict) else []
    ids: list[int] = []
    keys: list[str] = []
    for copy in copies:
        fields = copy.get("M", {}) if isinstance(copy, dict) else {}
        if "N" in fields.get("id", {}):
            ids.append(int(fields["id"]["N"]))
        keys += [
            fields[k]["S"] for k in ("original_key", "preview_key") if "S" in fields.get(k, {})
        ]
    return tuple(ids), tuple(keys)


def _strings(image: dict[str, Any], name: str) -> list[str] | None:
    """A list-of-strings attribute of a stream image (``{"L": [{"S": ...}]}``), None if absent."""
    value = image.get(name)
    if not isinstance(value, dict) or "L" not in value:
        return None
    return [str(entry["S"]) for entry in value["L"]]
