"""What the model predicts for the load test's requests (bench/load/ops.py), which its measured
counts are divided by: the same terms the model prices, its cache misses included."""

from __future__ import annotations

from typing import Any

from bench import capacity_model as cm
from bench.load.ops import predicted


def _figures() -> dict[str, Any]:
    warm = {"redis_commands": 5.0, "pg_queries": 0.0, "redis_server": {}}
    routes = {"GET /v1/users/{id}": warm, "GET /v1/timeline/home": {**warm, "redis_commands": 15.0},
              "POST /v1/auth/login": {**warm, "pg_queries": 2.0}}  # fmt: skip
    return {"routes": routes, "consumers": {}}


def test_profile_reads_are_predicted_with_the_models_cache_misses() -> None:
    # given 1,000 profile reads, 500 home pages, 3 logins and a route the figures do not price
    requests = {"GET /v1/users/{id}": 1000, "GET /v1/timeline/home": 500,
                "POST /v1/auth/login": 3, "GET /v1/search/users": 40}  # fmt: skip

    # when the model's prediction is made
    expected = predicted(requests, _figures())

    # then a profile read's miss (CACHE_MISS of them) reads PostgreSQL once, as the model prices
    assert expected["postgres"] == 1000 * cm.CACHE_MISS * 1.0 + 3 * 2.0
    assert expected["redis"] == 1000 * (5.0 + cm.CACHE_MISS * 2.0) + 500 * 15.0 + 3 * 5.0


def test_a_posts_fan_out_is_predicted_at_the_followers_it_reached() -> None:
    """The load's fan-out probe posts as an author of 1,557 followers: each follower is a push
    script and the EXISTS inside it (no follower of a fresh seed has a home built), where the
    measured consumer's record reached the measurement's 15."""
    record = {
        "redis_commands": 20.0,
        "pg_queries": 0.0,
        "redis_round_trips": 1.0,
        "cpu_ms": 1.0,
        "redis_server": {"evalsha": [15.0, 75.0], "exists": [15.0, 0.0], "get": [5.0, 5.0]},
    }
    figures = {"routes": {"POST /v1/tweets": {"redis_commands": 10.0, "pg_queries": 0.0,
                                              "redis_server": {}}},
               "consumers": {"FanoutConsumerFunction <- tweets INSERT tweet": record},
               "mean_followers_measured": 15.0}  # fmt: skip
    requests = {"POST /v1/tweets": 100, "POST /v1/tweets (probe)": 35}
    followers = {"POST /v1/tweets": 5.0, "POST /v1/tweets (probe)": 1557.0}

    expected = predicted(requests, figures, followers)

    per_post = {reached: 35.0 + 2 * (reached - 15.0) for reached in (5.0, 1557.0)}
    assert expected["redis"] == 135 * 10.0 + 100 * per_post[5.0] + 35 * per_post[1557.0]
    # without the followers, every post is priced at the measured 15
    assert predicted(requests, figures)["redis"] == 135 * (10.0 + 35.0)
