"""GraphFunction: follow, unfollow, following/followers/friends lists, statuses, degrees,
blocks and mutes."""

from warble.http import blocks, graph
from warble.http.app import http_handler

handler = http_handler([graph.router, blocks.router])
