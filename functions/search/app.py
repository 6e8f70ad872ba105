"""SearchFunction: people search, hashtag timelines and trends (reads only)."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.http import search
from warble.http.app import http_handler

handler = http_handler(
    [search.router], not_found=search.unmatched, stores=("redis", "postgres", "dynamodb")
)
