"""Exactly-once counters on an in-memory counter store: ``CounterRules`` (event -> deltas, as
the container registers them) and ``StreamCounterProcessor`` (claims, redelivery, poison
records, chunking, retries)."""

from __future__ import annotations

import pytest
from warble.domain.counters.ports import Delta
from warble.domain.counters.service import CounterRules, StreamCounterProcessor
from warble.events import (
    Change,
    Followed,
    Liked,
    TweetDeleted,
    TweetPosted,
    Unfollowed,
    Unliked,
)
from warble.services import Container

from tests.unit.fakes import FakeCounterStore, retry

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def rules() -> CounterRules:
    return Container().counter_rules


def change(n: int, *events: object, readable: bool = True) -> Change:
    return Change(f"event-{n}", f"seq-{n:04d}", events, readable=readable)  # type: ignore[arg-type]


def processor(
    store: FakeCounterStore, rules: CounterRules, **options: object
) -> StreamCounterProcessor:
    return StreamCounterProcessor(store, rules, backoff_seconds=0.0, **options)  # type: ignore[arg-type]


# ---- the rules -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "event, deltas",
    [
        (Followed(1, 2), [Delta("U#2", "followers_count", 1)]),
        (Unfollowed(1, 2), [Delta("U#2", "followers_count", -1)]),
        (TweetPosted(10, 1), [Delta("U#1", "tweet_count", 1)]),
        (
            TweetPosted(11, 1, reply_to=5, reply_to_author=2),
            [Delta("U#1", "tweet_count", 1), Delta("T#5", "reply_count", 1)],
        ),
        (
            TweetDeleted(12, 1, retweet_of=5),
            [Delta("U#1", "tweet_count", -1), Delta("T#5", "retweet_count", -1)],
        ),
        (Liked(1, 5, 2), [Delta("T#5", "like_count", 1)]),
        (Unliked(1, 5), [Delta("T#5", "like_count", -1)]),
    ],
)
def test_each_event_counts_where_the_api_shows_it(rules, event, deltas):
    assert rules.deltas(change(1, event)) == deltas


def test_events_with_no_rule_count_nothing_and_rules_add_up():
    rules = CounterRules().on(Followed, lambda e: [Delta(f"U#{e.followee}", "followers_count", 1)])
    rules.on(Followed, lambda e: [Delta(f"U#{e.follower}", "tweet_count", 0)])
    assert rules.deltas(change(1, Liked(1, 2))) == []
    assert rules.deltas(change(2, Followed(3, 4))) == [
        Delta("U#4", "followers_count", 1),
        Delta("U#3", "tweet_count", 0),
    ]


# ---- the processor -------------------------------------------------------------------------------
def test_a_batch_is_applied_in_one_transaction_with_one_claim_per_record(rules):
    # given
    store = FakeCounterStore()
    applied: list[set[str]] = []
    batch = [change(1, Followed(1, 9)), change(2, Followed(2, 9)), change(3, Liked(1, 50))]
    # when
    outcome = processor(store, rules, on_applied=applied.append).process(batch)
    # then: a hot account's two follows are one summed update
    assert outcome.failures == [] and outcome.transactions == 1
    assert store.transactions == [
        (
            ["event-1", "event-2", "event-3"],
            {("U#9", "followers_count"): 2, ("T#50", "like_count"): 1},
        )
    ]
    assert applied == [{"U#9", "T#50"}] and outcome.applied_keys == {"U#9", "T#50"}
    assert outcome.response() == {"batchItemFailures": []}


def test_a_redelivered_batch_changes_nothing(rules):
    store = FakeCounterStore()
    batch = [change(1, Followed(1, 9)), change(2, Liked(1, 50))]
    processor(store, rules).process(batch)
    before = {key: dict(values) for key, values in store.counters.items()}
    # when: Lambda retries the whole batch
    outcome = processor(store, rules).process(batch)
    # then
    assert outcome.failures == [] and store.counters == before


def test_a_redelivery_overlapping_new_records_applies_only_the_new_ones(rules):
    store = FakeCounterStore()
    processor(store, rules).process([change(1, Followed(1, 9)), change(2, Followed(2, 9))])
    # when: a bisected half comes again with a record not seen before
    outcome = processor(store, rules).process(
        [change(2, Followed(2, 9)), change(3, Followed(3, 9)), change(1, Followed(1, 9))]
    )
    # then: the claims of 1 and 2 are found, 3 is applied alone, in a second transaction
    assert outcome.failures == [] and outcome.transactions == 2
    assert store.counters["U#9"]["followers_count"] == 3
    assert store.transactions[-1] == (["event-3"], {("U#9", "followers_count"): 1})


def test_an_unreadable_change_is_reported_alone_and_the_others_applied(rules):
    store = FakeCounterStore()
    batch = [
        change(1, Followed(1, 9)),
        change(2, readable=False),
        change(3, Liked(4, 50)),
    ]
    outcome = processor(store, rules).process(batch)
    assert outcome.failures == ["seq-0002"]
    assert outcome.response() == {"batchItemFailures": [{"itemIdentifier": "seq-0002"}]}
    assert store.counters == {"U#9": {"followers_count": 1}, "T#50": {"like_count": 1}}
    assert "event-2" not in store.claims  # never claimed: its retry may still apply it


def test_changes_that_count_nothing_are_not_claimed(rules):
    store = FakeCounterStore()
    outcome = processor(store, rules).process([change(1), change(2)])
    assert (outcome.failures, outcome.transactions, store.claims) == ([], 0, set())


def test_a_batch_is_cut_into_transactions_of_at_most_max_actions(rules):
    # given: five actions a transaction; each follow of a new account is a claim and an update
    store = FakeCounterStore()
    batch = [change(n, Followed(100 + n, 200 + n)) for n in range(6)]
    # when
    outcome = processor(store, rules, max_actions=5).process(batch)
    # then: two records (4 actions) per transaction, in stream order
    assert outcome.failures == [] and outcome.transactions == 3
    assert [claims for claims, _ in store.transactions] == [
        ["event-0", "event-1"],
        ["event-2", "event-3"],
        ["event-4", "event-5"],
    ]
    assert all(len(c) + len({k for k, _ in d}) <= 5 for c, d in store.transactions)


def test_a_hot_counter_takes_one_update_per_transaction(rules):
    store = FakeCounterStore()
    batch = [change(n, Followed(100 + n, 9)) for n in range(10)]
    outcome = processor(store, rules, max_actions=5).process(batch)
    assert outcome.failures == []
    assert [d for _, d in store.transactions] == [
        {("U#9", "followers_count"): 4},
        {("U#9", "followers_count"): 4},
        {("U#9", "followers_count"): 2},
    ]
    assert store.counters["U#9"]["followers_count"] == 10


def test_a_transaction_retried_after_a_conflict_applies_once(rules):
    store = FakeCounterStore()
    store.failures = [retry(), retry()]
    outcome = processor(store, rules).process([change(1, Liked(1, 50)), change(2, Liked(2, 50))])
    assert outcome.failures == [] and outcome.transactions == 3
    assert store.counters["T#50"]["like_count"] == 2 and len(store.transactions) == 1


def test_a_chunk_still_conflicting_after_its_attempts_is_reported_and_not_applied(rules):
    # given: the first transaction's every attempt fails; the second's succeeds
    store = FakeCounterStore()
    store.failures = [retry()] * 3
    batch = [change(n, Followed(100 + n, 200 + n)) for n in range(4)]
    applied: list[set[str]] = []
    # when
    outcome = processor(store, rules, max_actions=5, attempts=3, on_applied=applied.append).process(
        batch
    )
    # then: the failed chunk's records are reported, so Lambda retries from the first of them
    assert outcome.failures == ["seq-0000", "seq-0001"]
    assert store.claims == {"event-2", "event-3"}
    assert set(store.counters) == {"U#202", "U#203"} and applied == [{"U#202", "U#203"}]
