"""Integration tier: real PostgreSQL and Redis, services built from the real stores."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from warble import services
from warble.dal.postgres import get_database
from warble.dal.redis import get_redis
from warble.domain.accounts import AccountService

pytestmark = pytest.mark.integration


@pytest.fixture
def accounts(pg, redis, moto) -> Iterator[AccountService]:
    # moto: every User carries counts and relationship from the graph tables (DynamoDB).
    from warble.dal import counters as dal_counters
    from warble.dal import graph as dal_graph

    for cached in (
        services.accounts,
        services.ids,
        services.graph,
        dal_graph._configured,
        dal_counters._configured,
        get_redis,
        get_database,
    ):
        cached.cache_clear()
    yield services.accounts()
    get_database().close()
