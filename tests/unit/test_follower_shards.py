"""How far a big account's followers are spread (``GraphPolicy.follower_shards``) and when the
stream's fan-out spreads them further (``GraphService.followers_counted``, from the followers
counts it reads anyway), on the in-memory stores."""

from __future__ import annotations

import pytest
from warble.domain.counters.ports import user_counter
from warble.domain.graph.service import GraphPolicy
from warble.events import Followed

from tests.unit.fakes import FakeBatch, World

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("followers", "shards"),
    [
        (0, 1),
        (99_999, 1),
        (100_000, 2),
        (8_000_000, 2),
        (8_000_001, 4),
        (30_000_000, 8),  # the top account at 100M daily users (docs/capacity.md)
        (10**9, 16),
    ],
)
def test_followers_are_spread_in_powers_of_two_up_to_the_ceiling(followers, shards):
    assert GraphPolicy().follower_shards(followers) == shards


def test_a_followee_past_a_step_is_spread_once_a_container(world: World):
    # given: a star the counters say has 120,000 followers, a small account 5
    star, small, fan = world.user(), world.user(), world.user()
    world.counters.counters[user_counter(star)] = {"followers_count": 120_000}
    world.counters.counters[user_counter(small)] = {"followers_count": 5}
    calls: list[tuple[int, int]] = []
    spread = world.graph_store.spread
    world.graph_store.spread = lambda u, n: calls.append((u, n)) or spread(u, n)  # type: ignore[method-assign]
    # when: the fan-out's stream batches bring follows of both, twice
    for seq in (1, 2):
        world.timelines.apply_stream(
            [Followed(fan, star, seq), Followed(fan, small, seq)], FakeBatch()
        )
    # then: the star is spread over 2 shards, asked once; the small account never
    assert world.graph_store.spreads == {star: 2}
    assert calls == [(star, 2)]
    # and a later step is asked again
    world.graph.followers_counted({star: 9_000_000})
    assert world.graph_store.spreads == {star: 4} and calls[-1] == (star, 4)


def test_the_capacity_model_and_the_load_check_lay_the_shards_out_as_the_stores_do():
    from warble.dal import graph, likes

    from bench import capacity_model
    from bench.load import check

    policy = GraphPolicy()
    assert capacity_model.LIKERS_SHARDS == check.LIKERS_SHARDS == likes.LIKERS_SHARDS
    assert all(n < likes.LIKERS_SHARDS for n in likes.EARLIER_LIKERS_SHARDS)
    assert policy.max_follower_shards == graph.MAX_FOLLOWER_SHARDS
    for followers in (0, 99_999, 100_000, 3_000_000, 8_000_001, 30_000_000, 10**9):
        assert capacity_model.follower_shards(followers) == policy.follower_shards(followers)
