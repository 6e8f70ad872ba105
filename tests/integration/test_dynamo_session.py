"""Every DynamoDB model of a process shares one botocore session (``warble.dal.dynamo.bind``):
a model's first call creates a client of that session, not a session of its own that loads the
service model and the endpoint rules again."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

pytestmark = pytest.mark.integration


def test_every_bound_model_and_transaction_connection_shares_one_botocore_session(moto):
    from warble.dal.connections import ConnectionItem
    from warble.dal.counters import ClaimItem, CounterItem
    from warble.dal.dynamo import bind
    from warble.dal.graph import GraphItem
    from warble.settings import get_settings

    settings = get_settings()
    transactions = bind(settings.aws_region, [
        (GraphItem, settings.graph_table), (ConnectionItem, settings.connections_table),
        (CounterItem, settings.counters_table), (ClaimItem, settings.counters_table),
    ])  # fmt: skip
    models = (GraphItem, ConnectionItem, CounterItem, ClaimItem)

    def first_call(model):  # each model's first call, from threads at once
        return model.count("nobody", limit=1)

    with ThreadPoolExecutor(len(models)) as pool:
        assert list(pool.map(first_call, models)) == [0, 0, 0, 0]

    connections = [model._get_connection().connection for model in models] + [transactions]
    assert len({id(connection.session) for connection in connections}) == 1
    # Each connection keeps its own client and its model's key schema (two models of one table).
    assert len({id(connection.client) for connection in connections}) == len(connections)
