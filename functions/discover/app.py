"""DiscoverFunction: my location, people nearby, swipes and matches."""

from warble.http import discover
from warble.http.app import http_handler

handler = http_handler([discover.router])
