"""The accounts' builders: the account service (users, sessions, the gate's caches), the
WebSocket connect tickets and the password reset."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from warble import keys
from warble.services.deferred import deferred
from warble.services.parts import Parts

if TYPE_CHECKING:
    from warble.domain.accounts.service import AccountService
    from warble.domain.accounts.tickets import ConnectTickets
    from warble.domain.passwords.service import PasswordService
    from warble.domain.rate_limits import RateLimits


def _session_key(subject: tuple[bytes, int | None]) -> keys.CacheKey:
    token_hash, user_id = subject
    return keys.session(token_hash.hex(), user_id)


def admin_usernames(c: Parts) -> frozenset[str]:
    """ADMIN_USERNAMES, each folded as a login is (``domain.logins``)."""
    from warble.domain.logins import login_key

    names = c.settings.admin_usernames.split(",")
    return frozenset(login_key(name.strip()) for name in names if name.strip())


def accounts(c: Parts) -> AccountService:
    from warble.domain.accounts.service import AccountPolicy, AccountService

    s, stores = c.settings, c.stores
    return AccountService(
        users=stores.users(),
        sessions=stores.sessions(),
        profiles=stores.cache(s.profile_cache_ttl_seconds, keys.profile),
        session_cache=stores.cache(s.session_cache_ttl_seconds, _session_key),
        throttle=stores.login_throttle(),
        lookups=stores.session_lookups(),
        ids=c.ids,
        policy=AccountPolicy(
            password_hash_rounds=s.password_hash_rounds,
            session_ttl=timedelta(days=s.session_ttl_days),
            admin_usernames=c.admin_usernames,
        ),
        # Built when a session first ends: the gate of every request needs neither the
        # connections' table nor the @connections sender (pynamodb, botocore).
        connections=deferred(lambda: c.pusher),
        failures=deferred(lambda: c.rate_limits),
        last_seen=stores.last_seen(),
        deletions=deferred(lambda: c.deletion),
    )


def tickets(c: Parts) -> ConnectTickets:
    from warble.domain.accounts.tickets import ConnectTickets

    return ConnectTickets(c.stores.socket_tickets())


def passwords(c: Parts) -> PasswordService:
    from warble.domain.passwords.service import PasswordPolicy, PasswordService

    s = c.settings
    store = c.stores.passwords()
    return PasswordService(
        requests=c.stores.reset_requests(),
        credentials=store,
        tokens=store,
        mailer=c.stores.mailer(),
        sessions=c.accounts,
        throttle=c.stores.login_throttle(),
        policy=PasswordPolicy(
            password_hash_rounds=s.password_hash_rounds,
            reset_page=f"{s.web_client_url.rstrip('/')}/#/reset-password",
        ),
    )


def rate_limits(c: Parts) -> RateLimits:
    """The request budgets: per user, and per IP for signups, logins and failed sign-ins."""
    from warble.domain.rate_limits import Budget, RateLimits

    s = c.settings
    return RateLimits(
        c.stores.window_counter(),
        per_user=Budget(s.rate_limit_user_requests, s.rate_limit_user_window_seconds),
        signup_per_ip=Budget(
            s.rate_limit_signup_ip_requests, s.rate_limit_signup_ip_window_seconds
        ),
        login_per_ip=Budget(s.rate_limit_login_ip_requests, s.rate_limit_login_ip_window_seconds),
        auth_failures_per_ip=Budget(
            s.rate_limit_auth_failures_ip_requests, s.rate_limit_auth_failures_ip_window_seconds
        ),
        location_per_user=Budget(
            s.rate_limit_location_requests, s.rate_limit_location_window_seconds
        ),
        reports_per_user=Budget(s.rate_limit_report_requests, s.rate_limit_report_window_seconds),
    )
