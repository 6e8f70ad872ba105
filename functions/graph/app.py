"""GraphFunction: follow, unfollow, following/followers/friends lists, statuses, degrees."""

from warble.http import graph
from warble.http.app import http_handler

handler = http_handler([graph.router])
