"""TimelineFunction: home-timeline fan-out from the tweets and graph streams."""

from warble.timeline_consumer import handler

__all__ = ["handler"]
