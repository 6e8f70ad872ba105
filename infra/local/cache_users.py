"""The cache's IAM users (AWS::ElastiCache::User, AuthenticationMode iam) as ACL users of a local
Redis, so a function that signs in as one (REDIS_IAM_USER) can wherever the local runtime runs it.

Each is made with its resolved UserId as name, any password (an IAM token is one) and its access
string, so a command the user may not run on AWS is refused here too. The default user is left as
it is (the tests use it). On a cluster every node gets the users: ACLs are per node.
"""

from __future__ import annotations

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
        if cluster:
            from redis.cluster import RedisCluster

            with RedisCluster.from_url(redis_url) as nodes:
                nodes.execute_command(*command, target_nodes=RedisCluster.ALL_NODES)
        else:
            with redis.Redis.from_url(redis_url) as client:
                client.execute_command(*command)
