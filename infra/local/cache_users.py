"""The cache's IAM users (AWS::ElastiCache::User, AuthenticationMode iam) as ACL users of a local
Redis, so a function that signs in as one (REDIS_IAM_USER) can wherever the local runtime runs it.

Each is made with its resolved UserId as name, any password (an IAM token is one) and its access
string, so a command the user may not run on AWS is refused here too. The default user is left as
it is (the tests use it). On a cluster every node gets the users: ACLs are per node.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from infra.local.template import ResolveContext, Template


def iam_users(template: Template, context: ResolveContext) -> list[tuple[str, list[str]]]:
    """(name, ACL rules) of each IAM-authenticated cache user the template declares."""
    found = []
    for logical_id, resource in template.resources.items():
        props = resource.get("Properties") or {}
        if (
            resource.get("Type") == "AWS::ElastiCache::User"
            and (props.get("AuthenticationMode") or {}).get("Type") == "iam"
        ):
            name = str(template.resolve({"Ref": logical_id}, context))
            found.append((name, str(props.get("AccessString", "")).split()))
    return found


def ensure_cache_users(
    template: Template, context: ResolveContext, redis_url: str, cluster: bool = False
) -> None:
    """Make (or make again: it is idempotent) the template's IAM cache users on the Redis at
    ``redis_url``."""
    import redis

    for name, rules in iam_users(template, context):
        command = ("ACL", "SETUSER", name, "reset", "nopass", *rules)
        for url in _every_node(redis_url) if cluster else [redis_url]:
            with redis.Redis.from_url(url) as node:
                node.execute_command(*command)


def _every_node(redis_url: str) -> list[str]:
    """The URL of each node of the cluster ``redis_url`` names, replicas included: from the
    node list (CLUSTER NODES), not the slot map, which names a replica only once its link to
    its primary is up (right after the cluster forms, not yet). A replica without the users
    would refuse them once it is promoted (a primary's failover)."""
    import redis

    with redis.Redis.from_url(redis_url) as seed:
        addresses = [address.split("@")[0] for address in seed.cluster("nodes")]
    parts = urlsplit(redis_url)
    credentials = parts.netloc.rpartition("@")[0]
    return [
        urlunsplit(parts._replace(netloc=f"{credentials}@{address}" if credentials else address))
        for address in addresses
    ]
