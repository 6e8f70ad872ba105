"""Request budgets (API.md ``429 rate_limited``), as Mastodon has them.

Every authenticated request spends its user's budget; signup and login, which have no user yet,
spend their client address's budget (signup a stricter one). A budget is a window counter
(``warble.dal.rate_limit``, which names its keys): at most ``limit`` requests in a window that
starts at the first one and lasts ``window_seconds``. Like every fixed window, it lets a client
that waits for a window's end send up to twice the limit across that boundary; in exchange it
costs one small key per subject and one round trip per request.
"""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass
from typing import Protocol


class Spent(Protocol):
    """A window counter's answer: counted or refused, the count, ms until the window ends."""

    @property
    def allowed(self) -> bool: ...
    @property
    def used(self) -> int: ...
    @property
    def reset_ms(self) -> int: ...


class WindowCounter(Protocol):
    """The budgets' fixed-window counters (``warble.dal.rate_limit.RedisWindowCounter``): a
    user's, and an address's (``budget`` "signup", "login" or "authfail", ``network`` its
    subject); ``peek_address`` reads one without counting."""

    def take_user(self, user_id: int, limit: int, window_ms: int) -> Spent: ...
    def take_location(self, user_id: int, limit: int, window_ms: int) -> Spent: ...
    def take_reports(self, user_id: int, limit: int, window_ms: int) -> Spent: ...
    def give_back_report(self, user_id: int) -> None: ...
    def take_address(self, budget: str, network: str, limit: int, window_ms: int) -> Spent: ...
    def peek_address(self, budget: str, network: str) -> tuple[int, int]: ...


@dataclass(frozen=True)
class Budget:
    limit: int
    window_seconds: int


@dataclass(frozen=True)
class Verdict:
    """What one request was told: allowed or not, and what the X-RateLimit headers say."""

    allowed: bool
    limit: int
    remaining: int
    reset_ms: int  # until the window ends and the budget is whole again

    @property
    def retry_after(self) -> int:
        """Whole seconds until a refused request may succeed (at least 1)."""
        return max(1, -(-self.reset_ms // 1000))


# A container sees the same few addresses again and again (its users'), and ipaddress's parse
# cost more than the route of a cached read: each address is parsed once.
@functools.lru_cache(maxsize=4096)
def client_network(source_ip: str) -> str:
    """The subject of a per-address budget: an IPv4 address as it is, an IPv6 address by its
    /64, which one subscriber usually holds whole (one budget per address would hand them 2^64
    budgets)."""
    try:
        address = ipaddress.ip_interface(source_ip).ip  # a sample event may say "a.b.c.d/32"
    except ValueError:
        return source_ip or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return f"{ipaddress.ip_network((address, 64), strict=False).network_address}/64"
    return str(address)


class RateLimits:
    def __init__(
        self,
        counter: WindowCounter,
        *,
        per_user: Budget,
        signup_per_ip: Budget,
        login_per_ip: Budget,
        auth_failures_per_ip: Budget,
        location_per_user: Budget | None = None,
        reports_per_user: Budget = Budget(20, 3600),
    ) -> None:
        self._counter = counter
        self._reports = reports_per_user
        self._location = location_per_user
        self._per_user = per_user
        self._signup = signup_per_ip
        self._login = login_per_ip
        self._auth_failures = auth_failures_per_ip

    @property
    def per_user(self) -> Budget:
        """The user budget, which the HTTP gate spends with the session check (one script)."""
        return self._per_user

    def user(self, user_id: int) -> Verdict:
        budget = self._per_user
        taken = self._counter.take_user(user_id, budget.limit, budget.window_seconds * 1000)
        return verdict(budget, taken.allowed, taken.used, taken.reset_ms)

    def location(self, user_id: int) -> Verdict | None:
        """One of the user's location updates (issue 47 item 8: 150 moves in 3.9 s walked the
        geo index): a budget of its own, beside the request budget; None when none is set."""
        budget = self._location
        if budget is None:
            return None
        taken = self._counter.take_location(user_id, budget.limit, budget.window_seconds * 1000)
        return verdict(budget, taken.allowed, taken.used, taken.reset_ms)

    def reports(self, user_id: int) -> Verdict:
        """One new report of the user's (API.md: 20 an hour), beside the request budget."""
        budget = self._reports
        taken = self._counter.take_reports(user_id, budget.limit, budget.window_seconds * 1000)
        return verdict(budget, taken.allowed, taken.used, taken.reset_ms)

    def report_given_back(self, user_id: int) -> None:
        """A report counted that turned out to exist already (a racing twin made it)."""
        self._counter.give_back_report(user_id)

    def signup(self, source_ip: str) -> Verdict:
        return self._spend_address("signup", self._signup, source_ip)

    def login(self, source_ip: str) -> Verdict:
        return self._spend_address("login", self._login, source_ip)

    # Failed authentications per address: tokens whose session was looked up (a cache miss, a
    # PostgreSQL query) and not found. Checked before such a lookup, counted after a failed one.
    def auth_failures_wait(self, source_ip: str) -> int:
        """0 while the address's budget of failures lasts, else the seconds until it is whole."""
        used, reset_ms = self._counter.peek_address("authfail", client_network(source_ip))
        if used < self._auth_failures.limit:
            return 0
        return max(1, -(-reset_ms // 1000))

    def auth_failed(self, source_ip: str) -> None:
        self._spend_address("authfail", self._auth_failures, source_ip)

    def _spend_address(self, name: str, budget: Budget, source_ip: str) -> Verdict:
        network = client_network(source_ip)
        taken = self._counter.take_address(
            name, network, budget.limit, budget.window_seconds * 1000
        )
        return verdict(budget, taken.allowed, taken.used, taken.reset_ms)


def verdict(budget: Budget, allowed: bool, used: int, reset_ms: int) -> Verdict:
    """What a window counter's answer tells the request (``used`` counts it when allowed)."""
    return Verdict(
        allowed=allowed,
        limit=budget.limit,
        remaining=max(0, budget.limit - used),
        reset_ms=reset_ms,
    )
