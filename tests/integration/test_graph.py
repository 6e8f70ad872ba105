"""The follow graph against real moto (DynamoDB + Streams), PostgreSQL and Redis.

The graph tables live in the session's moto server, so every test uses fresh random user ids;
users exist in PostgreSQL (inserted directly: the graph only asks whether they exist).
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from warble import keys, services
from warble.dal import counters as dal_counters
from warble.dal.erasure import DynamoErasure
from warble.dal.graph import GraphItem, follower_shard, followers_partitions, user_pk
from warble.domain.counters.ports import ClaimsTaken, TransactionRetry
from warble.domain.graph.service import GraphService
from warble.errors import (
    CannotFollowSelf,
    FollowLimitReached,
    NotFound,
    ValidationFailed,
)
from warble.settings import get_settings

from infra.local.event_filters import matches_filters
from infra.local.template import load_yaml
from tests.integration.test_sample_events import Context, _load_function
from tests.support.streams import StreamTap, all_records, decoded

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def graph(accounts, moto, pg) -> Iterator[GraphService]:
    # The tests below also read and write GraphItem directly: the graph store binds it to this
    # run's table when it is built, which the service defers to its first use (services.Deferred):
    # built here, else a test that touches GraphItem first finds no table "graph".
    graph = services.graph()
    assert graph._store.reads >= 0
    yield graph


@pytest.fixture
def make_users(pg):
    def make(n: int) -> list[int]:
        ids = [random.randrange(1 << 40, 1 << 62) for _ in range(n)]
        with pg.cursor() as cur:
            cur.executemany(
                "INSERT INTO users (id, username, email, password_hash, display_name)"
                " VALUES (%s, %s, %s, 'x', %s)",
                [(uid, f"u{uid % 10**12}", f"u{uid}@example.com", f"User {uid}") for uid in ids],
            )
        return ids

    return make


def _items(user_id: int) -> dict[str, GraphItem]:
    return {item.sk: item for item in GraphItem.query(user_pk(user_id), consistent_read=True)}


def _edge_state(a: int, b: int) -> tuple[Any, Any]:
    return _items(a).get(f"O#{b:019d}"), _items(b).get(f"I#{a:019d}")


def _assert_consistent(users: list[int]) -> None:
    """Both directions present together, friend flags = mutual, lists and counts match."""
    for a in users:
        items = _items(a)
        outs = {int(i.uid): i for sk, i in items.items() if sk.startswith("O#")}
        list_out = {int(i.uid) for sk, i in items.items() if sk.startswith("OT#")}
        assert set(outs) == list_out
        meta = items.get("META")
        assert (int(meta.following_count) if meta else 0) == len(outs)
        for b, edge in outs.items():
            mirror = _items(b).get(f"I#{a:019d}")
            assert mirror is not None and int(mirror.seq) == int(edge.seq)
            mutual = f"O#{a:019d}" in _items(b)
            assert bool(edge.friend) is mutual and bool(mirror.friend) is mutual
        # The other direction too: every follower edge has its following edge, and the
        # followers list holds exactly the follower edges (no orphan, none missing).
        ins = {int(i.uid): i for sk, i in items.items() if sk.startswith("I#")}
        assert {int(i.uid) for sk, i in items.items() if sk.startswith("IT#")} == set(ins)
        for b, edge in ins.items():
            origin = _items(b).get(f"O#{a:019d}")
            assert origin is not None and int(origin.seq) == int(edge.seq)


# ---- follow / unfollow ---------------------------------------------------------------------
@pytest.mark.redis  # also on the cluster
def test_follow_and_unfollow_write_both_directions_and_keep_friend_flags(graph, make_users):
    a, b = make_users(2)

    assert graph.follow(a, b).relationship == "following"
    assert graph.follow(a, b).relationship == "following"  # idempotent
    assert graph.relationships(b, [a]) == [(a, "followed_by")]
    assert graph.follow(b, a).relationship == "friends"
    _assert_consistent([a, b])
    assert all(bool(item.friend) for item in _edge_state(a, b) + _edge_state(b, a))

    assert graph.unfollow(a, b).relationship == "followed_by"
    assert graph.unfollow(a, b).relationship == "followed_by"  # idempotent
    assert graph.relationships(a, [b]) == [(b, "followed_by")]
    _assert_consistent([a, b])
    out, mirror = _edge_state(b, a)
    assert out.friend is False and mirror.friend is False
    assert _edge_state(a, b) == (None, None)


def test_self_and_unknown_targets_are_refused_and_write_nothing(graph, make_users):
    (a,) = make_users(1)
    with pytest.raises(CannotFollowSelf):
        graph.follow(a, a)
    with pytest.raises(NotFound):
        graph.follow(a, 4242424242424242)
    with pytest.raises(NotFound):
        graph.unfollow(a, 4242424242424242)
    assert _items(a) == {}


def test_fifty_racing_follows_at_990_give_exactly_ten(graph, make_users):
    a = make_users(1)[0]
    targets = make_users(50)
    GraphItem(user_pk(a), "META", following_count=990).save()

    def attempt(target: int) -> str:
        try:
            return graph.follow(a, target).relationship
        except FollowLimitReached:
            return "limit"

    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(attempt, targets))

    assert results.count("following") == 10
    assert results.count("limit") == 40
    items = _items(a)
    assert int(items["META"].following_count) == 1000
    assert sum(sk.startswith("O#") for sk in items) == 10
    assert sum(sk.startswith("OT#") for sk in items) == 10
    followed = {t for t, r in zip(targets, results, strict=True) if r == "following"}
    assert {int(i.uid) for sk, i in items.items() if sk.startswith("O#")} == followed
    for target in set(targets) - followed:  # a refused follow left nothing on the other side
        assert _items(target) == {}


def test_concurrent_follows_and_unfollows_stay_symmetric(graph, make_users):
    a, b = make_users(2)
    barrier = threading.Barrier(2)

    def churn(me: int, other: int, seed: int) -> None:
        rng = random.Random(seed)
        barrier.wait()
        for _ in range(25):
            if rng.random() < 0.55:
                graph.follow(me, other)
            else:
                graph.unfollow(me, other)

    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(churn, a, b, 1), pool.submit(churn, b, a, 2)]
        for run in runs:
            run.result()  # a 503 or a crash in either churn fails the test
    _assert_consistent([a, b])
    a_follows, b_follows = _edge_state(a, b)[0] is not None, _edge_state(b, a)[0] is not None
    expected = {
        (True, True): "friends",
        (True, False): "following",
        (False, True): "followed_by",
        (False, False): "none",
    }[(a_follows, b_follows)]
    assert graph.relationships(a, [b]) == [(b, expected)]


# ---- lists, statuses, hydration ------------------------------------------------------------
@pytest.mark.redis  # also on the cluster
def test_lists_are_newest_first_with_cursors_and_carry_the_viewers_relationship(graph, make_users):
    star, viewer, *fans = make_users(7)
    for fan in fans:
        graph.follow(fan, star)
    graph.follow(viewer, fans[0])
    graph.follow(fans[1], viewer)

    first = graph.followers(viewer, star, 3, None)
    assert [int(u.id) for u in first.items] == fans[::-1][:3]
    assert first.next_cursor is not None
    second = graph.followers(viewer, star, 3, first.next_cursor)
    assert [int(u.id) for u in second.items] == fans[::-1][3:]
    assert second.next_cursor is None
    by_id = {int(u.id): u for u in first.items + second.items}
    assert by_id[fans[0]].relationship == "following"
    assert by_id[fans[1]].relationship == "followed_by"
    assert by_id[fans[2]].relationship == "none"
    assert all(u.following_count == 1 for u in by_id.values() if int(u.id) != fans[1])
    assert by_id[fans[1]].following_count == 2

    following = graph.following(viewer, fans[1], 10, None)
    assert [int(u.id) for u in following.items] == [viewer, star]
    with pytest.raises(ValidationFailed):
        graph.followers(viewer, star, 3, "not-a-cursor")
    with pytest.raises(ValidationFailed):  # a following cursor is not a followers cursor
        graph.followers(viewer, star, 3, graph.following(viewer, fans[1], 1, None).next_cursor)


def test_statuses_for_100_ids_in_order_from_memory_once_warm(graph, make_users, redis):
    me, *others = make_users(5)
    graph.follow(me, others[0])
    graph.follow(others[1], me)
    graph.follow(me, others[2])
    graph.follow(others[2], me)
    unknown = [random.randrange(1 << 40, 1 << 62) for _ in range(96)]
    asked = [others[3], *unknown[:50], others[2], others[1], *unknown[50:], others[0]]
    assert len(asked) == 100
    calls: list[int] = []
    client = GraphItem._get_connection().connection.client  # the botocore client pynamodb uses
    hook = lambda params, **_: calls.append(  # noqa: E731
        sum(len(t["Keys"]) for t in params["RequestItems"].values())
    )
    client.meta.events.register("provide-client-params.dynamodb.BatchGetItem", hook)
    try:
        redis.flushdb()
        # Cold: my following set is rebuilt (a Query); the 100 are asked whether they follow
        # me in one BatchGetItem of their edges to me.
        answer = graph.relationships(me, asked)
        assert calls == [100]
        for uid in asked:  # each user's own activity rebuilds their set
            graph.relationships(uid, [me])
        calls.clear()
        assert graph.relationships(me, asked) == answer
        assert calls == []  # warm: no DynamoDB read at all
    finally:
        client.meta.events.unregister("provide-client-params.dynamodb.BatchGetItem", hook)
    assert [uid for uid, _ in answer] == asked
    statuses = dict(answer)
    assert statuses[others[0]] == "following"
    assert statuses[others[1]] == "followed_by"
    assert statuses[others[2]] == "friends"
    assert statuses[others[3]] == "none"
    assert all(statuses[uid] == "none" for uid in unknown)


def test_friends_and_mutual_friends(graph, make_users):
    a, b, c, d, x = make_users(5)
    for one, two in ((a, b), (a, c), (a, d), (x, b), (x, c)):
        graph.follow(one, two)
        graph.follow(two, one)
    graph.follow(x, d)  # one-way: not a friend

    page = graph.friends(a, a, 2, None)
    assert len(page.items) == 2 and page.next_cursor
    rest = graph.friends(a, a, 2, page.next_cursor)
    assert {int(u.id) for u in page.items + rest.items} == {b, c, d}
    mutual = graph.mutual_friends(a, x)
    count, users = mutual.count, mutual.items
    assert count == 2 and {int(u.id) for u in users} == {b, c}
    assert all(u.relationship == "friends" for u in users)


@pytest.mark.redis  # also on the cluster
def test_big_accounts_first_page_is_cached_and_invalidated(graph, make_users, redis):
    star, viewer, *fans = make_users(6)
    graph._policy = type(graph._policy)(follow_limit=1000, big_account_followers=0)
    for fan in fans:
        graph.follow(fan, star)
    page = graph.followers(viewer, star, 2, None)
    assert [int(u.id) for u in page.items] == fans[::-1][:2]
    assert redis.exists(f"{{u:{star}}}:followers:first")
    graph.unfollow(fans[-1], star)  # the newest follower leaves
    assert not redis.exists(f"{{u:{star}}}:followers:first")
    page = graph.followers(viewer, star, 2, None)
    assert [int(u.id) for u in page.items] == fans[::-1][1:3]
    rest = graph.followers(viewer, star, 2, page.next_cursor)
    assert [int(u.id) for u in rest.items] == [fans[0]]


# ---- a big account's followers spread over shards ----------------------------------------
def _spread_items(user_id: int, shards: int) -> dict[str, GraphItem]:
    """Every item of the user's followers shards (shard 0 is its own partition)."""
    return {
        f"{pk}/{item.sk}": item
        for pk in followers_partitions(user_id, shards)
        for item in GraphItem.query(pk, consistent_read=True)
    }


def _followers_listed(graph: GraphService, viewer: int, star: int, limit: int) -> list[int]:
    ids: list[int] = []
    cursor = None
    while True:
        page = graph.followers(viewer, star, limit, cursor)
        ids += [int(u.id) for u in page.items]
        if page.next_cursor is None:
            return ids
        cursor = page.next_cursor


def test_followers_spread_over_more_shards_stay_one_newest_first_list(graph, make_users):
    # Given a star followed by three fans, then spread over 4 shards, then followed by nine
    # more (their items in the shard of their id), then over 8 and followed by three more
    star, viewer, *fans = make_users(17)
    store = graph._store
    for fan in fans[:3]:
        graph.follow(fan, star)
    store.spread(star, 4)
    store.spread(star, 2)  # never fewer
    for fan in fans[3:12]:
        graph.follow(fan, star)
    graph.followers_counted({star: 100_000})  # the policy's first step: 2, below the 4 held
    assert store.follower_shards(star) == 4
    store.spread(star, 8)
    for fan in fans[12:]:
        graph.follow(fan, star)
    assert {follower_shard(f, 4) for f in fans[3:12]} != {0}

    # Then each follower's O#<star> names the shard its I# and IT# items are in
    items = _spread_items(star, 8)
    for index, fan in enumerate(fans):
        edge = _items(fan)[f"O#{star:019d}"]
        spread = 1 if index < 3 else 4 if index < 12 else 8
        assert int(edge.shard or 0) == follower_shard(fan, spread)
        pk = followers_partitions(star, 8)[int(edge.shard or 0)]
        assert f"{pk}/I#{fan:019d}" in items and f"{pk}/IT#{int(edge.seq):019d}" in items
    # and the list pages newest first across the shards, 3 a page, none twice
    assert _followers_listed(graph, viewer, star, 3) == fans[::-1]
    # and a cursor pins its position: a follow between two pages shifts nothing
    first = graph.followers(viewer, star, 5, None)
    (late,) = make_users(1)
    graph.follow(late, star)
    second = graph.followers(viewer, star, 5, first.next_cursor)
    assert [int(u.id) for u in second.items] == fans[::-1][5:10]
    # and the fan-out's reads, the followers hash and the count see every shard
    everyone = {*fans, late}
    assert set(graph.all_ids(star, "followers")) == everyone
    assert set(graph.followers_versions(star)) == everyone
    assert store.count_followers(star) == len(everyone)
    assert dict(graph.relationships(star, fans[:2] + fans[-2:])) == dict.fromkeys(
        fans[:2] + fans[-2:], "followed_by"
    )
    assert store.followers_among(star, [fans[0], fans[-1], viewer]) == {fans[0], fans[-1]}


def test_unfollow_follow_back_and_block_find_the_shard_of_each_edge(graph, make_users):
    # Given a star spread over 4 shards after its first fan, and a fan of each shard after
    star, *fans = make_users(12)
    graph.follow(fans[0], star)
    graph._store.spread(star, 4)
    for fan in fans[1:]:
        graph.follow(fan, star)
    sharded = [f for f in fans[1:] if follower_shard(f, 4)]
    assert sharded
    leaving, friend, blocked = fans[0], sharded[0], sharded[-1]

    # When the first fan (shard 0) unfollows, the star follows one back and blocks another
    graph.unfollow(leaving, star)
    graph.follow(star, friend)
    assert graph.relationships(star, [friend]) == [(friend, "friends")]
    services.blocks().block(star, blocked)

    # Then the items are consistent in every shard, friend flags on both sides of both edges
    items = _spread_items(star, 4)
    inbound = {int(i.uid) for key, i in items.items() if "/I#" in key}
    listed = {int(i.uid) for key, i in items.items() if "/IT#" in key}
    assert inbound == listed == set(fans[1:]) - {blocked}
    shard = follower_shard(friend, 4)
    mirror = items[f"{followers_partitions(star, 4)[shard]}/I#{friend:019d}"]
    assert mirror.friend is True and _items(friend)[f"O#{star:019d}"].friend is True
    assert _items(star)[f"O#{friend:019d}"].friend is True
    assert f"O#{star:019d}" not in _items(blocked) and f"O#{star:019d}" not in _items(leaving)
    # and an unfollow of the friend clears the flag in its shard
    graph.unfollow(friend, star)
    assert _items(star)[f"O#{friend:019d}"].friend is False
    assert not any(f"I#{friend:019d}" in key for key in _spread_items(star, 4))


def test_an_account_erasure_reaches_every_followers_shard(graph, make_users):
    # Given a star spread over 4 shards with followers in several of them, following one fan
    star, *fans = make_users(10)
    graph.follow(fans[0], star)
    graph._store.spread(star, 4)
    for fan in fans[1:]:
        graph.follow(fan, star)
    graph.follow(star, fans[1])
    assert len({follower_shard(f, 4) for f in fans[1:]}) > 1

    # When its graph items are erased, slice by slice, as the deletion workflow does
    erasure = DynamoErasure()
    while erasure.followers(star, 4):
        pass
    while erasure.following(star, 4):
        pass
    while erasure.partitions(star, 100):
        pass

    # Then nothing is left in any shard, and every follower's side is gone with its count
    assert _spread_items(star, 16) == {}
    for fan in fans:
        mine = _items(fan)
        assert f"O#{star:019d}" not in mine and f"I#{star:019d}" not in mine
        assert int(mine["META"].following_count) == 0


# ---- stream counters -----------------------------------------------------------------------
def _stream_records(users: set[int]) -> list[dict[str, Any]]:
    """This test's records from the graph table's real stream, in Lambda's event shape."""
    return [
        record
        for record in all_records(get_settings().graph_table)
        if record["dynamodb"]["Keys"]["pk"]["S"].startswith("U#")
        and int(record["dynamodb"]["Keys"]["pk"]["S"][2:].split("#")[0]) in users
    ]


def _followers(user_id: int) -> int:
    return (
        dal_counters.DynamoCounterStore(60)
        .read([f"U#{user_id}"])[f"U#{user_id}"]
        .get("followers_count", 0)
    )


class FlakyStore:
    """Fails the first ``failures`` transactions after ``after`` successful ones."""

    def __init__(self, inner: Any, after: int, failures: int) -> None:
        self.inner, self.after, self.failures = inner, after, failures

    def apply(self, claims: list[str], deltas: dict[tuple[str, str], int]) -> None:
        if self.after == 0 and self.failures > 0:
            self.failures -= 1
            raise TransactionRetry("injected")
        self.after -= 1
        self.inner.apply(claims, deltas)


def test_stream_batches_delivered_twice_or_failing_halfway_leave_counters_exact(graph, make_users):
    from warble.domain.counters.service import CounterRules, StreamCounterProcessor
    from warble.domain.graph.service import followers_counted
    from warble.events import Followed, Unfollowed

    star, other, *fans = make_users(12)
    for fan in fans:
        graph.follow(fan, star)
    graph.follow(star, fans[0])  # a friend flag flips: MODIFY records change no counter
    for fan in fans[:3]:
        graph.unfollow(fan, star)
    graph.follow(other, star)
    records = _stream_records({star, other, *fans})
    assert len(records) > 40

    registry = CounterRules().on(Followed, followers_counted).on(Unfollowed, followers_counted)
    store = dal_counters.DynamoCounterStore(3600)
    # Small transactions (5 actions) so one batch takes several, and a failure can land midway.
    processor = StreamCounterProcessor(
        FlakyStore(store, after=2, failures=10),
        registry,
        max_actions=5,
        attempts=2,
        backoff_seconds=0,
    )
    batch = decoded(records)
    outcome = processor.process(batch)
    assert outcome.failures, "the injected failure stops the batch half-way"
    failed = set(outcome.failures)
    # Only the records of the failed transactions are reported; the chunks after the injected
    # streak were still applied (Lambda restarts from the lowest failure; claims dedupe them).
    assert records[-1]["dynamodb"]["SequenceNumber"] not in failed

    # Lambda retries from the first failure; then the whole batch arrives again, twice.
    retry = decoded([r for r in records if r["dynamodb"]["SequenceNumber"] in failed])
    honest = StreamCounterProcessor(store, registry, max_actions=5)
    assert honest.process(retry).failures == []
    assert honest.process(batch).failures == []
    assert honest.process(batch).failures == []

    assert _followers(star) == len(fans) - 3 + 1
    assert _followers(fans[0]) == 1
    assert _followers(other) == 0
    assert graph.counts([star])[star]["followers_count"] == len(fans) - 3 + 1


def test_claims_are_written_in_the_counter_transaction(moto, graph):
    store = dal_counters.DynamoCounterStore(3600)
    key = f"U#{random.randrange(1 << 40, 1 << 62)}"
    claim = f"test-{random.random()}"
    store.apply([claim], {(key, "followers_count"): 2})
    with pytest.raises(ClaimsTaken) as taken:
        store.apply([f"{claim}-new", claim], {(key, "followers_count"): 5})
    assert taken.value.indexes == [1]
    assert store.read([key])[key]["followers_count"] == 2  # nothing of the second applied


# ---- degrees --------------------------------------------------------------------------------
def test_degrees_first_second_third_and_unconnected(graph, make_users):
    a, b, c, d, e, lonely = make_users(6)
    for one, two in ((a, b), (b, c), (c, d), (d, e)):
        graph.follow(one, two)
        graph.follow(two, one)

    assert graph.degree(a, b).degree == 1
    assert graph.degree(a, c).degree == 2
    before = graph._store.reads
    answer = graph.degree(a, d)
    assert (answer.degree, answer.label) == (3, "3rd")
    assert graph._store.reads - before <= 12
    assert graph.degree(a, e).degree is None
    assert graph.degree(a, lonely).label == "3rd+"
    with pytest.raises(ValidationFailed):
        graph.degree(a, a)


def _reactions_graph_filter() -> list[dict[str, Any]]:
    """The patterns of the reactions reader's graph mapping, as template.yaml writes them."""
    resources = load_yaml((ROOT / "template.yaml").read_text())["Resources"]
    events = resources["ReactionsConsumerFunction"]["Properties"]["Events"]
    filters = events["GraphStream"]["Properties"]["FilterCriteria"]["Filters"]
    return [json.loads(f["Pattern"]) for f in filters]


def test_an_unfollow_drops_a_second_degree_only_with_its_last_path(graph, make_users, redis):
    # given: a - x - w and a - y - w (two paths from a to w), and w - z: z is a's 3rd
    tap = StreamTap([get_settings().graph_table])
    patterns = _reactions_graph_filter()
    reactions = _load_function("reactions").handler

    def deliver() -> None:
        """The graph stream's records so far, as the reactions mapping filters them."""
        records = [r for r in tap.drain() if matches_filters(r, patterns)]
        assert reactions({"Records": records}, Context()) == {"batchItemFailures": []}

    a, x, y, w, z = make_users(5)
    for one, two in ((a, x), (a, y), (x, w), (y, w), (w, z)):
        graph.follow(one, two)
        graph.follow(two, one)
    deliver()
    assert graph.degree(a, z).degree == 3  # w is in a's second-degree set, now cached
    cached = keys.degree2(a).value
    assert redis.exists(cached)

    # when: x and w end their friendship: one of the two paths goes
    graph.unfollow(w, x)
    assert graph.degree(a, z).degree == 3
    deliver()
    # then: the stream dropped a's set (its friend x lost a friend), and w is still in it
    assert not redis.exists(cached)
    assert graph.degree(a, z).degree == 3
    assert redis.exists(cached)

    # when: y and w end theirs too: the last path goes
    graph.unfollow(y, w)
    assert graph.degree(a, z).degree == 3  # the cached set, until the stream drops it
    deliver()
    # then: w left a's set, so z is further than the third degree; an unrelated pair's
    # follow without friendship drops nothing
    assert graph.degree(a, z).degree is None
    graph.follow(z, a)
    deliver()
    assert redis.exists(cached) and graph.degree(a, z).degree is None
