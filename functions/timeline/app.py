"""TimelineFunction: home-timeline fan-out from the tweets and graph streams."""

from warble.entrypoints.streams import timeline

handler = timeline.handler
