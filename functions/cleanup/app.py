"""TweetCleanupFunction: a deleted tweet's retweets and likes go with it."""

from warble.entrypoints.streams import cleanup

handler = cleanup.handler
