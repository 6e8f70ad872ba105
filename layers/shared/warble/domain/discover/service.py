"""Discover (people nearby): locations, the nearby feed that never shows anyone twice, swipes
and matches (API.md "Discover (people nearby)"; the design is in ``warble.dal.discover``).

A location is stored durably first, then indexed in its cell. A page walks the cells the radius
covers, nearest first, and hands candidates to the user's seen filter, which in one atomic step
drops the people swiped on (exactly) and shown before (Bloom filter, false hides <= 1%) and marks
the rest shown: two devices of one user asking at once never get the same person.

A swipe is decided by the pair's ledger script (first swipe stands; of two right swipes the
second reports the match), then written durably. The match is one conditional write, so it
exists once however often it is reported or retried; only the request that created it opens
the conversation's announcement (``match`` pushed to both users).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any

from warble import clock
from warble.domain.accounts.answers import RelatedUser, Relationship, user_values
from warble.domain.accounts.ports import Profiles
from warble.domain.discover.answers import (
    Location,
    Match,
    MatchPage,
    NearbyUser,
    NearbyUsers,
    SwipeAnswer,
)
from warble.domain.discover.geo import cell_of, cells_covering, snap, whole_km
from warble.domain.discover.ports import (
    BlockChecks,
    ConversationOpener,
    DiscoverStore,
    FeedTake,
    GeoIndex,
    MatchAnnouncer,
    People,
    SeenFilter,
    SwipeLedger,
)
from warble.domain.pagination import decode_cursor, encode_cursor
from warble.domain.push.ports import Pushes
from warble.domain.shared import IdGenerator, user_summary
from warble.errors import Conflict, FieldError, Unavailable, ValidationFailed

FIRST_FETCH = 200  # candidates per cell in a feed's first fetch; each later one 4x more
# A page that keeps finding the blocks hash missing (another rebuild holds the fill lease and
# has not filled yet) waits for it, about 1.5 s in all, then answers 503.
MAX_SHIELD_REBUILDS = 6


class LocationRequired(Conflict):
    code = "location_required"
    message = "Set your location (PUT /v1/users/me/location) before using Discover."


@dataclass(frozen=True)
class Nearby:
    user_id: int
    distance_km: int  # whole km, from the viewer to the person's grid cell (geo.whole_km)


def _user_fields(
    record: dict[str, Any],
) -> tuple[str, str, str, str, str, int, int, int, Relationship]:
    """A hydrated User record (``GraphService.users``) as RelatedUser's fields, in order:
    Discover never shows the viewer, so always with the viewer's relationship."""
    return (*user_values(record), record.get("relationship", "none"))


class Announcer:
    """Tells both users about a match (the ``match`` WebSocket event); the service sees only a
    ``MatchAnnouncer``, so it needs no push machinery in unit tests."""

    def __init__(self, pusher: Pushes, profiles: Profiles) -> None:
        self._pusher = pusher
        self._profiles = profiles

    def matched(self, a: int, b: int, conversation_id: str) -> None:
        found = self._profiles.profiles([a, b])
        for me, other in ((a, b), (b, a)):
            who = found.get(other)
            if who is None:
                continue
            data = {
                "user": dataclasses.asdict(user_summary(who)),
                "conversation_id": conversation_id,
            }
            frame = {"type": "match", "data": data}
            self._pusher.push([me], frame)


class DiscoverService:
    def __init__(
        self,
        store: DiscoverStore,
        index: GeoIndex,
        seen: SeenFilter,
        ledger: SwipeLedger,
        conversations: ConversationOpener,
        profiles: Profiles,
        people: People,
        announcer: MatchAnnouncer,
        ids: IdGenerator,
        shields: BlockChecks,
    ) -> None:
        self._shields = shields
        self._store = store
        self._index = index
        self._seen = seen
        self._ledger = ledger
        self._conversations = conversations
        self._profiles = profiles
        self._people = people  # hydrates Users (GraphService.users: counts, relationship)
        self._announcer = announcer
        self._ids = ids

    # ---- locations ----------------------------------------------------------------------
    # A person is indexed at the centre of their ~1 km grid cell (geo.snap), never where they
    # are: the index answers others' queries. Their own position stays theirs (the durable
    # record and the location cache), for their own queries.
    def set_location(self, user_id: int, lat: float, lon: float) -> None:
        shown_lat, shown_lon = snap(lat, lon)
        cell = cell_of(shown_lat, shown_lon)
        old = self._store.save_location(user_id, lat, lon, cell, clock.epoch_ms())
        self._index.place(user_id, shown_lat, shown_lon, cell, old, own=(lat, lon))

    def location_of(self, user_id: int) -> Location | None:
        """The location the user set, as set (None: never set)."""
        stored = self._store.location(user_id)
        return None if stored is None else Location(stored.lat, stored.lon)

    def place_many(self, entries: list[tuple[int, float, float]]) -> None:
        """Seeding: many users placed at once (batch writes, one pipeline)."""
        shown = [(uid, *snap(lat, lon)) for uid, lat, lon in entries]
        cells = [cell_of(lat, lon) for _, lat, lon in shown]
        self._store.save_locations(
            [(uid, lat, lon, cell) for (uid, lat, lon), cell in zip(entries, cells, strict=True)],
            clock.epoch_ms(),
        )
        self._index.place_many(
            [(uid, lat, lon, cell) for (uid, lat, lon), cell in zip(shown, cells, strict=True)]
        )
        for uid, lat, lon in entries:
            self._index.cache_location(uid, lat, lon)

    def rebuild_index(self) -> int:
        """Re-add every stored location to the geo index, each at its grid cell's centre (after
        Redis lost the index, or to move entries indexed where their people were, before the
        grid); how many. An entry whose cell changes leaves its old cell, and its record names
        the new one (the next move leaves the right cell)."""
        batch: list[tuple[int, float, float, str]] = []
        total = 0
        for loc in self._store.all_locations():
            shown_lat, shown_lon = snap(loc.lat, loc.lon)
            cell = cell_of(shown_lat, shown_lon)
            if cell != loc.cell:
                self._store.save_location(loc.user_id, loc.lat, loc.lon, cell, clock.epoch_ms())
                self._index.place(
                    loc.user_id, shown_lat, shown_lon, cell, loc.cell, own=(loc.lat, loc.lon)
                )
                total += 1
                continue
            batch.append((loc.user_id, shown_lat, shown_lon, cell))
            if len(batch) >= 1000:
                self._index.place_many(batch)
                total, batch = total + len(batch), []
        self._index.place_many(batch)
        return total + len(batch)

    def _my_location(self, user_id: int) -> tuple[float, float]:
        cached = self._index.cached_location(user_id)
        if cached is not None:
            return cached
        stored = self._store.location(user_id)
        if stored is None:
            raise LocationRequired()
        # Not cached: expired, or Redis lost everything, the geo index too. Placing the user
        # again (the same pipeline as the cache's SET) makes whoever uses Discover after a loss
        # discoverable at once; the others come back with ``rebuild_index``.
        shown_lat, shown_lon = snap(stored.lat, stored.lon)
        cell = cell_of(shown_lat, shown_lon)
        self._index.place(
            user_id, shown_lat, shown_lon, cell, stored.cell, own=(stored.lat, stored.lon)
        )
        return stored.lat, stored.lon

    # ---- the feed -----------------------------------------------------------------------
    def discover(self, user_id: int, radius_km: float, limit: int) -> list[Nearby]:
        """Up to ``limit`` people within the radius never shown nor swiped, nearest first; each
        is marked shown as it is returned.

        Candidates come from the user's feed (``warble.dal.discover``): fetched from the cells
        nearest first, queued, and offered to the seen filter a page at a time, so a page costs
        one script call while the feed lasts. When it runs dry, the next fetch asks every cell
        for 4x more and queues only what lies beyond the distance already reached."""
        lat, lon = self._my_location(user_id)
        query = f"{lat!r},{lon!r},{radius_km!r}"
        taken: list[Nearby] = []
        shield_rebuilds = 0
        while True:
            got = self._seen.take(user_id, query, limit - len(taken))
            if got == "swiped":  # the swiped set is not in Redis: load it from the swipes
                self._seen.load_swiped(user_id, self._store.swiped_ids(user_id))
                continue
            if got == "seen":  # the seen filter is not in Redis: load it from the pages
                self._seen.load_shown(user_id, self._store.shown_ids(user_id))
                continue
            if not isinstance(got, FeedTake):  # "blocks": the blocks hash is not in Redis
                shield_rebuilds += 1
                if shield_rebuilds > MAX_SHIELD_REBUILDS:  # another rebuild holds its lease
                    raise Unavailable("Discover is busy; try again.")
                if shield_rebuilds > 1:  # another rebuild holds the lease: give it time to fill
                    time.sleep(min(0.4, 0.025 * 2**shield_rebuilds))
                self._shields.rebuild(user_id)
                continue
            taken += [Nearby(uid, whole_km(km)) for uid, km in got.entries if uid != user_id]
            if len(taken) >= limit or got.exhausted:
                if taken:  # durably, before the answer: Redis may lose the filter
                    shown = [n.user_id for n in taken]
                    self._store.record_shown(user_id, self._ids.next_id(), shown)
                return sorted(taken, key=lambda n: (n.distance_km, n.user_id))
            self._refill(user_id, query, lat, lon, radius_km, got.reached_km, got.count)

    def _refill(
        self, user_id: int, query: str, lat: float, lon: float, radius_km: float,
        reached: float, count: int,
    ) -> None:  # fmt: skip
        count = max(FIRST_FETCH, count * 4)
        per_cell = self._index.nearby(
            cells_covering(lat, lon, radius_km), lat, lon, radius_km, count
        )
        # A cell that filled its count may hold people nearer than another cell's farthest:
        # only candidates within every full cell's horizon are in order now.
        full = [found[-1][1] for found in per_cell if len(found) >= count]
        horizon = min(full) if full else math.inf
        best: dict[int, float] = {}
        for found in per_cell:
            for uid, km in found:
                if reached < km <= horizon and km < best.get(uid, math.inf):
                    best[uid] = km
        ordered = sorted(best.items(), key=lambda entry: (entry[1], entry[0]))
        exhausted = not full
        self._seen.refill(
            user_id, query, reached, ordered, horizon if full else radius_km + 1, count, exhausted
        )

    def page(self, user_id: int, radius_km: float, limit: int) -> NearbyUsers:
        """``discover`` as API.md's answer: hydrated Users with ``distance_km``."""
        found = self.discover(user_id, radius_km, limit)
        records = {int(r["id"]): r for r in self._people.users(user_id, [n.user_id for n in found])}
        return NearbyUsers(
            [
                NearbyUser(*_user_fields(records[n.user_id]), n.distance_km)
                for n in found
                if n.user_id in records
            ]
        )

    # ---- swipes and matches -------------------------------------------------------------
    def swipe(self, me: int, other: int, direction: str) -> SwipeAnswer:
        if me == other:
            raise ValidationFailed([FieldError("user_id", "is yourself")])
        if direction not in ("left", "right"):
            raise ValidationFailed([FieldError("direction", "must be left or right")])
        self._profiles.profile(other)  # NotFound (404) for an unknown user, before any write
        # A right swipe between the two sides of a block is kept as a left one: it never
        # matches, now or after an unblock (a user's first swipe on another stands).
        if direction == "right" and self._shields.blocked_between(me, other):
            direction = "left"
        outcome, value = self._ledger.swipe(me, other, direction)
        if outcome == "load":  # the pair key was lost or expired: seed it from DynamoDB
            outcome, value = self._ledger.swipe(
                me, other, direction, self._store.pair_swipes(me, other)
            )
        # Repeats write again too: harmless (conditional), and they finish a swipe whose
        # request died between Redis and DynamoDB.
        self._seen.add_swiped(me, other)
        self._store.record_swipe(me, other, value, clock.epoch_ms())
        if value != "right!":
            return SwipeAnswer(False, None)
        conversation = self._conversations.open_for_match(me, other)
        created = self._store.create_match(
            me, other, int(conversation), self._ids.next_id(), clock.epoch_ms()
        )
        if created:
            self._announcer.matched(me, other, conversation)
        return SwipeAnswer(True, conversation)

    def are_matched(self, a: int, b: int) -> bool:
        return self._store.are_matched(a, b)

    def matches(self, user_id: int, limit: int, cursor: str | None) -> MatchPage:
        before = decode_cursor("matches", cursor)
        rows = self._store.matches_page(user_id, before, limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = encode_cursor("matches", rows[-1].seq) if more and rows else None
        users = {int(r["id"]): r for r in self._people.users(user_id, [row.b for row in rows])}
        items = [
            Match(
                RelatedUser(*_user_fields(users[row.b])),
                str(row.conversation_id),
                clock.rfc3339_ms(row.matched_at_ms),
            )
            for row in rows
            if row.b in users
        ]
        return MatchPage(items, next_cursor)
