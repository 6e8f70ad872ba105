"""Integration tier: real PostgreSQL and Redis, services built from the real stores."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from warble import services
from warble.domain.accounts.service import AccountService

pytestmark = pytest.mark.integration


@pytest.fixture
def accounts(pg, redis, moto) -> Iterator[AccountService]:
    # moto: every User carries counts and relationship from the graph tables (DynamoDB).
    # A new container for every test: services built from this test's settings and stores.
    services.reset()
    yield services.accounts()
    services.reset()
