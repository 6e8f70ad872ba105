"""An account's deletion, after its synchronous part (``AccountService.delete_account``): the
workflow that removes everything the account made, for everyone (API.md "Deleting an
account"; docs/accounts.md has the design, the families of data and the costs).

The workflow is a chain of SQS messages, one per slice of work (``Step``): a slice deletes at
most ``slice_items`` things or runs ``slice_seconds``, whichever comes first, then sends the
message of what comes next (the same step again, or the next one). So no call can time out
half-way through an account however big it is, and a crash loses nothing: the message of the
slice that crashed is delivered again after the queue's visibility timeout, and every slice is
idempotent (it deletes what it finds; what is gone is not found again, and the counters the
streams keep only move for items that were there). A message already acted on (a duplicate, or
one sent again by a crash between the send and the delete) is dropped by its number ``n``.

The steps, in order, and why in this order:

1. ``followers``, ``following``: the follows both ways, through the same items and counts as an
   unfollow, so the streams lower the other side's followers_count and take the account's
   tweets out of its followers' home timelines (one ``remove_author`` per follower, not one
   removal per tweet and follower). First, so that the tweets' deletions reach no follower.
2. ``restrictions``: blocks and mutes, its own and others' blocks of it (both records).
3. ``likes``: its likes; the streams lower each tweet's like_count once (only an edge that was
   there makes a stream record). The like notifications they caused go with them.
4. ``tweets``: its tweets, retweets and replies; the tweets stream's consumers do what they do
   for any deleted tweet (its retweets and likes by others, its media in S3 and the media
   table, its hashtag entries and trend uses, the author's recent set, the counts). The
   notifications they caused go with them, and each slice sends a ``tweet_counters`` side
   step for their counter items.
5. ``conversations`` (both participants' memberships, the history, the pair and match items),
   ``places`` (Discover: location, geo index, swipes, matches).
6. ``partitions``: whatever is left under the account's own keys in every table.
7. ``counters``: the account's counter item, once the streams have applied every removal (its
   counts are then 0); deleted before that, a late decrement would create it again.
8. ``redis``: every key of the account's own tags, and its trend uses.
9. ``finish``: the outbox row is marked finished.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from warble import clock
from warble.domain.deletion.ports import (
    DeletedAccounts,
    Directory,
    ErasedTweet,
    RedisLeftovers,
    Step,
    StepNotSent,
    StepQueue,
    TableErasure,
    Unread,
)
from warble.domain.notifications.ports import (
    follow_cause,
    like_cause,
    match_cause,
    mention_cause,
    reply_cause,
    retweet_cause,
)
from warble.domain.text import mentioned

STEPS = (
    "followers",
    "following",
    "restrictions",
    "likes",
    "tweets",
    "conversations",
    "places",
    "partitions",
    "counters",
    "redis",
    "finish",
)
TWEET_COUNTERS = "tweet_counters"
REACTORS_PER_MESSAGE = 5000  # user ids in one message: 100 KB of SQS's 256 KB


@dataclass(frozen=True)
class DeletionPolicy:
    slice_items: int = 2000  # things deleted by one invocation, at most
    slice_seconds: float = 20.0  # and its time, well inside the function's timeout
    batch: int = 100  # things per store call
    settle_delay_seconds: int = 2  # between two looks at counters still moving
    settle_tries: int = 900  # looks (30 minutes) before a counter is deleted whatever it says
    stalled_after_seconds: int = 900  # a chain that moved no further: started again


class AccountDeletion:
    def __init__(
        self,
        queue: StepQueue,
        tables: Callable[[], TableErasure],
        redis: Callable[[], RedisLeftovers],
        directory: Callable[[], Directory],
        outbox: Callable[[], DeletedAccounts],
        policy: DeletionPolicy,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        # The stores are built on first use: the accounts function only sends the first step.
        self._queue = queue
        self._tables = tables
        self._redis = redis
        self._directory = directory
        self._outbox = outbox
        self._policy = policy
        self._monotonic = monotonic

    # ---- the start (AccountService's AccountDeletions) ----------------------------------------
    def start(self, user_id: int) -> bool:
        """Send the workflow's first step; False when the queue did not take it (the deletion
        is committed all the same: ``restart_stalled`` starts it later)."""
        try:
            self._queue.send([Step(user_id, STEPS[0], n=1)])
        except StepNotSent:
            return False
        return True

    def restart_stalled(self, limit: int = 100) -> int:
        """Deletions whose chain has not moved for ``stalled_after_seconds`` (its first message
        was never sent, or a step went to the failure queue and was not replayed): started
        again from the first step, which finds done what is done. Answers how many."""
        stalled = self._policy.stalled_after_seconds
        restarted = []
        for user_id in self._outbox().unfinished(stalled, limit):
            chain = self._redis().chain_position(user_id)
            if chain is not None and clock.epoch_ms() - chain[1] < stalled * 1000:
                continue
            restarted.append(Step(user_id, STEPS[0], n=(chain[0] if chain else 0) + 1))
        if restarted:
            self._queue.send(restarted)
        return len(restarted)

    # ---- one message -------------------------------------------------------------------------
    def run(self, step: Step) -> Step | None:
        """Act on one message: a slice of its step, then the message of what comes next (sent
        before this returns); None when this one was a duplicate or the chain's end."""
        if step.name == TWEET_COUNTERS:
            self._tweet_counters(step)
            return None
        redis = self._redis()
        chain = redis.chain_position(step.user_id)
        if chain is not None and step.n <= chain[0]:
            return None  # acted on already (a duplicate, or a redelivery after its send)
        following = self._slice(step)
        if following is not None:  # (the chain's end forgets its place)
            self._queue.send([following], self._delay(following))
            redis.chain_advanced(step.user_id, step.n)
        return following

    def _slice(self, step: Step) -> Step | None:
        user_id, policy = step.user_id, self._policy
        if step.name == "counters":
            unsettled = self._tables().settle_counters(user_id, ())
            if unsettled and step.tries + 1 >= policy.settle_tries:
                self._tables().drop_counters(user_id, ())
                unsettled = []
            if not unsettled:
                self._redis().counter_marks_gone(user_id, ())
                return replace(step, name=_after("counters"), n=step.n + 1, tries=0)
            return replace(step, n=step.n + 1, tries=step.tries + 1)
        if step.name == "redis":
            self._redis().forget_user(user_id)
            return replace(step, name="finish", n=step.n + 1)
        if step.name == "finish":
            self._outbox().finished(user_id)
            self._redis().chain_finished(user_id)
            return None
        act = self._acts()[step.name]
        deadline = self._monotonic() + policy.slice_seconds
        done = 0
        while done < policy.slice_items and self._monotonic() < deadline:
            count = act(user_id, min(policy.batch, policy.slice_items - done))
            if count == 0:
                return replace(step, name=_after(step.name), n=step.n + 1)
            done += count
        return replace(step, n=step.n + 1)

    def _acts(self) -> dict[str, Callable[[int, int], int]]:
        return {
            "followers": self._followers,
            "following": self._following,
            "restrictions": self._restrictions,
            "likes": self._likes,
            "tweets": self._tweets,
            "conversations": self._conversations,
            "places": self._places,
            "partitions": self._tables().partitions,
        }

    # ---- the acts: each a store call and what follows from it (0: nothing was left) --------
    def _followers(self, user_id: int, limit: int) -> int:
        followers = self._tables().followers(user_id, limit)
        self._redis().related_changed(followers)
        return len(followers)

    def _following(self, user_id: int, limit: int) -> int:
        followed = self._tables().following(user_id, limit)
        self._forget_notifications([(other, follow_cause(user_id), "follow") for other in followed])
        self._redis().related_changed(followed)
        return len(followed)

    def _restrictions(self, user_id: int, limit: int) -> int:
        deleted, others = self._tables().restrictions(user_id, limit)
        self._redis().related_changed(others)
        return deleted

    def _likes(self, user_id: int, limit: int) -> int:
        likes = self._tables().likes(user_id, limit)
        self._forget_notifications(
            [(author, like_cause(user_id, tweet), "like") for tweet, author in likes if author]
        )
        return len(likes)

    def _tweets(self, user_id: int, limit: int) -> int:
        erased = self._tables().tweets(user_id, limit)
        tweets = erased.tweets
        if not tweets:
            return 0
        ids = tuple(t.tweet_id for t in tweets)
        self._redis().tweets_gone(user_id, ids)
        self._forget_notifications(self._tweet_causes(user_id, tweets))
        # Whoever liked or retweeted them holds them in their recent likes and retweets, where
        # the purge of those (the tweets stream's cleanup) leaves a removal mark: dropped once
        # the purge is counted (``_tweet_counters``), a bounded number of users a message.
        reactors = erased.reactors
        per = REACTORS_PER_MESSAGE
        sides = [
            Step(user_id, TWEET_COUNTERS, tweets=ids, users=tuple(reactors[i : i + per]))
            for i in range(0, max(len(reactors), 1), per)
        ]
        self._queue.send(sides, self._policy.settle_delay_seconds)
        return len(tweets)

    def _tweet_causes(
        self, user_id: int, tweets: Sequence[ErasedTweet]
    ) -> list[tuple[int, str, str]]:
        """The reply, retweet and mention notifications the tweets caused."""
        found: list[tuple[int, str, str]] = []
        names = {t.tweet_id: mentioned(t.text) for t in tweets if t.retweet_of is None}
        wanted = sorted({name for listed in names.values() for name in listed})
        ids = self._directory().ids_by_usernames(wanted) if wanted else {}
        for tweet in tweets:
            if tweet.reply_to_author is not None:
                found.append((tweet.reply_to_author, reply_cause(tweet.tweet_id), "reply"))
            if tweet.retweet_of is not None and tweet.retweet_of_author is not None:
                cause = retweet_cause(user_id, tweet.retweet_of)
                found.append((tweet.retweet_of_author, cause, "retweet"))
            for name in names.get(tweet.tweet_id, ()):
                if name in ids:
                    found.append((ids[name], mention_cause(tweet.tweet_id), "mention"))
        return found

    def _conversations(self, user_id: int, limit: int) -> int:
        slice_ = self._tables().conversations(user_id, limit)
        self._redis().conversations_gone(slice_.finished)
        return slice_.deleted

    def _places(self, user_id: int, limit: int) -> int:
        places = self._tables().places(user_id, limit)
        self._forget_notifications(
            [(other, match_cause(user_id), "match") for other in places.matched]
        )
        self._redis().places_gone(user_id, places)
        return places.deleted

    def _forget_notifications(self, causes: list[tuple[int, str, str]]) -> None:
        if causes:
            gone: list[Unread] = self._tables().notifications_caused(causes)
            self._redis().unread_gone(gone)

    # ---- the side step: a slice's tweets' counters, once the streams settled them ----------
    def _tweet_counters(self, step: Step) -> None:
        tables = self._tables()
        unsettled = tables.settle_counters(None, step.tweets)
        if unsettled and step.tries + 1 >= self._policy.settle_tries:
            tables.drop_counters(None, unsettled)
            unsettled = []
        self._redis().counter_marks_gone(None, [t for t in step.tweets if t not in unsettled])
        if not unsettled:
            self._redis().flags_changed(step.users)
            return
        again = replace(step, tweets=tuple(unsettled), tries=step.tries + 1)
        self._queue.send([again], self._policy.settle_delay_seconds)

    def _delay(self, step: Step) -> int:
        """A wait for the streams (counters still moving) is sent with a delay; the rest at
        once."""
        return self._policy.settle_delay_seconds if step.name == "counters" and step.tries else 0


def _after(name: str) -> str:
    return STEPS[STEPS.index(name) + 1]
