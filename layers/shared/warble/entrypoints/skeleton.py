"""The one skeleton every Lambda entry point is wrapped in: Powertools Logger (with the Lambda
context and a correlation id), Tracer and Metrics, in the same order everywhere.

``entry_point(correlation_id_path)`` takes the JMESPath of the trigger's request id
(``aws_lambda_powertools.logging.correlation_paths``); stream consumers set the correlation id
per record instead (the record's eventID), since a batch has no single request.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

Handler = Callable[[dict[str, Any], LambdaContext], Any]

# Powertools shares one configuration per service name (POWERTOOLS_SERVICE_NAME): every module
# that logs or records metrics uses these.
logger = Logger()
# Patches nothing at import: each store instruments its own client (warble.tracing).
tracer = Tracer(auto_patch=False)
metrics = Metrics()
# Most requests record no metric of their own (a read): Powertools then warns on each cold
# start, a line in every function's log that says nothing.
warnings.filterwarnings("ignore", "No application metrics to publish", UserWarning)


def entry_point(correlation_id_path: str | None = None) -> Callable[[Handler], Handler]:
    def wrap(handler: Handler) -> Handler:
        observed = logger.inject_lambda_context(correlation_id_path=correlation_id_path)(
            tracer.capture_lambda_handler(metrics.log_metrics(handler))
        )
        return observed

    return wrap
