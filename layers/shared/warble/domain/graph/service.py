"""The follow graph's rules: follow, unfollow, lists, statuses, mutual friends and degrees.

Storage is behind ``GraphStore`` (warble.dal.graph has the DynamoDB design and its trade-offs);
profiles come from the accounts service's cache, counts from a lease-guarded Redis cache over the
graph (following_count, transactional) and the counters table (followers_count, from the stream).

Every User in a list carries the viewer's relationship to it, from the following sets in Redis
(warble.dal.memberships): the page's profiles, counts and relationships are one pipeline when
warm; misses go to PostgreSQL (profiles), the graph and counters tables (counts) and the
viewer's edges (relationships of users whose sets are cold).

Degrees on the friends graph (seed 000): 1 and 2 are answered live from the two users' friend
sets; 3 intersects the viewer's second-degree set with X's friends. The set is computed when read
from the friends of the viewer's friends (``warble.domain.graph.degrees``; docs/graph.md) and
cached until the graph stream sees a friendship that changes it begin or end (issue 46: no job
rebuilds every set).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from warble.domain.accounts.answers import (
    Me,
    RelatedUser,
    Relationship,
    SeenUser,
    User,
    UserPage,
    user_values,
)
from warble.domain.accounts.ports import Profiles
from warble.domain.counters.ports import CounterStore, Delta, user_counter
from warble.domain.graph.answers import Degree, MutualFriends, RelationshipNow
from warble.domain.graph.degrees import friendships, second_degree, whose_second_degree
from warble.domain.graph.ports import FollowRejected, GraphStore
from warble.domain.pagination import decode_cursor, encode_cursor
from warble.domain.shared import Cache, IdGenerator, Later, Memberships, ReadBatch, Writes, at_once
from warble.errors import (
    Blocked,
    CannotFollowSelf,
    FieldError,
    FollowLimitReached,
    NotFound,
    Unavailable,
    ValidationFailed,
)
from warble.events import Followed, Unfollowed

FIRST_PAGE_SIZE = 100  # entries of a big account's list kept in Redis (the API's max limit)
MAX_ATTEMPTS = 12  # follow/unfollow transactions retried on a race or a conflict
# Followers read per Query by ``all_ids`` (a fan-out): DynamoDB returns up to 1 MB a call, about
# 15,000 of these small list items, so 10,000 followers are one round trip rather than ten.
FOLLOWER_PAGE = 10_000


def status_of(follows: bool, followed_by: bool) -> Relationship:
    if follows and followed_by:
        return "friends"
    if follows:
        return "following"
    return "followed_by" if followed_by else "none"


@dataclass(frozen=True)
class GraphPolicy:
    follow_limit: int = 1000
    big_account_followers: int = 10_000
    # A big account's followers are spread over more partitions as it grows (warble.dal.graph,
    # docs/graph.md): from ``spread_from`` followers on, a power of two of shards with at most
    # ``followers_per_shard`` each, up to ``max_follower_shards`` (the store's ceiling).
    spread_from: int = 100_000
    followers_per_shard: int = 4_000_000
    max_follower_shards: int = 16

    def follower_shards(self, followers: int) -> int:
        """The partitions an account's followers go to at ``followers`` followers. Steps are
        powers of two so an account crosses few of them in its life; the count only ever
        grows (a shrinking account keeps its shards: its edges are where they were written)."""
        if followers < self.spread_from:
            return 1
        wanted = max(2, math.ceil(followers / self.followers_per_shard))
        return min(self.max_follower_shards, 1 << (wanted - 1).bit_length())


LABELS: dict[int | None, Literal["1st", "2nd", "3rd", "3rd+"]] = {
    1: "1st",
    2: "2nd",
    3: "3rd",
    None: "3rd+",
}


# ---- Users as API.md writes them, from hydrated records (profile + counts + relationship) ------
def user_seen(record: dict[str, Any], viewer: int | None) -> SeenUser:
    """The User a viewer reads: with the viewer's relationship unless it is the viewer (or the
    answer is unauthenticated, ``viewer`` None)."""
    if viewer is None or viewer == int(record["id"]):
        return User(*user_values(record))
    return RelatedUser(*user_values(record), record.get("relationship", "none"))


def me_seen(record: dict[str, Any]) -> Me:
    """The User its owner reads (``GET /v1/users/me``, sign-up, login): with the email and
    the admin flag (``AccountService.owned`` adds it to the profile record)."""
    return Me(*user_values(record), record["email"], record["admin"])


# ---- the counter rule of the graph's events -----------------------------------------------------
def followers_counted(event: Followed | Unfollowed) -> list[Delta]:
    """A follow counts once on its followee while it exists."""
    amount = 1 if isinstance(event, Followed) else -1
    return [Delta(user_counter(event.followee), "followers_count", amount)]


# ---- the service ------------------------------------------------------------------------------
class GraphService:
    def __init__(
        self,
        store: GraphStore,
        counters: CounterStore,
        profiles: Profiles,
        counts_cache: Cache[int],
        page_cache: Cache[tuple[int, str]],
        ids: IdGenerator,
        policy: GraphPolicy,
        following: Memberships,
        friends_cache: Cache[int],
        degree2_cache: Cache[int],
    ) -> None:
        self._store = store
        # Friend ids and second-degree sets, for the degrees of a page of people at once.
        self._friends = friends_cache
        self._degree2 = degree2_cache
        self._following = following
        self._counters = counters
        self._profiles = profiles
        self._counts = counts_cache
        self._pages = page_cache
        self._ids = ids
        self._policy = policy
        # The followers shards this container has asked the store for, per account: each step
        # is one conditional write a container, not one a stream batch.
        self._spread: dict[int, int] = {}

    # ---- writes ------------------------------------------------------------------------
    def follow(self, viewer: int, target: int) -> RelationshipNow:
        if viewer == target:
            raise CannotFollowSelf()
        self._profiles.profile(target)  # 404 for an unknown user
        for attempt in range(MAX_ATTEMPTS):
            out, into = self._store.pair(viewer, target)
            if out is not None:
                return RelationshipNow(status_of(True, into is not None))  # idempotent
            seq = self._ids.next_id()
            try:
                friend = self._store.follow(viewer, target, seq, into, self._policy.follow_limit)
            except FollowRejected as rejected:
                if rejected.reason == FollowRejected.LIMIT:
                    raise FollowLimitReached() from rejected
                if rejected.reason == FollowRejected.BLOCKED:
                    raise Blocked() from rejected
                _pause(attempt)
                continue
            self._following.apply(viewer, target, seq, present=True)
            self._changed(viewer, target)
            return RelationshipNow(status_of(True, friend))
        raise Unavailable("The follow graph is busy; try again.")

    def unfollow(self, viewer: int, target: int) -> RelationshipNow:
        if viewer == target:
            raise CannotFollowSelf()
        self._profiles.profile(target)
        for attempt in range(MAX_ATTEMPTS):
            out, into = self._store.pair(viewer, target)
            if out is None:
                return RelationshipNow(status_of(False, into is not None))  # idempotent
            try:
                self._store.unfollow(viewer, target, out, into)
            except FollowRejected:
                _pause(attempt)
                continue
            self._following.apply(viewer, target, out.seq, present=False)
            self._changed(viewer, target)
            return RelationshipNow(status_of(False, into is not None))
        raise Unavailable("The follow graph is busy; try again.")

    def changed(self, follower: int, followee: int) -> None:
        """A follow between them began or ended (a block ends follows too)."""
        self._changed(follower, followee)

    def _changed(self, follower: int, followee: int) -> None:
        # After the commit, like profiles: the lease makes any in-flight fill of old data fail.
        self._counts.invalidate(follower)
        self._pages.invalidate((follower, "following"))
        self._pages.invalidate((followee, "followers"))
        self._friends.invalidate_many([follower, followee])

    def follow_seen(self, event: Followed | Unfollowed) -> None:
        """The graph stream's copy of a follow or unfollow: applied to the follower's set too,
        so a change the write path could not apply (its container died after the commit) is
        not lost. Versions make the second application of a change a no-op."""
        if event.seq is not None:
            self._following.apply(
                event.follower, event.followee, event.seq, present=isinstance(event, Followed)
            )
        # A friendship may have begun or ended: the write path dropped the cached friends, and
        # so does the stream's copy, in case the write path's container died after its commit.
        self._friends.invalidate_many([event.follower, event.followee])

    def follow_seen_later(self, writes: Writes, event: Followed | Unfollowed) -> None:
        """``follow_seen``, queued in a stream batch's writes."""
        if event.seq is not None:
            present = isinstance(event, Followed)
            self._following.apply_later(writes, event.follower, event.followee, event.seq, present)

    # ---- lists -------------------------------------------------------------------------
    def following(self, viewer: int, user_id: int, limit: int, cursor: str | None) -> UserPage:
        return self._time_list(viewer, user_id, "following", limit, cursor)

    def followers(self, viewer: int, user_id: int, limit: int, cursor: str | None) -> UserPage:
        return self._time_list(viewer, user_id, "followers", limit, cursor)

    def _time_list(
        self, viewer: int, user_id: int, which: str, limit: int, cursor: str | None
    ) -> UserPage:
        kind = "o" if which == "following" else "i"
        before = decode_cursor(kind, cursor)
        self._profiles.profile(user_id)
        if before is None and limit <= FIRST_PAGE_SIZE and self._is_big(user_id):
            rows, more = self._first_page(user_id, which, limit)
        else:
            rows, more = self._store.page(user_id, which, limit, before)
        next_cursor = encode_cursor(kind, rows[-1][1]) if more and rows else None
        return self.user_page(viewer, [uid for uid, _ in rows], next_cursor)

    def _is_big(self, user_id: int) -> bool:
        return self.counts([user_id])[user_id]["followers_count"] >= (
            self._policy.big_account_followers
        )

    def _first_page(self, user_id: int, which: str, limit: int) -> tuple[list[Any], bool]:
        def load() -> dict[str, Any]:
            rows, more = self._store.page(user_id, which, FIRST_PAGE_SIZE, None)
            return {"rows": [[uid, seq] for uid, seq in rows], "more": more}

        cached = self._pages.get_or_load((user_id, which), load) or load()
        rows = [(int(uid), int(seq)) for uid, seq in cached["rows"]]
        return rows[:limit], len(rows) > limit or bool(cached["more"])

    def all_ids(self, user_id: int, which: str) -> Iterator[int]:
        """Every id of a user's ``followers`` or ``following`` list (the home timelines'
        fan-out and rebuild): followers a Query page of ``FOLLOWER_PAGE`` at a time, shard
        after shard (in no overall order: a fan-out needs everyone, not an order); following
        newest first."""
        if which == "followers":
            for rows in self._store.follower_pages(user_id, FOLLOWER_PAGE):
                yield from (uid for uid, _ in rows)
            return
        before = None
        while True:
            rows, more = self._store.page(user_id, which, FOLLOWER_PAGE, before)
            yield from (uid for uid, _ in rows)
            if not more or not rows:
                return
            before = rows[-1][1]

    def followers_versions(self, user_id: int) -> dict[int, int]:
        """Every follower of a user with the follow's ``seq`` (its version in the fan-out's
        followers hash), a Query page of ``FOLLOWER_PAGE`` at a time, shard after shard."""
        found: dict[int, int] = {}
        for rows in self._store.follower_pages(user_id, FOLLOWER_PAGE):
            found.update(rows)
        return found

    def followers_counted(self, counts: dict[int, int]) -> None:
        """Followers counts as a stream batch read them (the fan-out's): an account past its
        next step (``GraphPolicy.follower_shards``) has its followers spread over more
        partitions from now on. Rare, and idempotent (the store never lowers the count)."""
        for user_id, followers in counts.items():
            shards = self._policy.follower_shards(followers)
            if shards <= self._spread.get(user_id, 1):
                continue
            self._store.spread(user_id, shards)
            if len(self._spread) >= 10_000:
                self._spread.clear()  # bounded: forgetting costs one more no-op write
            self._spread[user_id] = shards

    def friends(self, viewer: int, user_id: int, limit: int, cursor: str | None) -> UserPage:
        after = decode_cursor("f", cursor)
        self._profiles.profile(user_id)
        ids, more = self._store.friends_page(user_id, limit, after)
        next_cursor = encode_cursor("f", ids[-1]) if more and ids else None
        return self.user_page(viewer, ids, next_cursor)

    def mutual_friends(self, viewer: int, other: int) -> MutualFriends:
        self._profiles.profile(other)
        mine = self._store.friends(viewer)
        theirs = set(self._store.friends(other))
        both = [uid for uid in mine if uid in theirs]
        return MutualFriends(len(both), self.people(viewer, both))

    # ---- statuses and hydration --------------------------------------------------------
    def relationships(self, viewer: int, user_ids: list[int]) -> list[tuple[int, str]]:
        return list(
            at_once(
                self._following.batch(), lambda b: self.relationships_later(b, viewer, user_ids)
            )
        )

    def relationships_later(
        self, batch: ReadBatch, viewer: int, user_ids: list[int]
    ) -> Later[list[tuple[int, Relationship]]]:
        """The viewer's relationship to each user, from the following sets in Redis: one HMGET
        of the viewer's set (does the viewer follow them?) and one of each user's (do they
        follow the viewer?), queued in ``batch``. A set not in Redis is rebuilt from the table:
        the viewer's, and the other user's when the read is of one user (a profile). A list's
        users whose sets are cold (Discover's strangers, say) are asked of the viewer's ``I#``
        edges instead, in one BatchGetItem: their sets are rebuilt by their own reads."""
        others = [uid for uid in dict.fromkeys(user_ids) if uid != viewer]
        if not others:
            return lambda: [(uid, "none") for uid in user_ids]
        mine = self._following.check_later(batch, viewer, others)
        theirs = {uid: self._following.check_later(batch, uid, [viewer]) for uid in others}

        def answer() -> list[tuple[int, Relationship]]:
            held = mine()
            follows = held.present if held is not None else self._rebuild(viewer)
            followed_by: set[int] = set()
            cold: list[int] = []
            for uid in others:
                their = theirs[uid]()
                if their is None:
                    cold.append(uid)
                elif viewer in their.present:
                    followed_by.add(uid)
            if len(others) == 1 and cold:
                if viewer in self._rebuild(cold[0]):
                    followed_by.add(cold[0])
            elif cold:
                followed_by |= self._store.followers_among(viewer, cold)
            return [(uid, status_of(uid in follows, uid in followed_by)) for uid in user_ids]

        return answer

    def _rebuild(self, owner: int) -> frozenset[int]:
        """Who ``owner`` follows, from the table (one Query), stored in Redis again."""
        held = self._following.rebuild(owner, lambda: (self._store.following_seqs(owner), 0))
        return held.present

    def counts(self, user_ids: list[int]) -> dict[int, dict[str, int]]:
        return at_once(self._counts.batch(), lambda batch: self.counts_later(batch, user_ids))

    def counts_later(
        self, batch: ReadBatch, user_ids: list[int]
    ) -> Later[dict[int, dict[str, int]]]:
        unique = list(dict.fromkeys(user_ids))

        def load(missing: list[int]) -> list[dict[str, int] | None]:
            wanted = [unique[i] for i in missing]
            following = self._store.following_counts(wanted)
            derived = self._counters.read([user_counter(uid) for uid in wanted])
            return [
                {
                    "followers_count": max(0, derived[user_counter(uid)].get("followers_count", 0)),
                    "following_count": following.get(uid, 0),
                    "tweet_count": max(0, derived[user_counter(uid)].get("tweet_count", 0)),
                }
                for uid in wanted
            ]

        read = self._counts.get_many_later(batch, unique, load)

        def counts() -> dict[int, dict[str, int]]:
            return {uid: value or {} for uid, value in zip(unique, read(), strict=True)}

        return counts

    def followers_counts_later(
        self, batch: ReadBatch, user_ids: list[int]
    ) -> Later[dict[int, int]]:
        """Followers counts for the stream's fan-out: from the counts cache, a miss from the
        counters alone (one BatchGetItem) and not cached, since the counter consumer drops
        these users' counts as it counts the same batch."""
        unique = list(dict.fromkeys(user_ids))

        def load(missing: list[int]) -> list[dict[str, int] | None]:
            wanted = [user_counter(unique[i]) for i in missing]
            derived = self._counters.read(wanted)
            return [{"followers_count": derived[key].get("followers_count", 0)} for key in wanted]

        read = self._counts.get_many_later(batch, unique, load, fill=False)

        def counts() -> dict[int, int]:
            return {
                uid: max(0, (value or {}).get("followers_count", 0))
                for uid, value in zip(unique, read(), strict=True)
            }

        return counts

    def users(self, viewer: int | None, user_ids: list[int]) -> list[dict[str, Any]]:
        """Hydrated Users, in order: profile + counts + the viewer's relationship, read from
        Redis in one round trip (the misses from their stores)."""
        if not user_ids:
            return []
        return at_once(
            self._counts.batch(), lambda batch: self.users_later(batch, viewer, user_ids)
        )

    def users_later(
        self, batch: ReadBatch, viewer: int | None, user_ids: list[int]
    ) -> Later[list[dict[str, Any]]]:
        """``users`` with its reads queued in ``batch``."""
        profiles = self._profiles.profiles_later(batch, user_ids)
        counts = self.counts_later(batch, user_ids)
        statuses = self.relationships_later(batch, viewer, user_ids) if viewer is not None else None

        def users() -> list[dict[str, Any]]:
            found = profiles()
            present = [uid for uid in user_ids if uid in found]
            if not present:
                return []
            numbers = counts()
            relationship = dict(statuses()) if statuses is not None else {}
            return [
                {**found[uid], **numbers[uid], "relationship": relationship.get(uid, "none")}
                for uid in present
            ]

        return users

    def people(self, viewer: int, user_ids: list[int]) -> list[SeenUser]:
        """``users`` as API.md's Users (unknown ids left out)."""
        return [user_seen(record, viewer) for record in self.users(viewer, user_ids)]

    def user_page(self, viewer: int, user_ids: list[int], next_cursor: str | None) -> UserPage:
        """A page of these users as ``viewer`` sees them, in order (unknown ids left out)."""
        return UserPage(self.people(viewer, user_ids), next_cursor)

    def user(self, viewer: int, user_id: int) -> SeenUser:
        """One User as ``viewer`` sees it: profile, counts and relationship in one round trip
        when warm (404 for an unknown id)."""
        return at_once(self._counts.batch(), lambda batch: self.user_later(batch, viewer, user_id))

    def user_later(self, batch: ReadBatch, viewer: int, user_id: int) -> Later[SeenUser]:
        """``user`` with its reads queued in ``batch`` (the reader raises the 404)."""
        read = self.users_later(batch, viewer, [user_id])

        def user() -> SeenUser:
            found = read()
            if not found:
                raise NotFound("No such user.")
            return user_seen(found[0], viewer)

        return user

    def me(self, record: dict[str, Any]) -> Me:
        """A profile record (from the accounts service) as its owner reads it, with counts."""
        return me_seen(self._enrich(None, record))

    def seen(self, viewer: int, record: dict[str, Any]) -> SeenUser:
        """A profile record (from the accounts service) as ``viewer`` reads it."""
        return user_seen(self._enrich(viewer, record), viewer)

    def _enrich(self, viewer: int | None, record: dict[str, Any]) -> dict[str, Any]:
        """One profile record (from the accounts service) with counts and relationship."""
        uid = int(record["id"])
        batch = self._counts.batch()
        counts = self.counts_later(batch, [uid])
        statuses = None
        if viewer is not None and viewer != uid:
            statuses = self.relationships_later(batch, viewer, [uid])
        batch.run()
        extra: dict[str, Any] = dict(counts()[uid])
        if statuses is not None:
            extra["relationship"] = statuses()[0][1]
        return {**record, **extra}

    # ---- degrees -----------------------------------------------------------------------
    def friends_later(
        self, batch: ReadBatch, user_ids: list[int]
    ) -> Later[dict[int, frozenset[int]]]:
        """Each user's friends, cached (one GET each in ``batch``; a miss is one Query)."""
        unique = list(dict.fromkeys(user_ids))

        def load(missing: list[int]) -> list[Any]:
            found = self._store.friends_of([unique[i] for i in missing])
            return [sorted(found.get(unique[i], ())) for i in missing]

        read = self._friends.get_many_later(batch, unique, load)

        def friends() -> dict[int, frozenset[int]]:
            return {uid: frozenset(ids or ()) for uid, ids in zip(unique, read(), strict=True)}

        return friends

    def friends_of(self, user_ids: list[int]) -> dict[int, frozenset[int]]:
        """Each user's friends, cached (one pipeline; the misses read side by side)."""
        if not user_ids:
            return {}
        return at_once(self._friends.batch(), lambda batch: self.friends_later(batch, user_ids))

    def second_degree_later(self, batch: ReadBatch, user_id: int) -> Later[frozenset[int]]:
        """The user's second-degree set, cached; a miss computes it from the friends of the
        user's friends (at most the follow limit's lists, cached each)."""

        def load(missing: list[int]) -> list[Any]:
            return [sorted(self._second_degree(user_id)) for _ in missing]

        read = self._degree2.get_many_later(batch, [user_id], load)
        return lambda: frozenset(read()[0] or ())

    def _second_degree(self, user_id: int) -> frozenset[int]:
        first = sorted(self.friends_of([user_id])[user_id])
        return second_degree(user_id, first, self.friends_of(first))

    def degree(self, viewer: int, other: int) -> Degree:
        if viewer == other:
            raise ValidationFailed([FieldError("user_id", "is yourself")])
        self._profiles.profile(other)
        mine = set(self._store.friends(viewer))
        if other in mine:
            return Degree(1, LABELS[1])
        theirs = set(self._store.friends(other))
        if mine & theirs:
            return Degree(2, LABELS[2])
        if theirs:
            second = at_once(
                self._degree2.batch(), lambda batch: self.second_degree_later(batch, viewer)
            )
            if second & theirs:
                return Degree(3, LABELS[3])
        return Degree(None, LABELS[None])

    def friendships_changed(self, changes: list[Followed | Unfollowed]) -> int:
        """The graph stream's friendships that began or ended: the second-degree sets they
        change are dropped from the cache (read again when next asked). Returns how many.
        Idempotent: a redelivered change drops the same sets again."""
        pairs = friendships(changes)
        if not pairs:
            return 0
        ends = sorted({uid for pair in pairs for uid in pair})
        friends = self._store.friends_of(ends)  # as they are now, read consistently
        whose = sorted(set().union(*(whose_second_degree(pair, friends) for pair in pairs)))
        # After the friendship's commit: a set filled from the old friends loses its lease.
        for start in range(0, len(whose), 1000):
            self._degree2.invalidate_many(whose[start : start + 1000])
        return len(whose)


def _pause(attempt: int) -> None:
    # Full jitter: racers on one META item must not retry in lockstep.
    time.sleep(random.uniform(0, min(0.2, 0.005 * (2**attempt))))
