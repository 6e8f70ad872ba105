"""AccountsFunction: sign-up, login, sessions, profiles, muted words and suspensions."""

import warble.startup  # noqa: F401  first: the cold start runs without the cyclic collector
from warble.http import accounts, muted_words, suspensions
from warble.http.app import http_handler

handler = http_handler(
    [accounts.router, muted_words.router, suspensions.router],
    public=accounts.PUBLIC_ROUTES,
    unreplayed=accounts.UNREPLAYED_ROUTES,
)
