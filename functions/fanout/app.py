"""FanoutConsumerFunction: the latency-critical reader of the tweets, graph and likes streams
(home timelines, memberships, blocks, counters)."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.streams import fanout

handler = fanout.handler
