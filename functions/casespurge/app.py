"""CasesPurgeFunction: closed cases past their retention deleted, snapshots and reports too."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.schedules import purge_cases as handler

__all__ = ["handler"]
