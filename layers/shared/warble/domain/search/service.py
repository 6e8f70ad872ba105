"""People search, the seeds' search bar (API.md "Search and hashtags").

A query is answered in four steps:
1. the viewer's friends, second-degree set and Shield, one Redis round trip (with the session
   check when it comes through the HTTP gate);
2. the candidates, one PostgreSQL statement (``warble_search``, infra/migrations/0020): the user
   whose username is the query, the ``CANDIDATES`` best matches by followers, and the matches
   among the viewer's friends (who rank above anyone but the exact username, however few
   followers they have);
3. each candidate's friends and counts, one Redis pipeline for the page; the degree is then
   computed as ``GET /v1/users/me/degree/{id}`` computes it (1: a friend; 2: a friend in common;
   3: a friend of the candidate is in the viewer's second-degree set), and the candidates ranked:
   the exact username, then degree 1, 2, 3, further, then followers (live counts), then id;
4. the page's Users hydrated (profiles, counts, relationships), one more pipeline.

The ranked list (at most ``MAX_RESULTS``) is kept in Redis (written in step 4's pipeline) when
it is longer than the page, and the cursor names it and a position in it: a follow or a new
follower between two pages cannot make a page repeat or skip anyone. A later page reads the
viewer's Shield again, so someone blocked meanwhile is left out. Past the snapshot's life, a
cursor still pages, through the ranking as it is then.
"""

from __future__ import annotations

import secrets
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from warble.domain.accounts.answers import user_values
from warble.domain.pagination import decode_cursor, encode_cursor
from warble.domain.search.ports import (
    Degree,
    FoundPage,
    FoundUser,
    Network,
    PeopleIndex,
    Snapshots,
    ViewerShields,
)
from warble.domain.shared import Later, ReadBatch, at_once
from warble.errors import FieldError, ValidationFailed

MAX_QUERY = 50
CANDIDATES = 100
MAX_RESULTS = 100
_OFFSET_BITS = 8  # a cursor's position within its snapshot (< MAX_RESULTS)


def clean_query(raw: str) -> str:
    """``q`` trimmed, a leading ``@`` dropped: 1 to 50 characters, or 400."""
    query = raw.strip()
    if query.startswith("@"):
        query = query[1:].strip()
    if not 1 <= len(query) <= MAX_QUERY:
        raise ValidationFailed(
            [FieldError("q", f"must be 1 to {MAX_QUERY} characters (a leading @ not counted)")]
        )
    return query


def degree_of(
    candidate: int, mine: frozenset[int], second: frozenset[int], theirs: frozenset[int]
) -> Degree:
    """The degree on the friends graph, from the viewer's friends and second-degree set and
    the candidate's friends (``GraphService.degree``'s rule)."""
    if candidate in mine:
        return 1
    if mine & theirs:
        return 2
    if second & theirs:
        return 3
    return None


def _kind(query: str) -> str:
    # A cursor is good for the query that made it only (and cursors are ASCII).
    return f"people{zlib.crc32(query.lower().encode()):08x}"


def found_user(record: dict[str, Any], degree: Degree) -> FoundUser:
    return FoundUser(*user_values(record), record.get("relationship", "none"), degree)


class SearchService:
    def __init__(
        self,
        index: PeopleIndex,
        snapshots: Snapshots,
        network: Network,
        shields: ViewerShields,
        token: Callable[[], int] = lambda: secrets.randbits(40),
    ) -> None:
        self._index = index
        self._snapshots = snapshots
        self._network = network
        self._shields = shields
        self._token = token

    def people(self, viewer: int, raw_query: str, limit: int, cursor: str | None) -> FoundPage:
        return at_once(
            self._shields.batch(),
            lambda batch: self.people_later(batch, viewer, raw_query, limit, cursor),
        )

    def people_later(
        self, batch: ReadBatch, viewer: int, raw_query: str, limit: int, cursor: str | None
    ) -> Later[FoundPage]:
        """``people`` with its first reads (the viewer's friends, second-degree set and Shield)
        queued in ``batch``: the HTTP gate sends them with the session check."""
        query = clean_query(raw_query)
        kind = _kind(query)
        position = decode_cursor(kind, cursor)
        if position is not None:
            return lambda: self._next_page(viewer, query, kind, position, limit)
        friends = self._network.friends_later(batch, [viewer])
        second = self._network.second_degree_later(batch, viewer)
        shield = self._shields.later(batch, viewer)

        def first_page() -> FoundPage:
            entries = self._ranked(viewer, query, friends()[viewer], second(), shield().blocked)
            token = self._token()
            page = entries[:limit]
            more = len(entries) > limit
            next_cursor = encode_cursor(kind, (token << _OFFSET_BITS) | len(page)) if more else None
            return FoundPage(self._hydrate(viewer, page, None, (token, entries) if more else None),
                             next_cursor)  # fmt: skip

        return first_page

    def _next_page(
        self, viewer: int, query: str, kind: str, position: int, limit: int
    ) -> FoundPage:
        token, offset = position >> _OFFSET_BITS, position & ((1 << _OFFSET_BITS) - 1)
        entries = self._snapshots.load(viewer, token)
        if entries is None:  # expired: the ranking as it is now, from the same position
            entries = self.ranked(viewer, query)
        page = entries[offset : offset + limit]
        end = offset + len(page)
        next_cursor = (
            encode_cursor(kind, (token << _OFFSET_BITS) | end) if end < len(entries) else None
        )
        # A later page comes from the snapshot: whoever was blocked since is left out.
        return FoundPage(self._hydrate(viewer, page, viewer, None), next_cursor)

    def ranked(self, viewer: int, query: str) -> list[tuple[int, Degree]]:
        """Every result of the query, ranked, as ``(user id, degree)``."""
        batch = self._shields.batch()
        friends = self._network.friends_later(batch, [viewer])
        second = self._network.second_degree_later(batch, viewer)
        shield = self._shields.later(batch, viewer)
        batch.run()
        return self._ranked(viewer, query, friends()[viewer], second(), shield().blocked)

    def _ranked(
        self,
        viewer: int,
        query: str,
        mine: frozenset[int],
        their_second: frozenset[int],
        blocked: frozenset[int],
    ) -> list[tuple[int, Degree]]:
        rows = self._index.candidates(query, sorted(mine), CANDIDATES)
        exact = {uid for uid, is_exact in rows if is_exact}
        ids = [
            uid
            for uid in dict.fromkeys(uid for uid, _ in rows)
            if uid != viewer and uid not in blocked
        ]
        if not ids:
            return []
        batch = self._shields.batch()
        theirs = self._network.friends_later(batch, ids)
        counts = self._network.counts_later(batch, ids)
        batch.run()
        friends_of, numbers = theirs(), counts()
        degrees = {uid: degree_of(uid, mine, their_second, friends_of[uid]) for uid in ids}

        def rank(uid: int) -> tuple[bool, int, int, int]:
            degree = degrees[uid]
            followers = numbers.get(uid, {}).get("followers_count", 0)
            return (uid not in exact, degree or 4, -followers, uid)

        return [(uid, degrees[uid]) for uid in sorted(ids, key=rank)[:MAX_RESULTS]]

    def _hydrate(
        self,
        viewer: int,
        page: list[tuple[int, Degree]],
        shielded: int | None,
        snapshot: tuple[int, list[tuple[int, Degree]]] | None,
    ) -> list[FoundUser]:
        """The page's Users in one pipeline, with the snapshot's write (a first page that has
        more) and the viewer's Shield again (``shielded``: a later page)."""
        if not page:
            return []
        batch = self._shields.batch()
        users = self._network.users_later(batch, viewer, [uid for uid, _ in page])
        shield = self._shields.later(batch, shielded) if shielded is not None else None
        if snapshot is not None:
            self._snapshots.save_later(batch, viewer, *snapshot)
        batch.run()
        blocked = shield().blocked if shield is not None else frozenset()
        degrees = dict(page)
        return [
            found_user(record, degrees[int(record["id"])])
            for record in users()
            if int(record["id"]) not in blocked
        ]

    # ---- the index's copy of followers_count ---------------------------------------------
    def followers_changed(self, followers: Mapping[int, int]) -> int:
        """The counter consumer changed these users' counts: their followers_count (as it
        read them from the counters, once) copied to the index, which orders the candidates.
        Returns the rows changed."""
        return self._index.set_followers(dict(followers)) if followers else 0
