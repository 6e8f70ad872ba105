"""``deferred``: an adapter built on its first use, typed as the port it fills."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

T = TypeVar("T")


class Deferred:
    """A store built on its first use. A warm read finds what it needs in Redis and never calls
    the DynamoDB stores behind its service (they answer the misses), so a cold container whose
    first request is such a read does not import pynamodb and botocore (about one
    ``import boto3``) before answering; the first miss or write builds the store."""

    __slots__ = ("_build", "_built")

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._built: Any = None

    def __getattr__(self, name: str) -> Any:
        built = self._built
        if built is None:
            built = self._built = self._build()
        return getattr(built, name)


def deferred(build: Callable[[], T]) -> T:
    """``Deferred(build)``, typed as what it builds: the service it is given to checks it
    against its port (mypy), as it checks a store built at once."""
    return cast(T, Deferred(build))
