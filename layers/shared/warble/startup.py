"""A function's cold start runs without the cyclic garbage collector.

Every function's ``app.py`` imports this module first. A cold request's imports, initialisation
and first invocation build a few hundred thousand objects that live as long as the container
(modules, classes, functions, the clients), and the collector kept walking them while they were
being built: about a sixth of a cold request's CPU time. On Lambda (``LAMBDA_TASK_ROOT`` set, as
the local runtime's workers also set it) the collector is off from here until the first
invocation ends; the skeleton then calls ``finished``, which moves everything the start-up built
into the collector's permanent generation (``gc.freeze``: no later collection walks it again, so
the warm requests' collections are cheaper too) and turns the collector back on.

Elsewhere (tests, scripts, the benchmarks' in-process handlers) importing this changes nothing.
Reference counting frees everything but cycles meanwhile; the cycles a start-up leaves are frozen
with the rest, a bounded amount once per container.
"""

from __future__ import annotations

import gc
import os

_starting = bool(os.environ.get("LAMBDA_TASK_ROOT")) and gc.isenabled()
if _starting:
    gc.disable()


def finished() -> None:
    """The first invocation has ended: freeze what the start-up built and collect again
    (once; nothing on later calls or outside a Lambda start-up)."""
    global _starting
    if _starting:
        _starting = False
        gc.freeze()
        gc.enable()
