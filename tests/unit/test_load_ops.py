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
