"""TweetCleanupFunction: a deleted tweet's retweets and likes go with it."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.streams import cleanup

handler = cleanup.handler
