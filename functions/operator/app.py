"""OperatorFunction: the operator's tasks (infra/operator.py invokes it; no trigger)."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.operator import handler

__all__ = ["handler"]
