"""Data access: the only code that imports psycopg, redis, pynamodb or boto3."""

from __future__ import annotations

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
