"""MediaFunction: uploads from the bucket's ObjectCreated notification -> ready or failed Media."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.entrypoints.uploads import uploaded

handler = uploaded
