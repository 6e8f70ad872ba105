"""People search's stores: the candidates query in PostgreSQL (``warble_search``, whose design
and measurements are in infra/migrations/0020_people_search.sql and docs/search.md) and the
ranked results kept in Redis for their next pages."""

from __future__ import annotations

import json

from warble import keys
from warble.dal.postgres import Database
from warble.dal.redis import UNAVAILABLE_ERRORS, RedisClient, queued
from warble.domain import shared
from warble.domain.search.ports import Degree

# The statement the search runs, and the one the benchmark times raw.
CANDIDATES_SQL = "SELECT user_id, exact FROM warble_search(%s, %s, %s)"


class PostgresPeopleIndex:
    """``warble.domain.search.ports.PeopleIndex``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def candidates(self, query: str, friends: list[int], limit: int) -> list[tuple[int, bool]]:
        rows = self._db.run(
            lambda conn: conn.execute(CANDIDATES_SQL, (query, friends, limit)).fetchall()
        )
        return [(int(row["user_id"]), bool(row["exact"])) for row in rows]

    def set_followers(self, counts: dict[int, int]) -> int:
        """One UPDATE of the users whose copy differs (the trigger passes it to their prefixes)."""
        if not counts:
            return 0
        ids, values = list(counts), [counts[uid] for uid in counts]
        return int(
            self._db.run(
                lambda conn: (
                    conn.execute(
                        "UPDATE users SET followers_count = v.c"
                        " FROM unnest(%s::bigint[], %s::integer[]) AS v(id, c)"
                        " WHERE users.id = v.id AND users.followers_count <> v.c",
                        (ids, values),
                    ).rowcount
                )
            )
        )


class RedisSnapshots:
    """``warble.domain.search.ports.Snapshots``: one JSON string per search, under the viewer's
    hash tag. Losing one only makes its next page rank again."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    def save_later(
        self, batch: shared.ReadBatch, viewer: int, token: int, entries: list[tuple[int, Degree]]
    ) -> None:
        """A SET queued in ``batch`` (the page's pipeline): nobody reads its answer."""
        queued(batch).add(
            "SET",
            keys.search_snapshot(viewer, str(token)),
            json.dumps(entries, separators=(",", ":")),
            "EX",
            keys.SEARCH_SNAPSHOT_SECONDS,
        )

    def load(self, viewer: int, token: int) -> list[tuple[int, Degree]] | None:
        try:
            raw = self._redis.get(keys.search_snapshot(viewer, str(token)))
        except UNAVAILABLE_ERRORS:
            return None
        if raw is None:
            return None
        return [(int(uid), degree) for uid, degree in json.loads(raw)]
