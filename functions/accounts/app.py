"""AccountsFunction: sign-up, login, sessions and profiles."""

from warble.http import accounts
from warble.http.app import http_handler

handler = http_handler([accounts.router], public=accounts.PUBLIC_ROUTES)
