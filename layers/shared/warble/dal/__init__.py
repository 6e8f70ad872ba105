"""Data access: the only code that imports psycopg, redis, pynamodb or boto3."""

from __future__ import annotations

import os
import sys


def store_unavailable() -> tuple[type[Exception], ...]:
    """Store failures that mean "try again later" (503), not a client's mistake.

    Only a store client this process has loaded can have failed, so this names the errors of
    the loaded ones: no function imports psycopg or redis just to name their errors
    (``except store_unavailable():`` is evaluated only when an exception reaches it).
    """
    errors: tuple[type[Exception], ...] = ()
    postgres, redis = sys.modules.get("warble.dal.postgres"), sys.modules.get("warble.dal.redis")
    dynamo = sys.modules.get("warble.dal.dynamo")
    if postgres is not None:
        errors += postgres.unavailable_errors()
    if redis is not None:
        errors += redis.UNAVAILABLE_ERRORS
    if dynamo is not None:  # throttled, failing or unreachable after its retries
        errors += (dynamo.DynamoUnavailable,)
    return errors


def prepare(*stores: str) -> None:
    """Load these stores' clients ("redis", "postgres", "dynamodb") during the function's init,
    not on its first request.

    A request runs under its deadline (``warble.deadline``), and a ring inside an import waits
    for the import to end. A cold worker whose first request imported psycopg, or botocore and
    pynamodb and botocore's DynamoDB model (about 200 ms here, seconds on a starved machine),
    could run past the function's timeout: a 500 at 10 s. Init has a budget of its own on Lambda
    and in the local runtime, and AWS's advice is to make SDK clients outside the handler.

    A function names the stores its requests read whatever the cache holds: the gate's Redis
    always; PostgreSQL or DynamoDB where its routes' first read is one. What only a cache miss
    reads stays loaded on first use, so an all-cached cold request does not pay for it
    (``tests/integration/test_cold_reads.py``).
    """
    unknown = set(stores) - {"redis", "postgres", "dynamodb"}
    if unknown:
        raise ValueError(f"no such store: {sorted(unknown)}")
    if "redis" in stores:
        from warble.dal import redis  # noqa: F401
    if "postgres" in stores:
        import psycopg  # noqa: F401  (warble.dal.postgres imports it on its first connect)

        from warble.dal import postgres  # noqa: F401
    if "dynamodb" in stores:
        from warble.dal import dynamo

        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        if region:
            dynamo.client(region)  # botocore's model and endpoints, loaded once for the session
