"""NotificationsFunction: the notification list, unread counts, marking read, system posts."""

from warble.http import notifications
from warble.http.app import http_handler

handler = http_handler([notifications.router])
