"""Data access: the only code that imports psycopg, redis, pynamodb or boto3."""

from warble.dal.postgres import UNAVAILABLE_ERRORS as _PG_DOWN
from warble.dal.redis import UNAVAILABLE_ERRORS as _REDIS_DOWN

# Store failures that mean "try again later" (503), not a client's mistake.
STORE_UNAVAILABLE: tuple[type[Exception], ...] = _PG_DOWN + _REDIS_DOWN
