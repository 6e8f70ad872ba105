"""AccountsFunction: sign-up, login, sessions and profiles."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.http import accounts
from warble.http.app import http_handler

handler = http_handler([accounts.router], public=accounts.PUBLIC_ROUTES)
