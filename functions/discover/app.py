"""DiscoverFunction: my location, people nearby, swipes and matches."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.http import discover
from warble.http.app import http_handler

handler = http_handler([discover.router], stores=("redis", "dynamodb"))
