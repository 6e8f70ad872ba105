"""The viewer's ``liked_by_me`` and ``retweeted_by_me`` on a page of tweets, from memory.

Each user's recent likes (tweet -> the like's seq) and retweets (original -> the retweet's id)
are versioned membership hashes in Redis (warble.dal.memberships), rebuilt from the tables with
the newest ``recent`` of each, and kept exact by the write path and the streams. A hash knows
every tweet at or above its floor: a like's seq and a retweet's id are Snowflakes minted after
the tweet they act on, so any like or retweet of a tweet newer than the oldest one read is
among those read, or came later and was applied. Only tweets older than the floor (an old page
of a heavy liker) are asked of the tables, with the BatchGetItem this replaced.
"""

from __future__ import annotations

from warble.domain.likes.ports import LikeStore
from warble.domain.shared import Held, Later, Memberships, ReadBatch, Writes
from warble.domain.tweets.ports import TweetStore
from warble.events import Liked, TweetDeleted, TweetPosted, Unliked


class ViewerFlags:
    def __init__(
        self,
        liked: Memberships,
        retweeted: Memberships,
        likes: LikeStore,
        tweets: TweetStore,
        recent: int,
    ) -> None:
        self._liked = liked
        self._retweeted = retweeted
        self._likes = likes
        self._tweets = tweets
        self._recent = recent

    def later(
        self, batch: ReadBatch, viewer: int, tweet_ids: list[int]
    ) -> Later[tuple[set[int], set[int]]]:
        """(the ids the viewer likes, the ids the viewer retweeted): two HMGETs in ``batch``."""
        wanted = list(dict.fromkeys(tweet_ids))
        if not wanted:
            return lambda: (set(), set())
        liked = self._liked.check_later(batch, viewer, wanted)
        retweeted = self._retweeted.check_later(batch, viewer, wanted)

        def flags() -> tuple[set[int], set[int]]:
            likes = liked() or self._rebuild_likes(viewer)
            retweets = retweeted() or self._rebuild_retweets(viewer)
            # Known to both (``Held.knows``, written out: a page asks it of every tweet).
            floor = max(likes.floor, retweets.floor)
            known = {t for t in wanted if t >= floor}
            found = (known & likes.present, known & retweets.present)
            if older := [t for t in wanted if t not in known]:
                old_likes, old_retweets = self._likes.viewer_flags(viewer, older)
                found[0].update(old_likes)
                found[1].update(old_retweets)
            return found

        return flags

    def _rebuild_likes(self, viewer: int) -> Held:
        return self._liked.rebuild(viewer, lambda: self._likes.recent_likes(viewer, self._recent))

    def _rebuild_retweets(self, viewer: int) -> Held:
        return self._retweeted.rebuild(
            viewer, lambda: self._tweets.recent_retweets(viewer, self._recent)
        )

    # ---- changes: the write path applies each after its commit, the streams again -----------
    def liked(self, user_id: int, tweet_id: int, seq: int, present: bool) -> None:
        self._liked.apply(user_id, tweet_id, seq, present)

    def retweeted(self, user_id: int, original_id: int, retweet_id: int, present: bool) -> None:
        self._retweeted.apply(user_id, original_id, retweet_id, present)

    def seen_later(
        self, writes: Writes, event: Liked | Unliked | TweetPosted | TweetDeleted
    ) -> None:
        """A stream batch's copy of a like or a retweet (or its removal), queued in ``writes``."""
        if isinstance(event, Liked | Unliked):
            if event.seq is not None:
                present = isinstance(event, Liked)
                self._liked.apply_later(writes, event.user_id, event.tweet_id, event.seq, present)
        elif event.retweet_of is not None:
            present = isinstance(event, TweetPosted)
            self._retweeted.apply_later(
                writes, event.author_id, event.retweet_of, event.tweet_id, present
            )
