"""MetaFunction: health, OpenAPI document, Swagger UI, and the $default route (404/405)."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.http import meta
from warble.http.app import http_handler

handler = http_handler(
    [meta.router],
    public=meta.PUBLIC_ROUTES,
    not_found=meta.unmatched,
    cacheable=meta.PUBLIC_ROUTES,
    stores=(),  # its routes read no store
)
