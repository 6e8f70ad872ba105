"""The cache each ScaleProfile deploys (template.yaml): one ElastiCache Serverless cache for dev,
node-based cluster-mode replication groups from 1M up (CacheClusters of them, alike), chosen by
the profile's CacheKind, with the functions pointed at those that exist; and
bench/capacity_model.py pricing them.
Resolved with the local runtime's own template reader (the conditions and intrinsics as
CloudFormation evaluates them)."""

from __future__ import annotations

from typing import Any

import pytest

from infra.local.template import ResolveContext, Template, load_template
from tests.conftest import ROOT

pytestmark = pytest.mark.unit

FURTHER = [f"CacheNodes{n}" for n in range(2, 17)]  # the replication groups after the first
ENDPOINTS = {
    "Cache": {"Endpoint.Address": "serverless.example", "Endpoint.Port": "6379",
              "ARN": "arn:aws:elasticache:us-east-1:123456789012:serverlesscache:warble-cache"},
    "CacheNodes": {"ConfigurationEndPoint.Address": "clustercfg.example",
                   "ConfigurationEndPoint.Port": "6379"},
    **{name: {"ConfigurationEndPoint.Address": f"{name.lower()}.example",
              "ConfigurationEndPoint.Port": "6379"} for name in FURTHER},
}  # fmt: skip
CACHES = ("Cache", "CacheNodes", "CacheSubnetGroup", *FURTHER)
GROUP_ARN = "arn:aws:elasticache:us-east-1:123456789012:replicationgroup:"


@pytest.fixture(scope="module")
def template() -> Template:
    return load_template(ROOT / "template.yaml")


def _context(profile: str) -> ResolveContext:
    return ResolveContext(stack_name="warble", values=ENDPOINTS,
                          parameters={"ScaleProfile": profile})  # fmt: skip


def _created(template: Template, profile: str) -> set[str]:
    """The cache resources CloudFormation creates with ``profile``."""
    context = _context(profile)
    return {
        name
        for name in CACHES
        if template.condition(template.resources[name]["Condition"], context)
    }


def _environment(template: Template, profile: str) -> dict[str, Any]:
    variables = template.globals["Function"]["Environment"]["Variables"]
    return {
        name: template.resolve(variables[name], _context(profile))
        for name in ("REDIS_URL", "REDIS_CLUSTER", "REDIS_CACHE_NAME", "REDIS_SERVERLESS",
                     "REDIS_MORE_URLS", "REDIS_MORE_CACHE_NAMES")
    }  # fmt: skip


def test_dev_deploys_one_serverless_cache_and_the_functions_use_it(template: Template) -> None:
    assert _created(template, "dev") == {"Cache"}
    assert _environment(template, "dev") == {
        "REDIS_URL": "rediss://serverless.example:6379",
        "REDIS_CLUSTER": "true",
        "REDIS_CACHE_NAME": "Cache",
        "REDIS_SERVERLESS": "true",
        "REDIS_MORE_URLS": "," * 14,  # no further cache: every entry empty
        "REDIS_MORE_CACHE_NAMES": "," * 14,
    }


@pytest.mark.parametrize("profile", ["1M", "10M", "100M"])
def test_the_large_profiles_deploy_node_clusters_and_the_functions_use_their_endpoints(
    template: Template, profile: str
) -> None:
    mapping = template.mappings["ScaleProfiles"][profile]
    further = FURTHER[: mapping["CacheClusters"] - 1]
    assert _created(template, profile) == {"CacheNodes", "CacheSubnetGroup", *further}
    empty = [""] * (len(FURTHER) - len(further))
    assert _environment(template, profile) == {
        "REDIS_URL": "rediss://clustercfg.example:6379",
        "REDIS_CLUSTER": "true",
        "REDIS_CACHE_NAME": "CacheNodes",
        "REDIS_SERVERLESS": "false",
        "REDIS_MORE_URLS": ",".join(
            [f"rediss://{n.lower()}.example:6379" for n in further] + empty
        ),
        "REDIS_MORE_CACHE_NAMES": ",".join(further + empty),
    }
    for group in ("CacheNodes", *further):
        props = template.resolve(template.resources[group]["Properties"], _context(profile))
        assert props["NumNodeGroups"] == mapping["CacheShards"] > 1
        assert props["CacheNodeType"] == mapping["CacheNodeType"]


def test_each_profile_deploys_its_count_of_node_clusters_up_to_sixteen(template: Template) -> None:
    profiles = template.mappings["ScaleProfiles"]
    counts = {name: profile["CacheClusters"] for name, profile in profiles.items()}
    assert counts["dev"] == counts["1M"] == 1
    assert all(1 <= count <= 1 + len(FURTHER) for count in counts.values())
    # 100M's shards are more than one cluster's 250 (10M's 80 fit one: the memory sets them)
    assert counts["10M"] == 1 and counts["100M"] > 1
    for count in range(1, 17):  # every count the template supports, on the 100M profile's kind
        profiles["check"] = {**profiles["100M"], "CacheClusters": count}
        try:
            created = _created(template, "check")
            urls = _environment(template, "check")["REDIS_MORE_URLS"].split(",")
        finally:
            del profiles["check"]
        assert created - {"CacheNodes", "CacheSubnetGroup"} == set(FURTHER[: count - 1])
        assert len(set(url for url in urls if url)) == count - 1
    profiles["check"] = {**profiles["dev"], "CacheClusters": 3}  # serverless: one cache still
    try:
        assert _created(template, "check") == {"Cache"}
    finally:
        del profiles["check"]


def test_the_further_node_clusters_are_the_first_ones_like_under_their_own_names(
    template: Template,
) -> None:
    """Each further replication group is CacheNodes with its own id and condition: the same
    shards, node type, encryption, user group, subnets and security group."""
    first = template.resources["CacheNodes"]
    for n, name in enumerate(FURTHER, start=2):
        group = template.resources[name]
        assert group["Condition"] == f"CacheClustersAtLeast{n}"
        rest = {k: v for k, v in group.items() if k not in ("Condition", "Properties")}
        assert rest == {k: v for k, v in first.items() if k not in ("Condition", "Properties")}
        props, firsts = dict(group["Properties"]), dict(first["Properties"])
        assert props.pop("ReplicationGroupId") == {"Fn::Sub": f"${{AWS::StackName}}-nodes{n}"}
        assert firsts.pop("ReplicationGroupId") == {"Fn::Sub": "${AWS::StackName}-nodes"}
        assert props == firsts


def test_only_the_caches_that_exist_may_be_signed_in_to(template: Template) -> None:
    policy = template.resources["CacheAccess"]["Properties"]["PolicyDocument"]
    for profile, mapping in template.mappings["ScaleProfiles"].items():
        statement = template.resolve(policy, _context(profile))["Statement"][0]
        if profile == "dev":
            caches = [ENDPOINTS["Cache"]["ARN"]]
        else:
            further = FURTHER[: mapping["CacheClusters"] - 1]
            caches = [GROUP_ARN + name for name in ("CacheNodes", *further)]
        assert statement["Action"] == "elasticache:Connect"
        assert statement["Resource"] == [*caches, "local-CacheAppUser-Arn"]  # and the user


def test_the_node_cluster_is_secured_and_placed_as_the_serverless_cache_is(
    template: Template,
) -> None:
    """Cluster mode (the code's hash tags), TLS required, encrypted at rest, a replica a shard in
    the other zone, and the serverless cache's user group, security group and subnets."""
    context = _context("1M")
    nodes = template.resolve(template.resources["CacheNodes"]["Properties"], context)
    serverless = template.resolve(template.resources["Cache"]["Properties"], _context("dev"))
    subnets = template.resolve(template.resources["CacheSubnetGroup"]["Properties"], context)
    assert nodes["ClusterMode"] == "enabled"
    assert nodes["CacheParameterGroupName"].endswith(".cluster.on")
    assert (nodes["TransitEncryptionEnabled"], nodes["TransitEncryptionMode"]) == (True, "required")
    assert nodes["AtRestEncryptionEnabled"] is True
    assert (nodes["ReplicasPerNodeGroup"], nodes["MultiAZEnabled"]) == (1, True)
    assert nodes["AutomaticFailoverEnabled"] is True
    assert nodes["Engine"] == serverless["Engine"] == "valkey"
    assert nodes["UserGroupIds"] == [serverless["UserGroupId"]]
    assert nodes["SecurityGroupIds"] == serverless["SecurityGroupIds"]
    assert subnets["SubnetIds"] == serverless["SubnetIds"]


def test_the_model_prices_the_cache_each_profile_deploys(template: Template) -> None:
    from bench import capacity_model as cm

    profiles = cm.template_profiles()
    assert cm.cache_deployment(0, profiles).kind == "serverless"  # no profile: dev's kind
    for dau, name in cm.PROFILES.items():
        deployed = cm.cache_deployment(dau, profiles)
        kind = template.mappings["ScaleProfiles"][name]["CacheKind"]
        assert deployed.kind == kind
        n = cm.Needs(dau=dau, redis_gb=100.0, redis_ecpu_month=1e12)
        month = cm.deployed_cache(n, profiles)
        if kind == "nodes":
            clusters = template.mappings["ScaleProfiles"][name]["CacheClusters"]
            assert deployed.clusters == clusters
            nodes = deployed.shards * clusters * 2
            pricing = template.mappings["ScaleProfiles"][name]["CachePricing"]
            hour = cm.node_hour(deployed.node_type, pricing)
            assert month == nodes * hour * cm.HOURS
            assert deployed.describe().endswith(f"({nodes} nodes, {pricing})")
        else:
            assert month == cm.serverless_cache(n)


def test_a_node_profile_is_checked_by_its_shards_and_a_serverless_one_by_its_limits() -> None:
    from bench import capacity_model as cm

    # 1M users needing 120 shards at the event peak and 300 GB
    n = cm.Needs(dau=1_000_000, redis_shards=120, redis_gb=300.0, redis_peak_ecpu_s=5e6)
    nodes = {"CacheKind": "nodes", "CacheShards": 114, "CacheNodeType": "cache.r7g.4xlarge"}
    rows = {name: (need, value, ok) for name, need, value, ok in cm.profile_check(n, nodes)}
    shards = rows["cache shards (cache.r7g.4xlarge; half busy daily, 90% at the event)"]
    assert shards == (120, 114, False)
    memory = rows["cache GB (75% of the primaries' memory)"]
    assert memory == (300.0, 114 * cm.NODE_GB["cache.r7g.4xlarge"], True)
    # two such clusters, one keyspace: their shards together
    rows = {
        name: (need, value, ok)
        for name, need, value, ok in cm.profile_check(n, {**nodes, "CacheClusters": 2})
    }
    assert rows["cache shards (cache.r7g.4xlarge; half busy daily, 90% at the event)"] == (
        120,
        228,
        True,
    )
    serverless = {"CacheKind": "serverless", "CacheMaxEcpuPerSecond": 15e6,
                  "CacheMaxDataStorageGB": 500}  # fmt: skip
    rows = {name: (need, value, ok) for name, need, value, ok in cm.profile_check(n, serverless)}
    spike = cm.EVENT_PEAK / cm.PEAK
    # 5M ECPU/s at the daily peak is 7.3M at the event's: within one serverless cache
    assert rows["cache ECPU/s maximum (one serverless cache)"] == (5e6 * spike, 15e6, True)
    assert rows["cache GB maximum (one serverless cache)"] == (300.0, 500.0, True)


def test_each_node_profile_deploys_the_cheapest_option_that_holds_its_scale() -> None:
    """From 1M up, the profile's node type and pricing are the model's winner (the cheapest
    option holding both peaks and the memory), with at least the shards it needs and at most
    a fifth more (room, not a leftover of an older sizing)."""
    from bench import capacity
    from bench import capacity_model as cm

    saved = capacity.saved_measurements()
    inputs = capacity.inputs_from(saved)
    for dau, name in cm.PROFILES.items():
        n = cm.needs(inputs, dau)
        best = cm.best_cache(n)
        deployed = cm.cache_deployment(dau, inputs.profiles)
        assert (deployed.kind, deployed.node_type, deployed.pricing) == (
            best.kind, best.node_type, best.pricing), name  # fmt: skip
        need = cm.shards_needed(n, deployed.node_type)
        assert need <= deployed.all_shards <= need * 1.2, name
        assert deployed.shards * 2 <= cm.CLUSTER_MAX_NODES, name


def test_a_reservation_prices_a_node_a_third_below_on_demand() -> None:
    from bench import capacity_model as cm

    on_demand = cm.node_hour("cache.r7g.2xlarge")
    assert on_demand == cm.PRICES["valkey_r7g_2xlarge_hour"]
    assert cm.node_hour("cache.r7g.2xlarge", "reserved-1y") == on_demand * cm.RESERVED_1Y_FACTOR


def test_io_threads_speed_up_only_the_mixs_io_share() -> None:
    """A node's commands/s: the one-core mix with its I/O share divided by the published gain;
    a 2-vCPU node gains nothing, and past 16 vCPUs nothing more."""
    from bench import capacity
    from bench import capacity_model as cm

    inputs = capacity.inputs_from(capacity.saved_measurements())
    one_core, share = cm.shard_ops(inputs), cm.io_share(inputs)
    assert 0.0 < share < 1.0
    assert cm.node_ops(inputs, "cache.r7g.large") == one_core
    gain = cm.IO_THREADS_GAIN[8]
    assert cm.node_ops(inputs, "cache.r7g.2xlarge") == one_core / ((1 - share) + share / gain)
    assert cm.node_ops(inputs, "cache.r7g.16xlarge") == cm.node_ops(inputs, "cache.r7g.4xlarge")
