"""ConversationsFunction: direct messages (open, list, history, send, read)."""

from warble.http import conversations
from warble.http.app import http_handler

handler = http_handler([conversations.router])
