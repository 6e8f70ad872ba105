"""Discover's durable records in DynamoDB (pynamodb): locations, swipes and matches.

``DiscoverTable`` (pk, sk; no stream):

| pk        | sk          | attributes          | answers                                         |
|-----------|-------------|---------------------|-------------------------------------------------|
| U#<user>  | LOC         | lat, lon, cell, at  | where a user is (the geo index is rebuilt here) |
| U#<user>  | S#<other>   | dir, at             | a user's swipe on another (first one stands)    |
| U#<user>  | SH#<seq>    | ids                 | the people one Discover page showed (the seen   |
|           |             |                     | filter is rebuilt from them after a flush)      |

``MatchesTable`` (pk, sk; stream NEW_AND_OLD_IMAGES), written in ONE transaction per match:

| pk                | sk              | attributes                           | answers            |
|-------------------|-----------------|--------------------------------------|--------------------|
| M#<low>#<high>    | M               | a, b, conversation_id, matched_at    | "are A, B matched" |
| U#<user>          | M#<seq>         | other, conversation_id, matched_at   | my matches, newest |

The match record is put on ``attribute_not_exists(pk)``: exactly one exists per pair, and a
retried request (or the same match reported twice) changes nothing. Its INSERT in the stream is
the ``Matched`` event (``decode_record``: one per user), which the notifications feature turns
into the ``match`` notification. ``are_matched`` is one strongly consistent GetItem (the direct
messages feature's permission check).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pynamodb.attributes import NumberAttribute, UnicodeAttribute
from pynamodb.exceptions import DoesNotExist, PutError, TransactWriteError
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from warble.dal import erasing
from warble.dal.dynamo import (
    CONDITION_FAILED,
    StreamItem,
    batch_write,
    bind,
    cancellation_codes,
    number,
)
from warble.domain.deletion.ports import Places
from warble.domain.discover.ports import MatchRecord, StoredLocation
from warble.events import Event, Matched, UnreadableRecord
from warble.settings import Settings, get_settings


def _id(value: int) -> str:
    return f"{value:019d}"


def pair_pk(a: int, b: int) -> str:
    low, high = sorted((a, b))
    return f"M#{low}#{high}"


class DiscoverItem(Model):
    class Meta:
        table_name = "discover"  # replaced from settings on first use
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    lat = NumberAttribute(null=True)
    lon = NumberAttribute(null=True)
    cell = UnicodeAttribute(null=True)
    dir = UnicodeAttribute(null=True)
    at = NumberAttribute(null=True)
    ids = UnicodeAttribute(null=True)  # SH# items: user ids, comma-separated


class MatchItem(Model):
    class Meta:
        table_name = "matches"  # replaced from settings on first use
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    a = NumberAttribute(null=True)
    b = NumberAttribute(null=True)
    other = NumberAttribute(null=True)
    conversation_id = NumberAttribute(null=True)
    matched_at = NumberAttribute(null=True)


class DiscoverRecords:
    """Locations, swipes and matches; the durable truth behind ``warble.dal.discover``."""

    def __init__(self, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self._connection = bind(
            settings.aws_region,
            [(DiscoverItem, settings.discover_table), (MatchItem, settings.matches_table)],
        )

    # ---- locations --------------------------------------------------------------------------
    def save_location(
        self, user_id: int, lat: float, lon: float, cell: str, at_ms: int
    ) -> str | None:
        """Store the location; the cell it replaces (None: the first one). Two moves of one
        user racing can both read the same old cell: the index then keeps a stale entry until
        the next move or rebuild, and the query drops entries whose distance is out of range."""
        before = self.location(user_id)
        DiscoverItem(f"U#{user_id}", "LOC", lat=lat, lon=lon, cell=cell, at=at_ms).save()
        return None if before is None else before.cell

    def save_locations(self, entries: Iterable[tuple[int, float, float, str]], at_ms: int) -> None:
        with batch_write(DiscoverItem) as batch:
            for user_id, lat, lon, cell in entries:
                batch.save(
                    DiscoverItem(f"U#{user_id}", "LOC", lat=lat, lon=lon, cell=cell, at=at_ms)
                )

    def location(self, user_id: int) -> StoredLocation | None:
        try:
            item = DiscoverItem.get(f"U#{user_id}", "LOC", consistent_read=True)
        except DoesNotExist:
            return None
        return StoredLocation(user_id, float(item.lat), float(item.lon), str(item.cell))

    def all_locations(self) -> Iterator[StoredLocation]:
        """Every stored location (a full scan: the geo index rebuild)."""
        for item in DiscoverItem.scan(DiscoverItem.sk == "LOC"):
            yield StoredLocation(int(item.pk[2:]), float(item.lat), float(item.lon), str(item.cell))

    # ---- swipes -----------------------------------------------------------------------------
    def record_swipe(self, me: int, other: int, value: str, at_ms: int) -> None:
        """Store my swipe unless one is stored (the first stands; a retry changes nothing)."""
        item = DiscoverItem(f"U#{me}", f"S#{other}", dir=value, at=at_ms)
        try:
            item.save(condition=DiscoverItem.pk.does_not_exist())
        except PutError as exc:
            if exc.cause_response_code == "ConditionalCheckFailedException":
                return
            raise

    def pair_swipes(self, me: int, other: int) -> tuple[str, str]:
        """(my stored swipe, theirs), "" for none: what a lost pair key is seeded with."""
        found = {
            item.pk: str(item.dir)
            for item in DiscoverItem.batch_get(
                [(f"U#{me}", f"S#{other}"), (f"U#{other}", f"S#{me}")], consistent_read=True
            )
        }
        return found.get(f"U#{me}", ""), found.get(f"U#{other}", "")

    def swiped_ids(self, user_id: int) -> list[int]:
        return [
            int(item.sk[2:])
            for item in DiscoverItem.query(
                f"U#{user_id}", DiscoverItem.sk.startswith("S#"), consistent_read=True
            )
        ]

    # ---- people shown -----------------------------------------------------------------------
    def record_shown(self, user_id: int, seq: int, shown: Sequence[int]) -> None:
        """One page's people (``seq``: a fresh id), before the page is answered: the seen filter
        in Redis is a cache of these."""
        DiscoverItem(f"U#{user_id}", f"SH#{_id(seq)}", ids=",".join(map(str, shown))).save()

    def shown_ids(self, user_id: int) -> list[int]:
        """Everyone Discover ever showed the user (every stored page)."""
        return [
            int(uid)
            for item in DiscoverItem.query(
                f"U#{user_id}", DiscoverItem.sk.startswith("SH#"), consistent_read=True
            )
            for uid in (item.ids or "").split(",")
            if uid
        ]

    # ---- matches ----------------------------------------------------------------------------
    def create_match(self, a: int, b: int, conversation_id: int, seq: int, at_ms: int) -> bool:
        """The match record and both users' list items, once; False if it existed."""
        low, high = sorted((a, b))
        try:
            with TransactWrite(connection=self._connection) as tx:
                tx.save(
                    MatchItem(pair_pk(a, b), "M", a=low, b=high, conversation_id=conversation_id,
                              matched_at=at_ms),
                    condition=MatchItem.pk.does_not_exist(),
                )  # fmt: skip
                for user, other in ((low, high), (high, low)):
                    tx.save(
                        MatchItem(f"U#{user}", f"M#{_id(seq)}", other=other,
                                  conversation_id=conversation_id, matched_at=at_ms)
                    )  # fmt: skip
        except TransactWriteError as exc:
            if cancellation_codes(exc)[:1] == [CONDITION_FAILED]:
                return False
            raise
        return True

    def match(self, a: int, b: int) -> MatchRecord | None:
        try:
            item = MatchItem.get(pair_pk(a, b), "M", consistent_read=True)
        except DoesNotExist:
            return None
        return MatchRecord(int(item.a), int(item.b), int(item.conversation_id),
                           int(item.matched_at), 0)  # fmt: skip

    def are_matched(self, a: int, b: int) -> bool:
        """One strongly consistent GetItem (keys only)."""
        try:
            MatchItem.get(pair_pk(a, b), "M", consistent_read=True, attributes_to_get=["pk"])
        except DoesNotExist:
            return False
        return True

    def matches_page(self, user_id: int, before_seq: int | None, limit: int) -> list[MatchRecord]:
        """A user's matches, newest first (``MatchRecord.a`` is the user, ``b`` the other)."""
        condition = (
            MatchItem.sk.startswith("M#")
            if before_seq is None
            else MatchItem.sk.between("M#", f"M#{_id(before_seq - 1)}")
        )
        return [
            MatchRecord(
                user_id,
                int(item.other),
                int(item.conversation_id),
                int(item.matched_at),
                int(item.sk[2:]),
            )
            for item in MatchItem.query(
                f"U#{user_id}",
                condition,
                scan_index_forward=False,
                limit=limit,
                consistent_read=True,
            )
        ]


# ---- the matches table's stream --------------------------------------------------------------
class DiscoverErasure:
    """An account's Discover records (location, swipes) and matches (both users' items, the
    pair's record, the other's swipe on it), for the account deletion (``warble.dal.erasure``)."""

    def __init__(self, items: erasing.Items) -> None:
        self._items = items

    def erase_own(self, user_id: int, limit: int) -> int:
        """A slice of what is left under the account's own key, in both tables."""
        s = self._items.settings
        for table in (s.discover_table, s.matches_table):
            gone = erasing.erase_partition(self._items, table, f"U#{user_id}", limit)
            if gone:
                return gone
        return 0

    def found(self, user_id: int, limit: int) -> tuple[Places, list[erasing.Doomed]]:
        """The location and swipes, then the matches, and their items to delete."""
        s, me = self._items.settings, f"U#{user_id}"
        found, _more = self._items.query(s.discover_table, me, None, limit, "sk, cell")
        cells, swiped = [], []
        doomed = [(s.discover_table, erasing.key(me, erasing.text(i, "sk"))) for i in found]
        for item in found:
            sk = erasing.text(item, "sk")
            if sk == "LOC" and erasing.text(item, "cell"):
                cells.append(erasing.text(item, "cell"))
            elif sk.startswith("S#"):
                swiped.append(int(sk[2:]))
        matches, _more = self._items.query(s.matches_table, me, "M#", limit, "sk, #other")
        matched = []
        for item in matches:
            other, sk = erasing.num(item, "other") or 0, erasing.text(item, "sk")
            doomed += [
                (s.matches_table, erasing.key(me, sk)),
                (s.matches_table, erasing.key(f"U#{other}", sk)),
                (s.matches_table, erasing.key(pair_pk(user_id, other), "M")),
                # The other's swipe on X, known here because they matched (an unmatched
                # swipe on X is stored only under its swiper: docs/accounts.md's gaps).
                (s.discover_table, erasing.key(f"U#{other}", f"S#{user_id}")),
            ]
            matched.append(other)
        return Places(len(found) + len(matches), cells, swiped, matched), doomed


def decode_record(record: dict[str, Any]) -> list[Event]:
    """The INSERT of a match record is two ``Matched`` events, one per user; list items and
    anything else are none."""
    item = StreamItem.of(record)
    if item.name != "INSERT" or not item.string_key("pk").startswith("M#"):
        return []
    image = item.image()
    a, b, conversation = number(image, "a"), number(image, "b"), number(image, "conversation_id")
    if a is None or b is None or conversation is None:
        raise UnreadableRecord("match record without a, b or conversation_id")
    return [Matched(a, b, conversation), Matched(b, a, conversation)]
