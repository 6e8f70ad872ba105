"""X-Ray instrumentation of the store clients, applied when a function first builds one.

Powertools' Tracer patches every library the X-Ray SDK supports when it is created, importing
each (psycopg, pynamodb, botocore, sqlite3, ...) in every function at cold start, the health
check's included. The skeleton's Tracer patches nothing; each store patches its own library
when it builds its client, so a function pays for the libraries its requests use. With tracing
disabled (POWERTOOLS_TRACE_DISABLED, the tests and the local runtime) this does nothing.
"""

from __future__ import annotations

from functools import cache


@cache
def instrument(*modules: str) -> None:
    """Patch these libraries for X-Ray (once per process; the SDK also refuses to patch
    twice)."""
    from aws_lambda_powertools import Tracer

    Tracer(auto_patch=False).patch(modules)
