"""Request budgets without Redis: whose budget a client address spends, and what a verdict
tells the client."""

from __future__ import annotations

import pytest
from warble.domain.rate_limits import Verdict, client_network
from warble.http import accounts
from warble.http.rate_limits import LOGIN_ROUTE, RESET_ROUTES, SIGNUP_ROUTE

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("source_ip", "subject"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("192.168.0.1/32", "192.168.0.1"),  # as `sam local generate-event` writes it
        ("::ffff:203.0.113.9", "203.0.113.9"),  # an IPv4 client on a dual-stack socket
        ("2001:db8:1:2::5", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),  # one subscriber's /64
        ("2001:db8:1:3::5", "2001:db8:1:3::/64"),
        ("", "unknown"),
    ],
)
def test_a_client_address_spends_its_own_or_its_64s_budget(source_ip, subject):
    assert client_network(source_ip) == subject


@pytest.mark.parametrize(("reset_ms", "seconds"), [(0, 1), (1, 1), (999, 1), (1000, 1), (1001, 2)])
def test_retry_after_is_whole_seconds_never_zero(reset_ms, seconds):
    assert Verdict(False, 5, 0, reset_ms).retry_after == seconds


def test_the_per_address_budgets_are_the_accounts_public_routes():
    assert {SIGNUP_ROUTE, LOGIN_ROUTE, *RESET_ROUTES} == set(accounts.PUBLIC_ROUTES)
