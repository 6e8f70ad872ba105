"""Home timelines: fan-out on write, celebrities merged on read, rebuilt when lost.

- A new tweet (from the tweets table's stream) goes to its author's own timeline and, unless the
  author has more than ``celebrity_followers`` followers, to every follower's built timeline,
  pipelined in chunks. Re-adding is a no-op, so redelivered records change nothing.
- A celebrity's tweets are never fanned out: the home read merges the newest tweets of the
  celebrities the reader follows (their ``recent`` sets) by id, in order.
- Following someone backfills their newest tweets; unfollowing removes theirs (both from the
  graph table's stream). A deleted tweet leaves every timeline it was pushed to.
- A timeline that is missing (evicted, expired after 30 days of inactivity, or never built) is
  rebuilt from the recent tweets of the people the user follows before the read answers.
- The stream consumer applies a whole batch at once (``apply_stream``): one round trip reads
  every author's followers (a versioned membership hash in Redis, kept by the graph stream and
  rebuilt from the table when missing), the counts that say who is a celebrity and the recent
  tweets a follow backfills; the writes go out in the batch's one write pipeline.
- Each reader's list of the celebrities it follows is kept a day (``CELEBRITY_LIST_TTL``): it
  changes only when the reader follows or unfollows (the graph stream drops it) or a followee
  crosses the threshold. The fan-out notes on each author how it last treated its tweets
  (``celebrity_mark``); when a new tweet is treated the other way, the author's followers'
  lists are dropped before its push, so they are rebuilt with it (issue 30: the list's refresh,
  a counts read of every followee, was once a minute and a third of the cache's commands).
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from warble.domain.pagination import decode_cursor, encode_cursor
from warble.domain.shared import Held, Later, Memberships, ReadBatch, Writes, at_once
from warble.domain.timelines.ports import (
    Follows,
    MutedWordReader,
    ShieldReader,
    TimelineStore,
    TweetFilter,
    Tweets,
)
from warble.domain.tweets.answers import TweetPage
from warble.events import Followed, TweetDeleted, TweetPosted, Unfollowed

# A day: a backstop only (a crossing before the author's first marked tweet). Its refresh reads
# the counts of every followee (2 + c + f commands).
CELEBRITY_LIST_TTL = 86_400


def entry(author_id: int, tweet_id: int) -> str:
    """A timeline entry: ``<19-digit tweet id>:<author>``, so string order is time order (a
    63-bit id does not fit a sorted set's double score). Arguments in the order of the
    ``(author_id, tweet_id)`` pairs that tweets are read by, as ``parse_entry`` gives them."""
    return f"{tweet_id:019d}:{author_id}"


def parse_entry(raw: str) -> tuple[int, int]:
    """``(author_id, tweet_id)`` of a timeline entry."""
    tweet, _, author = raw.partition(":")
    return int(author), int(tweet)


# A home read asks for this many times the page, so that blocked and muted users' entries
# rarely leave it short (a further read follows only if they do).
HOME_OVERFETCH = 2


@dataclass(frozen=True)
class TimelinePolicy:
    celebrity_followers: int
    cap: int
    recent_cap: int
    backfill: int


class TimelineService:
    def __init__(
        self,
        timelines: TimelineStore,
        tweets: Tweets,
        graph: Follows,
        policy: TimelinePolicy,
        shields: ShieldReader,
        followers: Memberships,
        muted: MutedWordReader,
    ) -> None:
        self._shields = shields
        self._muted = muted
        self._followers = followers
        self._timelines = timelines
        self._tweets = tweets
        self._graph = graph
        self._policy = policy

    # ---- who ------------------------------------------------------------------------------
    def _celebrities_among(self, user_ids: list[int]) -> set[int]:
        """Those with more followers than the threshold: one counts read for all of them."""
        counts = self._graph.counts(user_ids) if user_ids else {}
        threshold = self._policy.celebrity_followers
        return {
            uid for uid in user_ids if counts.get(uid, {}).get("followers_count", 0) > threshold
        }

    def _is_celebrity(self, user_id: int) -> bool:
        return bool(self._celebrities_among([user_id]))

    def celebrities_followed(self, user_id: int) -> list[int]:
        """The big accounts a user follows (cached 60 s; also read by the home unread count)."""
        return self._celebrities_followed(user_id)

    def _celebrities_followed(self, user_id: int) -> list[int]:
        cached = self._timelines.followed_celebrities(user_id)
        if cached is not None:
            return cached
        following = list(self._graph.all_ids(user_id, "following"))
        big = self._celebrities_among(following)
        celebrities = [uid for uid in following if uid in big]
        self._timelines.remember_celebrities(user_id, celebrities, CELEBRITY_LIST_TTL)
        return celebrities

    # ---- stream: a batch at a time ---------------------------------------------------------
    def apply_stream(self, events: Sequence[object], writes: Writes) -> dict[int, list[int]]:
        """A stream batch's new and deleted tweets, follows and unfollows, in stream order:
        every read in one round trip when warm (followers, counts, recent tweets), every write
        queued in ``writes``. Idempotent: adds and removes of entries, versioned changes.

        Returns the followers whose home timelines each author's new tweets reach (a
        celebrity's reach nobody: merged on read): the audience of the home count's push."""
        tweets = [e for e in events if isinstance(e, TweetPosted | TweetDeleted)]
        follows = [e for e in events if isinstance(e, Followed | Unfollowed)]
        if not tweets and not follows:
            return {}
        authors = list(dict.fromkeys(e.author_id for e in tweets))
        followees = list(dict.fromkeys(e.followee for e in follows if isinstance(e, Followed)))
        reads = self._timelines.batch()
        # Not filled: the counter consumer drops these authors' counts as it counts the batch.
        counts = self._graph.followers_counts_later(reads, authors + followees)
        followers = {a: self._followers.members_later(reads, a) for a in authors}
        recent = self._timelines.recent_later(reads, followees, self._policy.backfill)
        posting = list(dict.fromkeys(e.author_id for e in tweets if isinstance(e, TweetPosted)))
        marks = self._timelines.celebrity_marks_later(reads, posting)
        reads.run()
        followers_now = counts()
        self._graph.followers_counted(followers_now)
        threshold = self._policy.celebrity_followers
        big = {u for u, followers in followers_now.items() if followers > threshold}
        deleting = {e.author_id for e in tweets if isinstance(e, TweetDeleted)}
        audience = {a: self._audience(a, followers[a](), a in big, a in deleting) for a in authors}
        for author, marked in marks().items():
            if marked is not (author in big):
                held = followers[author]()
                self._crossed(writes, author, marked, author in big, held, audience[author])
        backfills = {f: entries for f, entries in recent().items() if f not in big}
        for followee in [f for f, entries in backfills.items() if entries is None]:
            backfills[followee] = self._recent(followee, self._policy.backfill)  # cold
        for event in events:
            if isinstance(event, TweetPosted | TweetDeleted):
                item = entry(event.author_id, event.tweet_id)
                reached = [event.author_id, *audience[event.author_id]]
                if isinstance(event, TweetPosted):
                    self._timelines.remember_recent_later(
                        writes, event.author_id, item, event.author_id in big
                    )
                    self._timelines.push_later(writes, reached, item)
                else:
                    self._timelines.forget_recent_later(writes, event.author_id, item)
                    self._timelines.remove_later(writes, reached, item)
            elif isinstance(event, Followed | Unfollowed):
                follower, followee = event.follower, event.followee
                self._timelines.forget_celebrities_later(writes, follower)
                if isinstance(event, Followed):
                    self._timelines.add_later(writes, follower, backfills.get(followee) or [])
                else:
                    self._timelines.remove_author_later(writes, follower, followee)
                if event.seq is not None:
                    present = isinstance(event, Followed)
                    self._followers.apply_later(writes, followee, follower, event.seq, present)
        return {a: audience[a] for a in authors if a in posting and a not in big}

    def _crossed(
        self,
        writes: Writes,
        author: int,
        marked: bool | None,
        big: bool,
        held: Held | None,
        audience: list[int],
    ) -> None:
        """The author's tweets are now treated the other way (or were never marked): mark it,
        and if it crossed the threshold, drop every follower's celebrity list first, queued
        before the batch's pushes (a list read after the push has the author on the new side).
        Below the threshold its followers are its ``audience`` (``_audience`` found them);
        above it they are pushed nothing, so they come from memory or the table."""
        if marked is not None:
            if not big:
                everyone: Iterable[int] = audience
            elif held is not None:
                everyone = held.present
            else:
                everyone = self._graph.all_ids(author, "followers")
            for follower in everyone:
                self._timelines.forget_celebrities_later(writes, follower)
        self._timelines.mark_celebrity_later(writes, author, big)

    def _audience(self, author: int, held: Held | None, big: bool, deleting: bool) -> list[int]:
        """Whom an author's tweets are pushed to (or removed from): the followers, from memory;
        a celebrity's tweets reach nobody but the author (merged on read), though a deleted one
        is removed from every follower (it may have been fanned out before the author crossed
        the threshold)."""
        if held is not None and not big:
            return sorted(held.present)
        if not big:
            return sorted(self._load_followers(author).present)
        return list(self._graph.all_ids(author, "followers")) if deleting else []

    def _load_followers(self, author: int) -> Held:
        """A missing followers hash, rebuilt from the table (the graph stream keeps it)."""
        return self._followers.rebuild(author, lambda: (self._graph.followers_versions(author), 0))

    # ---- stream: tweets -------------------------------------------------------------------
    def tweet_created(self, author_id: int, tweet_id: int) -> None:
        new = entry(author_id, tweet_id)
        big = self._is_celebrity(author_id)
        self._timelines.remember_recent(author_id, new, celebrity=big)
        self._timelines.push([author_id], new)
        if not big:
            self._timelines.push(self._graph.all_ids(author_id, "followers"), new)

    def tweet_deleted(self, author_id: int, tweet_id: int) -> None:
        gone = entry(author_id, tweet_id)
        self._timelines.forget_recent(author_id, gone)
        self._timelines.remove([author_id], gone)
        # Also for a celebrity: it may have been fanned out before it crossed the threshold.
        self._timelines.remove(self._graph.all_ids(author_id, "followers"), gone)

    # ---- stream: follows ------------------------------------------------------------------
    def followed(self, follower: int, followee: int) -> None:
        self._timelines.forget_celebrities(follower)
        if self._is_celebrity(followee):
            return  # merged at read time
        entries = self._recent(followee, self._policy.backfill)
        self._timelines.add(follower, entries)

    # ---- authors' recent tweets ----------------------------------------------------------
    def ensure_recent(self, authors: list[int]) -> None:
        """Build the sets of these celebrities that are missing on the celebrities' tag (the
        home count reads followed celebrities' sets)."""
        self._ensure_recent(authors, celebrity=True)

    def _ensure_recent(self, authors: list[int], celebrity: bool = False) -> None:
        """Fill the missing recent sets of these authors (with ``celebrity``, their sets on the
        celebrities' tag, which every follower's home read merges) from the tweets table."""
        built = self._timelines.recent_built(authors, celebrity) if authors else {}
        missing = [author for author, ok in built.items() if not ok]
        # After a cache loss every followed author's set is missing: their Queries go side by
        # side (issue 40: one after another, a rebuild outlived the request's deadline).
        newest = self._tweets.newest_of(missing, self._policy.recent_cap) if missing else {}
        for author in missing:
            entries = [entry(author, t.id) for t in newest[author]]
            self._timelines.fill_recent(author, entries, celebrity)

    def _recent(self, author: int, limit: int) -> list[str]:
        self._ensure_recent([author])
        return self._timelines.recent_pages([author], None, limit)[author]

    # ---- reading --------------------------------------------------------------------------
    def rebuild(self, user_id: int) -> None:
        self._timelines.start_rebuild(user_id)
        following = list(self._graph.all_ids(user_id, "following"))
        big = self._celebrities_among(following)
        authors = [user_id] + [uid for uid in following if uid not in big]
        self._ensure_recent(authors)
        pages = self._timelines.recent_pages(authors, None, self._policy.recent_cap)
        newest = heapq.nlargest(self._policy.cap, {e for page in pages.values() for e in page})
        self._timelines.finish_rebuild(user_id, newest)

    def home(self, viewer: int, limit: int, cursor: str | None) -> TweetPage:
        return at_once(
            self._timelines.batch(), lambda batch: self.home_later(batch, viewer, limit, cursor)
        )

    def home_later(
        self, batch: ReadBatch, viewer: int, limit: int, cursor: str | None
    ) -> Later[TweetPage]:
        """A page of the home timeline, without the tweets and retweets of anyone the viewer
        blocks, is blocked by or mutes, nor those holding one of the viewer's muted words. Its
        first reads (the page of ids, the followed celebrities, the viewer's blocks hash and
        muted words) are queued in ``batch``, the rest in the
        reader (warm: one more round trip, the tweets with their authors, counters and the
        viewer's flags). ``HOME_OVERFETCH`` times the page is read so that a page with hidden
        entries is still full; only a page with more hidden entries than that reads on (a
        round trip per further chunk)."""
        before = decode_cursor("home", cursor)
        fetch = limit * HOME_OVERFETCH
        page = self._timelines.home_page_later(batch, viewer, before, fetch)
        shield = self._shields.later(batch, viewer)
        muted = self._muted.later(batch, viewer)
        return lambda: self._home_page(
            viewer, before, limit, fetch, *page(), shield().hidden, muted()
        )

    def _home_page(
        self,
        viewer: int,
        before: int | None,
        limit: int,
        fetch: int,
        entries: list[str] | None,
        celebrities: list[int] | None,
        hidden: Collection[int],
        muted: TweetFilter,
    ) -> TweetPage:
        if entries is None:
            self.rebuild(viewer)
            entries = self._timelines.page(viewer, before, fetch) or []
        if celebrities is None:
            celebrities = self._celebrities_followed(viewer)
        celebrities = [c for c in celebrities if c not in hidden]
        if celebrities:
            self._ensure_recent(celebrities, celebrity=True)
        kept: list[str] = []
        while True:
            read = entries
            if celebrities:
                extra = self._timelines.recent_pages(celebrities, before, fetch, celebrity=True)
                read = heapq.nlargest(fetch, set(entries).union(*extra.values()))
            kept += [e for e in read if parse_entry(e)[0] not in hidden] if hidden else read
            if len(kept) >= limit or len(read) < fetch:
                break
            before = parse_entry(read[-1])[1]  # all hidden so far: read on below them
            entries = self._timelines.page(viewer, before, fetch) or []
        pairs = [parse_entry(e) for e in kept[:limit]]
        rendered = self._tweets.show(pairs, viewer)
        if hidden or muted:  # most readers hide no one and mute no word: nothing to look at
            rendered = [
                tweet
                for tweet in rendered
                # A retweet of a hidden user's tweet goes too.
                if (tweet.retweet_of is None or int(tweet.retweet_of.author.id) not in hidden)
                # Muted words are matched on the shown tweets (their texts are read there); a
                # page they thin is answered shorter, its cursor after the last entry read.
                and not muted.hides_tweet(tweet, viewer)
            ]
        next_cursor = encode_cursor("home", pairs[-1][1]) if len(pairs) >= limit else None
        return TweetPage(rendered, next_cursor)
