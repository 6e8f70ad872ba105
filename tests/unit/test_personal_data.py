"""The account deletion reaches every store that holds a user's data (API.md "Deleting an
account"): the registry of such stores (``warble.domain.deletion.personal``) names every store in
``Settings`` (or says why it holds nothing of a user's), and a deletion run to its end on
recording stores calls every operation the registry names for them. A new table added without a
line there, or a step that stops erasing a registered store, fails here."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest
from warble.domain.accounts.service import AccountService
from warble.domain.deletion.personal import HOLDS_NO_USER_DATA, PERSONAL_DATA
from warble.domain.deletion.ports import Conversations, Places, Step, Tweets, Unread
from warble.domain.deletion.service import AccountDeletion, DeletionPolicy
from warble.settings import Settings

pytestmark = pytest.mark.unit

# What a store is, in Settings: a table, a bucket, the Redis server, the PostgreSQL database.
STORE_SUFFIXES = ("_table", "_bucket")
SERVERS = {"redis_url", "db_name"}


def stores_in_settings() -> set[str]:
    names = {f.name for f in dataclasses.fields(Settings)}
    return {n for n in names if n.endswith(STORE_SUFFIXES)} | (SERVERS & names)


class Recorded:
    """``TableErasure``, ``RedisLeftovers``, ``Directory``, ``DeletedAccounts`` and ``StepQueue``
    of an account that still has one thing of each kind: every operation called is noted, and
    each slice finds something the first time and nothing after, so every step runs to its
    end."""

    def __init__(self) -> None:
        self.called: set[str] = set()
        self.sent: list[Step] = []
        self.unsettled = 2  # the counters step waits, then settles

    def _once(self, name: str) -> bool:
        first = name not in self.called
        self.called.add(name)
        return first

    # TableErasure
    def followers(self, user_id: int, limit: int) -> list[int]:
        return [7] if self._once("followers") else []

    def following(self, user_id: int, limit: int) -> list[int]:
        return [8] if self._once("following") else []

    def restrictions(self, user_id: int, limit: int) -> tuple[int, list[int]]:
        return (1, [9]) if self._once("restrictions") else (0, [])

    def likes(self, user_id: int, limit: int) -> list[tuple[int, int]]:
        return [(100, 7)] if self._once("likes") else []

    def tweets(self, user_id: int, limit: int) -> Tweets:
        if not self._once("tweets"):
            return Tweets([])
        from warble.domain.deletion.ports import ErasedTweet

        return Tweets([ErasedTweet(tweet_id=200, text="hi @bob")], reactors=[7])

    def conversations(self, user_id: int, limit: int) -> Conversations:
        return Conversations(1, [(300, 7)]) if self._once("conversations") else Conversations(0)

    def places(self, user_id: int, limit: int) -> Places:
        return Places(1, ["cell"], [7], [8]) if self._once("places") else Places(0)

    def notifications_caused(self, causes: Sequence[tuple[int, str, str]]) -> list[Unread]:
        self.called.add("notifications_caused")
        return [Unread(recipient, kind, 1) for recipient, _, kind in causes]

    def partitions(self, user_id: int, limit: int) -> int:
        return 1 if self._once("partitions") else 0

    def settle_counters(self, user_id: int | None, tweet_ids: Sequence[int]) -> list[int]:
        self.called.add("settle_counters")
        self.unsettled -= 1
        return [-1] if self.unsettled > 0 else []

    def drop_counters(self, user_id: int | None, tweet_ids: Sequence[int]) -> None:
        self.called.add("drop_counters")

    # RedisLeftovers
    def related_changed(self, others: Sequence[int]) -> None:
        self.called.add("related_changed")

    def tweets_gone(self, author_id: int, tweet_ids: Sequence[int]) -> None:
        self.called.add("tweets_gone")

    def flags_changed(self, users: Sequence[int]) -> None:
        self.called.add("flags_changed")

    def unread_gone(self, unread: Sequence[Unread]) -> None:
        self.called.add("unread_gone")

    def conversations_gone(self, finished: Sequence[tuple[int, int]]) -> None:
        self.called.add("conversations_gone")

    def places_gone(self, user_id: int, places: Places) -> None:
        self.called.add("places_gone")

    def counter_marks_gone(self, user_id: int | None, tweet_ids: Sequence[int]) -> None:
        self.called.add("counter_marks_gone")

    def forget_user(self, user_id: int) -> int:
        self.called.add("forget_user")
        return 1

    def chain_position(self, user_id: int) -> tuple[int, int] | None:
        return None

    def chain_advanced(self, user_id: int, n: int) -> None:
        pass

    def chain_finished(self, user_id: int) -> None:
        self.called.add("chain_finished")

    # Directory, DeletedAccounts, StepQueue
    def ids_by_usernames(self, usernames: list[str]) -> dict[str, int]:
        return {name: 7 for name in usernames}

    def finished(self, user_id: int) -> None:
        self.called.add("finished")

    def unfinished(self, older_than_seconds: int, limit: int) -> list[int]:
        return []

    def send(self, steps: Sequence[Step], delay_seconds: int = 0) -> None:
        self.sent.extend(steps)


def deleted_to_the_end(recorded: Recorded, user_id: int = 42) -> None:
    workflow = AccountDeletion(
        queue=recorded,
        tables=lambda: recorded,
        redis=lambda: recorded,
        directory=lambda: recorded,
        outbox=lambda: recorded,
        policy=DeletionPolicy(settle_tries=5),
    )
    assert workflow.start(user_id)
    for _ in range(1000):
        if not recorded.sent:
            return
        workflow.run(recorded.sent.pop(0))
    raise AssertionError("the workflow never ended")


def test_every_store_in_settings_is_registered_or_said_to_hold_no_user_data():
    registered = [holder.store for holder in PERSONAL_DATA]
    assert len(registered) == len(set(registered)), "a store registered twice"
    assert not set(registered) & set(HOLDS_NO_USER_DATA)
    unregistered = stores_in_settings() - set(registered) - set(HOLDS_NO_USER_DATA)
    assert unregistered == set(), (
        f"{sorted(unregistered)} hold data the account deletion may not reach: register each in "
        "warble/domain/deletion/personal.py (PERSONAL_DATA, and the step that erases it there)"
    )
    assert set(registered) | set(HOLDS_NO_USER_DATA) <= stores_in_settings(), "a store gone"


def test_a_deletion_run_to_its_end_reaches_every_registered_store():
    # given: an account with something in every kind of store
    recorded = Recorded()
    # when
    deleted_to_the_end(recorded)
    # then: every operation the registry names ran (the synchronous part: AccountService's)
    assert "finished" in recorded.called and "chain_finished" in recorded.called
    missed = {
        holder.store: [
            op
            for op in holder.erased_by
            if op not in recorded.called and not callable(getattr(AccountService, op, None))
        ]
        for holder in PERSONAL_DATA
    }
    assert {store: ops for store, ops in missed.items() if ops} == {}


def test_the_recording_stores_fill_the_ports() -> None:
    # Recorded stands for the workflow's ports (a method renamed there must be renamed here).
    from warble.domain.deletion import ports

    for port in (ports.TableErasure, ports.RedisLeftovers, ports.Directory, ports.DeletedAccounts):
        members: Any = [
            name for name in vars(port) if not name.startswith("_") and callable(vars(port)[name])
        ]
        assert [m for m in members if not hasattr(Recorded, m)] == [], port.__name__
