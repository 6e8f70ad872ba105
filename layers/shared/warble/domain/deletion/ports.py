"""What an account's deletion workflow needs: its queue of steps, the tables' slices
(``warble.dal.erasure``), the Redis leftovers, the directory of usernames and the outbox of
deleted accounts (PostgreSQL)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Step:
    """One message of the workflow: a step of one account's deletion and where it stands.

    ``n`` numbers the chain's messages (a duplicate of a message already acted on is dropped);
    ``tweets`` are the deleted tweets whose counters wait for the streams to settle (the
    ``tweet_counters`` side step), ``users`` those who had liked or retweeted them (their
    recent likes and retweets are dropped once the purge of those is counted), ``tries`` how
    often such a wait was sent again."""

    user_id: int
    name: str
    n: int = 0
    tweets: tuple[int, ...] = ()
    users: tuple[int, ...] = ()
    tries: int = 0


def step_body(step: Step) -> dict[str, object]:
    """A step as its message's JSON body (ids as strings, as everywhere in Warble's JSON)."""
    body: dict[str, object] = {"user_id": str(step.user_id), "step": step.name, "n": step.n}
    if step.tweets:
        body["tweets"] = [str(t) for t in step.tweets]
    if step.users:
        body["users"] = [str(u) for u in step.users]
    if step.tries:
        body["tries"] = step.tries
    return body


def step_of(body: dict[str, object]) -> Step:
    """The step of a message's body; ValueError (or KeyError) when it is not one."""
    tweets, users = body.get("tweets") or [], body.get("users") or []
    if not isinstance(tweets, list) or not isinstance(users, list):
        raise ValueError("tweets and users are lists")
    return Step(
        user_id=int(str(body["user_id"])),
        name=str(body["step"]),
        n=int(str(body.get("n", 0))),
        tweets=tuple(int(str(t)) for t in tweets),
        users=tuple(int(str(u)) for u in users),
        tries=int(str(body.get("tries", 0))),
    )


@dataclass(frozen=True)
class ErasedTweet:
    """A tweet of the account, deleted: what names the notifications it caused."""

    tweet_id: int
    reply_to_author: int | None = None
    retweet_of: int | None = None
    retweet_of_author: int | None = None
    text: str = ""


@dataclass(frozen=True)
class Tweets:
    """A slice of the account's tweets, deleted, and the users who had liked or retweeted
    them (whose recent likes and retweets in Redis name them)."""

    tweets: list[ErasedTweet]
    reactors: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Conversations:
    """A slice of the account's conversations: how many items went, and the conversations that
    are gone whole, with the other participant of each."""

    deleted: int
    finished: list[tuple[int, int]] = field(default_factory=list)  # (conversation, other)


@dataclass(frozen=True)
class Places:
    """A slice of the account's Discover records: the geo cells it was placed in, the people it
    swiped on and the people it matched with (whose match notification goes too)."""

    deleted: int
    cells: list[str] = field(default_factory=list)
    swiped: list[int] = field(default_factory=list)
    matched: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Unread:
    """A notification that went, as the recipient's unread set holds it."""

    recipient: int
    kind: str
    notification_id: int


class Raced(Exception):
    """A slice lost every race with the users' own changes (an unfollow between its read and
    its write): nothing of it was done, and the step is run again."""


class StepNotSent(Exception):
    """The queue did not take a step (SQS unreachable, throttled)."""


class StepQueue(Protocol):
    def send(self, steps: Sequence[Step], delay_seconds: int = 0) -> None: ...


class TableErasure(Protocol):
    """Bounded slices of the account's items in DynamoDB. Each deletes at most about ``limit``
    of them and says what it deleted (an empty answer: nothing was left). Idempotent: deleting
    what is gone changes nothing, and the counters the streams keep (followers_count,
    like_count, ...) are only moved by items that were there. A slice that loses a race with a
    user's own change raises; the step is then run again."""

    def followers(self, user_id: int, limit: int) -> list[int]:
        """Follows of the account: gone with each follower's following_count (the follower's
        META, in the same transaction); the followers."""
        ...

    def following(self, user_id: int, limit: int) -> list[int]:
        """The account's follows: gone; the users it followed."""
        ...

    def restrictions(self, user_id: int, limit: int) -> tuple[int, list[int]]:
        """Its blocks and mutes, and the blocks of it (both sides' records): how many items
        went, and the others."""
        ...

    def likes(self, user_id: int, limit: int) -> list[tuple[int, int]]:
        """Its likes (the three items of each): (tweet, tweet's author) of each."""
        ...

    def tweets(self, user_id: int, limit: int) -> Tweets:
        """Its tweets, retweets and replies with their index items, and who liked or
        retweeted them (read before they went)."""
        ...

    def conversations(self, user_id: int, limit: int) -> Conversations: ...

    def places(self, user_id: int, limit: int) -> Places:
        """Its location, swipes and matches (both users' match items)."""
        ...

    def notifications_caused(self, causes: Sequence[tuple[int, str, str]]) -> list[Unread]:
        """The notifications of (recipient, cause, kind), with their dedupe items."""
        ...

    def partitions(self, user_id: int, limit: int) -> int:
        """What is left under the account's own keys in every table (its notifications, its
        graph META, its second-degree set, ...): how many items went."""
        ...

    def settle_counters(self, user_id: int | None, tweet_ids: Sequence[int]) -> list[int]:
        """Delete the counter items of the user (None: not now) and of these tweets whose
        counts are all 0, which they are once the streams applied every removal; answers the
        tweets whose counters are not settled yet (the user's: as ``-1``)."""
        ...

    def drop_counters(self, user_id: int | None, tweet_ids: Sequence[int]) -> None:
        """Delete them whatever they say (a stream that never settles them)."""
        ...


class RedisLeftovers(Protocol):
    """What Redis holds of the account or derived from it, removed alongside the tables."""

    def related_changed(self, others: Sequence[int]) -> None:
        """Users whose follows, friends, blocks or counts changed: their cached copies go."""
        ...

    def tweets_gone(self, author_id: int, tweet_ids: Sequence[int]) -> None: ...
    def flags_changed(self, users: Sequence[int]) -> None:
        """Users who liked or retweeted the account's tweets: their recent likes and retweets
        go (rebuilt from the tables on their next read)."""
        ...

    def unread_gone(self, unread: Sequence[Unread]) -> None: ...
    def conversations_gone(self, finished: Sequence[tuple[int, int]]) -> None: ...
    def places_gone(self, user_id: int, places: Places) -> None: ...
    def counter_marks_gone(self, user_id: int | None, tweet_ids: Sequence[int]) -> None:
        """The reconciliation's marks of the account's counter (``user_id``) or of its tweets'
        counters, once the streams settled them (nothing marks them again after that)."""
        ...

    def forget_user(self, user_id: int) -> int:
        """Every key of the account's own (its tags: profile, sessions, timelines, sets,
        unread counts, Discover, searches, ...) and its trend uses: how many went."""
        ...

    def chain_position(self, user_id: int) -> tuple[int, int] | None:
        """The highest message number of the account's chain acted on and when (epoch ms);
        None before the first."""
        ...

    def chain_advanced(self, user_id: int, n: int) -> None: ...
    def chain_finished(self, user_id: int) -> None: ...


class Directory(Protocol):
    def ids_by_usernames(self, usernames: list[str]) -> dict[str, int]: ...


class DeletedAccounts(Protocol):
    """PostgreSQL's outbox of deletions (``deleted_accounts``)."""

    def finished(self, user_id: int) -> None: ...
    def unfinished(self, older_than_seconds: int, limit: int) -> list[int]: ...
