"""ReportsFunction: reports, and the moderators' cases."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.http import reports
from warble.http.app import http_handler

handler = http_handler([reports.router], stores=("redis", "postgres"))
