"""NotificationsFunction: the notification list, unread counts, marking read, system posts."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.http import notifications
from warble.http.app import http_handler

handler = http_handler([notifications.router])
