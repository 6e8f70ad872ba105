"""Blocks and mutes (API.md "Blocks and mutes"): the six operations, and the one reader every
feature asks, ``Shields``.

Where each rule lives:
- a block ends both follows and refuses new ones: the graph store's transactions
  (warble.dal.graph: ``block`` deletes the edges as read, ``follow`` checks no block record);
- likes, replies and retweets of a blocker's tweets: the likes and tweets stores' transactions
  check the author's block record (``BlockedByAuthor`` -> 403 blocked);
- direct messages: the conversations service's permission check, and the send transaction
  checks both block records (``PairBlocked`` -> 403 not_allowed);
- notifications: ``NotificationService.notify`` drops a draft whose recipient blocks, is
  blocked by or mutes its actor (``Shields.hides``);
- Discover: the page script skips either side of a block; a swipe between them never matches;
- home timeline, its count, reply lists: filtered at read with the reader's own Shield, read in
  the same pipeline as the page (``Shields.later``).

Each user's Shield (whom they block, who blocks them, whom they mute) is one versioned hash in
Redis (warble.dal.blocks), applied by the write path after each commit and again by the graph
stream's consumer, rebuilt from the table when missing.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from warble.domain.accounts.answers import UserPage
from warble.domain.accounts.ports import Profiles
from warble.domain.blocks.answers import Blocking, Muting
from warble.domain.blocks.ports import BlockSets, BlockStore, Follows, Shield
from warble.domain.graph.answers import RelationshipItem, Relationships
from warble.domain.graph.ports import FollowRejected
from warble.domain.pagination import decode_cursor, encode_cursor
from warble.domain.shared import IdGenerator, Later, Memberships, ReadBatch, Writes, at_once
from warble.errors import FieldError, Unavailable, ValidationFailed
from warble.events import Blocked, Muted, Unblocked, Unmuted
from warble.ids import parse_id

MAX_ATTEMPTS = 12


@dataclass(frozen=True)
class Flags:
    """The three booleans of a ``relationships`` item."""

    blocking: bool = False
    blocked_by: bool = False
    muting: bool = False


NO_FLAGS = Flags()


class Shields:
    """Every user's blocks and mutes from memory, rebuilt from the graph table when missing."""

    def __init__(self, sets: BlockSets, store: BlockStore) -> None:
        self._sets = sets
        self._store = store

    def batch(self) -> ReadBatch:
        return self._sets.batch()

    def later(self, batch: ReadBatch, owner: int) -> Later[Shield]:
        """The owner's whole Shield (one HGETALL queued in ``batch``), rebuilt if cold."""
        read = self._sets.read_later(batch, owner)

        def shield() -> Shield:
            held = read()
            return held if held is not None else self.rebuild(owner)

        return shield

    def about_later(self, batch: ReadBatch, owner: int, others: list[int]) -> Later[Shield]:
        """The owner's Shield restricted to ``others`` (one HMGET), rebuilt if cold."""
        read = self._sets.check_later(batch, owner, others)

        def shield() -> Shield:
            held = read()
            return held if held is not None else self.rebuild(owner)

        return shield

    def about(self, owner: int, other: int) -> Shield:
        return at_once(self.batch(), lambda batch: self.about_later(batch, owner, [other]))

    def blocked_between(self, a: int, b: int) -> bool:
        """A block either way (both sides are in A's hash)."""
        return b in self.about(a, b).blocked

    def hidden_pairs(self, pairs: list[tuple[int, int]]) -> set[tuple[int, int]]:
        """Which ``(recipient, actor)`` pairs a block (either way) or a mute separates: one
        HMGET per recipient, in one round trip."""
        if not pairs:
            return set()
        return at_once(self.batch(), lambda batch: self.hidden_pairs_later(batch, pairs))

    def hidden_pairs_later(
        self, batch: ReadBatch, pairs: list[tuple[int, int]]
    ) -> Later[set[tuple[int, int]]]:
        """``hidden_pairs`` with its HMGETs queued in ``batch``."""
        actors: dict[int, list[int]] = {}
        for recipient, actor in pairs:
            actors.setdefault(recipient, []).append(actor)
        reads = {r: self._sets.check_later(batch, r, others) for r, others in actors.items()}

        def hidden() -> set[tuple[int, int]]:
            held = {r: read() for r, read in reads.items()}
            found = {(r, a) for r, a in pairs if (s := held[r]) is not None and a in s.hidden}
            # A recipient whose hash is not in memory (inactive a day): the records about these
            # actors, read by key for all of them at once, rather than a rebuild each.
            unknown = [(r, a) for r, a in pairs if held[r] is None]
            return found | (self._store.restricted_pairs(unknown) if unknown else set())

        return hidden

    def rebuild(self, owner: int) -> Shield:
        # The store's method is looked up before the rebuild takes its fill lease: a store built
        # on first use (services.Deferred) then imports and connects outside the lease, which
        # every other reader of the hash waits on.
        restrictions = self._store.restrictions
        return self._sets.rebuild(owner, lambda: restrictions(owner))

    def apply(self, owner: int, kind: str, other: int, seq: int, present: bool) -> None:
        self._sets.apply(owner, kind, other, seq, present)

    def apply_later(
        self, writes: Writes, owner: int, kind: str, other: int, seq: int, present: bool
    ) -> None:
        self._sets.apply_later(writes, owner, kind, other, seq, present)


class BlockService:
    def __init__(
        self,
        store: BlockStore,
        shields: Shields,
        following: Memberships,
        graph: Follows,
        profiles: Profiles,
        ids: IdGenerator,
    ) -> None:
        self._store = store
        self._shields = shields
        self._following = following
        self._graph = graph
        self._profiles = profiles
        self._ids = ids

    def _target(self, viewer: int, target: int, field: str = "user_id") -> None:
        if viewer == target:
            raise ValidationFailed([FieldError(field, "is yourself")])
        self._profiles.profile(target)  # 404 for an unknown user

    # ---- blocks ----------------------------------------------------------------------------
    def block(self, viewer: int, target: int) -> Blocking:
        """Block ``target``: ends both follows in the same transaction. Idempotent."""
        self._target(viewer, target)
        for attempt in range(MAX_ATTEMPTS):
            existing = self._store.restriction(viewer, target, "b")
            if existing is not None:
                self._applied_block(viewer, target, existing, True)  # finish a lost apply
                return Blocking(True)
            out, into = self._store.pair(viewer, target)
            seq = self._ids.next_id()
            try:
                self._store.block(viewer, target, seq, out, into)
            except FollowRejected:
                _pause(attempt)
                continue  # blocked meanwhile, or an edge changed: read again
            # After the commit: both Shields, the follows' sets and cached counts and pages.
            self._applied_block(viewer, target, seq, True)
            for follower, followee, edge in ((viewer, target, out), (target, viewer, into)):
                if edge is not None:
                    self._following.apply(follower, followee, edge.seq, present=False)
                    self._graph.changed(follower, followee)
            return Blocking(True)
        raise Unavailable("The follow graph is busy; try again.")

    def unblock(self, viewer: int, target: int) -> Blocking:
        self._target(viewer, target)
        self._toggle(viewer, target, "b", present=False)
        return Blocking(False)

    def _applied_block(self, blocker: int, blocked: int, seq: int, present: bool) -> None:
        self._shields.apply(blocker, "b", blocked, seq, present)
        self._shields.apply(blocked, "y", blocker, seq, present)

    # ---- mutes -----------------------------------------------------------------------------
    def mute(self, viewer: int, target: int) -> Muting:
        self._target(viewer, target)
        self._toggle(viewer, target, "m", present=True)
        return Muting(True)

    def unmute(self, viewer: int, target: int) -> Muting:
        self._target(viewer, target)
        self._toggle(viewer, target, "m", present=False)
        return Muting(False)

    def _toggle(self, viewer: int, target: int, kind: str, present: bool) -> None:
        """Mute, unmute or unblock (a block also ends follows: ``block``): read the record,
        write if it is not as wanted, then apply the change to the blocks hashes. A record
        found as wanted is applied again (a write path that died after its commit)."""

        def applied(seq: int, now: bool) -> None:
            if kind == "b":
                self._applied_block(viewer, target, seq, now)
            else:
                self._shields.apply(viewer, kind, target, seq, now)

        for attempt in range(MAX_ATTEMPTS):
            held = self._store.restriction(viewer, target, kind)
            if (held is not None) == present:
                if held is not None:
                    applied(held, True)
                return
            try:
                if held is None:
                    seq = self._ids.next_id()
                    self._store.mute(viewer, target, seq)
                else:
                    seq = held
                    remove = self._store.unblock if kind == "b" else self._store.unmute
                    remove(viewer, target, seq)
            except FollowRejected:
                _pause(attempt)
                continue  # changed meanwhile: read again
            applied(seq, present)
            return
        raise Unavailable("The follow graph is busy; try again.")

    # ---- lists -----------------------------------------------------------------------------
    def listed(self, viewer: int, which: str, limit: int, cursor: str | None) -> UserPage:
        """``blocks`` or ``mutes``: the viewer's, most recent first, as Users."""
        before = decode_cursor(which, cursor)
        rows, more = self._store.page(viewer, which, limit, before)
        next_cursor = encode_cursor(which, rows[-1][1]) if more and rows else None
        return self._graph.user_page(viewer, [uid for uid, _ in rows], next_cursor)

    # ---- relationships ---------------------------------------------------------------------
    def relationships(self, viewer: int, asked: list[str]) -> Relationships:
        """The follow status and the three block / mute flags of each user asked (decimal ids,
        in the order asked): the following sets and the viewer's blocks hash in one round trip
        when warm. An id no user can have (past 2**63 - 1) is answered as written, ``none``."""
        parsed = [parse_id(raw) for raw in asked]
        user_ids = [uid for uid in parsed if uid is not None]
        batch = self._shields.batch()
        statuses = self._graph.relationships_later(batch, viewer, user_ids)
        others = [uid for uid in dict.fromkeys(user_ids) if uid != viewer]
        flags = self.flags_later(batch, viewer, others) if others else (lambda: {})
        batch.run()
        found = flags()
        status = dict(statuses())
        items = []
        for raw, uid in zip(asked, parsed, strict=True):
            if uid is None:
                items.append(RelationshipItem(raw, "none", False, False, False))
                continue
            held = found.get(uid, NO_FLAGS)
            items.append(
                RelationshipItem(str(uid), status[uid], held.blocking, held.blocked_by, held.muting)
            )
        return Relationships(items)

    def flags_later(
        self, batch: ReadBatch, viewer: int, others: list[int]
    ) -> Later[dict[int, Flags]]:
        read = self._shields.about_later(batch, viewer, others)

        def flags() -> dict[int, Flags]:
            shield = read()
            return {
                uid: Flags(uid in shield.blocking, uid in shield.blocked_by, uid in shield.muting)
                for uid in others
            }

        return flags

    # ---- the graph stream's copies ---------------------------------------------------------
    def seen_later(self, writes: Writes, event: Blocked | Unblocked | Muted | Unmuted) -> None:
        """``seen``, queued in a stream batch's writes."""
        if event.seq is None:
            return
        if isinstance(event, Blocked | Unblocked):
            present = isinstance(event, Blocked)
            self._shields.apply_later(writes, event.blocker, "b", event.blocked, event.seq, present)
            self._shields.apply_later(writes, event.blocked, "y", event.blocker, event.seq, present)
        else:
            present = isinstance(event, Muted)
            self._shields.apply_later(writes, event.muter, "m", event.muted, event.seq, present)

    def seen(self, event: Blocked | Unblocked | Muted | Unmuted) -> None:
        """A change the write path may not have applied (its container died after the
        commit): applied again; versions make a second application a no-op."""
        if event.seq is None:
            return
        if isinstance(event, Blocked | Unblocked):
            self._applied_block(event.blocker, event.blocked, event.seq, isinstance(event, Blocked))
        else:
            self._shields.apply(event.muter, "m", event.muted, event.seq, isinstance(event, Muted))


def _pause(attempt: int) -> None:
    time.sleep(random.uniform(0, min(0.2, 0.005 * (2**attempt))))
