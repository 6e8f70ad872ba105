"""TimelineFunction: home-timeline fan-out from the tweets and graph streams."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.streams import timeline

handler = timeline.handler
