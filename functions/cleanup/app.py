"""TweetCleanupFunction: a deleted tweet's retweets and likes go with it (warble.jobs)."""

from warble.jobs import tweet_cleanup as handler

__all__ = ["handler"]
