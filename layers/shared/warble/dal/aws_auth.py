"""IAM authentication tokens for the stores that take them as passwords: RDS Proxy (the database
roles, ``rds-db:connect``) and ElastiCache (its IAM-enabled user, ``elasticache:Connect``).

A token is a SigV4-presigned ``connect`` request, signed here with the function's credentials:
no network call, valid 15 minutes for opening connections (an open one stays open). botocore's
``generate_db_auth_token`` does the same for RDS, but needs an RDS client built first (its
endpoint rules and models: tens of milliseconds of a cold start for one signature).
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import urlencode

import botocore.session
from botocore.auth import SigV4QueryAuth
from botocore.awsrequest import AWSRequest

TOKEN_SECONDS = 900  # the longest a connect token may be valid


@lru_cache(maxsize=1)
def botocore_session() -> botocore.session.Session:
    """The default credential chain and configuration, resolved once per container."""
    return botocore.session.get_session()


def presigned_connect(host: str, params: dict[str, str], service: str, region: str) -> str:
    """``host/?Action=connect&...`` presigned for ``service`` (no scheme: the password form)."""
    credentials = botocore_session().get_credentials()
    if credentials is None:
        raise RuntimeError("no AWS credentials to sign an IAM authentication token with")
    request = AWSRequest(method="GET", url=f"https://{host}/?{urlencode(params)}")
    SigV4QueryAuth(credentials.get_frozen_credentials(), service, region, expires=TOKEN_SECONDS)\
        .add_auth(request)  # fmt: skip
    return str(request.url).removeprefix("https://")


def rds_token(host: str, port: int, user: str, region: str) -> str:
    """RDS's (and RDS Proxy's) IAM token for ``user``: the password of the connection."""
    return presigned_connect(
        f"{host}:{port}", {"Action": "connect", "DBUser": user}, "rds-db", region
    )


def elasticache_token(cache_name: str, user_id: str, region: str, serverless: bool = True) -> str:
    """ElastiCache's IAM token for its IAM-enabled user ``user_id`` of cache ``cache_name``: a
    serverless cache's name, or a node-based replication group's id (whose request names no
    resource type)."""
    params = {"Action": "connect", "User": user_id}
    if serverless:
        params["ResourceType"] = "ServerlessCache"
    return presigned_connect(cache_name.lower(), params, "elasticache", region)
