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

    tracer = Tracer(auto_patch=False)
    if "psycopg" in modules and not tracer.disabled:
        _trace_psycopg_connect()
        modules = tuple(module for module in modules if module != "psycopg")
    if modules:
        tracer.patch(modules)


def _trace_psycopg_connect() -> None:
    """The X-Ray SDK's psycopg patch also wraps ``psycopg_pool``'s pool, which the layer does not
    ship (we open one connection per container), and then fails: the first PostgreSQL
    connection of a traced function raised instead of connecting. Only ``psycopg.connect`` is
    wrapped, with the SDK's own wrapper."""
    import wrapt
    from aws_xray_sdk.ext.psycopg.patch import _xray_traced_connect

    wrapt.wrap_function_wrapper("psycopg", "connect", _xray_traced_connect)
