"""Tweets: posting, retweets, deletion, the user timeline, replies, and hydration into API.md's
Tweet objects.

Stored tweets are cached in Redis (``{tw:<id>}``) through the lease-guarded cache: a page of
tweets is one MGET, and only the misses are read, with one BatchGetItem, then cached. Authors
come from the profile cache (one MGET, one PostgreSQL query for the misses). Deleting a tweet
writes a tombstone over its cache entry, so no in-flight read can bring it back.

Engagement on a page costs the same whatever its length: the counters (like, retweet, reply)
come from their own lease-guarded cache (one MGET, one BatchGetItem of the counters table for
the misses), and the viewer's liked_by_me / retweeted_by_me from the viewer's recent likes and
retweets in Redis (``warble.domain.tweets.flags``); ``show`` reads all of it with the tweets in
one round trip. A retweet carries its original's counters and flags: it stands for the original,
which is what a like or a retweet of it acts on.

A deleted tweet takes its retweets and likes with it, asynchronously (``purge``, run by the
the reactions reader of the tweets stream), so they stop counting everywhere.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from warble import clock
from warble.domain.accounts.ports import Profiles
from warble.domain.blocks.ports import BlockedByAuthor
from warble.domain.counters.ports import (
    CounterStore,
    Delta,
    tweet_counter,
    user_counter,
)
from warble.domain.likes.ports import Liker, LikeStore
from warble.domain.media.answers import media_answers
from warble.domain.media.ports import AttachedMedia
from warble.domain.pagination import decode_cursor, encode_cursor
from warble.domain.shared import (
    Cache,
    IdGenerator,
    Later,
    ObjectCache,
    ReadBatch,
    RequestKey,
    at_once,
    user_summary,
)
from warble.domain.text import hashtags, normalise_text
from warble.domain.tweets.answers import (
    TWEET_JSON_FORM,
    Tweet,
    TweetAnswer,
    TweetJson,
    TweetPage,
    has_parts,
    summary_json,
    tweet_parts,
)
from warble.domain.tweets.ports import (
    AlreadyRetweeted,
    MediaCatalog,
    MediaTaken,
    MutedWordReader,
    ParentMissing,
    Repeated,
    ShieldReader,
    StoredTweet,
    TweetGone,
    TweetStore,
)
from warble.errors import Blocked, Conflict, Forbidden, InvalidMedia, NotFound
from warble.events import TweetDeleted, TweetPosted

if TYPE_CHECKING:
    from warble.domain.tweets.flags import ViewerFlags

MAX_TEXT = 280
MAX_MEDIA = 4
TOMBSTONE = {"deleted": True}
TWEET_COUNTERS = ("like_count", "retweet_count", "reply_count")
_NO_COUNTS: dict[str, int] = {}
PURGE_CHUNK = 100


@dataclass(slots=True)  # not frozen (its __init__ sets each field through object.__setattr__)
class Hydration:
    """What rendering reads besides the tweets, and for which ids it was read: the authors'
    profiles (unknown users absent), the subjects' counters and the viewer's flags."""

    author_ids: frozenset[int] = frozenset()
    subject_ids: frozenset[int] = frozenset()
    authors: dict[int, dict[str, Any]] = field(default_factory=dict)
    counts: dict[int, dict[str, int]] = field(default_factory=dict)
    liked: set[int] = field(default_factory=set)
    retweeted: set[int] = field(default_factory=set)

    def merged(self, more: Hydration) -> Hydration:
        return Hydration(
            self.author_ids | more.author_ids,
            self.subject_ids | more.subject_ids,
            {**self.authors, **more.authors},
            {**self.counts, **more.counts},
            self.liked | more.liked,
            self.retweeted | more.retweeted,
        )


class TweetService:
    def __init__(
        self,
        store: TweetStore,
        cache: ObjectCache[int],
        accounts: Profiles,
        ids: IdGenerator,
        tombstone_seconds: int,
        counters: CounterStore,
        counts_cache: Cache[int],
        likes: LikeStore,
        flags: ViewerFlags,
        shields: ShieldReader,
        media: MediaCatalog,
        media_url: str,
        muted: MutedWordReader,
    ) -> None:
        self.flags = flags
        self._muted = muted
        self._media = media
        self._media_url = media_url
        self._shields = shields
        self._store = store
        self._cache = cache
        self._accounts = accounts
        self._ids = ids
        self._tombstone_seconds = tombstone_seconds
        self._counters = counters
        self._counts = counts_cache
        self._likes = likes

    # ---- writes -------------------------------------------------------------------------
    def post(
        self,
        author_id: int,
        text: str,
        reply_to: int | None,
        media_ids: list[str],
        repeat: RequestKey | None = None,
    ) -> TweetAnswer:
        """The tweet posted; a ``repeat`` of a keyed post that created one already answers that
        tweet again (409 if the key was used for another request)."""
        body = normalise_text(text, MAX_TEXT, may_be_empty=bool(media_ids))
        parent_author = None
        if reply_to is not None:
            parent = self.load_shown(reply_to)
            if parent is None:
                raise NotFound("The tweet replied to does not exist.")
            # A reply to a retweet replies to its original (API.md): its author's blocks
            # hold, and the original counts it.
            if parent.retweet_of is not None:
                reply_to, parent_author = parent.retweet_of, parent.retweet_of_author
            else:
                parent_author = parent.author_id
        media = self._media.attachable(author_id, media_ids) if media_ids else []
        tweet = StoredTweet(
            id=self._ids.next_id(),
            author_id=author_id,
            text=body,
            created_at_ms=clock.epoch_ms(),
            reply_to=reply_to,
            reply_to_author=parent_author,
            media_ids=tuple(str(m.id) for m in media),
            media=tuple(media),
            hashtags=hashtags(body),
        )
        try:
            self._create_with_media(tweet, media_ids, repeat)
        except Repeated as earlier:
            return self._repeated(author_id, repeat, earlier)
        except ParentMissing:
            raise NotFound("The tweet replied to does not exist.") from None
        except BlockedByAuthor:
            raise Blocked("The author of that tweet blocks you.") from None
        return self._render_one(tweet, author_id)

    def _repeated(
        self, author_id: int, repeat: RequestKey | None, earlier: Repeated
    ) -> TweetAnswer:
        if repeat is None or earlier.fingerprint != repeat.fingerprint:
            raise Conflict(
                "This Idempotency-Key was used for another request.",
                code="idempotency_key_reused",
            )
        found = self.load_one(earlier.tweet_id)
        if found is None:
            raise NotFound("No such tweet.")  # deleted since its post
        return self._render_one(found, author_id)

    def _create_with_media(
        self, tweet: StoredTweet, media_ids: list[str], repeat: RequestKey | None = None
    ) -> None:
        """The tweet's transaction claims its media (each on one tweet at most). A media
        changed since it was read is read again: taken by another tweet meanwhile, it is
        refused; only edited (its alt text), the tweet copies the new one and tries again."""
        for _ in range(3):
            try:
                self._store.create(tweet, repeat)
                return
            except MediaTaken:
                media = self._media.attachable(tweet.author_id, media_ids)
                tweet = msgspec.structs.replace(tweet, media=tuple(media))
        raise InvalidMedia([(str(m.id), "changed while the tweet was posted") for m in tweet.media])

    def media_changed(self, tweet_id: int, media: AttachedMedia) -> None:
        """A media this tweet shows changed (its alt text): the tweet's copy follows."""
        author_id = self._store.author_of(tweet_id)
        if author_id is not None and self._store.update_media(author_id, tweet_id, media):
            self._cache.invalidate(tweet_id)

    def retweet(self, user_id: int, original_id: int) -> tuple[TweetAnswer, bool]:
        """The retweet, and whether it was created now (False: it existed already)."""
        original = self.load_shown(original_id)
        if original is None:
            raise NotFound("No such tweet.")
        if original.retweet_of is not None:  # retweeting a retweet retweets its original
            return self.retweet(user_id, original.retweet_of)
        existing = self._store.retweet_by(user_id, original.id)
        if existing is not None and (found := self.load_one(existing)) is not None:
            return self._render_one(found, user_id), False
        tweet = StoredTweet(
            id=self._ids.next_id(),
            author_id=user_id,
            text="",
            created_at_ms=clock.epoch_ms(),
            retweet_of=original.id,
            retweet_of_author=original.author_id,
        )
        try:
            self._store.create(tweet)
        except ParentMissing:
            raise NotFound("No such tweet.") from None
        except BlockedByAuthor:
            raise Blocked("The author of that tweet blocks you.") from None
        except AlreadyRetweeted as exc:
            found = self.load_one(exc.retweet_id)
            if found is None:
                raise NotFound("No such tweet.") from None
            return self._render_one(found, user_id), False
        self.flags.retweeted(user_id, original.id, tweet.id, present=True)
        return self._render_one(tweet, user_id), True

    def unretweet(self, user_id: int, original_id: int) -> None:
        existing = self._store.retweet_by(user_id, original_id)
        if existing is None:
            if self.load_one(original_id) is None:
                raise NotFound("No such tweet.")  # an unknown id is a 404, not a no-op
            return  # idempotent
        tweet = self.load_one(existing)
        if tweet is not None:
            self._delete(tweet)

    def delete(self, user_id: int, tweet_id: int) -> None:
        tweet = self.load_one(tweet_id)
        if tweet is None:
            raise NotFound("No such tweet.")
        if tweet.author_id != user_id:
            raise Forbidden("Only the author can delete a tweet.")
        self._delete(tweet)

    def _delete(self, tweet: StoredTweet) -> None:
        with contextlib.suppress(TweetGone):  # deleted concurrently: the same outcome
            self._store.delete(tweet)
        # After the write: a tombstone replaces the cached copy and voids any fill lease.
        self._cache.tombstone(tweet.id, TOMBSTONE, self._tombstone_seconds)
        if tweet.retweet_of is not None:
            self.flags.retweeted(tweet.author_id, tweet.retweet_of, tweet.id, present=False)

    def purge(self, tweet_id: int) -> int:
        """After a tweet's deletion: delete its retweets and its likes, so neither counts any
        more (a retweet's own deletion then drops its author's tweet_count). Idempotent: what is
        gone already is skipped. Returns how many things it deleted."""
        deleted = 0
        for author_id, retweet_id in self._store.retweet_keys(tweet_id):
            retweet = self._store.get(author_id, retweet_id)
            if retweet is None:
                continue
            with contextlib.suppress(TweetGone):
                self._store.delete(retweet)
                deleted += 1
            self._cache.tombstone(retweet_id, TOMBSTONE, self._tombstone_seconds)
            self.flags.retweeted(author_id, tweet_id, retweet_id, present=False)
        chunk: list[Liker] = []
        for like in self._likes.all_likers(tweet_id):
            chunk.append(like)
            if len(chunk) >= PURGE_CHUNK:
                self._likes.delete_likes(tweet_id, chunk)
                deleted, chunk = deleted + len(chunk), []
        if chunk:
            self._likes.delete_likes(tweet_id, chunk)
            deleted += len(chunk)
        return deleted

    # ---- reads --------------------------------------------------------------------------
    def get(self, viewer: int, tweet_id: int) -> TweetAnswer:
        tweet = self.load_one(tweet_id)
        if tweet is None:
            raise NotFound("No such tweet.")
        return self._render_one(tweet, viewer)

    def _render_one(self, tweet: StoredTweet, viewer: int) -> TweetAnswer:
        """One Tweet; 404 when it no longer shows (a retweet whose original was deleted, even
        a moment after the retweet itself was written)."""
        rendered = self.render([tweet], viewer=viewer)
        if not rendered:
            raise NotFound("No such tweet.")
        return rendered[0]

    def user_timeline(self, viewer: int, user_id: int, limit: int, cursor: str | None) -> TweetPage:
        self._accounts.profile(user_id)  # 404 for an unknown user
        kind = f"user{user_id}"
        before = decode_cursor(kind, cursor)
        # Which tweets from the table (read-your-writes); the tweets themselves, rendered once,
        # from the cache with the rest of the page in one round trip, the table's copies filling
        # what it misses (issue 45: not rendered and primed again on every read).
        tweets = self._store.by_author(user_id, before, limit)
        items = self.show([(t.author_id, t.id) for t in tweets], viewer, from_table=tweets)
        next_cursor = encode_cursor(kind, tweets[-1].id) if len(tweets) >= limit else None
        return TweetPage(items, next_cursor)

    def newest_of(self, author_ids: list[int], limit: int) -> dict[int, list[StoredTweet]]:
        """Each author's newest ``limit`` tweets from the table, newest first, read side by side
        and cached as they are read (the home timelines' recent sets, refilled after a cache
        loss)."""
        newest = self._store.newest_of(author_ids, limit)
        self.prime([tweet for tweets in newest.values() for tweet in tweets])
        return newest

    def replies(self, viewer: int, tweet_id: int, limit: int, cursor: str | None) -> TweetPage:
        if self.load_shown(tweet_id) is None:
            raise NotFound("No such tweet.")
        before = decode_cursor(f"replies{tweet_id}", cursor)
        keys_ = self._store.reply_keys(tweet_id, before, limit)
        # The replies, the viewer's blocks and muted words in one round trip: replies by anyone
        # the viewer blocks or is blocked by, or holding a muted word, are left out.
        batch = self._cache.batch()
        loaded = self.load_later(batch, keys_)
        shield = self._shields.later(batch, viewer)
        muted = self._muted.later(batch, viewer)
        batch.run()
        blocked, words = shield().blocked, muted()
        tweets = [
            t
            for t in loaded()
            if t.author_id not in blocked
            and (t.author_id == viewer or not words.hides(t.text, t.hashtags))
        ]
        return self._page(
            tweets, limit, f"replies{tweet_id}", viewer, fetched=len(keys_), last=keys_
        )

    def _page(
        self,
        tweets: list[StoredTweet],
        limit: int,
        kind: str,
        viewer: int,
        fetched: int | None = None,
        last: list[tuple[int, int]] | None = None,
    ) -> TweetPage:
        # The cursor pins the last id read from the store, even if its tweet was dropped.
        count = len(tweets) if fetched is None else fetched
        if last:
            last_id: int | None = last[-1][1]
        else:
            last_id = tweets[-1].id if tweets else None
        next_cursor = (
            encode_cursor(kind, last_id) if count >= limit and last_id is not None else None
        )
        return TweetPage(self.render(tweets, viewer=viewer), next_cursor)

    # ---- loading and hydration ---------------------------------------------------------
    def load_one(self, tweet_id: int) -> StoredTweet | None:
        """The stored tweet (cache first), or None if there is none (or it was deleted)."""
        cached = self._cache.get(tweet_id)
        if cached is not None:
            return _stored(cached)
        author = self._store.author_of(tweet_id)
        if author is None:
            return None
        found = self.load([(author, tweet_id)])
        return found[0] if found else None

    def load_shown(self, tweet_id: int) -> StoredTweet | None:
        """``load_one``, or None when its author, or a retweet's original author, is not shown
        (a suspended account has no profile): what a like, a retweet, a reply and a replies
        list act on, so that a suspended author's tweets are a 404 as the author is."""
        tweet = self.load_one(tweet_id)
        if tweet is None:
            return None
        authors = [tweet.author_id]
        if tweet.retweet_of_author is not None:
            authors.append(tweet.retweet_of_author)
        shown = self._accounts.profiles(authors)
        return tweet if all(author in shown for author in authors) else None

    def load(self, tweet_keys: Iterable[tuple[int, int]]) -> list[StoredTweet]:
        """(author_id, tweet_id) pairs -> stored tweets, in order; deleted ones left out.
        One MGET; the misses in one BatchGetItem, then cached under their leases."""
        pairs = list(tweet_keys)
        return at_once(self._cache.batch(), lambda batch: self.load_later(batch, pairs))

    def load_later(
        self,
        batch: ReadBatch,
        pairs: list[tuple[int, int]],
        fill: bool = True,
        from_table: Sequence[StoredTweet] = (),
    ) -> Later[list[StoredTweet]]:
        """``load`` with its MGET queued in ``batch``; ``from_table``: tweets just read from
        the table, which fill the cache's misses among them without another read."""
        known = {t.id: t for t in from_table}

        def fetch(missing: list[int]) -> list[dict[str, Any] | None]:
            wanted = [pairs[i] for i in missing if pairs[i][1] not in known]
            found = dict(known)
            if wanted:
                found.update((t.id, t) for t in self._store.get_many(wanted))
            return [
                self._cached(found[pairs[i][1]]) if pairs[i][1] in found else None for i in missing
            ]

        read = self._cache.get_many_later(batch, [tid for _, tid in pairs], fetch, fill=fill)

        def tweets() -> list[StoredTweet]:
            found = []
            for value in read():
                if type(value) is StoredTweet:  # the tweet cache's codec reads tweets
                    found.append(value)
                elif value is not None and (tweet := _stored(value)) is not None:
                    found.append(tweet)
            return found

        return tweets

    def show(
        self, pairs: list[tuple[int, int]], viewer: int, from_table: Sequence[StoredTweet] = ()
    ) -> list[TweetAnswer]:
        """``render(load(pairs))`` in one round trip to Redis when warm: the tweets are read
        with their authors' profiles, counters and the viewer's flags, all known from the pairs
        (a second round trip only for retweets' originals). ``from_table``: as ``load_later``."""
        batch = self._cache.batch()
        tweets = self.load_later(batch, pairs, from_table=from_table)
        ids = [tid for _, tid in pairs]
        ahead = self._hydrate_later(batch, viewer, [author for author, _ in pairs], ids)
        batch.run()
        return self.render(tweets(), viewer, ahead())

    def prime(self, tweets: list[StoredTweet]) -> None:
        """Tweets just read from the table: cache the ones not cached yet (no extra reads)."""
        self._cache.fill_missing([(t.id, self._cached(t)) for t in tweets])

    def _cached(self, tweet: StoredTweet) -> dict[str, Any]:
        """A tweet's cached form, rendered once for every later read."""
        return self._with_parts(tweet).record()

    def _with_parts(self, tweet: StoredTweet) -> StoredTweet:
        """The tweet with what every viewer sees of it rendered (``tweet_parts``)."""
        if has_parts(tweet, self._media_url):
            return tweet
        return msgspec.structs.replace(tweet, shown=tweet_parts(tweet, self._media_url))

    def counts(self, tweet_ids: list[int]) -> dict[int, dict[str, int]]:
        """like / retweet / reply counts: one MGET, the misses in one counters BatchGetItem."""
        return at_once(self._counts.batch(), lambda batch: self.counts_later(batch, tweet_ids))

    def counts_later(
        self, batch: ReadBatch, tweet_ids: list[int]
    ) -> Later[dict[int, dict[str, int]]]:
        unique = list(dict.fromkeys(tweet_ids))

        def load(missing: list[int]) -> list[dict[str, int] | None]:
            read = self._counters.read([tweet_counter(unique[i]) for i in missing])
            return [
                {
                    name: max(0, read[tweet_counter(unique[i])].get(name, 0))
                    for name in TWEET_COUNTERS
                }
                for i in missing
            ]

        read = self._counts.get_many_later(batch, unique, load)
        return lambda: {t: value or {} for t, value in zip(unique, read(), strict=True)}

    def _hydrate_later(
        self, batch: ReadBatch, viewer: int, author_ids: list[int], subject_ids: list[int]
    ) -> Later[Hydration]:
        authors = self._accounts.profiles_later(batch, author_ids)
        counts = self.counts_later(batch, subject_ids)
        flags = self.flags.later(batch, viewer, subject_ids)

        def hydration() -> Hydration:
            liked, retweeted = flags()
            return Hydration(
                frozenset(author_ids), frozenset(subject_ids), authors(), counts(), liked, retweeted
            )

        return hydration

    def render(
        self, tweets: list[StoredTweet], viewer: int, ahead: Hydration | None = None
    ) -> list[TweetAnswer]:
        """API.md Tweets, with authors, retweeted originals, counters and the viewer's flags
        hydrated in batches (``ahead``: what was read already, by ``show``). A tweet (and its
        original) rendered when cached is spliced with them (``TweetJson``); any other is made
        now, to the same bytes."""
        if not tweets:
            return []
        original_keys = [
            (t.retweet_of_author, t.retweet_of)
            for t in tweets
            if t.retweet_of is not None and t.retweet_of_author is not None
        ]
        # No batch at all for a page without retweets (most pages).
        originals = {t.id: t for t in self.load(original_keys)} if original_keys else {}
        # A retweet shows its original's engagement: that is what likes and retweets act on.
        wanted = list(dict.fromkeys(t.id if t.retweet_of is None else t.retweet_of for t in tweets))
        writers = [t.author_id for t in tweets] + [o.author_id for o in originals.values()]
        known = ahead or Hydration()
        # Authors, counters and the viewer's flags not read ahead: one round trip when warm.
        more_authors = [a for a in writers if a not in known.author_ids]
        more_subjects = [t for t in wanted if t not in known.subject_ids]
        if more_authors or more_subjects:
            batch = self._counts.batch()
            later = self._hydrate_later(batch, viewer, more_authors, more_subjects)
            batch.run()
            known = known.merged(later())
        authors, counts = known.authors, known.counts
        liked, retweeted = known.liked, known.retweeted

        summaries = {author_id: user_summary(profile) for author_id, profile in authors.items()}
        # Each author's summary encoded once a page: spliced, never cached with the tweets.
        encoded_authors: dict[int, bytes] = {}
        media_url = self._media_url

        def engagement(subject_id: int) -> tuple[int, int, int, bool, bool]:
            counted = counts.get(subject_id) or _NO_COUNTS
            # The viewer's own like or retweet counts in what they see at once: the flags are
            # read-your-writes, the counters follow the stream a moment later, and an answer
            # saying retweeted_by_me with retweet_count 0 made a client's undo show -1.
            i_like, i_retweeted = subject_id in liked, subject_id in retweeted
            return (
                max(counted.get("like_count", 0), int(i_like)),
                max(counted.get("retweet_count", 0), int(i_retweeted)),
                counted.get("reply_count", 0),
                i_like,
                i_retweeted,
            )

        def spliced(tweet: StoredTweet, embedded: TweetJson | None, subject_id: int) -> TweetJson:
            # ``engagement`` written out: this runs for every tweet of every page.
            author = tweet.author_id
            encoded = encoded_authors.get(author)
            if encoded is None:
                encoded = encoded_authors[author] = summary_json(summaries[author])
            counted = counts.get(subject_id) or _NO_COUNTS
            i_like, i_retweeted = subject_id in liked, subject_id in retweeted
            return TweetJson(
                tweet,
                summaries[author],
                encoded,
                embedded,
                max(counted.get("like_count", 0), int(i_like)),
                max(counted.get("retweet_count", 0), int(i_retweeted)),
                counted.get("reply_count", 0),
                i_like,
                i_retweeted,
            )

        def made(tweet: StoredTweet, embedded: Tweet | None, subject_id: int) -> Tweet:
            return Tweet(
                str(tweet.id),
                summaries[tweet.author_id],
                tweet.text,
                clock.rfc3339_ms(tweet.created_at_ms),
                None if tweet.reply_to is None else str(tweet.reply_to),
                embedded,
                list(tweet.media_ids),
                media_answers(tweet.media, media_url),
                list(tweet.hashtags),
                *engagement(subject_id),
            )

        rendered: list[TweetAnswer] = []
        for tweet in tweets:
            if tweet.author_id not in authors:
                continue
            original_id = tweet.retweet_of
            if original_id is None:
                # Spliced when rendered at caching (``has_parts``, written out); else made now.
                shown = tweet.shown
                if shown is not None and shown[0] == TWEET_JSON_FORM and shown[1] == media_url:
                    rendered.append(spliced(tweet, None, tweet.id))
                else:
                    rendered.append(made(tweet, None, tweet.id))
                continue
            original = originals.get(original_id)
            if original is None or original.author_id not in authors:
                continue  # the original was deleted: its retweets go with it
            # A retweet shows its original's engagement: that is what likes and retweets act on.
            if has_parts(tweet, media_url) and has_parts(original, media_url):
                inner = spliced(original, None, original_id)
                rendered.append(spliced(tweet, inner, original_id))
            else:
                rendered.append(made(tweet, made(original, None, original_id), original_id))
        return rendered


def _stored(cached: StoredTweet | dict[str, Any]) -> StoredTweet | None:
    """A cached value as the tweet it holds: read as the tweet itself (the tweet cache's codec)
    or as its record (a fill's, or another codec's); None for a tombstone."""
    if isinstance(cached, StoredTweet):
        return cached
    return None if cached == TOMBSTONE else StoredTweet.from_record(cached)


def tweets_counted(event: TweetPosted | TweetDeleted) -> list[Delta]:
    """While a tweet exists it counts once on its author (tweet_count), on the tweet it replies
    to (reply_count) and on the tweet it retweets (retweet_count)."""
    amount = 1 if isinstance(event, TweetPosted) else -1
    deltas = [Delta(user_counter(event.author_id), "tweet_count", amount)]
    if event.reply_to is not None:
        deltas.append(Delta(tweet_counter(event.reply_to), "reply_count", amount))
    if event.retweet_of is not None:
        deltas.append(Delta(tweet_counter(event.retweet_of), "retweet_count", amount))
    return deltas
