"""TweetsFunction: posting, reading and deleting tweets, retweets, replies, user timelines."""

from warble.http import tweets
from warble.http.app import http_handler

handler = http_handler([tweets.router])
