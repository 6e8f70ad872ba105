"""TweetsFunction: posting, reading and deleting tweets, retweets, replies, user timelines."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.http import tweets
from warble.http.app import http_handler

handler = http_handler([tweets.router])
