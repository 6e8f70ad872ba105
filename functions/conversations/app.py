"""ConversationsFunction: direct messages (open, list, history, send, read)."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.http import conversations
from warble.http.app import http_handler

handler = http_handler([conversations.router], stores=("redis", "dynamodb"))
