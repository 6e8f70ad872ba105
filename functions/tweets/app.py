"""TweetsFunction: posting, reading and deleting tweets, retweets, replies, user timelines;
media (the upload form, a Media, its alt text)."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.http import media, tweets
from warble.http.app import http_handler

handler = http_handler([tweets.router, media.router])
