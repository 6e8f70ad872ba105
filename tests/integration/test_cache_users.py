"""The local runtime's cache users (infra/local/cache_users.py): the template's IAM users are
ACL users of every node of a local cluster, replicas included, so a function signed in as one
is still let in after a primary's failover promotes its replica (ACLs are per node; on AWS
the cache's user group covers every node)."""

from __future__ import annotations

import pytest
import redis

from infra.local.cache_users import ensure_cache_users, iam_users
from infra.local.template import ResolveContext, load_template
from tests.conftest import CLUSTER_FIRST_PORT
from tests.support.redis_cluster import start_cluster

pytestmark = [pytest.mark.integration, pytest.mark.cluster]


def test_every_node_of_a_cluster_gets_the_users_replicas_included():
    # given a freshly formed cluster of three primaries, each with a replica
    template, context = load_template("template.yaml"), ResolveContext()
    names = [name for name, _ in iam_users(template, context)]
    assert names  # the template declares its functions' IAM cache users
    cluster = start_cluster(CLUSTER_FIRST_PORT + 300, replicas=1)
    try:
        # when the local runtime makes the users, as serve does right after the cluster formed
        ensure_cache_users(template, context, cluster.url, cluster=True)

        # then each of the six nodes has every one of them
        for port in cluster.ports:
            with redis.Redis(port=port, decode_responses=True) as node:
                listed = " ".join(node.acl_list())
                assert all(f"user {name} " in listed for name in names), (port, listed)
    finally:
        cluster.stop()
