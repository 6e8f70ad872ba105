"""NotificationsConsumerFunction: notifications from the graph, tweets and likes streams."""

from warble.entrypoints.streams import notifier

handler = notifier.handler
