"""GraphFunction: follow, unfollow, following/followers/friends lists, statuses, degrees,
blocks and mutes."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.http import blocks, graph
from warble.http.app import http_handler

handler = http_handler([graph.router, blocks.router], stores=("redis", "dynamodb"))
