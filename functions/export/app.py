"""ExportFunction: everything Warble holds about the caller, as one JSON document (reads only)."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.http import export
from warble.http.app import http_handler

handler = http_handler([export.router], stores=("redis", "dynamodb"))
