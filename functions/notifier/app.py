"""NotificationsConsumerFunction: notifications from the graph, tweets and likes streams."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.streams import notifier

handler = notifier.handler
